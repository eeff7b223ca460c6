"""`related` (CLI and MCP): the notes most like one note, each with why."""

from __future__ import annotations

from collections.abc import Sequence

from typing_extensions import TypedDict  # pydantic reads these on Python 3.11

from vaultmem.dialect.refs import note
from vaultmem.related import Related


class ReasonOut(TypedDict):
    kind: str  # meaning | links | cocited | tags
    strength: float  # what it added to the score
    detail: str  # "both link to A, B", "close in meaning (0.71)"
    shared: list[str]  # the notes (paths) or tags behind it, strongest first


class RelatedNoteOut(TypedDict):
    path: str
    title: str
    score: float
    signals: list[ReasonOut]  # what found it (memory commands give `reasons` as plain words)


class RelatedOut(TypedDict):
    path: str  # the note asked about
    title: str
    related: list[RelatedNoteOut]


def related(path: str, found: Sequence[Related]) -> RelatedOut:
    return {
        **note(path),
        "related": [
            {
                **note(r.path),
                "score": round(r.score, 4),
                "signals": [
                    {
                        "kind": why.kind,
                        "strength": round(why.strength, 4),
                        "detail": why.detail,
                        "shared": list(why.shared),
                    }
                    for why in r.reasons
                ],
            }
            for r in found
        ],
    }
