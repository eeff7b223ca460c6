"""The capture service: transcripts into capture notes, and review decisions into memory.

Reached as `vault.captures`. `capture` reads a transcript, extracts candidates (by rules, or
a model), applies the `[capture]` gates, flags duplicates and contradictions against the
vault's current facts, and writes one capture note in the inbox through the one write path.
`accept` writes an item through the memory layer (`vault.memory.set_fact`, `add_loop`,
`add_episode`), then checks it in the capture note and records where it went; `reject`
strikes it; a capture whose items are all decided is marked reviewed and moved to
`<inbox>/processed/`. The capture note is read from disk each time, so what a person changed
in Obsidian is what counts. docs/capture.md is the contract.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from vaultmem import edit
from vaultmem.capture import flags as capture_flags
from vaultmem.capture import journal as undo_journal
from vaultmem.capture import note as capture_note
from vaultmem.capture.candidates import Candidate, safe_name
from vaultmem.capture.errors import CaptureChanged, CaptureNotFound
from vaultmem.capture.extract import Extraction, extract
from vaultmem.capture.gates import CaptureSettings, Gated, apply_gates, settings_from
from vaultmem.capture.journal import UndoJournal
from vaultmem.capture.llm_extract import extract_with_llm, validate
from vaultmem.capture.note import CaptureNote, Flag, Header, Item
from vaultmem.capture.transcript import Transcript, Turn, parse, read_bytes
from vaultmem.edit import Line, Lines, NoteSource
from vaultmem.errors import (
    CannotEdit,
    ChangedOnDisk,
    ModelServerDown,
    ModelServerError,
    NoIndex,
    NoteNotFound,
    UsageError,
    VaultmemError,
)
from vaultmem.memory.episodes import safe_title
from vaultmem.memory.errors import Refused
from vaultmem.memory.loops import plan_add as plan_loop
from vaultmem.memory.loops import title_of
from vaultmem.memory.values import check_key, check_value, key_id, normalise, refuse_unpaired

if TYPE_CHECKING:
    from vaultmem.llm import LLM
    from vaultmem.vault import Vault

CaptureStatus = Literal["written", "dry-run", "already-captured", "nothing-to-capture"]
DecisionStatus = Literal["accepted", "rejected", "edited", "already-decided", "undone", "refused"]
PROCESSED = "processed"
RETRIES = 3  # a capture note changed while a decision was written: read it again and redo


@dataclass(frozen=True)
class CaptureResult:
    """What a capture run did."""

    status: CaptureStatus
    path: str | None  # the capture note (written, or the earlier one of the same transcript)
    candidates: tuple[Candidate, ...]
    flags: dict[str, tuple[Flag, ...]]
    gated: Gated | None
    extractor: str
    sha256: str
    text: str | None = None  # the note's text (also for --dry-run)
    accepted: tuple[Decision, ...] = ()  # auto-accepted (MCP, with `capture.auto_accept`)


@dataclass(frozen=True)
class Decision:
    """A review decision on one item, and where it went."""

    id: str
    status: DecisionStatus
    capture: str  # the capture note's path (where it is after the decision)
    message: str
    went_to: str | None = None  # "Maya Chen#^f-1a2b", an episode's path …
    touched: tuple[str, ...] = ()


class Captures:
    """Captures of one vault: the inbox, the review queue and the decisions."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault
        self._journal: UndoJournal | None = None  # opened on the first decision or undo
        # capture notes as last parsed, by path, with the file's stat at the time: listing
        # the queue again (the review screen, on every return to it) re-reads only what changed
        self._parsed: dict[str, tuple[tuple[int, int, int, int], CaptureNote | None]] = {}

    @property
    def settings(self) -> CaptureSettings:
        return settings_from(self._vault.config.extra.get("capture"))

    @property
    def inbox(self) -> str:
        return self.settings.inbox

    # ---- reading a transcript

    def read_transcript(self, stream: IO[bytes], name: str = "transcript") -> Transcript:
        """A transcript from a binary stream, refused past `capture.max_transcript_mb`."""
        return parse(read_bytes(stream, self.settings.max_transcript_bytes, name), name)

    def read_transcript_file(self, path: Path) -> Transcript:
        try:
            with path.open("rb") as stream:
                return self.read_transcript(stream, str(path))
        except FileNotFoundError:
            raise UsageError(f"no transcript at {path}") from None
        except IsADirectoryError:
            raise UsageError(f"{path} is a folder, not a transcript") from None
        except PermissionError:
            raise UsageError(f"cannot read {path}: permission denied") from None

    # ---- capturing

    def captured(self, sha256: str) -> str | None:
        """The capture note (or log entry) of a transcript already captured, by its sha256."""
        for note in self.notes(include_processed=True):
            if note.header.sha256 == sha256:
                return note.path
        for entry in self._log():
            if entry.get("sha256") == sha256:
                return str(entry.get("path") or "an earlier capture")
        return None

    def capture(
        self,
        transcript: Transcript,
        *,
        source: str,
        persona: str | None = None,
        llm: LLM | None = None,
        dry_run: bool = False,
        now: dt.datetime | None = None,
        auto_accept: bool = False,
        given: Extraction | None = None,
    ) -> CaptureResult:
        """Propose candidates from `transcript` and write one capture note (unless `dry_run`).

        The same transcript (by sha256) is never captured twice: `already-captured`, nothing
        written. With `auto_accept` (the MCP tool, when `capture.auto_accept` is set) items at
        or above that confidence are accepted at once.
        """
        label = " ".join(source.split())
        if not label:
            raise UsageError("a capture needs a --source label (e.g. 'call with Maya')")
        clock = now or dt.datetime.now(dt.UTC)
        settings = self.settings
        earlier = self.captured(transcript.sha256)
        extractor = given.extractor if given else llm.name if llm is not None else "heuristic"
        if earlier is not None:
            return CaptureResult(
                "already-captured", earlier, (), {}, None, extractor, transcript.sha256
            )
        extraction = given if given is not None else self.extract(transcript, llm, persona)
        gated = apply_gates(extraction.candidates, settings)
        kept = gated.kept
        flags = self.flags(kept)
        if not any(c.kind != "episode" for c in kept):
            return CaptureResult(
                "nothing-to-capture", None, kept, flags, gated, extractor, transcript.sha256
            )
        header = Header(
            source=label,
            captured_at=clock.replace(microsecond=0),
            sha256=transcript.sha256,
            extractor=extraction.extractor,
            persona=persona,
            transcript_date=transcript.date,
        )
        text = capture_note.render(header, kept, flags)
        if dry_run:
            return CaptureResult(
                "dry-run", None, kept, flags, gated, extractor, transcript.sha256, text
            )
        # the look for an earlier capture above ran before the extraction; another process
        # may have captured the same transcript since, so look again under the capture lock,
        # which every writer of a capture note holds
        with self._lock():
            earlier = self.captured(transcript.sha256)
            if earlier is not None:
                return CaptureResult(
                    "already-captured", earlier, (), {}, None, extractor, transcript.sha256
                )
            path = self._free_path(clock.date(), label)
            self._vault.apply(edit.plan_new_note(path, text))
            self._record(transcript.sha256, path, label, clock)
        accepted: tuple[Decision, ...] = ()
        if auto_accept and settings.auto_accept is not None:
            chosen = [c.id for c in kept if c.confidence >= settings.auto_accept]
            accepted = tuple(self.accept(chosen, today=clock.date())) if chosen else ()
        return CaptureResult(
            "written", path, kept, flags, gated, extractor, transcript.sha256, text, accepted
        )

    def extract(
        self, transcript: Transcript, llm: LLM | None = None, persona: str | None = None
    ) -> Extraction:
        settings = self.settings
        if llm is not None:
            try:
                return extract_with_llm(
                    transcript, llm, user_entity=settings.user_entity, assistant_entity=persona
                )
            except (ModelServerDown, ModelServerError) as exc:
                # the client's hint is search's ("or search without HyDE"): say capture's
                said = str(exc).replace("search without HyDE", "capture without --llm")
                raise type(exc)(f"{said}; nothing was written") from None
        return extract(transcript, user_entity=settings.user_entity, assistant_entity=persona)

    def flags(self, candidates: Sequence[Candidate]) -> dict[str, tuple[Flag, ...]]:
        """Duplicate and contradiction flags of candidates against their entities' facts."""
        current: list[capture_flags.CurrentFact] = []
        seen: set[str] = set()
        for name in dict.fromkeys(c.entity for c in candidates if c.kind in ("fact", "decision")):
            try:
                found = self._vault.memory.facts(name)
            except (NoteNotFound, UsageError):
                continue
            except NoIndex:  # nothing to compare with until the vault is indexed
                return {}
            if found.path in seen:
                continue
            seen.add(found.path)
            current += [
                capture_flags.CurrentFact(
                    found.title, found.path, f.key, f.value, f.block, aliases=(name,)
                )
                for f in found.facts
            ]
        if not current:
            return {}
        return capture_flags.check(candidates, current, self._embed_function())

    def _embed_function(self) -> Callable[[Sequence[str]], Any] | None:
        """The vault's embedder for near-duplicates, when one is configured and loads."""
        if self._vault.embedder_spec is None and self._vault.config.embedder is None:
            return None
        try:
            embedder = self._vault.embedder()
        except VaultmemError:
            return None
        embed: Callable[[Sequence[str]], Any] = embedder.embed
        return embed

    def _free_path(self, day: dt.date, source: str) -> str:
        base = f"{self.inbox}/{day.isoformat()} {safe_title(source)}"
        path, n = f"{base}.md", 2
        while (self._vault.root / path).exists():
            path, n = f"{base} {n}.md", n + 1
        return path

    def capture_candidates(
        self,
        items: Sequence[dict[str, Any]],
        *,
        source: str,
        persona: str | None = None,
        agent: str = "agent",
        now: dt.datetime | None = None,
    ) -> CaptureResult:
        """Candidate memories an agent sends (the MCP tool), checked like a model's output
        and written as a capture note to review; accepted at once only at or above
        `capture.auto_accept`, when the vault's config sets it."""
        # surrogatepass: a lone "\ud800" is refused by `validate` below, not by the hash
        data = json.dumps(list(items), sort_keys=True, ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
        turns = tuple(
            Turn(str(n), agent, "assistant", str(item.get("quote") or item.get("value") or ""))
            for n, item in enumerate(items, 1)
        )
        transcript = Transcript("messages", turns, hashlib.sha256(data).hexdigest())
        numbered = [{**item, "turn": str(n)} for n, item in enumerate(items, 1)]
        for item in numbered:
            item["quote"] = item.get("quote") or item.get("value")
        settings = self.settings
        found = validate(
            {"candidates": numbered}, {t.ref: t for t in turns}, transcript.sha256, agent,
            settings.user_entity, persona,
        )  # fmt: skip
        return self.capture(
            transcript,
            source=source,
            persona=persona,
            now=now,
            auto_accept=True,
            given=Extraction(tuple(found), agent),
        )

    # ---- the capture log (what the files cannot tell once a capture note is deleted)

    @property
    def log_path(self) -> Path:
        index = self._vault.index_path
        return index.with_name(f"{index.stem}.captures.jsonl")

    def _log(self) -> Iterator[dict[str, Any]]:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        for line in text.splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                entry = json.loads(line)
                if isinstance(entry, dict):
                    yield entry

    def _record(self, sha256: str, path: str, source: str, when: dt.datetime) -> None:
        entry = {"sha256": sha256, "path": path, "source": source, "at": when.isoformat()}
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
        with contextlib.suppress(OSError):  # the log is optional: the note holds the sha256
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)  # one write of one line: appends never interleave
            finally:
                os.close(fd)

    # ---- the review queue

    def notes(self, *, include_processed: bool = False) -> list[CaptureNote]:
        """Capture notes in the inbox as they are on disk now, oldest first."""
        root = self._vault.root / self.inbox
        if not root.is_dir():
            return []
        out = []
        for file in sorted(root.rglob("*.md")):
            relative = file.relative_to(self._vault.root).as_posix()
            inside = file.relative_to(root).parts
            if any(p.startswith(".") for p in inside):
                continue
            if not include_processed and inside[0] == PROCESSED and len(inside) > 1:
                continue
            note = self._read_listed(file, relative)
            if note is not None:
                out.append(note)
        return sorted(out, key=lambda n: (n.header.captured_at.isoformat(), n.path))

    def read(self, path: str) -> CaptureNote | None:
        """The capture note at `path`, or None when it is not one (or cannot be read)."""
        try:
            source = edit.read_note(
                self._vault.root, path, max_bytes=self._vault.config.max_file_bytes
            )
        except (VaultmemError, OSError):
            return None
        return _parse(source)

    def _read_listed(self, file: Path, path: str) -> CaptureNote | None:
        """`read(path)`, or its last result while the file's size, times and inode are the
        same (an atomic write is a new inode; any write moves the change time)."""
        try:
            st = file.stat()
        except OSError:
            return None
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        cached = self._parsed.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        note = self.read(path)
        self._parsed[path] = (stamp, note)
        return note

    def pending(self) -> list[CaptureNote]:
        """Capture notes with items still to decide."""
        return [n for n in self.notes() if n.header.status == "pending" or n.pending]

    def find(self, item_id: str) -> tuple[CaptureNote, Item]:
        """The capture note and item an id names (`c-1a2b3c`, or `NOTE:c-1a2b3c`)."""
        wanted = item_id.strip()
        note_part, _, id_part = wanted.rpartition(":") if ":" in wanted else ("", "", wanted)
        found = [
            (n, i)
            for n in self.notes()
            for i in n.items
            if i.id == id_part.lower()
            and (not note_part or note_part in (n.path, n.path.rsplit("/", 1)[-1][:-3]))
        ]
        if not found:
            raise CaptureNotFound(
                f"no capture item {item_id!r} in {self.inbox}/: `vaultmem review` lists them"
            )
        if len(found) > 1:
            where = ", ".join(f"{n.path}:{i.id}" for n, i in found)
            raise CaptureNotFound(f"{item_id!r} names several items ({where}): give NOTE:ID")
        return found[0]

    # ---- decisions

    def accept(
        self,
        ids: Sequence[str] = (),
        *,
        all_items: bool = False,
        min_confidence: float | None = None,
        today: dt.date | None = None,
        seen: Mapping[str, Candidate] | None = None,
    ) -> list[Decision]:
        """Accept items by id (or every pending one, `all_items`), each written through the
        memory layer, checked in its capture note with where it went. An item in `seen` (what
        a screen showed) that reads otherwise in its capture note now is refused."""
        day = today or dt.date.today()
        chosen = self._chosen(ids, all_items, min_confidence)
        shown = seen or {}
        return [
            self._try(path, item_id, "accept", day, shown.get(item_id)) for path, item_id in chosen
        ]

    def reject(
        self,
        ids: Sequence[str],
        *,
        today: dt.date | None = None,
        seen: Mapping[str, Candidate] | None = None,
    ) -> list[Decision]:
        """Reject items by id: each is struck in its capture note; nothing else changes."""
        day = today or dt.date.today()
        chosen = self._chosen(ids, False, None)
        shown = seen or {}
        return [
            self._try(path, item_id, "reject", day, shown.get(item_id)) for path, item_id in chosen
        ]

    def _try(
        self, path: str, item_id: str, action: str, day: dt.date, seen: Candidate | None = None
    ) -> Decision:
        """One decision; a refusal (the item's target or its capture note changed, a value
        the memory layer will not write, a read-only note) is reported, and the next item
        is decided all the same."""
        try:
            return self._decide(path, item_id, action, day, seen)
        except _WrittenNotMarked as exc:
            return Decision(item_id, "refused", path, f"{path}: {item_id} {exc}")
        except (CaptureChanged, ChangedOnDisk, CannotEdit, Refused) as exc:
            return Decision(item_id, "refused", path, f"{path}: {item_id} not {action}ed: {exc}")

    def edit(
        self,
        item_id: str,
        *,
        value: str | None = None,
        key: str | None = None,
        entity: str | None = None,
        due: dt.date | None = None,
    ) -> Decision:
        """Change a pending item's value, key, entity or due date in its capture note."""
        if value is None and key is None and entity is None and due is None:
            raise UsageError("nothing to edit: give --value, --key, --entity or --due")
        note, item = self.find(item_id)
        if item.decided:
            raise UsageError(f"{item.id} is already {item.status}; edit only pending items")
        changes: dict[str, Any] = {}
        if value is not None:
            changes["value"] = _one_line(value)
        if key is not None:
            if item.candidate.kind != "fact":
                raise UsageError(f"{item.id} is a {item.candidate.kind}; only facts have a key")
            changes["key"] = _one_line(key)
        if entity is not None:
            changes["entity"] = safe_name(entity)
            if not changes["entity"]:
                raise UsageError(f"the entity {entity!r} has nothing usable in a note name")
        if due is not None:
            if item.candidate.kind != "loop":
                raise UsageError(
                    f"{item.id} is a {item.candidate.kind}; only loops have a due date"
                )
            changes["due"] = due
        edited = replace(item.candidate, **changes)
        _check_writable(edited, changes)
        with self._lock():
            source = self._source(note.path)
            current = _parse(source)
            now = current.item(item.id) if current else None
            if now is None or now.decided:
                raise CaptureChanged(
                    f"{note.path}: {item.id} changed meanwhile; nothing was edited"
                )
            new_item = capture_note.item_lines(edited, self.flags([edited]).get(edited.id, ()))
            lines = _replace_item(source.lines, now, new_item)
            self._vault.apply(edit.plan_edit(source, lines))
        return Decision(item.id, "edited", note.path, f"{note.path}: {item.id} edited")

    def preview(self, item_id: str, today: dt.date | None = None) -> str | None:
        """The diff accepting a fact item would make to its entity's note (None for other
        kinds, or when nothing would change); nothing is written."""
        note, item = self.find(item_id)
        c = item.candidate
        if c.kind not in ("fact", "decision"):
            return None
        plan = self._vault.memory.writer.plan_fact(
            c.entity,
            c.key,
            c.value,
            today=today or dt.date.today(),
            create=True,
            source=_source_label(note.path),
        )
        if plan.change is None:
            return None
        if plan.change.before is None:
            after = edit.split_lines(plan.change.data.decode("utf-8", errors="replace"))
            return edit.unified_diff(plan.path, (), after)
        source = self._vault.read_for_edit(plan.path)
        codec = {"utf-8-bom": "utf-8-sig", "utf-16-le": "utf-16", "utf-16-be": "utf-16"}
        text = plan.change.data.decode(codec.get(source.encoding, source.encoding), "replace")
        return edit.unified_diff(plan.path, source.lines, edit.split_lines(text.lstrip("\ufeff")))

    def _chosen(
        self, ids: Sequence[str], all_items: bool, min_confidence: float | None
    ) -> list[tuple[str, str]]:
        if all_items:
            return [
                (n.path, i.id)
                for n in self.notes()
                for i in n.items
                if not i.decided
                and (min_confidence is None or i.candidate.confidence >= min_confidence)
            ]
        if not ids:
            raise UsageError("name the items to decide (ids from `vaultmem review`), or --all")
        out = []
        for item_id in ids:
            note, item = self.find(item_id)
            if min_confidence is None or item.candidate.confidence >= min_confidence:
                out.append((note.path, item.id))
        return out

    def _decide(
        self, path: str, item_id: str, action: str, day: dt.date, seen: Candidate | None = None
    ) -> Decision:
        with self._lock():
            note = self.read(path)
            item = note.item(item_id) if note else None
            if note is None or item is None:
                raise CaptureChanged(f"{path}: item {item_id} is no longer there; nothing written")
            if item.decided:
                said = f"{path}: {item_id} was {item.status} already"
                return Decision(item_id, "already-decided", path, said, item.went_to)
            if seen is not None and item.candidate != seen:
                c = item.candidate
                raise CaptureChanged(
                    f"{item_id} changed in its capture note since it was shown (it now reads"
                    f" “{c.entity} {c.key}:: {c.value}”); nothing was written: look at it again"
                )
            went_to: str | None = None
            touched: tuple[str, ...] = ()
            before = self._before(item) if action == "accept" else {}
            if action == "accept":
                went_to, touched = self._write_memory(note, item, day)
            steps = [(p, before.get(p), self._digest(p)) for p in dict.fromkeys(touched)]
            capture_before = self._bytes(path)
            for attempt in range(RETRIES):
                try:
                    final = self._mark(path, item_id, action, went_to, day)
                    break
                except (ChangedOnDisk, CannotEdit, CaptureChanged) as exc:
                    if isinstance(exc, ChangedOnDisk) and attempt < RETRIES - 1:
                        continue
                    if went_to is None:
                        raise
                    # the memory is written; only the check in the capture note failed
                    raise _WrittenNotMarked(
                        f"written to [[{went_to}]], but checking it in its capture note"
                        f" failed ({exc}). Accept it again once that is fixed; it is not"
                        " written twice"
                    ) from None
            if final == path:
                steps.append((path, capture_before, self._digest(path)))
            else:
                steps += [(path, capture_before, None), (final, None, self._digest(final))]
            self.journal.remember(item_id, tuple(steps))
            verb: DecisionStatus = "accepted" if action == "accept" else "rejected"
            where = f" → {went_to}" if went_to else ""
            return Decision(
                item_id, verb, final, f"{path}: {item_id} {verb}{where}", went_to, touched
            )

    def last_decided(self) -> str | None:
        """The item of the latest decision undo can take back (from any session)."""
        with self._lock():
            journal = self.journal.load()
        return next(reversed(journal), None)

    def undo(self, item_id: str | None = None) -> Decision:
        """Undo a decision (the latest when `item_id` is None), from this session or an
        earlier one (the last `journal.KEPT` are kept), while every note it wrote still holds
        what it wrote (else CaptureChanged, nothing changed): notes it changed get their
        bytes back, notes it created go to the trash, a moved capture comes back to the inbox."""
        with self._lock():
            journal = self.journal.load()
            if item_id is None:
                item_id = next(reversed(journal), None)
                if item_id is None:
                    raise CaptureNotFound("no review decision to undo")
            steps = journal.get(item_id)
            if steps is None:
                raise CaptureNotFound(
                    f"no decision on {item_id} to undo (the last {undo_journal.KEPT}"
                    " decisions can be undone)"
                )
            for path, _, after in steps:
                if self._digest(path) != after:
                    raise CaptureChanged(
                        f"{path} changed since {item_id} was decided; nothing was undone"
                        " (undo it by hand, or with `vaultmem review`)"
                    )
            for path, before, after in reversed(steps):
                if before is None:
                    self._vault.trash(path)
                elif after is None:
                    self._vault.apply(edit.Change(path, path, None, before))
                else:
                    source = self._vault.read_for_edit(path)
                    self._vault.apply(edit.Change(path, source.file, source.digest, before))
            self.journal.forget(item_id)
            capture = (
                steps[0][0]
                if len(steps) == 1
                else next(
                    (p for p, b, _ in steps if b is not None and p.startswith(self.inbox + "/")),
                    steps[-1][0],
                )
            )
            return Decision(item_id, "undone", capture, f"{item_id}: decision undone")

    def _before(self, item: Item) -> dict[str, bytes | None]:
        """The bytes of the note an accepted item will write into, before it does."""
        try:
            path = self._vault.memory.entity(item.candidate.entity)
        except (NoteNotFound, UsageError):
            return {}
        return {path: self._bytes(path)}

    # ---- the undo journal (in the index's folder, beside the capture log)

    @property
    def undo_path(self) -> Path:
        index = self._vault.index_path
        return index.with_name(f"{index.stem}.captures-undo.json")

    @property
    def journal(self) -> UndoJournal:
        if self._journal is None:
            self._journal = UndoJournal(self.undo_path)
        return self._journal

    def _digest(self, path: str) -> str | None:
        data = self._bytes(path)
        return None if data is None else hashlib.sha256(data).hexdigest()

    def _bytes(self, path: str) -> bytes | None:
        try:
            return (self._vault.root / path).read_bytes()
        except OSError:
            return None

    def _write_memory(
        self, note: CaptureNote, item: Item, day: dt.date
    ) -> tuple[str, tuple[str, ...]]:
        """Write an accepted item through the memory layer; (where it went, paths touched)."""
        c = item.candidate
        memory = self._vault.memory
        source = _source_label(note.path)
        if c.kind in ("fact", "decision"):
            self._check_target(item, source)
            written = memory.set_fact(
                c.entity, c.key, c.value, source=source, create=True, today=day
            )
            title = written.plan.path.rsplit("/", 1)[-1].removesuffix(".md")
            target = f"{title}#^{written.plan.block}" if written.plan.block else title
            return target, written.touched
        if c.kind == "loop":
            touched: tuple[str, ...] = ()
            try:
                memory.entity(c.entity)
            except NoteNotFound:
                touched = self._new_entity(c.entity)
            # an accept whose check in the capture note failed after the loop was written
            # (a crash, a read-only capture note) is accepted again: the loop is there already
            there = memory.entity(c.entity)
            if any(
                x.title == title_of(c.value) and x.due == c.due for x in memory.all_loops([there])
            ):
                return there.rsplit("/", 1)[-1].removesuffix(".md"), touched
            written = memory.add_loop(c.value, c.entity, due=c.due)
            title = written.plan.path.rsplit("/", 1)[-1].removesuffix(".md")
            return title, touched + written.touched
        captured_in = f"Captured in [[{note.path.removesuffix('.md')}]]."
        body = c.value + f"\n\n{captured_in}"
        when = c.when or day
        earlier = self._episode_of(c, captured_in, when)
        if earlier is not None:  # written by an accept that could not check the item
            return earlier.removesuffix(".md"), ()
        written = memory.add_episode(
            c.entity, c.outcome or "ongoing", when=when, entities=c.entities, body=body
        )
        return written.plan.path.removesuffix(".md"), written.touched

    def _episode_of(
        self, c: Candidate, captured_in: str, when: dt.datetime | dt.date
    ) -> str | None:
        """The episode note an earlier accept of `c` wrote (its body holds the item's text
        and says which capture it came from), if there is one. Only the episodes dated
        within a day of `when` are read (a time zone may move the day): not every one."""
        near = when.date() if isinstance(when, dt.datetime) else when
        for episode in self._vault.memory.all_episodes():
            if abs((episode.day - near).days) > 1:
                continue
            with contextlib.suppress(OSError, UnicodeDecodeError):
                text = (self._vault.root / episode.path).read_text(encoding="utf-8")
                if captured_in in text and c.value in text:
                    return episode.path
        return None

    def _check_target(self, item: Item, source: str) -> None:
        """Refuse to accept a contradiction whose target fact changed since the capture."""
        c = item.candidate
        for flag in item.flags:
            if flag.kind != "contradicts" or flag.now is None:
                continue
            try:
                found = self._vault.memory.facts(c.entity, c.key)
            except (NoteNotFound, UsageError):
                continue
            current = [f for f in found.facts if key_id(f.key) == key_id(c.key)]
            if not current or current[0].source == source:
                continue  # set by an earlier item of this same capture: it supersedes in turn
            if normalise(current[0].value) not in (normalise(flag.now), normalise(c.value)):
                raise CaptureChanged(
                    f"{c.entity}'s {c.key} is now {current[0].value!r}, not {flag.now!r} as"
                    f" when {item.id} was captured; nothing was written. Look at it again:"
                    f" `vaultmem review edit {item.id}` checks it against the vault anew"
                )

    def _new_entity(self, entity: str) -> tuple[str, ...]:
        folder = self._vault.memory.entities_folder
        name = safe_title(entity)
        path = f"{folder}/{name}.md" if folder else f"{name}.md"
        applied = self._vault.apply(edit.plan_new_note(path, f"# {name}\n"))
        return tuple(applied.touched)

    def _mark(self, path: str, item_id: str, action: str, went_to: str | None, day: dt.date) -> str:
        """Check (with where it went) or strike an item in the note as it is now; move the
        note to processed/ when nothing is left to decide. Returns the note's path after."""
        source = self._source(path)
        note = _parse(source)
        item = note.item(item_id) if note else None
        if note is None or item is None:
            raise CaptureChanged(f"{path}: item {item_id} was deleted meanwhile")
        if action == "accept":
            lines = edit.check_task(source.lines, item.line, day)
            lines = edit.insert_after(lines, item.end_line, f"    - accepted → [[{went_to}]]")
        else:
            lines = _reject(source.lines, item.line)
        after = _parse_lines(path, lines)
        if after is not None and not after.pending:
            return self._finish(source, lines)
        self._vault.apply(edit.plan_edit(source, lines))
        return path

    def _finish(self, source: NoteSource, lines: Lines) -> str:
        """Mark a capture reviewed and move it to `<inbox>/processed/` (a new note there, the
        old one to the trash: a crash in between leaves two copies, never none)."""
        lines = edit.set_property(lines, "status", "reviewed")
        name = source.path.rsplit("/", 1)[-1][:-3]
        target, n = f"{self.inbox}/{PROCESSED}/{name}.md", 2
        while (self._vault.root / target).exists():
            target, n = f"{self.inbox}/{PROCESSED}/{name} {n}.md", n + 1
        text = "".join(line.text + line.end for line in lines)
        self._vault.apply(edit.plan_edit(source, lines))
        self._vault.apply(edit.plan_new_note(target, text))
        self._vault.trash(source.path)
        return target

    def _source(self, path: str) -> NoteSource:
        try:
            return edit.read_note(
                self._vault.root, path, max_bytes=self._vault.config.max_file_bytes
            )
        except NoteNotFound:
            raise CaptureChanged(
                f"{path} was deleted or moved meanwhile; nothing written"
            ) from None

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        """One review decision at a time across processes (two reviews never both write)."""
        path = self.log_path.with_suffix(".lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


# --------------------------------------------------------------------------- helpers


def _source_label(path: str) -> str:
    """The `source::` an accepted fact gets: the capture note it came from."""
    return f"capture {path.rsplit('/', 1)[-1].removesuffix('.md')}"


def _parse(source: NoteSource) -> CaptureNote | None:
    return _parse_lines(source.path, source.lines)


def _parse_lines(path: str, lines: Sequence[Line]) -> CaptureNote | None:
    text = "".join(line.text + "\n" for line in lines)
    return capture_note.parse(path, text)


class _WrittenNotMarked(VaultmemError):
    """An accepted item's memory was written, but its capture note could not be checked."""


def _check_writable(c: Candidate, changed: Mapping[str, object]) -> None:
    """Refused when the memory layer would refuse to write what an edit changed: it never
    goes into the capture note either (a key ending in `::` there reads back as another key
    and value; a byte that is not UTF-8 was blamed on the capture note's encoding)."""
    if "entity" in changed:
        refuse_unpaired(c.entity, "the entity")
    if c.kind in ("fact", "decision"):
        if "key" in changed:
            check_key(c.key)
        if "value" in changed:
            check_value(c.value)
    elif c.kind == "loop" and "value" in changed:
        plan_loop([], c.value)  # the loop text's own checks; the edit is not used


def _one_line(text: str) -> str:
    cleaned = " ".join(text.split())
    if not cleaned:
        raise UsageError("an empty value: to drop an item, reject it")
    return cleaned


def _reject(lines: Sequence[Line], number: int) -> Lines:
    """Strike an item and mark it `[-]` (Obsidian shows it done; it is no open loop)."""
    struck = edit.strike_item(lines, number)
    line = struck[number - 1]
    text = line.text.replace("[ ]", "[-]", 1) if "[ ]" in line.text[:12] else line.text
    return (*struck[: number - 1], Line(text, line.end), *struck[number:])


def _replace_item(lines: Sequence[Line], item: Item, new: Sequence[str]) -> Lines:
    """An item's task line and its details replaced by `new` (the item's other detail lines,
    such as flags written by a person, go with the rewrite)."""
    ending = lines[item.line - 1].end or "\n"
    added = [Line(text, ending) for text in new]
    last = lines[item.end_line - 1]
    added[-1] = Line(added[-1].text, last.end)
    return (*lines[: item.line - 1], *added, *lines[item.end_line :])
