"""Continuation recall: one context block from an entity's loops, episodes, facts and hits.

The core gathers candidates as values (the open loops, the episodes of the window, the
current facts of the notes the message names or the search found, the search hits) and
`recall` picks and orders them within a character budget. The order follows what the message
asks: "what's next" puts open loops first, "what happened" recent episodes, "what did we
decide" facts; search hits fill what is left. The same inputs give the same bytes.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from vaultmem.memory import episodes as ep
from vaultmem.memory import loops as lp
from vaultmem.memory.continuation import Continuation, CueKind, detect
from vaultmem.memory.facts import Fact
from vaultmem.memory.mentions import NameIndex, Names, fold, index_of, overlap, topic_words
from vaultmem.memory.when import parse as parse_when

DEFAULT_DAYS = 14
DEFAULT_BUDGET = 2000
MAX_ENTITIES = 3
MAX_PER_SECTION = 8
MIN_CUT = 40  # a line cut to fit keeps at least this many characters, else it is left out

Kind = Literal["loop", "episode", "fact", "hit"]
SECTION_TITLES: dict[Kind, str] = {
    "loop": "Open loops",
    "episode": "Recent episodes",
    "fact": "Facts",
    "hit": "Related notes",
}
ORDER: dict[CueKind, tuple[Kind, ...]] = {
    "next": ("loop", "episode", "fact", "hit"),
    "past": ("episode", "loop", "fact", "hit"),
    "state": ("fact", "loop", "episode", "hit"),
}


@dataclass(frozen=True)
class NoteFact:
    """A current fact and the note (entity) it belongs to."""

    path: str
    title: str
    fact: Fact


@dataclass(frozen=True)
class RecallHit:
    """A search hit as recall uses it."""

    path: str
    title: str
    text: str  # the snippet or section text
    start_line: int
    score: float
    day: dt.date | None = None  # the note's date (front matter `date`, else one in its path)
    episode: bool = False  # the note is an episode (`type: episode`)


@dataclass(frozen=True)
class ContextLine:
    kind: Kind
    text: str
    path: str
    line: int | None = None


@dataclass(frozen=True)
class Recall:
    """The context block, its lines (in order) and what it was built from."""

    continuation: Continuation | None
    entities: tuple[str, ...]  # the notes it focused on (paths)
    lines: tuple[ContextLine, ...]
    text: str
    left_out: int  # candidate lines that did not fit the budget

    def to_json(self) -> dict[str, object]:
        return {
            "continuation": self.continuation is not None,
            "cue": self.continuation.cue if self.continuation else None,
            "entities": list(self.entities),
            "lines": [
                {"kind": c.kind, "text": c.text, "path": c.path, "line": c.line} for c in self.lines
            ],
            "text": self.text,
            "chars": len(self.text),
            "leftOut": self.left_out,
        }


def recall(
    message: str,
    now: dt.datetime,
    *,
    names: Names = (),
    facts: Sequence[NoteFact] = (),
    episodes: Sequence[ep.Episode] = (),
    loops: Sequence[lp.Loop] = (),
    hits: Sequence[RecallHit] = (),
    days: int = DEFAULT_DAYS,
    budget: int = DEFAULT_BUDGET,
) -> Recall:
    """The context block for `message` (see the module doc); `now` fixes the clock."""
    index = index_of(names)
    cont = detect(message, index)
    today = now.date()
    hits = timely(hits, message, now)
    if cont is None:
        lines = [_hit_line(h) for h in hits]
        return _pack(None, (), {"hit": lines}, ORDER["next"], budget)
    focus = _focus(cont, loops, episodes, today, days)
    focus_names = _names_of(focus, index)
    # what the message asks beyond the names it uses: "that dashboard *bug*"
    named = {w for m in cont.entities for w in topic_words(m.name)}
    topic = [w for w in topic_words(message) if w not in named]
    since = today - dt.timedelta(days=days)
    window = _time_window(message, today)

    def about(paths: Iterable[str]) -> bool:
        return bool(focus_names & {_name(p) for p in paths})

    # named notes bound the block; only without one does word overlap choose
    chosen_loops = [x for x in loops if about((x.path, *x.links))] if focus else []
    if not focus:
        chosen_loops = [x for x in loops if overlap(topic, _loop_text(x)) > 0]
    ranked = {r.loop.id: r.score for r in lp.rank(chosen_loops, today)}
    chosen_loops.sort(key=lambda x: (-overlap(topic, _loop_text(x)), -ranked[x.id], x.path, x.line))

    recent = [e for e in episodes if since <= e.day <= today]
    if window is not None and any(window[0] <= e.day <= window[1] for e in recent):
        recent = [e for e in recent if window[0] <= e.day <= window[1]]
    chosen_eps = [e for e in recent if about((e.path, *e.entities))] if focus else []
    if not focus:
        chosen_eps = [e for e in recent if overlap(topic, _episode_text(e)) > 0]
    chosen_eps.sort(key=lambda e: (-overlap(topic, _episode_text(e)), -e.when.timestamp(), e.path))

    chosen_facts = [f for f in facts if _name(f.path) in focus_names] if focus else []
    if not focus:
        chosen_facts = [f for f in facts if overlap(topic, _fact_text(f)) > 0]
    chosen_facts.sort(key=lambda f: (-overlap(topic, _fact_text(f)), f.path, f.fact.line))

    shown = {x.path for x in chosen_loops} | {e.path for e in chosen_eps}
    shown |= {f.path for f in chosen_facts}
    other_hits = [h for h in hits if h.path not in shown]
    sections: dict[Kind, list[ContextLine]] = {
        "loop": [_loop_line(x, today) for x in chosen_loops[:MAX_PER_SECTION]],
        "episode": [_episode_line(e) for e in chosen_eps[:MAX_PER_SECTION]],
        "fact": [_fact_line(f) for f in chosen_facts[: MAX_PER_SECTION * 2]],
        "hit": [_hit_line(h) for h in other_hits[:MAX_PER_SECTION]],
    }
    return _pack(cont, tuple(focus), sections, ORDER[cont.kind], budget)


# --------------------------------------------------------------------------- focus


def _focus(
    cont: Continuation,
    loops: Sequence[lp.Loop],
    episodes: Sequence[ep.Episode],
    today: dt.date,
    days: int,
) -> list[str]:
    """The notes to build the block around: the best-named ones; among equally named ones,
    those with the most open loops and recent episodes (a "dashboard" that has work going on
    before one that has none)."""
    if not cont.entities:
        return []
    top = max(m.score for m in cont.entities)
    best = [m for m in cont.entities if m.score == top]
    since = today - dt.timedelta(days=days)

    def activity(key: str) -> tuple[int, float]:
        name = _name(key)
        n_loops = sum(1 for x in loops if name in {_name(p) for p in (x.path, *x.links)})
        recent = [e for e in episodes if e.day >= since and name in {_name(p) for p in e.entities}]
        latest = max((e.when.timestamp() for e in recent), default=0.0)
        return n_loops + len(recent), latest

    keys = list(dict.fromkeys(m.path or m.name for m in best))
    keys.sort(key=lambda k: (-activity(k)[0], -activity(k)[1], k))
    if len(keys) > 1 and activity(keys[0])[0] > 0 and activity(keys[1])[0] == 0:
        keys = keys[:1]  # one of them has work going on: that is the one
    return keys[:MAX_ENTITIES]


def _names_of(focus: Sequence[str], index: NameIndex) -> set[str]:
    """Every name the focused notes go by, as comparable names."""
    out = {_name(k) for k in focus}
    for key in focus:
        out |= {_name(n) for n in index.names_of(key)}
    return out


def _name(target: str) -> str:
    return fold(target.strip().removesuffix(".md").rsplit("/", 1)[-1])


def _time_window(message: str, today: dt.date) -> tuple[dt.date, dt.date] | None:
    """The days a time phrase in the message names ("two weeks ago", "last Saturday", "in
    March"), widened a little where people count loosely ("two weeks ago" is about then)."""
    m = _TIME_RE.search(message.casefold())
    if m is None:
        return None
    phrase = re.sub(r"^(?:in|on|during) ", "", m.group(0)).replace("last weekend", "last week")
    found = parse_when(phrase, today)
    if found is None:
        return None
    if phrase.endswith("ago"):
        pad = dt.timedelta(days=max(2, (found.end - found.start).days // 4 + 2))
    else:
        pad = dt.timedelta(days=1)
    return found.start - pad, found.end + pad


_TIME_RE = re.compile(
    r"\b(?:(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of) "
    r"(?:days?|weeks?|months?) ago|yesterday|today|(?:last|this) (?:week|weekend|month|year)|"
    r"last (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(?:in|on|during) (?:january|february|march|april|may|june|july|august|september|october|"
    r"november|december))\b"
)
RANK_K = 10  # a hit's base weight is 1 / (RANK_K + its rank in the search)
RECENCY_WEIGHT = 0.04  # what being from today adds, fading over RECENCY_DAYS
RECENCY_DAYS = 30.0
WINDOW_BONUS = 0.02  # what lying in the days the message names adds


def timely(hits: Sequence[RecallHit], message: str, now: dt.datetime) -> list[RecallHit]:
    """Search hits in the order recall shows them.

    An episode dated after `now` is dropped: it had not happened when the message was asked
    (this matters when the clock is set back with --now). The search order is then blended with
    recency (newer memories first among near equals: the latest value of something that
    changed) and with the days a time phrase in the message names. The weights were chosen on
    half of LongMemEval's questions (bench/memory_temporal.py) and checked on the other half.
    """
    today = now.date()
    window = _time_window(message, today)
    scored = []
    for rank, hit in enumerate(h for h in hits if not (h.episode and h.day and h.day > today)):
        score = 1.0 / (RANK_K + rank)
        if hit.day is not None and hit.day <= today:
            score += RECENCY_WEIGHT * math.exp(-(today - hit.day).days / RECENCY_DAYS)
        if window is not None and hit.day is not None and window[0] <= hit.day <= window[1]:
            score += WINDOW_BONUS
        scored.append((-score, rank, hit))
    return [hit for _, _, hit in sorted(scored, key=lambda t: (t[0], t[1]))]


# --------------------------------------------------------------------------- lines


def _loop_text(loop: lp.Loop) -> str:
    return f"{loop.title} {loop.detail}"


def _episode_text(e: ep.Episode) -> str:
    return f"{e.title} {e.summary} {' '.join(e.entities)}"


def _fact_text(f: NoteFact) -> str:
    return f"{f.title} {f.fact.key} {f.fact.value}"


def _loop_line(loop: lp.Loop, today: dt.date) -> ContextLine:
    bits = []
    if loop.due is not None:
        days = (loop.due - today).days
        bits.append(f"overdue since {loop.due}" if days < 0 else f"due {loop.due}")
    if loop.priority is not None:
        bits.append(loop.priority)
    meta = f" ({', '.join(bits)})" if bits else ""
    detail = f" — {loop.detail}" if loop.detail else ""
    return ContextLine(
        "loop",
        f"{loop.title}{detail}{meta} [{loop.id}, {loop.path}:{loop.line}]",
        loop.path,
        loop.line,
    )


def _episode_line(e: ep.Episode) -> ContextLine:
    what = e.summary or e.title
    outcome = f" {e.outcome}" if e.outcome else ""
    return ContextLine("episode", f"{e.day}{outcome}: {what} [{e.path}]", e.path)


def _fact_line(f: NoteFact) -> ContextLine:
    where = f"{f.path}#^{f.fact.block}" if f.fact.block else f"{f.path}:{f.fact.line}"
    changed = f" (since {f.fact.changed})" if f.fact.changed else ""
    return ContextLine(
        "fact", f"{f.title}: {f.fact.key} = {f.fact.value}{changed} [{where}]", f.path, f.fact.line
    )


def _hit_line(h: RecallHit) -> ContextLine:
    text = " ".join(h.text.split())
    return ContextLine("hit", f"{h.title}: {text} [{h.path}:{h.start_line}]", h.path, h.start_line)


def _pack(
    cont: Continuation | None,
    focus: tuple[str, ...],
    sections: dict[Kind, list[ContextLine]],
    order: Sequence[Kind],
    budget: int,
) -> Recall:
    """Sections in `order`, whole lines while they fit (the last one cut at a word)."""
    if cont is None:
        head = "# Search results"
    elif focus:
        head = "# Continuing: " + ", ".join(_name_shown(k) for k in focus)
    else:
        head = "# Continuing: " + (cont.topic or "earlier work")
    out = [head]
    used = len(head)
    kept: list[ContextLine] = []
    left_out = 0
    for kind in order:
        items = sections.get(kind, [])
        if not items:
            continue
        title = f"## {SECTION_TITLES[kind]}"
        if used + 1 + len(title) + 1 + MIN_CUT > budget:
            left_out += len(items)
            continue
        started = False
        for item in items:
            line = f"- {item.text}"
            extra = len(line) + 1 + (0 if started else len(title) + 1)
            if used + extra > budget:
                room = budget - used - 1 - (0 if started else len(title) + 1)
                if room >= MIN_CUT:
                    line = line[: room - 1].rsplit(" ", 1)[0] + "…"
                    item = ContextLine(item.kind, line[2:], item.path, item.line)
                else:
                    left_out += 1
                    continue
            if not started:
                out.append(title)
                used += len(title) + 1
                started = True
            out.append(line)
            used += len(line) + 1
            kept.append(item)
    return Recall(cont, focus, tuple(kept), "\n".join(out) if kept else "", left_out)


def _name_shown(key: str) -> str:
    return key.removesuffix(".md").rsplit("/", 1)[-1]
