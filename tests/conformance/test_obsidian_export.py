"""Conformance with obsidian-export's test suite (zoni/obsidian-export, BSD-2-Clause-Patent).

Three sources, all under ../shared/data/edgecases/obsidian-export:
- lookup_filename_cases.json: link target -> vault file (case, extension, Unicode NFC/NFD);
- reference_parse_cases.json: how `[[file#section|label]]` splits, and the shown text;
- testdata/input/<suite>/: sample vaults, indexed here into a temporary index, whose expected
  export (testdata/expected/) says which file and anchor every link resolves to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conformance.edgecase_data import EDGECASES, case_id, cases, load_json
from vaultmem.parser import parse_note, split_link_ref
from vaultmem.resolver import FileSet
from vaultmem.vault import OutLink, Vault

# every case reads the shared data: skip them all, saying why, when it is absent
pytestmark = pytest.mark.usefixtures("edgecases")

SUITE = EDGECASES / "obsidian-export"
INPUT = SUITE / "testdata" / "input"

Indexed = Callable[[str], Vault]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Indexed]:
    """Index one input suite (read-only) into a temporary index, once per module."""
    vaults: dict[str, Vault] = {}

    def get(suite: str) -> Vault:
        if suite not in vaults:
            root = INPUT / suite
            if not root.is_dir():
                pytest.skip(f"{root} is absent: the shared test data is needed")
            vault = Vault(root, tmp_path_factory.mktemp(suite) / "i.db")
            vault.reindex()
            vaults[suite] = vault
        return vaults[suite]

    yield get
    for vault in vaults.values():
        vault.close()


def links(vault: Vault, path: str) -> tuple[OutLink, ...]:
    return vault.show(path).links


# --------------------------------------------------------------------------- lookup_filename


def _lookup_cases() -> list[object]:
    table = load_json(SUITE / "lookup_filename_cases.json")
    return [
        pytest.param(
            table["vault_files"],
            c["link_target"],
            c["expected_file"],
            id=case_id(f"{n:02d}", c["note"]),
        )
        for n, c in enumerate(table["cases"], start=1)
    ]


@cases(("vault_files", "target", "expected"), SUITE / "lookup_filename_cases.json", _lookup_cases)
def test_lookup_filename(vault_files: list[str], target: str, expected: str) -> None:
    """A target names its file with or without `.md`, in any case, in NFC or NFD."""
    assert FileSet(vault_files).resolve("Index.md", target).path == expected


# --------------------------------------------------------------------------- references


def _parse_cases() -> list[object]:
    table = load_json(SUITE / "reference_parse_cases.json")["parse_cases"]["cases"]
    return [pytest.param(c, id=case_id(c["inner"])) for c in table]


@cases("case", SUITE / "reference_parse_cases.json", _parse_cases)
def test_reference_parse(case: dict[str, str | None]) -> None:
    """`[[file#section|label]]` splits into target, heading and shown text."""
    ref = split_link_ref(case["inner"] or "")
    assert ref is not None
    assert (ref.target or None, ref.heading, ref.display) == (
        case["file"],
        case["section"],
        case["label"],
    )
    # The same split when the reference sits in a note.
    (link,) = parse_note(f"See [[{case['inner']}]].\n", "Source.md").links
    assert (link.target or None, link.heading, link.display) == (
        case["file"],
        case["section"],
        case["label"],
    )


_RENDERED = (
    "vaultmem keeps no rendered link text: display is None when the link shows its target "
    "(Obsidian's reading view renders '{shown}'; front-ends derive it)"
)


def _display_cases() -> list[object]:
    table = load_json(SUITE / "reference_parse_cases.json")["display_cases"]["cases"]
    out = []
    for c in table:
        inner = (c["file"] or "") + (f"#{c['section']}" if c["section"] else "")
        inner += f"|{c['label']}" if c["label"] else ""
        marks = (
            ()
            if c["label"]
            else pytest.mark.xfail(reason=_RENDERED.format(shown=c["display"]), strict=True)
        )
        out.append(pytest.param(inner, c["display"], id=case_id(inner), marks=marks))
    return out


@cases(("inner", "shown"), SUITE / "reference_parse_cases.json", _display_cases)
def test_reference_display(inner: str, shown: str) -> None:
    """The text a link shows: its label when it has one."""
    (link,) = parse_note(f"[[{inner}]]\n", "Source.md").links
    assert link.display == shown


# --------------------------------------------------------------------------- main-samples


@dataclass(frozen=True)
class Expected:
    """One link of a main-samples note as written, and what it must parse and resolve to."""

    note: str
    written: str
    target: str
    dst: str | None  # the file it resolves to; None for a wanted note
    heading: str | None = None
    block: str | None = None
    display: str | None = None
    anchor_ok: bool | None = None  # heading/block found in dst (None: the link has no anchor)

    @property
    def embed(self) -> bool:
        return self.written.lstrip("> ").startswith("!")


_WIKI = "obsidian-wikilinks.md"
_TRIM = "issue-188-wikilinks-need-trimming.md"
_PURE = "pure-markdown-examples"
_BOLD = "Example **bold**, *italic*, or ~~strikethrough~~ text"
_MAIN_SAMPLE_LINKS = [
    # case-insensitive names, labels, headings, a name that differs in case, a leading "_"
    Expected(_WIKI, f"[[{_PURE}]]", _PURE, f"{_PURE}.md"),
    Expected(_WIKI, "[[Pure-Markdown-Examples]]", "Pure-Markdown-Examples", f"{_PURE}.md"),
    Expected(_WIKI, f"[[{_PURE}|pure markdown examples]]", _PURE, f"{_PURE}.md",
             display="pure markdown examples"),
    Expected(_WIKI, f"[[{_PURE}#Heading 1]]", _PURE, f"{_PURE}.md", heading="Heading 1",
             anchor_ok=True),
    Expected(_WIKI, f"[[{_PURE}#Heading 1|pure markdown examples]]", _PURE, f"{_PURE}.md",
             heading="Heading 1", display="pure markdown examples", anchor_ok=True),
    Expected(_WIKI, "[[uppercased-note]]", "uppercased-note", "Uppercased-note.md"),
    Expected(_WIKI, "[[_underscored-note]]", "_underscored-note", "_underscored-note.md"),
    # issue-188: Obsidian trims the spaces around a target
    Expected(_TRIM, "[[foo]]", "foo", "foo.md"),
    Expected(_TRIM, "[[ foo]]", "foo", "foo.md"),
    Expected(_TRIM, "[[foo ]]", "foo", "foo.md"),
    Expected(_TRIM, "[[    foo    ]]", "foo", "foo.md"),
    Expected(_TRIM, "[[foo|foo]]", "foo", "foo.md", display="foo"),
    Expected(_TRIM, "[[ foo|foo]]", "foo", "foo.md", display="foo"),
    Expected(_TRIM, "[[foo |foo]]", "foo", "foo.md", display="foo"),
    Expected(_TRIM, "[[    foo    |foo]]", "foo", "foo.md", display="foo"),
    # foo.md has no ^abc block: the link still resolves to the note, the anchor is reported missing
    Expected(_TRIM, "[[foo#^abc]]", "foo", "foo.md", block="abc", anchor_ok=False),
    Expected(_TRIM, "[[foo#^abc ]]", "foo", "foo.md", block="abc", anchor_ok=False),
    Expected(_TRIM, "[[foo#^abc |foo > ^abc]]", "foo", "foo.md", block="abc",
             display="foo > ^abc", anchor_ok=False),
    Expected(_TRIM, "[[ foo#^abc ]]", "foo", "foo.md", block="abc", anchor_ok=False),
    # a label keeps its inline markdown
    Expected("wikilinks-with-formatting-symbols.md", f"[[foo|{_BOLD}]]", "foo", "foo.md",
             display=_BOLD),
    # same-note and cross-note heading and block references
    Expected("section-ref-a.md", "[[#This is a header]]", "", "section-ref-a.md",
             heading="This is a header", anchor_ok=True),
    Expected("section-ref-a.md", "[[#^dda637]]", "", "section-ref-a.md", block="dda637",
             anchor_ok=True),
    Expected("section-ref-b.md", "[[section-ref-a#This is a header]]", "section-ref-a",
             "section-ref-a.md", heading="This is a header", anchor_ok=True),
    Expected("section-ref-b.md", "[[section-ref-a#^dda637]]", "section-ref-a",
             "section-ref-a.md", block="dda637", anchor_ok=True),
    # embeds: a note (also inside a quote), a missing note, images, a PDF, a markdown image
    Expected("embeds.md", "![[note-with-frontmatter]]", "note-with-frontmatter",
             "note-with-frontmatter.md"),
    Expected("embeds.md", "> ![[note-with-frontmatter]]", "note-with-frontmatter",
             "note-with-frontmatter.md"),
    Expected("embeds.md", "![[non-existing note]]", "non-existing note", None),
    Expected("embeds.md", "![[white.png]]", "white.png", "white.png"),
    Expected("embeds.md", "![[bulb.svg]]", "bulb.svg", "bulb.svg"),
    Expected("embeds.md", "![[note.pdf]]", "note.pdf", "note.pdf"),
    Expected("embeds.md", "![image, not embed](white.png)", "white.png", "white.png",
             display="image, not embed"),
    Expected("embeds-partial-note.md", "![[note-with-headings#heading]]", "note-with-headings",
             "note-with-headings.md", heading="heading", anchor_ok=True),
    # a bare name finds the only note of that name in a subfolder, which links back up
    Expected("embeds-note-in-subdir.md", "![[note-in-subdir]]", "note-in-subdir",
             "subdir/note-in-subdir.md"),
    Expected("subdir/note-in-subdir.md", f"[[{_PURE}]]", _PURE, f"{_PURE}.md"),
    Expected(f"{_PURE}.md", "[link text](link-location.md)", "link-location.md", None,
             display="link text"),
]  # fmt: skip


def _main_sample_link_cases() -> list[object]:
    return [
        pytest.param(e, id=case_id(e.note.removesuffix(".md"), e.written))
        for e in _MAIN_SAMPLE_LINKS
    ]


@cases("expected", INPUT / "main-samples", _main_sample_link_cases)
def test_main_samples_link(indexed: Indexed, expected: Expected) -> None:
    """Each link of the main-samples vault: how it parses and which file it resolves to."""
    e = expected
    vault = indexed("main-samples")
    text = (INPUT / "main-samples" / e.note).read_text(encoding="utf-8").split("\n")
    line = next(n for n, s in enumerate(text, start=1) if e.written in s)
    found = [
        lk
        for lk in links(vault, e.note)
        if lk.line == line and lk.target == e.target and lk.embed == e.embed
    ]
    assert len(found) == 1, links(vault, e.note)
    lk = found[0]
    assert (lk.heading, lk.block, lk.display) == (e.heading, e.block, e.display)
    assert (lk.dst_path, lk.anchor_ok) == (e.dst, e.anchor_ok)


# (note, what it checks, the exact (line, target) of every link the note has)
_MAIN_SAMPLE_NOTES = [
    # `[[...]]` in backticks and in a fenced block are code; `[[unclosed link` is text
    (
        "obsidian-wikilinks.md",
        "code and unclosed are not links",
        [
            (1, "pure-markdown-examples"),
            (1, "Pure-Markdown-Examples"),
            (3, "pure-markdown-examples"),
            (5, "pure-markdown-examples"),
            (7, "pure-markdown-examples"),
            (9, "uppercased-note"),
            (11, "_underscored-note"),
        ],
    ),
    # `![[...]]` in backticks or a code block, `![[Not a valid embed.]`, `![[Partial embed`
    (
        "embeds.md",
        "code and malformed embeds are not links",
        [
            (3, "note-with-frontmatter"),
            (5, "note-with-frontmatter"),
            (7, "non-existing note"),
            (11, "white.png"),
            (13, "bulb.svg"),
            (17, "note.pdf"),
            (30, "white.png"),
        ],
    ),
    ("partial-embed-at-EOF.md", "unterminated embed at end of file is text", []),
    # `$[0, 2\pi]$` and `$$[0, 2\pi]$$`: brackets inside math are not links
    ("math.md", "brackets in math are not links", []),
    # `> [!NOTE]` callouts are blockquotes, not links
    ("alert.md", "callout markers are not links", []),
    # `[^fn1]` with `[^fn1]: Footnote` is a footnote, not a link to a note named "Footnote"
    ("pure-markdown-examples.md", "footnote is not a link", [(41, "link-location.md")]),
    ("note-with-headings.md", "no links", []),
]


def _main_sample_note_cases() -> list[object]:
    return [
        pytest.param(note, expected, id=case_id(note.removesuffix(".md"), what))
        for note, what, expected in _MAIN_SAMPLE_NOTES
    ]


@cases(("note", "expected"), INPUT / "main-samples", _main_sample_note_cases)
def test_main_samples_only_these_links(
    indexed: Indexed, note: str, expected: list[tuple[int, str]]
) -> None:
    """A note has exactly these links: nothing from code, math, callouts or broken syntax."""
    vault = indexed("main-samples")
    assert [(lk.line, lk.target) for lk in links(vault, note)] == expected


def test_main_samples_headings_and_front_matter(indexed: Indexed) -> None:
    """`Heading` as a plain paragraph is no heading; front matter is read, not body text."""
    vault = indexed("main-samples")
    headings = [(h.level, h.text, h.line) for h in vault.show("note-with-headings.md").headings]
    assert headings == [
        (1, "Title", 1),
        (2, "Heading", 10),
        (3, "Subheading", 14),
        (2, "Heading", 20),
    ]
    info = vault.show("note-with-frontmatter.md")
    assert info.frontmatter == {"Foo": "bar"}
    assert info.headings == ()


# --------------------------------------------------------------------------- other suites

# (suite, note, written, resolved file)
_OTHER_SUITE_LINKS = [
    # same file name in three folders: a path-qualified target picks one
    (
        "same-filename-different-directories",
        "Note.md",
        "[[dir1/Note|note from dir1]]",
        "dir1/Note.md",
    ),
    ("same-filename-different-directories", "Note.md", "![[dir1/Note]]", "dir1/Note.md"),
    (
        "same-filename-different-directories",
        "Note.md",
        "[[dir2/Note|note from dir2]]",
        "dir2/Note.md",
    ),
    ("same-filename-different-directories", "Note.md", "![[dir2/Note]]", "dir2/Note.md"),
    # non-ASCII and quotes in a file name
    ("non-ascii", "Link.md", "[[Nöte with 'quotes']]", "Nöte with 'quotes'.md"),
    ("non-ascii", "Embed.md", "[[Nöte with 'quotes']]", "Nöte with 'quotes'.md"),
    ("non-ascii", "Embed.md", "![[Nöte with 'quotes']]", "Nöte with 'quotes'.md"),
    # embeds in a cycle are plain links for an index: each resolves, nothing recurses
    ("infinite-recursion", "Note A.md", "![[Note B]]", "Note B.md"),
    ("infinite-recursion", "Note B.md", "![[Note C]]", "Note C.md"),
    ("infinite-recursion", "Note C.md", "![[Note A]]", "Note A.md"),
    ("single-file", "note.md", "[[other-note]]", "other-note.md"),
    ("single-file", "note.md", "[[other-note|another note]]", "other-note.md"),
    # from a subfolder, a bare name finds a note at the root and one beside it
    ("start-at", "subdir/Note B.md", "[[Note A]]", "Note A.md"),
    ("start-at", "subdir/Note B.md", "[[Note C]]", "subdir/Note C.md"),
]


def _other_suite_cases() -> list[object]:
    return [
        pytest.param(*case, id=case_id(case[0], case[1].removesuffix(".md"), case[2]))
        for case in _OTHER_SUITE_LINKS
    ]


@cases(("suite", "note", "written", "dst"), INPUT, _other_suite_cases)
def test_other_suite_link(indexed: Indexed, suite: str, note: str, written: str, dst: str) -> None:
    """Path-qualified targets, non-ASCII names, embed cycles, links across folders."""
    vault = indexed(suite)
    text = (INPUT / suite / note).read_text(encoding="utf-8").split("\n")
    # the line where the link is written on its own, not as part of a longer one
    line = next(
        n
        for n, s in enumerate(text, start=1)
        if written in s and not (written.startswith("[[") and "!" + written in s)
    )
    embed = written.startswith("!")
    found = [lk for lk in links(vault, note) if lk.line == line and lk.embed == embed]
    assert [lk.dst_path for lk in found] == [dst]


def test_filter_by_tags(indexed: Indexed) -> None:
    """Front matter flow-list tags: the notes tagged export and neither private nor no-export."""
    vault = indexed("filter-by-tags")
    expected_dir = SUITE / "testdata" / "expected" / "filter-by-tags"
    rows = vault.conn.execute("SELECT path FROM notes WHERE kind = 'note'").fetchall()
    exported = set()
    for (path,) in rows:
        tags = {t.lower() for t in vault.show(path).tags}
        if "export" in tags and not tags & {"private", "no-export"}:
            exported.add(path)
    assert exported == {p.name for p in expected_dir.glob("*.md")}
    assert vault.show("export-no-export.md").tags == ("export", "no-export", "private")


def test_data_folder_is_where_the_fixtures_say(edgecases: Path) -> None:
    """The fixture and the parametrized cases read the same folder."""
    assert edgecases == EDGECASES
    assert (edgecases / "obsidian-export" / "CASES.md").is_file()
