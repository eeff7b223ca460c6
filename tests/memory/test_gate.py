"""The memory gate: verdicts, searches spared, hit strength, hostile input, the --llm parser."""

from __future__ import annotations

import pytest

from vaultmem.memory.errors import Refused
from vaultmem.memory.gate import (
    HIT_STRONG,
    HIT_WEAK,
    LLM_PROMPT,
    classify,
    hit_strength,
    parse_llm_answer,
)
from vaultmem.memory.mentions import EntityName, NameIndex

NAMES = [
    EntityName("people/Maya Chen.md", ("Maya Chen", "Maya")),
    EntityName("people/Tom.md", ("Tom",)),
    EntityName("projects/Heat pump.md", ("Heat pump",)),
    EntityName("projects/Tariff sync.md", ("Tariff sync",)),
]


@pytest.mark.parametrize(
    "message",
    [
        "where did we leave off on the tariff sync?",
        "what did you recommend for my knee pain last time?",
        "when did I last see the dentist?",
        "what's my landlord's phone number?",
        "did Maya send the contract?",
        "what did we decide about the paint colour?",
        "remind me what I promised Tom",
        "the heat pump is making that noise again, what did the installer say?",
        "Can you recommend a hotel that I would like in Lisbon?",
        "wo waren wir stehen geblieben?",
    ],
)
def test_needs_memory(message: str) -> None:
    d = classify(message, NAMES)
    assert (d.verdict, d.search, d.exit_code) == ("needs-memory", True, 0), d.reasons
    assert d.reasons


@pytest.mark.parametrize(
    ("message", "why"),
    [
        ("hello", "a greeting or thanks"),
        ("thanks, that worked!", "a greeting or thanks"),
        ("translate 'Maya will be late' into French", "material it carries"),
        ("rewrite this to sound professional: we left off the tariff sync", "material it carries"),
        ("what's 17 * 23?", "arithmetic"),
        ("convert 5 miles to km", "arithmetic"),
        ("how does a heat pump work?", "general-knowledge"),
        ("who was Tom Hanks's first wife?", "general-knowledge"),
        ("how do I reverse a string in JavaScript?", "programming help"),
        ("write a poem about autumn", "creative"),
        ("what's the right way to say I'm full in French?", "language"),
    ],
)
def test_no_memory_spared_a_search(message: str, why: str) -> None:
    d = classify(message, NAMES)
    assert (d.verdict, d.search, d.exit_code) == ("no-memory", False, 2), d.reasons
    assert any(why in r for r in d.reasons), d.reasons


def test_undecided_messages_are_decided_by_the_best_hit() -> None:
    message = "thoughts on the cabin wifi password"
    offline = classify(message, NAMES)
    assert (offline.verdict, offline.search) == ("no-memory", True)
    assert classify(message, NAMES, best_hit=HIT_STRONG).verdict == "needs-memory"
    assert classify(message, NAMES, best_hit=HIT_STRONG - 0.01).verdict == "no-memory"


def test_nothing_stored_when_a_memory_question_finds_nothing() -> None:
    message = "when is my next dentist appointment?"
    assert classify(message, NAMES).verdict == "needs-memory"
    d = classify(message, NAMES, best_hit=HIT_WEAK - 0.01)
    assert (d.verdict, d.exit_code) == ("nothing-stored", 3)
    assert classify(message, NAMES, best_hit=HIT_WEAK).verdict == "needs-memory"
    # a named note is stored memory, whatever the hits say
    assert classify("did Maya send the contract?", NAMES, best_hit=0.0).verdict == "needs-memory"


def test_entity_matches_and_query_are_returned() -> None:
    d = classify("is the tariff sync release still blocked?", NAMES)
    assert [m.path for m in d.entities] == ["projects/Tariff sync.md"]
    assert d.query == "tariff sync release blocked"
    assert d.to_json()["verdict"] == "needs-memory"


def test_hit_strength_is_topic_coverage() -> None:
    assert hit_strength("cabin wifi password", "Cabin: the wifi password is on the fridge") == 1.0
    assert hit_strength("cabin wifi password", "Router manual") == 0.0


def test_hostile_messages() -> None:
    with pytest.raises(Refused, match="empty message"):
        classify("   \n ", NAMES)
    huge = "what did we decide about the tariff sync? " + "lorem ipsum " * 50_000
    assert classify(huge, NAMES).verdict == "needs-memory"  # the head is read
    pasted = "fix the grammar in this:\n" + "me and him goes to the store. " * 2000
    assert classify(pasted, NAMES).verdict == "no-memory"
    assert classify("日本の首都はどこですか？", NAMES).verdict == "no-memory"
    assert classify("\x00\x01 binary \ufffd junk", NAMES).verdict == "no-memory"


def test_a_huge_message_is_read_by_its_head_and_tail_only() -> None:
    """Past LONG_MESSAGE characters the gate reads the head and the tail: a cue buried in
    pasted text does not make it search; one at the end (the question after a paste) does."""
    filler = "lorem ipsum dolor sit amet " * 400  # ~10,800 characters, no cue
    buried = filler + "where did we leave off on the tariff sync " + filler
    d = classify(buried, NAMES)
    assert d.verdict == "no-memory" and not any("continuation" in r for r in d.reasons)
    asked = filler + filler + " where did we leave off on the tariff sync?"
    d = classify(asked, NAMES)
    assert d.verdict == "needs-memory" and any("continuation" in r for r in d.reasons)
    assert len(d.query) < 4000  # what it searches for is bounded too


# --------------------------------------------------------------------------- --llm


def test_llm_prompt_holds_the_message() -> None:
    assert "where were we" in LLM_PROMPT.format(message="where were we")


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ("MEMORY", "needs-memory"),
        ("none", "no-memory"),
        ("  Memory.\n", "needs-memory"),
        ("<think>the user asks about their past... NONE?</think>\nMEMORY", "needs-memory"),
        ('{"memory": false}', "no-memory"),
        ('{"verdict": "needs-memory"}', "needs-memory"),
        ("`NONE`", "no-memory"),
        ("Answer: memory", "needs-memory"),
    ],
)
def test_llm_answers_read(answer: str, verdict: str) -> None:
    assert parse_llm_answer(answer) == verdict


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "   ",
        "MEMORY or NONE",
        "I think it could go either way depending on context.",
        "maybe",
        '{"memory": "perhaps"}',
        "[1, 2]",
        '{"unclosed": ',
        "x" * 1000,
        "The message asks about something, so my answer is that it needs the user's MEMORY to be"
        " answered well in this case",
        "<think>MEMORY",
    ],
)
def test_llm_garbage_refused(answer: str) -> None:
    assert parse_llm_answer(answer) is None


def test_names_may_be_a_one_shot_iterable_or_an_index() -> None:
    once = classify("did Maya send the contract?", iter(NAMES))
    assert once.verdict == "needs-memory" and [m.path for m in once.entities] == [
        "people/Maya Chen.md"
    ]
    assert classify("did Maya send the contract?", NameIndex(NAMES)) == once
