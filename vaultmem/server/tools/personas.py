"""The persona tools (`list_personas`, `persona_context`) and the bodies of persona resources."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult
from pydantic import Field

from vaultmem import dialect
from vaultmem.persona import PersonaInfo, find_persona, list_personas, load_persona
from vaultmem.server.runner import Runner, structured
from vaultmem.server.schema import make_tool

if TYPE_CHECKING:
    from vaultmem.vault import Vault


def tools(runner: Runner) -> list[Tool]:
    async def list_personas_tool() -> Annotated[CallToolResult, dialect.PersonasOut]:
        """The personas in the vault (persona notes): slug, title, role and context budget.

        Load one with persona_context(slug).
        """
        return await runner.answer(_list_personas, runner.vault)

    async def persona_context(
        slug: Annotated[
            str,
            Field(
                min_length=1,
                max_length=200,
                description="The persona's slug (its file name in personas/, see list_personas) "
                "or one of its aliases.",
            ),
        ],
        budget: Annotated[
            int | None,
            Field(
                ge=200,
                le=200_000,
                description="How many characters of context to load, at least the persona "
                "note's own size (never cut); omit for the persona's own budget (its front "
                "matter, default 5000).",
            ),
        ] = None,
        include_expired: Annotated[
            bool,
            Field(
                description="Also use notes past their decay tier's lifetime (`decay:` in "
                "their front matter), left out by default."
            ),
        ] = False,
    ) -> Annotated[CallToolResult, dialect.PersonaContextOut]:
        """Load a persona's memory as markdown: its note verbatim, then its facts, then the most
        relevant facts and sections of the notes it works with, cut to the budget.

        Call it once at the start of a session and keep the text at the top of your context:
        the same vault gives the same text, so prompt caches keep working. The last block says
        how much of the budget each part used.
        """
        return await runner.answer(_persona_context, runner.vault, slug, budget, include_expired)

    return [
        make_tool(list_personas_tool, "list_personas", "List personas"),
        make_tool(persona_context, "persona_context", "Load a persona"),
    ]


def _list_personas(vault: Vault) -> CallToolResult:
    return structured(dialect.personas(list_personas(vault)))


def _persona_context(
    vault: Vault, slug: str, budget: int | None, include_expired: bool = False
) -> CallToolResult:
    context = load_persona(vault, slug, budget, include_expired=include_expired)
    usage = context.usage()
    parts = ", ".join(f"{name} {chars}" for name, chars in usage.items())
    footer = f"[persona {context.slug}: {context.used} of {context.budget} characters ({parts})"
    if context.left_out:
        footer += f"; {len(context.left_out)} left out for the budget"
    data = dialect.persona_context(context, find_persona(vault, context.slug), with_text=False)
    return structured(data, context.to_markdown(), footer + "]")


def personas(vault: Vault) -> tuple[PersonaInfo, ...]:
    """The personas, for the resource list."""
    return list_personas(vault)


def persona_note(vault: Vault, slug: str) -> str:
    """The `vaultmem://persona/{slug}` resource: the persona note as written (slug or alias)."""
    return vault.read_note(find_persona(vault, slug).path).text


def persona_loaded(vault: Vault, slug: str) -> str:
    """The `vaultmem://persona/{slug}/context` resource: the persona at its own budget."""
    return load_persona(vault, slug, None).to_markdown()
