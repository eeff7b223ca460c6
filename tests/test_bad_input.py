"""Bad input never crashes a reindex or corrupts the index; each case says what happened."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tests.conftest import MakeVault, refusing
from vaultmem import indexer
from vaultmem.errors import SchemaMismatch, UsageError
from vaultmem.scan import ScanResult, scan
from vaultmem.vault import Vault


def note_paths(vault_obj: object) -> set[str]:
    conn = vault_obj.conn  # type: ignore[attr-defined]
    return {r[0] for r in conn.execute("SELECT path FROM notes WHERE kind = 'note'")}


def test_broken_yaml_is_indexed_as_text_with_a_warning(make_vault: MakeVault) -> None:
    vault = make_vault({"bad.md": "---\ntitle: [unclosed\n---\nbody words [[Other]]\n"})
    vault.reindex()
    assert vault.search("unclosed").hits[0].path == "bad.md"  # the YAML text stays searchable
    assert vault.search("body words").hits[0].path == "bad.md"
    warnings = vault.doctor().warnings
    assert len(warnings) == 1 and warnings[0][0] == "bad.md"
    assert "broken YAML front matter" in warnings[0][1]
    assert [link.target for link in vault.show("bad").links] == ["Other"]


def test_partly_broken_yaml_keeps_the_good_properties(make_vault: MakeVault) -> None:
    vault = make_vault({"t.md": '---\nrelated: "[[X]]"\ncreated: {{date}}\n---\n# Hi\n'})
    vault.reindex()
    info = vault.show("t")
    assert info.frontmatter == {"related": "[[X]]"}
    assert [(link.target, link.relation, link.line) for link in info.links] == [("X", "related", 2)]
    assert "'created'" in info.warnings[0]


def test_bom_and_crlf(make_vault: MakeVault) -> None:
    text = "\ufeff---\r\naliases: [Bee]\r\ntags: [x]\r\n---\r\n# Head\r\nline [[a]]\r\n"
    vault = make_vault({"bom.md": text.encode("utf-8"), "a.md": "x"})
    vault.reindex()
    info = vault.show("Bee")
    assert info.aliases == ("Bee",)
    assert info.tags == ("x",)
    assert [(h.text, h.line) for h in info.headings] == [("Head", 5)]
    assert [(link.target, link.line, link.dst_path) for link in info.links] == [("a", 6, "a.md")]


def test_non_utf8_bytes_are_read_with_a_warning(make_vault: MakeVault) -> None:
    vault = make_vault({"latin.md": "caf\xe9 cr\xe8me [[a]]".encode("latin-1")})
    vault.reindex()
    assert vault.search("crème").hits[0].path == "latin.md"
    assert "not valid UTF-8" in vault.doctor().warnings[0][1]


def test_binary_file_named_md_is_skipped(make_vault: MakeVault) -> None:
    vault = make_vault({"blob.md": b"\x00\x01\x02binary", "ok.md": "fine"})
    report = vault.reindex()
    assert report.notes == 1 and report.skipped == 1
    assert vault.doctor().skipped == (
        ("blob.md", "binary file with a .md name (NUL bytes); not indexed"),
    )


def test_huge_file_is_skipped_without_reading_it(make_vault: MakeVault) -> None:
    vault = make_vault({"ok.md": "fine"})
    with open(vault.root / "huge.md", "wb") as handle:  # sparse: 100 MB on paper only
        handle.truncate(100 * 1024 * 1024)
    vault.reindex()
    ((path, reason),) = vault.doctor().skipped
    assert path == "huge.md" and "larger than 10 MB" in reason and "max_file_mb" in reason
    assert note_paths(vault) == {"ok.md"}


def test_symlink_loop_is_not_followed_forever(make_vault: MakeVault) -> None:
    vault = make_vault({"a/note.md": "x"})
    os.symlink(vault.root / "a", vault.root / "a" / "loop")
    os.symlink(vault.root / "missing.md", vault.root / "dangling.md")
    vault.reindex()
    assert note_paths(vault) == {"a/note.md"}
    reasons = dict(vault.doctor().skipped)
    assert "symlink loop" in reasons["a/loop"]
    assert reasons["dangling.md"] == "broken symlink"


def test_unreadable_file_is_skipped_with_reason(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault({"secret.md": "x", "ok.md": "y"})
    target = vault.root / "secret.md"
    os.chmod(target, 0)
    if os.access(target, os.R_OK):  # root reads anything: make the open fail as it would
        # (tests/hostile/ reads such a file without root's override instead)
        monkeypatch.setattr(os, "open", refusing("open", errno.EACCES, names=(str(target),)))
    vault.reindex()
    assert note_paths(vault) == {"ok.md"}
    assert dict(vault.doctor().skipped)["secret.md"] == "cannot read: Permission denied"


def test_file_vanishing_or_changing_during_reindex(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault({"gone.md": "x", "changing.md": "old words", "a.md": "[[gone]]"})
    real_scan = indexer.scan

    def scan_then_edit(*args: object, **kwargs: object) -> ScanResult:
        result = real_scan(*args, **kwargs)  # type: ignore[arg-type]
        os.remove(vault.root / "gone.md")
        (vault.root / "changing.md").write_text("new words, longer than before")
        return result

    monkeypatch.setattr(indexer, "scan", scan_then_edit)
    vault.reindex()
    assert note_paths(vault) == {"changing.md", "a.md"}
    assert vault.search("longer").hits[0].path == "changing.md"
    monkeypatch.setattr(indexer, "scan", real_scan)
    vault.close()
    assert vault.reindex().changed == 0  # the stored size/mtime came from the scan: no drift
    row = vault.conn.execute("SELECT dst_path FROM links").fetchone()
    assert row == (None,)


@pytest.mark.parametrize(
    "query",
    [
        "C++",
        "foo-bar",
        '"unbalanced',
        "AND",
        "*",
        "NOT",
        "a OR",
        "(x",
        "title:foo",
        "^",
        "NEAR(a b)",
        "",
        "   ",
        "\x00",
    ],
)
def test_fts_syntax_in_queries_never_crashes(make_vault: MakeVault, query: str) -> None:
    vault = make_vault({"c.md": "C++ and foo-bar, AND unbalanced NEAR title"})
    vault.reindex()
    result = vault.search(query, mode="keyword")
    words = [w for w in ("c", "foo", "unbalanced", "and", "near", "title") if w in query.lower()]
    assert bool(result.hits) == bool(words)
    hybrid = vault.search(query)  # meaning finds neighbours even without shared words
    assert bool(hybrid.hits) == any(c.isalnum() for c in query)


def test_empty_vault(make_vault: MakeVault) -> None:
    vault = make_vault({})
    report = vault.reindex()
    assert (report.notes, report.links) == (0, 0)
    assert vault.search("anything").hits == ()
    assert vault.stats().notes == 0


def test_scan_does_not_enter_dot_folders_or_follow_loops(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.md").write_text("x")
    (tmp_path / "n.md").write_text("x")
    os.symlink(tmp_path, tmp_path / "self")
    result = scan(tmp_path)
    assert [f.path for f in result.files] == ["n.md"]


def test_an_index_file_that_is_not_sqlite_says_what_to_run(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "alpha\n"})
    vault.index_path.parent.mkdir(parents=True, exist_ok=True)
    vault.index_path.write_text("not a database\n", encoding="utf-8")
    # not `reindex --full`, which refuses it (below): what that says, and how to go on
    with pytest.raises(SchemaMismatch, match=r"not a vaultmem index.*move it away.*reindex`$"):
        vault.search("alpha")
    # not a file vaultmem made, even in its own folder (issue 15, defect 1): left as it is
    with pytest.raises(UsageError, match="move it away"):
        vault.reindex(full=True)
    assert vault.index_path.read_text(encoding="utf-8") == "not a database\n"


@pytest.mark.parametrize("content", [b"someone's notes\n", b"sqlite"])
def test_full_reindex_never_deletes_a_file_that_is_not_an_index(
    make_vault: MakeVault, tmp_path: Path, content: bytes
) -> None:
    import sqlean

    other = tmp_path / "elsewhere.db"
    if content == b"sqlite":  # another program's database
        db = sqlean.connect(str(other))
        db.execute("CREATE TABLE orders(id INTEGER)")
        db.commit()
        db.close()
    else:
        other.write_bytes(content)
    before = other.read_bytes()
    vault = make_vault({"a.md": "alpha\n"})
    vault = Vault(vault.root, other)
    with pytest.raises(UsageError, match="not a vaultmem index"):
        vault.reindex(full=True)
    assert other.read_bytes() == before
