"""The commands people live in: `get`, `watch`, readable `stats` and `graph cycles`, attachments
in the graph and by name, empty queries, `--since` in words. Real processes on a copy of the
sample vault, as a person (or a script) runs them."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_VAULT, write_files
from tests.test_cli import run
from vaultmem.cli.index import ago, stats_lines
from vaultmem.dates import since_day
from vaultmem.vault import Stats

GATEWAY = "work/projects/Heatwise Gateway.md"
# How long a `watch` process may take to print or to exit: a deadline, not a wait (a passing
# test waits only as long as the process takes). 60 s was not enough once, for a watch at
# nice 10 on 2 cores shared at load ~10; tests/test_cli.py's `run` allows 300 s.
DEADLINE_S = 240.0


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of sample-vault with its index, shared by the read-only tests of this module."""
    root = tmp_path_factory.mktemp("daily") / "vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".vaultmem"))
    result = run("--vault", str(root), "reindex", env={"VAULTMEM_EMBEDDER": "fake"})
    assert result.returncode == 0, result.stderr
    return root


@pytest.fixture
def vault(indexed: Path, tmp_path: Path) -> Path:
    """A private copy of the indexed vault, for tests that change it."""
    return shutil.copytree(indexed, tmp_path / "vault")


def note_count(vault: Path) -> int:
    count: int = json.loads(run("--vault", str(vault), "stats", "--json").stdout)["notes"]
    return count


# --------------------------------------------------------------------------- get


def test_get_prints_a_note_as_written(indexed: Path) -> None:
    result = run("get", "Heatwise Gateway", cwd=indexed)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (indexed / GATEWAY).read_text(encoding="utf-8").rstrip("\n") + "\n"


def test_get_prints_one_section(indexed: Path) -> None:
    lines = (indexed / "work/projects/Tariff Optimizer.md").read_text(encoding="utf-8")
    result = run("get", "tariff optimizer#MY PLAN", cwd=indexed)  # as [[Note#Heading]] matches
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("## My Plan!\n")
    assert result.stdout.rstrip("\n") in lines
    assert "## " not in result.stdout.split("\n", 1)[1]  # only that section


def test_get_json_says_where_the_text_came_from(indexed: Path) -> None:
    result = run("get", "Tariff Optimizer#my plan", "--json", cwd=indexed)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    text = run("get", "Tariff Optimizer#my plan", cwd=indexed).stdout
    assert data["text"] + "\n" == text
    assert (data["path"], data["title"], data["heading"]) == (
        "work/projects/Tariff Optimizer.md",
        "Tariff Optimizer",
        "My Plan!",
    )
    assert data["end_line"] - data["start_line"] + 1 == len(text.splitlines())
    assert data["chars"] == len(data["text"]) and data["truncated"] is False
    assert "My Plan!" in data["headings"]


@pytest.mark.parametrize(
    ("ref", "code", "message"),
    [
        ("Tariff Optimizer#No such heading", 1, "has no heading 'No such heading'"),
        ("Nobody at all", 1, "no note named 'Nobody at all'"),
        ("#My plan", 2, "names no note"),
    ],
)
def test_get_errors(indexed: Path, ref: str, code: int, message: str) -> None:
    result = run("get", ref, cwd=indexed)
    assert result.returncode == code
    assert message in result.stderr and result.stdout == ""


# --------------------------------------------------------------------------- watch


class Watch:
    """`vaultmem watch --json` in a process of its own, read line by line as it prints."""

    def __init__(self, vault: Path, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_VAULT"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "vaultmem", "--vault", str(vault), "watch", "--json", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines = selectors.DefaultSelector()
        assert self.process.stdout is not None
        self.lines.register(self.process.stdout, selectors.EVENT_READ)

    def next(self, timeout: float = DEADLINE_S) -> dict[str, object]:
        """The next refresh it prints (waiting for it as long as `timeout`)."""
        assert self.process.stdout is not None
        if not self.lines.select(timeout):
            raise AssertionError(f"watch printed nothing within {timeout:g} s")
        line = self.process.stdout.readline()
        assert line, f"watch ended: {self.process.wait()} {self.process.stderr}"
        data: dict[str, object] = json.loads(line)
        return data

    def stop(self, how: signal.Signals = signal.SIGINT) -> tuple[int, str]:
        self.process.send_signal(how)
        try:
            _, err = self.process.communicate(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
            raise AssertionError(
                f"watch still ran {DEADLINE_S:g} s after {how.name}; it said: {err}"
            ) from None
        return self.process.returncode, err

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


@pytest.fixture
def watching(vault: Path) -> Iterator[Watch]:
    watch = Watch(vault)
    try:
        yield watch
    finally:
        watch.close()


def paths(refresh: dict[str, object], key: str) -> list[str]:
    notes = refresh[key]
    assert isinstance(notes, list)
    return [n["path"] for n in notes]


def test_watch_catches_up_then_reports_each_change(vault: Path, watching: Watch) -> None:
    first = watching.next()
    assert (paths(first, "new"), paths(first, "edited"), paths(first, "gone")) == ([], [], [])
    notes = note_count(vault)
    assert first["notes"] == notes
    write_files(vault, {"inbox/Fresh idea.md": "# Fresh idea\nA heat pump for the shed.\n"})
    found = watching.next()
    assert paths(found, "new") == ["inbox/Fresh idea.md"] and found["notes"] == notes + 1
    hello = vault / GATEWAY
    hello.write_text(hello.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    found = watching.next()
    assert paths(found, "edited") == [GATEWAY]
    (vault / "inbox/Fresh idea.md").unlink()
    found = watching.next()
    assert paths(found, "gone") == ["inbox/Fresh idea.md"]
    # the index really is fresh: another process finds the new line
    assert "One more line" in run("--vault", str(vault), "get", "Heatwise Gateway").stdout
    code, err = watching.stop()
    assert code == 0 and "stopped watching" in err


def test_watch_catches_up_with_edits_made_while_nothing_watched(vault: Path) -> None:
    write_files(vault, {"Offline.md": "# Offline\nwritten while nothing ran\n"})
    result = run("--vault", str(vault), "watch", "--json", "--count", "1")
    assert result.returncode == 0, result.stderr
    (refresh,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert paths(refresh, "new") == ["Offline.md"]


def test_watch_text_and_sigterm(vault: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_VAULT"}
    process = subprocess.Popen(
        [sys.executable, "-m", "vaultmem", "--vault", str(vault), "watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first == f"watching {vault} ({note_count(vault)} notes); Ctrl+C stops\n"
        assert re.fullmatch(r"\d\d:\d\d:\d\d  the index is up to date\n", process.stdout.readline())
        write_files(vault, {"New one.md": "# New one\n"})
        assert re.fullmatch(r"\d\d:\d\d:\d\d  1 new \(\d+\.\d\d s\)\n", process.stdout.readline())
        assert process.stdout.readline() == "  + New one.md\n"
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=DEADLINE_S)
        assert process.returncode == 0 and "stopped watching" in err
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_watch_uses_no_cpu_while_nothing_changes(watching: Watch) -> None:
    """Idle means asleep: CPU time (not wall-clock) over a quiet spell stays near nothing.
    A busy loop would take the whole spell; the bound is far above what sleeping costs."""
    watching.next()  # caught up: from here on nothing changes
    stat = Path(f"/proc/{watching.process.pid}/stat")
    if not stat.exists():
        pytest.skip("no /proc to read the process's CPU time from")

    def cpu_seconds() -> float:
        fields = stat.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    before, started = cpu_seconds(), time.monotonic()
    time.sleep(5)
    used, spell = cpu_seconds() - before, time.monotonic() - started
    assert used < 0.25 * spell, f"{used:.2f} s of CPU in {spell:.1f} s idle"


# --------------------------------------------------------------------------- stats, cycles


def test_stats_reads_as_figures_for_a_person(indexed: Path) -> None:
    result = run("stats", cwd=indexed)
    assert result.returncode == 0, result.stderr
    shown = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in result.stdout.splitlines())
    assert shown["notes"] == str(note_count(indexed))
    assert re.fullmatch(r"\S+index\.db \(\d+\.\d (KB|MB), schema \d+\)", shown["index"])
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\d \d\d:\d\d \((just now|\d+ minutes? ago)\)", shown["last reindex"]
    )
    assert re.fullmatch(
        r"\d+ \(\d+ resolved, \d+ to \d+ wanted notes?, \d+ ambiguous\)", shown["links"]
    )
    assert not re.search(r"\b1[6-9]\d{8}\b", result.stdout)  # no epoch seconds


def test_stats_lines_and_ago() -> None:
    figures = Stats(
        notes=14076, attachments=3, chunks=52000, links=39000, resolved_links=38000,
        wanted_links=1000, wanted_notes=1, ambiguous_links=0, tags=12, open_tasks=2,
        done_tasks=1, skipped=0, notes_with_warnings=0, index_path="/x/index.db",
        index_bytes=17_300_000, schema_version=2, last_reindex=None, vectors=0,
    )  # fmt: skip
    lines = dict(stats_lines(figures, now=0.0))
    assert lines["notes"] == "14,076"
    assert lines["links"] == "39,000 (38,000 resolved, 1,000 to 1 wanted note, 0 ambiguous)"
    assert lines["index"] == "/x/index.db (16.5 MB, schema 2)"
    assert lines["last reindex"] == "never"
    assert [ago(s) for s in (5, 61, 7200, 90000, 3 * 86400)] == [
        "just now",
        "1 minute ago",
        "2 hours ago",
        "1 day ago",
        "3 days ago",
    ]


def test_graph_cycles_one_note_per_line(indexed: Path) -> None:
    result = run("graph", "cycles", cwd=indexed)
    assert result.returncode == 0, result.stderr
    data = json.loads(run("graph", "cycles", "--json", cwd=indexed).stdout)
    expected = []
    for number, cycle in enumerate(data["cycles"], start=1):
        expected.append(f"cycle {number}: {cycle['size']} notes")
        expected += [f"  {member['path']}" for member in cycle["members"]]
    assert result.stdout.splitlines() == expected
    assert max(len(line) for line in expected) < 100


# --------------------------------------------------------------------------- attachments


def test_neighbors_leave_attachments_out_unless_asked(indexed: Path) -> None:
    plain = run("graph", "neighbors", "Heatwise Gateway", "--json", cwd=indexed)
    kinds = {n["kind"] for n in json.loads(plain.stdout)["neighbors"]}
    assert "attachment" not in kinds and "note" in kinds
    asked = run("graph", "neighbors", "Heatwise Gateway", "--attachments", "--json", cwd=indexed)
    found = json.loads(asked.stdout)["neighbors"]
    assert {n["path"] for n in found if n["kind"] == "attachment"} == {
        "attachments/gateway-dashboard.png",
        "attachments/spec.pdf",
    }
    text = run("graph", "neighbors", "Heatwise Gateway", cwd=indexed).stdout
    assert "attachments/" not in text


def test_attachments_are_found_by_their_file_name(indexed: Path) -> None:
    result = run("backlinks", "SPEC.pdf", "--json", cwd=indexed)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["path"], data["total"]) == ("attachments/spec.pdf", 1)
    assert data["backlinks"][0]["path"] == GATEWAY
    around = run("graph", "neighbors", "gateway-dashboard.png", "--json", cwd=indexed)
    assert [n["path"] for n in json.loads(around.stdout)["neighbors"]] == [GATEWAY]


def test_a_note_wins_over_an_attachment_of_the_same_name(vault: Path) -> None:
    write_files(vault, {"spec.pdf.md": "# about the spec\n", "Reader.md": "[[spec.pdf.md]]\n"})
    run("--vault", str(vault), "reindex")
    data = json.loads(run("--vault", str(vault), "backlinks", "spec.pdf", "--json").stdout)
    assert data["path"] == "spec.pdf.md"


# --------------------------------------------------------------------------- queries


@pytest.mark.parametrize("query", ["", "   ", "\t"])
def test_an_empty_query_exits_2_saying_so(indexed: Path, query: str) -> None:
    result = run("search", query, cwd=indexed)
    assert result.returncode == 2
    assert "empty query" in result.stderr and result.stdout == ""


def test_since_takes_the_words_queries_take(indexed: Path) -> None:
    for words in ("yesterday", "last week", "3 days ago", "Feb 8", "2026-11-01"):
        result = run("search", "heat pump", "--since", words, "--json", cwd=indexed)
        assert result.returncode == 0, (words, result.stderr)
    result = run("search", "heat pump", "--since", "someday soon", cwd=indexed)
    assert result.returncode == 2
    assert "'someday soon': give a day as YYYY-MM-DD, or words such as" in result.stderr


def test_since_day_names_the_first_day() -> None:
    today = dt.date(2026, 11, 30)  # a Monday
    assert since_day("yesterday", today) == dt.date(2026, 11, 29)
    assert since_day("  last   week ", today) == dt.date(2026, 11, 23)
    assert since_day("this month", today) == dt.date(2026, 11, 1)
    assert since_day("3 days ago", today) == dt.date(2026, 11, 27)
    assert since_day("Feb 8", today) == dt.date(2026, 2, 8)
    assert since_day("2026-11-28", today) == dt.date(2026, 11, 28)
    assert since_day("today", today) == today
    for words in ("", "soon", "yesterday morning", "2026-13-01", "mon"):
        assert since_day(words, today) is None, words


def test_since_in_words_filters_as_the_day_does(tmp_path: Path) -> None:
    today = dt.date.today()
    old = (today - dt.timedelta(days=30)).isoformat()
    new = (today - dt.timedelta(days=1)).isoformat()
    root = tmp_path / "v"
    write_files(
        root,
        {
            "Old.md": f"---\ndate: {old}\n---\n# Old\nheat pump notes\n",
            "New.md": f"---\ndate: {new}\n---\n# New\nheat pump notes\n",
        },
    )
    os.utime(root / "Old.md", (time.time() - 40 * 86400,) * 2)
    assert run("--vault", str(root), "init").returncode == 0
    for since in ("yesterday", new):
        result = run("--vault", str(root), "search", "heat pump", "--since", since, "--json")
        assert [r["path"] for r in json.loads(result.stdout)["results"]] == ["New.md"]
