"""Which known notes a message names, and how much two texts share (pure word matching).

Names come from the index (titles, aliases, wanted link targets) as `EntityName` values. A
name is found whole ("the health dashboard") or in part ("the dashboard" for "Health
Dashboard"); a one-word name that is also an everyday word ("Home", "Notes") counts only when
the message writes it capitalised, so "go home" does not name the note `Home`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

WORD_RE = re.compile(r"[^\W_]+(?:[.'’\-][^\W_]+)*", re.UNICODE)

# Words that carry no topic: left out of partial name matches and of overlap scores.
_STOPWORDS = """a about above after again ago all also am an and any are as at be been before being
    below between both but by can could did do does doing done down during each else even
    ever few for from further get got had has have having he her here hers him his how i if
    in into is it its itself just last let lets like made make many may me might more most
    much must my myself need new next no nor not now of off on once one only or other our
    ours out over own please quite really same say said see she should so some still such
    than that the their them then there these they this those through to too under until up
    upon us very was we were what when where which while who whom why will with would yes
    yet you your yours yourself thing things stuff work working way week weeks day days
    today yesterday tomorrow time times month months year years again back left off going
    tell know want wanted think remember recall remind"""
STOPWORDS = frozenset(_STOPWORDS.split())
# One-word names that are everyday words as well: they need a capital letter in the message.
_EVERYDAY = """home notes note inbox ideas idea journal daily tasks task todo projects project work
    people meeting meetings books book reading health money budget travel music movies
    recipes recipe garden house car family friends school plan plans goals goal review log
    archive index readme draft drafts test sun may june april august will bill grace hope
    rose joy mark frank pat art faith dawn summer winter autumn spring march jan bob"""
EVERYDAY = frozenset(_EVERYDAY.split())


@dataclass(frozen=True)
class EntityName:
    """A note (or a wanted note, path "") and the names it goes by."""

    path: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class EntityMatch:
    """A known note the message names: whole (score 1) or by some of its words."""

    path: str
    name: str
    score: float  # share of the name's topic words found, 1.0 for the whole name
    words: tuple[str, ...]  # the message words that matched


def fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("’", "'")


def words(text: str) -> list[str]:
    """Lower-cased words, with possessives cut ("Maya's" -> "maya") and hyphen parts split."""
    out: list[str] = []
    for m in WORD_RE.finditer(fold(text)):
        w = m.group(0)
        w = w[:-2] if w.endswith("'s") else w
        out.extend(p for p in re.split(r"[\-.']", w) if p)
    return out


def topic_words(text: str) -> list[str]:
    """The words that say what a text is about (stopwords and one-letter words left out)."""
    return [w for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def stem(word: str) -> str:
    """A crude plural/-ing/-ed stem, enough to match "cards" with "card", "fixing" with "fix"."""
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: len(word) - len(suffix)] + keep
    return word


def overlap(query: str | Sequence[str], text: str) -> float:
    """Share of the query's topic words (stemmed) that `text` holds, 0..1."""
    q = {stem(w) for w in (topic_words(query) if isinstance(query, str) else query)}
    if not q:
        return 0.0
    t = {stem(w) for w in topic_words(text)}
    return len(q & t) / len(q)


def find(message: str, entities: Iterable[EntityName]) -> list[EntityMatch]:
    """The known notes a message names, best first (whole names before partial ones; a longer
    whole name before a shorter one it contains)."""
    msg_words = words(message)
    msg_topic = {stem(w) for w in msg_words if w not in STOPWORDS}
    capitalised = {fold(m.group(0)) for m in re.finditer(r"\b[A-Z][\w'’\-]*", message)}
    joined = " " + " ".join(msg_words) + " "
    best: dict[str, EntityMatch] = {}
    for entity in entities:
        key = entity.path or f"wanted:{entity.names[0] if entity.names else ''}"
        for name in entity.names:
            name_words = words(name)
            if not name_words:
                continue
            found: EntityMatch | None = None
            if " " + " ".join(name_words) + " " in joined:
                if len(name_words) == 1 and not _distinct(name, name_words[0], capitalised):
                    continue
                found = EntityMatch(entity.path, name, 1.0, tuple(name_words))
            else:
                topic = [w for w in name_words if w not in STOPWORDS]
                hit = [w for w in topic if stem(w) in msg_topic]
                if topic and hit and len(topic) > 1:
                    found = EntityMatch(entity.path, name, len(hit) / len(topic), tuple(hit))
            if found is not None:
                old = best.get(key)
                if old is None or (found.score, len(found.words)) > (old.score, len(old.words)):
                    best[key] = found
    ranked = sorted(best.values(), key=lambda m: (-m.score, -len(m.words), m.path, m.name))
    return ranked


def _distinct(name: str, word: str, capitalised: set[str]) -> bool:
    """Whether a one-word name found in a message surely means the note."""
    if word in STOPWORDS or (len(word) < 3 and not word.isdigit()):
        return False
    if word in EVERYDAY:
        return word in capitalised or word.upper() == name  # "Home", or an acronym
    return True
