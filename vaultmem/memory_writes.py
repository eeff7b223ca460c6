"""Memory writes planned against a note as read: `fact set`, `episode add`, `loop add` and
`loop resolve` as editor changes (`edit.Change`) for `vault.apply`, the one write path.

The memory core (`vaultmem/memory/`) plans each write as line edits over the note's text; they
are carried out here with the editor's operations, in the note's own encoding and line ends.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from vaultmem import edit, store
from vaultmem.edit.text import Line, Lines
from vaultmem.errors import ChangedOnDisk, NoteNotFound, UsageError
from vaultmem.memory import episodes as ep
from vaultmem.memory import facts as fc
from vaultmem.memory import loops as lp
from vaultmem.memory.errors import LoopChanged, Refused
from vaultmem.memory.lines import LineEdit
from vaultmem.memory.values import refuse_unpaired

if TYPE_CHECKING:
    from vaultmem.memories import Memory
    from vaultmem.vault import Vault


@dataclass(frozen=True)
class PlannedWrite:
    """A memory write computed against a note as read: the change to apply and what it means.

    `change` is None when nothing needs writing (the value is already stored)."""

    kind: Literal["fact", "episode", "loop", "resolve"]
    path: str
    change: edit.Change | None
    message: str
    line: int | None = None
    block: str | None = None
    status: str = "written"  # added | changed | unchanged | created | resolved


@dataclass(frozen=True)
class Written:
    """A memory write once applied (or found unneeded)."""

    plan: PlannedWrite
    touched: tuple[str, ...]


# --------------------------------------------------------------------------- line edits


def apply_edits(lines: Sequence[Line], edits: Sequence[LineEdit]) -> Lines:
    """The memory core's planned line edits carried out with the editor's operations
    (`edit.replace_line`, `edit.insert_after`): new lines take the note's dominant ending, every
    other line keeps its own text and end. Later edits go first, so earlier positions hold."""
    out: Lines = tuple(lines)
    for e in sorted(edits, key=lambda x: (x.start, x.stop), reverse=True):
        if not 0 <= e.start <= e.stop <= len(out):
            raise Refused(f"a planned edit falls outside the note ({e.start}-{e.stop})")
        common = min(e.stop - e.start, len(e.lines))
        for k in range(common):
            out = edit.replace_line(out, e.start + 1 + k, e.lines[k])
        if len(e.lines) > common:
            # one final line end only closes the last line, so a trailing blank line survives
            out = edit.insert_after(out, e.start + common, "\n".join(e.lines[common:]) + "\n")
        elif e.stop - e.start > common:
            kept = out[: e.start + common]
            if e.stop == len(out) and kept and not out[-1].end:
                # the note's last line goes: the new last line keeps "no final line end"
                kept = (*kept[:-1], Line(kept[-1].text, ""))
            out = (*kept, *out[e.stop :])
    return out


def _texts(source: edit.NoteSource) -> list[str]:
    return [line.text for line in source.lines]


def apply_lines(lines: Sequence[str], edits: Sequence[LineEdit]) -> list[str]:
    """Plain lines after the core's edits (for a note that does not exist yet)."""
    return [line.text for line in apply_edits([Line(t) for t in lines], edits)]


def edit_changed(path: str) -> ChangedOnDisk:
    return ChangedOnDisk(
        f"{path} changed since you read it (its digest is not the one given); nothing was"
        " written. Read it again and retry"
    )


# --------------------------------------------------------------------------- planning


class MemoryWriter:
    """Plans one vault's memory writes against its notes as read, and writes them."""

    def __init__(self, vault: Vault, memory: Memory) -> None:
        self._vault = vault
        self._memory = memory

    def _read(self, path: str) -> edit.NoteSource:
        """A note read for editing (its bytes once, their digest), through the write path."""
        return self._vault.read_for_edit(path)

    def plan_fact(
        self,
        entity: str,
        key: str,
        value: str,
        *,
        today: dt.date,
        source: str | None = None,
        create: bool = False,
        line: int | None = None,
        digest: str | None = None,
    ) -> PlannedWrite:
        """`fact set` planned: the change that makes `key` hold `value` in the entity's note
        (history kept; the same value plans nothing). `create` makes the note in the entities
        folder when no note has that name; `digest` is the revision the caller read."""
        try:
            path = self._memory.entity(entity)
        except NoteNotFound:
            if not create:
                raise
            return self._plan_new_entity(entity, key, value, today, source)
        source_note = self._read(path)
        if digest is not None and source_note.digest != digest:
            raise edit_changed(path)
        # the index's parse of this revision spares parsing the note again (a long note's
        # parse is most of planning); a note in another encoding is parsed as read
        parsed = None
        if source_note.encoding == "utf-8":
            parsed = store.indexed_structure(self._vault.conn, path, source_note.digest)
        planned = fc.plan_set(
            _texts(source_note), key, value, today, source=source, line=line, note=parsed
        )
        change = None
        if planned.edits:
            change = edit.plan_edit(source_note, apply_edits(source_note.lines, planned.edits))
        return PlannedWrite(
            "fact",
            path,
            change,
            planned.message(path),
            planned.line,
            planned.block,
            planned.status,
        )

    def _plan_new_entity(
        self, entity: str, key: str, value: str, today: dt.date, source: str | None
    ) -> PlannedWrite:
        refuse_unpaired(entity, "the entity name")  # else dropped from the new note's name
        bad = next((c for c in entity if unicodedata.category(c) == "Cc"), None)
        if bad is not None:  # a NUL or a newline: also dropped from the name, and silently
            raise Refused(f"the entity name holds a control character (U+{ord(bad):04X})")
        if entity.strip() and (self._vault.root / entity.strip().strip("/")).is_dir():
            self._memory.entity(entity)  # raises: a folder is not an entity
        name = ep.safe_title(entity.strip().removesuffix(".md").rsplit("/", 1)[-1])
        if "/" in entity.strip().strip("/"):
            raise Refused(
                f"'{entity}' is a path; --create makes notes only in the entities folder"
                f" ({self._memory.entities_folder}/): give the entity's name"
            )
        planned = fc.plan_set([], key, value, today, source=source)
        text = "\n".join(apply_lines([], planned.edits)) + "\n"
        folder = self._memory.entities_folder
        path = f"{folder}/{name}.md" if folder else f"{name}.md"
        change = edit.plan_new_note(path, text)
        return PlannedWrite(
            "fact",
            path,
            change,
            f"{path}:{planned.line}: {planned.key} = {planned.value!r} (new note)",
            planned.line,
            planned.block,
            "created",
        )

    def plan_episode(
        self,
        title: str,
        outcome: str,
        *,
        now: dt.datetime,
        when: dt.datetime | dt.date | None = None,
        entities: Sequence[str] = (),
        duration: str | None = None,
        procedure: str | None = None,
        body: str = "",
    ) -> PlannedWrite:
        """`episode add` planned: a new episode note (a free name in the episodes folder)."""
        taken = store.note_paths(self._vault.conn)
        new = ep.episode_note(
            title,
            outcome,
            when if when is not None else now,
            now,
            entities=entities,
            duration=duration,
            procedure=procedure,
            body=body,
            taken=[p for p in taken if p.startswith(self._memory.episodes_folder + "/")]
            + self._on_disk(self._memory.episodes_folder),
            folder=self._memory.episodes_folder,
        )
        change = edit.plan_new_note(new.path, new.text)
        return PlannedWrite("episode", new.path, change, f"{new.path}: episode written", 1)

    def _on_disk(self, folder: str) -> list[str]:
        """Notes in a vault folder that the index may not know yet (written since a reindex)."""
        base = self._vault.root / folder
        if not base.is_dir():
            return []
        return [f"{folder}/{p.name}" for p in base.iterdir() if p.name.endswith(".md")]

    def plan_loop(
        self,
        text: str,
        note: str,
        *,
        due: dt.date | None = None,
        priority: lp.Priority | None = None,
    ) -> PlannedWrite:
        """`loop add` planned: `- [ ] text ⏫ 📅 date` at the end of the note's loops section."""
        path = self._memory.entity(note)
        source = self._read(path)
        edit_, loop = lp.plan_add(_texts(source), text, due=due, priority=priority, path=path)
        change = edit.plan_edit(source, apply_edits(source.lines, [edit_]))
        return PlannedWrite(
            "loop",
            path,
            change,
            f"{path}:{loop.line}: {loop.title} ({loop.id})",
            loop.line,
            loop.id,
            "added",
        )

    def plan_resolve(self, ref: str, today: dt.date, digest: str | None = None) -> PlannedWrite:
        """`loop resolve` planned: the loop REF names (an id, or text matching one loop) found
        again in its note as it is now, and checked there with today's date. `digest`: the
        revision of the note the caller read."""
        loop = lp.match(ref, self._memory.all_loops())
        source = self._read(loop.path)
        if digest is not None and source.digest != digest:
            raise edit_changed(loop.path)
        edit_ = lp.plan_resolve(_texts(source), loop, today)  # LoopChanged when it moved on
        number = edit_.start + 1
        try:
            lines = edit.check_task(source.lines, number, today)
        except UsageError as exc:
            raise LoopChanged(f"{loop.path}:{number}: {exc}") from None
        change = edit.plan_edit(source, lines)
        return PlannedWrite(
            "resolve",
            loop.path,
            change,
            f"{loop.path}:{number}: {loop.title} checked ({today.isoformat()})",
            number,
            loop.id,
            "resolved",
        )

    # the core functions capture (issue 12) and the front-ends call: plan, then apply

    def write(self, plan: PlannedWrite) -> Written:
        """Apply a planned write (nothing when it needs none); the paths it touched."""
        if plan.change is None:
            return Written(plan, ())
        applied = self._vault.apply(plan.change)
        return Written(plan, tuple(applied.touched))
