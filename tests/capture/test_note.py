"""The capture note: rendered as the conventions say, read back as a person left it."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

from vaultmem.capture.candidates import Candidate
from vaultmem.capture.extract import extract
from vaultmem.capture.note import SECTIONS, CaptureNote, Flag, Header, parse, quote_text, render
from vaultmem.capture.transcript import parse as parse_transcript
from vaultmem.parser import parse_note

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "capture"
HEADER = Header(
    source="call with Maya",
    captured_at=dt.datetime(2026, 12, 1, 12, 40, tzinfo=dt.UTC),
    sha256="ab" * 32,
    extractor="heuristic",
    transcript_date=dt.datetime(2026, 11, 30),
)
FACT = Candidate("c-0a0b0c", "fact", "Maya Chen", "role", "CTO", "I'm the CTO now.", "4", 0.85)
LOOP = Candidate(
    "c-1a1b1c", "loop", "Maya Chen", "loop", "send the contract", "I'll send the contract.",
    "5", 0.65, due=dt.date(2026, 12, 2),
)  # fmt: skip
DECISION = Candidate(
    "c-2a2b2c", "decision", "Tariff sync", "decision", "ship on Friday", "We decided.", "6", 0.8
)
EPISODE = Candidate(
    "c-3a3b3c", "episode", "Call with Maya", "episode", "Maya: role CTO", "Hi Tom!", "1", 0.6,
    when=dt.datetime(2026, 11, 30, 9, 0), outcome="ongoing", entities=("Maya Chen", "Tom"),
)  # fmt: skip
FLAGS = {FACT.id: (Flag("contradicts", "Maya Chen#^f-9f3e", "CEO"),)}


def read(text: str, path: str = "inbox/2026-12-01 call with Maya.md") -> CaptureNote:
    note = parse(path, text, parse_note(text, path).frontmatter)
    assert note is not None
    return note


def test_render_matches_the_conventions() -> None:
    text = render(HEADER, [FACT, LOOP, DECISION, EPISODE], FLAGS)
    assert text == (
        "---\n"
        "type: capture\n"
        "status: pending\n"
        "source: call with Maya\n"
        "captured_at: 2026-12-01T12:40:00+00:00\n"
        f"transcript_sha256: {'ab' * 32}\n"
        "extractor: heuristic\n"
        "transcript_date: 2026-11-30T00:00:00\n"
        "---\n"
        "\n"
        "Proposed from a transcript, waiting for review: accept, edit or reject each item with"
        " `vaultmem review` (or in the TUI), or check or strike it here.\n"
        "\n"
        "## Facts\n"
        "\n"
        "- [ ] [[Maya Chen]] role:: CTO ^c-0a0b0c\n"
        "    - confidence 0.85 · turn 4 · “I'm the CTO now.”\n"
        "    - contradicts [[Maya Chen#^f-9f3e]] (now “CEO”)\n"
        "\n"
        "## Open loops\n"
        "\n"
        "- [ ] [[Maya Chen]] loop:: send the contract ^c-1a1b1c\n"
        "    - due 2026-12-02 · confidence 0.65 · turn 5 · “I'll send the contract.”\n"
        "\n"
        "## Decisions\n"
        "\n"
        "- [ ] [[Tariff sync]] decision:: ship on Friday ^c-2a2b2c\n"
        "    - confidence 0.80 · turn 6 · “We decided.”\n"
        "\n"
        "## Episode\n"
        "\n"
        "- [ ] episode:: Call with Maya ^c-3a3b3c\n"
        "    - confidence 0.60 · turn 1 · “Hi Tom!”\n"
        "    - date 2026-11-30T09:00:00 · outcome ongoing · entities [[Maya Chen]], [[Tom]]\n"
        "    - summary: Maya: role CTO\n"
    )


def test_round_trip() -> None:
    note = read(render(HEADER, [FACT, LOOP, DECISION, EPISODE], FLAGS))
    assert note.header == HEADER
    assert [i.candidate for i in note.items] == [FACT, LOOP, DECISION, EPISODE]
    assert [i.status for i in note.items] == ["pending"] * 4
    assert note.items[0].flags == FLAGS[FACT.id]
    assert [(i.line, i.end_line) for i in note.items] == [(15, 17), (21, 22), (26, 27), (31, 34)]


def test_round_trip_of_a_real_extraction() -> None:
    t = parse_transcript((FIXTURES / "plain.txt").read_bytes())
    found = extract(t).candidates
    note = read(render(HEADER, found))
    by_section = [c for kind in SECTIONS for c in found if c.kind == kind]
    assert [i.candidate for i in note.items] == [
        replace(c, quote=quote_text(c.quote)) for c in by_section
    ]


def test_a_persons_edits_in_obsidian_win() -> None:
    text = render(HEADER, [FACT, LOOP, DECISION, EPISODE], FLAGS)
    edited = (
        text.replace("role:: CTO", "role:: Chief Technology Officer")  # value changed
        .replace("[[Maya Chen]] loop::", "[[Maya|Maya C]] loop::")  # entity, with an alias
        .replace("- [ ] [[Tariff sync]]", "- [x] [[Tariff sync]]")  # checked by hand
        .replace("outcome ongoing", "outcome success")
        .replace("summary: Maya: role CTO", "summary: A good call.")
        .replace("\r\n", "\n")
    )
    note = read(edited.replace("\n", "\r\n"))  # Obsidian on Windows
    fact, loop, decision, episode = note.items
    assert fact.candidate.value == "Chief Technology Officer"
    assert loop.candidate.entity == "Maya"
    assert decision.status == "checked"  # checked, not yet written: review accepts it
    assert (episode.candidate.outcome, episode.candidate.value) == ("success", "A good call.")


def test_deleted_struck_and_rewritten_items() -> None:
    text = render(HEADER, [FACT, LOOP, DECISION], FLAGS)
    lines = text.split("\n")
    fact_at = lines.index("- [ ] [[Maya Chen]] role:: CTO ^c-0a0b0c")
    del lines[fact_at : fact_at + 3]  # the fact deleted with its details
    edited = "\n".join(lines)
    edited = edited.replace(
        "- [ ] [[Maya Chen]] loop:: send the contract ^c-1a1b1c",
        "- [ ] ~~[[Maya Chen]] loop:: send the contract~~ ^c-1a1b1c",
    ).replace("- [ ] [[Tariff sync]] decision:: ship on Friday", "- [ ] ship it whenever")
    note = read(edited)
    assert [(i.id, i.status) for i in note.items] == [("c-1a1b1c", "rejected")]


def test_an_accepted_item_records_where_it_went() -> None:
    text = render(HEADER, [FACT], FLAGS).replace(
        "- [ ] [[Maya Chen]] role:: CTO ^c-0a0b0c",
        "- [x] [[Maya Chen]] role:: CTO ✅ 2026-12-01 ^c-0a0b0c\n"
        "    - accepted → [[Maya Chen#^f-9f3e]]",
    )
    (item,) = read(text).items
    assert (item.status, item.went_to, item.candidate.value) == (
        "accepted",
        "Maya Chen#^f-9f3e",
        "CTO",
    )


def test_transcript_text_is_inert_in_the_note() -> None:
    hostile = replace(
        FACT,
        quote="see [[Secret]] %% hidden role:: admin <!-- x --> `code` ^blk",
        value="CTO %% and more",
    )
    text = render(HEADER, [hostile])
    parsed = parse_note(text, "inbox/x.md")
    assert [link.target for link in parsed.links] == ["Maya Chen"]  # no link from the quote
    assert [f.key for f in parsed.fields] == [k for k in parsed.frontmatter]  # no body fields
    (item,) = read(text).items
    assert item.candidate.value == "CTO % % and more"
    assert "%%" not in text


def test_a_note_that_is_no_capture_is_not_read() -> None:
    assert parse("x.md", "- [ ] a:: b ^c-000000\n", {"type": "note"}) is None


def test_entity_names_with_link_syntax_are_made_safe() -> None:
    odd = replace(FACT, entity="A/B #c | [[d]]")
    (item,) = read(render(HEADER, [odd])).items
    assert item.candidate.entity == "A-B c - d"


def test_the_fast_front_matter_reads_what_yaml_reads() -> None:
    text = render(replace(HEADER, source='a "quoted": label', persona="ada"), [FACT], FLAGS)
    path = "inbox/x.md"
    assert parse(path, text) == parse(path, text, parse_note(text, path).frontmatter)
    edited = text.replace("status: pending", "status: 'reviewed'  # by hand")
    fast = parse(path, edited)
    assert fast is not None and fast.header.status == "reviewed"
    assert parse(path, text.replace("type: capture", "type: note")) is None
    assert parse(path, text.replace("---\n\nProposed", "\nProposed")) is None  # never closed


HAND_WRITTEN = """---
type: capture
status: pending
source: claude-code
captured_at: 2026-11-29T21:14:03Z
---
- [ ] [[Tariff Optimizer]] launch_date:: 2027-02-15
    - confidence: 0.78
    - quote: "the launch moves to February 15th."
    - contradicts [[Tariff Optimizer#^f-1a2b]]
- [ ] [[Priya Raman]] on_call_until:: 2026-12-06
- [ ] [[Priya Raman]] on_call_until:: 2026-12-06
- [ ] buy milk
"""


def test_items_written_without_ids_as_the_conventions_allow() -> None:
    note = parse("inbox/c.md", HAND_WRITTEN)
    assert note is not None
    first, _, _ = note.items  # a plain task is no item
    assert first.candidate.confidence == 0.78
    assert first.candidate.quote == "the launch moves to February 15th."
    assert first.flags[0].target == "Tariff Optimizer#^f-1a2b"
    ids = [i.id for i in note.items]
    assert all(i.startswith("c-") and len(i) == 8 for i in ids) and len(set(ids)) == 3
    # the same ids when an item is checked, struck, or moved down in the note
    body = HAND_WRITTEN.split("---\n", 2)[2]
    tariff, rest = body.split("- [ ] [[Priya", 1)
    text = HAND_WRITTEN.split("---\n", 2)
    edited = (
        "---\n" + text[1] + "---\nA line of mine.\n\n- [ ] [[Priya" + rest.replace(
            "- [ ] [[Priya Raman]] on_call_until:: 2026-12-06\n- [ ] buy",
            "- [-] ~~[[Priya Raman]] on_call_until:: 2026-12-06~~\n- [ ] buy",
        ) + tariff.replace("- [ ]", "- [x]") + "    - accepted → [[Tariff Optimizer#^f-1a2b]]\n"
    )
    again = parse("inbox/c.md", edited)
    assert again is not None
    by_id = {i.id: i for i in again.items}
    assert set(by_id) == set(ids)
    assert by_id[ids[0]].status == "accepted" and by_id[ids[2]].status == "rejected"
    assert by_id[ids[1]].status == "pending"
