"""Note text made ready for rendering as markdown: wikilinks as links.

Pure functions: the app shows what Obsidian shows, so `[[Note|shown]]` reads as "shown" and is
clickable, while text inside code fences stays exactly as written.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

# A wikilink or embed: [[target#anchor|shown]] (no nested brackets). `\|` is the table form.
_WIKILINK_RE = re.compile(r"(!?)\[\[([^\[\]\n|]+?)(?:\\?\|([^\[\]\n]*))?\]\]")
_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
LINK_SCHEME = "note:"  # hrefs of converted wikilinks; the note screen resolves them


def _link(match: re.Match[str]) -> str:
    bang, target, shown = match.group(1), match.group(2).strip(), match.group(3)
    label = (shown or "").strip() or target.lstrip("#").replace("#", " › ")
    label = label.replace("[", "\\[").replace("]", "\\]")
    href = LINK_SCHEME + quote(target, safe="/#^")
    return f"{'📎 ' if bang else ''}[{label}]({href})"


def link_target(href: str) -> str | None:
    """The wikilink target behind a converted link's href, or None for any other URL."""
    if not href.startswith(LINK_SCHEME):
        return None
    return unquote(href[len(LINK_SCHEME) :]).split("#", 1)[0] or None


def display_markdown(text: str) -> str:
    """`text` (a note's body: the core says where its front matter ends) with wikilinks outside
    code turned into markdown links."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE_RE.match(line)
        if m and (fence is None or (m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence))):
            fence = m.group(1) if fence is None else None
            out.append(line)
            continue
        out.append(line if fence is not None else _WIKILINK_RE.sub(_link, line))
    return "\n".join(out)


def chunks(text: str, first: int, rest: int) -> list[str]:
    """`text` cut at blank lines outside code fences: about `first` lines, then `rest` each
    (a long list or table stays whole: each chunk is rendered on its own).

    Concatenated, the chunks are `text` again. The note screen renders the first chunk at once
    and appends the others after it paints, so a long note shows in the time of a short one.
    """
    out: list[str] = []
    current: list[str] = []
    fence: str | None = None
    size = first
    for line in text.splitlines(keepends=True):
        m = _FENCE_RE.match(line)
        if m and (fence is None or (m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence))):
            fence = m.group(1) if fence is None else None
        current.append(line)
        if fence is None and not line.strip() and len(current) >= size:
            out.append("".join(current))
            current = []
            size = rest
    if current:
        out.append("".join(current))
    return out or [""]
