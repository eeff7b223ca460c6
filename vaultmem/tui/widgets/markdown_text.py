"""Note text made ready for rendering as markdown: wikilinks as links, block ids hidden,
callouts found.

Pure functions: the app shows what Obsidian shows, so `[[Note|shown]]` reads as "shown" and is
clickable, a `^block-id` at the end of a paragraph is not shown, `> [!tip] Title` is a callout
(the view draws it as a titled box), and text in code (fences or inline) stays as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote

from vaultmem.parser import WikilinkSpan, fence_roles, wikilinks_in

_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_BLOCK_ID_RE = re.compile(r"(?:^|\s+)\^[A-Za-z0-9-]+\s*$")  # `… text ^b15695` (Obsidian hides it)
_CALLOUT_RE = re.compile(r"^\s{0,3}>\s?\[!([^\]\s]+)\]([+-]?)[ \t]*(.*)$")
_QUOTE_RE = re.compile(r"^\s{0,3}> ?")
_MD_LINK_RE = re.compile(r"\[((?:\\.|[^\]])*)\]\([^)]*\)")
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
    code turned into markdown links and block ids (`^id` ending a line) left out."""
    lines = text.split("\n")
    out: list[str] = []
    for line, role in zip(lines, fence_roles(lines), strict=True):
        if role:
            out.append(line)
            continue
        shown = _with_links(line)
        if not line.rstrip().endswith("`"):
            bare = _BLOCK_ID_RE.sub("", shown)
            if bare.strip() or not shown.strip().startswith("^"):
                shown = bare
            else:
                continue  # a block id on a line of its own (after a table or a quote)
        out.append(shown)
    return "\n".join(out)


@dataclass(frozen=True)
class Callout:
    """`> [!kind]± Title` and the quoted lines under it (their `>` taken off)."""

    kind: str  # lower case: note, tip, warning…
    title: str  # as written, else the kind capitalised (Obsidian's default)
    fold: str  # "+" (open), "-" (folded) or ""
    body: str  # markdown; may hold callouts of its own


def callouts(text: str) -> list[str | Callout]:
    """`text` (markdown) as runs of plain markdown and callouts, in order; concatenated, the
    markdown runs and each callout's lines are `text` again. Fenced code is never a callout."""
    out: list[str | Callout] = []
    plain: list[str] = []
    lines = text.split("\n")
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE_RE.match(line)
        if m and (fence is None or (m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence))):
            fence = m.group(1) if fence is None else None
        head = _CALLOUT_RE.match(line) if fence is None else None
        if head is None:
            plain.append(line)
            i += 1
            continue
        if plain:
            out.append("\n".join(plain))
            plain = []
        body: list[str] = []
        i += 1
        while i < len(lines) and _QUOTE_RE.match(lines[i]):
            body.append(_QUOTE_RE.sub("", lines[i], count=1))
            i += 1
        kind, fold, title = head.group(1).lower(), head.group(2), head.group(3).strip()
        title = _MD_LINK_RE.sub(r"\1", title).replace("**", "").replace("`", "")
        title = title or kind.capitalize()
        out.append(Callout(kind, title, fold, "\n".join(body)))
    if plain:
        out.append("\n".join(plain))
    return out


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
