"""Note text made ready for rendering as markdown: wikilinks as links.

Pure functions: the app shows what Obsidian shows, so `[[Note|shown]]` reads as "shown" and is
clickable, while text inside code fences stays exactly as written.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

from vaultmem.parser import WikilinkSpan, fence_roles, wikilinks_in

LINK_SCHEME = "note:"  # hrefs of converted wikilinks; the note screen resolves them


def _link(span: WikilinkSpan) -> str:
    label = span.ref.display or span.reference.lstrip("#").replace("#", " › ")
    label = label.replace("[", "\\[").replace("]", "\\]")
    href = LINK_SCHEME + quote(span.reference, safe="/#^")
    return f"{'📎 ' if span.embed else ''}[{label}]({href})"


def _with_links(line: str) -> str:
    out: list[str] = []
    at = 0
    for span in wikilinks_in(line):
        out += [line[at : span.start], _link(span)]
        at = span.end
    return "".join(out) + line[at:]


def link_target(href: str) -> str | None:
    """The wikilink target behind a converted link's href, or None for any other URL."""
    if not href.startswith(LINK_SCHEME):
        return None
    return unquote(href[len(LINK_SCHEME) :]).split("#", 1)[0] or None


def display_markdown(text: str) -> str:
    """`text` (a note's body: the core says where its front matter ends) with wikilinks outside
    code turned into markdown links."""
    lines = text.split("\n")
    roles = fence_roles(lines)
    return "\n".join(
        line if role else _with_links(line) for line, role in zip(lines, roles, strict=True)
    )


def chunks(text: str, first: int, rest: int) -> list[str]:
    """`text` cut at blank lines outside code fences: about `first` lines, then `rest` each
    (a long list or table stays whole: each chunk is rendered on its own).

    Concatenated, the chunks are `text` again. The note screen renders the first chunk at once
    and appends the others after it paints, so a long note shows in the time of a short one.
    """
    out: list[str] = []
    current: list[str] = []
    size = first
    lines = text.splitlines(keepends=True)
    for line, role in zip(lines, fence_roles(lines), strict=True):
        current.append(line)
        if role is None and not line.strip() and len(current) >= size:
            out.append("".join(current))
            current = []
            size = rest
    if current:
        out.append("".join(current))
    return out or [""]
