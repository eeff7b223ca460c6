"""The MCP server's tools and resources, through the SDK's own in-memory client."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent, TextResourceContents

from tests.conftest import SAMPLE_VAULT, write_files
from vaultmem import dialect, persona
from vaultmem import graph as link_graph
from vaultmem.gaps import gaps_report
from vaultmem.model import content_digest
from vaultmem.server import Live, build_server, serving
from vaultmem.vault import Vault

pytestmark = pytest.mark.anyio

TOOLS = {
    "search",
    "read_note",
    "backlinks",
    "related",
    "find_connections",
    "neighbors",
    "knowledge_gaps",
    "list_personas",
    "persona_context",
    "store_fact",
    "fact_history",
    "add_episode",
    "episodes",
    "open_loops",
    "resolve_loop",
    "recall",
    "gate",
    "capture",
    "review_queue",
}
# the tools that write (issues 11, 12): never read-only, never destructive
WRITES = {"store_fact", "add_episode", "resolve_loop", "capture"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def copy_sample(root: Path) -> Vault:
    """A writable, indexed copy of the sample vault (fake embedder: deterministic vectors)."""
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".vaultmem"))
    vault = Vault(root)
    vault.embedder_spec = "fake"
    vault.reindex()
    return vault


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    """One indexed copy shared by the tests that only read."""
    return copy_sample(tmp_path_factory.mktemp("mcp") / "vault")


@pytest.fixture
async def client(sample: Vault) -> AsyncIterator[Client]:
    async with Client(build_server(sample)) as connected:
        yield connected


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


def failed(result: CallToolResult) -> str:
    assert result.is_error
    assert result.structured_content is None
    return text(result)


# --------------------------------------------------------------------------- the tool list


async def test_every_tool_is_listed_read_only_with_a_described_schema(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (tool.name not in WRITES), tool.name
        assert tool.annotations.destructive_hint is False
        assert tool.description and len(tool.description) > 40
        # written for a model: no source indentation carried into the text
        assert not any(line.startswith(" ") for line in tool.description.splitlines())
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    search = tools["search"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["mode"]["enum"] == ["hybrid", "keyword", "semantic"]
    assert search["properties"]["mode"]["default"] == "hybrid"
    limit = search["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 50, 10)
    depth = tools["neighbors"].input_schema["properties"]["depth"]
    assert (depth["minimum"], depth["maximum"]) == (1, 3)
    assert tools["search"].output_schema is not None
    assert set(tools["search"].output_schema["properties"]) == {
        "query",
        "mode",
        "notices",
        "dates",
        "results",
        "expired_hidden",
    }


async def test_instructions_tell_an_agent_to_load_its_persona_first(client: Client) -> None:
    assert client.instructions is not None
    assert "persona_context" in client.instructions


# --------------------------------------------------------------------------- search


async def test_keyword_search_returns_the_exact_hits(client: Client, sample: Vault) -> None:
    data = ok(
        await client.call_tool("search", {"query": "tariff sync", "mode": "keyword", "limit": 3})
    )
    assert data["query"] == "tariff sync" and data["mode"] == "keyword"
    rows = [(r["path"], r["heading"], r["start_line"], r["end_line"]) for r in data["results"]]
    # the scratch note (decay: session, 2026-11-26) has expired: out of default search, and
    # the agent is told so
    assert data["expired_hidden"] == 1
    assert data["notices"] == [
        "1 expired note hidden (past its decay tier's lifetime); include_expired shows it"
    ]
    assert rows == [
        ("episodes/2026-11-26 Tariff sync outage.md", "Tariff sync outage", 13, 25),
        ("work/Meeting notes.md", "Meeting notes > 2026-11-16", 29, 33),
        ("daily/2026-11-29.md", "Sunday 29 November 2026 > Week ahead", 13, 19),
    ]
    every = ok(
        await client.call_tool(
            "search",
            {"query": "tariff sync", "mode": "keyword", "limit": 3, "include_expired": True},
        )
    )
    assert every["expired_hidden"] == 0 and every["notices"] == []
    rows = [(r["path"], r["heading"], r["start_line"], r["end_line"]) for r in every["results"]]
    assert rows == [
        ("work/Scratch - tariff sync debugging.md", "Scratch - tariff sync debugging", 7, 17),
        ("episodes/2026-11-26 Tariff sync outage.md", "Tariff sync outage", 13, 25),
        ("work/Meeting notes.md", "Meeting notes > 2026-11-16", 29, 33),
    ]
    first = every["results"][0]
    assert first["title"] == "Scratch - tariff sync debugging"
    # plain text, as docs/mcp.md says: no heading marks
    assert first["snippet"].startswith("Scratch - tariff sync debugging Throwaway notes")
    direct = sample.search("tariff sync", limit=3, mode="keyword", include_expired=True)
    assert [r["score"] for r in every["results"]] == [round(h.score, 4) for h in direct.hits]
    for row in every["results"]:  # highlight control characters never reach the agent
        assert "\x02" not in row["snippet"] and "\x03" not in row["snippet"]
    assert json.loads(text(await client.call_tool("search", {"query": "tariff sync"}))) == ok(
        await client.call_tool("search", {"query": "tariff sync"})
    )


async def test_hybrid_search_is_the_default(client: Client, sample: Vault) -> None:
    data = ok(await client.call_tool("search", {"query": "heat pump gateway"}))
    assert data["mode"] == "hybrid" and data["notices"] == []
    direct = sample.search("heat pump gateway")
    assert [r["path"] for r in data["results"]] == [h.path for h in direct.hits]


async def test_search_filters_reach_the_core(client: Client) -> None:
    by_path = ok(
        await client.call_tool(
            "search", {"query": "plan", "mode": "keyword", "path": "personal/", "limit": 50}
        )
    )
    assert by_path["results"] and all(r["path"].startswith("personal/") for r in by_path["results"])
    by_tag = ok(
        await client.call_tool("search", {"query": "soup", "mode": "keyword", "tag": "recipe"})
    )
    assert [r["path"] for r in by_tag["results"]] == ["personal/recipes/Miso Soup.md"]
    none = ok(
        await client.call_tool(
            "search", {"query": "tariff", "mode": "keyword", "since": "2030-01-01"}
        )
    )
    assert none["results"] == []


SEARCH_TAKES = "query, mode, limit, tag, path, since, mtime, personas, include_expired"


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"query": "x", "limit": 51}, "limit: must be at most 50 (got 51)"),
        ({"query": "x", "limit": 500}, "limit: must be at most 50 (got 500)"),
        ({"query": "x", "limit": 0}, "limit: must be at least 1 (got 0)"),
        ({"query": "x", "limit": "ten"}, 'limit: must be a whole number (got "ten")'),
        ({"query": "x", "limit": 2.5}, "limit: must be a whole number (got 2.5)"),
        (
            {"query": "x", "mode": "fuzzy"},
            "mode: must be one of 'hybrid', 'keyword' or 'semantic' (got \"fuzzy\")",
        ),
        ({"query": "x", "personas": "maybe"}, 'personas: must be true or false (got "maybe")'),
        ({"query": 5}, "query: must be text (got 5)"),
        ({"query": ["a", "b"]}, 'query: must be text (got ["a", "b"])'),
        ({"query": "x", "since": "2026-13-01"}, "since '2026-13-01': give "),
        ({"query": ""}, "query: must not be empty"),
        ({"query": "x" * 2001}, "query: must be at most 2000 characters (got 2001)"),
        ({}, "query: required"),
        ({"limit": 500}, "query: required; limit: must be at most 50 (got 500)"),
        ({"query": "x", "foo": 1}, f"foo: not an argument of this tool (it takes {SEARCH_TAKES})"),
        (
            {"query": "x", "Limit": 3},
            f"Limit: not an argument of this tool (it takes {SEARCH_TAKES}); did you mean limit?",
        ),
        # an empty query is a mistake, as on the CLI (exit 2)
        ({"query": "   "}, "query: must not be empty or only spaces"),
    ],
)
async def test_search_refuses_arguments_outside_its_schema_plainly(
    client: Client, arguments: dict[str, Any], said: str
) -> None:
    """Issue (audit, engineer N): refused arguments came back as pydantic's report (its error
    types, the input echoed whole, a link to errors.pydantic.dev)."""
    message = failed(await client.call_tool("search", arguments))
    assert message.startswith(said), message
    assert "pydantic" not in message and "validation error" not in message
    assert "x" * 100 not in message  # a long value is never echoed whole


async def test_nested_arguments_are_named_by_their_place(client: Client) -> None:
    message = failed(
        await client.call_tool("find_connections", {"start": "a", "end": "b", "relations": [1, ""]})
    )
    assert message == "relations[0]: must be text (got 1); relations[1]: must not be empty"
    message = failed(
        await client.call_tool(
            "capture",
            {"source": "s", "transcript": "t", "candidates": [{"kind": "zz", "x": 1}]},
        )
    )
    assert message.startswith(
        "candidates[0].kind: must be one of 'fact', 'loop' or 'decision' (got \"zz\"); "
    ), message
    assert "candidates[0].entity: required" in message
    assert "candidates[0].x: not a field here" in message


async def test_every_tool_refuses_an_argument_it_does_not_name(client: Client) -> None:
    """docs/mcp.md promises it: a misspelt argument is an error naming it, never ignored."""
    required = {
        "search": {"query": "tariff"},
        "read_note": {"ref": "Maya"},
        "backlinks": {"ref": "Maya"},
        "related": {"ref": "Maya"},
        "find_connections": {"start": "Maya", "end": "Miso Soup"},
        "neighbors": {"ref": "Maya"},
        "knowledge_gaps": {},
        "list_personas": {},
        "persona_context": {"slug": "work-assistant"},
        # the same value again: an answer that writes nothing
        "store_fact": {"entity": "Maya Chen", "key": "employer", "value": "Heatwise GmbH"},
        "fact_history": {"entity": "Maya", "key": "employer"},
        "add_episode": {"title": "x", "outcome": "success"},  # a write: refusal only
        "episodes": {},
        "open_loops": {},
        "resolve_loop": {"ref": "x"},  # a write: refusal only
        "recall": {"message": "where did we leave off on the tariff optimizer?"},
        "gate": {"message": "hello"},
        "capture": {"source": "schema check", "transcript": "Ana: Olá!\nRui: Tudo bem?\n"},
        "review_queue": {},
    }
    for tool in (await client.list_tools()).tools:
        assert tool.input_schema["additionalProperties"] is False, tool.name
        if tool.name not in ("add_episode", "resolve_loop"):
            assert ok(await client.call_tool(tool.name, required[tool.name]))
        takes = ", ".join(tool.input_schema.get("properties", {})) or "none"
        message = failed(await client.call_tool(tool.name, {**required[tool.name], "foo": 1}))
        assert message == f"foo: not an argument of this tool (it takes {takes})", tool.name
        for name in tool.input_schema.get("required", []):  # a missing one
            without = {k: v for k, v in required[tool.name].items() if k != name}
            assert failed(await client.call_tool(tool.name, without)) == f"{name}: required"
        for name in tool.input_schema.get("properties", {}):  # a wrong type
            wrong = {**required[tool.name], name: {"a": 1}}
            message = failed(await client.call_tool(tool.name, wrong))
            assert message.startswith(f"{name}: must be "), (tool.name, message)
            assert message.endswith('(got {"a": 1})'), (tool.name, message)


# --------------------------------------------------------------------------- reading notes


async def test_read_note_by_alias_gives_the_whole_text(client: Client, sample: Vault) -> None:
    result = await client.call_tool("read_note", {"ref": "M. Chen"})
    data = ok(result)
    on_disk = (sample.root / "Maya Chen.md").read_text(encoding="utf-8").splitlines()
    assert data == {
        "path": "Maya Chen.md",
        "title": "Maya Chen",
        "heading": None,
        "start_line": 1,
        "end_line": len(on_disk),
        "chars": len("\n".join(on_disk)),
        "truncated": False,
        "headings": ["Maya Chen", "Work", "Life", "Key facts"],
        "digest": content_digest((sample.root / "Maya Chen.md").read_bytes()),
    }
    assert data["digest"] == sample.read_for_edit("Maya Chen.md").digest  # a write's revision
    assert [b.text for b in result.content if isinstance(b, TextContent)] == [
        f"Maya Chen.md, lines 1-{len(on_disk)}",
        "\n".join(on_disk),
    ]


async def test_read_note_reads_one_section_matched_like_obsidian(
    client: Client, sample: Vault
) -> None:
    result = await client.call_tool("read_note", {"ref": "Tariff Optimizer", "heading": "my plan"})
    data = ok(result)
    lines = (sample.root / "work/projects/Tariff Optimizer.md").read_text("utf-8").splitlines()
    assert (data["path"], data["heading"]) == ("work/projects/Tariff Optimizer.md", "My Plan!")
    # a section's revision is still the whole note's: a write replaces the whole file
    whole = (sample.root / "work/projects/Tariff Optimizer.md").read_bytes()
    assert data["digest"] == content_digest(whole)
    assert (data["start_line"], data["end_line"]) == (32, 41)
    section = result.content[1]
    assert isinstance(section, TextContent)
    assert section.text == "\n".join(lines[31:41])
    assert section.text.startswith("## My Plan!\n")
    assert text(result) == ("work/projects/Tariff Optimizer.md, lines 32-41, section 'My Plan!'")


async def test_read_note_takes_a_ref_written_as_a_link_with_its_heading(client: Client) -> None:
    """Agents write `Note#Heading` (as `vaultmem get` takes it): read_note said 'no note named
    'Tariff Optimizer#my plan''."""
    linked = await client.call_tool("read_note", {"ref": "Tariff Optimizer#my plan"})
    apart = await client.call_tool("read_note", {"ref": "Tariff Optimizer", "heading": "my plan"})
    assert ok(linked) == ok(apart) and linked.content == apart.content
    message = failed(await client.call_tool("read_note", {"ref": "Maya#nope"}))
    assert message.startswith("Maya Chen.md has no heading 'nope'")
    whole = await client.call_tool("read_note", {"ref": "Maya Chen#"})
    assert ok(whole)["heading"] is None
    message = failed(await client.call_tool("read_note", {"ref": "../outside.md#x"}))
    assert message.startswith("no note named '../outside.md'")


async def test_read_note_names_the_headings_when_one_is_missing(client: Client) -> None:
    message = failed(await client.call_tool("read_note", {"ref": "Maya", "heading": "nope"}))
    assert message == (
        "Maya Chen.md has no heading 'nope' (headings: Maya Chen; Work; Life; Key facts)"
    )


@pytest.mark.parametrize(
    "ref",
    [
        "../outside.md",
        "../../../../etc/passwd",
        "/etc/passwd",
        "outside",
        "..%2Foutside.md",
        "%2E%2E%2Foutside.md",
        "..\\outside.md",
        "work/../../outside.md",
        "Maya Chen.md\x00../outside.md",
        "file:///etc/passwd",
    ],
)
async def test_read_note_never_leaves_the_vault(client: Client, sample: Vault, ref: str) -> None:
    secret = sample.root.parent / "outside.md"
    secret.write_text("# Outside\nTOP-SECRET-OUTSIDE\n", encoding="utf-8")
    result = await client.call_tool("read_note", {"ref": ref})
    message = failed(result)
    assert "TOP-SECRET" not in message and "root:" not in message


async def test_symlinks_leading_out_of_the_vault_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_files(outside, {"secret.md": "# Secret\nTOP-SECRET-LINKED\n"})
    root = tmp_path / "vault"
    write_files(root, {".obsidian/app.json": "{}", "inside.md": "# Inside\nhello\n"})
    os.symlink(outside / "secret.md", root / "linked.md")
    os.symlink(outside, root / "linked-folder")
    vault = Vault(root)
    vault.embedder_spec = "fake"
    vault.reindex()
    async with Client(build_server(vault)) as c:
        for ref in ("linked", "linked.md", "linked-folder/secret.md", "secret"):
            assert "TOP-SECRET" not in failed(await c.call_tool("read_note", {"ref": ref}))
        # A note indexed while it was a file, then swapped for a symlink leading out.
        (root / "inside.md").unlink()
        os.symlink(outside / "secret.md", root / "inside.md")
        message = failed(await c.call_tool("read_note", {"ref": "inside"}))
        assert "outside the vault" in message and "TOP-SECRET" not in message
        found = ok(await c.call_tool("search", {"query": "TOP-SECRET-LINKED", "mode": "keyword"}))
        assert found["results"] == []


async def test_long_notes_are_cut_at_a_line_end(tmp_path: Path) -> None:
    from vaultmem import server

    root = tmp_path / "vault"
    line = "word " * 19 + "end"
    write_files(root, {".obsidian/app.json": "{}", "big.md": "\n".join([line] * 3000) + "\n"})
    vault = Vault(root)
    vault.embedder_spec = "fake"
    vault.reindex()
    async with Client(build_server(vault)) as c:
        result = await c.call_tool("read_note", {"ref": "big"})
    data = ok(result)
    assert data["truncated"] is True
    header, body, notice = (b.text for b in result.content if isinstance(b, TextContent))
    assert len(body) <= server.MAX_NOTE_CHARS and data["chars"] == len(body)
    assert body.split("\n")[-1] == line  # whole lines only
    assert data["end_line"] == body.count("\n") + 1 < 3000
    assert header == f"big.md, lines 1-{data['end_line']}"
    assert notice == (
        f"[cut at line {data['end_line']} of 3000: pass a heading to read one section]"
    )


# --------------------------------------------------------------------------- links


async def test_backlinks_list_every_linking_line(client: Client) -> None:
    data = ok(await client.call_tool("backlinks", {"ref": "Priya"}))
    assert (data["path"], data["title"]) == ("work/people/Priya Raman.md", "Priya Raman")
    assert data["total"] == 7
    assert [(b["path"], b["line"], b["relation"]) for b in data["backlinks"]] == [
        ("episodes/2026-11-12 Gateway beta rollback.md", 5, "entities"),
        ("inbox/2026-11-29 claude-code.md", 20, "links_to"),
        ("personas/work-assistant.md", 27, "links_to"),
        ("work/Heatwise.md", 24, "links_to"),
        ("work/projects/Heatwise Gateway.md", 11, "related"),
        ("work/projects/Heatwise Gateway.md", 19, "links_to"),
        ("work/projects/Heatwise Gateway.md", 24, "owner"),
    ]
    assert data["backlinks"][2]["context"] == (
        "- Ask before scheduling anything with [[Priya Raman]] on a Friday."
    )
    capped = ok(await client.call_tool("backlinks", {"ref": "Priya", "limit": 2}))
    assert capped["total"] == 7 and len(capped["backlinks"]) == 2


async def test_unknown_notes_get_the_message_the_cli_prints(client: Client) -> None:
    message = failed(await client.call_tool("backlinks", {"ref": "Priyaa Raman"}))
    assert message == (
        "no note named 'Priyaa Raman'; did you mean 'Priya Raman'? "
        '(`vaultmem search "Priyaa Raman"` searches the text)'
    )


async def test_find_connections_walks_the_shortest_path(client: Client) -> None:
    data = ok(await client.call_tool("find_connections", {"start": "Maya", "end": "Miso Soup"}))
    assert data["found"] is True and data["why_not"] is None
    assert data["start"] == {
        "path": "Maya Chen.md",
        "title": "Maya Chen",
        "kind": "note",
        "linked_notes": None,
        "group_size": None,
    }
    hops = [
        (h["from"]["path"], h["to"]["path"], h["relation"], h["direction"]) for h in data["hops"]
    ]
    assert hops == [
        ("Maya Chen.md", "personal/recipes/Weekly Meal Plan.md", "links_to", "-->"),
        (
            "personal/recipes/Weekly Meal Plan.md",
            "personal/recipes/Miso Soup.md",
            "links_to",
            "-->",
        ),
    ]
    assert data["hops"][-1]["to"]["title"] == "Miso Soup"


async def test_find_connections_says_why_there_is_no_path(client: Client) -> None:
    data = ok(await client.call_tool("find_connections", {"start": "Gift Ideas", "end": "Maya"}))
    assert data["found"] is False and data["hops"] == []
    assert data["why_not"] == (
        "No path from Gift Ideas to Maya Chen within 5 hops. "
        "Gift Ideas: 0 linked notes, in a group of 1. "
        "Maya Chen: 14 linked notes, in a group of 46. "
        "They are in separate groups: no chain of links joins them."
    )
    assert data["start"] == {
        "path": "personal/Gift Ideas.md",
        "title": "Gift Ideas",
        "kind": "note",
        "linked_notes": 0,
        "group_size": 1,
    }
    near = ok(
        await client.call_tool(
            "find_connections", {"start": "Maya", "end": "Miso Soup", "max_depth": 1}
        )
    )
    assert near["found"] is False
    assert near["why_not"].endswith(
        "They are linked, only further apart than that: allow more hops."
    )


async def test_neighbors_leave_attachments_out_unless_asked(client: Client) -> None:
    plain = ok(await client.call_tool("neighbors", {"ref": "Heatwise Gateway", "limit": 5}))
    assert {n["kind"] for n in plain["neighbors"]} == {"note"}
    asked = ok(
        await client.call_tool("neighbors", {"ref": "Heatwise Gateway", "attachments": True})
    )
    assert asked["total"] == plain["total"] + 2
    assert sorted(n["title"] for n in asked["neighbors"] if n["kind"] == "attachment") == [
        "gateway-dashboard.png",
        "spec.pdf",
    ]


async def test_persona_context_below_the_persona_notes_size_says_what_is_needed(
    client: Client,
) -> None:
    message = failed(
        await client.call_tool("persona_context", {"slug": "work-assistant", "budget": 200})
    )
    assert "give at least 1,343" in message


async def test_neighbors_match_the_graph(client: Client, sample: Vault) -> None:
    data = ok(await client.call_tool("neighbors", {"ref": "Tariff Optimizer", "depth": 2}))
    G = sample.graph()
    expected = link_graph.neighbors(
        G, "work/projects/Tariff Optimizer.md", depth=2, attachments=False
    )
    assert data["total"] == len(expected)
    assert [(n["path"], n["distance"]) for n in data["neighbors"] if n["path"]] == [
        (node, distance) for node, distance in expected[:50] if not node.startswith("wanted:")
    ]
    wanted = [n for n in data["neighbors"] if n["kind"] == "wanted"]
    assert wanted[0] == {
        "path": None,
        "title": "Load Forecasting",
        "kind": "wanted",
        "distance": wanted[0]["distance"],
    }
    assert (data["path"], data["title"], data["kind"], data["depth"]) == (
        "work/projects/Tariff Optimizer.md",
        "Tariff Optimizer",
        "note",
        2,
    )
    assert failed(await client.call_tool("neighbors", {"ref": "Maya", "depth": 4}))


async def test_knowledge_gaps_are_summarised_and_bounded(client: Client, sample: Vault) -> None:
    data = ok(await client.call_tool("knowledge_gaps", {"limit": 2}))
    report = gaps_report(sample)
    assert data["notes"] == 43 and data["totals"] == report.totals()
    assert data["orphans"] == [{"path": "personal/Gift Ideas.md", "title": "Gift Ideas"}]
    assert data["dead_ends"] == [{"path": "work/people/Jonas Berg.md", "title": "Jonas Berg"}]
    assert data["wanted"][0] == {
        "title": "Load Forecasting",
        "wanted_by": 4,
        "linked_from": [
            {"path": "daily/2026-11-29.md", "title": "2026-11-29"},
            {"path": "work/Architecture Decisions.md", "title": "Architecture Decisions"},
            {"path": "work/Q4 Roadmap.md", "title": "Q4 Roadmap"},
            {"path": "work/projects/Tariff Optimizer.md", "title": "Tariff Optimizer"},
        ],
    }
    for key, value in data.items():
        if isinstance(value, list):
            assert len(value) <= 2, key


# --------------------------------------------------------------------------- personas


async def test_list_personas(client: Client, sample: Vault) -> None:
    data = ok(await client.call_tool("list_personas", {}))
    expected = persona.list_personas(sample)
    assert [p["slug"] for p in data["personas"]] == [p.slug for p in expected]
    assert {"health-coach", "work-assistant"} <= {p["slug"] for p in data["personas"]}
    row = next(p for p in data["personas"] if p["slug"] == "work-assistant")
    assert (row["path"], row["title"]) == ("personas/work-assistant.md", "Work assistant")


async def test_persona_context_is_the_loaded_persona(client: Client, sample: Vault) -> None:
    result = await client.call_tool("persona_context", {"slug": "work-assistant"})
    assert not result.is_error, text(result)
    loaded = persona.load_persona(sample, "work-assistant")
    assert text(result) == loaded.to_markdown()
    info = persona.find_persona(sample, "work-assistant")
    # the parts' text is in the markdown block, not repeated in the JSON
    assert result.structured_content == dialect.persona_context(loaded, info, with_text=False)
    assert all("text" not in part for part in result.structured_content["parts"])
    footer = result.content[1]
    assert isinstance(footer, TextContent)
    assert footer.text.startswith(f"[persona work-assistant: {loaded.used} of {loaded.budget}")
    small = await client.call_tool("persona_context", {"slug": "work-assistant", "budget": 2000})
    assert text(small) == persona.load_persona(sample, "work-assistant", 2000).to_markdown()
    assert len(text(small)) < len(text(result))
    again = await client.call_tool("persona_context", {"slug": "work-assistant"})
    assert text(again) == text(result)  # stable: an agent's prompt cache keeps working
    assert failed(await client.call_tool("persona_context", {"slug": "nobody-here"}))


async def test_persona_notes_are_resources(client: Client, sample: Vault) -> None:
    listed = {str(r.uri): r for r in (await client.list_resources()).resources}
    assert "vaultmem://persona/work-assistant" in listed
    assert listed["vaultmem://persona/work-assistant"].mime_type == "text/markdown"
    read = await client.read_resource("vaultmem://persona/work-assistant")
    body = read.contents[0]
    assert isinstance(body, TextResourceContents)
    on_disk = (sample.root / "personas/work-assistant.md").read_text("utf-8").splitlines()
    assert body.text == "\n".join(on_disk)
    by_alias = (await client.read_resource("vaultmem://persona/Work%20assistant")).contents[0]
    assert isinstance(by_alias, TextResourceContents) and by_alias.text == body.text
    templates = {
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    }
    assert templates == {"vaultmem://persona/{slug}", "vaultmem://persona/{slug}/context"}
    for uri in ("vaultmem://persona/..%2F..%2Fetc%2Fpasswd", "vaultmem://persona/nobody"):
        with pytest.raises(Exception) as caught:
            await client.read_resource(uri)
        assert "root:" not in str(caught.value)


async def test_a_new_persona_note_is_listed_without_a_restart(served: tuple[Vault, Live]) -> None:
    vault, live = served
    async with Client(build_server(vault, live)) as c:
        before = {str(r.uri) for r in (await c.list_resources()).resources}
        assert "vaultmem://persona/reviewer" not in before
        (vault.root / "personas" / "reviewer.md").write_text(
            "---\ntype: persona\nrole: Code reviewer\n---\n# Reviewer\n\nBe brief.\n", "utf-8"
        )
        _wait_for(lambda: live.freshness.pending)
        after = {str(r.uri): r for r in (await c.list_resources()).resources}
        assert after["vaultmem://persona/reviewer"].description == (
            "The persona note of Reviewer (Code reviewer)"  # its `# Reviewer`
        )


# --------------------------------------------------------------------------- freshness


def _wait_for(condition: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Vault, Live]]:
    vault = copy_sample(tmp_path / "vault")
    with serving(vault) as live:
        _wait_for(live.watching.is_set)  # the watcher starts 2 s in without a call
        yield vault, live


async def test_an_edit_on_disk_is_seen_by_the_next_call(served: tuple[Vault, Live]) -> None:
    vault, live = served
    freshness = live.freshness
    async with Client(build_server(vault, live)) as c:
        before = ok(await c.call_tool("search", {"query": "axolotl", "mode": "keyword"}))
        assert before["results"] == []
        note = vault.root / "personal" / "Pets.md"
        note.write_text("# Pets\n\nWe might adopt an axolotl in spring.\n", encoding="utf-8")
        _wait_for(lambda: freshness.pending)
        after = ok(await c.call_tool("search", {"query": "axolotl", "mode": "keyword"}))
        assert [r["path"] for r in after["results"]] == ["personal/Pets.md"]
        read = await c.call_tool("read_note", {"ref": "Pets"})
        assert not read.is_error and "axolotl" in read.content[1].text  # type: ignore[union-attr]
        note.write_text("# Pets\n\nNo pets after all.\n", encoding="utf-8")
        _wait_for(lambda: freshness.pending)
        gone = ok(await c.call_tool("search", {"query": "axolotl", "mode": "keyword"}))
        assert gone["results"] == []


def test_serving_builds_a_missing_index(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".vaultmem"))
    vault = Vault(root)
    vault.embedder_spec = "fake"
    assert not vault.index_path.exists()
    with serving(vault) as live:
        assert vault.stats().notes == 43
        assert live.ready.wait(30)


def test_serving_catches_up_with_edits_made_while_no_server_ran(tmp_path: Path) -> None:
    vault = copy_sample(tmp_path / "vault")
    (vault.root / "Offline.md").write_text("# Offline\n\nzyzzyva written while down\n", "utf-8")
    with serving(vault) as live:
        assert live.refresh() is None  # waited for the catch-up, which found the new note
        assert [h.path for h in vault.search("zyzzyva", mode="keyword").hits] == ["Offline.md"]


async def test_related_answers_with_reasons_and_refuses_an_unknown_note(client: Client) -> None:
    data = ok(await client.call_tool("related", {"ref": "Maya Chen", "limit": 3}))
    assert data["path"].endswith("Maya Chen.md") and len(data["related"]) == 3
    for row in data["related"]:
        assert (
            row["signals"] and abs(sum(r["strength"] for r in row["signals"]) - row["score"]) < 1e-3
        )
    assert "Priyaa" in failed(await client.call_tool("related", {"ref": "Priyaa Raman"}))
