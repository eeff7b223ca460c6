"""Open loops: every unchecked task, ranked; matched by id or text; resolved or added as edits.

A loop's id is `l-` and 8 hex digits of a hash of its note's path and its text without the
task metadata (dates, priority, inline fields, block id), so it survives the task moving to
another line and a due date or priority being added, but not a rename of the note or an edit
of its words. Identical tasks in one note are told apart by their order (`…\\0 2`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, get_args

from vaultmem.memory.errors import LoopAmbiguous, LoopChanged, LoopNotFound, Refused
from vaultmem.memory.lines import (
    LineEdit,
    append_to_section,
    apply,
    indent_of,
    parse_lines,
    width,
)
from vaultmem.memory.values import refuse_unpaired
from vaultmem.model import Task
from vaultmem.parser import split_link_ref
from vaultmem.resolver import fold

Priority = Literal["highest", "high", "medium", "low", "lowest"]
PRIORITIES: tuple[Priority, ...] = get_args(Priority)
EMOJI: dict[Priority, str] = {
    "highest": "🔺",
    "high": "⏫",
    "medium": "🔼",
    "low": "🔽",
    "lowest": "⏬",
}
# Tasks sorts a task without priority between medium and low; so does the ranking.
PRIORITY_SCORE: dict[Priority | None, float] = {
    "highest": 2.5,
    "high": 2.0,
    "medium": 1.0,
    None: 0.5,
    "low": 0.25,
    "lowest": 0.0,
}
_PRIORITY_WORDS: dict[str, Priority] = {
    "highest": "highest",
    "urgent": "highest",
    "critical": "highest",
    "high": "high",
    "medium": "medium",
    "med": "medium",
    "low": "low",
    "lowest": "lowest",
}
LOOP_HEADINGS = ("Open loops", "Loops", "Tasks", "To do", "Todo", "Next steps")
NEW_SECTION = "Open loops"
MAX_TEXT_CHARS = 1000
MAX_LISTED = 10

_ID_RE = re.compile(r"^l-[0-9a-f]{8}$")
_DATE = r"\d{4}-\d{2}-\d{2}"
_EMOJI_DATE_RE = re.compile(rf"[📅⏳🛫➕✅❌]\ufe0f?\s*{_DATE}")
_CREATED_RE = re.compile(rf"➕\ufe0f?\s*({_DATE})")
_RECUR_RE = re.compile(r"🔁\ufe0f?[^📅⏳🛫➕✅❌🔺⏫🔼🔽⏬\[\]()^]*")
_FIELD_RE = re.compile(
    r"[\[(]([^\W\d_][\w \-/.]*?)::[ \t]*((?:\[\[[^\]\n]*\]\]|[^\[\]()\n])*)[\])]"
)
_PRIORITY_EMOJI_RE = re.compile("[🔺⏫🔼🔽⏬]\ufe0f?")
_BLOCK_RE = re.compile(r"(?:^|\s)\^[A-Za-z0-9][A-Za-z0-9\-]*\s*$")
_WIKILINK_RE = re.compile(r"!?\[\[([^\[\]\n]+?)\]\]")
_TASK_LINE_RE = re.compile(
    r"^(?P<lead>[ \t>]*(?:[-*+]|\d{1,9}[.)])[ \t]+)\[(?P<status>.)\](?P<rest>.*)$"
)
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@dataclass(frozen=True)
class Loop:
    """An open loop: an unchecked task in a note."""

    id: str
    path: str
    line: int  # 1-based
    text: str  # the task text as written, after `[ ] `
    title: str  # the text without dates, priority, fields or block id
    due: dt.date | None = None
    priority: Priority | None = None
    created: dt.date | None = None  # ➕ or [created:: ], else the note's day when known
    links: tuple[str, ...] = ()  # link targets in the text: the loop's other entities
    detail: str = ""  # the non-task lines nested under it, when read from the note's lines

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "path": self.path,
            "line": self.line,
            "text": self.title,
            "due": self.due.isoformat() if self.due else None,
            "priority": self.priority,
            "created": self.created.isoformat() if self.created else None,
            "links": list(self.links),
        }


@dataclass(frozen=True)
class RankedLoop:
    loop: Loop
    score: float
    reasons: tuple[str, ...]


# --------------------------------------------------------------------------- reading


def title_of(text: str) -> str:
    """A task's words without its metadata: the part a person reads and the id is made of."""
    t = _FIELD_RE.sub(" ", text)
    t = _EMOJI_DATE_RE.sub(" ", t)
    t = _RECUR_RE.sub(" ", t)
    t = _PRIORITY_EMOJI_RE.sub(" ", t)
    t = _BLOCK_RE.sub(" ", t)
    return " ".join(t.split())


def loop_id(path: str, title: str, occurrence: int = 0) -> str:
    key = unicodedata.normalize("NFC", title).casefold()
    seed = f"{path}\0{key}" + (f"\0{occurrence + 1}" if occurrence else "")
    return "l-" + hashlib.blake2b(seed.encode(), digest_size=4).hexdigest()


def priority_of(value: str | None) -> Priority | None:
    """A priority from a Tasks emoji name or a Dataview `[priority:: …]` value."""
    if value is None:
        return None
    return _PRIORITY_WORDS.get(value.strip().lower())


def _date(text: str | None) -> dt.date | None:
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text.strip()[:10])
    except ValueError:
        return None


def loops_from(path: str, tasks: Iterable[Task], note_day: dt.date | None = None) -> list[Loop]:
    """The open loops among a note's tasks (as the parser or the index gives them)."""
    seen: dict[str, int] = {}
    out: list[Loop] = []
    for task in sorted(tasks, key=lambda t: t.line):
        if task.status != " ":
            continue  # Obsidian shows any other mark as checked
        title = title_of(task.text)
        occurrence = seen.get(fold(title), 0)
        seen[fold(title)] = occurrence + 1
        fields = {k.strip().lower(): v.strip() for k, v in _FIELD_RE.findall(task.text)}
        created = _date(m[1]) if (m := _CREATED_RE.search(task.text)) else None
        out.append(
            Loop(
                id=loop_id(path, title, occurrence),
                path=path,
                line=task.line,
                text=task.text,
                title=title,
                due=_date(task.due),
                priority=priority_of(task.priority),
                created=created or _date(fields.get("created")) or note_day,
                links=_links(task.text),
            )
        )
    return out


def loops_in(path: str, lines: Sequence[str], note_day: dt.date | None = None) -> list[Loop]:
    """The open loops of a note given as lines, each with the detail nested under it."""
    found = loops_from(path, parse_lines(lines, path).tasks, note_day)
    return [replace(loop, detail=detail_of(lines, loop.line - 1)) for loop in found]


def detail_of(lines: Sequence[str], index: int) -> str:
    """The text of the lines nested under a task (not its subtasks), on one line."""
    if index >= len(lines):
        return ""
    own = width(indent_of(lines[index]))
    parts: list[str] = []
    for line in lines[index + 1 :]:
        if not line.strip():
            break
        if width(indent_of(line)) <= own:
            break
        if _TASK_LINE_RE.match(line):
            continue
        parts.append(line.strip().lstrip("-*+ ").strip())
    return " ".join(" ".join(parts).split())


def _links(text: str) -> tuple[str, ...]:
    out = []
    for m in _WIKILINK_RE.finditer(text):
        ref = split_link_ref(m.group(1))
        if ref is not None and ref.target:
            out.append(ref.target)
    return tuple(dict.fromkeys(out))


# --------------------------------------------------------------------------- ranking


def rank(loops: Iterable[Loop], today: dt.date) -> list[RankedLoop]:
    """Loops most in need of attention first: overdue and due soon, then priority, then age.

    score = due (overdue 3-4, due within a week 2-3, within a month 1-2, later 0.5, none 0)
          + priority (highest 2.5 … none 0.5 … lowest 0) + age (up to 0.5 at 90 days open).
    Ties go to the earlier due date, then the note path and line, so the order is stable.
    """
    ranked = []
    for loop in loops:
        score, reasons = 0.0, []
        if loop.due is not None:
            days = (loop.due - today).days
            if days < 0:
                score += 3 + min(-days, 30) / 30
                reasons.append(f"overdue {-days} day{'s' if days != -1 else ''}")
            elif days == 0:
                score += 3
                reasons.append("due today")
            elif days <= 7:
                score += 2 + (7 - days) / 7
                reasons.append(f"due in {days} day{'s' if days != 1 else ''}")
            elif days <= 30:
                score += 1 + (30 - days) / 30
                reasons.append(f"due {loop.due.isoformat()}")
            else:
                score += 0.5
                reasons.append(f"due {loop.due.isoformat()}")
        score += PRIORITY_SCORE[loop.priority]
        if loop.priority is not None:
            reasons.append(f"{loop.priority} priority")
        if loop.created is not None:
            age = max(0, (today - loop.created).days)
            score += min(age, 90) / 90 * 0.5
            if age >= 14:
                reasons.append(f"open {age} days")
        ranked.append(RankedLoop(loop, round(score, 4), tuple(reasons)))
    far = dt.date.max
    ranked.sort(key=lambda r: (-r.score, r.loop.due or far, r.loop.path, r.loop.line))
    return ranked


def select(
    loops: Iterable[Loop],
    *,
    entities: Iterable[str] = (),
    due_before: dt.date | None = None,
    priority: Priority | None = None,
) -> list[Loop]:
    """Loops about any of `entities` (note paths or names: the loop's note or a link in its
    text), due on or before `due_before`, with at least `priority`."""
    wanted = {_name(e) for e in entities}
    floor = PRIORITY_SCORE[priority] if priority else None
    return [
        loop
        for loop in loops
        if (not wanted or wanted & {_name(loop.path), *(_name(t) for t in loop.links)})
        and (due_before is None or (loop.due is not None and loop.due <= due_before))
        and (floor is None or PRIORITY_SCORE[loop.priority] >= floor)
    ]


def _name(target: str) -> str:
    return fold(target.strip().removesuffix(".md").rsplit("/", 1)[-1])


# --------------------------------------------------------------------------- REF


def match(ref: str, loops: Sequence[Loop]) -> Loop:
    """The one open loop a REF names: its id, or text found in exactly one loop (an exact
    title wins over partial matches). Several matches are listed in the error."""
    wanted = ref.strip()
    if not wanted:
        raise Refused("empty loop reference: give an id from `vaultmem loops --json` or its text")
    if _ID_RE.match(wanted.lower()):
        found = [loop for loop in loops if loop.id == wanted.lower()]
        if found:
            return found[0]
        raise LoopNotFound(
            f"no open loop has id {wanted}: it was resolved, or its text or note changed since"
            " it was listed; run `vaultmem loops` for the current ids"
        )
    key = " ".join(unicodedata.normalize("NFC", wanted).casefold().split())
    hits = [loop for loop in loops if key in loop.title.casefold() or key in loop.text.casefold()]
    exact = [loop for loop in hits if loop.title.casefold() == key]
    if len(exact) == 1:
        return exact[0]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise LoopNotFound(f"no open loop matches {wanted!r}; `vaultmem loops` lists them")
    shown = "\n".join(f"  {h.id}  {h.path}:{h.line}  {h.title}" for h in hits[:MAX_LISTED])
    more = f"\n  … and {len(hits) - MAX_LISTED} more" if len(hits) > MAX_LISTED else ""
    raise LoopAmbiguous(
        f"{wanted!r} matches {len(hits)} open loops; nothing was changed."
        f" Give an id:\n{shown}{more}"
    )


# --------------------------------------------------------------------------- writing


def plan_resolve(lines: Sequence[str], loop: Loop, today: dt.date) -> LineEdit:
    """The edit that checks `loop` in place with today's date: `- [x] text ✅ YYYY-MM-DD`.

    The task is found by its id in the note's current lines, so a task that moved is still
    found; one that was edited, checked or deleted since it was listed is LoopChanged.
    """
    now = [x for x in loops_in(loop.path, lines) if x.id == loop.id]
    if not now:
        done = [
            n + 1
            for n, line in enumerate(lines)
            if (m := _TASK_LINE_RE.match(line))
            and m["status"] != " "
            and title_of(m["rest"]).casefold() == loop.title.casefold()
        ]
        if done:
            raise LoopChanged(
                f"{loop.path}:{done[0]}: {loop.title!r} is already checked; nothing was changed"
            )
        raise LoopChanged(
            f"{loop.path}: the task {loop.title!r} was edited or removed since it was listed;"
            " nothing was changed. Run `vaultmem loops` and try again"
        )
    index = now[0].line - 1
    m = _TASK_LINE_RE.match(lines[index])
    if m is None:  # the parser saw a task the line pattern does not: never guess
        raise LoopChanged(f"{loop.path}:{index + 1}: cannot find the checkbox of {loop.title!r}")
    rest = m["rest"].rstrip()
    stamp = f"✅ {today.isoformat()}"
    block = _BLOCK_RE.search(rest)
    if block:
        rest = f"{rest[: block.start()].rstrip()} {stamp} {rest[block.start() :].strip()}"
    else:
        rest = f"{rest} {stamp}"
    return LineEdit(index, index + 1, (f"{m['lead']}[x]{rest}",))


def plan_add(
    lines: Sequence[str],
    text: str,
    *,
    due: dt.date | None = None,
    priority: Priority | None = None,
    path: str = "note.md",
) -> tuple[LineEdit, Loop]:
    """The edit adding `- [ ] text ⏫ 📅 2026-12-01` to the note's open loops section (one of
    LOOP_HEADINGS, else a new `## Open loops` at the end), and the loop it makes."""
    words = text.strip()
    if not words:
        raise Refused("empty loop text: say what is still to do")
    if any(c in words for c in _BREAKS):
        raise Refused("the loop text has a line break: a loop is one task line")
    bad = next((c for c in words if unicodedata.category(c) == "Cc" and c != "\t"), None)
    if bad is not None:
        raise Refused(f"the loop text holds a control character (U+{ord(bad):04X})")
    refuse_unpaired(words, "the loop text")
    if len(words) > MAX_TEXT_CHARS:
        raise Refused(
            f"the loop text is {len(words):,} characters; a task line holds at most"
            f" {MAX_TEXT_CHARS:,}: link a note with the details"
        )
    if re.match(r"^\[.\]\s", words):
        raise Refused("give the loop's text without a checkbox; vaultmem adds `- [ ]`")
    if due is not None and ("📅" in words or re.search(r"[\[(]due::", words)):
        raise Refused("the text already has a due date; drop it from the text or leave out --due")
    if priority is not None and (_PRIORITY_EMOJI_RE.search(words) or "priority::" in words):
        raise Refused("the text already has a priority; drop it or leave out --priority")
    if not title_of(words):
        raise Refused("the loop text holds only dates or fields: say what is still to do")
    if "%%" in words:
        raise Refused("the loop text contains `%%`, which starts an Obsidian comment")
    line = f"- [ ] {words}"
    if priority is not None:
        line += f" {EMOJI[priority]}"
    if due is not None:
        line += f" 📅 {due.isoformat()}"
    note = parse_lines(lines, path)
    edit, at = append_to_section(lines, note, LOOP_HEADINGS, [line], NEW_SECTION)
    made = [x for x in loops_in(path, apply(lines, [edit])) if x.line == at + 1]
    if not made:
        raise Refused(
            f"the loop {words[:60]!r} would not read back as a task at line {at + 1}: its"
            " text, or a code block, comment or math block above it that is never closed,"
            " keeps it from being one. Close the block in the note, or write the loop another"
            " way, then try again"
        )
    return edit, made[0]
