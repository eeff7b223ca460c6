"""Memory writes through the one write path, hostile cases first: a note changed since it was
read (exit 6, nothing written), a symlink, a read-only file, another encoding, two writers at
once; then what each write does to the note and the index."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from tests.edit.conftest import READY_THEN_GO, child, wait_for, without_override
from tests.test_memories import MAYA, NOW, TODAY
from vaultmem.errors import CannotEdit, ChangedOnDisk, NoteNotFound
from vaultmem.memory.errors import LoopChanged, Refused
from vaultmem.vault import Vault

MAYA_PATH = "people/Maya Chen.md"


@pytest.fixture
def vault(make_vault: MakeVault) -> Vault:
    v = make_vault({MAYA_PATH: MAYA, "Priya.md": "# Priya\n"})
    v.reindex(embed=False)
    return v


def read(vault: Vault, path: str = MAYA_PATH) -> bytes:
    return (vault.root / path).read_bytes()


# --------------------------------------------------------------------------- hostile cases


def test_a_note_changed_since_it_was_read_is_not_written(vault: Vault) -> None:
    plan = vault.memory.writer.plan_fact("Maya", "home_city", "Hamburg", today=TODAY)
    assert plan.change is not None
    edited = MAYA.replace("Drinks", "Sometimes drinks")
    (vault.root / MAYA_PATH).write_text(edited, encoding="utf-8")  # Obsidian saves meanwhile
    with pytest.raises(ChangedOnDisk) as info:
        vault.apply(plan.change)
    assert info.value.exit_code == 6
    assert read(vault) == edited.encode()


def test_a_stale_digest_from_an_agent_is_refused(vault: Vault) -> None:
    digest = vault.memory.facts("Maya").digest
    assert digest is not None
    (vault.root / MAYA_PATH).write_text(MAYA + "\nmore\n", encoding="utf-8")
    with pytest.raises(ChangedOnDisk):
        vault.memory.set_fact("Maya", "home_city", "Hamburg", digest=digest, today=TODAY)
    assert read(vault) == (MAYA + "\nmore\n").encode()


def test_a_symlink_to_a_note_inside_the_vault_writes_its_target(make_vault: MakeVault) -> None:
    v = make_vault({"real/Bob.md": "# Bob\n\n- city:: Oslo\n"})
    os.symlink("real/Bob.md", v.root / "Bobby.md")
    v.reindex(embed=False)
    v.memory.set_fact("Bobby", "city", "Bergen", today=TODAY)
    assert (v.root / "Bobby.md").is_symlink()
    text = (v.root / "real" / "Bob.md").read_text(encoding="utf-8")
    assert "- city:: Bergen ^f-" in text and "    - was:: Oslo (until 2026-11-30)" in text


def test_a_symlink_out_of_the_vault_is_never_written(make_vault: MakeVault, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("- city:: Oslo\n", encoding="utf-8")
    v = make_vault({"Home.md": "# Home\n"})
    os.symlink(outside, v.root / "Out.md")
    v.reindex(embed=False)
    with pytest.raises((CannotEdit, NoteNotFound)):
        v.memory.set_fact("Out", "city", "Bergen", today=TODAY)
    assert outside.read_text(encoding="utf-8") == "- city:: Oslo\n"


def test_a_read_only_note_is_refused_and_left_as_it_is(vault: Vault) -> None:
    prefix = without_override()
    note = vault.root / MAYA_PATH
    note.chmod(0o444)
    (vault.root / "people").chmod(0o555)
    try:
        result = subprocess.run(
            [
                *prefix,
                sys.executable,
                "-m",
                "vaultmem",
                "--vault",
                str(vault.root),
                "fact",
                "set",
                "Maya",
                "home_city",
                "Hamburg",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "VAULTMEM_EMBEDDER": "fake"},
        )
    finally:
        (vault.root / "people").chmod(0o755)
        note.chmod(0o644)
    assert result.returncode == 1, result.stderr
    assert "read-only" in result.stderr or "ermission" in result.stderr
    assert read(vault) == MAYA.encode()


def test_another_encoding_is_kept_or_the_write_refused(make_vault: MakeVault) -> None:
    original = "# Café\r\n\r\n- city:: Orléans\r\n".encode("cp1252")
    v = make_vault({"Old.md": original})
    v.reindex(embed=False)
    v.memory.set_fact("Old", "city", "Besançon", today=TODAY)
    data = (v.root / "Old.md").read_bytes()
    assert data.startswith("# Café\r\n\r\n- city:: Besançon ^f-".encode("cp1252"))
    assert "    - was:: Orléans (until 2026-11-30)\r\n".encode("cp1252") in data
    with pytest.raises(CannotEdit, match="Windows-1252"):
        v.memory.set_fact("Old", "city", "東京", today=TODAY)
    assert (v.root / "Old.md").read_bytes() == data


def test_two_writers_on_one_key_one_wins_the_other_is_told(vault: Vault) -> None:
    """Both read the same revision; the second write finds the note changed (exit 6)."""
    first = vault.memory.writer.plan_fact("Maya", "home_city", "Hamburg", today=TODAY)
    second = vault.memory.writer.plan_fact("Maya", "home_city", "Munich", today=TODAY)
    assert first.change is not None and second.change is not None
    results: list[object] = []
    gate = threading.Barrier(2)

    def write(change: object) -> None:
        gate.wait()
        try:
            results.append(vault.apply(change))  # type: ignore[arg-type]
        except ChangedOnDisk as exc:
            results.append(exc)

    threads = [threading.Thread(target=write, args=(p.change,)) for p in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sorted(type(r).__name__ for r in results) == ["Applied", "ChangedOnDisk"]
    text = read(vault).decode()
    assert text.count("- home_city::") == 1 and text.count("was:: Berlin") == 1
    current = vault.memory.facts("Maya", "home_city").facts[0]
    assert current.value in ("Hamburg", "Munich")


def test_two_processes_setting_one_key_at_once(vault: Vault) -> None:
    """Two `fact set` commands race; each either wins or exits 6, nothing is lost or doubled."""
    env = {**os.environ, "VAULTMEM_EMBEDDER": "fake"}

    def start(value: str) -> subprocess.Popen[str]:
        args = ["--vault", str(vault.root), "fact", "set", "Maya", "home_city", value]
        return subprocess.Popen(
            [sys.executable, "-m", "vaultmem", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    procs = [start("Hamburg"), start("Munich")]
    codes = [p.wait(timeout=300) for p in procs]
    assert set(codes) <= {0, 6} and 0 in codes
    text = read(vault).decode()
    assert text.count("- home_city::") == 1
    assert text.count("was:: Berlin") == 1
    olds = text.count("was:: Hamburg") + text.count("was:: Munich")
    assert olds == (1 if codes == [0, 0] else 0)


# --------------------------------------------------------------------------- fact set


def test_fact_set_changes_keeps_history_and_reindexes(vault: Vault) -> None:
    done = vault.memory.set_fact("Maya", "home_city", "Hamburg", source="call", today=TODAY)
    assert done.plan.status == "changed" and done.touched == (MAYA_PATH,)
    fact = vault.memory.facts("Maya", "home_city").facts[0]  # the index knows at once
    assert (fact.value, fact.source, fact.block) == ("Hamburg", "call", "f-0002")
    assert [(h.value, h.until) for h in fact.history] == [("Berlin", TODAY)]
    assert vault.search("Hamburg", mode="keyword").hits[0].path == MAYA_PATH


def test_fact_set_same_value_writes_nothing(vault: Vault) -> None:
    before = os.stat(vault.root / MAYA_PATH).st_mtime_ns
    done = vault.memory.set_fact("Maya", "Employer", "HEATWISE GmbH.", today=TODAY)
    assert done.plan.status == "unchanged" and done.touched == ()
    assert os.stat(vault.root / MAYA_PATH).st_mtime_ns == before


def test_fact_set_new_key_goes_to_the_facts_section(vault: Vault) -> None:
    vault.memory.set_fact("Maya", "manager", "[[Priya]]", today=TODAY)
    lines = read(vault).decode().splitlines()
    at = lines.index("- home_city:: Berlin ^f-0002")
    assert lines[at + 1].startswith("- manager:: [[Priya]] ^f-")
    assert "people/Maya Chen.md" in {b.src_path for b in vault.backlinks("Priya")}


@pytest.mark.parametrize(
    "value",
    ["a:: b", "two\nlines", "x" * 10_240, "open [[link", "%% hidden", "ends ^block"],
    ids=["colons", "newline", "10KB", "broken-link", "comment", "block-id"],
)
def test_fact_set_refuses_values_and_writes_nothing(vault: Vault, value: str) -> None:
    with pytest.raises(Refused) as info:
        vault.memory.set_fact("Maya", "note", value, today=TODAY)
    assert info.value.exit_code == 2
    assert read(vault) == MAYA.encode()


def test_a_wikilink_value_is_written_as_a_link_and_kept_in_history(vault: Vault) -> None:
    """A value that is a wikilink stays one: the index reads the link (Priya gains a
    backlink) and the fact back exactly; changed again, the link lives on as history."""
    vault.memory.set_fact("Maya", "manager", "[[Priya|P.]]", today=TODAY)
    assert vault.memory.facts("Maya", "manager").facts[0].value == "[[Priya|P.]]"
    assert MAYA_PATH in {b.src_path for b in vault.backlinks("Priya")}
    vault.memory.set_fact("Maya", "manager", "Tom", today=TODAY)
    fact = vault.memory.facts("Maya", "manager").facts[0]
    assert (fact.value, fact.history[0].value) == ("Tom", "[[Priya|P.]]")


def test_fact_set_create_makes_the_entity_note(vault: Vault) -> None:
    with pytest.raises(NoteNotFound):
        vault.memory.set_fact("Tariff sync", "status", "green", today=TODAY)
    done = vault.memory.set_fact("Tariff sync", "status", "green", create=True, today=TODAY)
    assert done.plan.status == "created"
    text = (vault.root / "entities" / "Tariff sync.md").read_text(encoding="utf-8")
    assert text.startswith("## Facts\n- status:: green ^f-")
    assert vault.memory.facts("Tariff sync").facts[0].value == "green"


def test_fact_set_create_refuses_a_path_and_a_folder_is_no_entity(vault: Vault) -> None:
    with pytest.raises(Refused):
        vault.memory.set_fact("../../etc/passwd", "x", "y", create=True, today=TODAY)
    with pytest.raises(NoteNotFound, match="is a folder"):
        vault.memory.set_fact("people", "x", "y", create=True, today=TODAY)
    assert not (vault.root / "entities").exists()


def test_fact_set_cli_says_what_it_did(vault: Vault) -> None:
    from tests.test_cli_memory import run

    out = run(vault, "fact", "set", "Maya", "home_city", "Hamburg", "--source", "chat")
    assert out.exit_code == 0
    assert out.stdout == (
        "people/Maya Chen.md:12: home_city = 'Hamburg' (was 'Berlin', kept as history)\n"
    )
    again = run(vault, "fact", "set", "Maya", "home_city", "hamburg")
    assert "nothing changed" in again.stdout


# --------------------------------------------------------------------------- episodes


def test_episode_add_writes_a_note_the_index_knows(vault: Vault) -> None:
    done = vault.memory.add_episode(
        "Tariff sync: fixed",
        "success",
        when=dt.datetime(2026, 11, 29, 14, 5, tzinfo=dt.UTC),
        entities=["Maya Chen", "Tariff sync"],
        duration="90 min",
        body="Retries with backoff fixed the 502s.",
        now=NOW,
    )
    assert done.plan.path == "episodes/2026-11-29 Tariff sync - fixed.md"
    episode = vault.memory.episodes(entities=["Maya Chen"])[0]
    assert (episode.outcome, episode.duration, episode.summary) == (
        "success",
        "1h30m",
        "Retries with backoff fixed the 502s.",
    )
    again = vault.memory.add_episode("Tariff sync: fixed", "success", when=TODAY, now=NOW)
    assert again.plan.path == "episodes/2026-11-30 Tariff sync - fixed.md"


def test_episode_in_the_future_or_unreadable_is_refused(vault: Vault) -> None:
    from tests.test_cli_memory import run

    with pytest.raises(Refused):
        vault.memory.add_episode("Later", "success", when=NOW + dt.timedelta(days=3), now=NOW)
    bad = run(vault, "episode", "add", "X", "--outcome", "success", "--date", "someday soon")
    assert bad.exit_code == 2 and "cannot read the date" in bad.output
    assert not (vault.root / "episodes").exists()


# --------------------------------------------------------------------------- loops


def test_loop_add_then_resolve(vault: Vault) -> None:
    added = vault.memory.add_loop("Call Priya", "Maya", due=dt.date(2026, 12, 5), priority="high")
    assert added.plan.status == "added"
    loop_id = added.plan.block
    assert "- [ ] Call Priya ⏫ 📅 2026-12-05" in read(vault).decode()
    assert loop_id in {r.loop.id for r in vault.memory.loops(TODAY)}
    done = vault.memory.resolve_loop(str(loop_id), today=TODAY)
    assert done.plan.status == "resolved"
    assert "- [x] Call Priya ⏫ 📅 2026-12-05 ✅ 2026-11-30" in read(vault).decode()
    assert loop_id not in {r.loop.id for r in vault.memory.loops(TODAY)}


def test_loop_edited_in_obsidian_since_listed_is_left_alone(vault: Vault) -> None:
    loop_id = next(r.loop.id for r in vault.memory.loops(TODAY) if "tariff" in r.loop.title)
    edited = MAYA.replace("Send Maya the tariff sheet", "Send Maya the new tariff sheet")
    (vault.root / MAYA_PATH).write_text(edited, encoding="utf-8")
    with pytest.raises(LoopChanged, match="edited or removed"):
        vault.memory.resolve_loop(loop_id, today=TODAY)
    assert read(vault) == edited.encode()


def test_loop_add_refuses_bad_text(vault: Vault) -> None:
    for bad in ("", "two\nlines", "[ ] boxed", "%% x"):
        with pytest.raises(Refused):
            vault.memory.add_loop(bad, "Maya")
    assert read(vault) == MAYA.encode()


# --------------------------------------------------------------------------- prune


def test_prune_lists_then_moves_expired_notes_to_the_trash(make_vault: MakeVault) -> None:
    from tests.test_cli_memory import run

    v = make_vault(
        {
            "Scratch.md": "---\ndecay: session\ndate: 2026-11-01\n---\nscratch\n",
            "Keep.md": "---\ndecay: permanent\ndate: 2020-01-01\n---\nkeep\n",
            "Plain.md": "plain\n",
        }
    )
    v.reindex(embed=False)
    listed = run(v, "prune", "--now", "2026-11-30")
    assert listed.stdout == "Scratch.md  (session, expired 2026-11-02)\n"
    assert (v.root / "Scratch.md").exists()
    moved = run(v, "prune", "--yes", "--now", "2026-11-30", "--json")
    data = json.loads(moved.stdout)
    assert data["moved"] is True and [e["path"] for e in data["expired"]] == ["Scratch.md"]
    assert not (v.root / "Scratch.md").exists()
    assert (v.root / data["expired"][0]["trash_path"]).read_text() == (
        "---\ndecay: session\ndate: 2026-11-01\n---\nscratch\n"
    )
    assert sorted(n.path for n in v.note_names()) == ["Keep.md", "Plain.md"]


def test_the_memory_folders_come_from_the_config(make_vault: MakeVault) -> None:
    from vaultmem.config import unknown_key_warnings

    v = make_vault(
        {
            ".vaultmem/config.toml": '[memory]\nentities_folder = "people"\nentity_folder = "x"\n',
            "Home.md": "# Home\n",
        }
    )
    v.reindex(embed=False)
    assert unknown_key_warnings(v.config) == (
        "unknown key `memory.entity_folder` in .vaultmem/config.toml is ignored;"
        " did you mean `memory.entities_folder`?",
    )
    done = v.memory.set_fact("Ada", "role", "engineer", create=True, today=TODAY)
    assert done.plan.path == "people/Ada.md"


def test_fact_set_plans_from_the_index_what_it_planned_from_a_parse(
    sample_vault: Vault, make_vault: MakeVault
) -> None:
    """`fact set` takes the note's structure from the index for the revision it holds, and
    that structure is the parse's: front matter, headings, block ids and fields alike, so
    every plan is the one a fresh parse gives. Another revision, or a note read with a
    warning, is parsed again."""
    from vaultmem import store
    from vaultmem.edit import read_note
    from vaultmem.memory import facts as fc
    from vaultmem.memory.lines import parse_lines

    checked = 0
    for summary in sample_vault.note_names():
        source = read_note(sample_vault.root, summary.path)
        texts = [line.text for line in source.lines]
        got = store.indexed_structure(sample_vault.conn, summary.path, source.digest)
        if got is None:
            continue
        parsed = parse_lines(texts)
        assert (got.frontmatter, got.headings, got.blocks, got.fields) == (
            parsed.frontmatter,
            parsed.headings,
            parsed.blocks,
            parsed.fields,
        ), summary.path
        for key, value in (("role", "CTO"), ("brand_new_key", "x")):
            try:
                want = fc.plan_set(texts, key, value, TODAY)
            except Refused as exc:
                with pytest.raises(Refused, match=str(exc)[:30]):
                    fc.plan_set(texts, key, value, TODAY, note=got)
                continue
            assert fc.plan_set(texts, key, value, TODAY, note=got) == want
        checked += 1
    assert checked >= 20
    vault = make_vault({"a.md": "---\nx: [\n---\nkey:: v\n", "b.md": "key:: v\n"})
    vault.reindex(embed=False)
    broken = read_note(vault.root, "a.md")  # broken YAML: indexed with a warning
    assert store.indexed_structure(vault.conn, "a.md", broken.digest) is None
    assert store.indexed_structure(vault.conn, "b.md", "0" * 32) is None
    b = read_note(vault.root, "b.md")
    assert store.indexed_structure(vault.conn, "b.md", b.digest) is not None


# A child that waits for the go, then makes one memory write naming no revision.
MEMORY_RACE = (
    """
import sys, time
from pathlib import Path
from vaultmem.vault import Vault
root, go, ready = (Path(a) for a in sys.argv[1:4])
kind, n, round_ = sys.argv[4:]
vault = Vault(root)
vault.memory.entity("Maya")  # the index opened before the race
"""
    + READY_THEN_GO
    + """
m = vault.memory
if kind == "fact":
    m.set_fact("Maya", f"key_{n}", f"value {round_} {n}")
elif kind == "new-entity":
    m.set_fact(f"Newcomer {round_}", f"key_{n}", f"value {n}", create=True)
elif kind == "loop":
    m.add_loop(f"call back {round_} {n}", "Maya")
else:
    m.add_episode(f"standup {round_}", "success", body=f"by writer {n}")
"""
)


@pytest.mark.parametrize("kind", ["fact", "new-entity", "loop", "episode"])
def test_memory_writes_of_several_processes_at_once_all_land(
    vault: Vault, tmp_path: Path, kind: str
) -> None:
    """Writes that name no revision are planned on the note as the call reads it: one that
    another writer beat to the note (or to a new note's name) plans again on the note as it is
    then, rather than fail with exit code 6 or "exists already; choose another name"."""

    for round_ in range(2):
        go = tmp_path / f"go-{kind}-{round_}"
        ready = [tmp_path / f"ready-{kind}-{round_}-{n}" for n in range(3)]
        procs = [
            child(MEMORY_RACE, str(vault.root), str(go), str(r), kind, str(n), str(round_))
            for n, r in enumerate(ready)
        ]
        wait_for(lambda r=ready: all(f.exists() for f in r), "every child to be ready")  # type: ignore[misc]
        go.touch()
        outs = [p.communicate(timeout=300) for p in procs]
        assert [p.returncode for p in procs] == [0, 0, 0], [err[-400:] for _, err in outs]
        if kind == "fact":
            text = read(vault).decode()
            assert all(text.count(f"- key_{n}:: value {round_} {n}") == 1 for n in range(3))
        elif kind == "new-entity":
            text = read(vault, f"entities/Newcomer {round_}.md").decode()
            assert all(text.count(f"- key_{n}:: value {n}") == 1 for n in range(3)), text
        elif kind == "loop":
            text = read(vault).decode()
            assert all(text.count(f"- [ ] call back {round_} {n}") == 1 for n in range(3))
        else:
            notes = sorted((vault.root / "episodes").glob(f"* standup {round_}*.md"))
            bodies = sorted(p.read_text().rsplit("by writer ", 1)[1].strip() for p in notes)
            assert bodies == ["0", "1", "2"], [p.name for p in notes]
    assert vault.memory.facts("Maya").facts  # the index answers after the race


def test_text_that_is_not_unicode_is_refused_as_the_callers_not_the_notes(
    vault: Vault,
) -> None:
    # a byte that is not UTF-8 on a command line arrives as U+DCxx, and JSON can say
    # "\ud800": a loop or an episode title crashed with UnicodeEncodeError, and a fact value
    # was refused as if the note could not hold it ("Re-save the note as UTF-8")
    before = files_of(vault)
    for half in ("\udcff", "\ud800"):
        with pytest.raises(Refused, match=r"^the fact value holds U\+D[CF8]\w\w, which is not"):
            vault.memory.set_fact("Maya", "home_city", f"bad {half} byte", today=TODAY)
        with pytest.raises(Refused, match=r"^the loop text holds U\+D"):
            vault.memory.add_loop(f"call {half} back", "Maya")
        with pytest.raises(Refused, match=r"^the entity name holds U\+D"):
            vault.memory.set_fact(f"New{half}", "role", "x", create=True, today=TODAY)
    for control in ("\x00", "\n", "\x1b"):  # made "New Person.md" of "New Person\x00"
        with pytest.raises(Refused, match=r"^the entity name holds a control character"):
            vault.memory.set_fact(f"New Person{control}", "role", "x", create=True, today=TODAY)
    assert files_of(vault) == before
    written = vault.memory.add_episode("standup \udcff", "success", now=NOW)
    assert written.plan.path == f"episodes/{NOW.date().isoformat()} standup.md"


def files_of(vault: Vault) -> dict[str, bytes]:
    return {
        p.relative_to(vault.root).as_posix(): p.read_bytes()
        for p in sorted(vault.root.rglob("*"))
        if p.is_file() and ".vaultmem" not in p.parts
    }
