"""The note tools: `read_note` (a note's text from disk, or one section) and `backlinks`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult
from pydantic import Field

from vaultmem import dialect
from vaultmem.server.runner import Runner, structured
from vaultmem.server.schema import MAX_NOTE_CHARS, MAX_ROWS, Limit, NoteRef, make_tool

if TYPE_CHECKING:
    from vaultmem.vault import Vault


def tools(runner: Runner) -> list[Tool]:
    async def read_note(
        ref: NoteRef,
        heading: Annotated[
            str | None,
            Field(
                max_length=1000,
                description="Read only the section under this heading (as in [[Note#Heading]]: "
                "case and punctuation do not matter; 'Plan#Risks' names a subheading). "
                "Omit to read the whole note.",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, dialect.NoteTextOut]:
        """Read a note's current text from disk: the whole note, or one section of it
        (`heading`, or `ref` written as a link is: 'Note#Heading').

        The answer is the note's path and line range, then the markdown exactly as written
        (a separate block); its structured part lists the note's headings, to read another
        section next. Text past 200,000 characters is cut at a line end, and the answer says so.
        The structured part's `digest` is the revision read (the hash of the whole note's
        bytes): a write sends it back, and is refused if the note changed since.
        """
        return await runner.answer(_read_note, runner.vault, ref, heading)

    async def backlinks(
        ref: NoteRef, limit: Limit = 50
    ) -> Annotated[CallToolResult, dialect.BacklinksOut]:
        """List the notes that link to a note, each with the line around the link."""
        return await runner.answer(_backlinks, runner.vault, ref, limit)

    return [
        make_tool(read_note, "read_note", "Read a note"),
        make_tool(backlinks, "backlinks", "Notes linking here"),
    ]


def _read_note(vault: Vault, ref: str, heading: str | None) -> CallToolResult:
    note = vault.read_note(ref, heading)  # `Note#Heading` too, as agents write a link
    text, end_line, truncated = note.text, note.end_line, False
    if len(text) > MAX_NOTE_CHARS:
        kept = text[:MAX_NOTE_CHARS].rsplit("\n", 1)[0]
        end_line = note.start_line + kept.count("\n")
        text, truncated = kept, True
    where = f"{note.path}, lines {note.start_line}-{end_line}"
    if note.heading:
        where += f", section '{note.heading}'"
    blocks = [where, text]
    if truncated:
        blocks.append(
            f"[cut at line {end_line} of {note.end_line}: pass a heading to read one section]"
        )
    data = dialect.note_text(note, end_line, len(text), truncated, MAX_ROWS)
    return structured(data, *blocks)  # the text once, as text: never inside the JSON as well


def _backlinks(vault: Vault, ref: str, limit: int) -> CallToolResult:
    path = vault.find_note(ref)
    return structured(dialect.backlinks(path, vault.backlinks(path), limit))
