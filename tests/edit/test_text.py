"""Bytes to lines and back: every note the indexer reads round-trips byte for byte."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.edit.text import (
    Encoding,
    Line,
    Undecodable,
    Unencodable,
    decode,
    dominant_ending,
    encode,
    join_lines,
    new_lines,
    one_line,
    split_lines,
)
from vaultmem.errors import EditDoesNotApply
from vaultmem.parser import parse_note
from vaultmem.scan import read_note as index_read

ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])
# line text: any characters but line ends (NUL, form feeds, U+2028 and the BOM character
# included, which must neither split a line nor be lost)
LINE_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"))


@st.composite
def notes(draw: st.DrawFn) -> tuple[list[Line], bool]:
    texts = draw(st.lists(LINE_TEXT, max_size=12))
    lines = [Line(t, draw(ENDINGS)) for t in texts]
    final_newline = draw(st.booleans())
    if lines and not final_newline:
        lines[-1] = Line(lines[-1].text, "")
    return lines, final_newline


@given(notes(), st.sampled_from(["utf-8", "utf-8-bom", "utf-16-le", "utf-16-be"]))
@settings(max_examples=300, deadline=None)  # loaded machines: no time limit
def test_unicode_notes_round_trip_byte_for_byte(
    note: tuple[list[Line], bool], encoding: Encoding
) -> None:
    lines, _ = note
    data = encode(join_lines(lines), encoding)
    text, found = decode(data)
    # a UTF-8 text starting with U+FEFF is a BOM once written: found as UTF-8 with a BOM
    assert found == encoding or (encoding == "utf-8" and found == "utf-8-bom")
    source = split_lines(text)
    assert encode(join_lines(source), found) == data
    assert (bool(source) and source[-1].end != "") == text.endswith(("\n", "\r"))


@given(st.binary(max_size=400))
@settings(max_examples=500, deadline=None)  # loaded machines: no time limit
def test_any_bytes_either_round_trip_or_are_refused(data: bytes) -> None:
    try:
        text, encoding = decode(data)
    except Undecodable:
        assert data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
        return
    assert encode(join_lines(split_lines(text)), encoding) == data


@given(notes())
@settings(max_examples=200, deadline=None)  # loaded machines: no time limit
def test_lines_are_numbered_as_the_parser_numbers_them(note: tuple[list[Line], bool]) -> None:
    # the parser drops NULs (so a last line of nothing but NULs is not counted: no line
    # before it moves) and a leading U+FEFF (the BOM, which decoding already took off)
    text = join_lines(note[0]).replace("\x00", "x").removeprefix("\ufeff")
    assert len(split_lines(text)) == parse_note(text, "n.md").line_count


@given(st.lists(st.sampled_from(["a", "é", "€", "\x81", "ÿ", "\x00", "\r\n", "\n", "\r"])))
@settings(deadline=None)
def test_windows_1252_notes_round_trip_every_byte(parts: list[str]) -> None:
    text = "".join(parts)
    data = encode(text, "windows-1252")
    assert decode(data + b"\xff\x81")[1] == "windows-1252"  # not valid UTF-8 with those bytes
    assert decode(data + b"\xff\x81")[0] == text + "ÿ\x81"


def test_encodings_are_found_as_the_indexer_decodes_them(tmp_path: Path) -> None:
    cases = {
        "plain.md": (b"ascii only\n", "utf-8"),
        "bom.md": (codecs.BOM_UTF8 + "café\r\n".encode(), "utf-8-bom"),
        "le.md": (codecs.BOM_UTF16_LE + "café\n".encode("utf-16-le"), "utf-16-le"),
        "be.md": (codecs.BOM_UTF16_BE + "café\n".encode("utf-16-be"), "utf-16-be"),
        "latin.md": ("café € 1\n".encode("cp1252"), "windows-1252"),
        "bom-then-latin.md": (codecs.BOM_UTF8 + b"caf\xe9\n", "windows-1252"),
    }
    for name, (data, expected) in cases.items():
        (tmp_path / name).write_bytes(data)
        text, found = decode(data)
        assert found == expected, name
        indexed = index_read(tmp_path / name).text
        assert text == indexed.removeprefix("\ufeff"), name


def test_a_character_the_encoding_cannot_hold_is_refused_with_its_line() -> None:
    with pytest.raises(Unencodable) as caught:
        encode("one\r\ntwo ✅\n", "windows-1252")
    assert (caught.value.char, caught.value.line) == ("✅", 2)
    assert "Windows-1252 cannot hold '✅' (U+2705, line 2)" in str(caught.value)
    # a C1 control no byte decodes to must not come out as the byte of the same number (€)
    with pytest.raises(Unencodable):
        encode("\x80", "windows-1252")
    assert encode("\x81", "windows-1252") == b"\x81"  # an undefined byte read earlier
    with pytest.raises(Unencodable):
        encode("lone \udc80 surrogate", "utf-8")


def test_broken_utf16_is_refused() -> None:
    with pytest.raises(Undecodable, match="not valid UTF-16"):
        decode(codecs.BOM_UTF16_LE + b"a\x00b")  # odd length


def test_split_lines_keeps_each_ending_and_a_missing_final_one() -> None:
    assert split_lines("a\r\nb\rc\nd") == (
        Line("a", "\r\n"),
        Line("b", "\r"),
        Line("c", "\n"),
        Line("d", ""),
    )
    assert split_lines("") == ()
    assert split_lines("\n") == (Line("", "\n"),)
    assert split_lines("a\x0cb\u2028c\x00\n") == (Line("a\x0cb\u2028c\x00", "\n"),)


def test_dominant_ending() -> None:
    assert dominant_ending(split_lines("a\r\nb\r\nc\n")) == "\r\n"
    assert dominant_ending(split_lines("a\rb\n")) == "\r"  # a tie: the first seen
    assert dominant_ending(split_lines("no ending")) == "\n"
    assert dominant_ending(()) == "\n"


def test_new_lines_split_on_any_ending_and_one_final_ending_closes_the_last() -> None:
    assert new_lines("a\r\nb\rc\nd", "\r\n") == [Line(x, "\r\n") for x in "abcd"]
    assert new_lines("a\n", "\n") == [Line("a")]
    assert new_lines("a\n\n", "\n") == [Line("a"), Line("")]
    assert new_lines("", "\n") == [Line("")]


def test_one_line_refuses_any_line_end() -> None:
    assert one_line("fine", "x") == "fine"
    for bad in ("a\nb", "a\r", "\r\n"):
        with pytest.raises(EditDoesNotApply, match="must be one line"):
            one_line(bad, "the value")
