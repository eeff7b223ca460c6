"""Which known notes a message names, and how much two texts share (pure word matching).

Names come from the index (titles, aliases, wanted link targets) as `EntityName` values. A
name is found whole ("the health dashboard") or in part ("the dashboard" for "Health
Dashboard"); a one-word name that is also an everyday word ("Home", "Notes") counts only when
the message writes it capitalised, so "go home" does not name the note `Home`.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass
from typing import Any

WORD_RE = re.compile(r"[^\W_]+(?:[.'’\-][^\W_]+)*", re.UNICODE)
_PARTS_RE = re.compile(r"[\-.']")

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
    if text.isascii():  # the common case, and the hot path of building a NameIndex
        return text.lower()
    return unicodedata.normalize("NFKC", text).casefold().replace("’", "'")


def words(text: str) -> list[str]:
    """Lower-cased words, with possessives cut ("Maya's" -> "maya") and hyphen parts split."""
    out: list[str] = []
    for w in WORD_RE.findall(fold(text)):
        if w.endswith("'s"):
            w = w[:-2]
        if "-" in w or "." in w or "'" in w:
            out.extend(p for p in _PARTS_RE.split(w) if p)
        else:
            out.append(w)
    return out


def topic_words(text: str) -> list[str]:
    """The words that say what a text is about (stopwords and one-letter words left out)."""
    return [w for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


@functools.lru_cache(maxsize=65536)
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


@dataclass(frozen=True)
class _Entry:
    key: str  # one per note (a wanted note: its name)
    path: str
    name: str
    words: tuple[str, ...]
    topic: tuple[str, ...]
    phrase: str  # " w1 w2 " (the words, spaced), to find the whole name in a message
    stems: tuple[str, ...]  # the topic words' stems


class NameIndex:
    """A vault's note names indexed by word: build it once (per index generation) and look up
    many messages; a lookup reads only the names sharing a word with the message."""

    def __init__(self, entities: Iterable[EntityName]) -> None:
        self._by_word: dict[str, list[_Entry]] = {}
        self._names: dict[str, tuple[str, ...]] = {}
        self.size = 0
        for entity in entities:
            key = entity.path or f"wanted:{entity.names[0] if entity.names else ''}"
            if entity.path:
                self._names[entity.path] = self._names.get(entity.path, ()) + entity.names
            for name in entity.names:
                found = words(name)
                if not found:
                    continue
                topic = tuple(w for w in found if w not in STOPWORDS)
                phrase = " " + " ".join(found) + " "
                stems = tuple(stem(w) for w in topic)
                entry = _Entry(key, entity.path, name, tuple(found), topic, phrase, stems)
                self.size += 1
                for w in {stem(x) for x in topic} if topic else set(found):
                    self._by_word.setdefault(w, []).append(entry)

    def to_json(self) -> dict[str, Any]:
        """The index as JSON values (`from_json` reads it back as an equal index): a CLI
        process reads this from the index's cache instead of indexing 20k names again."""
        number: dict[int, int] = {}
        entries: list[Any] = []
        by_word: dict[str, list[int]] = {}
        for word, found in self._by_word.items():
            for entry in found:
                if id(entry) not in number:
                    number[id(entry)] = len(entries)
                    entries.append(astuple(entry))
            by_word[word] = [number[id(e)] for e in found]
        return {"entries": entries, "by_word": by_word, "names": self._names, "size": self.size}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NameIndex:
        """An index written by `to_json` (KeyError, TypeError or ValueError if it is not)."""
        entries = [
            _Entry(k, p, n, tuple(w), tuple(t), phrase, tuple(s))
            for k, p, n, w, t, phrase, s in data["entries"]
        ]
        index = cls(())
        index._by_word = {w: [entries[i] for i in found] for w, found in data["by_word"].items()}
        index._names = {path: tuple(names) for path, names in data["names"].items()}
        index.size = int(data["size"])
        return index

    def names_of(self, path: str) -> tuple[str, ...]:
        """Every name a note goes by (title and aliases)."""
        return self._names.get(path, ())

    def find(self, message: str) -> list[EntityMatch]:
        """The known notes a message names, best first (whole names before partial ones; a
        longer whole name before a shorter one it contains)."""
        msg_words = words(message)
        msg_topic = {stem(w) for w in msg_words if w not in STOPWORDS}
        candidates: dict[int, _Entry] = {}
        for w in msg_topic | set(msg_words):
            for entry in self._by_word.get(w, ()):
                candidates[id(entry)] = entry
        capitalised = {fold(m.group(0)) for m in re.finditer(r"\b[A-Z][\w'’\-]*", message)}
        joined = " " + " ".join(msg_words) + " "
        best: dict[str, EntityMatch] = {}
        for entry in candidates.values():
            found: EntityMatch | None = None
            if entry.phrase in joined:
                if len(entry.words) == 1 and not _distinct(entry.name, entry.words[0], capitalised):
                    continue
                found = EntityMatch(entry.path, entry.name, 1.0, entry.words)
            else:
                hit = [w for w, s in zip(entry.topic, entry.stems, strict=True) if s in msg_topic]
                if hit and len(entry.topic) > 1:
                    found = EntityMatch(
                        entry.path, entry.name, len(hit) / len(entry.topic), tuple(hit)
                    )
            if found is not None:
                old = best.get(entry.key)
                if old is None or (found.score, len(found.words), found.name) > (
                    old.score,
                    len(old.words),
                    old.name,
                ):
                    best[entry.key] = found
        return sorted(best.values(), key=lambda m: (-m.score, -len(m.words), m.path, m.name))


Names = Iterable[EntityName] | NameIndex


def index_of(names: Names) -> NameIndex:
    return names if isinstance(names, NameIndex) else NameIndex(names)


def find(message: str, names: Names) -> list[EntityMatch]:
    """The known notes a message names (see `NameIndex.find`)."""
    return index_of(names).find(message)


def _distinct(name: str, word: str, capitalised: set[str]) -> bool:
    """Whether a one-word name found in a message surely means the note."""
    if word in STOPWORDS or (len(word) < 3 and not word.isdigit()):
        return False
    if word in EVERYDAY:
        return word in capitalised or word.upper() == name  # "Home", or an acronym
    return True
