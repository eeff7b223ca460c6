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
from contextlib import closing
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_VAULT, write_files
from tests.test_cli import run
from vaultmem.cli.index import ago, stats_lines
from vaultmem.dates import since_day
from vaultmem.vault import Stats, Vault

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
    """The notes in the index, as `stats` counts them (read here: a process costs seconds of
    CPU on a loaded machine)."""
    with closing(Vault(vault)) as reader:
        return reader.stats().notes


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
# A watch test runs a `watch` process and waits on it several times: each wait has its own
# deadline, and the test as a whole more than pytest's 300 s (tests starved of CPU by nice-0
# work on a shared machine were seen to take minutes; a passing test waits only as long as the
# process takes).
WATCH_TEST_S = 900


# Python with Ctrl+C as a terminal gives it. A suite started in the background by a shell
# without job control (`make test &`, `nohup … &`: how long runs are started) hands every
# child SIGINT ignored, and Python keeps it so: the watch then never heard `stop()`'s Ctrl+C
# and the test failed after its deadline ("watch still ran 240 s after SIGINT"), in such runs
# only. The child restores the default before it becomes vaultmem.
CTRL_C = (
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])",
)


class Watch:
    """`vaultmem watch --json` in a process of its own, read line by line as it prints.

    Its stdout is read straight from the pipe (a buffered `readline` after `select` can take
    two lines at once and then wait on an empty pipe for the second), its stderr goes to a
    file (a pipe nobody reads can fill and stop it), and a failure says what it wrote there.
    """

    def __init__(self, vault: Path, *args: str, within: tuple[str, ...] = ()) -> None:
        env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_VAULT"}
        self.err_path = vault.parent / "watch.stderr"
        command = [*CTRL_C, "-m", "vaultmem", "--vault", str(vault), "watch", "--json"]
        with self.err_path.open("wb") as err:
            self.process = subprocess.Popen(
                [*within, *command, *args],
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
            )
        assert self.process.stdout is not None
        self.out = self.process.stdout.fileno()
        self.buffer = b""
        self.lines = selectors.DefaultSelector()
        self.lines.register(self.out, selectors.EVENT_READ)

    def said(self) -> str:
        return self.err_path.read_text(encoding="utf-8", errors="replace")

    def fail(self, what: str) -> AssertionError:
        self.close()
        return AssertionError(f"{what}; watch's stderr: {self.said()!r}")

    def next(self, timeout: float = DEADLINE_S) -> dict[str, object]:
        """The next refresh it prints (waiting for it as long as `timeout`)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self.lines.select(left):
                raise self.fail(f"watch printed nothing within {timeout:g} s")
            chunk = os.read(self.out, 65536)
            if not chunk:
                raise self.fail(f"watch ended with {self.process.wait()}")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        data: dict[str, object] = json.loads(line)
        return data

    def stop(self, how: signal.Signals = signal.SIGINT) -> tuple[int, str]:
        self.process.send_signal(how)
        try:
            self.process.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            raise self.fail(f"watch still ran {DEADLINE_S:g} s after {how.name}") from None
        return self.process.returncode, self.said()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()
        self.lines.close()


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


def changes(refresh: dict[str, object]) -> dict[str, list[str]]:
    return {key: paths(refresh, key) for key in ("new", "edited", "gone") if refresh[key]}


def save(path: Path, text: str) -> None:
    """Write a note in one step, as editors that save through a temporary file do.

    A note written in place is truncated, then written: a writer starved of CPU between the
    two leaves the watcher a pause long enough to reindex the empty note, and the rest comes
    as a second change (the watch reports the note twice, rightly). The tests of what is
    reported per change write each change whole; `test_watch_reports_a_slow_write_whole`
    covers the note written in two steps.
    """
    temp = path.parent / f".{path.name}.tmp"  # a dot-file: the watcher ignores it
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def in_index(vault: Path, words: str) -> list[str]:
    """What another reader of the index finds for `words` (keyword search)."""
    with closing(Vault(vault)) as reader:
        return [hit.path for hit in reader.search(words, mode="keyword").hits]


@pytest.mark.timeout(WATCH_TEST_S)
def test_watch_catches_up_then_reports_each_change(vault: Path, watching: Watch) -> None:
    first = watching.next()
    assert changes(first) == {}
    notes = note_count(vault)
    assert first["notes"] == notes
    save(vault / "inbox/Fresh idea.md", "# Fresh idea\nA heat pump for the shed.\n")
    found = watching.next()
    assert changes(found) == {"new": ["inbox/Fresh idea.md"]} and found["notes"] == notes + 1
    hello = vault / GATEWAY
    save(hello, hello.read_text(encoding="utf-8") + "\nOne more quokka.\n")
    found = watching.next()
    assert changes(found) == {"edited": [GATEWAY]}
    (vault / "inbox/Fresh idea.md").unlink()
    found = watching.next()
    assert changes(found) == {"gone": ["inbox/Fresh idea.md"]}
    assert in_index(vault, "quokka") == [GATEWAY]  # the index really is fresh
    code, err = watching.stop()
    assert code == 0 and "stopped watching" in err


def last_reindex(vault: Path) -> float | None:
    with closing(Vault(vault)) as reader:
        return reader.stats().last_reindex


@pytest.mark.timeout(WATCH_TEST_S)
def test_watch_says_nothing_of_a_change_that_changes_nothing(vault: Path, watching: Watch) -> None:
    """A chmod wakes the watcher, and the reindex finds nothing to do: no refresh is printed
    (one with nothing in it was). The note saved after it is the next thing said."""
    watching.next()
    before = last_reindex(vault)
    os.chmod(vault / GATEWAY, 0o600)
    deadline = time.monotonic() + DEADLINE_S
    while last_reindex(vault) == before:  # the watch reindexed for the chmod
        assert time.monotonic() < deadline, "no reindex after a chmod"
        time.sleep(0.1)
    save(vault / "After.md", "# After\n")
    assert changes(watching.next()) == {"new": ["After.md"]}


@pytest.mark.timeout(WATCH_TEST_S)
def test_watch_reports_a_slow_write_whole(vault: Path, watching: Watch) -> None:
    """A note created, then written a while later (an editor, or a writer starved of CPU): the
    watch reports it new when it appears, edited when written, and the index ends with every
    word of it."""
    watching.next()
    note = vault / "Slow.md"
    with note.open("w", encoding="utf-8") as slow:
        assert changes(watching.next()) == {"new": ["Slow.md"]}  # created, still empty
        slow.write("# Slow\nwombat\n")
    assert changes(watching.next()) == {"edited": ["Slow.md"]}
    assert in_index(vault, "wombat") == ["Slow.md"]


NO_INOTIFY = ("unshare", "--user", "--map-root-user", "sh", "-c")


@pytest.mark.timeout(WATCH_TEST_S)
def test_watch_polls_when_the_system_cannot_watch(vault: Path) -> None:
    """Linux allows a user 128 inotify instances, shared by all their programs (editors, sync
    clients, other watchers): with none left, `watch` said so on stderr, then printed its
    catch-up and sat there, reporting nothing. It now polls and says why. Run in a user
    namespace whose limit is 0 (so the machine's own instances are untouched)."""
    probe = subprocess.run(
        [*NO_INOTIFY, "echo 0 > /proc/sys/user/max_inotify_instances"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"no user namespace to limit inotify in: {probe.stderr.strip()}")
    limit = 'echo 0 > /proc/sys/user/max_inotify_instances && exec "$@"'
    watch = Watch(vault, within=(*NO_INOTIFY, limit, "sh"))
    try:
        assert changes(watch.next()) == {}
        save(vault / "Polled.md", "# Polled\n")
        assert changes(watch.next()) == {"new": ["Polled.md"]}
        code, err = watch.stop()
        assert code == 0
        assert "Too many open files" in err and "looking for changes every 1 s instead" in err
    finally:
        watch.close()


@pytest.mark.timeout(WATCH_TEST_S)
def test_watch_catches_up_with_edits_made_while_nothing_watched(vault: Path) -> None:
    write_files(vault, {"Offline.md": "# Offline\nwritten while nothing ran\n"})
    result = run("--vault", str(vault), "watch", "--json", "--count", "1")
    assert result.returncode == 0, result.stderr
    (refresh,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert paths(refresh, "new") == ["Offline.md"]


@pytest.mark.timeout(WATCH_TEST_S)
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


@pytest.mark.timeout(WATCH_TEST_S)
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
