"""A note's text as the editor sees it: bytes decoded as found, lines that keep their own endings.

Pure: bytes in, lines out, and back to the very same bytes. The encodings are the ones the
indexer accepts (`scan.read_note`): UTF-8 with or without a BOM, UTF-16 with a BOM, and anything
else as Windows-1252. A note is written back in its own encoding; text that encoding cannot hold
is refused, never converted. Line ends are LF, CRLF and a lone CR, as the parser counts lines.
"""

from __future__ import annotations

import codecs
import difflib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from vaultmem.errors import EditDoesNotApply

Encoding = Literal["utf-8", "utf-8-bom", "utf-16-le", "utf-16-be", "windows-1252"]

ENCODING_NAMES: dict[Encoding, str] = {
    "utf-8": "UTF-8",
    "utf-8-bom": "UTF-8 with a BOM",
    "utf-16-le": "UTF-16 (little-endian, with a BOM)",
    "utf-16-be": "UTF-16 (big-endian, with a BOM)",
    "windows-1252": "Windows-1252",
}

_BOMS: dict[Encoding, bytes] = {
    "utf-8-bom": codecs.BOM_UTF8,
    "utf-16-le": codecs.BOM_UTF16_LE,
    "utf-16-be": codecs.BOM_UTF16_BE,
}
_CODECS: dict[Encoding, str] = {
    "utf-8": "utf-8",
    "utf-8-bom": "utf-8",
    "utf-16-le": "utf-16-le",
    "utf-16-be": "utf-16-be",
}

# Windows-1252 leaves five bytes undefined (0x81 0x8D 0x8F 0x90 0x9D) and Python's codec refuses
# them. Mapped to the C1 control of the same number (as browsers do), every byte has exactly one
# character, so every legacy note round-trips. Bytes are read as Latin-1 and the 27 that differ
# remapped with str.translate (C speed: a 10 MB note must not decode in a Python loop).
_CP1252_UNDEFINED = (0x81, 0x8D, 0x8F, 0x90, 0x9D)
_CP1252_DECODE = {
    b: ord(bytes([b]).decode("cp1252")) for b in range(0x80, 0xA0) if b not in _CP1252_UNDEFINED
}
_CP1252_ENCODE: dict[int, int] = {char: byte for byte, char in _CP1252_DECODE.items()}
# a C1 control that no byte decodes to must not sneak out as the byte of the same number
_CP1252_ENCODE.update({b: 0xFFFF for b in _CP1252_DECODE})
_CP1252_ENCODE.update({b: b for b in _CP1252_UNDEFINED})

_LINE_END_RE = re.compile(r"\r\n|\r|\n")


class Unencodable(ValueError):
    """New text holds a character the note's encoding cannot store."""

    def __init__(self, encoding: Encoding, char: str, line: int) -> None:
        self.encoding = encoding
        self.char = char
        self.line = line
        super().__init__(
            f"{ENCODING_NAMES[encoding]} cannot hold {char!r} (U+{ord(char):04X}, line {line})"
        )


class Undecodable(ValueError):
    """Bytes that no accepted encoding reads back exactly (a broken UTF-16 file)."""


def decode(data: bytes) -> tuple[str, Encoding]:
    """The text of a note's bytes (without its BOM) and the encoding it was found in."""
    utf16: tuple[Encoding, ...] = ("utf-16-le", "utf-16-be")
    for encoding in utf16:
        bom = _BOMS[encoding]
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding), encoding
            except UnicodeDecodeError as exc:
                raise Undecodable(
                    f"starts with a UTF-16 BOM but is not valid UTF-16 (byte {exc.start + 2})"
                ) from None
    if data.startswith(codecs.BOM_UTF8):
        try:
            return data[3:].decode("utf-8"), "utf-8-bom"
        except UnicodeDecodeError:
            pass  # the indexer reads such a file as Windows-1252, BOM bytes and all
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1").translate(_CP1252_DECODE), "windows-1252"


def encode(text: str, encoding: Encoding) -> bytes:
    """`text` in `encoding` with its BOM; raises Unencodable for a character it cannot hold."""
    try:
        if encoding == "windows-1252":
            return text.translate(_CP1252_ENCODE).encode("latin-1")
        # surrogates cannot be stored in UTF-8 or UTF-16 files; the strict codecs refuse them
        return _BOMS.get(encoding, b"") + text.encode(_CODECS[encoding])
    except UnicodeEncodeError as exc:
        char = text[exc.start]
        line = len(_LINE_END_RE.findall(text, 0, exc.start)) + 1
        raise Unencodable(encoding, char, line) from None


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a note: its text and its own ending ("" for a last line without one)."""

    text: str
    end: str = "\n"


Lines = tuple[Line, ...]


def split_lines(text: str) -> Lines:
    """Lines as the parser numbers them: split on LF, CRLF and CR only, each keeping its end."""
    lines: list[Line] = []
    start = 0
    for m in _LINE_END_RE.finditer(text):
        lines.append(Line(text[start : m.start()], m.group()))
        start = m.end()
    if start < len(text):
        lines.append(Line(text[start:], ""))
    return tuple(lines)


def join_lines(lines: Sequence[Line]) -> str:
    return "".join(line.text + line.end for line in lines)


def plain_text(lines: Sequence[Line]) -> str:
    """The lines joined with LF, for the parser (whose line numbers then match these)."""
    return "\n".join(line.text for line in lines)


def dominant_ending(lines: Sequence[Line]) -> str:
    """The line end most lines use (the first seen on a tie); LF for a note without any."""
    counts = Counter(line.end for line in lines if line.end)
    return counts.most_common(1)[0][0] if counts else "\n"


def new_lines(text: str, ending: str) -> list[Line]:
    """Text given by a caller as lines ending in `ending`, split on any line end in it.

    One final line end only closes the last line: "a\nb\n" is two lines, "a\n\n" is "a" and
    a blank line, and "" is one blank line.
    """
    if text.endswith(("\n", "\r")):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    return [Line(part, ending) for part in _LINE_END_RE.split(text)]


def one_line(text: str, what: str) -> str:
    """`text`, refusing a line end in it where a single line is required."""
    if _LINE_END_RE.search(text):
        raise EditDoesNotApply(f"{what} must be one line; it holds a line break")
    return text


def unified_diff(path: str, before: Sequence[Line], after: Sequence[Line]) -> str:
    """The change as a unified diff (line ends not shown), to show before writing."""
    return "".join(
        f"{row}\n" if not row.endswith("\n") else row
        for row in difflib.unified_diff(
            [line.text for line in before],
            [line.text for line in after],
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
            lineterm="",
        )
    )
