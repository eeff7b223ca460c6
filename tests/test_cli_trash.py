"""`vaultmem trash`, `trash list`, `restore` and `trash purge` through the CLI."""

from __future__ import annotations

import errno
import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conftest import REAL_RENAME, MakeVault, failing, renamed_once
from vaultmem.cli import cli
from vaultmem.cli.trash import parse_age
from vaultmem.errors import ChangedOnDisk, VaultmemError
from vaultmem.vault import Vault


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    stdout: str
    output: str  # stdout, stderr and the error message, as a person sees them


def run(vault: Vault, *args: str) -> Outcome:
    """The command in process, with `main`'s exit codes for vaultmem's own errors."""
    result: Result = CliRunner().invoke(cli, ["--vault", str(vault.root), *args])
    if isinstance(result.exception, VaultmemError):
        error = result.exception
        return Outcome(error.exit_code, result.stdout, f"{result.output}error: {error}")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Outcome(result.exit_code, result.stdout, result.output)


@pytest.fixture
def vault(make_vault: MakeVault) -> Vault:
    v = make_vault(
        {
            "people/Maya.md": "---\naliases: [M]\n---\n# Maya\nlikes tea\n",
            "a.md": "[[Maya]] and [[M]]\n",
            "img.png": b"\x89PNG",
        }
    )
    v.reindex(embed=False)
    return v


def test_trash_moves_the_note_and_the_index_forgets_it(vault: Vault) -> None:
    result = run(vault, "trash", "M", "--json")  # by alias
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["trashed"]["path"] == "people/Maya.md"
    assert out["trashed"]["entry"] == ".trash/people/Maya.md"
    assert out["trashed"]["known"] is True
    assert out["reindex"]["removed"] == 1
    assert not (vault.root / "people/Maya.md").exists()
    assert (vault.root / ".trash/people/Maya.md").read_text().endswith("likes tea\n")
    assert run(vault, "show", "Maya").exit_code == 1
    links = {o.target: o.dst_path for o in vault.show("a.md").links}
    assert links == {"Maya": None, "M": None}  # wanted again, without a reindex


def test_trash_list_then_restore_puts_it_back_and_indexes_it(vault: Vault) -> None:
    assert run(vault, "trash", "people/Maya.md").exit_code == 0
    listed = json.loads(run(vault, "trash", "list", "--json").stdout)
    assert listed["total"] == 1 and listed["entries"][0]["path"] == "people/Maya.md"
    human = run(vault, "trash", "list").stdout
    assert ".trash/people/Maya.md" in human and "← people/Maya.md" in human
    result = run(vault, "restore", "people/Maya.md", "--json")  # `.trash/` may be left out
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert (out["path"], out["entry"]) == ("people/Maya.md", ".trash/people/Maya.md")
    assert vault.show("Maya").path == "people/Maya.md"
    assert {o.target: o.dst_path for o in vault.show("a.md").links}["Maya"] == "people/Maya.md"
    assert json.loads(run(vault, "trash", "list", "--json").stdout)["total"] == 0
    assert not (vault.root / ".trash/people").exists()  # emptied folders go


def test_restore_never_overwrites_and_to_puts_it_elsewhere(vault: Vault) -> None:
    run(vault, "trash", "Maya")
    (vault.root / "people/Maya.md").write_text("a new Maya\n")
    result = run(vault, "restore", ".trash/people/Maya.md")
    assert result.exit_code == 1
    assert "exists already" in result.output
    assert (vault.root / "people/Maya.md").read_text() == "a new Maya\n"
    assert (vault.root / ".trash/people/Maya.md").exists()
    moved = run(vault, "restore", ".trash/people/Maya.md", "--to", "people/Maya (old).md")
    assert moved.exit_code == 0, moved.output
    assert vault.find_note("Maya (old)") == "people/Maya (old).md"


def test_a_taken_name_in_the_trash_gets_a_number(vault: Vault) -> None:
    run(vault, "trash", "Maya")
    (vault.root / "people/Maya.md").write_text("second\n")
    out = json.loads(run(vault, "trash", "people/Maya.md", "--json").stdout)
    assert out["trashed"]["entry"] == ".trash/people/Maya 1.md"


def test_an_attachment_and_a_file_the_index_has_not_seen(vault: Vault) -> None:
    (vault.root / "new.md").write_text("not indexed yet\n")
    assert run(vault, "trash", "img.png").exit_code == 0
    assert run(vault, "trash", "new.md").exit_code == 0
    assert not (vault.root / "new.md").exists() and not (vault.root / "img.png").exists()
    assert run(vault, "trash", "nothing-here").exit_code == 1


def test_purge_asks_keeps_recent_entries_and_deletes_on_request(vault: Vault) -> None:
    run(vault, "trash", "Maya")
    refused = run(vault, "trash", "purge", "--all")  # not a terminal: --yes needed
    assert refused.exit_code == 2 and "--yes" in refused.output
    kept = json.loads(run(vault, "trash", "purge", "--yes", "--json").stdout)  # 30 days
    assert kept == {"total": 0, "bytes": 0, "purged": []}
    assert (vault.root / ".trash/people/Maya.md").exists()
    gone = json.loads(run(vault, "trash", "purge", "--older-than", "0d", "--yes", "--json").stdout)
    assert [e["entry"] for e in gone["purged"]] == [".trash/people/Maya.md"]
    assert not (vault.root / ".trash/people").exists()
    assert (vault.root / ".trash").is_dir()  # the trash folder itself stays


def test_purge_named_entries_only(vault: Vault) -> None:
    run(vault, "trash", "Maya")
    run(vault, "trash", "img.png")
    out = run(vault, "trash", "purge", ".trash/img.png", "--yes", "--json")
    assert json.loads(out.stdout)["total"] == 1
    assert [e.path for e in vault.list_trash()] == [".trash/people/Maya.md"]
    missing = run(vault, "trash", "purge", "nothing.md", "--yes")
    assert missing.exit_code == 1 and "not in the trash" in missing.output
    both = run(vault, "trash", "purge", "people/Maya.md", "--all", "--yes")
    assert both.exit_code == 2


def test_a_held_index_lock_exits_4_and_moves_nothing(vault: Vault) -> None:
    lock_path = vault.index_path.with_name(vault.index_path.name + ".lock")
    with open(lock_path, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        result = run(vault, "trash", "Maya", "--wait", "0.2")
    assert result.exit_code == 4
    assert (vault.root / "people/Maya.md").exists()


def test_trash_refuses_a_file_changed_since_the_revision_given(vault: Vault) -> None:
    before = vault.read_for_edit("people/Maya.md").digest
    (vault.root / "people/Maya.md").write_text("changed\n")
    with pytest.raises(ChangedOnDisk):
        vault.trash("people/Maya.md", expected_digest=before)
    assert (vault.root / "people/Maya.md").read_text() == "changed\n"
    assert vault.list_trash() == ()


@pytest.mark.parametrize(
    ("text", "days"), [("30d", 30), ("30", 30), ("12h", 0.5), ("2w", 14), ("90m", 90 / 1440)]
)
def test_ages(text: str, days: float) -> None:
    assert parse_age(text).total_seconds() == pytest.approx(days * 86400)


def test_a_bad_age_is_a_usage_error(vault: Vault) -> None:
    result = run(vault, "trash", "purge", "--older-than", "soon", "--yes")
    assert result.exit_code == 2 and "30d" in result.output


def test_trash_a_note_named_like_a_subcommand(make_vault: MakeVault) -> None:
    vault = make_vault({"list.md": "a note called list\n"})
    vault.reindex(embed=False)
    assert json.loads(run(vault, "trash", "list", "--json").stdout)["total"] == 0
    assert run(vault, "trash", "move", "list").exit_code == 0
    assert not (vault.root / "list.md").exists()


def test_without_an_index_trash_still_moves(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "x\n"})
    result = run(vault, "trash", "a.md", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["reindex"] is None
    assert Path(vault.root / ".trash/a.md").exists()


def test_a_move_that_cannot_be_taken_back_names_the_restore_that_brings_the_note_back(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No hard links; the note is saved by another program while it is renamed into the trash,
    and renaming it back fails: the message says it is in the trash and which restore to run,
    and that command brings it back (and into the index)."""
    note = vault.root / "people" / "Maya.md"

    def saved_meanwhile() -> None:
        (vault.root / "people" / "new").write_text("# Maya\nsaved meanwhile\n")
        REAL_RENAME(vault.root / "people" / "new", note)

    monkeypatch.setattr(os, "link", failing(errno.EPERM))
    monkeypatch.setattr(os, "rename", renamed_once(saved_meanwhile))  # and back: EIO
    result = run(vault, "trash", "people/Maya.md")
    monkeypatch.undo()
    assert result.exit_code == 1
    assert "nothing was moved" not in result.output
    assert result.output.endswith(
        "error: people/Maya.md was replaced by another program while it was moved to the trash,"
        " and putting it back failed (Input/output error): the new version is now in the trash"
        " at .trash/people/Maya.md. Run `vaultmem restore .trash/people/Maya.md` to put it back"
    )
    assert not note.exists()
    restored = run(vault, "restore", ".trash/people/Maya.md")
    assert restored.exit_code == 0, restored.output
    assert note.read_text() == "# Maya\nsaved meanwhile\n"
    assert [h.path for h in vault.search("saved meanwhile", mode="keyword").hits] == [
        "people/Maya.md"
    ]
