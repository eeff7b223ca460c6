"""Transcripts: the chat formats people and assistants export, read into one list of turns.

Read: plain text or markdown with speaker turns (`Maya: …`, `**Maya:** …`, `## User`
headings), a JSON list of `{role, content}` messages (also as `{"messages": [...]}` or JSON
Lines), Claude's and ChatGPT's exports (`conversations.json`, one conversation or many),
LoCoMo samples and sessions, LongMemEval records. A file holding several sessions is one
transcript whose turns carry their session and its date; `session()` picks one. Nothing here
touches the vault: bad input raises `BadTranscript` with what was wrong.
"""

from __future__ import annotations

import codecs
import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from vaultmem.capture.errors import BadTranscript

Role = Literal["user", "assistant", "speaker"]
Format = Literal["text", "markdown", "messages", "claude", "chatgpt", "locomo", "longmemeval"]
FORMATS: tuple[Format, ...] = (
    "text",
    "markdown",
    "messages",
    "claude",
    "chatgpt",
    "locomo",
    "longmemeval",
)
DEFAULT_MAX_BYTES = 20 * 1024 * 1024
_SHAPES = (
    "plain text or markdown with speaker turns (`Name: text`), a JSON list of {role, content}"
    " messages, a Claude or ChatGPT export, a LoCoMo sample or session, a LongMemEval record"
)
_USER_NAMES = frozenset(["user", "human", "me", "you", "person", "customer"])
_ASSISTANT_NAMES = frozenset(
    ["assistant", "ai", "claude", "chatgpt", "gpt", "bot", "model", "agent", "gemini", "copilot"]
)
_SKIPPED_ROLES = frozenset(["system", "tool", "function", "developer"])


@dataclass(frozen=True)
class Turn:
    """One message of a transcript."""

    ref: str  # how the source names the turn ("D1:3" in LoCoMo), else its 1-based number
    speaker: str  # as the source writes it: "Caroline", "user", "assistant"
    role: Role
    text: str
    session: str = ""  # the session's label in a file of several, else ""
    when: dt.datetime | None = None  # the session's date, when the source says it


@dataclass(frozen=True)
class Transcript:
    """The turns of a transcript, its shape, its own date and the sha256 of its bytes."""

    format: Format
    turns: tuple[Turn, ...]
    sha256: str
    title: str | None = None
    date: dt.datetime | None = None

    @property
    def sessions(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.session for t in self.turns))

    @property
    def speakers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.speaker for t in self.turns))

    def session(self, label: str) -> Transcript:
        """The transcript of one session (its label, or its 1-based number); its sha256 is
        the file's and the label's, so each session is captured once."""
        labels = self.sessions
        wanted = label.strip()
        chosen = next((s for s in labels if s == wanted), None)
        if chosen is None and wanted.isdigit() and 1 <= int(wanted) <= len(labels):
            chosen = labels[int(wanted) - 1]
        if chosen is None:
            shown = ", ".join(s or "(one session)" for s in labels[:12])
            more = f" and {len(labels) - 12} more" if len(labels) > 12 else ""
            raise BadTranscript(f"no session {label!r} in the transcript; it has: {shown}{more}")
        turns = tuple(t for t in self.turns if t.session == chosen)
        digest = hashlib.sha256(f"{self.sha256}\0session:{chosen}".encode()).hexdigest()
        return replace(self, turns=turns, sha256=digest, date=turns[0].when or self.date)


# --------------------------------------------------------------------------- bytes to text


def read_bytes(stream: Any, limit: int = DEFAULT_MAX_BYTES, name: str = "transcript") -> bytes:
    """At most `limit` bytes from a binary stream; a longer one is refused without being read
    whole (only `limit` + 1 bytes are ever held)."""
    data: bytes = stream.read(limit + 1)
    if len(data) > limit:
        raise BadTranscript(
            f"{name} is larger than {_size(limit)}, the capture limit (`capture.max_transcript_mb`"
            " in .vaultmem/config.toml); split it into sessions or raise the limit"
        )
    return data


def _size(limit: int) -> str:
    return f"{limit / (1024 * 1024):g} MB" if limit >= 1024 * 1024 else f"{limit} bytes"


def decode(data: bytes, name: str = "transcript") -> str:
    """The text of a transcript's bytes: UTF-8 (a BOM allowed) or UTF-16 with its BOM;
    binary data and other encodings are refused with what to do."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            raise BadTranscript(
                f"{name} starts as UTF-16 but is not: re-save it as UTF-8"
            ) from None
    else:
        if b"\x00" in data[:8192]:
            raise BadTranscript(f"{name} is a binary file, not a transcript")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise BadTranscript(
                f"{name} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start});"
                " re-save it as UTF-8 and capture it again"
            ) from None
    if "\x00" in text:
        raise BadTranscript(f"{name} is a binary file, not a transcript")
    return text


def parse(data: bytes, name: str = "transcript") -> Transcript:
    """The transcript in `data`, its shape found from its content."""
    digest = hashlib.sha256(data).hexdigest()
    text = decode(data, name)
    if not text.strip():
        raise BadTranscript(f"{name} is empty: there is nothing to capture")
    stripped = text.lstrip()
    if stripped[:1] in "[{":
        value = _json(stripped, name)
        return _from_json(value, digest, name)
    return _from_text(text, digest, name)


def _json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as first:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 1 and lines[0].lstrip().startswith("{"):  # JSON Lines
            try:
                return [json.loads(line) for line in lines]
            except json.JSONDecodeError:
                pass
        raise BadTranscript(
            f"{name} looks like JSON but is not (line {first.lineno}, column {first.colno}:"
            f" {first.msg}); fix it, or save the chat as plain text with `Name: text` lines"
        ) from None


# --------------------------------------------------------------------------- JSON shapes


def _from_json(value: Any, digest: str, name: str) -> Transcript:
    items: list[Any] = value if isinstance(value, list) else [value]
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return _finish("messages", _messages(value["messages"], name), digest, name, value)
    if not items:
        raise BadTranscript(f"{name} is an empty JSON list: there is nothing to capture")
    if not all(isinstance(i, dict) for i in items):
        raise BadTranscript(f"{name}: a JSON transcript is a list of objects; expected {_SHAPES}")
    first = items[0]
    if "conversation" in first:
        return _finish("locomo", _locomo_samples(items, name), digest, name)
    if "haystack_sessions" in first:
        return _finish("longmemeval", _longmemeval(items, name), digest, name)
    if "mapping" in first:
        return _finish("chatgpt", _chatgpt(items, name), digest, name, first)
    if "chat_messages" in first:
        return _finish("claude", _claude(items, name), digest, name, first)
    if "speaker" in first and "text" in first:
        return _finish("locomo", _locomo_session(items, name, "", None), digest, name)
    if "sender" in first:
        return _finish("claude", _claude_messages(items, name, "", None), digest, name)
    if "role" in first or "content" in first:
        return _finish("messages", _messages(items, name), digest, name)
    keys = ", ".join(sorted(str(k) for k in first)[:8])
    raise BadTranscript(
        f"{name}: JSON objects with keys {keys} are no transcript; expected {_SHAPES}"
    )


def _finish(fmt: Format, turns: list[Turn], digest: str, name: str, head: Any = None) -> Transcript:
    kept = tuple(t for t in turns if t.text.strip())
    if not kept:
        raise BadTranscript(f"{name} holds no message with text: there is nothing to capture")
    title = None
    if isinstance(head, dict):
        raw = head.get("title") or head.get("name")
        title = raw.strip() if isinstance(raw, str) and raw.strip() else None
    date = next((t.when for t in kept if t.when is not None), None)
    return Transcript(fmt, kept, digest, title, date)


def _text_of(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    if isinstance(content, dict) and isinstance(content.get("parts"), list):
        return _text_of(content["parts"])
    return None


def role_of(speaker: str) -> Role | None:
    """`user`, `assistant`, or None for a system/tool message; anyone else is a `speaker`."""
    word = speaker.strip().casefold()
    if word in _SKIPPED_ROLES:
        return None
    if word in _USER_NAMES:
        return "user"
    if word in _ASSISTANT_NAMES:
        return "assistant"
    return "speaker"


def _messages(items: Sequence[Any], name: str, session: str = "", when: Any = None) -> list[Turn]:
    turns: list[Turn] = []
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise BadTranscript(f"{name}: message {n} is not an object with `role` and `content`")
        speaker = item.get("role", item.get("name"))
        text = _text_of(item.get("content"))
        if not isinstance(speaker, str) or not speaker.strip():
            raise BadTranscript(f"{name}: message {n} has no `role`")
        if text is None:
            raise BadTranscript(f"{name}: message {n} has no `content` text")
        role = role_of(speaker)
        if role is None:
            continue
        ref = f"{session}:{n}" if session else str(n)
        turns.append(Turn(ref, speaker.strip(), role, text.strip(), session, when))
    return turns


def _chatgpt(items: Sequence[dict[str, Any]], name: str) -> list[Turn]:
    turns: list[Turn] = []
    for c, conv in enumerate(items, 1):
        mapping = conv.get("mapping")
        if not isinstance(mapping, dict):
            raise BadTranscript(f"{name}: ChatGPT conversation {c} has no `mapping` of messages")
        label = str(conv.get("title") or f"conversation {c}") if len(items) > 1 else ""
        when = _epoch(conv.get("create_time"))
        for n, node in enumerate(_chatgpt_branch(conv, mapping, name, c), 1):
            message = node.get("message")
            if not isinstance(message, dict):
                continue
            author = message.get("author")
            speaker = author.get("role") if isinstance(author, dict) else None
            meta = message.get("metadata")
            if isinstance(meta, dict) and meta.get("is_visually_hidden_from_conversation"):
                continue
            if not isinstance(speaker, str):
                raise BadTranscript(
                    f"{name}: ChatGPT message {n} of conversation {c} has no author"
                )
            role = role_of(speaker)
            content = message.get("content")
            text = _text_of(content)
            if role is None or text is None:
                continue
            ref = f"{c}:{n}" if label else str(n)
            turns.append(
                Turn(
                    ref,
                    speaker,
                    role,
                    text.strip(),
                    label,
                    _epoch(message.get("create_time")) or when,
                )
            )
    return turns


def _chatgpt_branch(
    conv: dict[str, Any], mapping: dict[str, Any], name: str, c: int
) -> list[dict[str, Any]]:
    """The nodes of the branch the person last saw (current_node back to the root), in order;
    without a current node, the mapping's own order."""
    current = conv.get("current_node")
    if not isinstance(current, str) or current not in mapping:
        return [n for n in mapping.values() if isinstance(n, dict)]
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = current
    while isinstance(node_id, str) and node_id in mapping:
        if node_id in seen:
            raise BadTranscript(f"{name}: ChatGPT conversation {c} has a loop in its messages")
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            break
        chain.append(node)
        node_id = node.get("parent")
    return chain[::-1]


def _claude(items: Sequence[dict[str, Any]], name: str) -> list[Turn]:
    turns: list[Turn] = []
    for c, conv in enumerate(items, 1):
        messages = conv.get("chat_messages")
        if not isinstance(messages, list):
            raise BadTranscript(f"{name}: Claude conversation {c} has no `chat_messages` list")
        label = (
            str(conv.get("name") or conv.get("uuid") or f"conversation {c}")
            if len(items) > 1
            else ""
        )
        turns += _claude_messages(messages, name, label, _iso(conv.get("created_at")), c)
    return turns


def _claude_messages(
    messages: Sequence[Any], name: str, label: str, when: dt.datetime | None, c: int = 1
) -> list[Turn]:
    turns: list[Turn] = []
    for n, message in enumerate(messages, 1):
        if not isinstance(message, dict):
            raise BadTranscript(f"{name}: Claude message {n} is not an object")
        sender = message.get("sender")
        text = message.get("text")
        if not isinstance(text, str) or not text.strip():
            text = _text_of(message.get("content"))
        if not isinstance(sender, str) or text is None:
            raise BadTranscript(f"{name}: Claude message {n} needs `sender` and `text`")
        role = role_of(sender)
        if role is None:
            continue
        ref = f"{c}:{n}" if label else str(n)
        turns.append(
            Turn(ref, sender, role, text.strip(), label, _iso(message.get("created_at")) or when)
        )
    return turns


_SESSION_KEY = re.compile(r"^session_(\d+)$")


def _locomo_samples(items: Sequence[dict[str, Any]], name: str) -> list[Turn]:
    turns: list[Turn] = []
    for s, sample in enumerate(items, 1):
        conv = sample.get("conversation")
        if not isinstance(conv, dict):
            raise BadTranscript(f"{name}: LoCoMo sample {s} has no `conversation` object")
        sample_id = str(sample.get("sample_id") or f"sample {s}")
        sessions = sorted(
            (int(m[1]), key)
            for key in conv
            if (m := _SESSION_KEY.match(key)) and isinstance(conv[key], list)
        )
        if not sessions:
            raise BadTranscript(f"{name}: LoCoMo sample {sample_id} has no session of turns")
        for _number, key in sessions:
            label = f"{sample_id}/{key}" if len(items) > 1 else key
            when = locomo_date(conv.get(f"{key}_date_time"))
            turns += _locomo_session(conv[key], name, label, when)
    return turns


def _locomo_session(
    items: Sequence[Any], name: str, label: str, when: dt.datetime | None
) -> list[Turn]:
    turns: list[Turn] = []
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise BadTranscript(f"{name}: turn {n} of {label or 'the session'} has no `text`")
        speaker = item.get("speaker")
        if not isinstance(speaker, str) or not speaker.strip():
            raise BadTranscript(f"{name}: turn {n} of {label or 'the session'} has no `speaker`")
        ref = str(item.get("dia_id") or n)
        turns.append(
            Turn(
                ref,
                speaker.strip(),
                role_of(speaker) or "speaker",
                item["text"].strip(),
                label,
                when,
            )
        )
    return turns


def _longmemeval(items: Sequence[dict[str, Any]], name: str) -> list[Turn]:
    turns: list[Turn] = []
    seen: set[str] = set()
    for r, record in enumerate(items, 1):
        sessions = record.get("haystack_sessions")
        ids = record.get("haystack_session_ids") or []
        dates = record.get("haystack_dates") or []
        if not isinstance(sessions, list):
            raise BadTranscript(f"{name}: LongMemEval record {r} has no `haystack_sessions` list")
        for s, session in enumerate(sessions):
            if not isinstance(session, list):
                raise BadTranscript(
                    f"{name}: session {s + 1} of LongMemEval record {r} is not a list"
                )
            label = str(ids[s]) if s < len(ids) else f"{r}/{s + 1}"
            if label in seen:  # records share sessions: read each once
                continue
            seen.add(label)
            when = longmemeval_date(dates[s] if s < len(dates) else None)
            turns += _messages(session, name, label, when)
    return turns


# --------------------------------------------------------------------------- dates


def locomo_date(text: Any) -> dt.datetime | None:
    """LoCoMo's `1:56 pm on 8 May, 2023`."""
    if not isinstance(text, str):
        return None
    try:
        return dt.datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y")
    except ValueError:
        return None


def longmemeval_date(text: Any) -> dt.datetime | None:
    """LongMemEval's `2023/05/28 (Sun) 19:47`."""
    if not isinstance(text, str):
        return None
    try:
        return dt.datetime.strptime(
            re.sub(r"\s*\([A-Za-z]+\)\s*", " ", text).strip(), "%Y/%m/%d %H:%M"
        )
    except ValueError:
        return None


def _epoch(value: Any) -> dt.datetime | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return dt.datetime.fromtimestamp(float(value), dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _iso(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None


# --------------------------------------------------------------------------- text


_FRONT_RE = re.compile(r"\A---[ \t]*\r?\n(?P<body>.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_DATE_LINE_RE = re.compile(r"^(?:date|when|captured|recorded)\s*:\s*(?P<date>.+)$", re.IGNORECASE)
_TITLE_LINE_RE = re.compile(r"^(?:title)\s*:\s*(?P<title>.+)$", re.IGNORECASE)
_STAMP = r"(?:\[[^\]\n]{1,30}\]\s*|\(?\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]m)?\)?\s*[-–]?\s*)?"
_BOLD_TURN_RE = re.compile(
    rf"^\s*(?:[-*>]\s+)?{_STAMP}\*\*(?P<speaker>[^*\n:]{{1,40}}?)\s*(?::\*\*|\*\*\s*:)\s*(?P<text>.*)$"
)
_PLAIN_TURN_RE = re.compile(
    rf"^\s*(?:[-*>]\s+)?{_STAMP}(?P<speaker>[^\W\d_][\w .'’-]{{0,39}}?)\s*:\s+(?P<text>\S.*)$"
)
# `Label: text` lines that are no speaker's turn
_NOT_SPEAKERS = frozenset(
    ["note", "notes", "date", "time", "title", "summary", "subject", "re", "todo", "ps", "p.s",
     "update", "edit", "source", "link", "example", "warning", "tip", "answer", "question", "q",
     "a", "nb", "fyi", "location", "agenda", "attendees", "action", "action items", "status"]
)  # fmt: skip
_HEADING_TURN_RE = re.compile(r"^#{1,6}\s+(?P<speaker>[^\n#:]{1,40}?)\s*:?\s*$")


def _from_text(text: str, digest: str, name: str) -> Transcript:
    body = text.replace("\r\n", "\n").replace("\r", "\n")
    date: dt.datetime | None = None
    title: str | None = None
    fmt: Format = "text"
    if m := _FRONT_RE.match(body):
        fmt = "markdown"
        for line in m["body"].splitlines():
            key, _, value = line.partition(":")
            value = value.strip().strip("'\"")
            if key.strip().lower() in ("date", "created") and date is None:
                date = _text_date(value)
            elif key.strip().lower() == "title" and value:
                title = value
        body = body[m.end() :]
    lines = body.split("\n")
    head = [line.strip() for line in lines[:5]]
    for line in head:
        if (d := _DATE_LINE_RE.match(line)) and date is None:
            date = _text_date(d["date"].strip())
        if (t := _TITLE_LINE_RE.match(line)) and title is None:
            title = t["title"].strip()
    if any(_HEADING_TURN_RE.match(line) or _BOLD_TURN_RE.match(line) for line in lines):
        fmt = "markdown"
    turns = _speaker_turns(lines, date)
    if not turns:  # no speakers: a monologue (a note, dictation), one turn per paragraph
        paragraphs = [p.strip() for p in re.split(r"\n\s*\n", body) if p.strip()]
        paragraphs = [
            p for p in paragraphs if not _DATE_LINE_RE.match(p) and not _TITLE_LINE_RE.match(p)
        ]
        turns = [Turn(str(n), "user", "user", p, "", date) for n, p in enumerate(paragraphs, 1)]
    if not turns:
        raise BadTranscript(f"{name} holds no text to capture")
    return Transcript(fmt, tuple(turns), digest, title, date)


def _speaker_turns(lines: Sequence[str], date: dt.datetime | None) -> list[Turn]:
    """Turns from `Name: text`, `**Name:** text` and `## Name` lines; a label counts as a
    speaker when it names a role (user, assistant …) or comes back at least twice, so a
    stray `Note: …` line stays text."""
    labels: dict[str, int] = {}
    shown: dict[str, str] = {}
    for line in lines:
        m = _BOLD_TURN_RE.match(line) or _PLAIN_TURN_RE.match(line) or _role_heading(line)
        if m:
            key = m["speaker"].strip().casefold()
            labels[key] = labels.get(key, 0) + 1
            shown.setdefault(key, m["speaker"].strip())
    speakers = {k for k, n in labels.items() if n >= 2 or role_of(k) != "speaker"}
    if not speakers:
        return []
    # someone who speaks once, in a chat of others: a capitalised name, not a label word
    speakers |= {
        k
        for k in labels
        if k not in _NOT_SPEAKERS and shown[k][:1].isupper() and len(k.split()) <= 3
    }
    turns: list[Turn] = []
    current: tuple[str, list[str]] | None = None

    def close() -> None:
        if current is not None:
            speaker, parts = current
            text = "\n".join(parts).strip()
            role = role_of(speaker)
            if text and role is not None:
                turns.append(Turn(str(len(turns) + 1), speaker, role, text, "", date))

    for line in lines:
        m = _BOLD_TURN_RE.match(line) or _PLAIN_TURN_RE.match(line)
        heading = _role_heading(line) if m is None else None
        found = m or heading
        if found and found["speaker"].strip().casefold() in speakers:
            close()
            current = (found["speaker"].strip(), [found["text"]] if m else [])
        elif current is not None:
            current[1].append(line)
    close()
    return turns


def _role_heading(line: str) -> re.Match[str] | None:
    m = _HEADING_TURN_RE.match(line)
    return m if m and role_of(m["speaker"]) in ("user", "assistant") else None


def _text_date(text: str) -> dt.datetime | None:
    cleaned = text.strip()
    for parse_one in (_iso, locomo_date, longmemeval_date):
        if (found := parse_one(cleaned)) is not None:
            return found
    m = re.match(r"^(\d{4})-(\d{2})-(\d{2})", cleaned)
    if m:
        try:
            return dt.datetime(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            return None
    return None


def transcripts_of(items: Iterable[Transcript]) -> list[Transcript]:
    """Each session of each transcript as its own transcript (for a bench over sessions)."""
    out: list[Transcript] = []
    for t in items:
        out += [t.session(label) for label in t.sessions] if len(t.sessions) > 1 else [t]
    return out
