"""Personas in the dialect: the list, and a loaded persona's context."""

from __future__ import annotations

from collections.abc import Sequence

from typing_extensions import TypedDict

from vaultmem.dialect.refs import NoteRef, notes
from vaultmem.model import title_of
from vaultmem.persona import PersonaContext, PersonaInfo

# --------------------------------------------------------------------------- personas


class PersonaOut(TypedDict):
    slug: str
    path: str
    title: str
    role: str
    budget: int
    aliases: list[str]


class PersonasOut(TypedDict):
    personas: list[PersonaOut]


def personas(found: Sequence[PersonaInfo]) -> PersonasOut:
    return {
        "personas": [
            {
                "slug": p.slug,
                "path": p.path,
                "title": p.title,
                "role": p.role,
                "budget": p.budget,
                "aliases": list(p.aliases),
            }
            for p in found
        ]
    }


class PersonaPartOut(TypedDict):
    kind: str  # persona, facts, loops or working_set
    path: str  # the note the text came from
    title: str
    heading: str | None  # the section it came from, when the persona linked one
    chars: int


class PersonaPartTextOut(PersonaPartOut):
    text: str


class PersonaContextOut(TypedDict):
    slug: str
    path: str
    title: str
    role: str
    budget: int
    used: int
    over_budget: bool
    usage: dict[str, int]  # characters per kind of part; they add up to `used`
    left_out: list[NoteRef]  # notes that did not fit the budget
    parts: list[PersonaPartOut]


def persona_context(
    context: PersonaContext, info: PersonaInfo, with_text: bool
) -> PersonaContextOut:
    """A loaded persona; the parts' text only `with_text` (MCP sends the markdown once, as text)."""
    parts: list[PersonaPartOut] = []
    for p in context.parts:
        part: PersonaPartOut = {
            "kind": p.kind,
            "path": p.source,
            "title": info.title if p.source == info.path else title_of(p.source),
            "heading": p.heading,
            "chars": p.chars,
        }
        parts.append(PersonaPartTextOut(**part, text=p.text) if with_text else part)
    return {
        "slug": context.slug,
        "path": context.path,
        "title": info.title,
        "role": context.role,
        "budget": context.budget,
        "used": context.used,
        "over_budget": context.over_budget,
        "usage": context.usage(),
        "left_out": notes(context.left_out),
        "parts": parts,
    }
