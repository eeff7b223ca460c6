"""Decay and salience: which notes have expired, and which notes and facts deserve a look.

Expiry follows the note's `decay:` tier (`vaultmem.decay`: lifetimes from the note's `date`,
else `created`, else its file time). Salience is importance × staleness, the way
enhanced-memory surfaced stale memories for an agent's heartbeat:

  importance = log(1 + notes linking to it) + 2 × centrality (0..1, relative to the vault's
               most central note) + 0.5 per open loop (at most 5) + 0.1 per fact (at most 10)
  staleness  = 1 - exp(-days since it changed / 45): 0 today, 0.49 at a month, 0.86 at 90 days

A fact is as important as its note plus 0.5, and as stale as the day its value was set (its
newest history line), else its note; a note shows at most its three stalest facts. Expired
notes are prune candidates, not salient.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from vaultmem.decay import Tier, expires_at

STALE_DAYS = 45.0
MAX_LOOPS = 5
MAX_FACTS = 10
FACT_BONUS = 0.5
FACTS_PER_NOTE = 3  # the stalest few facts of a note, so one note's facts do not fill the list


@dataclass(frozen=True)
class Expiry:
    tier: Tier
    expires: dt.datetime | None  # None: permanent
    expired: bool


def expiry(
    frontmatter: Mapping[str, object], file_time: dt.datetime, now: dt.datetime
) -> Expiry | None:
    """A note's decay tier and expiry at `now`, or None when it has no (known) tier."""
    found = expires_at(dict(frontmatter), _aware(file_time))
    if found is None:
        return None
    tier, when = found
    return Expiry(tier, when, when is not None and when <= _aware(now))


def expired(
    notes: Iterable[tuple[str, Mapping[str, object], dt.datetime]], now: dt.datetime
) -> list[tuple[str, Expiry]]:
    """The notes past their tier's lifetime at `now` (prune candidates), longest expired first."""
    out = []
    for path, frontmatter, file_time in notes:
        found = expiry(frontmatter, file_time, now)
        if found is not None and found.expired:
            out.append((path, found))
    return sorted(out, key=lambda p: (p[1].expires or now, p[0]))


def _aware(when: dt.datetime) -> dt.datetime:
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


@dataclass(frozen=True)
class NoteSignals:
    """What the index knows about a note, for salience."""

    path: str
    title: str
    inlinks: int  # notes linking to it
    centrality: float  # any centrality (PageRank, degree); normalised by the vault's maximum
    changed: dt.datetime  # last change (the file's time)
    open_loops: int = 0
    facts: int = 0


@dataclass(frozen=True)
class FactSignals:
    path: str
    key: str
    value: str
    changed: dt.date | None  # the day the value was set, when its history says


@dataclass(frozen=True)
class Salient:
    kind: Literal["note", "fact"]
    path: str
    label: str  # the note's title, or "title: key = value"
    score: float
    importance: float
    staleness: float
    days: int  # since it changed
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "path": self.path,
            "label": self.label,
            "score": self.score,
            "importance": self.importance,
            "staleness": self.staleness,
            "days": self.days,
            "reasons": list(self.reasons),
        }


def staleness(days: float) -> float:
    return 1.0 - math.exp(-max(days, 0.0) / STALE_DAYS)


def rank(
    notes: Iterable[NoteSignals],
    facts: Iterable[FactSignals],
    now: dt.datetime,
    *,
    top: int = 20,
    skip: Iterable[str] = (),
) -> list[Salient]:
    """The `top` notes and facts by importance × staleness (ties: path, then label). `skip`
    holds paths left out (expired notes)."""
    left_out = set(skip)
    notes = [n for n in notes if n.path not in left_out]
    peak = max((n.centrality for n in notes), default=0.0) or 1.0
    now = _aware(now)
    out: list[Salient] = []
    importance_of: dict[str, float] = {}
    changed_of: dict[str, dt.datetime] = {}
    titles: dict[str, str] = {}
    for n in notes:
        central = max(0.0, n.centrality) / peak
        loops = min(n.open_loops, MAX_LOOPS)
        importance = math.log1p(max(n.inlinks, 0)) + 2 * central + 0.5 * loops
        importance += 0.1 * min(n.facts, MAX_FACTS)
        days = max(0, (now - _aware(n.changed)).days)
        reasons = []
        if n.inlinks:
            reasons.append(f"linked from {n.inlinks} note{'s' if n.inlinks != 1 else ''}")
        if central >= 0.5:
            reasons.append(f"central ({central:.2f})")
        if n.open_loops:
            reasons.append(f"{n.open_loops} open loop{'s' if n.open_loops != 1 else ''}")
        reasons.append(f"unchanged for {days} day{'s' if days != 1 else ''}")
        stale = staleness(days)
        importance_of[n.path], changed_of[n.path], titles[n.path] = importance, n.changed, n.title
        out.append(
            Salient(
                "note",
                n.path,
                n.title,
                round(importance * stale, 4),
                round(importance, 4),
                round(stale, 4),
                days,
                tuple(reasons),
            )
        )
    for f in facts:
        if f.path not in importance_of:
            continue  # its note is expired or unknown
        set_on = f.changed or _aware(changed_of[f.path]).date()
        days = max(0, (now.date() - set_on).days)
        importance = importance_of[f.path] + FACT_BONUS
        stale = staleness(days)
        label = f"{titles[f.path]}: {f.key} = {f.value}"
        why = (f"value set {days} day{'s' if days != 1 else ''} ago",)
        out.append(
            Salient(
                "fact",
                f.path,
                label,
                round(importance * stale, 4),
                round(importance, 4),
                round(stale, 4),
                days,
                why,
            )
        )
    out.sort(key=lambda s: (-s.score, s.path, s.label))
    shown: dict[str, int] = {}
    kept = []
    for item in out:
        if item.kind == "fact":
            shown[item.path] = shown.get(item.path, 0) + 1
            if shown[item.path] > FACTS_PER_NOTE:
                continue
        kept.append(item)
    return kept[:top]
