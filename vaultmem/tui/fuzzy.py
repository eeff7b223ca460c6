"""Fuzzy matching of note names (titles, aliases, paths) for pickers: pure, no Textual.

A query matches a name when its letters appear in the name in order (`hg` finds "Heatwise
Gateway", `tsync` finds "Tariff sync outage"); matches on word starts, in runs and near the
start rank first, the way fzf ranks. When nothing matches in order, one or two typed letters may
be wrong, missing or swapped ("Shakshuak" still finds "Shakshuka"), ranked below every in-order
match. Case and accents are ignored ("cafe" finds "Café Lumière").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

# fzf's scheme, scaled: a matched letter is worth MATCH; where it sits adds a bonus; the letters
# skipped between two matched ones cost a gap penalty.
MATCH = 16
BONUS_WORD_START = 8  # after a space, "/", "-", "_", ".", or a lower-to-upper case change
BONUS_FIRST = 8  # the name's first letter: people type names from the start
BONUS_RUN = 6  # follows the previous matched letter directly
GAP_START = 3
GAP_EXTEND = 1
# Whole-name matches trump everything: typing an exact alias ("Maya") must pick its note.
BONUS_EXACT = 100
BONUS_PREFIX = 30
# Names longer than this are cut before matching: nobody types that far into a name, and the
# cut keeps a pathological file name from costing more than the rest of the vault.
MAX_NAME = 256


@dataclass(frozen=True)
class Entry:
    """Something to pick: its key (e.g. a note's path) and the names it can be found by."""

    key: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class Match:
    """The best way an entry matched: which of its names, where, and how well."""

    key: str
    name: str
    score: int
    positions: tuple[int, ...]  # indexes into `name` of the matched letters
    typos: int = 0


def fold(text: str) -> str:
    """Lower case, accents dropped, one character per character (so positions carry over)."""
    out = []
    for char in text:
        base = unicodedata.normalize("NFKD", char)[:1] or char
        lower = base.lower()[:1] or base
        out.append(lower)
    return "".join(out)


def _word_start(name: str, i: int) -> bool:
    """Whether name[i] begins a word: after a non-letter, a lower-to-upper change, or digits."""
    if i == 0:
        return True
    char, previous = name[i], name[i - 1]
    return char.isalnum() and (
        not previous.isalnum()
        or (previous.islower() and char.isupper())
        or (previous.isalpha() and char.isdigit())
    )


def _window(query: str, folded: str) -> tuple[int, ...] | None:
    """Positions of the query's letters in `folded`, in the tightest window ending earliest.

    fzf's first algorithm: scan forward for the first place the whole query fits, then back
    from its end for the latest start, so the letters sit as close together as they can.
    """
    at = 0
    for char in query:
        found = folded.find(char, at)
        if found < 0:
            return None
        at = found + 1
    end = at - 1
    positions = [end]
    for char in reversed(query[:-1]):
        positions.append(folded.rfind(char, 0, positions[-1]))
    positions.reverse()
    return tuple(positions)


def _score_positions(name: str, folded: str, query: str, positions: Sequence[int]) -> int:
    total = 0
    previous = -2
    for i in positions:
        total += MATCH
        if _word_start(name, i):
            total += BONUS_WORD_START
        if i == 0:
            total += BONUS_FIRST
        if i == previous + 1:
            total += BONUS_RUN
        elif previous >= 0:
            total -= GAP_START + GAP_EXTEND * (i - previous - 2)
        previous = i
    if folded == query:
        total += BONUS_EXACT
    elif folded.startswith(query):
        total += BONUS_PREFIX
    return total - len(folded) // 8  # among equals, the shorter name is the closer one


def score(query: str, name: str) -> Match | None:
    """How well `query` matches `name` letter by letter in order, or None if it does not."""
    q = fold(query.strip())
    name = name[:MAX_NAME]
    folded = fold(name)
    if not q:
        return None
    positions = _window(q, folded)
    if positions is None:
        return None
    return Match(name, name, _score_positions(name, folded, q, positions), positions)


def _subsequence(query: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(c) for c in query), re.DOTALL)


def typo_variants(query: str, typos: int) -> set[str]:
    """The query with `typos` of its letters left out, each way (duplicates dropped)."""
    return {
        "".join(c for i, c in enumerate(query) if i not in dropped)
        for dropped in combinations(range(len(query)), typos)
    }


def allowed_typos(query: str) -> int:
    """Short queries must match as typed: with a letter dropped, "ab" would match everything."""
    length = len(query)
    return 0 if length < 4 else 1 if length < 8 else 2


def _tight(positions: Sequence[int]) -> bool:
    """A typo-tolerant match must sit in about one stretch of the name, not letters strewn
    along a long path (which is how "xyzq" minus a letter would "match" half a vault)."""
    span = positions[-1] - positions[0] + 1
    return span <= len(positions) + max(2, len(positions) // 3)


def _bigrams(text: str) -> frozenset[str]:
    return frozenset(text[i : i + 2] for i in range(len(text) - 1))


class NameIndex:
    """Entries folded once, ranked many times (a picker re-ranks on every keystroke).

    Safe to search from one worker thread at a time while another may still be finishing:
    the only state it keeps between searches is replaced whole, never changed in place.
    """

    def __init__(self, entries: Iterable[Entry]) -> None:
        keys: list[str] = []
        names: list[str] = []
        folded: list[str] = []
        for entry in entries:
            for name in dict.fromkeys(entry.names):
                if name:
                    keys.append(entry.key)
                    names.append(name[:MAX_NAME])
                    folded.append(fold(name[:MAX_NAME]))
        self._keys, self._names, self._folded = keys, names, folded
        self._order: dict[str, int] = {}
        for i, key in enumerate(keys):
            self._order.setdefault(key, i)
        self.size = len(self._order)
        # The last in-order query and the rows it matched: a query typed further can only
        # match among those, so each keystroke scans fewer names than the one before.
        self._last: tuple[str, tuple[int, ...]] = ("", tuple(range(len(keys))))

    def search(self, query: str, limit: int = 20) -> list[Match]:
        """The best `limit` entries for `query`, best first, each with its best-matching name.

        Spaces in the query are ignored ("fetch api" finds "fetch_api"). In-order matches come
        first; only when there are fewer than `limit` of them are typo-tolerant matches added,
        below them. Ties go to the shorter name, then to the entry given first.
        """
        q = "".join(fold(query).split())
        if not q or limit <= 0:
            return []
        last_query, last_rows = self._last
        rows = last_rows if q.startswith(last_query) else range(len(self._keys))
        pattern = _subsequence(q)
        matched = tuple(i for i in rows if pattern.search(self._folded[i]))
        self._last = (q, matched)
        found: dict[str, Match] = {}
        for i in matched:
            self._offer(found, i, q, 0)
        for typos in range(1, allowed_typos(q) + 1):
            if len(found) >= limit:
                break
            self._typo_pass(found, q, typos)
        ranked = sorted(
            found.values(), key=lambda m: (m.typos, -m.score, len(m.name), self._order[m.key])
        )
        return ranked[:limit]

    def _offer(self, found: dict[str, Match], row: int, variant: str, typos: int) -> bool:
        """Score row `row` against `variant` (known to match in order); keep it if best."""
        name, folded = self._names[row], self._folded[row]
        positions = _window(variant, folded)
        if positions is None or (typos and not _tight(positions)):
            return False
        value = _score_positions(name, folded, variant, positions)
        key = self._keys[row]
        current = found.get(key)
        if current is None or (typos, -value) < (current.typos, -current.score):
            found[key] = Match(key, name, value, positions, typos)
        return True

    def _typo_pass(self, found: dict[str, Match], q: str, typos: int) -> None:
        """Add the entries that match once `typos` letters of `q` are dropped.

        Each dropped letter breaks at most two of the query's letter pairs, so a name sharing
        fewer pairs cannot match: that test (substring checks in C) leaves few names for the
        slower try-every-variant step.
        """
        pairs = _bigrams(q)
        need = len(pairs) - 2 * typos
        have = set(found)
        candidates = [
            i
            for i, folded in enumerate(self._folded)
            if self._keys[i] not in have and sum(p in folded for p in pairs) >= need
        ]
        if not candidates:
            return
        for variant in sorted(typo_variants(q, typos)):
            pattern = _subsequence(variant)
            for i in candidates:
                if pattern.search(self._folded[i]):
                    self._offer(found, i, variant, typos)
