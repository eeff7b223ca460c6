"""Conformance with obsdconv's scanner and converter tests (qawatake/obsdconv, MIT).

unit_cases/*.json hold obsdconv's Go case tables. Each case's input is parsed with parse_note:
- tag and internal-link scanner cases: the tags and links found must be the ones obsdconv finds;
- span scanners (inline/block math, inline code, code fences, `%%` and HTML comments): obsdconv
  says whether a span starts at `ptr` and how long it is (0: none). Their inputs hold only a
  placeholder such as `x` or `#todo`, so the first placeholder at or after `ptr` is replaced by
  a wikilink probe (`$x$` -> `$[[x]]$`): the probe must be hidden exactly when obsdconv's span
  covers it, visible otherwise;
- converter cases: which tags it finds, which links it rewrites to which file, what a comment
  eraser keeps; testdata/convertbody/src.md against its converted outputs.
Helper predicates with no observable in a parsed note (external-link sub-scanners, run/rune
utilities, anchor slug styles) are not transcribed; docs/CONFORMANCE.md lists them.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any
from urllib.parse import unquote

import pytest

from tests.conformance.edgecase_data import EDGECASES, case_id, cases, load_json
from vaultmem.parser import parse_note, split_link_ref
from vaultmem.resolver import FileSet, heading_key

# every case reads the shared data: skip them all, saying why, when it is absent
pytestmark = pytest.mark.usefixtures("edgecases")

SUITE = EDGECASES / "obsdconv"
SCAN = SUITE / "unit_cases" / "scan_scan_test.go.json"
CONVERT = SUITE / "unit_cases" / "convert_convert_test.go.json"
CONVERTBODY = SUITE / "testdata" / "convertbody"

# obsdconv's choices (or quirks) where vaultmem follows Obsidian / CommonMark instead
EMPTY_LINK = (
    "obsdconv scans `[[ ]]` (only white space) as an internal link with empty content, which its "
    "converter then deletes; vaultmem records no link, since it names no note, heading or block"
)
MATH_NEWLINE = (
    "obsdconv only rejects a space or tab before the closing `$`, so `$x⏎$` is math to it; "
    "Obsidian takes `$...$` as math only with no white space before the closing `$`, and a line "
    "break is white space (vaultmem: pandoc's rule)"
)
UNCLOSED_MATH = (
    "obsdconv lets an unclosed `$$` run to the end of the note when its line ends in a newline "
    "(but not without one: see 'no closing and ended with other than \\n'); vaultmem, like "
    "markdown-it's dollarmath, needs the closing `$$`. Obsidian's own rule for an unclosed `$$` "
    "is not pinned down by the vault contract"
)
ESCAPED_COMMENT = (
    "obsdconv honours a backslash before `%%` (`\\%%x%%` opens no comment, so the trailing `%%` "
    "opens one); vaultmem treats every `%%` outside code as a comment delimiter. Obsidian's "
    "handling of `\\%%` is not pinned down by the vault contract"
)
UNDEFINED_REFERENCE = (
    "obsdconv treats `[text][label]` as a reference link even when `label` is never defined, so "
    "it skips `#not_tag` in the label; in CommonMark (and Obsidian) an undefined reference is "
    "plain text, where `#not_tag` after a space is a tag"
)
OBSIDIAN_URI = (
    "obsdconv rewrites `obsidian://open?...&file=test` URIs into links to test.md; Obsidian's "
    "link graph does not count obsidian:// URIs (they open through the URI handler), nor does "
    "vaultmem"
)
ANCHOR_SLUG = (
    "the anchor is obsdconv's Hugo-style slug of the heading (emoji and brackets dropped), an "
    "output format; vaultmem keeps the heading as written (`😗Obsidian (オブシディアン)`) and "
    "matches headings ignoring case and punctuation only"
)

# The placeholder contents of the span scanners' inputs, and the probe that replaces them.
_PLACEHOLDER_RE = re.compile(r"#todo|f\(x\)=x|\bcomment\b|(?<![\w\\])x(?!\w)")


def _probe(raw: str, start: int = 0) -> tuple[str, int] | None:
    """`raw` with its first placeholder at or after `start` made a wikilink, and its offset."""
    m = _PLACEHOLDER_RE.search(raw, start)
    if m is None:
        return None
    inner = "todo" if m.group(0) == "#todo" else m.group(0)
    return raw[: m.start()] + f"[[{inner}]]" + raw[m.end() :], m.start()


def _groups(path: Any) -> dict[str, list[dict[str, Any]]]:
    return {t["go_test"]: t["cases"] for t in load_json(path)}


def _id(go_test: str, case: dict[str, Any]) -> str:
    """The case's name, else its input spelled out: `ScanTag-bs#todo` for `\\#todo`."""
    if case.get("name"):
        return case_id(go_test.removeprefix("Test"), case["name"])
    shown = str(case["raw"])
    for char, word in (("\\", "bs"), ("\n", "NL"), ("\t", "TAB"), (" ", "SP")):
        shown = shown.replace(char, word)
    return case_id(go_test.removeprefix("Test"), shown)


# --------------------------------------------------------------------------- tags


def _tag_cases() -> list[Any]:
    return [
        pytest.param(c["raw"], [c["wantTag"]] if c["wantTag"] else [], id=_id("TestScanTag", c))
        for c in _groups(SCAN)["TestScanTag"]
    ]


@cases(("raw", "expected"), SCAN, _tag_cases)
def test_scan_tag(raw: str, expected: list[str]) -> None:
    """`#todo`, `#_todo`, `#book/comic` are tags; `# todo`, `##todo`, `x#todo`, `\\#todo` not."""
    assert list(parse_note(raw + "\n", "a.md").tags) == expected


def _tag_finder_cases() -> list[Any]:
    return [
        pytest.param(
            c["raw"],
            c["wantTags"],
            id=_id("TestTagFinder", c),
            marks=pytest.mark.xfail(reason=UNDEFINED_REFERENCE, strict=True)
            if "var external link" in c["name"] and "def of" not in c["name"]
            else (),
        )
        for c in _groups(CONVERT)["TestTagFinder"]
    ]


@cases(("raw", "expected"), CONVERT, _tag_finder_cases)
def test_tag_finder(raw: str, expected: list[str]) -> None:
    """Tags in headings and link texts count; escaped, `##`, link titles, definitions do not."""
    assert list(parse_note(raw + "\n", "a.md").tags) == expected


# --------------------------------------------------------------------------- internal links


def _internal_link_cases() -> list[Any]:
    out = []
    for c in _groups(SCAN)["TestScanInternalLink"]:
        found = c["wantAdvance"] > 0
        marks = (
            pytest.mark.xfail(reason=EMPTY_LINK, strict=True)
            if (found and not c["wantContent"].strip())
            else ()
        )
        out.append(
            pytest.param(
                c["raw"], found, c["wantContent"], id=_id("TestScanInternalLink", c), marks=marks
            )
        )
    return out


@cases(("raw", "found", "content"), SCAN, _internal_link_cases)
def test_scan_internal_link(raw: str, found: bool, content: str) -> None:
    """`[[ #todo ]]` is a same-note link (and no tag); `[[]]`, `[[x⏎]]`, `\\[[x]]` are no links."""
    note = parse_note(raw + "\n", "a.md")
    if not found:
        assert note.links == ()
        return
    ref = split_link_ref(content)
    assert ref is not None, f"vaultmem reads no link in {content!r}"
    assert [(lk.target, lk.heading, lk.block, lk.display) for lk in note.links] == [
        (ref.target, ref.heading, ref.block, ref.display)
    ]
    assert note.tags == ()


# --------------------------------------------------------------------------- spans

_SPAN_GROUPS = (
    "TestScanInlineMath",
    "TestScanInlineCode",
    "TestScanComment",
    "TestScanMathBlock",
    "TestScanInlineCodeBlock",
    "TestScanMultilineCodeBlock",
    "TestScanNormalComment",
)
# No span starts at `ptr`, yet another obsdconv scanner covers the probe further on:
# `\$$x$$` and `$$x\$$` hold the inline math `$x$` / `$x\$$` (TestScanInlineMath "simple",
# "include escaped $").
_COVERED_FURTHER_ON = {
    ("TestScanMathBlock", "escaped opening"),
    ("TestScanMathBlock", "escaped closing"),
}
_SPAN_XFAIL = {
    ("TestScanInlineMath", "preceded \\n"): MATH_NEWLINE,
    ("TestScanComment", "escaped opening"): ESCAPED_COMMENT,
    ("TestScanMathBlock", "no closing but ended with \\n"): UNCLOSED_MATH,
}


def _span_cases() -> list[Any]:
    groups = _groups(SCAN)
    out = []
    for go_test in _SPAN_GROUPS:
        for c in groups[go_test]:
            ptr = c.get("ptr", 0)
            length = c["want"] if "want" in c else c["wantAdvance"]
            probe = _probe(c["raw"], ptr)
            text, hidden = c["raw"], True  # no placeholder: nothing may be found at all
            if probe is not None:
                text, at = probe
                hidden = ptr <= at < ptr + length or (go_test, c["name"]) in _COVERED_FURTHER_ON
            reason = _SPAN_XFAIL.get((go_test, c["name"]))
            marks = pytest.mark.xfail(reason=reason, strict=True) if reason else ()
            out.append(pytest.param(c["raw"], text, hidden, id=_id(go_test, c), marks=marks))
    return out


@cases(("raw", "text", "hidden"), SCAN, _span_cases)
def test_scan_span(raw: str, text: str, hidden: bool) -> None:
    """Math, code and comments hide what they hold; broken or escaped ones hide nothing."""
    note = parse_note(text + "\n", "a.md")
    assert (note.links == () and note.tags == ()) is hidden, (raw, text, note.links)


def _comment_eraser_cases() -> list[Any]:
    out = []
    for c in _groups(CONVERT)["TestCommentEraser"]:
        probe = _probe(c["raw"])
        assert probe is not None
        kept = "x" in c["want"]  # the comment's content survives the eraser
        reason = ESCAPED_COMMENT if c["name"] == "escaped opening" else None
        marks = pytest.mark.xfail(reason=reason, strict=True) if reason else ()
        out.append(pytest.param(probe[0], kept, id=_id("TestCommentEraser", c), marks=marks))
    return out


@cases(("text", "kept"), CONVERT, _comment_eraser_cases)
def test_comment_eraser(text: str, kept: bool) -> None:
    """`%%...%%` comments (long brackets, unclosed to the end) hold no links."""
    assert bool(parse_note(text + "\n", "a.md").links) is kept


# --------------------------------------------------------------------------- link converter

_FILES = FileSet(["main.md", "test.md", "image.png", "テスト.md"])
_MD_LINK_RE = re.compile(r"^(!?)\[(.*)\]\((.*)\)$")


def _converter_cases() -> list[Any]:
    out = []
    for c in _groups(CONVERT)["TestLinkConverter"]:
        marks: Any = ()
        if not c["want"]:
            marks = pytest.mark.xfail(reason=EMPTY_LINK, strict=True)
        elif "obsidian://" in c["raw"]:
            marks = pytest.mark.xfail(reason=OBSIDIAN_URI, strict=True)
        elif "non-ascii" in c["name"] and "hugo" in c["name"]:
            # (the markdown-it-anchor slug only lowercases and hyphenates: it compares equal)
            marks = pytest.mark.xfail(reason=ANCHOR_SLUG, strict=True)
        out.append(pytest.param(c["raw"], c["want"], id=_id("TestLinkConverter", c), marks=marks))
    return out


@cases(("raw", "want"), CONVERT, _converter_cases)
def test_link_converter(raw: str, want: str) -> None:
    """A link obsdconv rewrites to `[text](file#anchor)` resolves to that file and anchor."""
    links = parse_note(raw + "\n", "main.md").links
    if not want:  # obsdconv read a link with empty content, and deleted it
        assert [(lk.target, lk.heading, lk.block) for lk in links] == [("", None, None)]
        return
    m = _MD_LINK_RE.match(want)
    if m is None or re.match(r"^[a-z]+://", m.group(3)):  # kept literal, or an external URL
        assert links == ()
        return
    embed, text, href = m.group(1) == "!", m.group(2), m.group(3)
    path, _, anchor = href.partition("#")
    assert len(links) == 1
    lk = links[0]
    assert lk.embed is embed
    assert _FILES.resolve("main.md", lk.target).path == (unquote(path) or "main.md")
    last = (lk.heading or "").split("#")[-1]
    assert heading_key(last) == heading_key(unquote(anchor))
    if "|" in raw:  # a label is the shown text
        assert lk.display == text


# --------------------------------------------------------------------------- convertbody


def test_convertbody_tags() -> None:
    """src.md's tags are exactly those obsdconv removes (none from code, math or comments)."""
    src = (CONVERTBODY / "src.md").read_text(encoding="utf-8")
    removed = (CONVERTBODY / "rmtag_title_cptag" / "want.md").read_text(encoding="utf-8")
    tag_re = re.compile(r"#[\w/-]+")
    expected = Counter(tag_re.findall(src)) - Counter(tag_re.findall(removed))
    assert sorted(parse_note(src, "src.md").tags) == sorted(t[1:] for t in expected)


def _convertbody_link_cases() -> list[Any]:
    item_re = re.compile(r"^- ([^:]+): (.*\[.*)$")  # "- with alt: ![[ image.png | ALT TEXT ]]"
    src = (CONVERTBODY / "src.md").read_text(encoding="utf-8").split("\n")
    want = (CONVERTBODY / "rmtag_title_cptag_cmmt_link" / "want.md").read_text(encoding="utf-8")
    before = [(n, m) for n, s in enumerate(src, start=1) if (m := item_re.match(s))]
    after = [m for s in want.split("\n") if (m := item_re.match(s))]
    out = []
    # the link items, in the same order on both sides (the erased comment shifts the lines)
    for (n, b), a in zip(before, after, strict=True):
        assert b.group(1) == a.group(1)
        marks = (
            pytest.mark.xfail(reason=OBSIDIAN_URI, strict=True)
            if "obsidian://" in b.group(2)
            else ()
        )
        out.append(pytest.param(n, b.group(2), a.group(2), id=case_id(n, b.group(1)), marks=marks))
    return out


@cases(("line", "written", "want"), CONVERTBODY, _convertbody_link_cases)
def test_convertbody_link(line: int, written: str, want: str) -> None:
    """Each link of src.md (`[[ test | DISPLAY NAME ]]`, `![[ image.png | ALT TEXT ]]`, ...)."""
    src = (CONVERTBODY / "src.md").read_text(encoding="utf-8")
    links = [lk for lk in parse_note(src, "main.md").links if lk.line == line]
    m = _MD_LINK_RE.match(want)
    assert m is not None
    embed, text, href = m.group(1) == "!", m.group(2), m.group(3)
    path, _, anchor = href.partition("#")
    assert len(links) == 1, (written, links)
    lk = links[0]
    assert lk.embed is embed
    assert _FILES.resolve("main.md", lk.target).path == unquote(path)
    assert heading_key((lk.heading or "").split("#")[-1]) == heading_key(anchor)
    if "|" in written:
        assert lk.display == text


# --------------------------------------------------------------------------- run/std_baseUrl

RUN = SUITE / "testdata" / "run" / "std_baseUrl"
_BASE_URL = "https://example.com/"


def _sections(path: Any) -> dict[tuple[str, str], tuple[int, str]]:
    """(### heading, #### heading) -> (line, first line of text) under `## Links` / `### Embeds`."""
    out: dict[tuple[str, str], tuple[int, str]] = {}
    h3 = h4 = ""
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if line.startswith("### "):
            h3, h4 = line[4:], ""
        elif line.startswith("#### "):
            h4 = line[5:]
        elif line.strip() and h3 in ("Internal Link", "External Link", "Embeds"):
            out.setdefault((h3, h4), (n, line))
    return out


def _std_base_url_cases() -> list[Any]:
    src = _sections(RUN / "src" / "main.md")
    dst = _sections(RUN / "dst" / "main.md")
    assert src.keys() == dst.keys()
    out = []
    for key, (line, written) in src.items():
        marks = (
            pytest.mark.xfail(reason=OBSIDIAN_URI, strict=True) if "obsidian://" in written else ()
        )
        out.append(pytest.param(line, written, dst[key][1], id=case_id(*key), marks=marks))
    return out


@cases(("line", "written", "converted"), RUN, _std_base_url_cases)
def test_run_std_base_url(line: int, written: str, converted: str) -> None:
    """Each link of run/std_baseUrl points where obsdconv's URL for it points (its dst/)."""
    root = RUN / "src"
    files = FileSet(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    note = parse_note((root / "main.md").read_text(encoding="utf-8"), "main.md")
    links = [lk for lk in note.links if lk.line == line]
    hrefs = re.findall(r"\]\((\S+?)\)", converted)
    if not hrefs or not hrefs[0].startswith(_BASE_URL):  # an external link stays external
        assert links == []
        return
    path, _, anchor = unquote(hrefs[0].removeprefix(_BASE_URL)).partition("#")
    expected = path + ".md" if path + ".md" in files else path
    assert len(links) == 1, (written, note.links)
    assert files.resolve("main.md", links[0].target).path == expected
    assert heading_key((links[0].heading or "").split("#")[-1]) == heading_key(anchor)
