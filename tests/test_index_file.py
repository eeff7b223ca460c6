"""The index file itself under attack (issue 15, defects 1, 12, 13): a full reindex replaces
only a file vaultmem made; a damaged index is reported and rebuilt, never a traceback; an index
path that is a folder or cannot be made says so."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlean

from tests.conftest import MakeVault, write_files
from vaultmem import store
from vaultmem.errors import IndexDamaged, SchemaMismatch, UsageError
from vaultmem.vault import Vault

FILES = {
    "Maya Chen.md": "---\naliases: [Maya]\n---\n# Maya Chen\nWorks on the heat pump. [[Garden]]\n",
    "Garden.md": "# Garden\nTomatoes and the heat pump tariff. [[Maya Chen]]\n",
    "Tariff.md": "# Tariff\nSee [[Maya Chen#Maya Chen]] and [[Nowhere]].\n",
}


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_VAULT"}
    env["VAULTMEM_EMBEDDER"] = "fake"
    return subprocess.run(
        [sys.executable, "-m", "vaultmem", "--vault", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,  # a deadline, not a wait
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    write_files(root, FILES)
    (root / ".obsidian").mkdir()
    return root


def _sqlite_file(path: Path, sql: str) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlean.connect(str(path))
    db.executescript(sql)
    db.commit()
    db.close()
    return path.read_bytes()


# --------------------------------------------------------------------------- defect 1


def test_a_full_reindex_never_replaces_the_config_named_by_index(root: Path) -> None:
    assert run(root, "init").returncode == 0
    config = root / ".vaultmem" / "config.toml"
    before = config.read_bytes()
    done = run(root, "--index", str(config), "reindex", "--full")
    assert done.returncode == 2, done.stderr
    assert "is not a vaultmem index" in done.stderr and "Traceback" not in done.stderr
    assert config.read_bytes() == before


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE orders(id INTEGER); INSERT INTO orders VALUES (1);",
        # another program's table that happens to be called meta, with a schema_version
        "CREATE TABLE meta(key TEXT, value TEXT); INSERT INTO meta VALUES ('schema_version','2');",
    ],
    ids=["orders", "own-meta-table"],
)
def test_another_programs_database_in_a_vaultmem_folder_is_never_replaced(
    root: Path, tmp_path: Path, sql: str
) -> None:
    other = tmp_path / "elsewhere" / ".vaultmem" / "app.db"
    before = _sqlite_file(other, sql)
    done = run(root, "--index", str(other), "reindex", "--full")
    assert done.returncode == 2, done.stderr
    assert "is not a vaultmem index" in done.stderr
    assert other.read_bytes() == before
    assert not store.is_index(other)


def test_an_index_carries_vaultmems_id_in_its_header(make_vault: MakeVault) -> None:
    vault = make_vault(FILES)
    vault.reindex(embed=False)
    header = vault.index_path.read_bytes()[:100]
    assert int.from_bytes(header[68:72], "big") == store.APPLICATION_ID
    vault.reindex(full=True, embed=False)  # emptied in place: the id stays
    assert int.from_bytes(vault.index_path.read_bytes()[68:72], "big") == store.APPLICATION_ID


def test_an_index_made_before_the_id_is_still_vaultmems(make_vault: MakeVault) -> None:
    vault = make_vault(FILES)
    vault.reindex(embed=False)
    vault.close()
    db = sqlean.connect(str(vault.index_path))
    db.execute("PRAGMA application_id = 0")
    db.commit()
    db.close()
    assert store.is_index(vault.index_path)
    assert vault.reindex(full=True, embed=False).notes == 3


def test_an_empty_index_file_is_rebuilt(make_vault: MakeVault) -> None:
    vault = make_vault(FILES)  # a crash right after the file was made leaves it empty
    vault.index_path.parent.mkdir(parents=True)
    vault.index_path.write_bytes(b"")
    assert vault.reindex(full=True, embed=False).notes == 3


def test_a_text_file_at_the_index_path_is_refused_untouched(make_vault: MakeVault) -> None:
    vault = make_vault(FILES)
    vault.index_path.parent.mkdir(parents=True)
    vault.index_path.write_text("someone's notes\n", encoding="utf-8")
    with pytest.raises(UsageError, match="move it away"):
        vault.reindex(full=True, embed=False)
    assert vault.index_path.read_text(encoding="utf-8") == "someone's notes\n"


# --------------------------------------------------------------------------- defect 12


def _damage_pages(index: Path) -> None:
    """Garbage over most of the index's pages, its header (page 1) left whole."""
    size = index.stat().st_size
    rng = random.Random(1)
    with open(index, "r+b") as handle:
        for page in range(1, size // 4096):
            handle.seek(page * 4096 + 64)
            handle.write(bytes(rng.randrange(256) for _ in range(3000)))


def test_a_damaged_index_is_reported_then_rebuilt(root: Path) -> None:
    assert run(root, "reindex").returncode == 0
    index = root / ".vaultmem" / "index.db"
    _damage_pages(index)
    for args in (
        ["stats"],
        ["show", "Maya Chen"],
        ["backlinks", "Maya Chen"],
        ["graph", "neighbors", "Maya Chen"],
        ["reindex"],
    ):
        done = run(root, *args)
        assert "Traceback" not in done.stderr, (args, done.stderr)
        assert done.returncode == 3, (args, done.returncode, done.stderr)
        assert "reindex --full" in done.stderr, (args, done.stderr)
    doctor = run(root, "doctor")
    assert "Traceback" not in doctor.stderr, doctor.stderr
    assert doctor.returncode == 1
    assert "reindex --full" in doctor.stdout
    rebuilt = run(root, "reindex", "--full")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert run(root, "doctor").returncode == 0
    found = run(root, "search", "tomatoes", "--mode", "keyword")
    assert found.returncode == 0 and "Garden.md" in found.stdout


def test_the_core_raises_a_damaged_index_as_vaultmems_error(make_vault: MakeVault) -> None:
    vault = make_vault(FILES)
    vault.reindex(embed=False)
    vault.close()
    _damage_pages(vault.index_path)
    vault = Vault(vault.root)
    # opening it may already fail (the page of `meta` is damaged), or a later read
    with pytest.raises((IndexDamaged, SchemaMismatch), match="reindex --full"):
        vault.stats()
    report = vault.doctor()
    assert not report.healthy
    assert any("reindex --full" in p for p in report.index_problems)


# --------------------------------------------------------------------------- defect 13


def test_an_index_path_that_is_a_folder(root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "a folder"
    folder.mkdir()
    for args, code in ((["reindex"], 2), (["reindex", "--full"], 2), (["stats"], 3)):
        done = run(root, "--index", str(folder), *args)
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == code, (args, done.stderr)
        assert "is a folder" in done.stderr
    assert list(folder.iterdir()) == []


def test_an_index_path_that_cannot_be_made(root: Path, tmp_path: Path) -> None:
    a_file = tmp_path / "a file"
    a_file.write_text("x", encoding="utf-8")
    done = run(root, "--index", str(a_file / "index.db"), "reindex")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2
    assert "cannot create the index" in done.stderr
    assert a_file.read_text(encoding="utf-8") == "x"


# --------------------------------------------------------------------------- defect 16


def test_searches_during_a_full_reindex_see_the_whole_old_index(make_vault: MakeVault) -> None:
    """A full reindex emptied the index, then filled it 400 notes at a time: a search
    meanwhile found nothing, or some notes, for a second or more, without a word."""
    files = {
        f"n{i:03}.md": f"# Note {i}\nlantern {i} [[n{(i + 1) % 450:03}]]\n" for i in range(450)
    }
    vault = make_vault(files)
    vault.reindex(embed=False)
    reader = Vault(vault.root)  # another connection, as another thread or process has
    before = sorted(h.path for h in reader.search("lantern", limit=500, mode="keyword").hits)
    assert len(before) == 450
    seen: list[tuple[str, int, int]] = []

    def meanwhile(phase: str, done: int, total: int) -> None:
        hits = reader.search("lantern", limit=500, mode="keyword").hits
        backlinks = len(reader.backlinks("n001.md"))
        seen.append((phase, len(hits), backlinks))

    report = vault.reindex(full=True, progress=meanwhile, embed=False)
    assert report.notes == 450
    assert sum(phase == "parse" for phase, _, _ in seen) >= 9  # every 50 notes parsed
    assert all((hits, backlinks) == (450, 1) for _, hits, backlinks in seen), seen
    after = sorted(h.path for h in reader.search("lantern", limit=500, mode="keyword").hits)
    assert after == before


def test_a_full_reindex_that_fails_leaves_the_old_index(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(FILES)
    vault.reindex(embed=False)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the machine went away")

    monkeypatch.setattr("vaultmem.indexer._final_pass", broken)
    with pytest.raises(RuntimeError):
        vault.reindex(full=True, embed=False)
    monkeypatch.undo()
    reader = Vault(vault.root)
    assert reader.stats().notes == 3
    assert [h.path for h in reader.search("tomatoes", mode="keyword").hits] == ["Garden.md"]


# --------------------------------------------------------------------------- one note's rows


def test_a_note_whose_rows_cannot_be_stored_is_skipped_and_the_batch_goes_on(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each note is stored in a savepoint of its own: one failing (here made to, as a
    number SQLite cannot hold did) never takes the notes of its batch down with it."""
    vault = make_vault(FILES)
    vault.reindex(embed=False)
    real = store.insert_note

    def insert(conn: store.Connection, note: object, *args: object) -> None:
        if getattr(note, "path", "") == "Garden.md":
            conn.execute("INSERT INTO tags(note_id, tag, direct) VALUES (-1, 'half', 1)")
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        real(conn, note, *args)  # type: ignore[arg-type]

    monkeypatch.setattr("vaultmem.indexer.store.insert_note", insert)
    for name, text in FILES.items():  # every note changed: all in one batch
        (vault.root / name).write_text(text + "more\n", encoding="utf-8")
    report = vault.reindex(embed=False)
    assert (report.notes, report.skipped) == (2, 1)
    monkeypatch.undo()
    assert sorted(h.path for h in vault.search("more", mode="keyword", limit=5).hits) == [
        "Maya Chen.md",
        "Tariff.md",
    ]
    skipped = dict(vault.doctor().skipped)
    assert "OverflowError" in skipped["Garden.md"]
    # the half-stored rows went with the savepoint; the link to it is wanted now
    assert vault.conn.execute("SELECT count(*) FROM tags WHERE note_id = -1").fetchone() == (0,)
    assert [b.src_path for b in vault.backlinks("Maya Chen")] == ["Tariff.md"]
    assert vault.reindex(embed=False).skipped == 0  # stored once it can be
    assert vault.stats().notes == 3


# --------------------------------------------------------------------------- reads meanwhile


class _Racing:
    """A connection on which a reindex commits right after the first read of notes."""

    def __init__(self, conn: store.Connection, race: Callable[[], None]) -> None:
        self.conn = conn
        self.race = race

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def execute(self, sql: str, *args: object) -> object:
        cursor = self.conn.execute(sql, *args)
        if "FROM notes ORDER BY path" in sql:
            rows = cursor.fetchall()
            self.race()
            return _Rows(rows)
        return cursor


class _Rows:
    def __init__(self, rows: list[object]) -> None:
        self.rows = rows

    def fetchall(self) -> list[object]:
        return self.rows


def test_the_link_graph_is_read_from_one_state_of_the_index(make_vault: MakeVault) -> None:
    """Found by the soak: `neighbors` failed ("link 'churn/renamed 226.md' -> ...: no node")
    when a reindex committed a new note between the graph's reads of notes and of links."""
    vault = make_vault(FILES)
    vault.reindex(embed=False)
    writer = Vault(vault.root)

    def reindex_meanwhile() -> None:
        (vault.root / "New.md").write_text("# New\n[[Garden]]\n", encoding="utf-8")
        writer.reindex(embed=False)

    rows = store.graph_rows(_Racing(vault.conn, reindex_meanwhile))  # type: ignore[arg-type]
    sources = {link[0] for link in rows.links}
    assert sources <= {node[0] for node in rows.files}
    assert "New.md" not in sources  # the state as the first read saw it
    assert "New.md" in {n[0] for n in store.graph_rows(vault.conn).files}
