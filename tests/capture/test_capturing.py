"""The capture service over a real vault: capture notes written through the one write path,
review decisions through the memory layer, and the hostile cases of each write first."""

from __future__ import annotations

import datetime as dt
import io
import os
import threading
from pathlib import Path

import pytest

from tests.conftest import MakeVault, failing
from tests.edit.conftest import READY_THEN_GO, child, wait_for, without_override
from vaultmem.capture.errors import BadTranscript, CaptureChanged, CaptureNotFound
from vaultmem.errors import UsageError
from vaultmem.memory.errors import Refused
from vaultmem.vault import Vault

NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.UTC)
TODAY = NOW.date()
MAYA = "# Maya Chen\n\n## Facts\n- role:: CEO ^f-0001\n- drink:: green tea ^f-0002\n"
CHAT = (
    "Date: 2026-11-30\n"
    "Maya Chen: My role is CTO.\n"
    "Tom: Congrats!\n"
    "Maya Chen: I'll send the contract to Ana tomorrow.\n"
    "Maya Chen: I live in Lisbon with my partner.\n"
)


@pytest.fixture
def vault(make_vault: MakeVault) -> Vault:
    v = make_vault({"people/Maya Chen.md": MAYA, "Tom.md": "# Tom\n"})
    v.reindex()
    return v


def capture(vault: Vault, text: str = CHAT, source: str = "call with Maya", **kw: object):  # type: ignore[no-untyped-def]
    t = vault.captures.read_transcript(io.BytesIO(text.encode()), "chat")
    return vault.captures.capture(t, source=source, now=NOW, **kw)  # type: ignore[arg-type]


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".vaultmem" not in p.parts
    }


def item_of(vault: Vault, kind: str, key: str | None = None) -> str:
    (note,) = vault.captures.pending()
    return next(
        i.id for i in note.items if i.candidate.kind == kind and key in (None, i.candidate.key)
    )


# --------------------------------------------------------------------------- capturing


def test_capture_writes_one_note_in_the_inbox_and_nothing_else(vault: Vault) -> None:
    before = files(vault.root)
    result = capture(vault)
    assert result.status == "written"
    assert result.path == "inbox/2026-12-01 call with Maya.md"
    after = files(vault.root)
    assert set(after) - set(before) == {result.path}
    assert all(after[p] == before[p] for p in before)  # no other note touched
    text = after[result.path].decode()
    assert text.startswith("---\ntype: capture\nstatus: pending\nsource: call with Maya\n")
    assert "- [ ] [[Maya Chen]] role:: CTO ^c-" in text
    role = next(c for c in result.candidates if c.key == "role")
    assert result.flags[role.id][0].kind == "contradicts"
    assert result.flags[role.id][0].target == "Maya Chen#^f-0001"
    assert result.flags[role.id][0].now == "CEO"
    assert vault.show(result.path).path == result.path  # indexed by the write path


def test_the_same_transcript_is_captured_once(vault: Vault) -> None:
    first = capture(vault)
    before = files(vault.root)
    again = capture(vault, source="another label")
    assert (again.status, again.path) == ("already-captured", first.path)
    assert files(vault.root) == before


def test_captured_once_even_after_the_capture_note_is_deleted(vault: Vault) -> None:
    first = capture(vault)
    assert first.path is not None
    (vault.root / first.path).unlink()
    assert capture(vault).status == "already-captured"  # the capture log remembers


def test_dry_run_writes_nothing(vault: Vault) -> None:
    before = files(vault.root)
    result = capture(vault, dry_run=True)
    assert result.status == "dry-run" and result.text and "type: capture" in result.text
    assert files(vault.root) == before
    assert capture(vault).status == "written"  # a dry run does not count as captured


def test_nothing_to_capture_writes_nothing(vault: Vault) -> None:
    before = files(vault.root)
    assert capture(vault, "Ana: Olá!\nRui: Tudo bem?\n").status == "nothing-to-capture"
    assert files(vault.root) == before


@pytest.mark.parametrize("data", [b"", b"\x00\x01\x02binary", b'[{"role": 3}]'])
def test_bad_transcripts_write_nothing(vault: Vault, data: bytes) -> None:
    before = files(vault.root)
    with pytest.raises(BadTranscript):
        vault.captures.read_transcript(io.BytesIO(data), "t")
    assert files(vault.root) == before


def test_a_transcript_over_the_configured_limit_is_refused(make_vault: MakeVault) -> None:
    v = make_vault({".vaultmem/config.toml": "[capture]\nmax_transcript_mb = 0.001\n"})
    with pytest.raises(BadTranscript, match="larger than"):
        v.captures.read_transcript(io.BytesIO(b"Maya: hi\n" * 1000), "big.txt")


def test_gates_from_the_config(make_vault: MakeVault) -> None:
    v = make_vault({".vaultmem/config.toml": "[capture]\nmin_confidence = 0.8\n"})
    result = capture(v)
    assert result.gated is not None and result.gated.low_confidence > 0
    assert all(c.confidence >= 0.8 for c in result.candidates if c.kind != "episode")


def test_a_name_taken_in_the_inbox_gets_a_number(vault: Vault) -> None:
    capture(vault)
    second = capture(vault, CHAT + "Tom: I'm a welder at the docks.\n")
    assert second.path == "inbox/2026-12-01 call with Maya 2.md"


# --------------------------------------------------------------------------- accepting


def test_accepting_a_contradiction_supersedes_and_keeps_history(vault: Vault) -> None:
    capture(vault)
    role = item_of(vault, "fact", "role")
    (decision,) = vault.captures.accept([role], today=TODAY)
    assert decision.status == "accepted" and decision.went_to == "Maya Chen#^f-0001"
    text = (vault.root / "people/Maya Chen.md").read_text()
    assert "- role:: CTO ^f-0001" in text
    assert "    - was:: CEO (until 2026-12-01" in text
    capture_text = (vault.root / decision.capture).read_text()
    assert f"- [x] [[Maya Chen]] role:: CTO ✅ 2026-12-01 ^{role}" in capture_text
    assert "    - accepted → [[Maya Chen#^f-0001]]" in capture_text
    assert vault.captures.find(role)[1].status == "accepted"


def test_the_preview_of_a_contradiction_is_the_diff_accepting_would_make(vault: Vault) -> None:
    """The TUI shows it before accepting (it called a planner the memory service does not
    have: an AttributeError the review screen did not catch)."""
    capture(vault)
    role = item_of(vault, "fact", "role")
    before = files(vault.root)
    diff = vault.captures.preview(role, today=TODAY)
    assert diff is not None
    assert "+" in diff and "CTO" in diff and "was:: CEO" in diff
    assert files(vault.root) == before  # nothing written


def test_accepting_a_loop_for_a_new_entity_creates_its_note(vault: Vault) -> None:
    chat = "Date: 2026-11-30\nAna Ruiz: Hi!\nTom: Hi.\nAna Ruiz: I'll book the venue on Friday.\n"
    capture(vault, chat)
    loop = item_of(vault, "loop")
    (decision,) = vault.captures.accept([loop], today=TODAY)
    text = (vault.root / "entities/Ana Ruiz.md").read_text()
    assert "- [ ] book the venue 📅 2026-12-04" in text
    assert decision.went_to == "Ana Ruiz"


def test_accepting_the_episode_writes_an_episode_note(vault: Vault) -> None:
    capture(vault)
    episode = item_of(vault, "episode")
    (decision,) = vault.captures.accept([episode], today=TODAY)
    assert decision.went_to is not None and decision.went_to.startswith("episodes/2026-11-30 ")
    text = (vault.root / f"{decision.went_to}.md").read_text()
    assert "type: episode" in text and '"[[Maya Chen]]"' in text
    assert "Captured in [[inbox/2026-12-01 call with Maya]]." in text


def test_all_decided_marks_reviewed_and_moves_to_processed(vault: Vault) -> None:
    result = capture(vault)
    assert result.path is not None
    ids = [c.id for c in result.candidates]
    vault.captures.reject(ids[:1], today=TODAY)
    decisions = vault.captures.accept(all_items=True, today=TODAY)
    assert decisions[-1].capture == "inbox/processed/2026-12-01 call with Maya.md"
    assert not (vault.root / result.path).exists()
    moved = (vault.root / decisions[-1].capture).read_text()
    assert "status: reviewed" in moved
    assert [e.original for e in vault.list_trash()] == [result.path]  # restorable
    assert vault.captures.pending() == []
    assert capture(vault).status == "already-captured"  # processed captures count too


def test_accept_all_above_a_confidence(vault: Vault) -> None:
    capture(vault)
    decisions = vault.captures.accept(all_items=True, min_confidence=0.7, today=TODAY)
    (note,) = vault.captures.pending()
    decided = {d.id for d in decisions}
    for item in note.items:
        assert (item.id in decided) == (item.candidate.confidence >= 0.7)


def test_reject_strikes_and_writes_nothing_else(vault: Vault) -> None:
    result = capture(vault)
    before = files(vault.root)
    role = item_of(vault, "fact", "role")
    (decision,) = vault.captures.reject([role], today=TODAY)
    after = files(vault.root)
    assert [p for p in after if after[p] != before.get(p)] == [result.path]
    assert f"- [-] ~~[[Maya Chen]] role:: CTO~~ ^{role}" in after[str(result.path)].decode()
    assert decision.status == "rejected"
    assert vault.captures.accept([role], today=TODAY)[0].status == "already-decided"


def test_edit_then_accept_writes_the_edited_value(vault: Vault) -> None:
    capture(vault)
    role = item_of(vault, "fact", "role")
    vault.captures.edit(role, value="Chief Technology Officer", key="title", entity="Maya Chen")
    vault.captures.accept([role], today=TODAY)
    assert (
        "- title:: Chief Technology Officer ^f-" in (vault.root / "people/Maya Chen.md").read_text()
    )


def test_edit_refuses_what_does_not_apply(vault: Vault) -> None:
    capture(vault)
    loop = item_of(vault, "loop")
    with pytest.raises(UsageError, match="only facts have a key"):
        vault.captures.edit(loop, key="x")
    with pytest.raises(UsageError, match="nothing to edit"):
        vault.captures.edit(loop)
    with pytest.raises(CaptureNotFound):
        vault.captures.edit("c-ffffff", value="x")


# --------------------------------------------------------------------------- a person's edits


def test_a_persons_edits_in_obsidian_win(vault: Vault) -> None:
    result = capture(vault)
    path = vault.root / str(result.path)
    role = item_of(vault, "fact", "role")
    lives = item_of(vault, "fact", "lives in")
    text = path.read_text()
    text = text.replace("role:: CTO", "role:: Chief Technical Officer")
    text = text.replace("- [ ] [[Maya Chen]] lives in::", "- [x] [[Maya Chen]] lives in::")
    path.write_text(text)
    items = {i.id: i for i in vault.captures.pending()[0].items}
    assert items[lives].status == "checked"
    vault.captures.accept([role, lives], today=TODAY)
    entity = (vault.root / "people/Maya Chen.md").read_text()
    assert "- role:: Chief Technical Officer ^f-0001" in entity
    assert "- lives in:: Lisbon with my partner ^f-" in entity


def test_an_item_deleted_by_hand_is_gone_from_the_queue(vault: Vault) -> None:
    result = capture(vault)
    path = vault.root / str(result.path)
    role = item_of(vault, "fact", "role")
    lines = path.read_text().split("\n")
    at = next(n for n, line in enumerate(lines) if line.endswith(f"^{role}"))
    del lines[at : at + 3]
    path.write_text("\n".join(lines))
    with pytest.raises(CaptureNotFound):
        vault.captures.accept([role], today=TODAY)


def test_a_half_edited_capture_note_is_read_as_far_as_it_goes(vault: Vault) -> None:
    result = capture(vault)
    path = vault.root / str(result.path)
    text = path.read_text()
    path.write_text(text[: len(text) // 2] + "\n- [ ] [[Broken\n    - confidence x\n")
    note = vault.captures.pending()[0]
    assert note.items and all(i.id.startswith("c-") for i in note.items)


# --------------------------------------------------------------------------- hostile cases


def test_the_target_fact_changed_since_the_capture(vault: Vault) -> None:
    capture(vault)
    role = item_of(vault, "fact", "role")
    entity = vault.root / "people/Maya Chen.md"
    entity.write_text(entity.read_text().replace("role:: CEO", "role:: Chair"))
    vault.reindex()
    before = files(vault.root)
    (refused,) = vault.captures.accept([role], today=TODAY)
    assert refused.status == "refused" and "now 'Chair', not 'CEO'" in refused.message
    assert files(vault.root) == before
    assert vault.captures.find(role)[1].status == "pending"
    # `review edit` checks it against the vault anew: then it is accepted over 'Chair'
    vault.captures.edit(role, value="CTO")
    assert vault.captures.find(role)[1].flags[0].now == "Chair"
    assert vault.captures.accept([role], today=TODAY)[0].status == "accepted"
    assert "was:: Chair" in entity.read_text()


def test_items_of_one_capture_supersede_each_other(vault: Vault) -> None:
    chat = "Date: 2026-11-30\nMaya Chen: My role is CTO.\nTom: Oh?\nMaya Chen: My role is CPO.\n"
    capture(vault, chat)
    decisions = vault.captures.accept(all_items=True, today=TODAY)
    assert [d.status for d in decisions] == ["accepted"] * len(decisions)
    text = (vault.root / "people/Maya Chen.md").read_text()
    assert "- role:: CPO ^f-0001" in text and "was:: CTO" in text and "was:: CEO" in text


def test_the_capture_note_changed_between_reading_and_marking(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = capture(vault)
    path = vault.root / str(result.path)
    role = item_of(vault, "fact", "role")
    real = vault.memory.set_fact

    def set_fact_then_edit(*args: object, **kw: object):  # type: ignore[no-untyped-def]
        written = real(*args, **kw)  # type: ignore[arg-type]
        # Obsidian saves the capture note while the fact is written: a line added on top
        path.write_text(path.read_text().replace("## Facts", "A note of mine.\n\n## Facts"))
        return written

    monkeypatch.setattr(vault.memory, "set_fact", set_fact_then_edit)
    vault.captures.accept([role], today=TODAY)
    text = path.read_text()
    assert "A note of mine." in text  # the person's edit kept
    assert f"- [x] [[Maya Chen]] role:: CTO ✅ 2026-12-01 ^{role}" in text


def test_the_capture_note_deleted_while_reviewing(vault: Vault) -> None:
    result = capture(vault)
    role = item_of(vault, "fact", "role")
    (vault.root / str(result.path)).unlink()
    with pytest.raises(CaptureNotFound):
        vault.captures.accept([role], today=TODAY)
    assert "- role:: CEO ^f-0001" in (vault.root / "people/Maya Chen.md").read_text()


def test_two_reviews_at_once_write_a_loop_once(vault: Vault) -> None:
    capture(vault)
    loop = item_of(vault, "loop")
    other = Vault(vault.root)  # a second process's view of the same vault
    results: list[str] = []
    errors: list[BaseException] = []

    def accept(v: Vault) -> None:
        try:
            results.append(v.captures.accept([loop], today=TODAY)[0].status)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=accept, args=(v,)) for v in (vault, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    assert sorted(results) == ["accepted", "already-decided"]
    text = (vault.root / "people/Maya Chen.md").read_text()
    assert text.count("send the contract to Ana") == 1


def test_a_symlinked_capture_note_is_written_through_its_link_target(vault: Vault) -> None:
    result = capture(vault)
    real = vault.root / "elsewhere.md"
    (vault.root / str(result.path)).rename(real)
    os.symlink(real, vault.root / str(result.path))
    role = item_of(vault, "fact", "role")
    vault.captures.reject([role], today=TODAY)
    assert f"~~[[Maya Chen]] role:: CTO~~ ^{role}" in real.read_text()
    assert (vault.root / str(result.path)).is_symlink()


def test_a_read_only_capture_note_is_refused_and_left_as_it_was(vault: Vault) -> None:
    prefix = without_override()
    result = capture(vault)
    path = vault.root / str(result.path)
    role = item_of(vault, "fact", "role")
    before = path.read_bytes()
    path.chmod(0o444)
    try:
        code = (
            "import sys, datetime as dt\n"
            "from vaultmem.vault import Vault\n"
            "from vaultmem.errors import VaultmemError\n"
            "v = Vault(__import__('pathlib').Path(sys.argv[1]))\n"
            "for d in v.captures.reject([sys.argv[2]]):\n"
            "    print(d.status, d.message)\n"
        )
        proc = child(code, str(vault.root), role, prefix=prefix)
        out, err = proc.communicate(timeout=120)
        assert out.startswith("refused"), (out, err)
        assert "read-only" in out
    finally:
        path.chmod(0o644)
    assert path.read_bytes() == before


def test_a_crash_between_temporary_file_and_rename_leaves_the_capture_note_whole(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = capture(vault)
    path = vault.root / str(result.path)
    role = item_of(vault, "fact", "role")
    before = path.read_bytes()
    monkeypatch.setattr(os, "rename", failing("power cut"))
    with pytest.raises(OSError, match="power cut"):
        vault.captures.reject([role], today=TODAY)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".vaultmem-tmp")]


def test_another_encoding_is_kept(vault: Vault) -> None:
    result = capture(vault)
    path = vault.root / str(result.path)
    role = item_of(vault, "fact", "role")
    path.write_bytes(path.read_text().replace("\n", "\r\n").encode("utf-16"))
    vault.captures.reject([role], today=TODAY)
    text = path.read_bytes().decode("utf-16")
    assert "\r\n" in text and f"~~[[Maya Chen]] role:: CTO~~ ^{role}" in text


def test_entity_names_with_link_syntax(vault: Vault) -> None:
    capture(vault, "Date: 2026-11-30\nuser: I live in Porto.\nassistant: ok\n", source="a/b#c|d")
    (note,) = vault.captures.pending()
    assert note.path == "inbox/2026-12-01 a-bc-d.md"
    fact = next(i for i in note.items if i.candidate.kind == "fact")
    vault.captures.accept([fact.id], today=TODAY)
    assert (vault.root / "entities/Me.md").exists()


# --------------------------------------------------------------------------- undo


def test_undo_an_accept_restores_every_note_it_wrote(vault: Vault) -> None:
    result = capture(vault)
    before = files(vault.root)
    role = item_of(vault, "fact", "role")
    vault.captures.accept([role], today=TODAY)
    assert files(vault.root) != before
    assert vault.captures.undo(role).status == "undone"
    assert files(vault.root) == before
    assert vault.captures.find(role)[1].status == "pending"
    assert result.path is not None


def test_undo_a_loop_on_a_new_entity_trashes_the_note_it_made(vault: Vault) -> None:
    chat = "Date: 2026-11-30\nAna Ruiz: Hi!\nTom: Hi.\nAna Ruiz: I'll book the venue on Friday.\n"
    capture(vault, chat)
    loop = item_of(vault, "loop")
    vault.captures.accept([loop], today=TODAY)
    assert (vault.root / "entities/Ana Ruiz.md").exists()
    vault.captures.undo(loop)
    assert not (vault.root / "entities/Ana Ruiz.md").exists()
    assert "entities/Ana Ruiz.md" in [e.original for e in vault.list_trash()]


def test_undo_the_decision_that_finished_a_capture_brings_it_back(vault: Vault) -> None:
    result = capture(vault)
    ids = [c.id for c in result.candidates]
    vault.captures.reject(ids[:-1], today=TODAY)
    (last,) = vault.captures.reject(ids[-1:], today=TODAY)
    assert last.capture.startswith("inbox/processed/")
    vault.captures.undo(ids[-1])
    assert not (vault.root / last.capture).exists()
    assert (vault.root / str(result.path)).exists()
    assert [i.id for i in vault.captures.pending()[0].pending] == ids[-1:]


def test_undo_refuses_when_a_note_moved_on(vault: Vault) -> None:
    capture(vault)
    role = item_of(vault, "fact", "role")
    vault.captures.accept([role], today=TODAY)
    entity = vault.root / "people/Maya Chen.md"
    entity.write_text(entity.read_text() + "\nA line of mine.\n")
    changed = files(vault.root)
    with pytest.raises(CaptureChanged, match="changed since"):
        vault.captures.undo(role)
    assert files(vault.root) == changed
    with pytest.raises(CaptureNotFound):
        vault.captures.undo("c-123456")


def test_listing_again_parses_only_capture_notes_that_changed(vault: Vault) -> None:
    result = capture(vault)
    first = vault.captures.pending()[0]
    assert vault.captures.pending()[0] is first  # the file did not change: not parsed again
    path = vault.root / str(result.path)
    before = path.stat()
    path.write_text(path.read_text().replace("role:: CTO", "role:: CFO"))  # same size, in place
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # even with its old time
    again = vault.captures.pending()[0]
    assert again is not first
    assert [i.candidate.value for i in again.items if i.candidate.key == "role"] == ["CFO"]
    path.unlink()
    assert vault.captures.pending() == []


def test_undo_outlasts_the_process_and_goes_back_one_decision_at_a_time(vault: Vault) -> None:
    capture(vault)
    before = files(vault.root)
    role, loop = item_of(vault, "fact", "role"), item_of(vault, "loop")
    vault.captures.accept([role], today=TODAY)
    after_role = files(vault.root)
    vault.captures.reject([loop], today=TODAY)
    vault.close()
    later = Vault(vault.root)  # the TUI or the CLI started again
    assert later.captures.last_decided() == loop
    assert later.captures.undo().id == loop
    assert files(later.root) == after_role
    assert later.captures.undo().id == role
    assert files(later.root) == before
    with pytest.raises(CaptureNotFound, match="no review decision to undo"):
        later.captures.undo()


def test_undo_keeps_the_last_decisions_only(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    import vaultmem.capture.journal

    monkeypatch.setattr(vaultmem.capture.journal, "KEPT", 2)
    result = capture(vault)
    ids = [c.id for c in result.candidates][:3]
    for item in ids:
        vault.captures.reject([item], today=TODAY)
    later = Vault(vault.root)
    with pytest.raises(CaptureNotFound, match="the last 2 decisions"):
        later.captures.undo(ids[0])
    assert [later.captures.undo().id for _ in range(2)] == [ids[2], ids[1]]
    with pytest.raises(CaptureNotFound):
        later.captures.undo()


def test_undo_without_its_file_lasts_the_process(vault: Vault) -> None:
    capture(vault)
    vault.captures.undo_path.mkdir(parents=True)  # a folder where the file goes: unwritable
    role = item_of(vault, "fact", "role")
    before = files(vault.root)
    vault.captures.reject([role], today=TODAY)
    assert vault.captures.last_decided() == role
    vault.captures.undo()
    assert files(vault.root) == before


def test_an_item_written_by_hand_without_an_id_is_reviewed_like_any(vault: Vault) -> None:
    note = vault.root / "inbox/2026-11-29 by hand.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(
        "---\ntype: capture\nstatus: pending\nsource: by hand\n"
        "captured_at: 2026-11-29T21:14:03Z\n---\n"
        "- [ ] [[Maya Chen]] drink:: coffee\n    - confidence: 0.9\n"
        "- [ ] [[Maya Chen]] city:: Lisbon\n"
    )
    (pending,) = vault.captures.pending()
    drink, city = (i.id for i in pending.items)
    (accepted,) = vault.captures.accept([drink], today=TODAY)
    assert accepted.status == "accepted"
    assert "- drink:: coffee" in (vault.root / "people/Maya Chen.md").read_text()
    assert "- [x] [[Maya Chen]] drink:: coffee ✅ 2026-12-01" in note.read_text()
    (rejected,) = vault.captures.reject([city], today=TODAY)
    assert rejected.capture == "inbox/processed/2026-11-29 by hand.md"  # every item decided


def test_a_50_mb_transcript_is_refused_at_the_default_limit_without_being_read_whole(
    vault: Vault, tmp_path: Path
) -> None:
    import tracemalloc

    big = tmp_path / "huge chat.txt"
    with big.open("wb") as f:  # 50 MB, sparse: no disk spent
        f.write(b"Maya Chen: My role is CTO.\n")
        f.truncate(50 * 1024 * 1024)
    before = files(vault.root)
    tracemalloc.start()
    try:
        with pytest.raises(BadTranscript, match="larger than 20 MB"):
            vault.captures.read_transcript_file(big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 30 * 1024 * 1024  # the limit and a little, never the 50 MB
    assert files(vault.root) == before


# A child that reads the transcript, says so, waits for the go, then captures it.
CAPTURE_RACE = (
    """
import io, sys, time
from pathlib import Path
from vaultmem.vault import Vault
root, go, ready = (Path(a) for a in sys.argv[1:4])
label, text = sys.argv[4:]
vault = Vault(root)
t = vault.captures.read_transcript(io.BytesIO(text.encode()), "chat")
"""
    + READY_THEN_GO
    + """
print(vault.captures.capture(t, source=label).status)
"""
)


def test_one_transcript_captured_by_several_processes_at_once_is_written_once(
    vault: Vault, tmp_path: Path
) -> None:
    # the look for an earlier capture and the write were apart: each process found none,
    # and each wrote its own capture note of the same transcript (accepting them all would
    # write every fact as often)
    for round_ in range(3):
        chat = CHAT.replace("Lisbon", f"Lisbon {round_}")
        go = tmp_path / f"go-{round_}"
        ready = [tmp_path / f"ready-{round_}-{n}" for n in range(3)]
        procs = [
            child(CAPTURE_RACE, str(vault.root), str(go), str(r), f"call {n}", chat)
            for n, r in enumerate(ready)
        ]
        wait_for(lambda r=ready: all(f.exists() for f in r), "every child to have read")  # type: ignore[misc]
        go.touch()
        outs = [p.communicate(timeout=300) for p in procs]
        assert [p.returncode for p in procs] == [0, 0, 0], outs
        said = sorted(out.strip() for out, _ in outs)
        assert said == ["already-captured", "already-captured", "written"], outs
        notes = [n for n in vault.captures.notes() if f"Lisbon {round_}" in str(n.items)]
        assert len(notes) == 1, [n.path for n in notes]


def test_an_edit_the_memory_layer_would_refuse_never_reaches_the_capture_note(
    vault: Vault,
) -> None:
    # `review edit --key "home::"` wrote `home:::: Lisbon`, read back as key `home` and value
    # `:: Lisbon`; a value with `::` or a byte that is not UTF-8 went in too (the latter
    # blamed on the capture note's encoding), each refused only at accept
    result = capture(vault)
    path = vault.root / str(result.path)
    role, loop = item_of(vault, "fact", "role"), item_of(vault, "loop")
    before = path.read_bytes()
    for item, kw, said in [
        (role, {"key": "home::"}, "fact key 'home::' must be one line without `::`"),
        (role, {"value": "a:: b"}, "the fact value contains `::`"),
        (role, {"value": "bad \udcff"}, "the fact value holds U+DCFF, which is not a character"),
        (loop, {"value": "[ ] boxed"}, "give the loop's text without a checkbox"),
    ]:
        with pytest.raises(Refused) as info:
            vault.captures.edit(item, **kw)  # type: ignore[arg-type]
        assert str(info.value).startswith(said), info.value
    assert path.read_bytes() == before
    assert vault.captures.edit(role, value="CTO and founder").status == "edited"


def test_an_accept_that_cannot_check_its_item_says_so_and_is_not_written_twice(
    vault: Vault,
) -> None:
    # the loop and the episode were written, the item could not be checked in a read-only
    # capture note, the answer said "not accepted: … nothing was written", and every accept
    # after it wrote the loop and the episode once more
    prefix = without_override()
    result = capture(vault)
    path = vault.root / str(result.path)
    loop, episode = item_of(vault, "loop"), item_of(vault, "episode")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from vaultmem.vault import Vault\n"
        "v = Vault(Path(sys.argv[1]))\n"
        "for d in v.captures.accept(sys.argv[2:]):\n"
        "    print(d.status, d.message)\n"
    )
    path.chmod(0o444)
    try:
        for _ in range(2):
            out, err = child(code, str(vault.root), loop, episode, prefix=prefix).communicate(
                timeout=120
            )
            said = out.splitlines()
            assert len(said) == 2, (out, err)
            assert said[0].startswith(
                f"refused {result.path}: {loop} written to [[Maya Chen]], but checking it in its"
                " capture note failed ("
            ), said
            assert f"{episode} written to [[episodes/" in said[1], said
            assert all(
                s.endswith("Accept it again once that is fixed; it is not written twice")
                for s in said
            )
    finally:
        path.chmod(0o644)
    assert [d.status for d in vault.captures.accept([loop, episode], today=TODAY)] == [
        "accepted",
        "accepted",
    ]
    maya = (vault.root / "people/Maya Chen.md").read_text()
    assert maya.count("- [ ] send the contract to Ana") == 1
    assert len(list((vault.root / "episodes").glob("*.md"))) == 1


def test_candidates_holding_half_a_utf16_pair_are_refused_as_bad_output(vault: Vault) -> None:
    # JSON's "\udcff" alone (an agent's MCP call) crashed the capture with
    # UnicodeEncodeError before anything checked the candidates
    from vaultmem.capture.errors import BadModelOutput

    before = files(vault.root)
    for field, item in [
        ("value", {"kind": "fact", "entity": "Maya Chen", "key": "city", "value": "x \udcff"}),
        ("entity", {"kind": "fact", "entity": "Ma\ud800ya", "key": "city", "value": "x"}),
        ("value", {"kind": "loop", "entity": "Maya Chen", "value": "call \udfff back"}),
    ]:
        with pytest.raises(BadModelOutput) as info:
            vault.captures.capture_candidates([{**item, "confidence": 0.9}], source="agent")
        assert f"candidate 1: `{field}` holds U+D" in str(info.value), info.value
        assert "half of a UTF-16 pair. Nothing was written" in str(info.value)
    assert files(vault.root) == before
