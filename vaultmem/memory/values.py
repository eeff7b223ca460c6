"""Fact keys and values: what vaultmem will write into a fact line, and when two are the same.

A value is refused, with what to do instead, when it could not be written faithfully as one
Dataview field on one line (docs/memory.md has the table); two values are the same when they
differ only in case, spacing or punctuation (`normalise`).
"""

from __future__ import annotations

import re
import unicodedata

from vaultmem.memory.errors import Refused
from vaultmem.parser import split_link_ref

MAX_VALUE_CHARS = 1000
MAX_SOURCE_CHARS = 300
HISTORY_KEY = "was"  # `- was:: old (until …)`, nested under a fact
SOURCE_KEY = "source"  # `- source:: …`, nested under a fact
KEY_PATTERN = r"[^\W\d_](?:[\w \-/.]*?\w)?|_\w*"  # the parser's Dataview key pattern
_BLOCK_RE = re.compile(r"[ \t]+\^(?P<id>[A-Za-z0-9][A-Za-z0-9\-]*)[ \t]*$")
_WIKILINK_RE = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]")
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


# --------------------------------------------------------------------------- normalising


def key_id(key: str) -> str:
    """Keys compare the way Dataview reads them: case-insensitive, spaces and hyphens alike."""
    return re.sub(r"[\s\-]+", "-", unicodedata.normalize("NFKC", key).strip().strip("*")).casefold()


def normalise(value: str) -> str:
    """A value as dedup compares it: case, spacing and punctuation folded.

    Punctuation between two letters or digits stays ("3.5" is not "35", "a@b.io" keeps its
    dots), anywhere else it is a space; a wikilink compares as its target (`[[Maya Chen|Maya]]`
    is `[[Maya Chen]]`); symbols such as `$` or `+` stay.
    """
    text = unicodedata.normalize("NFKC", value)
    text = _WIKILINK_RE.sub(lambda m: " " + _link_target(m.group(1)) + " ", text).casefold()
    out: list[str] = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch).startswith("P"):
            before = text[i - 1] if i else ""
            after = text[i + 1] if i + 1 < len(text) else ""
            out.append(ch if before.isalnum() and after.isalnum() else " ")
        else:
            out.append(ch)
    return " ".join("".join(out).split())


def _link_target(inner: str) -> str:
    ref = split_link_ref(inner)
    return ref.target if ref is not None and ref.target else inner


# --------------------------------------------------------------------------- checking input


def refuse_unpaired(text: str, what: str) -> None:
    """Refused when `text` holds half of a UTF-16 pair (U+D800-U+DFFF): no encoding holds one.
    It comes from bytes that were not UTF-8 (a command line decodes them so) or from JSON's
    `\\ud800` escapes; refused here, it never reaches a note or reads as the note's fault."""
    bad = next((c for c in text if "\ud800" <= c <= "\udfff"), None)
    if bad is not None:
        raise Refused(
            f"{what} holds U+{ord(bad):04X}, which is not a character (bytes that are not"
            " UTF-8, or half of a UTF-16 pair): give the text in UTF-8"
        )


def check_key(key: str) -> str:
    """The key, trimmed, or Refused with what a key may be."""
    cleaned = key.strip()
    if not cleaned:
        raise Refused("empty fact key: give a key such as `role` or `birthday`")
    if any(c in cleaned for c in _BREAKS) or "::" in cleaned:
        raise Refused(f"fact key {cleaned[:40]!r} must be one line without `::`")
    if not re.fullmatch(KEY_PATTERN, cleaned):
        raise Refused(
            f"fact key {cleaned[:40]!r} is not a Dataview field name: start with a letter, then"
            " letters, digits, spaces, `-`, `_`, `/` or `.` (e.g. `home city`)"
        )
    if key_id(cleaned) in (HISTORY_KEY, SOURCE_KEY):
        raise Refused(f"`{cleaned}` is reserved for a fact's history and source; use another key")
    return cleaned


def check_value(value: str, what: str = "value", limit: int = MAX_VALUE_CHARS) -> str:
    """The value trimmed, or Refused naming what cannot go into one fact line and why."""
    text = value.strip(" \t")
    if not text.strip():  # a no-break space alone reads back as no value at all
        raise Refused(f"empty fact {what}: a fact needs a value (to drop a fact, edit the note)")
    if any(c in text for c in _BREAKS):
        raise Refused(
            f"the fact {what} has a line break: a fact is one line. Join the lines, or put long"
            " text in a note and store a link to it ([[Note]])"
        )
    text = text.strip()  # what the note's reader keeps of it
    bad = next((c for c in text if unicodedata.category(c) == "Cc" and c != "\t"), None)
    if bad is not None:
        raise Refused(f"the fact {what} holds a control character (U+{ord(bad):04X})")
    refuse_unpaired(text, f"the fact {what}")
    if len(text) > limit:
        raise Refused(
            f"the fact {what} is {len(text):,} characters; a fact holds at most {limit:,}."
            " Put long text in a note and store a link to it ([[Note]])"
        )
    if "::" in text:
        raise Refused(
            f"the fact {what} contains `::`, which Dataview would read as another field;"
            " write it another way (e.g. `: ` or ` - `)"
        )
    if "%%" in text:
        raise Refused(f"the fact {what} contains `%%`, which starts an Obsidian comment")
    if _BLOCK_RE.search(" " + text):
        raise Refused(
            f"the fact {what} ends with a `^word`, which Obsidian would read as a block id"
        )
    if text.count("[[") != text.count("]]") or _WIKILINK_RE.sub("", text).count("[[") > 0:
        raise Refused(f"the fact {what} has an unclosed wikilink: write `[[Note]]`")
    return text
