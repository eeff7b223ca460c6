"""Continuation: does a message pick up earlier work, and which known note is it about?

"where did we leave off on the dashboard", "continue the tariff sync fix", "what was next for
Maya's install": a cue says the message continues something, and the names the index knows
say what. A strong cue is enough on its own; a weak one (a work verb such as "update" or
"fix") needs a known name beside it, so "fix this regex" is not a continuation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from vaultmem.memory.mentions import EntityMatch, Names, find, topic_words

CueKind = Literal["next", "past", "state"]

# (pattern, kind): "next" asks what is still to do, "past" what happened, "state" what holds.
_STRONG: list[tuple[str, CueKind]] = [
    (r"\bwhere (?:did|do|had) (?:we|i|you) (?:leave|left|stop|stopped) off\b", "next"),
    (r"\b(?:we|i|you) left off\b", "next"),
    (r"\bwhere were we\b", "next"),
    (r"\bpick (?:it |this |that )?(?:back )?up\b", "next"),
    (r"\b(?:continue|continuing|resume|resuming|carry on|keep going)\b", "next"),
    (r"\b(?:get|getting|go|going|come|coming) back to\b", "next"),
    (r"\bback (?:on|to) (?:the|my|our|that)\b", "next"),
    (r"\bwhat(?:'s| is| was| were| are)? (?:the )?next\b", "next"),
    (r"\bnext steps?\b", "next"),
    (r"\bwhat(?:'s| is| was)? (?:still )?left (?:to do|on|for)\b", "next"),
    (r"\bwhat remains\b", "next"),
    (
        r"\bstill (?:open|pending|to do|outstanding|broken|failing|blocked|unresolved|waiting)\b",
        "next",
    ),
    (
        r"\b(?:pending|outstanding|unresolved|open) (?:approval|item|items|task|tasks|question|"
        r"questions|issue|issues|bug|bugs|decision|decisions|loops?)\b",
        "next",
    ),
    (r"\bis (?:there )?(?:still )?(?:a |an )?pending\b", "next"),
    (r"\bfollow(?:ing)?[ -]?up (?:on|with)\b", "next"),
    (r"\bwhat happened (?:with|to|on|at|in)\b", "past"),
    (r"\bhow did (?:the |my |our |that |it )?[\w' -]{0,40}\bgo\b", "past"),
    (r"\b(?:what|how) (?:was|were) (?:the |that |our |my )?[\w' -]{0,40}\bagain\b", "past"),
    (r"\bagain\?\s*$", "past"),
    (r"\bremind me\b", "past"),
    (r"\blast time\b", "past"),
    (r"\bthe other day\b", "past"),
    (r"\b(?:a few|a couple of|\d+) (?:days|weeks) ago\b", "past"),
    (
        r"\bwhat (?:did|were|have) (?:we|you|i) (?:decide|decided|agree|agreed|track|tracking|"
        r"discuss|discussing|say|said|do|doing|plan|planning|conclude)\b",
        "state",
    ),
    (r"\bwhat were we (?:tracking|doing|working on|looking at|planning)\b", "state"),
    (r"\bwe were (?:working|talking|discussing|looking|planning)\b", "next"),
    (r"\b(?:status|progress) (?:of|on|with|for)\b", "state"),
    (r"\bany (?:news|update|updates|progress) (?:on|about|with|from)\b", "state"),
    (r"\bupdate on\b", "state"),
    (r"\bwhere (?:are|do) we (?:stand|at)\b", "state"),
    (r"\bwhere are we (?:on|with)\b", "state"),
    (r"\bhow(?:'s| is| are) (?:the |my |our )?[\w' -]{0,40}\bgoing\b", "state"),
    (
        r"\b(?:that|the same) (?:bug|issue|fix|problem|ticket|error|outage|incident|task|pr|"
        r"branch|draft|plan|migration)\b",
        "past",
    ),
]
_WEAK = re.compile(
    r"\b(?:update|updating|fix|fixing|finish|finishing|review|reviewing|ship|deploy|check on|"
    r"work on|working on|look at|what about|how about|wrap up|close out|redo|retry|"
    r"tracking|status|progress|plan for|todo|to-do)\b"
)
_STRONG_RES = [(re.compile(p), kind) for p, kind in _STRONG]
MIN_PARTIAL = 0.5  # a partial name match counts when half its topic words are in the message


@dataclass(frozen=True)
class Continuation:
    """A message that continues earlier work: its cue, the notes it names, what to search."""

    cue: str  # the words that said so ("" when only a work verb and a name did)
    kind: CueKind
    entities: tuple[EntityMatch, ...]  # best first
    topic: str  # the message's topic words, for a search


def cue_of(message: str) -> tuple[str, CueKind] | None:
    """The first strong continuation cue in a message, and what it asks for."""
    text = " ".join(message.casefold().replace("’", "'").split())
    for regex, kind in _STRONG_RES:
        if m := regex.search(text):
            return m.group(0), kind
    return None


def weak_cue(message: str) -> str | None:
    m = _WEAK.search(" ".join(message.casefold().split()))
    return m.group(0) if m else None


def detect(message: str, names: Names) -> Continuation | None:
    """The continuation a message asks for, or None.

    Detected when a strong cue is there (with or without a known name), or when a weak cue
    (a work verb) stands beside a known name, or when the message is a question about a note
    it names whole.
    """
    cue = cue_of(message)
    matches = [m for m in find(message, names) if m.score >= MIN_PARTIAL]
    whole = [m for m in matches if m.score == 1.0]
    topic = " ".join(topic_words(message))
    if cue is not None:
        return Continuation(cue[0], cue[1], tuple(matches), topic)
    weak = weak_cue(message)
    if weak is not None and matches:
        return Continuation("", "next", tuple(matches), topic)
    if whole and "?" in message and _asks_about_past_or_state(message):
        return Continuation("", "state", tuple(matches), topic)
    return None


_PAST_OR_STATE_RE = re.compile(
    r"\b(?:did|was|were|had|has|have|is there|are there|still|last|latest|current|currently|"
    r"tracking|decided|agreed)\b"
)


def _asks_about_past_or_state(message: str) -> bool:
    return bool(_PAST_OR_STATE_RE.search(message.casefold()))
