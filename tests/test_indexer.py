"""Reindex: change detection, incremental link re-resolution, interruption and locking."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.conftest import MakeVault, write_files
from vaultmem import indexer
from vaultmem.errors import IndexBusy, NoIndex, SchemaMismatch
from vaultmem.vault import Vault


def links_table(vault: Vault) -> list[tuple[object, ...]]:
    """Every link with its resolution, independent of row ids."""
    return sorted(
        vault.conn.execute(
            "SELECT n.path, l.line, l.target, l.heading, l.block, l.relation, l.dst_path,"
            " l.candidates, l.anchor_ok, l.alias_fix FROM links l JOIN notes n ON n.id = l.src_id"
        ).fetchall(),
        key=repr,
    )


def dst_of(vault: Vault, src: str, target: str) -> str | None:
    row = vault.conn.execute(
        "SELECT l.dst_path FROM links l JOIN notes n ON n.id = l.src_id"
        " WHERE n.path = ? AND l.target = ?",
        (src, target),
    ).fetchone()
    assert row is not None, f"no link from {src} to {target}"
    return row[0]


def touch(path: Path, text: str) -> None:
    """Rewrite a file and make sure its mtime moves even on coarse clocks."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    if path.stat().st_mtime_ns == before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def fresh_copy_links(vault: Vault, tmp_path: Path) -> list[tuple[object, ...]]:
    other = Vault(vault.root, tmp_path / "fresh.db")
    other.reindex()
    try:
        return links_table(other)
    finally:
        other.close()


def test_cold_then_noop(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "[[b]] [[c]]", "b.md": "# B\n", "img.png": b"\x89PNG"})
    first = vault.reindex()
    assert (first.notes, first.attachments, first.changed, first.links, first.wanted) == (
        2,
        1,
        3,
        2,
        1,
    )
    second = vault.reindex()
    assert (second.changed, second.removed, second.links, second.wanted) == (0, 0, 2, 1)


def test_new_note_resolves_wanted_link(make_vault: MakeVault, tmp_path: Path) -> None:
    vault = make_vault({"a.md": "see [[Later Note]] and [[later note#Plan]]"})
    vault.reindex()
    assert dst_of(vault, "a.md", "Later Note") is None
    write_files(vault.root, {"sub/Later Note.md": "## Plan\n"})
    report = vault.reindex()
    assert report.changed == 1
    assert dst_of(vault, "a.md", "Later Note") == "sub/Later Note.md"
    assert dst_of(vault, "a.md", "later note") == "sub/Later Note.md"
    assert links_table(vault) == fresh_copy_links(vault, tmp_path)


def test_rename_repoints_or_unresolves_backlinks(make_vault: MakeVault, tmp_path: Path) -> None:
    vault = make_vault(
        {
            "a.md": "[[Target]] [[x/Target]]",
            "x/Target.md": "body",
            "y/Target.md": "other",
        }
    )
    vault.reindex()
    assert dst_of(vault, "a.md", "Target") == "x/Target.md"  # shortest, then alphabetical
    os.rename(vault.root / "x/Target.md", vault.root / "x/Renamed.md")
    vault.reindex()
    assert dst_of(vault, "a.md", "Target") == "y/Target.md"
    assert dst_of(vault, "a.md", "x/Target") is None
    assert links_table(vault) == fresh_copy_links(vault, tmp_path)
    os.remove(vault.root / "y/Target.md")
    report = vault.reindex()
    assert report.removed == 1
    assert dst_of(vault, "a.md", "Target") is None
    assert links_table(vault) == fresh_copy_links(vault, tmp_path)


def test_heading_anchor_rechecked_when_target_changes(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault({"a.md": "[[b#My Plan]] [[b#^blk]] [[#Local]]\n\n# Local\n", "b.md": "x\n"})
    vault.reindex()
    rows = {r[2:5]: r[8] for r in links_table(vault)}
    assert rows[("b", "My Plan", None)] == 0
    assert rows[("b", None, "blk")] == 0
    assert rows[("", "Local", None)] == 1
    touch(vault.root / "b.md", "## my plan!\n\nparagraph ^blk\n")
    vault.reindex()
    rows = {r[2:5]: r[8] for r in links_table(vault)}
    assert rows[("b", "My Plan", None)] == 1
    assert rows[("b", None, "blk")] == 1
    assert links_table(vault) == fresh_copy_links(vault, tmp_path)


def test_alias_fixable_follows_alias_edits(make_vault: MakeVault, tmp_path: Path) -> None:
    vault = make_vault({"a.md": "[[Bob]]", "Robert Smith.md": "---\naliases: [Bob]\n---\n"})
    vault.reindex()
    row = vault.conn.execute("SELECT dst_path, alias_fix FROM links").fetchone()
    assert row == (None, "Robert Smith.md")  # Obsidian does not resolve aliases
    touch(vault.root / "Robert Smith.md", "---\naliases: [Rob]\n---\n")
    vault.reindex()
    assert vault.conn.execute("SELECT alias_fix FROM links").fetchone() == (None,)
    assert links_table(vault) == fresh_copy_links(vault, tmp_path)


def test_same_content_new_mtime_is_not_reparsed(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "hello"})
    vault.reindex()
    note_id = vault.conn.execute("SELECT id FROM notes").fetchone()[0]
    os.utime(vault.root / "a.md", ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    vault.close()
    assert vault.reindex().changed == 0
    assert vault.conn.execute("SELECT id FROM notes").fetchone()[0] == note_id


def test_interrupted_reindex_leaves_usable_index_and_next_run_completes(
    make_vault: MakeVault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files: dict[str, str | bytes] = {
        f"n{i:03}.md": f"# Note {i}\n[[n{(i + 1) % 60:03}]] [[Alias {i}]] [[n{i:03}#Note {i}]]\n"
        for i in range(60)
    }
    files["owner.md"] = "---\naliases: [Alias 3]\n---\n"
    vault = make_vault(files)
    monkeypatch.setattr(indexer, "BATCH_FILES", 10)

    def interrupt(phase: str, done: int, total: int) -> None:
        if phase == "parse" and done >= 50:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        vault.reindex(progress=interrupt)
    # usable: opens, searches, and says what to do
    assert 0 < vault.stats().notes < 61
    assert vault.search("note").hits
    assert any("interrupted" in p for p in vault.doctor().index_problems)
    vault.close()
    vault.reindex()
    assert vault.stats().notes == 61
    assert vault.doctor().index_problems == ()
    assert links_table(vault) == fresh_copy_links(vault, tmp_path)


def test_second_reindex_fails_clearly_while_one_runs(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "x"})
    with (
        indexer._lock(vault.index_path, wait=0, on_wait=None),
        pytest.raises(IndexBusy, match="another reindex is running"),
    ):
        vault.reindex(wait=0.2)
    assert vault.reindex().notes == 1


def test_no_index_and_schema_mismatch(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "x"})
    with pytest.raises(NoIndex, match="vaultmem reindex"):
        vault.search("x")
    vault.reindex()
    vault.conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    vault.close()
    with pytest.raises(SchemaMismatch, match="reindex --full"):
        vault.search("x")
    with pytest.raises(SchemaMismatch, match="reindex --full"):
        vault.reindex()
    assert vault.reindex(full=True).notes == 1
    assert vault.search("x").hits[0].path == "a.md"


def test_deleting_index_loses_nothing(make_vault: MakeVault, tmp_path: Path) -> None:
    vault = make_vault({"a.md": "[[b]] #t", "b.md": "- [ ] task\n"})
    vault.reindex()
    before = (links_table(vault), vault.stats().open_tasks)
    vault.close()
    for suffix in ("", "-wal", "-shm"):
        path = Path(str(vault.index_path) + suffix)
        if path.exists():
            path.unlink()
    vault.reindex()
    assert (links_table(vault), vault.stats().open_tasks) == before


def test_excluded_and_dot_folders(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "a.md": "x",
            ".trash/old.md": "x",
            ".obsidian/x.md": "x",
            "templates/t.md": "x",
            "drafts/keep.md": "x",
            "drafts/skip.excalidraw.md": "x",
            ".vaultmem/config.toml": 'exclude = ["templates/", "*.excalidraw.md"]\n',
        }
    )
    vault = Vault(vault.root)  # re-read the config
    vault.reindex()
    paths = {r[0] for r in vault.conn.execute("SELECT path FROM notes")}
    assert paths == {"a.md", "drafts/keep.md"}


def test_parallel_parse_gives_the_same_index(
    make_vault: MakeVault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files: dict[str, str | bytes] = {
        f"d{i % 7}/n{i}.md": (
            f"---\naliases: [A{i}]\n---\n# H{i}\n[[n{i + 1}#H{i + 1}]] [[A{i}]] #t{i}"
        )
        for i in range(40)
    }
    files["bin.md"] = b"\x00binary"
    vault = make_vault(files)
    sequential = Vault(vault.root, tmp_path / "seq.db")
    sequential.reindex()
    monkeypatch.setattr(indexer, "PARALLEL_MIN", 1)
    monkeypatch.setattr(indexer, "MAX_WORKERS", 2)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    report = vault.reindex()
    assert (report.notes, report.skipped) == (40, 1)
    assert links_table(vault) == links_table(sequential)
    assert vault.doctor().skipped == sequential.doctor().skipped


def test_docs_site_url_prefixes_resolve_to_folder_notes(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault(
        {
            "en-us/web/api/fetch/index.md": (
                "[req](/en-US/docs/Web/API/Request) [x](/en-US/docs/Nope)"
            ),
            "en-us/web/api/request/index.md": "# Request\n",
            "other.md": "[abs](/en-US/docs/Web/API/Fetch#Syntax)",
        }
    )
    vault.reindex()
    assert dst_of(vault, "other.md", "/en-US/docs/Web/API/Fetch") is None  # off by default
    write_files(
        vault.root,
        {".vaultmem/config.toml": '[links]\nurl_prefixes = {"/en-US/docs/" = "en-us/"}\n'},
    )
    vault = Vault(vault.root)
    vault.reindex()  # the rules changed: every link is resolved again
    assert dst_of(vault, "other.md", "/en-US/docs/Web/API/Fetch") == "en-us/web/api/fetch/index.md"
    src = "en-us/web/api/fetch/index.md"
    assert dst_of(vault, src, "/en-US/docs/Web/API/Request") == "en-us/web/api/request/index.md"
    assert dst_of(vault, src, "/en-US/docs/Nope") is None
    write_files(vault.root, {"en-us/nope/index.md": "now it exists"})
    vault.reindex()  # a new folder note resolves links to its folder
    assert dst_of(vault, src, "/en-US/docs/Nope") == "en-us/nope/index.md"
    os.remove(vault.root / "en-us/web/api/request/index.md")
    vault.reindex()
    assert dst_of(vault, src, "/en-US/docs/Web/API/Request") is None
    assert links_table(vault) == fresh_copy_links(vault, tmp_path)


def test_embedding_cache_is_pruned_once_stale_vectors_pile_up(make_vault: MakeVault) -> None:
    from vaultmem import store

    vault = make_vault({f"n{i}.md": f"# N{i}\nnote number {i}\n" for i in range(10)})
    vault.reindex()
    model = store.get_meta(vault.conn, "embed_model") or ""

    def cached() -> int:
        return int(store.scalar(vault.conn, "SELECT count(*) FROM embeddings"))

    for round_ in range(1, 4):  # each edit leaves one stale vector behind
        (vault.root / "n0.md").write_text(f"# N0\nrewritten {round_}\n", encoding="utf-8")
        vault.reindex()
    assert cached() == 13  # under the default slack: a one-note edit skips the full anti-join
    conn = vault.conn
    # 13 vectors cached since the index was made, 10 chunks: under 1.5x, over 0.2x
    assert not store.prune_embedding_cache(conn, model, slack=1.5, floor=0)
    assert store.prune_embedding_cache(conn, model, slack=0.2, floor=0)
    assert cached() == 10
    assert not store.prune_embedding_cache(conn, model, slack=0.0, floor=0)  # counter reset
    live = {r[0] for r in conn.execute("SELECT text_hash FROM chunks")}
    assert {r[0] for r in conn.execute("SELECT text_hash FROM embeddings")} == live
