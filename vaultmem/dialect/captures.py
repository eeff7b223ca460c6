"""Captures in the dialect: a capture run, the review queue, and review decisions."""

from __future__ import annotations

from collections.abc import Sequence

from typing_extensions import TypedDict

from vaultmem.capture.candidates import Candidate
from vaultmem.capture.note import CaptureNote, Flag, Item
from vaultmem.capturing import CaptureResult, Decision
from vaultmem.model import title_of


class FlagOut(TypedDict):
    flag: str  # duplicates | contradicts
    target: str  # the link target, `Note#^block`
    current_value: str | None  # a contradicted fact's value at capture time


class ItemOut(TypedDict):
    item_id: str
    kind: str  # fact | loop | decision | episode
    entity: str
    key: str
    value: str
    quote: str
    turn: str
    confidence: float
    due: str | None
    date: str | None
    outcome: str | None
    episode_entities: list[str]
    item_status: str  # pending | accepted | rejected | checked
    flags: list[FlagOut]
    went_to: str | None


class DroppedOut(TypedDict):
    low_confidence: int
    too_short: int
    over_limit: int


class DecisionOut(TypedDict):
    item_id: str
    decision: str  # accepted | rejected | edited | already-decided
    path: str
    title: str
    message: str
    went_to: str | None


class CaptureOut(TypedDict):
    capture_status: str  # written | dry-run | already-captured | nothing-to-capture
    path: str | None
    title: str | None
    extractor: str
    transcript_sha256: str
    items: list[ItemOut]
    dropped: DroppedOut | None
    accepted: list[DecisionOut]


class CaptureNoteOut(TypedDict):
    path: str
    title: str
    label: str
    captured_at: str
    extractor: str
    transcript_sha256: str
    review_status: str  # pending | reviewed
    pending: int
    items: list[ItemOut]


class ReviewOut(TypedDict):
    pending: int
    captures: list[CaptureNoteOut]


def flag(f: Flag) -> FlagOut:
    return {"flag": f.kind, "target": f.target, "current_value": f.now}


def item(
    c: Candidate,
    status: str = "pending",
    flags: Sequence[Flag] = (),
    went_to: str | None = None,
) -> ItemOut:
    return {
        "item_id": c.id,
        "kind": c.kind,
        "entity": c.entity,
        "key": c.key,
        "value": c.value,
        "quote": c.quote,
        "turn": c.turn,
        "confidence": c.confidence,
        "due": c.due.isoformat() if c.due else None,
        "date": c.when.isoformat() if c.when else None,
        "outcome": c.outcome,
        "episode_entities": list(c.entities),
        "item_status": status,
        "flags": [flag(f) for f in flags],
        "went_to": went_to,
    }


def note_item(i: Item) -> ItemOut:
    return item(i.candidate, i.status, i.flags, i.went_to)


def decision(d: Decision) -> DecisionOut:
    return {
        "item_id": d.id,
        "decision": d.status,
        "path": d.capture,
        "title": title_of(d.capture),
        "message": d.message,
        "went_to": d.went_to,
    }


def capture(result: CaptureResult) -> CaptureOut:
    gated = result.gated
    return {
        "capture_status": result.status,
        "path": result.path,
        "title": title_of(result.path) if result.path else None,
        "extractor": result.extractor,
        "transcript_sha256": result.sha256,
        "items": [item(c, flags=result.flags.get(c.id, ())) for c in result.candidates],
        "dropped": {
            "low_confidence": gated.low_confidence,
            "too_short": gated.too_short,
            "over_limit": gated.over_limit,
        }
        if gated is not None
        else None,
        "accepted": [decision(d) for d in result.accepted],
    }


def capture_note(note: CaptureNote) -> CaptureNoteOut:
    return {
        "path": note.path,
        "title": title_of(note.path),
        "label": note.header.source,
        "captured_at": note.header.captured_at.isoformat(),
        "extractor": note.header.extractor,
        "transcript_sha256": note.header.sha256,
        "review_status": note.header.status,
        "pending": len(note.pending),
        "items": [note_item(i) for i in note.items],
    }


def review(notes: Sequence[CaptureNote]) -> ReviewOut:
    return {
        "pending": sum(len(n.pending) for n in notes),
        "captures": [capture_note(n) for n in notes],
    }
