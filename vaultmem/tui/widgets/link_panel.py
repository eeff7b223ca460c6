"""The note screen's side panel: outgoing links, backlinks with their sentence, tags, and the
notes most like this one (each with why)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from vaultmem.vault import NoteInfo, OutLink

if TYPE_CHECKING:
    from vaultmem.related import Related

CONTEXT_CHARS = 140


@dataclass(frozen=True)
class PanelEntry:
    """What a panel row leads to: a note, a wanted (missing) note, or a tag."""

    kind: Literal["note", "wanted", "tag"]
    value: str


def _title_of(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _link_row(link: OutLink) -> tuple[Text, PanelEntry]:
    rel = "" if link.relation in ("links_to", "embeds") else f"{link.relation}: "
    anchor = f" › {link.heading}" if link.heading else ""
    if link.dst_path is None:
        text = Text("? " + rel + link.target + anchor, style="italic dim")
        status = "alias of " + _title_of(link.alias_fix) if link.alias_fix else "wanted"
        text.append(f"  ({status})", style="italic")
        entry = PanelEntry("note", link.alias_fix) if link.alias_fix else None
        return text, entry or PanelEntry("wanted", link.target)
    text = Text("→ " + rel + _title_of(link.dst_path) + anchor)
    if link.status in ("ambiguous", "missing-anchor"):
        text.append(f"  ({link.status})", style="italic")
    return text, PanelEntry("note", link.dst_path)


class LinkPanel(OptionList):
    """Enter on a row follows it: a link or backlink opens its note, a tag searches it."""

    class Follow(Message):
        """A row was chosen."""

        def __init__(self, entry: PanelEntry) -> None:
            super().__init__()
            self.entry = entry

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: list[PanelEntry] = []

    def show_note(self, info: NoteInfo) -> None:
        self.entries = []
        options: list[Option] = []

        def heading(label: str) -> None:
            options.append(Option(Text(label, style="bold underline"), disabled=True))

        def row(text: Text, entry: PanelEntry) -> None:
            options.append(Option(text, id=str(len(self.entries))))
            self.entries.append(entry)

        seen: set[tuple[str, str | None]] = set()
        links = []
        for link in info.links:
            key = (link.dst_path or "?" + link.target.lower(), link.heading)
            if key not in seen:
                seen.add(key)
                links.append(link)
        heading(f"Links ({len(links)})")
        for link in links:
            row(*_link_row(link))
        heading(f"Backlinks ({len(info.backlinks)})")
        for back in info.backlinks:
            text = Text("← " + _title_of(back.src_path), style="bold")
            text.append(f" :{back.line}", style="dim")
            context = " ".join(back.context.split())
            if len(context) > CONTEXT_CHARS:
                context = context[:CONTEXT_CHARS] + "…"
            if context:
                text.append("\n  " + context, style="dim")
            row(text, PanelEntry("note", back.src_path))
        if info.tags:
            heading(f"Tags ({len(info.tags)})")
            for tag in info.tags:
                row(Text("#" + tag), PanelEntry("tag", tag))
        for warning in info.warnings:
            options.append(Option(Text("⚠ " + warning, style="italic"), disabled=True))
        self.set_options(options)
        if self.entries:
            self.highlighted = next(i for i, o in enumerate(options) if not o.disabled)

    def show_related(self, found: Sequence[Related]) -> None:
        """Add the related notes below the rest (they take longer to find)."""
        if not found:
            return
        options = [Option(Text(f"Related ({len(found)})", style="bold underline"), disabled=True)]
        for related in found:
            text = Text("≈ " + _title_of(related.path))
            why = "; ".join(reason.detail for reason in related.reasons[:2])
            if len(why) > CONTEXT_CHARS:
                why = why[:CONTEXT_CHARS] + "…"
            text.append("\n  " + why, style="dim")
            options.append(Option(text, id=str(len(self.entries))))
            self.entries.append(PanelEntry("note", related.path))
        had_rows = any(not o.disabled for o in self.options)
        self.add_options(options)
        if not had_rows:
            self.highlighted = next(i for i, o in enumerate(self.options) if not o.disabled)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.Follow(self.entries[int(event.option.id)]))
