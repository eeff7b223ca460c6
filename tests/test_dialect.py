"""One JSON dialect: every command's `--json` and every MCP tool's answer and output schema.

The walk runs every command of the real click tree (CliRunner, on the sample vault) and calls
every tool through the MCP SDK's client, then checks docs/json.md's rules on what came back:
a top-level object, snake_case keys, no positional arrays (no array inside an array), `title`
beside every `path`, none of the keys the old dialects used, one JSON type per key across the
CLI and the server alike, and every key documented in docs/json.md.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from mcp import Client

from tests.conftest import ROOT, SAMPLE_VAULT
from vaultmem.cli import cli
from vaultmem.server import build_server
from vaultmem.vault import Vault

DOC = ROOT / "docs" / "json.md"

# Objects keyed by data, not by the dialect: a note's front matter (the person's own keys and
# values), totals per gap class, characters per kind of persona part, score per signal.
MAPS = {"frontmatter", "totals", "usage", "explain"}

# What the old dialects called things the dialect names otherwise.
RETIRED = {
    "src_path",
    "dst_path",
    "src",
    "dst",
    "dst_title",
    "source",
    "node",
    "id",
    "note",
    "name",
    "startLine",
    "endLine",
    "header",
    "alias_fix",
    "anchor_ok",
    "ends_info",
}
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")

# Every command printing JSON, and the arguments to run it with (each list is one run). A new
# command with --json fails the test until it is added here, so its output gets checked.
COMMANDS: dict[str, list[list[str]]] = {
    "reindex": [[]],
    "search": [
        ["tariff sync"],
        ["tariff sync", "--explain", "--mode", "keyword"],
        ["what happened yesterday", "--limit", "3"],
        ["-", "--mode", "keyword"],  # batch: one object per line
    ],
    "get": [["Maya Chen"], ["Tariff Optimizer#my plan"]],
    "watch": [["--count", "1"]],  # the first refresh, the catch-up, then it stops
    "show": [["Maya Chen"], ["Tariff Optimizer"], ["work/Meeting notes.md"]],
    "backlinks": [["Priya"]],
    "related": [["Maya Chen"], ["Tariff Optimizer", "--limit", "3"]],
    "stats": [[]],
    "doctor": [[]],
    "graph path": [
        ["Maya", "Miso Soup"],
        ["Gift Ideas", "Maya"],
        ["Maya", "Miso Soup", "--max-depth", "1", "--relation", "links_to", "--directed"],
        ["Maya", "M. Chen"],
    ],
    "graph neighbors": [
        ["Tariff Optimizer", "--depth", "2"],
        ["Heatwise Gateway", "--attachments"],
    ],
    "graph clusters": [[], ["--min-size", "1"]],
    "graph cycles": [[]],
    "graph fragile": [[]],
    "gaps": [[], ["--limit", "0"]],
    "persona list": [[]],
    "persona load": [["work-assistant"], ["health-coach", "--budget", "1200"]],
    "fact get": [["Maya Chen"], ["Maya", "employer"]],
    "fact history": [["Maya Chen", "home_city"]],
    "fact list": [[], ["--key", "employer", "--since", "2020-01-01"]],
    "episodes": [[], ["--since", "last month", "--now", "2026-11-30", "--outcome", "failure"]],
    "trends": [["Heatwise Gateway", "--granularity", "month"]],
    "loops": [[], ["--priority", "high", "--now", "2026-11-30"]],
    "recall": [
        ["where did we leave off on the tariff optimizer?", "--now", "2026-11-30"],
        ["heat pump", "--budget", "300"],
    ],
    "gate": [["what did Maya say about the tariff bands?", "--now", "2026-11-30"]],
    "salience": [["--top", "5", "--now", "2026-11-30"]],
    "prune": [["--now", "2030-01-01"]],  # lists only: --yes would move the sample's notes
    "capture": [[str(ROOT / "tests/fixtures/capture/plain.txt"), "--source", "x", "--dry-run"]],
    "review": [[]],
    "upgrade-model": [[]],  # the sample vault is small: nothing to upgrade (exit 1, the JSON)
}
# Commands that write, with --json: run in this order on a copy of the sample vault.
WRITES: list[tuple[str, list[str]]] = [
    ("trash move", ["Maya Chen"]),
    ("trash list", []),
    ("restore", [".trash/Maya Chen.md"]),
    ("trash move", ["work/people/Priya Raman.md"]),
    ("trash purge", ["--all", "--yes"]),
]
# Commands that print no JSON, and why.
NO_JSON = {
    "init": "writes the config; its report is reindex's",
    "gaps fix-aliases": "a write, with a diff to confirm",
    "persona new": "a write",
    "fact set": "a write; says what it did",
    "episode add": "a write; says what it did",
    "loop add": "a write; says what it did",
    "loop resolve": "a write; says what it did",
    "review accept": "a write; prints what went where",
    "review reject": "a write",
    "review edit": "a write",
    "review undo": "a write",
    "tui": "the terminal app",
    "mcp": "the MCP server (its tools are walked below)",
}

TOOL_CALLS: dict[str, list[dict[str, Any]]] = {
    "search": [{"query": "tariff sync"}, {"query": "what happened yesterday", "mode": "keyword"}],
    "read_note": [{"ref": "Maya"}, {"ref": "Tariff Optimizer", "heading": "my plan"}],
    "backlinks": [{"ref": "Priya", "limit": 3}],
    "related": [{"ref": "Maya Chen"}, {"ref": "Tariff Optimizer", "limit": 3}],
    "find_connections": [
        {"start": "Maya", "end": "Miso Soup"},
        {"start": "Gift Ideas", "end": "Maya"},
        {"start": "Maya", "end": "Load Forecasting", "relations": ["links_to"]},
    ],
    "neighbors": [
        {"ref": "Tariff Optimizer", "depth": 2},
        {"ref": "Heatwise Gateway", "attachments": True},
    ],
    "knowledge_gaps": [{"limit": 3}],
    "list_personas": [{}],
    "persona_context": [{"slug": "work-assistant", "budget": 1500}],
    # the same value again: an answer, and nothing written into the committed sample vault
    "store_fact": [{"entity": "Maya Chen", "key": "employer", "value": "heatwise gmbh"}],
    "fact_history": [{"entity": "Maya", "key": "home_city"}],
    "add_episode": [],  # writes a note: its answer is checked in tests/test_memory_writes.py
    "episodes": [{}, {"since": "2026-11-01", "outcome": "success"}],
    "open_loops": [{}, {"entity": "Maya Chen", "now": "2026-11-30"}],
    "resolve_loop": [],  # a write, as add_episode
    "recall": [{"message": "what's next for the tariff optimizer?", "now": "2026-11-30"}],
    "gate": [{"message": "hello!"}, {"message": "what did Maya say about the tariff bands?"}],
    # nothing passes the gates in this chat, so nothing is written into the sample vault
    "capture": [{"source": "dialect", "transcript": "Ana: Olá!\nRui: Tudo bem?\n"}],
    "review_queue": [{}],
}


def commands(group: click.Group, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    for name, command in sorted(group.commands.items()):
        full = f"{prefix}{name}"
        if isinstance(command, click.Group):
            if command.invoke_without_command:  # `gaps` is a command and a group
                yield full, command
            yield from commands(command, full + " ")
        else:
            yield full, command


def has_json(command: click.Command) -> bool:
    return any("--json" in getattr(p, "opts", ()) for p in command.params)


# --------------------------------------------------------------------------- the rules


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    assert isinstance(value, list)
    inner = {json_type(v) for v in value}
    return f"array of {inner.pop()}" if len(inner) == 1 else "array"


class Dialect:
    """The rules, checked on every answer; key types gathered across all of them."""

    def __init__(self) -> None:
        self.types: dict[str, set[str]] = defaultdict(set)
        self.seen_in: dict[str, set[str]] = defaultdict(set)

    def check(self, where: str, data: Any) -> None:
        assert isinstance(data, dict), f"{where}: the top level is not an object"
        self._walk(where, data, "$")

    def _walk(self, where: str, value: Any, at: str) -> None:
        if isinstance(value, list):
            kinds = {json_type(v).split(" ")[0] for v in value}
            assert "array" not in kinds, f"{where} {at}: an array inside an array (positional)"
            assert len(kinds) <= 1, f"{where} {at}: an array mixing {kinds}"
            for i, item in enumerate(value):
                self._walk(where, item, f"{at}[{i}]")
        elif isinstance(value, dict):
            if "path" in value:
                assert "title" in value, f"{where} {at}: a path without its title"
            for key, item in value.items():
                assert SNAKE.match(key), f"{where} {at}: key {key!r} is not snake_case"
                assert key not in RETIRED, f"{where} {at}: {key!r} is an old dialect's key"
                kind = json_type(item)
                self.types[key].add(kind)
                self.seen_in[key].add(where)
                if key in MAPS:
                    assert isinstance(item, dict), f"{where} {at}.{key}: a map is an object"
                    continue  # keyed by data: its keys are not the dialect's
                self._walk(where, item, f"{at}.{key}")

    def conflicts(self) -> dict[str, set[str]]:
        """Keys holding more than one kind of value (null aside; an empty array fits any)."""
        out = {}
        for key, kinds in self.types.items():
            real = {k for k in kinds if k not in ("null", "array")}
            if len(real) > 1:
                out[key] = real
        return out


# --------------------------------------------------------------------------- the walk


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dialect") / "index.db"
    vault = Vault(SAMPLE_VAULT, path)
    vault.embedder_spec = "fake"
    vault.reindex()
    vault.close()
    return path


def test_every_command_printing_json_is_walked() -> None:
    found = dict(commands(cli))
    with_json = {name for name, command in found.items() if has_json(command)}
    writes = {name for name, _ in WRITES}
    assert with_json == set(COMMANDS) | writes, "add new --json commands to COMMANDS or WRITES"
    assert set(found) == set(COMMANDS) | writes | set(NO_JSON), (
        "a command neither prints JSON nor says why"
    )


def run_json(index: Path, name: str, args: list[str], vault: Path = SAMPLE_VAULT) -> list[Any]:
    stdin = "tariff sync\nMaya\n" if args[:1] == ["-"] else None
    result = CliRunner().invoke(
        cli,
        ["--vault", str(vault), "--index", str(index), *name.split(), *args, "--json"],
        input=stdin,
        catch_exceptions=False,
    )
    assert result.exit_code in (0, 1), (name, args, result.output)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert lines, (name, args, result.output)
    assert len(lines) == (2 if stdin else 1), (name, args, "one object per line")
    return [json.loads(line) for line in lines]


def walk_commands(index: Path, seen: Dialect) -> None:
    for name, runs in COMMANDS.items():
        for args in runs:
            for data in run_json(index, name, args):
                seen.check(f"vaultmem {name} {' '.join(args)}".strip(), data)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "vault"
        shutil.copytree(SAMPLE_VAULT, copy)
        copy_index = Path(tmp) / "index.db"
        vault = Vault(copy, copy_index)
        vault.reindex(embed=False)
        vault.close()
        for name, args in WRITES:
            (data,) = run_json(copy_index, name, args, copy)
            seen.check(f"vaultmem {name} {' '.join(args)}".strip(), data)


def test_every_command_speaks_the_dialect(index: Path) -> None:
    seen = Dialect()
    walk_commands(index, seen)
    assert seen.conflicts() == {}


def test_search_always_says_its_mode_and_notices(index: Path) -> None:
    for args in COMMANDS["search"]:
        for data in run_json(index, "search", args):
            assert isinstance(data["mode"], str) and data["notices"] == []
            assert "dates" in data and data["results"]
            for hit in data["results"]:
                assert {"path", "title", "heading", "start_line", "end_line"} <= set(hit)
    (dated,) = run_json(index, "search", ["what happened yesterday"])
    assert dated["dates"]["phrase"] == "yesterday"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def walk_tools(index: Path, seen: Dialect) -> None:
    vault = Vault(SAMPLE_VAULT, index)
    vault.embedder_spec = "fake"
    async with Client(build_server(vault)) as client:
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} == set(TOOL_CALLS), "add new tools to TOOL_CALLS"
        for tool in tools:
            schema = tool.output_schema
            assert schema is not None and schema["type"] == "object", tool.name
            for key in schema_keys(tool.name, schema, schema):
                assert SNAKE.match(key) and key not in RETIRED, f"{tool.name}: {key}"
            for arguments in TOOL_CALLS[tool.name]:
                result = await client.call_tool(tool.name, arguments)
                assert not result.is_error, (tool.name, arguments, result.content)
                seen.check(f"mcp {tool.name} {arguments}", result.structured_content)


@pytest.mark.anyio
async def test_every_tool_speaks_the_dialect(index: Path) -> None:
    seen = Dialect()
    await walk_tools(index, seen)
    assert seen.conflicts() == {}


@pytest.mark.anyio
async def test_the_cli_and_the_server_speak_one_dialect(index: Path) -> None:
    """One key, one kind of value across both; the keys they share; every key in the docs."""
    seen = Dialect()
    walk_commands(index, seen)
    await walk_tools(index, seen)
    assert seen.conflicts() == {}
    both = {
        key
        for key, where in seen.seen_in.items()
        if any(w.startswith("mcp ") for w in where)
        and any(w.startswith("vaultmem ") for w in where)
    }
    assert {"path", "title", "heading", "start_line", "end_line", "mode", "notices"} <= both
    # docs/json.md stays true: each key the CLI or the server sends is documented there
    text = DOC.read_text(encoding="utf-8")
    fences = re.findall(r"```.*?```", text, flags=re.S)
    spans = fences + re.findall(r"`([^`]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    documented = {s for s in spans if SNAKE.match(s)} | {
        key for s in spans for key in re.findall(r'"([a-z_]+)"', s)
    }
    assert sorted(set(seen.types) - documented) == []


def schema_keys(tool: str, schema: dict[str, Any], node: Any) -> Iterator[str]:
    """Every property name an output schema declares (outside maps), checking for tuples."""
    if isinstance(node, dict):
        assert "prefixItems" not in node, f"{tool}: a positional array in its schema"
        items = node.get("items")
        if isinstance(items, dict):
            assert resolve(schema, items).get("type") != "array", f"{tool}: an array of arrays"
        for key, value in node.get("properties", {}).items():
            yield key
            if key not in MAPS:
                yield from schema_keys(tool, schema, value)
        for key, value in node.items():
            if key not in ("properties", "$defs"):
                yield from schema_keys(tool, schema, value)
        if node is schema:
            for value in node.get("$defs", {}).values():
                yield from schema_keys(tool, schema, value)
    elif isinstance(node, list):
        for value in node:
            yield from schema_keys(tool, schema, value)


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str):
        resolved: dict[str, Any] = schema["$defs"][ref.rsplit("/", 1)[-1]]
        return resolved
    return node


@pytest.mark.parametrize(
    ("answer", "broken"),
    [
        ([{"path": "a.md", "title": "a"}], "top level is not an object"),
        ({"articulation_points": [["a.md", 2]]}, "array inside an array"),
        ({"results": [{"path": "a.md", "title": "a", "startLine": 1}]}, "startLine"),
        ({"backlinks": [{"src_path": "a.md", "line": 1}]}, "src_path"),
        ({"row": {"path": "a.md"}}, "a path without its title"),
        ({"hops": [{"src": "a.md", "dst": "b.md"}]}, "'src' is an old dialect's key"),
        ({"Results": []}, "not snake_case"),
        ({"rows": ["a.md", 2]}, "an array mixing"),
    ],
)
def test_the_rules_catch_what_the_old_dialects_did(answer: Any, broken: str) -> None:
    with pytest.raises(AssertionError, match=re.escape(broken)):
        Dialect().check("old", answer)


def test_one_key_one_kind_of_value() -> None:
    seen = Dialect()
    seen.check("stats", {"notes": 3, "tags": 4, "heading": None})
    seen.check("show", {"tags": ["a"], "heading": "Plan", "frontmatter": {"notes": [[1]]}})
    assert seen.conflicts() == {"tags": {"number", "array of string"}}
