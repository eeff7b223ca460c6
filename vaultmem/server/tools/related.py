"""The `related` tool: the notes most like one note, each with why."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult
from pydantic import Field

from vaultmem import dialect
from vaultmem.server.runner import Runner, structured
from vaultmem.server.schema import NoteRef, make_tool

if TYPE_CHECKING:
    from vaultmem.vault import Vault


def tools(runner: Runner) -> list[Tool]:
    async def related(
        ref: NoteRef,
        limit: Annotated[int, Field(ge=1, le=50, description="At most this many notes.")] = 10,
    ) -> Annotated[CallToolResult, dialect.RelatedOut]:
        """The notes most like a note, best first, each with its reasons: close in meaning,
        both link to the same notes, linked together from the same notes (co-citation), or
        tags both carry (rarer links and tags count more). Read a related note with read_note.
        """
        return await runner.answer(_related, runner.vault, ref, limit)

    return [make_tool(related, "related", "Notes like this one")]


def _related(vault: Vault, ref: str, limit: int) -> CallToolResult:
    path = vault.find_note(ref)
    return structured(dialect.related(path, vault.related(path, limit)))
