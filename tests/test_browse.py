"""Reading notes from disk safely, and the counts the TUI's browse screen shows."""

from __future__ import annotations

import os

import pytest

from tests.conftest import MakeVault
from vaultmem.errors import NoteNotFound, UsageError
from vaultmem.vault import FolderCount, TagCount, Vault

NOTE = "---\ntags: [x]\n---\n# Plan\nintro\n\n## Pros, cons\nfast\ncheap\n\n## Next\nship it\n"


def test_read_whole_note_and_one_section(make_vault: MakeVault) -> None:
    vault = make_vault({"work/Plan.md": NOTE})
    vault.reindex()
    whole = vault.read_note("plan")
    assert whole.path == "work/Plan.md" and whole.title == "Plan"
    assert whole.text == NOTE.rstrip("\n")
    assert whole.headings == ("Plan", "Pros, cons", "Next")
    part = vault.read_note("Plan", heading="pros / cons")  # Obsidian heading matching
    assert (part.heading, part.start_line, part.end_line) == ("Pros, cons", 7, 10)
    assert part.text.splitlines()[:3] == ["## Pros, cons", "fast", "cheap"]
    with pytest.raises(NoteNotFound, match=r"no heading 'Missing'.*Pros, cons"):
        vault.read_note("Plan", heading="Missing")


def test_a_ref_written_as_a_link_reads_its_section_unless_a_note_has_that_name(
    make_vault: MakeVault,
) -> None:
    """`Note#Heading` (as `vaultmem get` and the MCP read_note take it); a name that holds a
    '#' itself (an alias `C#`) still names its own note first."""
    vault = make_vault({"work/Plan.md": NOTE, "Sharp.md": "---\naliases: [C#]\n---\nsharp\n"})
    vault.reindex()
    assert vault.read_note("Plan#Next").text == "## Next\nship it"
    assert vault.read_note("Plan#").path == "work/Plan.md"  # no heading: the whole note
    assert vault.read_note("C#").path == "Sharp.md"
    with pytest.raises(NoteNotFound, match="no heading 'Missing'"):
        vault.read_note("Plan#Missing")
    with pytest.raises(NoteNotFound):
        vault.read_note("Nothing#Next")


@pytest.mark.parametrize(
    "ref",
    ["../outside", "/etc/passwd", "..%2Foutside", "..\\outside", "work/../../outside.md", "x\x00y"],
)
def test_hostile_references_never_leave_the_vault(make_vault: MakeVault, ref: str) -> None:
    vault = make_vault({"a.md": "alpha\n"})
    (vault.root.parent / "outside.md").write_text("secret\n", encoding="utf-8")
    vault.reindex()
    with pytest.raises((NoteNotFound, UsageError)):
        vault.read_note(ref)


def test_symlinks_out_of_the_vault_are_not_indexed_or_read(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "alpha\n"})
    outside = vault.root.parent / "private"
    outside.mkdir()
    (outside / "secret.md").write_text("password hunter2\n", encoding="utf-8")
    os.symlink(outside / "secret.md", vault.root / "secret.md")
    os.symlink(outside, vault.root / "linked")
    report = vault.reindex()
    assert report.notes == 1
    reasons = dict(vault.doctor().skipped)
    assert "outside the vault" in reasons["secret.md"]
    assert "outside the vault" in reasons["linked"]
    assert vault.search("hunter2", mode="keyword").hits == ()
    with pytest.raises(NoteNotFound):
        vault.read_note("secret")


def test_a_note_swapped_for_a_symlink_after_indexing_is_refused(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "alpha\n"})
    vault.reindex()
    secret = vault.root.parent / "secret.txt"
    secret.write_text("hunter2\n", encoding="utf-8")
    (vault.root / "a.md").unlink()
    os.symlink(secret, vault.root / "a.md")
    with pytest.raises(NoteNotFound, match="outside the vault"):
        vault.read_note("a")


def test_a_note_deleted_since_the_reindex_says_what_to_run(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "alpha\n"})
    vault.reindex()
    (vault.root / "a.md").unlink()
    with pytest.raises(NoteNotFound, match="vaultmem reindex"):
        vault.read_note("a")


def test_folders_tags_recent_and_names(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "top.md": "#project/alpha\n",
            "work/a.md": "#project/beta #solo\n",
            "work/deep/b.md": "---\naliases: [Bee]\ntags: [Project]\n---\nb\n",
            "img.png": b"\x89PNG",
        }
    )
    for i, rel in enumerate(["work/deep/b.md", "top.md", "work/a.md"]):
        os.utime(vault.root / rel, (1_000_000 + i, 1_000_000 + i))
    vault.reindex()
    assert vault.folders() == (
        FolderCount("", 3),
        FolderCount("work", 2),
        FolderCount("work/deep", 1),
    )
    tags = {t.tag.lower(): t.notes for t in vault.tag_counts()}
    assert tags == {"project": 3, "project/alpha": 1, "project/beta": 1, "solo": 1}
    assert all(isinstance(t, TagCount) for t in vault.tag_counts())
    assert [n.path for n in vault.recent(2)] == ["work/a.md", "top.md"]
    names = {n.path: n for n in vault.note_names()}
    assert set(names) == {"top.md", "work/a.md", "work/deep/b.md"}
    assert names["work/deep/b.md"].aliases == ("Bee",)
    assert names["work/a.md"].mtime == pytest.approx(1_000_002)


def test_threads_get_their_own_connections(sample_vault: Vault) -> None:
    import threading

    seen: dict[str, object] = {}

    def work(name: str) -> None:
        seen[name] = sample_vault.conn
        sample_vault.search("tariff", mode="keyword")

    threads = [threading.Thread(target=work, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["a"] is not seen["b"] is not sample_vault.conn
    sample_vault.close()
    assert sample_vault.stats().notes > 0  # reopens after close


def test_search_keeps_working_while_another_thread_reindexes(make_vault: MakeVault) -> None:
    import threading

    vault = make_vault({f"n{i}.md": f"note {i} alpha\n" for i in range(200)})
    vault.reindex()
    errors: list[BaseException] = []
    stop = threading.Event()

    def searcher() -> None:
        while not stop.is_set():
            try:
                vault.search("alpha", mode="keyword")
            except BaseException as exc:  # any error here is the bug under test
                errors.append(exc)
                return

    thread = threading.Thread(target=searcher)
    thread.start()
    try:
        for i in range(5):
            (vault.root / f"n{i}.md").write_text(f"note {i} beta\n", encoding="utf-8")
            vault.reindex(full=(i == 2))
    finally:
        stop.set()
        thread.join()
    assert errors == []


def test_connections_stay_open_across_reindexes_until_the_file_is_replaced(
    make_vault: MakeVault,
) -> None:
    vault = make_vault({"a.md": "alpha\n"})
    vault.reindex()
    warm = vault.conn
    (vault.root / "b.md").write_text("beta\n", encoding="utf-8")
    vault.reindex()
    assert vault.conn is warm  # an incremental reindex keeps the file: no reopening
    assert [h.path for h in vault.search("beta", mode="keyword").hits] == ["b.md"]
    warm.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    vault.reindex(full=True)  # an index of another schema is replaced by a new file
    assert vault.conn is not warm
    assert [h.path for h in vault.search("alpha", mode="keyword").hits] == ["a.md"]


def test_backlink_context_is_never_read_from_outside_the_vault(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "see [[b]] here\n", "b.md": "bee\n"})
    vault.reindex()
    secret = vault.root.parent / "secret.txt"
    secret.write_text("password hunter2\n", encoding="utf-8")
    (vault.root / "a.md").unlink()
    os.symlink(secret, vault.root / "a.md")  # swapped in after the reindex
    (link,) = vault.backlinks("b")
    assert link.src_path == "a.md" and link.context == ""


def test_lines_are_counted_as_the_index_counts_them(make_vault: MakeVault) -> None:
    vault = make_vault(
        {"n.md": "# N\r\nform\x0cfeed and\u2028separator\r\n\r\n## Later\r\nend\r\n"}
    )
    vault.reindex()
    part = vault.read_note("n", heading="Later")
    assert (part.start_line, part.text) == (4, "## Later\nend")


@pytest.mark.parametrize(
    ("text", "body_line"),
    [
        ("---\ntags: [x]\n---\n# T\n", 4),
        ("no front matter\n---\n", 1),
        ("---\ntags: [never closed\nbody\n", 1),  # shown as written, as Obsidian does
    ],
)
def test_read_note_says_where_the_front_matter_ends(
    make_vault: MakeVault, text: str, body_line: int
) -> None:
    vault = make_vault({"n.md": text})
    vault.reindex()
    assert vault.read_note("n").body_line == body_line
