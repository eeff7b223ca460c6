"""The CLI as a demanding newcomer meets it: the hostile inputs and the rough edges found by
using every command from a clean clone (the shared `--wait`, the options' help, colour and
NO_COLOR, unreadable vaults and index files, a file at the index path that is not an index,
Ctrl+C in a reindex)."""

from __future__ import annotations

import ast
import contextlib
import json
import math
import os
import pty
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import networkx as nx
import pytest
import sqlean

from tests.conftest import ROOT, write_files
from tests.test_cli import run
from tests.test_cli_daily import CTRL_C
from vaultmem.cli import context
from vaultmem.cli.root import cli


def _commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    """Every command and subcommand by its full name (`graph path`), modules all loaded."""
    found: dict[str, click.Command] = {}
    for name, command in sorted(group.commands.items()):
        found[f"{prefix}{name}"] = command
        if isinstance(command, click.Group):
            found.update(_commands(command, f"{prefix}{name} "))
    return found


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write_files(
        root,
        {
            ".obsidian/app.json": "{}",
            "Robert Smith.md": "---\naliases: [Bob]\n---\n# Robert Smith\nEngineer.\n",
            "Meeting.md": "# Meeting\nMet [[Bob]] about the heat pump.\n",
        },
    )
    return root


def test_every_wait_option_is_the_one_shared_declaration() -> None:
    """`reindex`, `upgrade-model`, the trash and `gaps fix-aliases` declared `--wait` four
    times, with two ranges (a day, an hour) and only two refusing nan."""
    waits = {
        name: param
        for name, command in _commands(cli).items()
        for param in command.params
        if param.name == "wait"
    }
    assert set(waits) >= {"reindex", "upgrade-model", "trash move", "restore", "gaps fix-aliases"}
    for name, param in waits.items():
        assert isinstance(param.type, click.FloatRange), name
        assert (param.type.min, param.type.max) == (0, context.MAX_WAIT), name
        assert param.callback is context._finite_seconds, name
        assert param.metavar == "SECONDS" and param.default == 60.0, name
        assert param.help and "exit 4" in param.help, name


def test_no_command_module_borrows_another_ones_private_names() -> None:
    """upgrade.py imported cli/index.py's `_finite_seconds`: what two commands share lives
    in cli/context.py, under a public name."""
    borrowed = []
    for module in sorted((ROOT / "vaultmem" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("vaultmem.cli"):
                borrowed += [f"{module.name}: {a.name}" for a in node.names if a.name[0] == "_"]
    assert borrowed == []


@pytest.mark.parametrize(
    "args",
    [
        ("gaps", "fix-aliases", "--dry-run"),
        ("trash", "Meeting"),
        ("restore", "Meeting.md"),
        ("reindex",),
    ],
)
def test_wait_nan_is_refused_as_bad_usage_before_anything_runs(
    notes: Path, args: tuple[str, ...]
) -> None:
    done = run("--vault", str(notes), *args, "--wait", "nan", env={"VAULTMEM_EMBEDDER": "fake"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is not a number of seconds (0 to 86400)" in done.stderr
    assert "[[Robert Smith|Bob]]" not in done.stdout  # fix-aliases did not even plan
    assert (notes / "Meeting.md").exists()


def test_a_wait_of_more_than_an_hour_is_taken_by_every_command() -> None:
    """The trash and the alias fix refused `--wait 7200` that reindex took."""
    for name, command in _commands(cli).items():
        for param in command.params:
            if param.name == "wait":
                assert param.type_cast_value(click.Context(command), "7200") == 7200.0, name
    assert not math.isnan(context.MAX_WAIT)


CAPSH = shutil.which("capsh")
needs_capsh = pytest.mark.skipif(CAPSH is None, reason="needs capsh to drop root's override")


def as_a_person(*args: str) -> subprocess.CompletedProcess[str]:
    """`vaultmem ARGS` without root's override of file permissions (capsh drops it), as a
    person's account meets chmod 000 and read-only folders; as is, when not run as root."""
    command = shlex.join([sys.executable, "-m", "vaultmem", *args])
    argv = ["bash", "-c", command]
    if os.geteuid() == 0:
        assert CAPSH is not None
        argv = [CAPSH, "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", command]
    env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_VAULT"}
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env={**env, "VAULTMEM_EMBEDDER": "fake"},
        cwd=ROOT,
        timeout=300,
    )


@contextlib.contextmanager
def mode(path: Path, bits: int) -> Iterator[None]:
    before = path.stat().st_mode & 0o7777
    os.chmod(path, bits)
    try:
        yield
    finally:
        os.chmod(path, before)


def said_cleanly(done: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error: "), done.stderr
    for word in words:
        assert word in done.stderr, (word, done.stderr)


@needs_capsh
def test_an_unreadable_vault_folder_is_a_message_not_a_traceback(notes: Path) -> None:
    """A vault folder chmod 000 crashed every command with PermissionError from the config."""
    with mode(notes, 0):
        done = as_a_person("--vault", str(notes), "stats")
    said_cleanly(done, 2, f"cannot read the vault folder {notes} (Permission denied)", "ls -ld")
    with mode(notes / ".obsidian", 0):  # not vaultmem's: read only as the notes need
        assert as_a_person("--vault", str(notes), "reindex").returncode == 0
    with mode(notes / ".vaultmem", 0):
        done = as_a_person("--vault", str(notes), "search", "heat")
    said_cleanly(done, 2, f"cannot read {notes / '.vaultmem' / 'config.toml'} (Permission")


@needs_capsh
def test_init_in_a_read_only_vault_says_how_to_index_it_elsewhere(notes: Path) -> None:
    with mode(notes, 0o555):
        done = as_a_person("--vault", str(notes), "init")
        said_cleanly(done, 2, "cannot write the settings", "--index PATH reindex")
        assert not (notes / ".vaultmem").exists()
        elsewhere = notes.parent / "elsewhere.db"
        done = as_a_person("--vault", str(notes), "--index", str(elsewhere), "reindex")
        assert done.returncode == 0, done.stderr
    assert "2 notes" in done.stdout


@needs_capsh
def test_an_index_closed_to_this_account_says_so_instead_of_rebuild_it(notes: Path) -> None:
    """An index file chmod 000 or read-only was called damaged ('run `vaultmem reindex
    --full`'), which fails the same way, or refuses the file as not an index."""
    assert run("--vault", str(notes), "reindex", env={"VAULTMEM_EMBEDDER": "fake"}).returncode == 0
    index = notes / ".vaultmem" / "index.db"
    with mode(index, 0):
        for args in (("stats",), ("search", "heat"), ("reindex",), ("reindex", "--full")):
            done = as_a_person("--vault", str(notes), *args)
            said_cleanly(done, 3, "this account may not read it", "--index PATH")
            assert "reindex --full" not in done.stderr and "not a vaultmem index" not in done.stderr
    conn = sqlean.connect(str(index))  # the journal into the file: none left beside it
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    assert not Path(f"{index}-wal").exists()
    before = index.read_bytes()
    with mode(index, 0o444), mode(index.parent, 0o555):
        for args in (("stats",), ("search", "heat"), ("reindex", "--full")):
            done = as_a_person("--vault", str(notes), *args)
            said_cleanly(done, 3, "read-only for this account", "ls -ld")
            assert "reindex --full" not in done.stderr
    assert index.read_bytes() == before


def test_a_file_at_the_index_path_that_is_no_index_is_not_sent_to_reindex_full(
    notes: Path,
) -> None:
    """Junk at the index path was 'cannot be read: run `vaultmem reindex --full`', and that
    refused it ('not a vaultmem index'): the first message now says what the second does."""
    junk = notes.parent / "mine.db"
    junk.write_bytes(b"my own data, not an index\n" * 4000)
    for args in (("stats",), ("search", "heat"), ("reindex",), ("reindex", "--full")):
        done = run("--vault", str(notes), "--index", str(junk), *args)
        assert done.returncode in (2, 3), done.stderr
        assert "not a vaultmem index" in done.stderr and "--index PATH" in done.stderr
        assert "run `vaultmem reindex --full`" not in done.stderr, args
    assert junk.read_bytes() == b"my own data, not an index\n" * 4000
    damaged = notes / ".vaultmem" / "index.db"  # vaultmem's own, damaged: --full still mends
    assert run("--vault", str(notes), "reindex", env={"VAULTMEM_EMBEDDER": "fake"}).returncode == 0
    with open(damaged, "r+b") as handle:
        handle.truncate(5000)
    done = run("--vault", str(notes), "stats")
    said_cleanly(done, 3, "run `vaultmem reindex --full`")
    assert run("--vault", str(notes), "reindex", "--full").returncode == 0


def in_a_terminal(*args: str, env: dict[str, str]) -> str:
    """What `vaultmem ARGS` prints on a terminal (a pseudo-terminal for stdout and stderr)."""
    main, sub = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if k not in ("VAULTMEM_VAULT", "NO_COLOR")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultmem", *args],
        stdin=subprocess.DEVNULL,
        stdout=sub,
        stderr=sub,
        env={**full_env, "TERM": "xterm", **env},
    )
    os.close(sub)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert proc.wait(timeout=300) == 0
    return b"".join(chunks).decode()


def test_no_color_takes_the_colour_out_of_a_terminal_too(notes: Path) -> None:
    """click strips colour only from pipes; NO_COLOR (no-color.org) was ignored."""
    assert run("--vault", str(notes), "reindex", env={"VAULTMEM_EMBEDDER": "fake"}).returncode == 0
    for command in (("search", "heat", "--explain"), ("show", "Meeting")):
        coloured = in_a_terminal("--vault", str(notes), *command, env={})
        assert "\x1b[" in coloured and "Meeting" in coloured
        plain = in_a_terminal("--vault", str(notes), *command, env={"NO_COLOR": "1"})
        assert "\x1b[" not in plain
        assert plain.replace("\r\n", "\n") == re.sub(r"\x1b\[[0-9;]*m", "", coloured).replace(
            "\r\n", "\n"
        )
        assert "\x1b[" in in_a_terminal("--vault", str(notes), *command, env={"NO_COLOR": ""})
        piped = run("--vault", str(notes), *command)
        assert "\x1b[" not in piped.stdout + piped.stderr


def interrupted_in_a_terminal(vault: Path, *args: str) -> tuple[int, str]:
    """`vaultmem ARGS` on a terminal, sent Ctrl+C's SIGINT once its progress bar has moved
    (so the work is under way, with most of it left): its exit code and what it printed."""
    main, sub = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_VAULT"}
    proc = subprocess.Popen(
        [*CTRL_C, "-m", "vaultmem", "--vault", str(vault), *args],
        stdin=subprocess.DEVNULL,
        stdout=sub,
        stderr=sub,
        env={**env, "TERM": "xterm", "VAULTMEM_EMBEDDER": "fake"},
    )
    os.close(sub)
    seen = b""
    sent = False
    while True:
        ready, _, _ = select.select([main], [], [], 300)
        assert ready, f"nothing printed for 300 s: {seen[-500:]!r}"
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the other end closed
            break
        if not chunk:
            break
        seen += chunk
        if not sent and re.search(rb"indexing notes .*\]\s+[1-9]\d?%", seen):
            proc.send_signal(signal.SIGINT)
            sent = True
    os.close(main)
    assert sent, f"no progress bar seen: {seen[-500:]!r}"
    return proc.wait(timeout=300), seen.decode(errors="replace")


@pytest.fixture
def many(tmp_path: Path) -> Path:
    """Enough notes that a reindex takes a while (seconds even on an idle machine)."""
    root = tmp_path / "many"
    body = "\n".join(f"Line {i} about heat pumps, tariffs and [[Note {i}]]." for i in range(40))
    write_files(root, {f"n/Note {i}.md": f"# Note {i}\n{body}\n" for i in range(1500)})
    (root / ".obsidian").mkdir()
    return root


def test_ctrl_c_in_a_reindex_exits_130_and_leaves_a_usable_index(many: Path) -> None:
    """Ctrl+C gave click's bare 'aborted'; the index it leaves must answer, and a reindex
    must finish the job (a first index commits in batches; a full rebuild all or nothing)."""
    code, said = interrupted_in_a_terminal(many, "reindex", "--no-embed")
    assert code == 130, said
    assert "interrupted: what was indexed so far is kept" in said and "Traceback" not in said
    assert "run `vaultmem reindex` to finish" in said and "aborted" not in said
    assert "\x1b[?25h" in said  # the bar closed: the cursor shown again
    stats = run("--vault", str(many), "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    assert 0 <= json.loads(stats.stdout)["notes"] < 1500
    assert run("--vault", str(many), "search", "heat", "--mode", "keyword").returncode == 0

    done = run("--vault", str(many), "reindex", "--no-embed", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["notes"] == 1500

    code, said = interrupted_in_a_terminal(many, "reindex", "--full", "--no-embed")
    assert code == 130, said
    assert "interrupted: the index is as it was before" in said and "Traceback" not in said
    stats = run("--vault", str(many), "stats", "--json")
    assert stats.returncode == 0 and json.loads(stats.stdout)["notes"] == 1500, stats.stderr
    found = run("--vault", str(many), "search", "Note 7", "--mode", "keyword", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["results"], found.stderr


def test_every_option_of_every_command_says_what_it_does() -> None:
    """`recall --days`, `gate --budget`, `graph path --max-depth`, `salience --top` and nine
    more showed only their type in `--help`."""
    silent = [
        f"{name} {param.opts[0]}"
        for name, command in _commands(cli).items()
        for param in command.params
        if isinstance(param, click.Option) and param.name != "help" and not param.help
    ]
    assert silent == []


@pytest.fixture
def nested(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write_files(
        root,
        {
            ".obsidian/app.json": "{}",
            "Home.md": "# Home\nSee [[Plan]].\n",
            "work/Plan.md": "# Plan\n## Risks\nThe heat pump arrives late.\n\nowner:: [[Home]]\n",
            "work/projects/Pump.md": "# Pump\nLinks [[Plan#Risks]].\n",
            "personal/Home notes.md": "# Home notes\n",
        },
    )
    (tmp_path / "outside.md").write_text("# Outside\nsecret\n")
    assert run("--vault", str(root), "reindex", env={"VAULTMEM_EMBEDDER": "fake"}).returncode == 0
    return root


def test_a_note_named_by_the_path_the_shell_completed_is_found(nested: Path) -> None:
    """`vaultmem show ./work/Plan.md` (tab completion in the vault), `show Plan.md` and
    `show projects/Pump.md` from work/, or the absolute path: 'no note named …' before."""
    work = nested / "work"
    for cwd, ref, path in [
        (nested, "./work/Plan.md", "work/Plan.md"),
        (work, "Plan.md", "work/Plan.md"),
        (work, "./projects/Pump.md", "work/projects/Pump.md"),
        (work, "projects/Pump.md", "work/projects/Pump.md"),
        (work, "../Home.md", "Home.md"),
        (nested.parent, str(work / "Plan.md"), "work/Plan.md"),
        (work, "personal/Home notes.md", "personal/Home notes.md"),  # a vault path still is
        (work, "Home", "Home.md"),  # a title still is, whatever the folder
    ]:
        done = run("--vault", str(nested), "show", ref, "--json", cwd=cwd)
        assert done.returncode == 0, (ref, done.stderr)
        assert json.loads(done.stdout)["path"] == path, ref
    got = run("--vault", str(nested), "get", "Plan.md#Risks", cwd=work)
    assert got.returncode == 0 and got.stdout.startswith("## Risks"), got.stderr
    moved = run("--vault", str(nested), "backlinks", "./Plan.md", "--json", cwd=work)
    assert [b["path"] for b in json.loads(moved.stdout)["backlinks"]] == [
        "Home.md",
        "work/projects/Pump.md",
    ]
    hops = run("--vault", str(nested), "graph", "path", "../Home.md", "projects/Pump.md", cwd=work)
    assert hops.returncode == 0, hops.stderr
    fact = run("--vault", str(nested), "fact", "get", "./Plan.md", "owner", cwd=work)
    assert fact.returncode == 0 and "Home" in fact.stdout, fact.stderr


def test_a_file_path_outside_the_vault_names_no_note(nested: Path) -> None:
    for ref in ("../outside.md", str(nested.parent / "outside.md"), "../../etc/passwd"):
        done = run("--vault", str(nested), "get", ref, cwd=nested)
        assert done.returncode == 1 and f"no note named '{ref}'" in done.stderr, ref
        assert "secret" not in done.stdout


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("Plan", "Plan"),
        ("work/Plan.md#Risks", "work/Plan.md#Risks"),
        ("./work/Plan.md#Risks", "work/Plan.md#Risks"),
        ("work/Nope.md", "work/Nope.md"),
        ("./nope.md", "./nope.md"),
        ("../outside.md", "../outside.md"),
    ],
)
def test_vault_path_of_keeps_what_names_no_file_in_the_vault(
    nested: Path, ref: str, expected: str
) -> None:
    assert context.vault_path_of(nested, ref, nested) == expected


@pytest.mark.parametrize("entry", ["../../etc/passwd", "/etc/passwd", "a/../../b.md", "..\\x.md"])
def test_a_trash_entry_that_could_lead_elsewhere_is_bad_usage(notes: Path, entry: str) -> None:
    """`restore ../../etc/passwd` said \"'.trash/../../etc/passwd' is not a path inside the
    vault; give it relative to the vault root\", though ENTRY is a path in .trash/ (exit 1);
    `trash purge` said it only when the trash held something."""
    for args in (("restore", entry), ("trash", "purge", entry, "--yes")):
        done = run("--vault", str(notes), *args)
        assert done.returncode == 2, (args, done.stderr)
        assert "is not a trash entry: give its path in .trash/ as `vaultmem trash list`" in (
            done.stderr
        )
        assert ".trash/.." not in done.stderr


def test_output_cut_short_by_its_reader_is_not_an_error(notes: Path) -> None:
    """`vaultmem search - | head -1`: click turns EPIPE into exit code 1 ('not found' in
    vaultmem's codes), which fails a `set -o pipefail` script; the reader merely stopped."""
    assert run("--vault", str(notes), "reindex", env={"VAULTMEM_EMBEDDER": "fake"}).returncode == 0
    env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_VAULT"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultmem", "--vault", str(notes), "search", "-", "--json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(b"heat pump\n" * 5000)  # answers far past a pipe's buffer
    proc.stdin.close()
    assert json.loads(proc.stdout.readline())["query"] == "heat pump"
    proc.stdout.close()
    assert proc.wait(timeout=300) == 0
    said = proc.stderr.read().decode()
    assert "Traceback" not in said and "Exception ignored" not in said, said


def test_reading_a_binary_attachment_says_it_is_one(tmp_path: Path) -> None:
    """`get diagram.png` (MCP `read_note`) said 'binary file with a .md name (NUL bytes);
    not indexed' of an indexed .png."""
    root = tmp_path / "vault"
    write_files(
        root,
        {
            ".obsidian/app.json": "{}",
            "Plan.md": "# Plan\n![[diagram.png]]\n",
            "img/diagram.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64),
        },
    )
    assert run("--vault", str(root), "reindex", env={"VAULTMEM_EMBEDDER": "fake"}).returncode == 0
    done = run("--vault", str(root), "get", "diagram.png")
    assert done.returncode == 1
    assert "img/diagram.png is a binary attachment, not a note" in done.stderr
    assert ".md name" not in done.stderr
    assert "vaultmem backlinks 'diagram.png'" in done.stderr
    assert run("--vault", str(root), "backlinks", "diagram.png").returncode == 0


def test_a_relation_no_link_carries_is_refused_naming_those_that_exist(nested: Path) -> None:
    """`graph path A B --relation bogus` (or `Links_To`) answered 'They are linked, but not
    within 5 hops along those relations: allow more hops or more relations'."""
    args = ("--vault", str(nested), "graph", "path", "Home", "Pump")
    done = run(*args, "--relation", "Links_To", "--relation", "links_to")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no link has the relation 'Links_To'" in done.stderr
    assert "(the relations links carry here: links_to, owner)" in done.stderr
    found = run(*args, "--relation", "links_to", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["found"], found.stderr


def test_graph_connect_refuses_an_unknown_relation_before_walking() -> None:
    from vaultmem import graph
    from vaultmem.errors import UsageError

    G = nx.DiGraph()
    G.add_node("a.md", kind="note", title="a", tags=())
    G.add_node("b.md", kind="note", title="b", tags=())
    G.add_edge("a.md", "b.md", relations={"links_to": 1}, count=1, embeds=0)
    assert graph.connect(G, "a.md", "b.md", relations=["links_to"]).found
    with pytest.raises(UsageError, match=r"no link has the relation 'owner' \(.*: links_to\)"):
        graph.connect(G, "a.md", "b.md", relations=["owner", "links_to"])


@pytest.mark.parametrize("columns", [40, 100])
def test_the_progress_bar_fits_the_terminal(many: Path, columns: int) -> None:
    """click's bar is 36 columns plus its label and time left (~70): on a 40-column terminal
    every redraw wrapped and left a line behind."""
    said = in_a_terminal(
        "--vault",
        str(many),
        "reindex",
        "--no-embed",
        env={"COLUMNS": str(columns), "VAULTMEM_EMBEDDER": "fake"},
    )
    drawn = [
        re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", part)
        for part in re.split(r"[\r\n]", said)
        if "indexing notes" in part
    ]
    assert drawn, said
    assert max(len(line) for line in drawn) <= columns, drawn[-1]
    assert any(len(line.rstrip()) >= columns - 2 for line in drawn)  # as wide as there is room
    if columns < 60:  # no room for the time left (a wide one shows it once it is known)
        assert not re.search(r"\d\d:\d\d:\d\d", said)


def test_mcp_started_by_a_person_says_what_it_is_and_stops_on_ctrl_c(notes: Path) -> None:
    """`vaultmem mcp` typed in a terminal waited in silence (it looked hung), and Ctrl+C
    stopped it only once a line was typed: the SDK's stdin thread held it."""
    assert run("--vault", str(notes), "reindex", env={"VAULTMEM_EMBEDDER": "fake"}).returncode == 0
    main, sub = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_VAULT"}
    proc = subprocess.Popen(
        [*CTRL_C, "-m", "vaultmem", "--vault", str(notes), "mcp"],
        stdin=sub,
        stdout=sub,
        stderr=sub,
        env={**env, "VAULTMEM_EMBEDDER": "fake"},
        start_new_session=True,
    )
    os.close(sub)
    seen = b""
    try:
        while b"Ctrl+C stops it." not in seen:
            ready, _, _ = select.select([main], [], [], 300)
            assert ready, f"nothing said for 300 s: {seen!r}"
            seen += os.read(main, 65536)
        assert b"for an MCP client to start" in seen and b"mcp --http" in seen
        # a line typed: the server reads it and answers, then waits on stdin again (the wait
        # that held a Ctrl+C back)
        os.write(main, b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        while b'"id":1' not in seen.replace(b" ", b""):
            ready, _, _ = select.select([main], [], [], 300)
            assert ready, f"no answer for 300 s: {seen!r}"
            seen += os.read(main, 65536)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130  # no line typed: at once
        with contextlib.suppress(OSError):
            while select.select([main], [], [], 1)[0]:
                seen += os.read(main, 65536)
        assert b"vaultmem mcp: stopped" in seen and b"Traceback" not in seen
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main)


def test_mcp_for_a_client_is_silent_on_stderr_but_for_its_logs(notes: Path) -> None:
    """The terminal's hint is for people only: a client's stdin is a pipe."""
    assert run("--vault", str(notes), "reindex", env={"VAULTMEM_EMBEDDER": "fake"}).returncode == 0
    done = run("--vault", str(notes), "mcp", stdin="", env={"VAULTMEM_EMBEDDER": "fake"})
    assert done.returncode == 0, done.stderr
    assert "Ctrl+C stops it" not in done.stderr and done.stdout == ""
