"""Reading notes: find one by name, what the index knows of it (show), its text from disk,
its backlinks, and browsing the vault (folders, tags, recent notes)."""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from vaultmem import store
from vaultmem.errors import NoteNotFound, UsageError
from vaultmem.index import Index
from vaultmem.parser import split_front_matter, written_link
from vaultmem.resolver import fold, heading_key
from vaultmem.scan import Unreadable, disk_path
from vaultmem.scan import read_note as read_text
from vaultmem.store import HeadingInfo, NoteSummary, TagCount, TaskInfo

__all__ = [
    "Backlink",
    "FolderCount",
    "HeadingInfo",
    "NoteInfo",
    "NoteSummary",
    "NoteText",
    "Notes",
    "OutLink",
    "TagCount",
    "TaskInfo",
]


@dataclass(frozen=True)
class OutLink:
    line: int
    written: str
    target: str
    relation: str
    kind: str
    embed: bool
    heading: str | None
    block: str | None
    display: str | None
    dst_path: str | None
    candidates: tuple[str, ...]
    anchor_ok: bool | None
    alias_fix: str | None

    @property
    def status(self) -> str:
        if self.dst_path is None:
            return "alias-fixable" if self.alias_fix else "wanted"
        if self.anchor_ok is False:
            return "missing-anchor"
        return "ambiguous" if len(self.candidates) > 1 else "resolved"


@dataclass(frozen=True)
class Backlink:
    src_path: str
    line: int
    relation: str
    anchor: str | None
    context: str


@dataclass(frozen=True)
class NoteInfo:
    path: str
    title: str
    kind: str
    size: int
    line_count: int
    date: str | None
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    frontmatter: dict[str, object]
    warnings: tuple[str, ...]
    headings: tuple[HeadingInfo, ...]
    links: tuple[OutLink, ...]
    backlinks: tuple[Backlink, ...]
    tasks: tuple[TaskInfo, ...]


@dataclass(frozen=True)
class NoteText:
    """A note's current text on disk: all of it, or the section under one heading."""

    path: str
    title: str
    heading: str | None
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str
    headings: tuple[str, ...] = ()
    body_line: int = 1  # the note's first line after its front matter (1: it has none)
    digest: str = ""  # the revision read (content hash of the note's bytes): a write's precondition


@dataclass(frozen=True)
class FolderCount:
    path: str  # "" is the vault root
    notes: int  # including every subfolder's


def _out_link(row: store.LinkRow) -> OutLink:
    return OutLink(
        line=row.line,
        written=written_link(row.target, row.heading, row.block, row.display, row.embed, row.kind),
        target=row.target,
        relation=row.relation,
        kind=row.kind,
        embed=row.embed,
        heading=row.heading,
        block=row.block,
        display=row.display,
        dst_path=row.dst_path,
        candidates=row.candidates,
        anchor_ok=row.anchor_ok,
        alias_fix=row.alias_fix,
    )


class Notes:
    """Notes as the index and the files have them: lookups, metadata, text, backlinks."""

    def __init__(self, root: Path, index: Index) -> None:
        self.root = root
        self.index = index

    # ---- finding notes

    def find_note(self, ref: str) -> str:
        """A note's path from a path, title or alias, or an attachment's from its file name
        (case-insensitive; a path spelled exactly as the index holds it wins over its other
        spellings)."""
        ref = ref.strip()
        if not ref:
            raise UsageError("empty note name")
        conn = self.index.conn
        # the path as listed (by `--json`, by an agent): one look-up in the unique index
        # instead of comparing every path lower-cased (30 ms on MDN's 14k files)
        for exact in (ref, ref + ".md"):
            if store.is_file(conn, exact):
                return exact
        want = fold(ref.removesuffix(".md"))
        found = store.paths_spelled(conn, fold(ref), want)
        found = [p for p in found if fold(p).removesuffix(".md") == want] or found
        if not found:
            found = store.note_paths_titled(conn, want)
        if not found:
            found = store.note_paths_aliased(conn, fold(ref))
        if not found:  # an attachment by its file name ("Engelbart.jpg")
            found = store.note_paths_titled(conn, fold(ref), "attachment")
        paths = sorted(set(found), key=lambda p: (len(p), p))
        if len(paths) == 1:
            return paths[0]
        if len(paths) > 1:
            raise NoteNotFound(
                f"'{ref}' names {len(paths)} notes: {', '.join(paths)}; give the path instead"
            )
        skipped = store.skipped_reason(conn, ref.strip("/"))
        if skipped is not None:  # a file the last reindex could not read: say why
            raise NoteNotFound(f"'{ref}' is not indexed: the last reindex skipped it ({skipped})")
        close = difflib.get_close_matches(ref, store.note_titles(conn), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise NoteNotFound(
            f"no note named '{ref}'{hint} (`vaultmem search {json.dumps(ref)}` searches the text)"
        )

    # ---- one note

    def show(self, ref: str) -> NoteInfo:
        """What the index knows about a note: metadata, headings, links both ways, tasks."""
        path = self.find_note(ref)
        conn = self.index.conn
        row = store.note(conn, path)
        assert row is not None  # find_note found it
        return NoteInfo(
            path=path,
            title=row.title,
            kind=row.kind,
            size=row.size,
            line_count=row.line_count,
            date=row.date,
            aliases=row.aliases,
            tags=store.direct_tags(conn, path),
            frontmatter=row.frontmatter,
            warnings=row.warnings,
            headings=store.headings_of(conn, path),
            links=tuple(_out_link(r) for r in store.outgoing(conn, path)),
            backlinks=self.backlinks(path),
            tasks=store.tasks_of(conn, path),
        )

    def read_note(self, ref: str, heading: str | None = None) -> NoteText:
        """A note's current text from disk, or one section of it (the heading matched the way
        Obsidian matches `[[Note#Heading]]`; without `heading`, `ref` may be written as a link
        is, `Note#Heading`). Only indexed notes inside the vault are read."""
        if "\x00" in ref or (heading and "\x00" in heading):
            raise UsageError("a note name cannot contain a NUL byte")
        try:
            path = self.find_note(ref)
        except NoteNotFound:
            name, _, section = ref.partition("#")
            if heading is not None or "#" not in ref or not name.strip():
                raise
            path, heading = self.find_note(name), section or None
        lines, digest = self._lines_and_digest(path)
        conn = self.index.conn
        title = str(store.title_of(conn, path))
        ranges = store.headings_of(conn, path)
        headings = tuple(h.text for h in ranges)
        whole = "\n".join(lines)
        body = split_front_matter(whole)[1] + 1
        if heading is None or not heading.strip():
            return NoteText(path, title, None, 1, len(lines), whole, headings, body, digest)
        want = heading_key(heading.lstrip("#"))
        found = next((h for h in ranges if heading_key(h.text) == want), None)
        if found is None:
            known = "; ".join(headings[:20]) or "it has no headings"
            raise NoteNotFound(f"{path} has no heading '{heading}' (headings: {known})")
        end = min(found.end_line, len(lines))
        section = "\n".join(lines[found.line - 1 : end])
        return NoteText(path, title, found.text, found.line, end, section, headings, body, digest)

    def note_lines(self, path: str) -> list[str]:
        """The current lines of an indexed note (`path` as the index has it), numbered as the
        index numbers them; a file that now leads outside the vault (a symlink swapped in
        since the last reindex) is refused."""
        return self._lines_and_digest(path)[0]

    def _lines_and_digest(self, path: str) -> tuple[list[str], str]:
        """`note_lines`, and the digest of the bytes they were read from."""
        file = self.note_file(path)
        try:
            read = read_text(file, os.path.realpath(self.root), self.index.config.max_file_bytes)
            text = read.text
        except FileNotFoundError:
            raise NoteNotFound(
                f"{path} was deleted or moved since the last reindex; run `vaultmem reindex`"
            ) from None
        except Unreadable as exc:
            if not path.lower().endswith(".md"):  # an attachment: the reason is about notes
                raise NoteNotFound(
                    f"{path} is a binary attachment, not a note: it has no text to read"
                    f" (`vaultmem backlinks '{PurePosixPath(path).name}'` lists the notes"
                    " that embed it)"
                ) from None
            raise NoteNotFound(f"{path}: {exc}") from None
        # split on line ends only, as the parser counts lines (str.splitlines also splits on
        # form feeds and U+2028, which would shift every line number after them)
        lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if lines[-1] == "":
            lines.pop()  # the final line end
        return lines, read.digest

    def note_file(self, path: str) -> Path:
        """The file of an indexed note as named on disk (`path` as the index has it: the
        disk may spell it in NFD, as macOS writes, or with bytes that are not UTF-8), for a
        front-end that hands it to an editor; refusing one that now leads outside the vault
        (a symlink swapped in since the last reindex)."""
        file = Path(disk_path(self.root, path))
        root = os.path.realpath(self.root)
        if not os.path.realpath(file).startswith(root.rstrip(os.sep) + os.sep):
            raise NoteNotFound(f"{path} leads outside the vault; vaultmem reads only inside it")
        return file

    def backlinks(self, ref_or_path: str) -> tuple[Backlink, ...]:
        """Links into a note from other files, each with its line's text as context."""
        conn = self.index.conn
        path = ref_or_path if store.is_file(conn, ref_or_path) else self.find_note(ref_or_path)
        lines_of: dict[str, list[str]] = {}
        out: list[Backlink] = []
        for row in store.backlinks(conn, path):
            if row.src_path not in lines_of:
                lines_of[row.src_path] = self._context_lines(row.src_path)
            text = lines_of[row.src_path]
            context = text[row.line - 1].strip() if 0 < row.line <= len(text) else ""
            anchor = f"^{row.block}" if row.block else row.heading
            out.append(Backlink(row.src_path, row.line, row.relation, anchor, context))
        return tuple(out)

    def _context_lines(self, path: str) -> list[str]:
        try:
            return self.note_lines(path)
        except NoteNotFound:
            return []  # a backlink's context is a courtesy: the link itself is from the index

    # ---- browsing

    def folders(self) -> tuple[FolderCount, ...]:
        """Every folder holding notes, with how many notes it holds (subfolders included)."""
        counts: dict[str, int] = {}
        for path in store.note_paths(self.index.conn):
            parts = path.split("/")[:-1]
            counts[""] = counts.get("", 0) + 1
            for i in range(1, len(parts) + 1):
                folder = "/".join(parts[:i])
                counts[folder] = counts.get(folder, 0) + 1
        return tuple(FolderCount(p, n) for p, n in sorted(counts.items()))

    def tag_counts(self) -> tuple[TagCount, ...]:
        """Every tag with how many notes carry it (a nested tag counts for its parents)."""
        return tuple(store.tag_counts(self.index.conn))

    def recent(self, limit: int = 50) -> tuple[NoteSummary, ...]:
        """The most recently modified notes, newest first."""
        return tuple(store.note_summaries(self.index.conn, limit))

    def note_names(self) -> tuple[NoteSummary, ...]:
        """Every note (title, path, aliases), for completion and pickers."""
        return tuple(store.note_summaries(self.index.conn))
