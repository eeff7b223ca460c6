"""The TUI's pure parts: hit rendering, sections, dates, markdown for display, URLs."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest

from vaultmem.tui.screens.browse import catalogue
from vaultmem.tui.screens.note import editor_command, obsidian_url
from vaultmem.tui.screens.search import parse_since
from vaultmem.tui.widgets.hit_list import heading_trail, highlighted, hit_text
from vaultmem.tui.widgets.markdown_text import (
    Callout,
    callouts,
    chunks,
    display_markdown,
)
from vaultmem.tui.widgets.preview import MAX_LINES, section_lines
from vaultmem.tui.widgets.rendered_view import rendered
from vaultmem.vault import HIGHLIGHT_END, HIGHLIGHT_START, FolderCount, Hit, NoteSummary, TagCount


def test_highlighted_snippet_styles_the_marked_words() -> None:
    text = highlighted(f"the {HIGHLIGHT_START}heat{HIGHLIGHT_END} pump\n  works")
    assert text.plain == "the heat pump works"
    spans = [(text.plain[s.start : s.end], str(s.style)) for s in text.spans]
    assert spans == [("heat", "bold reverse")]


def test_hit_text_shows_title_heading_path_date_snippet() -> None:
    hit = Hit(
        "work/A.md", "A", 3, 9, 1.0, f"{HIGHLIGHT_START}x{HIGHLIGHT_END} y", "A > Setup > Wiring"
    )
    assert hit_text(hit, "2026-11-18T19:30:00").plain == (
        "A › Setup › Wiring\nwork/A.md · 2026-11-18\nx y"
    )
    assert heading_trail("A", "A") == ""


def test_section_lines_cuts_the_hit_out_of_the_note() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 11))
    assert section_lines(text, 1, 3, 4) == "line 3\nline 4"
    assert section_lines(text, 1, 9, 50) == "line 9\nline 10"


def test_parse_since() -> None:
    today = dt.date(2026, 11, 30)
    assert parse_since(" ") is None
    assert str(parse_since("2026-11-20")) == "2026-11-20"
    assert parse_since("yesterday", today) == dt.date(2026, 11, 29)  # the words queries take
    assert parse_since("last week", today) == dt.date(2026, 11, 23)
    with pytest.raises(ValueError):
        parse_since("someday", today)


def test_long_sections_are_cut_for_the_preview() -> None:
    text = "\n".join(str(i) for i in range(1, 1001))
    shown = section_lines(text, 1, 1, 1000).splitlines()
    assert shown[:2] == ["1", "2"] and shown[-1] == "…" and len(shown) == MAX_LINES + 2


def test_obsidian_url_encodes_vault_and_file_without_md() -> None:
    assert obsidian_url("My Vault", "work/Heat pump COP math.md") == (
        "obsidian://open?vault=My%20Vault&file=work%2FHeat%20pump%20COP%20math"
    )
    assert obsidian_url("v", "personal/travel/日本旅行.md") == (
        "obsidian://open?vault=v&file=personal%2Ftravel%2F%E6%97%A5%E6%9C%AC%E6%97%85%E8%A1%8C"
    )
    assert obsidian_url("v", "a&b=c#d.md").endswith("file=a%26b%3Dc%23d")


def test_editor_command_prefers_visual_then_editor_then_vi() -> None:
    file = Path("/v/a b.md")
    assert editor_command(file, {"VISUAL": "code -w", "EDITOR": "nano"}) == [
        "code",
        "-w",
        "/v/a b.md",
    ]
    assert editor_command(file, {"EDITOR": "nano"}) == ["nano", "/v/a b.md"]
    assert editor_command(file, {}) == ["vi", "/v/a b.md"]


def test_the_preview_never_shows_front_matter() -> None:
    text = "---\ntags: [a]\n---\n# T\nbody"
    assert section_lines(text, 1, 1, 5, body_line=4) == "# T\nbody"


def test_wikilinks_become_links_outside_code() -> None:
    text = (
        "See [[Heat pump COP math#Worked example|the maths]] and ![[chart.png]].\n"
        "```\n[[not a link]]\n```"
    )
    shown = display_markdown(text)
    assert "[the maths](note:Heat%20pump%20COP%20math#Worked%20example)" in shown
    assert "[chart.png](note:chart.png)" in shown
    assert "[[not a link]]" in shown


def test_wikilinks_in_inline_code_stay_as_written() -> None:
    """As in Obsidian (and in the index): `[[Prototype]]` in backticks is code, not a link."""
    shown = display_markdown("The `[[Prototype]]` slot; `[[1, 2], [3, 4]]`; see [[Object]].")
    assert shown == "The `[[Prototype]]` slot; `[[1, 2], [3, 4]]`; see [Object](note:Object)."


def test_chunks_never_cut_a_fence_nested_in_a_list() -> None:
    code = "".join(f"    line {i}\n\n" for i in range(20))
    text = "- item\n\n    ```js\n" + code + "    ```\n\nafter\n"
    parts = chunks(text, 2, 2)
    assert "".join(parts) == text
    assert all(p.count("```") % 2 == 0 for p in parts)


def test_a_wikilink_in_inline_code_stays_code() -> None:
    shown = display_markdown("never send `[[Inline Code Link]]`, but [[Real]] and ``a `[[b]]` c``")
    assert shown == ("never send `[[Inline Code Link]]`, but [Real](note:Real) and ``a `[[b]]` c``")


def test_block_ids_are_hidden() -> None:
    text = (
        "A paragraph to link to. ^b15695\n"
        "- a list item ^item-2\n"
        "| a | b |\n"
        "^table-id\n"
        "kept: `code ^inline` and x^2\n"
        "```\nfenced ^kept\n```"
    )
    assert display_markdown(text).split("\n") == [
        "A paragraph to link to.",
        "- a list item",
        "| a | b |",
        "kept: `code ^inline` and x^2",
        "```",
        "fenced ^kept",
        "```",
    ]


def test_callouts_are_found_with_their_title_and_body() -> None:
    text = (
        "Before.\n"
        "> [!tip]- Use the [thing](note:Thing)\n"
        "> first line\n"
        ">\n"
        "> > [!WARNING]\n"
        "> > careful\n"
        "After.\n"
        "> a plain quote\n"
        "```\n> [!note] in code\n```"
    )
    assert callouts(text) == [
        "Before.",
        Callout("tip", "Use the thing", "-", "first line\n\n> [!WARNING]\n> careful"),
        "After.\n> a plain quote\n```\n> [!note] in code\n```",
    ]
    (nested,) = [p for p in callouts(callouts(text)[1].body) if isinstance(p, Callout)]  # type: ignore[union-attr]
    assert (nested.kind, nested.title, nested.body) == ("warning", "Warning", "careful")


def test_a_callout_renders_as_a_titled_box() -> None:
    from rich.console import Console

    console = Console(width=40, record=True, color_system=None, file=io.StringIO())
    console.print(rendered(display_markdown("> [!tip]- Title here\n> The body text. ^abc123")))
    lines = console.export_text().rstrip("\n").split("\n")
    assert lines[0].startswith("╭─ Title here ─") and lines[0].endswith("╮")
    assert lines[1].startswith("│ The body text.") and lines[1].endswith("│")
    assert lines[2].startswith("╰") and len(lines) == 3
    assert "[!tip]" not in console.export_text() and "^abc123" not in console.export_text()


def test_catalogue_groups_children_under_parents() -> None:
    notes = (
        NoteSummary("a/x.md", "x", None, 1.0, ()),
        NoteSummary("a/b/y.md", "y", None, 2.0, ()),
        NoteSummary("top.md", "top", None, 3.0, ()),
    )
    found = catalogue(
        (FolderCount("", 3), FolderCount("a", 2), FolderCount("a/b", 1)),
        (TagCount("p", 2), TagCount("p/q", 1)),
        notes,
        (),
    )
    assert found.subfolders == {"": ["a"], "a": ["a/b"]}
    assert [n.title for n in found.notes_in["a"]] == ["x"]
    assert found.subtags == {"": ["p"], "p": ["p/q"]}


def test_chunks_cut_outside_code_and_join_back() -> None:
    lines = [f"para {i}\n\n" for i in range(10)]
    code = "```\n" + "".join(f"code {i}\n" for i in range(30)) + "```\n"
    text = "".join(lines) + code + "- item\n" * 50
    parts = chunks(text, 4, 6)
    assert "".join(parts) == text
    assert len(parts[0].splitlines()) == 4
    assert all(p.count("```") % 2 == 0 for p in parts)  # a code block is never cut
    assert parts[-1].endswith("- item\n" * 50)  # nor a list: each chunk renders on its own
