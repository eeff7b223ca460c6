"""Markdown parsing: note text in, `ParsedNote` out (pure; no files, no database).

markdown-it-py does the CommonMark work (so code, math and HTML comments are never mistaken for
links or tags); one small inline rule adds Obsidian wikilinks and embeds. Front matter is split
off by hand so line numbers stay exact and a UTF-8 BOM or broken YAML never hides the note.
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import PurePosixPath
from typing import Any, Literal
from urllib.parse import unquote

import yaml
from markdown_it import MarkdownIt, rules_inline
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from yaml.constructor import SafeConstructor

from vaultmem.brackets import (
    NextClose,
    TickRuns,
    next_bracket_close,
    next_wikilink_close,
)
from vaultmem.config import FrontMatterLimits
from vaultmem.model import (
    BlockId,
    Chunk,
    Field,
    Heading,
    JSONValue,
    Link,
    ParsedNote,
    Task,
)

try:  # the C loader is ~10x faster; fall back where libyaml is missing
    from yaml import CSafeLoader as _YamlLoader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _YamlLoader  # type: ignore[assignment]

CHUNK_MAX_CHARS = 1500
CHUNK_OVERLAP_CHARS = 200

_PLACEHOLDER = "\ufffc"  # stands in for code, math and link markup when scanning for tags
_SCHEME_RE = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.\-]*:|//)")
# A tag: "#" after start or white space, then letters, digits, "_", "-", "/" or any non-ASCII
# but the placeholder (what stands for a link, code or an escape right after a tag ends it).
_TAG_RE = re.compile(r"(?:^|(?<=\s))#([^\s!\"#$%&'()*+,.:;<=>?@\[\\\]^`{|}~\ufffc]+)")
_FIELD_KEY = r"[^\W\d_](?:[\w \-/.]*?\w)?|_\w*"
_FULL_FIELD_RE = re.compile(rf"^\s*(?:\*\*)?({_FIELD_KEY})(?:\*\*)?::[ \t]*(.*)$")
_FIELD_VALUE = r"(?:\[\[[^\]\n]*\]\]|[^\[\]\n])*"
_BRACKET_FIELD_RE = re.compile(rf"\[({_FIELD_KEY})::[ \t]*({_FIELD_VALUE})\]")
_PAREN_FIELD_RE = re.compile(rf"\(({_FIELD_KEY})::[ \t]*((?:\[\[[^\]\n]*\]\]|[^()\n])*)\)")
_BLOCK_ID_RE = re.compile(r"(?:^|\s)\^([A-Za-z0-9][A-Za-z0-9\-]*)\s*$")
_TASK_RE = re.compile(r"^\[(.)\]\s+(.*)$")
_WIKILINK_IN_TEXT_RE = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_DATE = r"\d{4}-\d{2}-\d{2}"
_DUE_EMOJI_RE = re.compile(rf"📅\s*({_DATE})")
_DONE_EMOJI_RE = re.compile(rf"✅\s*({_DATE})")
_PRIORITY_EMOJI = {"🔺": "highest", "⏫": "high", "🔼": "medium", "🔽": "low", "⏬": "lowest"}
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TICKS_RE = re.compile(r"`+")
_FM_OPEN_RE = re.compile(r"^---[ \t]*$")
_FM_CLOSE_RE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")
_LIST_KEYS = {"tags", "tag", "aliases", "alias", "cssclasses", "cssclass"}


# --------------------------------------------------------------------------- wikilinks


@dataclass(frozen=True)
class LinkRef:
    """The parts of a link reference such as `Note#Heading#Sub|shown` or `Note#^block`."""

    target: str
    heading: str | None
    block: str | None
    display: str | None


def split_link_ref(inner: str) -> LinkRef | None:
    """Split the inside of `[[...]]` the way Obsidian does; None when it is not a link."""
    inner = inner.replace("\\|", "|")
    ref, bar, display = inner.partition("|")
    shown = display.strip() if bar else None
    target, hash_, anchor = ref.partition("#")
    target = target.strip()
    heading = block = None
    if hash_:
        anchor = anchor.strip()
        if anchor.startswith("^"):
            block = anchor[1:].strip() or None
        else:
            parts = [p.strip() for p in anchor.split("#")]
            heading = "#".join(p for p in parts if p) or None
    if not target and heading is None and block is None:
        return None
    return LinkRef(target, heading, block, shown or None)


def written_link(
    target: str,
    heading: str | None = None,
    block: str | None = None,
    display: str | None = None,
    embed: bool = False,
    kind: str = "wiki",
) -> str:
    """A link as a note spells it (normalised): `[[Note#Heading|shown]]`, `![[x.png]]`,
    `[shown](Note.md#^block)`; for messages, and for fixes that rewrite a link."""
    anchor = f"#^{block}" if block else (f"#{heading}" if heading else "")
    bang = "!" if embed else ""
    if kind == "markdown":
        return f"{bang}[{display or ''}]({target}{anchor})"
    shown = f"|{display}" if display else ""
    return f"{bang}[[{target}{anchor}{shown}]]"


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    if src.startswith("![[", pos):
        embed, start = True, pos + 3
    elif src.startswith("[[", pos):
        embed, start = False, pos + 2
    else:
        return False
    end = next_wikilink_close(state, start)
    # no `[[` or line break before the `]]`; searched so, not in a slice of the text up to
    # it, so that a line of `[[` costs one pass, not one per pair
    if end < 0 or src.find("[[", start, end) >= 0 or src.find("\n", start, end) >= 0:
        return False
    ref = split_link_ref(src[start:end])
    if ref is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = src[pos : end + 2]
        token.meta = {"ref": ref, "embed": embed}
    state.pos = end + 2
    return True


def _unclosed_brackets_rule(state: StateInline, silent: bool) -> bool:
    """A run of `[` with no `]` anywhere after it opens no link, embed or footnote: plain
    text, taken whole. (markdown-it would try a link at each one, scanning the rest of the
    paragraph each time: a megabyte of `[` took minutes.)"""
    src, pos = state.src, state.pos
    if src[pos] != "[" or next_bracket_close(state, pos) >= 0:
        return False
    end = pos + 1
    while end < state.posMax and src[end] == "[":
        end += 1
    if not silent:
        state.pending += src[pos:end]
    state.pos = end
    return True


# markdown-it's search for a markdown link's `]` costs tens of microseconds per `[` in a flood
# of them (its nesting cutoff makes each bracket a few dozen steps), so a note's paragraphs
# are read for `[text](target)` links only until they held this many `[` (then only
# wikilinks, with a warning): a megabyte of brackets took over a minute, and now ~2 s at most.
MAX_LINK_BRACKETS = 20_000


def _inline_rule(state: StateCore) -> None:
    """markdown-it's own core rule that parses each block's inline text, with the budget."""
    budget = MAX_LINK_BRACKETS  # for the whole note: the rule runs once per parse
    for token in state.tokens:
        if token.type != "inline":
            continue
        if token.children is None:
            token.children = []
        md = state.md
        # with no `]`, no `[` opens a link, and the unclosed-brackets rule reads them cheaply
        brackets = token.content.count("[") if "]" in token.content else 0
        if brackets > budget:
            md = _MD_WITHOUT_LINKS
            state.env.setdefault("bracket_flood_lines", []).append(
                token.map[0] + 1 if token.map else 0
            )
        else:
            budget -= brackets
        md.inline.parse(token.content, md, state.env, token.children)


def _bracket_run_rule(state: StateInline, silent: bool) -> bool:
    """Without markdown links, a `[` followed by three more opens nothing (a wikilink holds
    no `[[`): a run of them is text up to its last three, taken whole."""
    src, pos, stop = state.src, state.pos, state.posMax
    end = pos
    while end < stop and src[end] == "[":
        end += 1
    if end - pos < 4:
        return False
    if not silent:
        state.pending += src[pos : end - 3]
    state.pos = end - 3
    return True


def _backticks_rule(state: StateInline, silent: bool) -> bool:
    """markdown-it's code spans, noting how many line breaks a span holds: its content has
    them as spaces, and the lines after it would be numbered too low."""
    start, count = state.pos, len(state.tokens)
    if not rules_inline.backtick(state, silent):
        return False
    if len(state.tokens) > count and state.tokens[-1].type == "code_inline":
        state.tokens[-1].meta["newlines"] = state.src.count("\n", start, state.pos)
    return True


def _build_markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    # Obsidian math: `$x$` needs no space inside the dollars; "$5 and $10" stays text.
    dollarmath_plugin(md, allow_labels=False, allow_space=False, allow_digits=False)
    # `[^1]: text` is a footnote, not a link reference to a note named "text". Inline `^[...]`
    # footnotes stay text, so the links inside them are still found.
    footnote_plugin(md, inline=False)
    md.inline.ruler.at("backticks", _backticks_rule)
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.inline.ruler.before("wikilink", "unclosed_brackets", _unclosed_brackets_rule)
    # Keep escapes as separate tokens so `\#tag` is not a tag.
    md.core.ruler.disable("text_join")
    return md


def _engines() -> tuple[MarkdownIt, MarkdownIt]:
    """The engine notes are read with (within the bracket budget) and the one for the
    paragraphs past it, which reads wikilinks but no markdown links."""
    md = _build_markdown()
    md.core.ruler.at("inline", _inline_rule)
    without_links = _build_markdown()
    without_links.inline.ruler.disable(["link", "image"])
    without_links.inline.ruler.before("wikilink", "bracket_run", _bracket_run_rule)
    return md, without_links


_MD, _MD_WITHOUT_LINKS = _engines()


# --------------------------------------------------------------------------- lines, for others
# Small questions about the markdown of a line or a run of lines, asked by personas, the gap
# fixes and the TUI: they ask here, so that this module stays the one that knows the syntax.

FenceRole = Literal["open", "code", "close"]
_FENCE_OPEN_RE = re.compile(r"(`{3,}|~{3,})")
_ATX_HEADING_RE = re.compile(r" {0,3}#{1,6}(\s|\Z)")
_LONE_EMBED_RE = re.compile(r"\s*(!\[\[[^\]]*\]\]|!\[[^\]]*\]\([^)]*\))\s*\Z")
_MARKUP_START = ("```", "~~~", "%%", "<!--", "^")


@dataclass(frozen=True)
class WikilinkSpan:
    """A wikilink or embed found in a line of text."""

    start: int  # where `[[` (or the `!` of `![[`) starts
    end: int  # just past `]]`
    embed: bool
    ref: LinkRef
    reference: str  # what precedes `|`, trimmed, as written: "Note#Heading"


def _escaped(text: str, at: int) -> bool:
    """Whether the character at `at` follows an odd run of backslashes (markdown's escape)."""
    run = 0
    while at - run - 1 >= 0 and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def _code_spans(line: str) -> list[tuple[int, int]]:
    """Where the inline code spans of a line are: a run of backticks up to the next run of
    the same length (an unmatched run is literal text; an escaped one opens nothing)."""
    spans: list[tuple[int, int]] = []
    runs = TickRuns(line)
    pos = 0
    while (m := _TICKS_RE.search(line, pos)) is not None:
        if _escaped(line, m.start()):
            pos = m.start() + 1
            continue
        close = runs.closing(m.end() - m.start(), m.end())
        if close is None:
            pos = m.end()
        else:
            spans.append((m.start(), close[1]))
            pos = close[1]
    return spans


def _span_holding(spans: list[tuple[int, int]], at: int) -> int | None:
    """The end of the span (sorted, apart) that holds `at`, if any."""
    i = bisect.bisect_right(spans, at, key=lambda span: span[0]) - 1
    return spans[i][1] if i >= 0 and spans[i][0] <= at < spans[i][1] else None


def wikilinks_in(line: str) -> Iterator[WikilinkSpan]:
    """The wikilinks and embeds of one line, by the parser's own rule: `[[` up to the next
    `]]`, with no line break or other `[[` between, neither escaped (`\\[[`) nor in inline
    code. Fenced code is a matter of lines: callers skip it with `fence_roles`."""
    code = _code_spans(line) if "`" in line else []
    closes = NextClose(line)
    pos = line.find("[[")
    while pos >= 0:
        end = closes.after(pos + 2)
        if end < 0:
            return
        in_code = _span_holding(code, pos)
        if in_code is not None:
            pos = line.find("[[", in_code)
            continue
        nested = line.find("[[", pos + 2, end) >= 0
        inner = "" if nested else line[pos + 2 : end]
        ref = None if nested or _escaped(line, pos) else split_link_ref(inner)
        if ref is None:
            pos = line.find("[[", pos + 1)
            continue
        embed = pos > 0 and line[pos - 1] == "!" and not _escaped(line, pos - 1)
        reference = inner.replace("\\|", "|").partition("|")[0].strip()
        yield WikilinkSpan(pos - 1 if embed else pos, end + 2, embed, ref, reference)
        pos = line.find("[[", end + 2)


def fence_roles(lines: Iterable[str]) -> Iterator[FenceRole | None]:
    """Each line's part in a fenced code block: "open" and "close" for the fence lines, "code"
    between them, None outside. A fence is a line of three or more backticks or tildes (at any
    indentation: fences nest in list items); it closes on a line of the same character, at
    least as long, with nothing else on it. An unclosed fence runs to the last line."""
    fence: str | None = None
    for line in lines:
        stripped = line.strip()
        if fence is None:
            m = _FENCE_OPEN_RE.match(stripped)
            # a backtick fence's info string holds no backtick (```a`b` is inline code)
            if m and not (m.group(1)[0] == "`" and "`" in stripped[m.end() :]):
                fence = m.group(1)
                yield "open"
            else:
                yield None
        elif stripped.startswith(fence) and not stripped.strip(fence[0]):
            fence = None
            yield "close"
        else:
            yield "code"


def is_heading_line(line: str) -> bool:
    """Whether the line is an ATX heading (`# Title` .. `###### Title`)."""
    return bool(_ATX_HEADING_RE.match(line))


def paragraphs(
    lines: Sequence[str], first: int = 1, last: int | None = None
) -> Iterator[list[tuple[int, str]] | None]:
    """The paragraphs of lines `first`..`last` (1-based) as lists of (line number, text with
    its end trimmed); None stands for a heading between them. A fenced code block is one
    paragraph, blank lines and all."""
    stop = len(lines) if last is None else min(last, len(lines))
    numbered = range(first, stop + 1)
    current: list[tuple[int, str]] = []
    for number, role in zip(numbered, fence_roles(lines[first - 1 : stop]), strict=True):
        text = lines[number - 1].rstrip()
        if role == "open":
            if current:
                yield current
            current = [(number, text)]
            continue
        if role is not None:  # inside the fence, or closing it
            current.append((number, text))
            if role == "close":  # the line after a fence starts a paragraph of its own
                yield current
                current = []
            continue
        heading = is_heading_line(text)
        if text.strip() and not heading:
            current.append((number, text))
            continue
        if current:
            yield current
            current = []
        if heading:
            yield None
    if current:
        yield current


def opens_with_markup(line: str) -> bool:
    """Whether a line starts a code fence, a comment (`%%`, `<!--`) or a block id line (`^id`):
    markup, not prose."""
    return line.lstrip().startswith(_MARKUP_START)


def is_lone_embed(line: str) -> bool:
    """Whether the line holds nothing but one embed (`![[image.png]]`, `![alt](image.png)`)."""
    return bool(_LONE_EMBED_RE.match(line))


def strip_block_id(text: str) -> str:
    """`text` without a trailing block id (`… ^abc-1`), trimmed."""
    m = _BLOCK_ID_RE.search(text)
    return (text[: m.start()] if m else text).strip()


def linked_name(value: str) -> str:
    """The file a link or a bare name points at, without brackets, anchor or shown text:
    `[[folder/Name#Heading|shown]]` -> `folder/Name`; `Name.md` -> `Name.md`."""
    inner = value.strip().removeprefix("[[").removesuffix("]]")
    ref = split_link_ref(inner)
    return ref.target if ref is not None else ""


# --------------------------------------------------------------------------- front matter


class _YamlReader(_YamlLoader):
    """A safe YAML loader that keeps a value it cannot build (`2026-02-30`, a 5,000-digit
    number) as its text, noting where it was, instead of failing the whole front matter."""

    def __init__(self, stream: str, first_line: int) -> None:
        super().__init__(stream)
        self.first_line = first_line  # the note's line number of the stream's first line
        self.problems: list[str] = []

    def leniently(
        self, node: yaml.Node, construct: Callable[[Any, yaml.Node], Any], what: str
    ) -> Any:
        """`construct`'s value for the node, or the node's text when it cannot be built."""
        try:
            return construct(self, node)
        except (ValueError, TypeError, AttributeError, OverflowError):
            line = node.start_mark.line + self.first_line
            self.problems.append(f"line {line}: '{_clip(node.value)}' is not {what}; kept as text")
            return node.value


for _tag, _what in (
    ("timestamp", "a real date or time"),
    ("int", "a number"),
    ("float", "a number"),
):
    _YamlReader.add_constructor(
        f"tag:yaml.org,2002:{_tag}",
        partial(
            _YamlReader.leniently,
            construct=getattr(SafeConstructor, f"construct_yaml_{_tag}"),
            what=_what,
        ),
    )


def _clip(text: object, size: int = 40) -> str:
    shown = str(text)
    return shown if len(shown) <= size else shown[: size - 1] + "…"


def _read_yaml(raw: str, first_line: int) -> tuple[Any, list[str]]:
    """The YAML document in `raw`, and the values that were kept as text."""
    reader = _YamlReader(raw, first_line)
    try:
        return reader.get_single_data(), reader.problems
    finally:
        reader.dispose()


class _TooMuch(Exception):
    """A property's value is over one of the note's limits; the message says which."""


DEFAULT_LIMITS = FrontMatterLimits()
_SURROGATES_RE = re.compile("[\ud800-\udfff]")
_LIMITS_HINT = "in .vaultmem/config.toml"


class _Normaliser:
    """YAML values to JSON-safe ones (dates as ISO strings, keys as strings), within the
    note's limits: aliases expanded, a note's values and text are counted (a "billion laughs"
    stops at the limit), nesting is bounded and a value containing itself is refused."""

    def __init__(self, limits: FrontMatterLimits) -> None:
        self.limits = limits
        self.values = 0
        self.chars = 0
        self._open: set[int] = set()  # ids of the containers being normalised

    def value(self, value: Any, depth: int = 1) -> JSONValue:
        self.values += 1
        if self.values > self.limits.yaml_values:
            raise _TooMuch(
                f"more than {self.limits.yaml_values:,} values with YAML aliases expanded"
                f" (limits.yaml_values {_LIMITS_HINT})"
            )
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, int) and not isinstance(value, bool):
            self.count_chars(value.bit_length() // 3)  # about its digits, never fewer
            return value
        if value is None or isinstance(value, bool | float):
            return value
        if isinstance(value, dt.datetime | dt.date | dt.time):
            return value.isoformat()
        if not isinstance(value, dict | list | tuple | set | frozenset):
            return self.text(str(value))
        if depth >= self.limits.yaml_depth:
            raise _TooMuch(
                f"nested deeper than {self.limits.yaml_depth} levels"
                f" (limits.yaml_depth {_LIMITS_HINT})"
            )
        if id(value) in self._open:
            raise _TooMuch("a recursive YAML alias (a value that contains itself)")
        self._open.add(id(value))
        try:
            if isinstance(value, dict):
                return {self.text(str(k)): self.value(v, depth + 1) for k, v in value.items()}
            items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
            return [self.value(v, depth + 1) for v in items]
        finally:
            self._open.discard(id(value))

    def count_chars(self, chars: int) -> None:
        self.chars += chars
        if self.chars > self.limits.front_matter_chars:
            raise _TooMuch(
                f"more than {self.limits.front_matter_kb:g} KB of text with YAML aliases"
                f" expanded (limits.front_matter_kb {_LIMITS_HINT})"
            )

    def text(self, text: str) -> str:
        self.count_chars(len(text))
        if not text.isascii() and _SURROGATES_RE.search(text):
            # a lone surrogate (escaped in YAML) cannot be stored as UTF-8
            return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return text


def _properties(
    data: dict[Any, Any], limits: FrontMatterLimits, normaliser: _Normaliser | None = None
) -> tuple[dict[str, JSONValue], list[str]]:
    """A mapping read from YAML as properties within the limits, and what was left out."""
    normaliser = normaliser or _Normaliser(limits)
    kept: dict[str, JSONValue] = {}
    dropped: dict[str, list[str]] = {}  # why -> the properties dropped for it
    warnings: list[str] = []
    for n, (key, value) in enumerate(data.items()):
        if n == limits.properties:
            warnings.append(
                f"front matter has {len(data):,} properties; only the first"
                f" {limits.properties:,} were read (limits.properties {_LIMITS_HINT})"
            )
            break
        try:
            name = normaliser.text(str(key))
            kept[name] = normaliser.value(value)
        except _TooMuch as exc:
            dropped.setdefault(str(exc), []).append(_clip(key))
    for why, keys in dropped.items():
        names = ", ".join(f"'{k}'" for k in keys[:5])
        if len(keys) > 5:
            names += f" and {len(keys) - 5:,} more"
        noun = "property" if len(keys) == 1 else "properties"
        warnings.append(f"front matter {noun} {names} left out: {why}")
    return kept, warnings


def split_front_matter(text: str) -> tuple[str | None, int]:
    """Return the YAML between the opening and closing `---` and the number of lines it spans."""
    if not text.startswith("---"):
        return None, 0
    lines = text.split("\n", 1)
    if not _FM_OPEN_RE.match(lines[0]) or len(lines) < 2:
        return None, 0
    rest = lines[1]
    offset = 0
    count = 1
    for line in rest.split("\n"):
        count += 1
        if _FM_CLOSE_RE.match(line):
            return rest[:offset], count
        offset += len(line) + 1
    return None, 0


def _yaml_error(exc: Exception, first_line: int) -> str:
    if not isinstance(exc, yaml.YAMLError):  # e.g. RecursionError from the pure-Python loader
        return f": {type(exc).__name__}: {_clip(exc, 80)}"
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + first_line}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{where}: {problem}"


def _salvage_yaml(
    raw: str, limits: FrontMatterLimits
) -> tuple[dict[str, JSONValue], list[str], list[str]]:
    """Read broken front matter one top-level property at a time, keeping what parses.

    Returns the properties, the properties that could not be read, and other warnings."""
    entries: list[tuple[int, list[str]]] = []
    for n, line in enumerate(raw.split("\n"), start=2):
        if line and not line[0].isspace() and not line.startswith(("-", "#")) and ":" in line:
            entries.append((n, [line]))
        elif entries:
            entries[-1][1].append(line)
    data: dict[str, JSONValue] = {}
    bad: list[str] = []
    notes: list[str] = []
    normaliser = _Normaliser(limits)
    for first_line, lines in entries:
        if len(data) >= limits.properties:
            notes.append(
                f"front matter has more than {limits.properties:,} properties; only the first"
                f" {limits.properties:,} were read (limits.properties {_LIMITS_HINT})"
            )
            break
        try:
            part, problems = _read_yaml("\n".join(lines), first_line)
        except Exception as exc:  # any error in one property costs only that property
            key = lines[0].split(":", 1)[0].strip()
            bad.append(f"'{_clip(key)}'{_yaml_error(exc, first_line)}")
            continue
        notes.extend(problems)
        if isinstance(part, dict):
            kept, warnings = _properties(part, limits, normaliser)
            data.update(kept)
            notes.extend(warnings)
    return data, bad, notes


def _load_yaml(raw: str, limits: FrontMatterLimits) -> tuple[dict[str, JSONValue], list[str]]:
    """Front matter as normalised properties, and warnings about what could not be read."""
    try:
        data, problems = _read_yaml(raw, 2)
    except Exception as exc:  # nothing in a note may stop its indexing
        salvaged, bad, notes = _salvage_yaml(raw, limits)
        if salvaged:
            return salvaged, [
                f"broken YAML front matter: skipped {'; '.join(bad) or 'part of it'};"
                " the other properties were kept",
                *notes,
            ]
        return {}, [
            f"broken YAML front matter{_yaml_error(exc, 2)}; the note is indexed as text",
            *notes,
        ]
    if data is None:
        return {}, problems
    if not isinstance(data, dict):
        return {}, ["front matter is not a mapping of properties; ignored", *problems]
    kept, warnings = _properties(data, limits)
    return kept, problems + warnings


def _as_strings(value: JSONValue, split: bool) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        out: list[str] = []
        for item in value:
            out.extend(_as_strings(item, split))
        return out
    text = str(value).strip()
    if not text:
        return []
    return [p for p in re.split(r"[,\s]+", text) if p] if split else [text]


# --------------------------------------------------------------------------- comments


def _mask_comments(body: str) -> str:
    """Cut out `%% comments %%`, keeping every line, except inside fenced or inline code.

    The comment's characters are dropped, not blanked: `%% note %% [[X]]` must not leave
    `[[X]]` indented four spaces, which markdown would read as code.
    """
    if "%%" not in body:
        return body
    out: list[str] = []
    fence: str | None = None
    in_comment = False
    for line in body.split("\n"):
        if fence is not None and not in_comment:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            out.append(line)
            continue
        if not in_comment:
            m = _FENCE_RE.match(line)
            if m and "%%" not in line[: m.start(1)]:
                fence = m.group(1)
                out.append(line)
                continue
        chars = list(line)
        runs: TickRuns | None = None  # made at the line's first `%%` outside a comment
        i = 0
        while i < len(line):
            j = line.find("%%", i)
            if in_comment:
                stop = len(line) if j < 0 else j + 2
                chars[i:stop] = [""] * (stop - i)
                if j < 0:
                    break
                in_comment = False
                i = stop
            else:
                if j < 0:
                    break
                if runs is None:
                    runs = TickRuns(line)
                if (after := _code_span_around(line, runs, i, j)) is not None:
                    i = after  # `%%` in inline code is code: "Type `%%` to comment"
                    continue
                in_comment = True
                chars[j : j + 2] = ["", ""]
                i = j + 2
        out.append("".join(chars))
    return "\n".join(out)


def _code_span_around(line: str, runs: TickRuns, start: int, at: int) -> int | None:
    """The end of an inline code span opened in line[start:at] that holds `at`, if any."""
    pos = start
    while (m := _TICKS_RE.search(line, pos, at)) is not None:
        close = runs.closing(m.end() - m.start(), m.end())
        if close is None:
            pos = m.end()  # an unmatched run of backticks is literal text
        elif close[0] > at:
            return close[1]
        else:
            pos = close[1]
    return None


# --------------------------------------------------------------------------- inline scan


@dataclass
class _Line:
    """One source line of an inline token, rebuilt three ways for the scanners."""

    number: int
    raw: list[str]  # text and link markup, code and math replaced: what fields read
    masked: list[str]  # link markup replaced too: what the tag scanner reads
    # raw with code and math as written, offset for offset: what task and field values show
    shown: list[str] = field(default_factory=list)

    def add(self, raw: str, masked: str | None = None, shown: str | None = None) -> None:
        self.raw.append(raw)
        self.masked.append(raw if masked is None else masked)
        self.shown.append(raw if shown is None else shown)


@dataclass
class _PendingLink:
    link: Link
    line: int
    column: int  # offset in the rebuilt raw line, to match inline fields


def _markdown_link(href: str, line: int, display: str, embed: bool) -> Link | None:
    href = href.strip()
    if not href or _SCHEME_RE.match(href):
        return None
    path, _, anchor = href.partition("#")
    target = unquote(path).strip()
    heading = block = None
    anchor = unquote(anchor).strip()
    if anchor.startswith("^"):
        block = anchor[1:] or None
    elif anchor:
        heading = anchor
    if not target and heading is None and block is None:
        return None
    return Link(
        target=target,
        line=line,
        kind="markdown",
        heading=heading,
        block=block,
        display=display.strip() or None,
        embed=embed,
        relation="embeds" if embed else "links_to",
    )


def _scan_inline(children: list[Token], first_line: int) -> tuple[list[_Line], list[_PendingLink]]:
    lines = [_Line(first_line, [], [])]
    links: list[_PendingLink] = []
    open_link: tuple[str, int, int, list[str]] | None = None  # href, line, column, text
    for tok in children:
        cur = lines[-1]
        kind = tok.type
        if kind == "text":
            cur.add(tok.content)
            if open_link is not None:
                open_link[3].append(tok.content)
        elif kind in ("softbreak", "hardbreak"):
            lines.append(_Line(cur.number + 1, [], []))
        elif kind == "wikilink":
            ref: LinkRef = tok.meta["ref"]
            embed: bool = tok.meta["embed"]
            column = sum(len(p) for p in cur.raw)
            link = Link(
                target=ref.target,
                line=cur.number,
                heading=ref.heading,
                block=ref.block,
                display=ref.display,
                embed=embed,
                relation="embeds" if embed else "links_to",
            )
            links.append(_PendingLink(link, cur.number, column))
            cur.add(tok.content, _PLACEHOLDER)
        elif kind == "link_open":
            href = str(tok.attrGet("href") or "")
            open_link = (href, cur.number, sum(len(p) for p in cur.raw), [])
            cur.add("", _PLACEHOLDER)
        elif kind == "link_close":
            if open_link is not None:
                href, line, column, text = open_link
                md_link = _markdown_link(href, line, "".join(text), embed=False)
                if md_link is not None:
                    links.append(_PendingLink(md_link, line, column))
            open_link = None
        elif kind == "image":
            src = str(tok.attrGet("src") or "")
            md_link = _markdown_link(src, cur.number, tok.content, True)
            if md_link is not None:
                links.append(_PendingLink(md_link, cur.number, sum(len(p) for p in cur.raw)))
            # hidden from the scanners; a field or task shows it (near enough: the address
            # as markdown-it normalised it)
            written = f"![{tok.content}]({src})".replace("\n", " ")
            cur.add(_PLACEHOLDER * len(written), shown=written)
            for _ in range(tok.content.count("\n")):  # alt text over several lines
                lines.append(_Line(lines[-1].number + 1, [], []))
        elif kind == "footnote_ref":  # keep `[^1]` in task and field text, but never a tag
            cur.add(f"[^{tok.meta['label']}]", _PLACEHOLDER)
        elif kind == "text_special":  # an escape such as \# or an entity
            cur.add(tok.content, _PLACEHOLDER)
        elif kind in ("code_inline", "math_inline", "math_inline_double", "html_inline"):
            # hidden from the scanners, but a task or field value shows it (`make test`)
            written = _written_inline(tok).replace("\n", " ")
            cur.add(_PLACEHOLDER * len(written), shown=written)
            newlines = tok.meta.get("newlines", tok.content.count("\n"))
            for _ in range(newlines):
                lines.append(_Line(lines[-1].number + 1, [], []))
        # emphasis and strikethrough open/close tokens carry no text
    return lines, links


def _written_inline(tok: Token) -> str:
    """Inline code, math or HTML as written (near enough: code's padding spaces are lost)."""
    if tok.type == "html_inline":
        return tok.content
    pad = " " if tok.content.startswith("`") or tok.content.endswith("`") else ""
    return f"{tok.markup}{pad}{tok.content}{pad}{tok.markup}"


def _tags_in(text: str) -> Iterable[str]:
    for m in _TAG_RE.finditer(text):
        tag = m.group(1).rstrip("/")
        if tag and not tag.replace("/", "").isdigit() and not tag.startswith("/"):
            yield tag


def _fields_in(line: str, shown: str) -> list[tuple[str, str, int, int]]:
    """(key, value, value_start, value_end) for every inline field on a rebuilt line.

    Fields are found in `line` (code masked) and their values read from `shown` (code kept).
    """
    matches = [m for regex in (_BRACKET_FIELD_RE, _PAREN_FIELD_RE) for m in regex.finditer(line)]
    if not matches:
        full = _FULL_FIELD_RE.match(line)
        if full and not line.lstrip().startswith(("[", "(")):
            matches = [full]
    return [
        (m.group(1).strip(), shown[m.start(2) : m.end(2)].strip(), m.start(2), m.end(2))
        for m in matches
    ]


# --------------------------------------------------------------------------- the note


@dataclass
class _Collected:
    tags: list[str]
    links: list[Link]
    fields: list[Field]
    tasks: list[Task]
    blocks: list[BlockId]


def _task_from(
    status: str, text: str, shown: str, line: int, fields: list[tuple[str, str]]
) -> Task:
    """A task from its text with code masked (`text`, searched for emoji) and as written."""
    values = {k.lower(): v for k, v in fields}
    due = values.get("due")
    if due is None and (m := _DUE_EMOJI_RE.search(text)):
        due = m.group(1)
    done = values.get("completion")
    if done is None and (m := _DONE_EMOJI_RE.search(text)):
        done = m.group(1)
    priority = values.get("priority")
    if priority is None:
        priority = next((p for emoji, p in _PRIORITY_EMOJI.items() if emoji in text), None)
    return Task(line=line, status=status, text=shown.strip(), due=due, priority=priority, done=done)


def _walk_body(tokens: list[Token], out: _Collected) -> list[tuple[int, int, str]]:
    """Collect links, tags, fields, tasks and block ids; return (level, line, text) headings."""
    headings: list[tuple[int, int, str]] = []
    pending_heading: tuple[int, int] | None = None
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            assert tok.map is not None
            pending_heading = (int(tok.tag[1:]), tok.map[0] + 1)
            continue
        if tok.type != "inline" or tok.map is None:
            continue
        is_heading = pending_heading is not None
        lines, pending = _scan_inline(tok.children or [], tok.map[0] + 1)
        if pending_heading is not None:
            headings.append((pending_heading[0], pending_heading[1], tok.content.strip()))
            pending_heading = None
        in_list_item = i >= 2 and tokens[i - 2].type == "list_item_open"

        field_spans: list[tuple[int, int, int, str]] = []  # line, start, end, key
        for line in lines:
            masked = "".join(line.masked)
            for tag in _tags_in(masked):
                out.tags.append(tag)
            if is_heading:
                continue
            raw = "".join(line.raw)
            for key, value, start, end in _fields_in(raw, "".join(line.shown)):
                out.fields.append(Field(key=key, value=value, line=line.number))
                field_spans.append((line.number, start, end, key))
        for p in pending:
            relation = p.link.relation
            for number, start, end, key in field_spans:
                if number == p.line and start <= p.column < end:
                    relation = key
                    break
            if relation != p.link.relation:
                out.links.append(
                    Link(**{**p.link.__dict__, "relation": relation})  # typed link
                )
            else:
                out.links.append(p.link)
        if is_heading:
            continue
        last = "".join(lines[-1].raw)
        if m := _BLOCK_ID_RE.search(last):
            out.blocks.append(BlockId(m.group(1), lines[-1].number))
        if in_list_item:
            first, shown = "".join(lines[0].raw), "".join(lines[0].shown)
            if m := _TASK_RE.match(first):
                task_fields = [(k, v) for k, v, _, _ in _fields_in(first, shown)]
                text, shown_text = m.group(2), shown[m.start(2) :]
                out.tasks.append(
                    _task_from(m.group(1), text, shown_text, lines[0].number, task_fields)
                )
    return headings


def _key_lines(fm_lines: list[str]) -> dict[str, int]:
    """Where each top-level property may start: key -> 0-based line, in one pass.

    A line `key:`, `"key":` or `'key' :` at the start of a line names `key` (the first line
    wins); only a line's first few colons are tried, so a long line costs little."""
    found: dict[str, int] = {}
    for n, line in enumerate(fm_lines):
        if not line or line[0].isspace():
            continue
        cut = -1
        for _ in range(8):
            cut = line.find(":", cut + 1)
            if cut < 0:
                break
            key = line[:cut].rstrip()
            found.setdefault(key, n)
            # a quoted key, quotes alike at both ends (`"a: b":` is cut at its first colon
            # too: that `"a` names no property `a`)
            if len(key) > 1 and key[0] == key[-1] and key[0] in ("'", '"'):
                found.setdefault(key[1:-1], n)
    return found


def _front_matter_links(fm: dict[str, JSONValue], fm_lines: list[str]) -> list[Link]:
    links: list[Link] = []
    key_lines = _key_lines(fm_lines)
    starts = sorted(set(key_lines.values()))
    for key, value in fm.items():
        if key.lower() in _LIST_KEYS:
            continue
        at = key_lines.get(key, 0)
        # the property's lines: up to where the next property starts
        after = bisect.bisect_right(starts, at)
        end = starts[after] if key in key_lines and after < len(starts) else len(fm_lines)
        for text in _as_strings(value, split=False):
            for m in _WIKILINK_IN_TEXT_RE.finditer(text):
                ref = split_link_ref(m.group(2))
                if ref is None:
                    continue
                # the line holding this very link (list items sit below their key)
                at = next((n for n in range(at, end) if m.group(0) in fm_lines[n]), at)
                links.append(
                    Link(
                        target=ref.target,
                        line=at + 2,
                        kind="property",
                        heading=ref.heading,
                        block=ref.block,
                        display=ref.display,
                        embed=bool(m.group(1)),
                        relation=key,
                    )
                )
    return links


def _front_matter_fields(fm: dict[str, JSONValue], fm_lines: list[str]) -> list[Field]:
    fields: list[Field] = []
    key_lines = _key_lines(fm_lines)
    for key, value in fm.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        fields.append(Field(key, shown, key_lines.get(key, 0) + 2, source="property"))
    return fields


def _headings_with_ranges(found: list[tuple[int, int, str]], last_line: int) -> tuple[Heading, ...]:
    """Each heading with the line its section ends on: before the next heading of its level
    or higher, else at `last_line`. One pass with a stack of the sections still open."""
    ends = [last_line] * len(found)
    open_sections: list[int] = []  # indexes into `found`, levels rising
    for i, (level, line, _) in enumerate(found):
        while open_sections and found[open_sections[-1]][0] >= level:
            ends[open_sections.pop()] = line - 1
        open_sections.append(i)
    return tuple(
        Heading(level=level, text=text, line=line, end_line=max(line, end))
        for (level, line, text), end in zip(found, ends, strict=True)
    )


def _split_long(lines: list[str], first: int) -> list[tuple[int, int, str]]:
    """Split a section's lines into windows of at most CHUNK_MAX_CHARS, overlapping a little."""
    windows: list[tuple[int, int, str]] = []
    start = 0
    n = len(lines)
    while start < n:
        size = 0
        end = start
        while end < n and (end == start or size + len(lines[end]) + 1 <= CHUNK_MAX_CHARS):
            size += len(lines[end]) + 1
            end += 1
        windows.append((first + start, first + end - 1, "\n".join(lines[start:end])))
        if end >= n:
            break
        back = end
        overlap = 0
        while back - 1 > start and overlap + len(lines[back - 1]) + 1 <= CHUNK_OVERLAP_CHARS:
            back -= 1
            overlap += len(lines[back]) + 1
        start = back
    return windows


def _chunks(
    body_lines: list[str], first_body_line: int, headings: tuple[Heading, ...]
) -> tuple[Chunk, ...]:
    """One chunk per heading section (long ones split), each with its heading path."""
    bounds: list[tuple[int, tuple[str, ...]]] = [(first_body_line, ())]
    stack: list[Heading] = []
    for h in headings:
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
        bounds.append((h.line, tuple(s.text for s in stack)))
    chunks: list[Chunk] = []
    total = len(body_lines)
    for i, (start, path) in enumerate(bounds):
        end = bounds[i + 1][0] - 1 if i + 1 < len(bounds) else total
        section = body_lines[start - 1 : end]
        while section and not section[-1].strip():
            section.pop()
        if not "".join(section).strip():
            continue
        if sum(len(s) + 1 for s in section) <= CHUNK_MAX_CHARS:
            windows = [(start, start + len(section) - 1, "\n".join(section))]
        else:
            windows = _split_long(section, start)
        for s, e, text in windows:
            chunks.append(Chunk(len(chunks), path, s, e, text.strip("\n")))
    if not chunks:
        line = max(1, min(first_body_line, total))
        chunks.append(Chunk(0, (), line, line, ""))
    return tuple(chunks)


def _dedupe_tags(tags: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for tag in tags:
        tag = unicodedata.normalize("NFC", tag.lstrip("#").strip())
        if tag and tag.lower() not in seen:
            seen[tag.lower()] = tag
    return tuple(seen.values())


def parse_note(text: str, path: str, limits: FrontMatterLimits = DEFAULT_LIMITS) -> ParsedNote:
    """Parse one note's text; `path` is vault-relative with forward slashes. Front matter
    over `limits` is cut (or, when too large to read, indexed as text) with a warning."""
    warnings: list[str] = []
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        # replaced, not dropped: a last line of NULs alone would vanish and the note's lines
        # would no longer be the file's
        text = text.replace("\x00", "\ufffd")
        warnings.append("NUL bytes replaced by U+FFFD")
    all_lines = text.split("\n")
    if all_lines and all_lines[-1] == "":
        all_lines.pop()
    line_count = len(all_lines)

    raw_fm, fm_line_count = split_front_matter(text)
    fm: dict[str, JSONValue] = {}
    fm_lines: list[str] = []
    text_start = fm_line_count  # lines before this are not searchable text
    if raw_fm is not None and len(raw_fm) > limits.front_matter_chars:
        warnings.append(
            f"front matter larger than {limits.front_matter_kb:g} KB"
            f" (limits.front_matter_kb {_LIMITS_HINT}); indexed as text, not read as properties"
        )
        text_start = 0
    elif raw_fm is not None:
        fm, problems = _load_yaml(raw_fm, limits)
        fm_lines = raw_fm.split("\n")
        warnings.extend(problems)
        if problems and not fm:
            text_start = 0  # unreadable front matter stays searchable as text
    # ...but never markdown: Obsidian shows the block as (invalid) properties, so no heading,
    # link or tag comes from it (`key: x` over the closing `---` would read as a heading).
    body_lines = ["" if n < fm_line_count else line for n, line in enumerate(all_lines)]
    body = _mask_comments("\n".join(body_lines))
    body_lines = body.split("\n")
    text_lines = body_lines
    if not text_start:
        text_lines = all_lines[:fm_line_count] + body_lines[fm_line_count:]

    collected = _Collected([], [], [], [], [])
    env: dict[str, Any] = {}
    heading_data = _walk_body(_MD.parse(body, env), collected)
    if flood := env.get("bracket_flood_lines"):
        where = ", ".join(map(str, flood[:5])) + (", …" if len(flood) > 5 else "")
        warnings.append(
            f"more than {MAX_LINK_BRACKETS:,} `[` in the note: markdown links [text](target)"
            f" in the paragraph{'s' * (len(flood) > 1)} at line{'s' * (len(flood) > 1)}"
            f" {where} are not read (wikilinks are)"
        )
    headings = _headings_with_ranges(heading_data, max(line_count, 1))

    fm_links = _front_matter_links(fm, fm_lines) if fm else []
    fm_fields = _front_matter_fields(fm, fm_lines) if fm else []
    aliases = tuple(
        dict.fromkeys(_as_strings(fm.get("aliases"), False) + _as_strings(fm.get("alias"), False))
    )
    fm_tags = _as_strings(fm.get("tags"), True) + _as_strings(fm.get("tag"), True)

    return ParsedNote(
        path=path,
        title=PurePosixPath(path).name.removesuffix(".md"),
        aliases=aliases,
        tags=_dedupe_tags([*fm_tags, *collected.tags]),
        frontmatter=fm,
        headings=headings,
        blocks=tuple(collected.blocks),
        links=tuple(fm_links + collected.links),
        tasks=tuple(collected.tasks),
        fields=tuple(fm_fields + collected.fields),
        chunks=_chunks(text_lines, text_start + 1, headings),
        warnings=tuple(warnings),
        line_count=line_count,
    )


def plain_note(text: str, path: str, warning: str) -> ParsedNote:
    """A note as bare text: no properties, links or tags, only its lines as searchable chunks.

    What a note becomes when `parse_note` fails on it, so that one note the parser cannot
    handle is still found by search and reported by `doctor` instead of stopping a reindex."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.replace("\x00", "\ufffd").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return ParsedNote(
        path=path,
        title=PurePosixPath(path).name.removesuffix(".md"),
        chunks=_chunks(lines, 1, ()),
        warnings=(warning,),
        line_count=len(lines),
    )
