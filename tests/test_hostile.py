"""Hostile vaults (tests/hostile/vaults.py): nothing a note is or holds stops a reindex, and every
note that cannot be read or parsed is reported by `doctor`, one case at a time and all at once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

import pytest

from tests.conftest import ROOT
from tests.hostile.vaults import (
    CASES,
    CATEGORIES,
    GOOD_NOTES,
    Case,
    build_vault,
    index_name,
    races,
    release_fifos,
)
from vaultmem import indexer
from vaultmem.errors import NoteNotFound
from vaultmem.scan import ScanResult
from vaultmem.vault import Vault

DEADLINE = 180.0  # seconds: far beyond any honest run, so only a hang reaches it
T = TypeVar("T")


def finishes(work: Callable[[], T], root: Path, deadline: float = DEADLINE) -> T:
    """`work()`, failing the test when it has not returned by the deadline (a hang)."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the test below
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(deadline)
    if thread.is_alive():
        release_fifos(root)  # a reader stuck opening a FIFO can go; a busy loop cannot
        pytest.fail(f"still running after {deadline:.0f} s: it hangs")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def reindex_racing(
    vault: Vault, outside: Path, cases: Iterable[Case], monkeypatch: pytest.MonkeyPatch
) -> indexer.ReindexReport:
    """Reindex, running the cases' races once between the scan and the reads."""
    real_scan = indexer.scan
    todo = [c for c in cases if c.during is not None]

    def scan_then_race(*args: object, **kwargs: object) -> ScanResult:
        result = real_scan(*args, **kwargs)  # type: ignore[arg-type]
        races(vault.root, outside, todo)
        todo.clear()
        return result

    monkeypatch.setattr(indexer, "scan", scan_then_race)
    return finishes(vault.reindex, vault.root)


def note_paths(vault: Vault) -> set[str]:
    return {r[0] for r in vault.conn.execute("SELECT path FROM notes WHERE kind = 'note'")}


def problems(vault: Vault, cases: Iterable[Case]) -> list[str]:
    """Every expectation of `cases` the index does not meet, as readable lines."""
    indexed = note_paths(vault)
    report = vault.doctor()
    said: dict[str, list[str]] = {}
    for path, message in (*report.warnings, *report.skipped):
        said.setdefault(path, []).append(message)
    out: list[str] = []
    for case in cases:
        for path in case.indexed:
            if case.rel(path) not in indexed:
                out.append(f"{case.name}: {path!r} is not indexed")
        for word, path in case.found:
            hits = [h.path for h in vault.search(word, limit=100, mode="keyword").hits]
            if case.rel(path) not in hits:
                out.append(f"{case.name}: searching {word!r} does not find {path!r}")
        for path, words in case.reported:
            wanted = case.rel(path)
            messages = [
                m
                for p, ms in said.items()
                if (p.startswith(wanted[:-1]) if wanted.endswith("*") else p == wanted)
                for m in ms
            ]
            if not any(words in m for m in messages):
                out.append(f"{case.name}: {path!r} not reported with {words!r} ({messages})")
        for word in case.never_found:
            if vault.search(word, mode="keyword").hits:
                out.append(f"{case.name}: {word!r} from outside the vault is searchable")
    return out


def unaccounted(vault: Vault) -> list[str]:
    """Files in the vault neither indexed nor reported (nor inside a reported folder)."""
    conn = vault.conn
    known = {r[0] for r in conn.execute("SELECT path FROM notes")}
    reported = {r[0] for r in conn.execute("SELECT path FROM skipped")}
    out: list[str] = []
    for folder, dirs, names in os.walk(vault.root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel_folder = os.path.relpath(folder, vault.root)
        for name in [*names, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]:
            rel = name if rel_folder == "." else f"{rel_folder}/{name}"
            shown = index_name(rel)
            parts = shown.split("/")
            ancestors = {"/".join(parts[:i]) for i in range(1, len(parts))}
            if shown in known or shown in reported or ancestors & reported:
                continue
            if not any(p.startswith(shown + "/") for p in reported):  # a race moved it
                out.append(shown)
    return out


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    return tmp_path / "outside"


def only(case: Case) -> Case:
    if (why := case.needs()) is not None:
        pytest.skip(why)
    return case


@pytest.mark.parametrize(
    "case", CASES, ids=[c.name + (f"-defect{c.defect}" if c.defect else "") for c in CASES]
)
def test_each_hostile_case(
    case: Case, tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only(case)
    build_vault(tmp_path / "vault", outside, [case])
    vault = Vault(tmp_path / "vault")
    report = reindex_racing(vault, outside, [case], monkeypatch)
    assert problems(vault, [case]) == []
    assert report.notes == len(note_paths(vault))
    assert set(GOOD_NOTES) <= note_paths(vault)
    vault.close()
    again = finishes(vault.reindex, vault.root)  # and the next reindex works too
    assert again.removed == 0 or case.during is not None
    if case.during is None:
        assert problems(vault, [case]) == []
    else:  # what a race left behind is a plain state of the vault by now
        calm = Case(
            case.name, case.category, case.build, case.indexed, never_found=case.never_found
        )
        assert problems(vault, [calm]) == []
    assert unaccounted(vault) == []


@pytest.mark.parametrize("filler", [0, indexer.PARALLEL_MIN], ids=["in-process", "workers"])
def test_all_hostile_cases_at_once(
    filler: int, tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole zoo in one vault (with enough ordinary notes, read by worker processes):
    every good note indexed, every bad one reported, nothing unaccounted for."""
    built = build_vault(tmp_path / "vault", outside, CASES)
    vault = Vault(tmp_path / "vault")
    for n in range(filler):
        (vault.root / "filler" / f"note {n}.md").parent.mkdir(exist_ok=True)
        (vault.root / "filler" / f"note {n}.md").write_text(f"filler number{n}\n")
    assert {c.category for c in built} == set(CATEGORIES)
    reindex_racing(vault, outside, built, monkeypatch)
    assert problems(vault, built) == []
    assert unaccounted(vault) == []
    if filler:
        assert vault.search("number7", mode="keyword").hits[0].path == "filler/note 7.md"
    assert not os.path.exists("/tmp/vaultmem-pwned")  # the YAML python tag ran nothing


def test_the_cli_indexes_the_hostile_vault_and_doctor_reports_it(
    tmp_path: Path, outside: Path
) -> None:
    """`vaultmem reindex` exits 0 on the all-at-once vault (races aside), and `doctor --json`
    names every bad note; run as a person would, in its own process."""
    vault_root = tmp_path / "vault"
    built = build_vault(vault_root, outside, [c for c in CASES if c.during is None])
    env = {**os.environ, "VAULTMEM_EMBEDDER": "fake"}
    cli = [sys.executable, "-m", "vaultmem", "--vault", str(vault_root)]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*cli, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=DEADLINE
        )

    done = run("reindex")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    doctor = run("doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr
    report = json.loads(doctor.stdout)
    said = [*report["parse_warnings"], *report["skipped_files"]]
    named = {row["path"] for row in said}
    for case in built:
        for path, _ in case.reported:
            rel = case.rel(path)
            assert any(p.startswith(rel[:-1]) for p in named) if rel.endswith("*") else rel in named


def test_a_note_turned_into_a_fifo_after_indexing_never_hangs_a_read(
    tmp_path: Path,
) -> None:
    """Defect 11: `backlinks` and `read_note` (MCP's too) opened the FIFO and waited forever."""
    build_vault(tmp_path / "vault", tmp_path / "outside", [])
    vault = Vault(tmp_path / "vault")
    (vault.root / "source.md").write_text("see [[target]] here\n")
    (vault.root / "target.md").write_text("the target\n")
    vault.reindex()
    os.remove(vault.root / "source.md")
    os.mkfifo(vault.root / "source.md")
    backlinks = finishes(lambda: vault.backlinks("target"), vault.root)
    assert [(b.src_path, b.line, b.context) for b in backlinks] == [("source.md", 1, "")]

    def read() -> str:
        with pytest.raises(NoteNotFound, match="named pipe"):
            vault.read_note("source")
        return "refused"

    assert finishes(read, vault.root) == "refused"


def test_an_nfd_note_is_read_back_by_its_indexed_name(tmp_path: Path) -> None:
    """Defect 15, the reading side: the index says `déjà vu.md` (NFC) while the disk says NFD."""
    build_vault(tmp_path / "vault", tmp_path / "outside", [])
    vault = Vault(tmp_path / "vault")
    (vault.root / "de\u0301ja\u0300 vu.md").write_text("# Heading\nmacintosh [[control/plain]]\n")
    (vault.root / "caf\N{LATIN SMALL LETTER E WITH ACUTE}.md").write_text("links [[déjà vu]]\n")
    vault.reindex()
    note = vault.read_note("déjà vu")
    assert (note.path, note.text) == ("déjà vu.md", "# Heading\nmacintosh [[control/plain]]")
    assert [b.context for b in vault.backlinks("déjà vu")] == ["links [[déjà vu]]"]
    assert [b.src_path for b in vault.backlinks("control/plain")] == ["déjà vu.md"]


@pytest.mark.skipif(shutil.which("capsh") is None, reason="needs capsh to drop root's override")
def test_an_unreadable_note_is_reported_by_a_reindex_without_root_override(
    tmp_path: Path,
) -> None:
    """chmod 000 as a person's account meets it: root's override dropped (capsh)."""
    vault_root = tmp_path / "vault"
    build_vault(vault_root, tmp_path / "outside", [])
    (vault_root / "locked.md").write_text("private words\n")
    os.chmod(vault_root / "locked.md", 0)
    env = {**os.environ, "VAULTMEM_EMBEDDER": "fake"}
    command = f"{sys.executable} -m vaultmem --vault {vault_root} reindex"
    done = subprocess.run(
        ["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", command],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    vault = Vault(vault_root)
    assert dict(vault.doctor().skipped)["locked.md"] == "cannot read: Permission denied"
    assert note_paths(vault) == set(GOOD_NOTES)


def test_the_alias_fixes_read_through_the_safe_reader(tmp_path: Path) -> None:
    """Defect 11's rest: `gaps fix-aliases` read notes with read_bytes, so a note turned
    into a FIFO hung it, and a note named in NFD on disk was not found."""
    from vaultmem.gaps import plan_alias_fixes

    build_vault(tmp_path / "vault", tmp_path / "outside", [])
    vault = Vault(tmp_path / "vault")
    (vault.root / "Robert.md").write_text("---\naliases: [Bob]\n---\n# Robert\n")
    (vault.root / "de\u0301ja\u0300 vu.md").write_text("met [[Bob]] there\n")  # NFD on disk
    vault.reindex()
    plan = finishes(lambda: plan_alias_fixes(vault), vault.root)
    assert [(p.path, p.fixes) for p in plan.files] == [("déjà vu.md", 1)]
    assert plan.files[0].change.data == b"met [[Robert|Bob]] there\n"

    os.remove(vault.root / "de\u0301ja\u0300 vu.md")
    os.mkfifo(vault.root / "de\u0301ja\u0300 vu.md")
    refused = finishes(lambda: plan_alias_fixes(vault), vault.root)
    assert refused.files == ()
    assert [r.path for r in refused.refused] == ["déjà vu.md"]


def test_a_note_is_handed_to_an_editor_by_its_name_on_disk(tmp_path: Path) -> None:
    """The TUI's `e` opened `déjà vu.md` in NFC: a new, empty file beside the NFD note."""
    build_vault(tmp_path / "vault", tmp_path / "outside", [])
    vault = Vault(tmp_path / "vault")
    nfd = "de\u0301ja\u0300 vu.md"
    (vault.root / nfd).write_text("# Heading\n")
    vault.reindex()
    assert vault.note_file("déjà vu.md") == vault.root / nfd
    assert vault.note_file("control/plain.md") == vault.root / "control/plain.md"


def test_reading_a_note_back_keeps_the_size_limit(tmp_path: Path) -> None:
    """note_lines read a note without the vault's limit: one grown to gigabytes since the
    reindex was read whole by `read_note` (MCP) and the TUI."""
    build_vault(tmp_path / "vault", tmp_path / "outside", [])
    root = tmp_path / "vault"
    (root / ".vaultmem").mkdir(exist_ok=True)
    (root / ".vaultmem" / "config.toml").write_text("max_file_mb = 1\n")
    vault = Vault(root)
    (root / "grows.md").write_text("small\n")
    vault.reindex()
    (root / "grows.md").write_text("x" * (2 << 20))
    with pytest.raises(NoteNotFound, match="larger than 1 MB"):
        vault.read_note("grows")


def test_a_skipped_file_says_why_when_asked_for_by_name(tmp_path: Path) -> None:
    """doctor lists skipped files; `show`, MCP's read_note and the TUI said only 'no note
    named', as if the note did not exist."""
    build_vault(tmp_path / "vault", tmp_path / "outside", [])
    vault = Vault(tmp_path / "vault")
    (vault.root / "binary.md").write_bytes(b"\x00\x01" * 100)
    vault.reindex()
    for ref in ("binary.md", "binary", "BINARY.md"):
        with pytest.raises(NoteNotFound, match=r"the last reindex skipped it \(binary file"):
            vault.read_note(ref)
