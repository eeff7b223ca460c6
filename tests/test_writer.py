"""The one write path: `vault.apply` writes under the index lock and leaves the index exactly
as a fresh rebuild of the vault would be, reindexing only what it touched."""

from __future__ import annotations

import fcntl
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import MakeVault, write_files
from vaultmem import edit, indexer, store
from vaultmem.errors import (
    ChangedOnDisk,
    EditDoesNotApply,
    IndexBusy,
    IndexDamaged,
    NoteExists,
)
from vaultmem.indexer import ReindexReport
from vaultmem.store.schema import NOTE_TABLES
from vaultmem.vault import Vault


def index_dump(conn: store.Connection) -> dict[str, list[tuple[object, ...]]]:
    """Everything the index derives from the vault, by path, independent of row ids and of
    bookkeeping (meta, the dirty-key queue)."""
    out: dict[str, list[tuple[object, ...]]] = {}
    out["notes"] = conn.execute(
        "SELECT path, kind, key, title, folded_title, size, mtime_ns, hash, date, frontmatter,"
        " aliases, warnings, line_count FROM notes ORDER BY path"
    ).fetchall()
    for table in NOTE_TABLES:
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[1] != "note_id"]
        rows = conn.execute(
            f"SELECT n.path, {', '.join('t.' + c for c in cols)} FROM {table} t"
            " JOIN notes n ON n.id = t.note_id"
        ).fetchall()
        out[table] = sorted(rows, key=repr)
    out["chunks"] = sorted(
        conn.execute(
            "SELECT n.path, c.seq, c.start_line, c.end_line, c.heading, c.text_hash, f.title,"
            " f.aliases, f.headings, f.tags, f.path, f.body FROM chunks c"
            " JOIN notes n ON n.id = c.note_id JOIN chunks_fts f ON f.rowid = c.id"
        ).fetchall(),
        key=repr,
    )
    out["fts_rows"] = [conn.execute("SELECT count(*) FROM chunks_fts").fetchone()]
    out["links"] = sorted(
        conn.execute(
            "SELECT n.path, l.line, l.kind, l.target, l.target_key, l.heading, l.block,"
            " l.display, l.embed, l.relation, l.dst_path, l.candidates, l.anchor_ok, l.alias_fix"
            " FROM links l JOIN notes n ON n.id = l.src_id"
        ).fetchall(),
        key=repr,
    )
    out["skipped"] = conn.execute("SELECT path, reason FROM skipped ORDER BY path").fetchall()
    return out


def fresh_dump(vault: Vault, where: Path) -> dict[str, list[tuple[object, ...]]]:
    if where.exists():
        where.unlink()
    other = Vault(vault.root, where)
    other.reindex(embed=False)
    try:
        return index_dump(other.conn)
    finally:
        other.close()


def test_apply_writes_and_reindexes_the_note(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "# A\nold fact\n", "b.md": "see [[a#A]]\n"})
    vault.reindex(embed=False)
    source = vault.read_for_edit("a.md")
    lines = edit.replace_line(source.lines, 2, "new zeppelin fact")
    applied = vault.apply(edit.plan_edit(source, lines))
    assert applied.touched == ("a.md",)
    assert applied.report is not None and applied.report.changed == 1
    assert (vault.root / "a.md").read_bytes() == b"# A\nnew zeppelin fact\n"
    assert [h.path for h in vault.search("zeppelin", mode="keyword").hits] == ["a.md"]
    assert not vault.search("old", mode="keyword").hits


def test_apply_of_an_unchanged_note_writes_and_reindexes_nothing(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "x\n"})
    vault.reindex(embed=False)
    source = vault.read_for_edit("a.md")
    applied = vault.apply(edit.plan_edit(source, source.lines))
    assert applied == type(applied)((), None)


def test_a_note_changed_since_read_is_refused_and_the_index_is_untouched(
    make_vault: MakeVault,
) -> None:
    vault = make_vault({"a.md": "one\n"})
    vault.reindex(embed=False)
    source = vault.read_for_edit("a.md")
    (vault.root / "a.md").write_text("someone else's edit\n")
    before = index_dump(vault.conn)
    with pytest.raises(ChangedOnDisk) as caught:
        vault.apply(edit.plan_edit(source, edit.replace_line(source.lines, 1, "mine")))
    assert caught.value.exit_code == 6
    assert (vault.root / "a.md").read_text() == "someone else's edit\n"
    assert index_dump(vault.conn) == before


def test_apply_waits_for_the_index_lock_then_says_it_is_busy(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "one\n"})
    vault.reindex(embed=False)
    source = vault.read_for_edit("a.md")
    change = edit.plan_edit(source, edit.replace_line(source.lines, 1, "two"))
    lock_path = vault.index_path.with_name(vault.index_path.name + ".lock")
    with open(lock_path, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another process's reindex or write
        with pytest.raises(IndexBusy) as caught:
            vault.apply(change, wait=0.2)
    assert caught.value.exit_code == 4
    assert (vault.root / "a.md").read_text() == "one\n"  # nothing written while refused
    assert vault.apply(change).touched == ("a.md",)


def test_a_new_note_resolves_the_links_that_wanted_it(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault({"a.md": "see [[Later]] and [[later#Plan]] and [[Nick]]\n"})
    vault.reindex(embed=False)
    applied = vault.apply(
        edit.plan_new_note("sub/Later.md", "---\naliases: [Nick]\n---\n## Plan\n")
    )
    assert applied.touched == ("sub/Later.md",)
    links = {o.target: (o.dst_path, o.anchor_ok) for o in vault.show("a.md").links}
    assert links == {
        "Later": ("sub/Later.md", None),
        "later": ("sub/Later.md", True),
        "Nick": (None, None),
    }
    assert [p.written for p in vault.alias_fixable()] == ["[[Nick]]"]
    assert index_dump(vault.conn) == fresh_dump(vault, tmp_path / "fresh.db")
    with pytest.raises(NoteExists):
        vault.apply(edit.plan_new_note("sub/Later.md", "again"))


def test_trash_and_restore_keep_the_index_current(make_vault: MakeVault, tmp_path: Path) -> None:
    vault = make_vault({"a.md": "[[b]]\n", "b.md": "---\naliases: [Bee]\n---\n# B\n"})
    vault.reindex(embed=False)
    trashed = vault.trash("b.md")
    assert trashed.entry.path == ".trash/b.md"
    assert not (vault.root / "b.md").exists()
    assert index_dump(vault.conn) == fresh_dump(vault, tmp_path / "fresh.db")
    restored = vault.restore(".trash/b.md")
    assert restored.path == "b.md"
    assert index_dump(vault.conn) == fresh_dump(vault, tmp_path / "fresh.db")
    assert vault.list_trash() == ()


def test_without_an_index_apply_writes_and_leaves_the_index_to_reindex(
    make_vault: MakeVault,
) -> None:
    vault = make_vault({"a.md": "x\n"})
    applied = vault.apply(edit.plan_new_note("b.md", "y\n"))
    assert applied.touched == ("b.md",) and applied.report is None
    assert not vault.index_path.exists()


def test_a_path_limited_reindex_leaves_the_rest_of_the_vault_alone(
    make_vault: MakeVault,
) -> None:
    """Only the touched paths are looked at: another note edited behind the index's back stays
    stale until a reindex (proof that apply does not walk the vault)."""
    vault = make_vault({"a.md": "alpha\n", "b.md": "beta\n"})
    vault.reindex(embed=False)
    (vault.root / "b.md").write_text("gamma\n")
    source = vault.read_for_edit("a.md")
    vault.apply(edit.plan_edit(source, edit.replace_line(source.lines, 1, "delta")))
    assert vault.search("delta", mode="keyword").hits
    assert not vault.search("gamma", mode="keyword").hits
    assert vault.reindex(embed=False).changed == 1


def test_paths_that_cannot_be_judged_alone_fall_back_to_the_whole_reindex(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = make_vault({"real/a.md": "alpha\n"})
    (vault.root / "linked").symlink_to("real")  # skipped by the walk: indexed already
    vault.reindex(embed=False)
    conn = vault.conn
    assert indexer.reindex_paths(conn, vault.root, vault.config, ["linked/a.md"]) is None
    report = indexer.reindex_touched(conn, vault.root, vault.config, ["linked/a.md"])
    assert report.full is False
    assert index_dump(conn) == fresh_dump(vault, tmp_path / "fresh.db")


# --------------------------------------------------------------------------- any sequence

NAMES = ["A.md", "B.md", "sub/A.md", "sub/C.md", "D.md", "img.png"]
LINES = [
    "[[A]]",
    "[[B#Plan]]",
    "[[C^blk]]",
    "[[Nick]]",
    "[[sub/A]]",
    "![[img.png]]",
    "# Plan",
    "## Other",
    "text ^blk",
    "#tag/x words",
    "- [ ] a task",
    "key:: value",
    "plain words",
]
FRONT = st.one_of(
    st.just(""),
    st.sampled_from(["Nick", "B", "Other"]).map(lambda a: f"---\naliases: [{a}]\n---\n"),
)
BODY = st.lists(st.sampled_from(LINES), max_size=5).map(lambda ls: "".join(x + "\n" for x in ls))
STEP = st.tuples(
    st.sampled_from(["create", "edit", "trash", "restore", "alias", "outside"]),
    st.sampled_from(NAMES),
    FRONT,
    BODY,
)


def run_step(vault: Vault, step: tuple[str, str, str, str]) -> ReindexReport | None:
    """Make the step's change; the reindex report of the write, if one was made."""
    op, name, front, body = step
    exists = (vault.root / name).exists()
    if op == "create" and not exists and name.endswith(".md"):
        return vault.apply(edit.plan_new_note(name, front + body)).report
    if op == "edit" and exists and name.endswith(".md"):
        source = vault.read_for_edit(name)
        lines = edit.split_lines(front + body)
        return vault.apply(edit.plan_edit(source, lines)).report
    if op == "alias" and exists and name.endswith(".md"):
        source = vault.read_for_edit(name)
        alias = front.split("[")[1].split("]")[0] if front else None
        try:
            lines = (
                edit.set_property(source.lines, "aliases", [alias])
                if alias
                else edit.remove_property(source.lines, "aliases")
            )
        except EditDoesNotApply:  # no aliases to remove
            return None
        return vault.apply(edit.plan_edit(source, lines)).report
    if op == "trash" and exists:
        return vault.trash(name).report
    if op == "restore":
        entries = [e for e in vault.list_trash() if not (vault.root / e.original).exists()]
        if entries:
            return vault.restore(entries[0].path).report
    if op == "outside" and not exists:
        # an attachment added by another program, then a note created that embeds it
        (vault.root / name).parent.mkdir(parents=True, exist_ok=True)
        (vault.root / name).write_bytes(b"\x89PNG" if name.endswith(".png") else b"x\n")
        vault.reindex(embed=False)
    return None


@settings(
    max_examples=40,
    deadline=timedelta(seconds=60),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(STEP, min_size=1, max_size=8))
def test_after_any_apply_the_index_equals_a_fresh_rebuild(
    tmp_path: Path, steps: list[tuple[str, str, str, str]]
) -> None:
    root = tmp_path / "v"
    shutil.rmtree(root, ignore_errors=True)
    write_files(root, {".obsidian/app.json": "{}", "A.md": "[[B]] [[Nick]]\n", "B.md": "# Plan\n"})
    vault = Vault(root, tmp_path / "index.db")
    if vault.index_path.exists():
        vault.index_path.unlink()
    vault.reindex(embed=False)
    try:
        for step in steps:
            report = run_step(vault, step)
            assert index_dump(vault.conn) == fresh_dump(vault, tmp_path / "fresh.db"), step
            if report is not None:  # totals worked out from what changed, not counted again
                totals = store.file_totals(vault.conn)
                assert (report.notes, report.attachments, report.links, report.wanted) == (
                    totals.notes,
                    totals.attachments,
                    totals.links,
                    totals.wanted_links,
                ), step
    finally:
        vault.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{tmp_path / 'index.db'}{suffix}").unlink(missing_ok=True)


def test_a_note_naming_its_own_new_alias_gets_the_alias_fix_as_on_a_rebuild(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    """Found by the property above: the incremental reindex looked up alias owners before the
    note's own new aliases were stored, and kept that stale answer for its final pass."""
    vault = make_vault({"A.md": "[[Nick]]\n"})
    vault.reindex(embed=False)
    write_files(vault.root, {"A.md": "---\naliases: [Nick]\n---\n[[Nick]]\n"})
    vault.reindex(embed=False)  # the plain incremental reindex, not apply
    assert [p.written for p in vault.alias_fixable()] == ["[[Nick]]"]
    assert index_dump(vault.conn) == fresh_dump(vault, tmp_path / "fresh.db")


def test_the_digest_read_note_gives_is_a_writes_precondition(make_vault: MakeVault) -> None:
    """What an agent does: read a note (MCP read_note gives the digest), then write against it;
    a note changed in between is refused (exit 6) and nothing is written."""
    vault = make_vault({"a.md": "# A\nfact: 1\n"})
    vault.reindex(embed=False)
    digest = vault.read_note("a.md").digest
    source = edit.read_note(vault.root, "a.md", expected_digest=digest)
    vault.apply(edit.plan_edit(source, edit.replace_line(source.lines, 2, "fact: 2")))
    stale = digest
    with pytest.raises(ChangedOnDisk):
        edit.read_note(vault.root, "a.md", expected_digest=stale)
    with pytest.raises(ChangedOnDisk):
        vault.trash("a.md", expected_digest=stale)
    assert (vault.root / "a.md").read_text() == "# A\nfact: 2\n"
    assert vault.trash("a.md", expected_digest=vault.read_note("a.md").digest).entry.known


# A child (without root's override of file permissions) that stores a fact and a loop.
WRITE_AS_USER = """
import sys
from pathlib import Path
from vaultmem.errors import CannotEdit
from vaultmem.vault import Vault
vault = Vault(Path(sys.argv[1]))
for write in (
    lambda: vault.memory.set_fact("Maya", "city", "Rome"),
    lambda: vault.memory.add_loop("call Maya back", "Maya"),
    lambda: vault.trash("Maya.md"),
):
    try:
        write()
        print("written")
    except CannotEdit as exc:
        print(exc)
"""


def test_a_read_only_index_refuses_the_write_before_the_note_is_touched(
    make_vault: MakeVault,
) -> None:
    # the note was written, then the reindex failed ("the index cannot be read", exit 3):
    # a caller told the write failed writes it again (a second loop, a fact's value in its
    # own history)
    from tests.edit.conftest import child, without_override

    prefix = without_override()
    vault = make_vault({"Maya.md": "# Maya\n"})
    vault.reindex(embed=False)
    index = vault.index.path
    vault.close()
    before = (vault.root / "Maya.md").read_bytes()
    index.chmod(0o444)
    try:
        out, err = child(WRITE_AS_USER, str(vault.root), prefix=prefix).communicate(timeout=300)
    finally:
        index.chmod(0o644)
    said = out.splitlines()
    assert len(said) == 3, (out, err)
    for line, nothing in zip(said, ("written", "written", "moved"), strict=True):
        assert line.startswith(f"the index at {index} cannot be written ("), line
        assert f"; nothing was {nothing}. Every change is indexed at once" in line
    assert (vault.root / "Maya.md").read_bytes() == before
    assert not (vault.root / ".trash").exists()


def test_a_reindex_failing_after_the_write_says_the_write_stands(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault({"Maya.md": "# Maya\n"})
    vault.reindex(embed=False)

    def full(*args: object, **kwargs: object) -> ReindexReport:
        raise store.OperationalError("database or disk is full")

    monkeypatch.setattr(indexer, "reindex_touched", full)
    with pytest.raises(IndexDamaged) as info:
        vault.memory.add_loop("call Maya back", "Maya")
    assert str(info.value).startswith(
        "Maya.md: written, but the index could not be brought up to date: the index at"
    )
    assert "- [ ] call Maya back" in (vault.root / "Maya.md").read_text()
    with pytest.raises(IndexDamaged, match=r"^Maya.md: moved to .trash/Maya.md, but the index"):
        vault.trash("Maya.md")
    with pytest.raises(IndexDamaged, match=r"^Maya.md: restored from .trash/Maya.md, but the"):
        vault.restore(".trash/Maya.md")


def test_a_note_named_in_nfd_on_disk_is_trashed_and_restored_by_its_indexed_name(
    make_vault: MakeVault,
) -> None:
    # the index keeps paths in NFC; a note written by macOS is named in NFD on disk: its
    # trash was refused as "changed on disk (its folder was deleted or renamed)"
    import unicodedata

    nfd = unicodedata.normalize("NFD", "Équipe/Café.md")
    vault = make_vault({nfd: "# Café\n"})
    vault.reindex(embed=False)
    (indexed,) = [n.path for n in vault.note_names()]
    assert indexed == unicodedata.normalize("NFC", nfd) != nfd
    entry = vault.trash(indexed).entry
    assert entry.path == f".trash/{nfd}" and entry.original == nfd
    assert not [n.path for n in vault.note_names()]
    nfc_entry = unicodedata.normalize("NFC", entry.path)  # as a person types it
    assert vault.restore(nfc_entry).path == nfd
    assert (vault.root / nfd).read_text() == "# Café\n"  # under its own spelling, back
    assert [n.path for n in vault.note_names()] == [indexed]
    assert not (vault.root / ".trash").exists() or not any((vault.root / ".trash").rglob("*.md"))
