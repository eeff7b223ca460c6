"""The `search` tool: hybrid, keyword or meaning search over the vault's notes."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Annotated

from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult
from pydantic import Field

from vaultmem import dialect
from vaultmem.dates import SINCE_HELP, since_day
from vaultmem.errors import UsageError
from vaultmem.search import Mode
from vaultmem.server.runner import Runner, structured
from vaultmem.server.schema import MAX_RESULTS, make_tool

if TYPE_CHECKING:
    from vaultmem.vault import Vault


def tools(runner: Runner) -> list[Tool]:
    async def search(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                pattern=r"\S",  # not only spaces: an empty query is a mistake, not a search
                description="What to look for, in plain words or a question. Dates in it "
                "('yesterday', 'last Monday', 'Feb 8', '2026-11-28') favour notes of that day.",
            ),
        ],
        mode: Annotated[
            Mode,
            Field(
                description="hybrid (default): words and meaning fused, best for most questions; "
                "keyword: exact words only (names, identifiers, error messages); "
                "semantic: meaning only (paraphrases, concepts)."
            ),
        ] = "hybrid",
        limit: Annotated[
            int, Field(ge=1, le=MAX_RESULTS, description="How many notes to return (best first).")
        ] = 10,
        tag: Annotated[
            str | None,
            Field(
                max_length=200,
                description="Only notes with this tag, without '#'; a parent tag also matches "
                "nested tags ('project' matches 'project/alpha').",
            ),
        ] = None,
        path: Annotated[
            str | None,
            Field(
                max_length=1000,
                description="Only notes under this vault folder, e.g. 'projects/'.",
            ),
        ] = None,
        since: Annotated[
            str | None,
            Field(
                max_length=100,
                description="Only notes dated on or after this day: YYYY-MM-DD, or words "
                "such as 'yesterday', 'last week', '3 days ago', 'Feb 8'. A note's date is its "
                "`date` (or `created`) property, else a date in its path (daily notes); "
                "undated notes are left out.",
            ),
        ] = None,
        mtime: Annotated[
            bool,
            Field(
                description="With since: compare the files' modification times instead of "
                "the notes' dates."
            ),
        ] = False,
        personas: Annotated[
            bool,
            Field(
                description="Also search persona notes (type: persona), left out by default: "
                "persona_context loads a persona."
            ),
        ] = False,
        include_expired: Annotated[
            bool,
            Field(
                description="Also search notes past their decay tier's lifetime (`decay:` "
                "in their front matter), left out by default."
            ),
        ] = False,
    ) -> Annotated[CallToolResult, dialect.SearchOut]:
        """Search the vault's notes by words and meaning; one best-matching section per note.

        Each result has the note's path and title, the heading of the matching section, its
        line range, a snippet and a score. Read more of a hit with read_note(path, heading).
        `mode` says which search ran and `notices` why it differs from the one asked for
        (meaning search falls back to keywords when the model cannot run);
        `expired_hidden` counts the expired notes left out that would be results.
        """
        return await runner.answer(
            _search,
            runner.vault,
            query,
            mode,
            limit,
            tag,
            path,
            since,
            mtime,
            personas,
            include_expired,
        )

    return [make_tool(search, "search", "Search the vault")]


def _search(
    vault: Vault,
    query: str,
    mode: Mode,
    limit: int,
    tag: str | None,
    path: str | None,
    since: str | None,
    mtime: bool,
    personas: bool,
    include_expired: bool,
) -> CallToolResult:
    day = None
    if since is not None:
        day = since_day(since, dt.date.today())
        if day is None:
            raise UsageError(f"since {since!r}: give {SINCE_HELP}")
    elif mtime:
        raise UsageError("mtime says how `since` compares days: give since too")
    result = vault.search(
        query,
        limit=limit,
        mode=mode,
        tag=tag,
        path=path,
        since=day,
        mtime=mtime,
        personas=personas,
        include_expired=include_expired,
        count_expired=True,
    )
    out = dialect.search_result(result)
    hidden = dialect.expired_notice(result.expired_hidden, "include_expired")
    if hidden:
        out["notices"].append(hidden)
    return structured(out)
