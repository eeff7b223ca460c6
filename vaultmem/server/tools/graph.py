"""The link-graph tools: `find_connections`, `neighbors` and `knowledge_gaps`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult
from pydantic import Field

from vaultmem import dialect
from vaultmem import graph as link_graph
from vaultmem.gaps import GAP_CLASSES, gaps_report
from vaultmem.server.runner import Runner, structured
from vaultmem.server.schema import MAX_RESULTS, Limit, NoteRef, make_tool

if TYPE_CHECKING:
    from vaultmem.vault import Vault

GAPS_DOC = "The knowledge-gap report: totals, then the first rows of each list.\n\n" + "\n".join(
    f"{gap.key}: {gap.description}." for gap in GAP_CLASSES
)
LINKED_FROM_SHOWN = 5  # notes listed per wanted note (`wanted_by` counts them all)


def tools(runner: Runner) -> list[Tool]:
    async def find_connections(
        start: NoteRef,
        end: NoteRef,
        max_depth: Annotated[
            int, Field(ge=1, le=10, description="The longest chain of links to look for.")
        ] = 5,
        relations: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=100)]] | None,
            Field(
                max_length=20,
                description="Only walk links of these relations: links_to (body links), embeds, "
                "or a typed-link key such as depends_on. Omit to walk every link.",
            ),
        ] = None,
        directed: Annotated[
            bool, Field(description="Follow links only in the direction they were written.")
        ] = False,
    ) -> Annotated[CallToolResult, dialect.ConnectionOut]:
        """The shortest chain of links between two notes, each hop with its relation and
        direction ('-->' as written, '<--' walked backwards); when there is none, why not.

        A name that no note has but some notes link to (a wanted note) works too.
        """
        return await runner.answer(
            _find_connections, runner.vault, start, end, max_depth, relations, directed
        )

    async def neighbors(
        ref: NoteRef,
        depth: Annotated[
            int, Field(ge=1, le=3, description="How many links away to look (1: direct links).")
        ] = 1,
        limit: Limit = 50,
        attachments: Annotated[
            bool,
            Field(description="Also list attachments (images, PDFs…) and walk through them."),
        ] = False,
    ) -> Annotated[CallToolResult, dialect.NeighborsOut]:
        """The notes linked to or from a note (either direction), nearest first.

        kind is 'note', 'attachment' (only with attachments: true), or 'wanted' (linked to
        but not written yet: no path).
        """
        return await runner.answer(_neighbors, runner.vault, ref, depth, limit, attachments)

    async def knowledge_gaps(
        limit: Annotated[
            int, Field(ge=1, le=MAX_RESULTS, description="At most this many rows per list.")
        ] = 10,
    ) -> Annotated[CallToolResult, dialect.GapsOut]:
        return await runner.answer(_knowledge_gaps, runner.vault, limit)

    # The gap classes are described once, in the core: the TUI and the CLI say the same.
    knowledge_gaps.__doc__ = GAPS_DOC
    return [
        make_tool(find_connections, "find_connections", "How two notes connect"),
        make_tool(neighbors, "neighbors", "Notes around a note"),
        make_tool(knowledge_gaps, "knowledge_gaps", "Where the vault is thin"),
    ]


def _find_connections(
    vault: Vault,
    start: str,
    end: str,
    max_depth: int,
    relations: list[str] | None,
    directed: bool,
) -> CallToolResult:
    found = link_graph.connect(
        vault.graph(),
        vault.node(start),
        vault.node(end),
        max_depth=max_depth,
        relations=relations or None,
        directed=directed,
    )
    return structured(dialect.connection(found))


def _neighbors(vault: Vault, ref: str, depth: int, limit: int, attachments: bool) -> CallToolResult:
    G = vault.graph()
    center = vault.node(ref)
    found = link_graph.neighbors(G, center, depth=depth, attachments=attachments)
    return structured(dialect.neighbors(G, center, depth, found, limit))


def _knowledge_gaps(vault: Vault, limit: int) -> CallToolResult:
    report = gaps_report(vault)
    return structured(dialect.gaps(report, limit, LINKED_FROM_SHOWN))
