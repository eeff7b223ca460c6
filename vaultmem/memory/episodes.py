"""Episodes: what happened, as `episodes/YYYY-MM-DD <title>.md` notes; their listing and trends.

An episode note's front matter holds `type: episode`, `date` (ISO date or date-time),
`outcome` (success, failure, resolved, ongoing), `entities` (wikilinks), and optionally
`duration` (`45m`, `1h30m`) and `procedure` (a wikilink); its body says what happened.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal, get_args

from vaultmem.decay import parse_when
from vaultmem.memory.errors import Refused
from vaultmem.parser import split_link_ref
from vaultmem.resolver import fold

Outcome = Literal["success", "failure", "resolved", "ongoing"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
Granularity = Literal["day", "week", "month"]
GRANULARITIES: tuple[Granularity, ...] = get_args(Granularity)
_OUTCOMES: dict[str, Outcome] = {o: o for o in OUTCOMES}

FOLDER = "episodes"
MAX_TITLE_BYTES = 180  # leaves room for the date, ".md" and " 99" under 255-byte names
FUTURE_SLACK = dt.timedelta(hours=14)  # the furthest time zone ahead of UTC
_UNSAFE = {"/": "-", "\\": "-", ":": " -", "|": "-"}
_DROP = set('#^[]*?"<>')
_DATE_PREFIX_RE = re.compile(r"^\d{4}-\d{2}-\d{2} ")
_DURATION_PART_RE = re.compile(
    r"(\d+(?:\.\d+)?)\s*(h|hr|hrs|hour|hours|m|min|mins|minute|minutes|s|sec|secs|second|seconds)\b"
)
_LINK_BAD = ("[[", "]]", "|", "#", "^", "\n", "\r")


@dataclass(frozen=True)
class Episode:
    """One episode note, as read from its path and front matter."""

    path: str
    title: str
    when: dt.datetime  # aware; a date alone is midnight UTC
    outcome: Outcome | None  # None: missing or not one of OUTCOMES
    entities: tuple[str, ...] = ()  # link targets as written
    duration: str | None = None
    procedure: str | None = None
    summary: str = ""  # the body's first paragraph, when the caller read it

    @property
    def day(self) -> dt.date:
        return self.when.date()


@dataclass(frozen=True)
class NewEpisode:
    """An episode to write: its vault path and the note's full text."""

    path: str
    text: str


@dataclass(frozen=True)
class TrendRow:
    """One period of `trends`: counts per outcome, and rates over the decided episodes."""

    period: str  # 2026-11-30, 2026-W48 or 2026-11
    start: dt.date
    success: int
    failure: int
    resolved: int
    ongoing: int

    @property
    def decided(self) -> int:
        return self.success + self.failure + self.resolved

    @property
    def success_rate(self) -> float | None:
        """(success + resolved) / decided: a resolved problem counts as a success."""
        return (self.success + self.resolved) / self.decided if self.decided else None

    @property
    def failure_rate(self) -> float | None:
        return self.failure / self.decided if self.decided else None


# --------------------------------------------------------------------------- writing


def safe_title(title: str) -> str:
    """A title fit for a file name and a wikilink: no `/ \\ : |` (replaced), no `# ^ [ ] * ? "
    < >` (dropped), no control characters, no leading dot, at most MAX_TITLE_BYTES."""
    text = unicodedata.normalize("NFC", title)
    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            out.append(" ")
        elif ch in _UNSAFE:
            out.append(_UNSAFE[ch])
        elif ch not in _DROP:
            out.append(ch)
    cleaned = " ".join("".join(out).split()).strip(" .-")
    if len(cleaned.encode()) > MAX_TITLE_BYTES:
        cut = cleaned.encode()[:MAX_TITLE_BYTES].decode(errors="ignore")
        cleaned = (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" .-")
    if not cleaned:
        raise Refused(f"the episode title {title[:60]!r} has nothing usable in a file name")
    return cleaned


def episode_path(day: dt.date, title: str, taken: Iterable[str] = (), folder: str = FOLDER) -> str:
    """`episodes/YYYY-MM-DD <title>.md`, numbered " 2", " 3"… past names already `taken`
    (compared case-insensitively, as Obsidian resolves names)."""
    base = (
        f"{folder.strip('/')}/{day.isoformat()} {safe_title(title)}"
        if folder.strip("/")
        else (f"{day.isoformat()} {safe_title(title)}")
    )
    used = {fold(p) for p in taken}
    path = f"{base}.md"
    n = 2
    while fold(path) in used:
        path = f"{base} {n}.md"
        n += 1
    return path


def parse_duration(text: str) -> str:
    """A duration as `1h30m`, `45m` or `30s`, from what people type ("90 min", "1.5 hours")."""
    t = text.strip().lower()
    if t.isdigit():
        t += "m"  # a bare number is minutes
    seconds = 0.0
    end = 0
    for m in _DURATION_PART_RE.finditer(t):
        if t[end : m.start()].strip(" ,and"):
            break
        n = float(m[1])
        unit = m[2][0]
        seconds += n * {"h": 3600, "m": 60, "s": 1}[unit]
        end = m.end()
    if not end or t[end:].strip() or seconds <= 0:
        raise Refused(f"cannot read the duration {text[:40]!r}: use a form such as 45m, 1h30m, 2h")
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [
        f"{hours}h" if hours else "",
        f"{minutes}m" if minutes else "",
        f"{secs}s" if secs else "",
    ]
    return "".join(parts)


def wikilink(name: str, what: str = "entity") -> str:
    """`[[name]]` for a note name or path (an existing `[[...]]` is unwrapped first)."""
    inner = name.strip()
    if inner.startswith("[[") and inner.endswith("]]"):
        inner = inner[2:-2].strip()
    inner = inner.removesuffix(".md") if "/" in inner else inner
    if not inner or any(b in inner for b in _LINK_BAD):
        raise Refused(f"the {what} {name[:60]!r} cannot be a wikilink: give a note title or path")
    return f"[[{inner}]]"


def check_when(when: dt.datetime, now: dt.datetime) -> dt.datetime:
    """The episode's time, refused when it lies in the future (an episode is what happened)."""
    aware = when if when.tzinfo else when.replace(tzinfo=now.tzinfo or dt.UTC)
    if aware - now > FUTURE_SLACK:
        raise Refused(
            f"the episode date {aware.date().isoformat()} is in the future: an episode records"
            " what happened; use a loop (`vaultmem loop add`) for what is still to do"
        )
    return aware


def episode_note(
    title: str,
    outcome: str,
    when: dt.datetime | dt.date,
    now: dt.datetime,
    *,
    entities: Sequence[str] = (),
    duration: str | None = None,
    procedure: str | None = None,
    body: str = "",
    taken: Iterable[str] = (),
    folder: str = FOLDER,
) -> NewEpisode:
    """The path and text of a new episode note. `when` is a date-time, or a day when the time
    is unknown (written as a date); `taken` holds existing paths so the name is new."""
    if outcome not in OUTCOMES:
        raise Refused(f"unknown outcome {outcome!r}: use one of {', '.join(OUTCOMES)}")
    if isinstance(when, dt.datetime):
        stamp = check_when(when, now)
        date_text = stamp.isoformat(timespec="seconds")
        day = stamp.date()
    else:
        check_when(dt.datetime.combine(when, dt.time(), tzinfo=now.tzinfo or dt.UTC), now)
        date_text, day = when.isoformat(), when
    path = episode_path(day, title, taken, folder)
    lines = ["---", "type: episode", f"date: {date_text}", f"outcome: {outcome}"]
    links = list(dict.fromkeys(wikilink(e) for e in entities))
    if links:
        lines.append("entities:")
        lines += [f"  - {_quoted(link)}" for link in links]
    else:
        lines.append("entities: []")
    if duration is not None:
        lines.append(f"duration: {parse_duration(duration)}")
    if procedure is not None:
        lines.append(f"procedure: {_quoted(wikilink(procedure, 'procedure'))}")
    lines.append("---")
    text = "\n".join(lines) + "\n"
    cleaned = body.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    if cleaned.strip():
        if cleaned.lstrip().startswith("---"):
            cleaned = "\n" + cleaned  # never a second front matter block
        text += "\n" + cleaned + "\n"
    return NewEpisode(path, text)


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


# --------------------------------------------------------------------------- reading


def episode_from(path: str, frontmatter: dict[str, object], body: str = "") -> Episode | None:
    """The episode a note holds, or None when it is not one (`type: episode` with a date).
    `body` (the text after the front matter), when given, gives the summary."""
    if str(frontmatter.get("type", "")).strip().lower() != "episode":
        return None
    when = parse_when(frontmatter.get("date"))
    if when is None:
        return None
    outcome = str(frontmatter.get("outcome", "")).strip().lower()
    raw = frontmatter.get("entities")
    items = raw if isinstance(raw, list) else ([raw] if isinstance(raw, str) and raw else [])
    entities = tuple(t for t in (_target(str(x)) for x in items) if t)
    duration = frontmatter.get("duration")
    procedure = frontmatter.get("procedure")
    name = PurePosixPath(path).name.removesuffix(".md")
    return Episode(
        path=path,
        title=_DATE_PREFIX_RE.sub("", name) or name,
        when=when,
        outcome=_OUTCOMES.get(outcome),
        entities=entities,
        duration=str(duration) if duration not in (None, "") else None,
        procedure=_target(str(procedure)) if procedure else None,
        summary=summary_of(body),
    )


def summary_of(body: str, limit: int = 400) -> str:
    """The first paragraph of a body (headings skipped), on one line, cut at a word."""
    lines: list[str] = []
    for line in body.replace("\r\n", "\n").split("\n"):
        text = line.strip()
        if not text:
            if lines:
                break
            continue
        if text.startswith("#") or text == "---":
            if lines:
                break
            continue
        lines.append(text.lstrip("-*+> ").strip())
    out = " ".join(" ".join(lines).split())
    if len(out) > limit:
        out = out[:limit].rsplit(" ", 1)[0] + "…"
    return out


def _target(text: str) -> str:
    inner = text.strip()
    if inner.startswith("[[") and inner.endswith("]]"):
        ref = split_link_ref(inner[2:-2])
        return ref.target if ref is not None else ""
    return inner


def select(
    episodes: Iterable[Episode],
    *,
    since: dt.date | None = None,
    until: dt.date | None = None,
    outcome: Outcome | None = None,
    entities: Iterable[str] = (),
    now: dt.datetime | None = None,
) -> list[Episode]:
    """The episodes in [since, until] with that outcome, about any of `entities` (names or
    paths, compared as Obsidian compares link targets), none after `now`, newest first."""
    wanted = {_name(e) for e in entities}
    out = [
        e
        for e in episodes
        if (since is None or e.day >= since)
        and (until is None or e.day <= until)
        and (now is None or e.when <= now)
        and (outcome is None or e.outcome == outcome)
        and (not wanted or wanted & {_name(x) for x in e.entities})
    ]
    return sorted(out, key=lambda e: (e.when, e.path), reverse=True)


def _name(target: str) -> str:
    """A link target or path as a comparable note name (`people/Maya.md` -> `maya`)."""
    return fold(target.strip().removesuffix(".md").rsplit("/", 1)[-1])


# --------------------------------------------------------------------------- trends


def period_of(day: dt.date, granularity: Granularity) -> tuple[str, dt.date]:
    """The label and first day of the period holding `day`."""
    if granularity == "day":
        return day.isoformat(), day
    if granularity == "week":
        year, week, _ = day.isocalendar()
        return f"{year}-W{week:02d}", day - dt.timedelta(days=day.weekday())
    return f"{day.year}-{day.month:02d}", day.replace(day=1)


def _next_period(start: dt.date, granularity: Granularity) -> dt.date:
    if granularity == "day":
        return start + dt.timedelta(days=1)
    if granularity == "week":
        return start + dt.timedelta(days=7)
    return (start.replace(day=28) + dt.timedelta(days=4)).replace(day=1)


def trends(
    points: Iterable[tuple[dt.date, Outcome | None]],
    granularity: Granularity = "week",
    *,
    since: dt.date | None = None,
    until: dt.date | None = None,
) -> tuple[TrendRow, ...]:
    """Outcome counts per period over [since, until] (default: the first to the last point),
    oldest first, with empty periods in between so a chart has no gaps. Episodes without a
    known outcome are not counted."""
    if granularity not in GRANULARITIES:
        raise Refused(f"unknown granularity {granularity!r}: use day, week or month")
    kept = [(d, o) for d, o in points if o is not None]
    kept = [
        (d, o) for d, o in kept if (since is None or d >= since) and (until is None or d <= until)
    ]
    if not kept and (since is None or until is None):
        return ()
    first = since or min(d for d, _ in kept)
    last = until or max(d for d, _ in kept)
    counts: dict[dt.date, dict[str, int]] = {}
    for day, outcome in kept:
        _, start = period_of(day, granularity)
        counts.setdefault(start, {})
        counts[start][outcome] = counts[start].get(outcome, 0) + 1
    rows = []
    label, start = period_of(first, granularity)
    while start <= last:
        c = counts.get(start, {})
        rows.append(
            TrendRow(
                label,
                start,
                c.get("success", 0),
                c.get("failure", 0),
                c.get("resolved", 0),
                c.get("ongoing", 0),
            )
        )
        start = _next_period(start, granularity)
        label = period_of(start, granularity)[0]
    return tuple(rows)
