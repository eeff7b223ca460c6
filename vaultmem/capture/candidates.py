"""Candidates: what a capture proposes (a fact, an open loop, a decision, the session's episode).

A candidate keeps the quote and the turn it came from and a confidence, so a person can judge
it; its id (`c-` and six hex digits) is written as the item's block id in the capture note.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import unicodedata
from dataclasses import dataclass
from typing import Literal

Kind = Literal["fact", "loop", "decision", "episode"]
KINDS: tuple[Kind, ...] = ("fact", "loop", "decision", "episode")
LOOP_KEY = "loop"
DECISION_KEY = "decision"
EPISODE_KEY = "episode"
OUTCOMES = ("success", "failure", "resolved", "ongoing")
# a name becomes a wikilink target and a file name: these break either
_NAME_UNSAFE = {"/": "-", "\\": "-", ":": "-", "|": "-"}
_NAME_DROP = set('#^[]*?"<>')
MAX_NAME = 120


@dataclass(frozen=True)
class Candidate:
    """One proposed memory, with where it came from."""

    id: str  # "c-1a2b3c"
    kind: Kind
    entity: str  # the note it belongs to (a fact's or loop's entity; the episode's title)
    key: str  # a fact's key; "loop", "decision" or "episode" for the others
    value: str  # the fact's value, the loop's or decision's text, the episode's summary
    quote: str  # the words of the transcript it came from
    turn: str  # the turn's ref ("D1:3", "4")
    confidence: float  # 0..1
    due: dt.date | None = None  # a loop's due date, when said
    when: dt.datetime | None = None  # an episode's date
    outcome: str | None = None  # an episode's outcome
    entities: tuple[str, ...] = ()  # an episode's entities


def candidate_id(salt: str, kind: str, entity: str, key: str, value: str, turn: str) -> str:
    """A short id, stable for the same proposal from the same transcript."""
    text = "\x1f".join((salt, kind, entity.casefold(), key.casefold(), value.casefold(), turn))
    return "c-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]


def safe_name(name: str) -> str:
    """An entity name fit for a wikilink and a file name: `/ \\ : |` become `-`, `# ^ [ ] * ?
    " < >` are dropped, control characters become spaces; "" when nothing is left."""
    out = []
    for ch in unicodedata.normalize("NFC", name):
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(" ")
        elif ch in _NAME_UNSAFE:
            out.append(_NAME_UNSAFE[ch])
        elif ch not in _NAME_DROP:
            out.append(ch)
    cleaned = " ".join("".join(out).split()).strip(" .-")
    if len(cleaned) > MAX_NAME:
        cleaned = cleaned[:MAX_NAME].rsplit(" ", 1)[0].rstrip(" .-")
    return cleaned
