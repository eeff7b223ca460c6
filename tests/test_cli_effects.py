"""Options that must reach the core, proven through the CLI by their effect on the text output and
the exit code (never by `--json` key names): `search --since`, `graph path --relation` and
`--directed`, `doctor` on index problems, and the exit codes 4 (lock held) and 5 (model server
down). Each test here once let a deliberately planted bug through (issue 16).
"""

from __future__ import annotations

import datetime as dt
import fcntl
import re
from pathlib import Path

import pytest
import sqlean as sqlite3

from tests.conftest import write_files
from tests.fake_model_server import FakeModelServer
from tests.test_cli import run
from vaultmem.search import Mode
from vaultmem.vault import Vault

_HIT_RE = re.compile(r"^\s*\d+\.\s+(\S+):\d+-\d+\s", re.MULTILINE)


def hit_paths(stdout: str) -> set[str]:
    """The note paths of `vaultmem search`'s text output (` 1. path:3-9  0.42  heading`)."""
    return set(_HIT_RE.findall(stdout))


def _dated(day: str) -> str:
    return f"---\ndate: {day}\n---\nThe zephyr log for {day}.\n"


@pytest.fixture
def dated_vault(tmp_path: Path) -> Path:
    """Notes mentioning "zephyr", dated by front matter or by a date in their path."""
    root = tmp_path / "v"
    write_files(
        root,
        {
            ".obsidian/app.json": "{}",
            "log-0301.md": _dated("2026-03-01"),
            "log-0309.md": _dated("2026-03-09"),
            "log-0310.md": _dated("2026-03-10"),
            "log-0311.md": _dated("2026-03-11"),
            "daily/2026-03-09.md": "The zephyr daily note.\n",
            "daily/2026-03-10.md": "The zephyr daily note.\n",
        },
    )
    assert run("--vault", str(root), "reindex").returncode == 0
    return root


def test_search_since_keeps_notes_on_or_after_the_day(dated_vault: Path) -> None:
    everything = run("--vault", str(dated_vault), "search", "zephyr", "--mode", "keyword")
    assert hit_paths(everything.stdout) == {
        "log-0301.md", "log-0309.md", "log-0310.md", "log-0311.md",
        "daily/2026-03-09.md", "daily/2026-03-10.md",
    }  # fmt: skip
    since = run(
        "--vault", str(dated_vault), "search", "zephyr", "--mode", "keyword",
        "--since", "2026-03-10",
    )  # fmt: skip
    assert since.returncode == 0, since.stderr
    # on the day itself counts ("on or after"); the day before does not
    assert hit_paths(since.stdout) == {"log-0310.md", "log-0311.md", "daily/2026-03-10.md"}


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_search_since_through_the_core(dated_vault: Path, mode: Mode) -> None:
    vault = Vault(dated_vault)

    def found(since: dt.date) -> set[str]:
        return {h.path for h in vault.search("zephyr", mode=mode, since=since).hits}

    try:
        assert found(dt.date(2026, 3, 10)) == {"log-0310.md", "log-0311.md", "daily/2026-03-10.md"}
        assert found(dt.date(2026, 3, 11)) == {"log-0311.md"}
        assert found(dt.date(2026, 3, 12)) == set()
        assert len(found(dt.date(2026, 3, 1))) == 6
    finally:
        vault.close()


# --- graph path: A -> B <- E by plain links; A -> C -> D by depends_on; D -> E; E -depends_on-> D


@pytest.fixture
def graph_vault(tmp_path: Path) -> Path:
    root = tmp_path / "g"
    write_files(
        root,
        {
            ".obsidian/app.json": "{}",
            "A.md": "[[B]]\n\ndepends_on:: [[C]]\n",
            "B.md": "B has no links of its own.\n",
            "C.md": "depends_on:: [[D]]\n",
            "D.md": "See [[E]].\n",
            "E.md": "[[B]]\n\ndepends_on:: [[D]]\n",
        },
    )
    assert run("--vault", str(root), "reindex").returncode == 0
    return root


def path_lines(root: Path, *options: str) -> tuple[int, list[str]]:
    result = run("--vault", str(root), "graph", "path", "A", "E", *options)
    return result.returncode, [line.strip() for line in result.stdout.splitlines()]


def test_graph_path_any_relation_either_way(graph_vault: Path) -> None:
    assert path_lines(graph_vault) == (
        0, ["A.md", "-->links_to  B.md", "<--links_to  E.md", "2 hops"]
    )  # fmt: skip


def test_graph_path_relation_walks_only_that_relation(graph_vault: Path) -> None:
    assert path_lines(graph_vault, "--relation", "depends_on") == (
        0, ["A.md", "-->depends_on  C.md", "-->depends_on  D.md", "<--depends_on  E.md", "3 hops"]
    )  # fmt: skip


def test_graph_path_directed_follows_links_as_written(graph_vault: Path) -> None:
    assert path_lines(graph_vault, "--directed") == (
        0, ["A.md", "-->depends_on  C.md", "-->depends_on  D.md", "-->links_to  E.md", "3 hops"]
    )  # fmt: skip


def test_graph_path_relation_and_directed_together_find_nothing(graph_vault: Path) -> None:
    result = run(
        "--vault", str(graph_vault), "graph", "path", "A", "E",
        "--relation", "depends_on", "--directed",
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stdout == ""
    assert "No path from A to E within 5 hops." in result.stderr
    assert "They are linked, but not within 5 hops along those relations" in result.stderr


# --- doctor and the exit codes


def test_doctor_exits_1_on_an_index_problem(tmp_path: Path) -> None:
    root = tmp_path / "d"
    write_files(root, {".obsidian/app.json": "{}", "a.md": "[[b]]\n", "b.md": "b\n"})
    assert run("--vault", str(root), "reindex").returncode == 0
    assert run("--vault", str(root), "doctor").returncode == 0
    conn = sqlite3.connect(str(root / ".vaultmem" / "index.db"))
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('resolve_all', '1')")
    conn.commit()
    conn.close()  # as a reindex interrupted before it re-resolved the links leaves it
    result = run("--vault", str(root), "doctor")
    assert result.returncode == 1
    assert "a reindex was interrupted before it re-resolved links" in result.stdout
    assert run("--vault", str(root), "reindex").returncode == 0
    assert run("--vault", str(root), "doctor").returncode == 0  # the fix it names works


def test_reindex_exits_4_while_another_holds_the_lock(tmp_path: Path) -> None:
    root = tmp_path / "l"
    write_files(root, {".obsidian/app.json": "{}", "a.md": "alpha\n"})
    assert run("--vault", str(root), "reindex").returncode == 0
    lock = root / ".vaultmem" / "index.db.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another reindex is running
        result = run("--vault", str(root), "reindex", "--wait", "0.1")
        assert result.returncode == 4
        assert "another reindex is running" in result.stderr
        assert "--wait" in result.stderr
    assert run("--vault", str(root), "reindex", "--wait", "0.1").returncode == 0  # released


def test_semantic_search_exits_5_when_the_model_server_is_down(tmp_path: Path) -> None:
    root = tmp_path / "m"
    write_files(root, {".obsidian/app.json": "{}", "a.md": "# A\nheat pump\n"})
    spec = ["--vault", str(root), "--embedder", "ollama:nomic-embed-text"]
    with FakeModelServer() as server:  # vectors from this model, while its server is up
        env = {"OLLAMA_URL": server.url}
        assert run(*spec, "reindex", env=env).returncode == 0
        up = run(*spec, "search", "--mode", "semantic", "heat", env=env)
        assert up.returncode == 0 and hit_paths(up.stdout) == {"a.md"}
    down = run(*spec, "search", "--mode", "semantic", "heat", env=env)  # the port is closed now
    assert down.returncode == 5, down.stderr
    assert f"Ollama is not reachable at {server.url}" in down.stderr
    hybrid = run(*spec, "search", "heat", env=env)  # where a fallback exists, no exit 5
    assert hybrid.returncode == 0 and hit_paths(hybrid.stdout) == {"a.md"}
    assert f"note: Ollama is not reachable at {server.url}" in hybrid.stderr
    assert hybrid.stderr.rstrip().endswith("; searched by keywords only")


def test_search_tag_matches_nested_tags_under_it(tmp_path: Path) -> None:
    """`#area/work` also counts as `#area` (docs/vault-contract.md, "Tags"), not as `#work`."""
    root = tmp_path / "t"
    write_files(
        root,
        {
            ".obsidian/app.json": "{}",
            "nested.md": "The quince plan #area/work\n",
            "top.md": "The quince list #Area\n",
            "other.md": "The quince jam #areas #work\n",
        },
    )
    assert run("--vault", str(root), "reindex").returncode == 0
    area = run("--vault", str(root), "search", "quince", "--tag", "area")
    assert area.returncode == 0, area.stderr
    assert hit_paths(area.stdout) == {"nested.md", "top.md"}
    nested = run("--vault", str(root), "search", "quince", "--tag", "#area/work")
    assert hit_paths(nested.stdout) == {"nested.md"}
