"""Memory in the dialect: facts and their history, episodes, trends, loops, recall, the gate,
and what a memory write did."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from typing_extensions import TypedDict

from vaultmem import store
from vaultmem.dialect.refs import NoteRef, note
from vaultmem.memories import EntityFacts, GateResult, Written
from vaultmem.memory import episodes as ep
from vaultmem.memory import facts as fc
from vaultmem.memory import loops as lp
from vaultmem.memory import recall as rc
from vaultmem.memory import salience as sl
from vaultmem.model import title_of


def _day(day: dt.date | None) -> str | None:
    return day.isoformat() if day else None


# --------------------------------------------------------------------------- facts


class HistoryOut(TypedDict):
    value: str
    until: str | None  # the day the value stopped being current
    origin: str | None  # where the value came from (`source:` in the note)
    line: int


class FactOut(TypedDict):
    key: str
    value: str
    line: int
    form: str  # item, line, inline or property
    block: str | None
    origin: str | None
    set_on: str | None  # the day the current value was set, when its history says
    history: list[HistoryOut]


def fact(f: fc.Fact) -> FactOut:
    return {
        "key": f.key,
        "value": f.value,
        "line": f.line,
        "form": f.form,
        "block": f.block,
        "origin": f.source,
        "set_on": _day(f.changed),
        "history": [
            {"value": h.value, "until": _day(h.until), "origin": h.source, "line": h.line}
            for h in f.history
        ],
    }


class EntityFactsOut(TypedDict):
    path: str
    title: str
    digest: str | None  # the note's revision, for store_fact's precondition
    facts: list[FactOut]


def entity_facts(found: EntityFacts) -> EntityFactsOut:
    return {
        "path": found.path,
        "title": found.title,
        "digest": found.digest,
        "facts": [fact(f) for f in found.facts],
    }


class ListedFactOut(FactOut):
    path: str
    title: str


class FactListOut(TypedDict):
    total: int
    facts: list[ListedFactOut]


def fact_list(rows: Sequence[store.FactRow]) -> FactListOut:
    out: list[ListedFactOut] = []
    for r in rows:
        item: ListedFactOut = {"path": r.path, "title": r.title, **fact(r.fact)}
        out.append(item)
    return {"total": len(out), "facts": out}


# --------------------------------------------------------------------------- episodes


class EpisodeOut(TypedDict):
    path: str
    title: str
    date: str  # ISO 8601 date-time
    outcome: str | None
    entity_links: list[str]  # the `entities` link targets as written
    duration: str | None
    procedure: str | None
    summary: str


def episode(e: ep.Episode) -> EpisodeOut:
    return {
        "path": e.path,
        "title": e.title,
        "date": e.when.isoformat(),
        "outcome": e.outcome,
        "entity_links": list(e.entities),
        "duration": e.duration,
        "procedure": e.procedure,
        "summary": e.summary,
    }


class EpisodesOut(TypedDict):
    total: int
    episodes: list[EpisodeOut]


def episodes(found: Sequence[ep.Episode]) -> EpisodesOut:
    return {"total": len(found), "episodes": [episode(e) for e in found]}


class PeriodOut(TypedDict):
    period: str  # 2026-11-30, 2026-W48 or 2026-11
    starts_on: str
    success: int
    failure: int
    resolved: int
    ongoing: int
    decided: int
    success_rate: float | None
    failure_rate: float | None


class TrendsOut(TypedDict):
    entity: str
    granularity: str
    periods: list[PeriodOut]


def trends(entity: str, granularity: str, rows: Sequence[ep.TrendRow]) -> TrendsOut:
    return {
        "entity": entity,
        "granularity": granularity,
        "periods": [
            {
                "period": r.period,
                "starts_on": r.start.isoformat(),
                "success": r.success,
                "failure": r.failure,
                "resolved": r.resolved,
                "ongoing": r.ongoing,
                "decided": r.decided,
                "success_rate": None if r.success_rate is None else round(r.success_rate, 4),
                "failure_rate": None if r.failure_rate is None else round(r.failure_rate, 4),
            }
            for r in rows
        ],
    }


# --------------------------------------------------------------------------- loops


class LoopOut(TypedDict):
    loop_id: str  # what `loop resolve` and MCP `resolve_loop` take
    path: str
    title: str
    line: int
    text: str  # the task's words, without dates, priority and fields
    due: str | None
    priority: str | None
    created: str | None
    linked: list[str]  # link targets in the task's text: its other entities
    score: float
    reasons: list[str]


def loop(r: lp.RankedLoop) -> LoopOut:
    x = r.loop
    return {
        "loop_id": x.id,
        "path": x.path,
        "title": title_of(x.path),
        "line": x.line,
        "text": x.title,
        "due": _day(x.due),
        "priority": x.priority,
        "created": _day(x.created),
        "linked": list(x.links),
        "score": r.score,
        "reasons": list(r.reasons),
    }


class LoopsOut(TypedDict):
    total: int
    loops: list[LoopOut]


def loops(ranked: Sequence[lp.RankedLoop]) -> LoopsOut:
    return {"total": len(ranked), "loops": [loop(r) for r in ranked]}


# --------------------------------------------------------------------------- recall, gate


class ContextLineOut(TypedDict):
    kind: str  # loop, episode, fact or hit
    text: str
    path: str
    title: str
    line: int | None


class RecallOut(TypedDict):
    continuation: bool
    cue: str | None
    entities: list[NoteRef]
    lines: list[ContextLineOut]
    context: str  # the block, as an agent reads it
    chars: int
    lines_left_out: int  # candidate lines the budget left out


def recall(r: rc.Recall) -> RecallOut:
    return {
        "continuation": r.continuation is not None,
        "cue": r.continuation.cue if r.continuation else None,
        "entities": [note(p) for p in r.entities],
        "lines": [
            {
                "kind": c.kind,
                "text": c.text,
                "path": c.path,
                "title": title_of(c.path),
                "line": c.line,
            }
            for c in r.lines
        ],
        "context": r.text,
        "chars": len(r.text),
        "lines_left_out": r.left_out,
    }


class GateEntityOut(TypedDict):
    path: str | None  # null: a wanted note
    title: str
    score: float


class GateOut(TypedDict):
    verdict: str  # needs-memory, no-memory or nothing-stored
    exit_code: int
    search: bool  # False: decided without a search
    score: float
    reasons: list[str]
    entities: list[GateEntityOut]
    query: str
    llm: str | None  # the model's verdict, when one was asked and answered clearly
    notices: list[str]
    recall: RecallOut | None


def gate(result: GateResult) -> GateOut:
    d = result.decision
    return {
        "verdict": d.verdict,
        "exit_code": d.exit_code,
        "search": d.search,
        "score": d.score,
        "reasons": list(d.reasons),
        "entities": [
            {
                "path": m.path or None,
                "title": title_of(m.path) if m.path else m.name,
                "score": m.score,
            }
            for m in d.entities
        ],
        "query": d.query,
        "llm": result.llm,
        "notices": [result.notice] if result.notice else [],
        "recall": recall(result.context) if result.context else None,
    }


# --------------------------------------------------------------------------- writes


class WrittenOut(TypedDict):
    status: str  # added, changed, unchanged, created, written, resolved
    path: str
    title: str
    line: int | None
    block: str | None  # a fact's block id, or a loop's id
    message: str
    touched: list[NoteRef]


def written(w: Written) -> WrittenOut:
    p = w.plan
    return {
        "status": p.status,
        "path": p.path,
        "title": title_of(p.path),
        "line": p.line,
        "block": p.block,
        "message": p.message,
        "touched": [note(t) for t in w.touched],
    }


# --------------------------------------------------------------------------- salience


class SalientOut(TypedDict):
    kind: str  # note or fact
    path: str
    title: str
    label: str  # the note's title, or "title: key = value"
    score: float
    importance: float
    staleness: float
    days: int  # since it changed
    reasons: list[str]


class SalienceOut(TypedDict):
    total: int
    salient: list[SalientOut]


def salience(found: Sequence[sl.Salient]) -> SalienceOut:
    return {
        "total": len(found),
        "salient": [
            {
                "kind": s.kind,
                "path": s.path,
                "title": title_of(s.path),
                "label": s.label,
                "score": s.score,
                "importance": s.importance,
                "staleness": s.staleness,
                "days": s.days,
                "reasons": list(s.reasons),
            }
            for s in found
        ],
    }


# --------------------------------------------------------------------------- prune


class PrunedOut(TypedDict):
    path: str
    title: str
    tier: str
    expired_at: str | None  # ISO 8601
    trash_path: str | None  # where it went (vault path, in `.trash/`); null when listed


class PruneOut(TypedDict):
    total: int
    moved: bool  # False: only listed (`prune --yes` moves them)
    expired: list[PrunedOut]


def prune(
    found: Sequence[tuple[str, sl.Expiry]], trashed: Sequence[str | None] | None = None
) -> PruneOut:
    where = list(trashed) if trashed is not None else [None] * len(found)
    return {
        "total": len(found),
        "moved": trashed is not None,
        "expired": [
            {
                "path": path,
                "title": title_of(path),
                "tier": e.tier,
                "expired_at": e.expires.isoformat() if e.expires else None,
                "trash_path": there,
            }
            for (path, e), there in zip(found, where, strict=True)
        ],
    }
