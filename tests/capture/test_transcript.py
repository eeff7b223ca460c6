"""Transcript readers: every format the issue lists, and bad input refused with a reason."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
from pathlib import Path

import pytest

from vaultmem.capture.errors import BadTranscript
from vaultmem.capture.transcript import decode, parse, read_bytes, transcripts_of

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "capture"


def read(name: str):  # type: ignore[no-untyped-def]
    return parse((FIXTURES / name).read_bytes(), name)


def test_plain_text_with_speaker_lines() -> None:
    t = read("plain.txt")
    assert t.format == "text"
    assert t.date == dt.datetime(2026, 11, 30)
    assert [(x.ref, x.speaker, x.role) for x in t.turns] == [
        ("1", "Maya", "speaker"),
        ("2", "Tom", "speaker"),
        ("3", "Maya", "speaker"),
        ("4", "Tom", "speaker"),
        ("5", "Maya", "speaker"),
    ]
    # a line without a known speaker continues the turn; a one-off `Note:` is no speaker
    assert (
        t.turns[2].text
        == "I work at Tidepool now, as the CTO.\nIt's a small team but we're growing."
    )
    assert t.turns[4].text.endswith("Note: the contract is the March one.")
    assert t.sha256 == hashlib.sha256((FIXTURES / "plain.txt").read_bytes()).hexdigest()


def test_markdown_with_bold_speakers_and_front_matter() -> None:
    t = read("chat.md")
    assert t.format == "markdown"
    assert t.title == "Planning call"
    assert t.date == dt.datetime(2026, 11, 28)
    assert [(x.speaker, x.role) for x in t.turns] == [
        ("User", "user"),
        ("Assistant", "assistant"),
        ("User", "user"),
    ]
    assert t.turns[0].text == "My favourite tea is genmaicha. I'm allergic to peanuts."


def test_markdown_headings_as_speakers() -> None:
    t = parse(b"## User\n\nI own a sailboat.\n\n## Assistant\n\nLovely.\n")
    assert [(x.role, x.text) for x in t.turns] == [
        ("user", "I own a sailboat."),
        ("assistant", "Lovely."),
    ]


def test_text_without_speakers_is_a_monologue_by_paragraph() -> None:
    t = parse(b"I started learning Portuguese.\n\nMy teacher is Rita.\n")
    assert [(x.speaker, x.text) for x in t.turns] == [
        ("user", "I started learning Portuguese."),
        ("user", "My teacher is Rita."),
    ]


def test_messages_list_skips_system_and_reads_content_parts() -> None:
    t = read("messages.json")
    assert t.format == "messages"
    assert [(x.ref, x.role, x.text) for x in t.turns] == [
        ("2", "user", "I live in Porto and I have two cats."),
        ("3", "assistant", "Two cats! What are their names?"),
        ("4", "user", "Remind me to buy cat food on Friday."),
    ]


def test_messages_object_and_json_lines() -> None:
    wrapped = parse(
        json.dumps({"messages": [{"role": "user", "content": "I like figs."}]}).encode()
    )
    lines = parse(
        b'{"role": "user", "content": "I like figs."}\n{"role": "assistant", "content": "Ok."}\n'
    )
    assert [x.text for x in wrapped.turns] == ["I like figs."]
    assert [x.role for x in lines.turns] == ["user", "assistant"]


def test_claude_export() -> None:
    t = read("claude.json")
    assert t.format == "claude"
    assert t.title == "Garden plans"
    assert [(x.role, x.text) for x in t.turns] == [
        ("user", "I prefer raised beds over open ground."),
        ("assistant", "Raised beds drain well."),
        ("user", "We agreed to plant garlic in December."),
    ]
    assert t.turns[0].when == dt.datetime(2026, 11, 20, 9, 0, 5, tzinfo=dt.UTC)


def test_chatgpt_export_follows_the_current_branch() -> None:
    t = read("chatgpt.json")
    assert t.format == "chatgpt"
    assert [x.text for x in t.turns] == [
        "My bike is a 2019 Brompton.",
        "Nice bike.",
        "I'll order a new chain next week.",
    ]  # the abandoned branch "x" is not read
    assert t.date is not None and t.date.year == 2025


def test_locomo_sample_sessions_with_their_dates() -> None:
    t = read("locomo_sample.json")
    assert t.format == "locomo"
    assert t.sessions == ("session_1", "session_2")  # session_3 has a date but no turns
    assert [x.ref for x in t.turns] == ["D1:1", "D1:2", "D2:1"]
    assert t.turns[0].when == dt.datetime(2023, 5, 8, 13, 56)
    second = t.session("session_2")
    assert [x.ref for x in second.turns] == ["D2:1"]
    assert second.date == dt.datetime(2023, 5, 25, 13, 14)
    assert second.sha256 != t.sha256 != t.session("1").sha256
    assert [len(s.turns) for s in transcripts_of([t])] == [2, 1]


def test_locomo_session_list_alone() -> None:
    t = parse(json.dumps([{"speaker": "Jon", "dia_id": "D3:1", "text": "I lost my job."}]).encode())
    assert (t.format, t.turns[0].ref, t.turns[0].speaker) == ("locomo", "D3:1", "Jon")


def test_longmemeval_record() -> None:
    t = read("longmemeval.json")
    assert t.format == "longmemeval"
    assert t.sessions == ("answer_1",)
    assert t.turns[0].when == dt.datetime(2023, 5, 21, 19, 50)
    assert [x.role for x in t.turns] == ["user", "assistant"]


def test_unknown_session_names_the_ones_there() -> None:
    with pytest.raises(BadTranscript, match="session_1, session_2"):
        read("locomo_sample.json").session("session_9")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"  \n\n ", "empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        (b"caf\xe9 au lait: I like it", "not UTF-8"),
        (b"[]", "empty JSON list"),
        (b'[{"role": "user", "content": "I like', "malformed|not"),
        (b'{"foo": 1}', "no transcript"),
        (b'[{"role": "user"}]', "message 1 has no `content`"),
        (b'[{"content": "x", "role": 5}]', "message 1 has no `role`"),
        (b"[1, 2]", "list of objects"),
        (b'[{"conversation": {"speaker_a": "A"}}]', "no session of turns"),
        (b'[{"title": "t", "mapping": 3}]', "no `mapping`"),
        (b'[{"role": "user", "content": "   "}]', "no message with text"),
    ],
)
def test_bad_input_is_refused_with_a_reason(data: bytes, message: str) -> None:
    with pytest.raises(BadTranscript, match=message):
        parse(data, "t.json")


def test_a_chatgpt_loop_of_parents_is_refused() -> None:
    conv = {"mapping": {"a": {"parent": "b", "message": None},
                        "b": {"parent": "a", "message": None}},
            "current_node": "a"}  # fmt: skip
    with pytest.raises(BadTranscript, match="loop"):
        parse(json.dumps([conv]).encode())


def test_utf16_with_bom_and_another_language() -> None:
    text = "Ana: Eu moro em Lisboa.\nRui: Que bom!\nAna: Gosto de chá.\n"
    t = parse(text.encode("utf-16"))
    assert [x.speaker for x in t.turns] == ["Ana", "Rui", "Ana"]
    assert t.turns[0].text == "Eu moro em Lisboa."


def test_a_huge_transcript_is_refused_without_being_read_whole() -> None:
    class Counting(io.RawIOBase):
        """50 MB of text that counts what is read from it."""

        def __init__(self) -> None:
            self.given = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
            n = min(len(buffer), 50 * 1024 * 1024 - self.given)
            buffer[:n] = b"a" * n
            self.given += n
            return n

    stream = Counting()
    with pytest.raises(BadTranscript, match="larger than 1 MB"):
        read_bytes(io.BufferedReader(stream), limit=1024 * 1024)
    assert stream.given <= 1024 * 1024 + 64 * 1024  # the limit and a buffer, not 50 MB


def test_decode_keeps_a_bom_out_of_the_text() -> None:
    assert decode("\ufeffMaya: hi".encode()) == "Maya: hi"
