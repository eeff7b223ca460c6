"""The capture note: rendered from candidates, and read back as a person left it in Obsidian.

    ---
    type: capture
    status: pending
    source: call with Maya
    captured_at: 2026-12-01T12:40:00+00:00
    transcript_sha256: 3f5a…
    extractor: heuristic
    ---

    ## Facts

    - [ ] [[Maya Chen]] role:: CTO ^c-1a2b3c
        - confidence 0.85 · turn 4 · “I'm the CTO now.”
        - contradicts [[Maya Chen#^f-9f3e]] (now “CEO”)

Each item is a task whose block id is the candidate's id; its kind follows from its key
(`loop::`, `decision::`, `episode::`, else a fact). Accepting checks it and records where it
went (`- accepted → [[Maya Chen#^f-9f3e]]`); rejecting strikes it (`- [-] ~~…~~`). Reading
is forgiving: a value, key or entity changed by hand, an item deleted, checked or struck in
Obsidian is read as it stands (the person's edit wins). Pure: text in, values out.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from vaultmem.capture.candidates import (
    DECISION_KEY,
    EPISODE_KEY,
    LOOP_KEY,
    OUTCOMES,
    Candidate,
    Kind,
    safe_name,
)

ItemStatus = Literal["pending", "accepted", "rejected", "checked"]
FlagKind = Literal["duplicates", "contradicts"]
NoteStatus = Literal["pending", "reviewed"]
SECTIONS: dict[Kind, str] = {
    "fact": "Facts",
    "loop": "Open loops",
    "decision": "Decisions",
    "episode": "Episode",
}
INTRO = (
    "Proposed from a transcript, waiting for review: accept, edit or reject each item with"
    " `vaultmem review` (or in the TUI), or check or strike it here."
)

_ITEM_RE = re.compile(
    r"^(?P<lead>[-*+][ \t]+)\[(?P<status>[^\]])\][ \t]+(?P<body>.*?)"
    r"(?:[ \t]+\^(?P<id>c-[0-9a-f]{6}))?[ \t]*$"
)
_BODY_RE = re.compile(
    r"^(?:\[\[(?P<entity>[^\]\n]*?)\]\][ \t]+)?(?P<key>[^\s:\[\]][^:\n]*?)::[ \t]*(?P<value>.*)$"
)
_DONE_RE = re.compile(r"[ \t]*✅[ \t]*\d{4}-\d{2}-\d{2}")
_DUE_EMOJI_RE = re.compile(r"[ \t]*📅[ \t]*(?P<due>\d{4}-\d{2}-\d{2})")
_DETAIL_RE = re.compile(r"^[ \t]+[-*+][ \t]+(?P<text>.*)$")
_SOURCE_RE = re.compile(
    r"^(?:due (?P<due>\d{4}-\d{2}-\d{2}) · )?confidence (?P<confidence>[0-9.]+)"
    r" · turn (?P<turn>\S+) · “(?P<quote>.*)”$"
)
_CONFIDENCE_RE = re.compile(r"^confidence:?[ \t]*(?P<confidence>[0-9.]+)$")
_QUOTE_RE = re.compile(r"^quote:[ \t]*[\"“](?P<quote>.*)[\"”]$")
_FLAG_RE = re.compile(
    r"^(?P<kind>duplicates|contradicts) \[\[(?P<target>[^\]\n]+)\]\](?: \(now “(?P<now>.*)”\))?$"
)
_ACCEPTED_RE = re.compile(r"^accepted → \[\[(?P<target>[^\]\n]+)\]\]")
_EPISODE_RE = re.compile(
    r"^date (?P<date>\S+) · outcome (?P<outcome>[a-z]+)(?: · entities (?P<entities>.*))?$"
)
_SUMMARY_RE = re.compile(r"^summary: (?P<summary>.*)$")
_LINK_RE = re.compile(r"\[\[([^\]\n]+)\]\]")


@dataclass(frozen=True)
class Flag:
    """A candidate checked against the vault: it repeats, or contradicts, a current fact."""

    kind: FlagKind
    target: str  # the link target: "Maya Chen#^f-1a2b"
    now: str | None = None  # the fact's value at capture time (for a contradiction)


@dataclass(frozen=True)
class Item:
    """A candidate as it stands in the capture note."""

    candidate: Candidate
    status: ItemStatus
    line: int  # 1-based line of the task
    end_line: int  # last line of its nested details
    flags: tuple[Flag, ...] = ()
    went_to: str | None = None  # where accepting wrote it: "Maya Chen#^f-1a2b"

    @property
    def id(self) -> str:
        return self.candidate.id

    @property
    def decided(self) -> bool:
        return self.status in ("accepted", "rejected")


@dataclass(frozen=True)
class Header:
    """A capture note's front matter."""

    source: str
    captured_at: dt.datetime
    sha256: str
    extractor: str
    status: NoteStatus = "pending"
    persona: str | None = None
    transcript_date: dt.datetime | None = None


@dataclass(frozen=True)
class CaptureNote:
    """A capture note read back: its header and items, in the order they stand."""

    path: str
    header: Header
    items: tuple[Item, ...]

    @property
    def pending(self) -> tuple[Item, ...]:
        return tuple(i for i in self.items if not i.decided)

    def item(self, item_id: str) -> Item | None:
        return next((i for i in self.items if i.id == item_id), None)


# --------------------------------------------------------------------------- rendering


def render(
    header: Header,
    candidates: Sequence[Candidate],
    flags: dict[str, tuple[Flag, ...]] | None = None,
) -> str:
    """The capture note's text: front matter, then one section per kind with its items."""
    flags = flags or {}
    lines = ["---", "type: capture", f"status: {header.status}"]
    lines.append(f"source: {_yaml(header.source)}")
    lines.append(f"captured_at: {header.captured_at.isoformat(timespec='seconds')}")
    lines.append(f"transcript_sha256: {header.sha256}")
    lines.append(f"extractor: {_yaml(header.extractor)}")
    if header.transcript_date is not None:
        lines.append(f"transcript_date: {header.transcript_date.isoformat(timespec='seconds')}")
    if header.persona:
        lines.append(f"persona: {_yaml(header.persona)}")
    lines += ["---", "", INTRO]
    for kind, title in SECTIONS.items():
        chosen = [c for c in candidates if c.kind == kind]
        if not chosen:
            continue
        lines += ["", f"## {title}", ""]
        for candidate in chosen:
            lines += item_lines(candidate, flags.get(candidate.id, ()))
    return "\n".join(lines) + "\n"


def item_lines(candidate: Candidate, flags: Sequence[Flag] = ()) -> list[str]:
    """The task line of a candidate and its nested details."""
    c = candidate
    if c.kind == "episode":
        head = f"- [ ] {EPISODE_KEY}:: {one_line(c.entity)} ^{c.id}"
    else:
        key = {"loop": LOOP_KEY, "decision": DECISION_KEY}.get(c.kind, c.key)
        head = f"- [ ] [[{safe_name(c.entity)}]] {one_line(key)}:: {one_line(c.value)} ^{c.id}"
    due = f"due {c.due.isoformat()} · " if c.due else ""
    turn = one_line(c.turn)
    out = [
        head,
        f"    - {due}confidence {c.confidence:.2f} · turn {turn} · “{quote_text(c.quote)}”",
    ]
    if c.kind == "episode":
        when = c.when.isoformat(timespec="seconds") if c.when else "unknown"
        links = ", ".join(f"[[{safe_name(e)}]]" for e in c.entities if safe_name(e))
        out.append(
            f"    - date {when} · outcome {c.outcome or 'ongoing'}"
            + (f" · entities {links}" if links else "")
        )
        out.append(f"    - summary: {quote_text(c.value)}")
    for flag in flags:
        now = f" (now “{quote_text(flag.now)}”)" if flag.now is not None else ""
        out.append(f"    - {flag.kind} [[{flag.target}]]{now}")
    return out


def one_line(text: str) -> str:
    """Text fit for one line of a list item: no line breaks, no `%%`, no trailing block id."""
    cleaned = " ".join(text.replace("%%", "% %").split())
    return re.sub(r"(\s\^[A-Za-z0-9-]+)$", r"\1.", cleaned)


def quote_text(text: str) -> str:
    """A transcript's words made inert in a note: no links, fields, comments or HTML they
    could open (a transcript is data; its `[[`, `::` and `%%` stay visible, not active)."""
    cleaned = one_line(text)
    for bad, inert in (("[[", "[ ["), ("]]", "] ]"), ("::", ": :"), ("<!--", "< !--"), ("`", "'")):
        cleaned = cleaned.replace(bad, inert)
    return cleaned.replace("“", '"').replace("”", '"')


def _yaml(text: str) -> str:
    """A YAML scalar: plain when safe, else double-quoted (JSON's syntax is valid YAML)."""
    cleaned = " ".join(text.split())
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 _.,()'-]*", cleaned) and not cleaned.endswith(" "):
        return cleaned
    return json.dumps(cleaned, ensure_ascii=False)


# --------------------------------------------------------------------------- reading back


def front_matter(text: str) -> dict[str, object]:
    """The top-level `key: value` scalars of a note's front matter, read without YAML (the
    keys a capture note has; lists and nested values are skipped): fast enough to list
    hundreds of capture notes as the review screen opens."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}
    out: dict[str, object] = {}
    for line in lines[1:]:
        if line.rstrip() in ("---", "..."):
            return out
        m = re.match(r"^([A-Za-z_][\w-]*):[ \t]*(.*?)[ \t]*$", line)
        if m is None or not m[2]:
            continue
        value: object = re.sub(r"[ \t]+#.*$", "", m[2])
        if m[2].startswith('"'):
            try:
                value, _ = json.JSONDecoder().raw_decode(m[2])
            except json.JSONDecodeError:
                value = m[2].strip('"')
        elif q := re.match(r"^'((?:[^']|'')*)'", m[2]):
            value = q[1].replace("''", "'")
        out[m[1]] = value
    return {}  # no closing line: no front matter


def parse(
    path: str, text: str, frontmatter: Mapping[str, object] | None = None
) -> CaptureNote | None:
    """The capture note in `text`, or None when the note is not a capture (`type: capture`).
    `frontmatter` is the note's parsed front matter, when the caller has it."""
    if frontmatter is None:
        frontmatter = front_matter(text)
    if str(frontmatter.get("type", "")).strip().lower() != "capture":
        return None
    header = _header(frontmatter)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    items: list[Item] = []
    ids: set[str] = set()
    i = 0
    while i < len(lines):
        m = _ITEM_RE.match(lines[i])
        if m is None:
            i += 1
            continue
        end = i
        details: list[str] = []
        while end + 1 < len(lines) and (d := _DETAIL_RE.match(lines[end + 1])):
            details.append(d["text"].strip())
            end += 1
        item = _item(m, details, i + 1, end + 1, ids)
        if item is not None:
            items.append(item)
            ids.add(item.id)
        i = end + 1
    return CaptureNote(path, header, tuple(items))


def _header(fm: Mapping[str, object]) -> Header:
    status: NoteStatus = (
        "reviewed" if str(fm.get("status", "")).strip() == "reviewed" else "pending"
    )
    persona = fm.get("persona")
    return Header(
        source=str(fm.get("source") or ""),
        captured_at=_datetime(fm.get("captured_at")) or dt.datetime.min.replace(tzinfo=dt.UTC),
        sha256=str(fm.get("transcript_sha256") or ""),
        extractor=str(fm.get("extractor") or ""),
        status=status,
        persona=str(persona) if persona else None,
        transcript_date=_datetime(fm.get("transcript_date")),
    )


def _datetime(value: object) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time())
    if isinstance(value, str):
        try:
            return dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


def _item(
    m: re.Match[str], details: list[str], line: int, end_line: int, taken: set[str]
) -> Item | None:
    body = _DONE_RE.sub("", m["body"]).strip()
    struck = body.startswith("~~") and body.endswith("~~") and len(body) >= 4
    if struck:
        body = body[2:-2].strip()
    due: dt.date | None = None
    if d := _DUE_EMOJI_RE.search(body):
        due = _date(d["due"])
        body = (body[: d.start()] + body[d.end() :]).strip()
    b = _BODY_RE.match(body)
    if b is None:
        return None  # no longer `[[Entity]] key:: value`: the person rewrote it as a plain task
    key = b["key"].strip()
    kind: Kind = {LOOP_KEY: "loop", DECISION_KEY: "decision", EPISODE_KEY: "episode"}.get(
        key.lower(), "fact"
    )  # type: ignore[assignment]
    entity = (b["entity"] or "").split("|")[0].split("#")[0].strip()
    value = b["value"].strip()
    confidence, turn, quote = 0.0, "", ""
    flags: list[Flag] = []
    went_to: str | None = None
    when: dt.datetime | None = None
    outcome: str | None = None
    entities: tuple[str, ...] = ()
    summary: str | None = None
    for text in details:
        if s := _SOURCE_RE.match(text):
            confidence = _float(s["confidence"])
            turn, quote = s["turn"], s["quote"]
            due = due or _date(s["due"])
        elif s := _CONFIDENCE_RE.match(text):  # the conventions' plainer forms, by hand
            confidence = _float(s["confidence"])
        elif s := _QUOTE_RE.match(text):
            quote = s["quote"]
        elif f := _FLAG_RE.match(text):
            flags.append(Flag(f["kind"], f["target"].strip(), f["now"]))  # type: ignore[arg-type]
        elif a := _ACCEPTED_RE.match(text):
            went_to = a["target"].strip()
        elif e := _EPISODE_RE.match(text):
            when = _datetime(e["date"])
            outcome = e["outcome"] if e["outcome"] in OUTCOMES else "ongoing"
            entities = tuple(x.split("|")[0].strip() for x in _LINK_RE.findall(e["entities"] or ""))
        elif s2 := _SUMMARY_RE.match(text):
            summary = s2["summary"].strip()
    if kind == "episode":
        entity, value = value, summary if summary is not None else ""
    status_char = m["status"]
    status: ItemStatus
    if struck or status_char == "-":
        status = "rejected"
    elif status_char in "xX":
        status = "accepted" if went_to else "checked"
    else:
        status = "pending"
    candidate = Candidate(
        id=m["id"] or _derived_id(f"{kind}|{entity}|{key}|{value}", taken),
        kind=kind,
        entity=entity,
        key=key
        if kind == "fact"
        else {"loop": LOOP_KEY, "decision": DECISION_KEY, "episode": EPISODE_KEY}[kind],
        value=value,
        quote=quote,
        turn=turn,
        confidence=confidence,
        due=due if kind == "loop" else None,
        when=when,
        outcome=outcome,
        entities=entities,
    )
    return Item(candidate, status, line, end_line, tuple(flags), went_to)


def _derived_id(text: str, taken: set[str]) -> str:
    """The id of an item written without one (by hand, as the conventions allow): from what
    it says, so it stays the same when the item is checked, struck or moved in the note."""
    n = 1
    while True:
        seed = text if n == 1 else f"{text}|{n}"
        found = "c-" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:6]
        if found not in taken:
            return found
        n += 1


def _date(text: str | None) -> dt.date | None:
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        return 0.0
    return value if 0.0 <= value <= 1.0 else 0.0


def with_value(item: Item, **changes: object) -> Candidate:
    """The item's candidate with some fields changed (an edit in review)."""
    return replace(item.candidate, **changes)  # type: ignore[arg-type]
