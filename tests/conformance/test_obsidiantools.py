"""Conformance with obsidiantools' test suite (mfarragher/obsidiantools, BSD-3-Clause).

Under ../shared/data/edgecases/obsidiantools: vault-stub/ (8 notes, 2 canvases) is indexed into a
temporary index and its graph compared with the expected values in expected_from_tests/*.json;
general/ notes and the inline fixture strings are parsed directly.

obsidiantools names a note by its file name (by its path when two notes share one, e.g.
`lipsum/Isolated note`), and a missing note by its link target without `.md`. Its "wikilinks"
leave out embeds; so do the counts here.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from tests.conformance.edgecase_data import EDGECASES, case_id, cases, load_json
from vaultmem.model import Link, ParsedNote
from vaultmem.parser import parse_note
from vaultmem.resolver import name_key
from vaultmem.vault import OutLink, Vault

# every case reads the shared data: skip them all, saying why, when it is absent
pytestmark = pytest.mark.usefixtures("edgecases")

SUITE = EDGECASES / "obsidiantools"
STUB = SUITE / "vault-stub"
GENERAL = SUITE / "general"
EXPECTED = SUITE / "expected_from_tests"
DEFAULTS_MD = EXPECTED / "test_api_vault_stub_connect_defaults_md.json"
ATTACHMENTS = EXPECTED / "test_api_vault_stub_connect_attachments_true.json"
MD_UTILS = EXPECTED / "test_md_utils.json"

# obsidiantools' own choices, where Obsidian (and vaultmem) differ
CANVAS_LINK = (
    "obsidiantools leaves [[Crazy wall 2.canvas]] out of a note's wikilinks (it tracks links to "
    "canvas files apart); Obsidian counts it as a link and so does vaultmem (13 links, the canvas "
    "resolved)"
)
TAGS_COLLAPSED = (
    "obsidiantools' default tag list keeps one entry per occurrence and cuts nested tags to their "
    "root (#y1982/sep -> y1982, #y2000/party-over/... -> y2000); vaultmem keeps each tag once, as "
    "written, nesting included (the parents are indexed too)"
)
BRACES_ESCAPED = (
    "obsidiantools escapes braces before parsing YAML, so `description: {{description}}` becomes "
    "the string '\\{\\{description\\}\\}'; to YAML it is a flow mapping with a mapping as key, "
    "which vaultmem cannot load: it skips that property with a warning and keeps the others"
)
EXTERNAL_URLS = (
    "obsidiantools' md_links are external URLs (and, in its regex, only some link forms); vaultmem "
    "indexes links to vault files only, so an http(s) URL never becomes a link row"
)


def _tests(path: Path) -> dict[str, dict[str, Any]]:
    return {t["test"]: t for t in load_json(path)["tests"]}


def _fixture(path: Path, name: str) -> Any:
    return load_json(path)["fixtures"][name]["value"]


def _xfail(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(reason=reason, strict=True)


# --------------------------------------------------------------------------- the indexed stub


@pytest.fixture(scope="module")
def stub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    """vault-stub indexed (read-only) into a temporary index."""
    if not STUB.is_dir():
        pytest.skip(f"{STUB} is absent: the shared test data is needed")
    vault = Vault(STUB, tmp_path_factory.mktemp("stub") / "i.db")
    vault.reindex()
    yield vault
    vault.close()


def _paths() -> dict[str, str | None]:
    """obsidiantools node name -> vault path (None for a note that does not exist)."""
    rel: dict[str, str | None] = _fixture(DEFAULTS_MD, "expected_metadata_dict")["rel_filepath"]
    return rel


def node_name(path: str) -> str:
    """obsidiantools' name for an existing note: its file name, or its path when shared."""
    return next(name for name, p in _paths().items() if p == path)


def wanted_name(target: str) -> str:
    """The name of the note a target asks for: `[[Aras Teucras.md]]` wants `Aras Teucras`."""
    return target.removesuffix(".md")


def wikilinks(vault: Vault, node: str) -> list[OutLink]:
    """A note's body links that are not embeds, in the order written."""
    path = _paths()[node]
    assert path is not None
    return [lk for lk in vault.show(path).links if lk.kind != "property" and not lk.embed]


def backlink_sources(vault: Vault, node: str) -> list[str]:
    """The names of the notes linking to `node` (one per link), existing or wanted."""
    path = _paths().get(node)
    if path is not None:
        rows = vault.conn.execute(
            "SELECT n.path FROM links l JOIN notes n ON n.id = l.src_id"
            " WHERE l.dst_path = ? AND n.path != ?",
            (path, path),
        )
    else:
        rows = vault.conn.execute(
            "SELECT n.path FROM links l JOIN notes n ON n.id = l.src_id"
            " WHERE l.dst_path IS NULL AND l.target_key = ?",
            (name_key(node),),
        )
    return [node_name(src) for (src,) in rows]


def _metadata(column: str) -> Any:
    return _fixture(DEFAULTS_MD, "expected_metadata_dict")[column]


# --------------------------------------------------------------------------- notes and links


def test_notes_and_paths(stub: Vault) -> None:
    """The 8 notes, with the same file name at the root and in lipsum/ kept apart."""
    notes = {r[0] for r in stub.conn.execute("SELECT path FROM notes WHERE kind = 'note'")}
    assert notes == {p for p in _paths().values() if p is not None}
    in_root = _tests(EXPECTED / "test_md_utils_vault_stub.json")[
        "test_get_md_relpaths_matching_subdirs"
    ]["expected"]["expected_in_root"]
    assert {p for p in notes if "/" not in p} == set(in_root)


def test_nonexistent_notes(stub: Vault) -> None:
    """The 12 link targets with no note behind them are wanted notes (the missing media files,
    `Sussudio.mp3` and `1999.flac`, are wanted files: see test_media_files)."""
    expected = _tests(DEFAULTS_MD)["test_nonexistent_notes"]["expected"]["expected_non_e_notes"]
    rows = stub.conn.execute("SELECT DISTINCT target FROM links WHERE dst_path IS NULL")
    wanted = {wanted_name(t) for (t,) in rows if PurePosixPath(t).suffix in ("", ".md")}
    assert len(expected) == 12
    assert {name_key(w) for w in wanted} == {name_key(e) for e in expected}
    assert len({name_key(w) for w in wanted}) == 12
    # each is also a node that does not exist
    assert all(_metadata("note_exists")[e] is False for e in expected)


def _n_wikilinks_cases() -> list[Any]:
    return [
        pytest.param(
            node, int(n), id=case_id(node), marks=_xfail(CANVAS_LINK) if node == "Alimenta" else ()
        )
        for node, n in _metadata("n_wikilinks").items()
        if n is not None
    ]


@cases(("node", "expected"), DEFAULTS_MD, _n_wikilinks_cases)
def test_n_wikilinks(stub: Vault, node: str, expected: int) -> None:
    """How many wikilinks each note writes (duplicates counted, embeds not)."""
    assert len(wikilinks(stub, node)) == expected


def _wikilink_list_cases() -> list[Any]:
    tests = _tests(DEFAULTS_MD)
    out = []
    for test, key in (
        ("test_wikilink_individual_notes", "expected_wl_subset"),
        ("test_unique_wikilinks", "expected_u_wl_subset"),
    ):
        unique = test == "test_unique_wikilinks"
        for node, names in tests[test]["expected"][key].items():
            marks = _xfail(CANVAS_LINK) if node == "Alimenta" else ()
            out.append(pytest.param(node, unique, names, id=case_id(test[5:], node), marks=marks))
    return out


@cases(("node", "unique", "expected"), DEFAULTS_MD, _wikilink_list_cases)
def test_wikilink_list(stub: Vault, node: str, unique: bool, expected: list[str]) -> None:
    """The notes a note links to, in the order written (or first occurrences only)."""
    names = [wanted_name(lk.target) for lk in wikilinks(stub, node)]
    assert (list(dict.fromkeys(names)) if unique else names) == expected


def _wikilink_count_cases() -> list[Any]:
    counts = _tests(DEFAULTS_MD)["test_wikilink_counts"]["expected"]["expected_wl_count_subset"]
    return [
        pytest.param(
            node, c, id=case_id(node), marks=_xfail(CANVAS_LINK) if node == "Alimenta" else ()
        )
        for node, c in counts.items()
    ]


@cases(("node", "expected"), DEFAULTS_MD, _wikilink_count_cases)
def test_wikilink_counts(stub: Vault, node: str, expected: dict[str, int]) -> None:
    """How often a note links to each target."""
    assert Counter(wanted_name(lk.target) for lk in wikilinks(stub, node)) == expected


def _n_backlinks_cases() -> list[Any]:
    return [pytest.param(node, n, id=case_id(node)) for node, n in _metadata("n_backlinks").items()]


@cases(("node", "expected"), DEFAULTS_MD, _n_backlinks_cases)
def test_n_backlinks(stub: Vault, node: str, expected: int) -> None:
    """Backlinks per note, existing or wanted, one per linking occurrence."""
    assert len(backlink_sources(stub, node)) == expected


def _backlink_cases() -> list[Any]:
    tests = _tests(DEFAULTS_MD)
    individual = tests["test_backlink_individual_notes"]["expected"]["expected_bl_subset"]
    counts = tests["test_backlink_counts"]["expected"]["expected_bl_count_subset"]
    out = [
        pytest.param(node, dict.fromkeys(sources, None), id=case_id("individual", node))
        for node, sources in individual.items()
    ]
    out += [pytest.param(node, c, id=case_id("counts", node)) for node, c in counts.items()]
    return out


@cases(("node", "expected"), DEFAULTS_MD, _backlink_cases)
def test_backlinks(stub: Vault, node: str, expected: dict[str, int | None]) -> None:
    """Which notes link to a note (None: any number of times), and how often."""
    sources = Counter(backlink_sources(stub, node))
    assert set(sources) == set(expected)
    assert {k: n for k, n in sources.items() if expected[k] is not None} == {
        k: n for k, n in expected.items() if n is not None
    }


def _isolated_cases() -> list[Any]:
    names = _tests(DEFAULTS_MD)["test_isolated_notes"]["expected"]["expected_isol_notes"]
    return [pytest.param(node, id=case_id(node)) for node in names]


@cases("node", DEFAULTS_MD, _isolated_cases)
def test_isolated_notes(stub: Vault, node: str) -> None:
    """Isolated notes (either `Isolated note`) have no links in or out."""
    path = _paths()[node]
    assert path is not None
    info = stub.show(path)
    assert (info.links, info.backlinks) == ((), ())


def _embedded_cases() -> list[Any]:
    index = _fixture(DEFAULTS_MD, "expected_embedded_files_index")
    return [pytest.param(node, files, id=case_id(node)) for node, files in index.items()]


@cases(("node", "expected"), DEFAULTS_MD, _embedded_cases)
def test_embedded_files(stub: Vault, node: str, expected: list[str]) -> None:
    """The files a note embeds (`![[Sussudio.mp3]]`), in order."""
    path = _paths()[node]
    assert path is not None
    assert [lk.target for lk in stub.show(path).links if lk.embed] == expected


def _media_cases() -> list[Any]:
    tests = _tests(ATTACHMENTS)
    counts = tests["test_backlink_counts"]["expected"]["expected_bl_count_subset"]
    missing = tests["test_nonexistent_media_files"]["expected"]["expected_non_e_files"]
    return [
        pytest.param(name, counts[name], name in missing, id=case_id(name))
        for name in ("1999.flac", "Sussudio.mp3")
    ]


@cases(("name", "backlinks", "missing"), ATTACHMENTS, _media_cases)
def test_media_files(stub: Vault, name: str, backlinks: dict[str, int], missing: bool) -> None:
    """Embedded media that is not in the vault: wanted, one backlink from Sussudio."""
    rows = stub.conn.execute(
        "SELECT n.path, l.dst_path FROM links l JOIN notes n ON n.id = l.src_id"
        " WHERE l.target_key = ?",
        (name_key(name),),
    ).fetchall()
    assert Counter(node_name(src) for src, _ in rows) == backlinks
    assert all(dst is None for _, dst in rows) is missing


def test_canvas_files(stub: Vault) -> None:
    """Canvas files are vault files: `[[Crazy wall 2.canvas]]` resolves; the other is isolated."""
    isolated = _tests(ATTACHMENTS)["test_isolated_canvas_files"]["expected"]["expected_isol_files"]
    linked = {
        r[0]
        for r in stub.conn.execute(
            "SELECT DISTINCT dst_path FROM links WHERE dst_path LIKE '%.canvas'"
        )
    }
    canvases = {
        r[0] for r in stub.conn.execute("SELECT path FROM notes WHERE path LIKE '%.canvas'")
    }
    assert canvases - linked == set(isolated)
    assert linked == {"Crazy wall 2.canvas"}


# --------------------------------------------------------------------------- tags, front matter


def _tag_index_cases() -> list[Any]:
    index = _fixture(DEFAULTS_MD, "expected_tags_main_only_index")
    return [
        pytest.param(
            node, tags, id=case_id(node), marks=_xfail(TAGS_COLLAPSED) if node == "Sussudio" else ()
        )
        for node, tags in index.items()
    ]


@cases(("node", "expected"), DEFAULTS_MD, _tag_index_cases)
def test_tags_index(stub: Vault, node: str, expected: list[str]) -> None:
    """Each note's tags, as obsidiantools lists them by default."""
    path = _paths()[node]
    assert path is not None
    assert list(stub.show(path).tags) == expected


def _sussudio_tag_cases() -> list[Any]:
    tests = _tests(MD_UTILS)
    return [
        pytest.param(
            tests["test_sussudio_tags_with_nesting_shown"]["expected"]["expected_tags"],
            id="with_nesting_shown",
        ),
        pytest.param(
            tests["test_sussudio_tags_with_nesting_not_shown"]["expected"]["expected_tags"],
            id="with_nesting_not_shown",
            marks=_xfail(TAGS_COLLAPSED),
        ),
    ]


@cases("expected", MD_UTILS, _sussudio_tag_cases)
def test_sussudio_tags(expected: list[str]) -> None:
    """Inline tags: `( #y1982 )` counts; `(#y1985 )`, `#1985`, `\\#hash`, code do not."""
    note = parse_note((STUB / "Sussudio.md").read_text(encoding="utf-8"), "Sussudio.md")
    assert list(note.tags) == expected


def test_hash_char_parsing() -> None:
    """`\\#hash` is an escaped hash, not a tag (test_hash_char_parsing_func)."""
    case = _tests(MD_UTILS)["test_hash_char_parsing_func"]["expected"]
    assert case["in_str"] == "\\#hash #tag"
    assert parse_note(case["in_str"] + "\n", "a.md").tags == ("tag",)


def _front_matter_cases() -> list[Any]:
    index = _fixture(DEFAULTS_MD, "expected_front_matter_index")
    return [
        pytest.param(
            node,
            fm,
            id=case_id(node),
            marks=_xfail(BRACES_ESCAPED) if node == "Causam mihi" else (),
        )
        for node, fm in index.items()
    ]


@cases(("node", "expected"), DEFAULTS_MD, _front_matter_cases)
def test_front_matter_index(stub: Vault, node: str, expected: dict[str, Any]) -> None:
    """Front matter values as YAML types: ints, nested lists, lists of mappings."""
    path = _paths()[node]
    assert path is not None
    assert stub.show(path).frontmatter == expected


def test_front_matter_with_unloadable_value_keeps_the_rest(stub: Vault) -> None:
    """Causam mihi: the one property YAML cannot load is skipped with a warning, not the rest."""
    expected = _fixture(DEFAULTS_MD, "expected_front_matter_index")["Causam mihi"]
    info = stub.show("lipsum/Causam mihi.md")
    assert info.frontmatter == {k: v for k, v in expected.items() if k != "description"}
    assert any("'description'" in w for w in info.warnings)


def test_pretend_wikilink_not_extracted_from_front_matter(stub: Vault) -> None:
    """Unquoted `[[[American Psycho (film)]], ...]` is YAML nested lists, not a property link."""
    links = stub.show("Sussudio.md").links
    assert [lk for lk in links if lk.kind == "property"] == []


# --------------------------------------------------------------------------- general/ notes


def _parse_general(name: str) -> ParsedNote:
    return parse_note((GENERAL / name).read_text(encoding="utf-8"), name)


def _body_is_empty(note: ParsedNote) -> bool:
    return (
        not note.headings
        and not note.links
        and not note.tags
        and not note.tasks
        and all(f.source == "property" for f in note.fields)
    )


def _front_matter_only_cases() -> list[Any]:
    out = [
        pytest.param(f"frontmatter-only_{n}.md", id=f"frontmatter-only_{n}") for n in range(1, 5)
    ]
    out.append(pytest.param("frontmatter_parse-double-curly.md", id="double-curly"))
    return out


@cases("name", GENERAL, _front_matter_only_cases)
def test_front_matter_only(name: str) -> None:
    """A note that is only front matter has an empty body (test_front_matter_only_parsing,
    test_front_matter_parse_double_curly: source text "\\n"): no heading, link or tag from it."""
    expected = _tests(MD_UTILS)["test_front_matter_only_parsing"]["expected"]["expected_txt"]
    assert expected == "\n"
    note = _parse_general(name)
    assert _body_is_empty(note)
    if not note.warnings:  # readable YAML: nothing of it is body text either
        assert "".join(c.text for c in note.chunks).strip() == ""


def _no_front_matter_cases() -> list[Any]:
    tests = _tests(MD_UTILS)
    out = []
    for test, pattern in (
        ("test_separators_not_front_matter_parsing", "not-frontmatter*.md"),
        ("test_handle_invalid_front_matter", "invalid-frontmatter*.md"),
    ):
        expected = tests[test]["expected"]["expected_output"]
        for path in sorted(GENERAL.glob(pattern)):
            out.append(pytest.param(path.name, expected, id=case_id(path.stem)))
    return out


@cases(("name", "expected"), GENERAL, _no_front_matter_cases)
def test_no_front_matter(name: str, expected: dict[str, Any]) -> None:
    """`___`, `***`, `<hr>` fences are no front matter; invalid YAML yields no properties."""
    assert _parse_general(name).frontmatter == expected


def test_embedded_files_in_table() -> None:
    """`![[img.png \\| 300]]` in table cells embeds img.png (test_embedded_files_alias_scaling)."""
    case = _tests(MD_UTILS)["test_embedded_files_alias_scaling"]["expected"]
    note = _parse_general("embedded-images_in-table.md")
    assert [lk.target for lk in note.links if lk.embed] == case["expected_embedded_images"]
    assert [lk.target for lk in note.links if not lk.embed] == ["Strategy 1", "Strategy 2"]


def test_wikilinks_code_block() -> None:
    """R's `tibble[['column_name']]` in a fence or backticks is code, not a wikilink."""
    expected = _tests(MD_UTILS)["test_wikilinks_code_block"]["expected"]["expected_links"]
    assert [lk.target for lk in _parse_general("wikilinks_exclude-code.md").links] == expected


def test_wikilink_with_heading_and_padded_label() -> None:
    """`[[E#one | ee ]]` links to E (SOURCE.txt: "[[E#one | ee ]] -> target E")."""
    note = _parse_general("wikilinks_extraction.md")
    assert [lk.target for lk in note.links] == ["A", "B", "C", "D", "E", "A"]
    e = note.links[4]
    assert (e.target, e.heading, e.display) == ("E", "one", "ee")


# --------------------------------------------------------------------------- inline fixtures


def _html_stub() -> str:
    # The fixture is an indented triple-quoted Python string: the indent is the test file's,
    # not the note's (indented four spaces, CommonMark would read it all as a code block).
    return textwrap.dedent(str(_fixture(MD_UTILS, "html_wikilinks_stub")))


def _split_written(written: str) -> tuple[str, str | None]:
    """obsidiantools' `Target#Heading | alias` string as (target, shown text)."""
    ref, _, shown = written.partition("|")
    return ref.partition("#")[0].strip(), shown.strip() or None


def _stub_link_cases() -> list[Any]:
    tests = _tests(MD_UTILS)
    cases = []
    for test in (
        "test_get_all_wikilinks_from_source_text",
        "test_get_all_wikilinks_from_source_text_keep_aliases",
        "test_get_unique_wikilinks_from_html_content",
        "test_get_all_embedded_files_from_source_text",
        "test_get_all_embedded_files_from_source_text_keep_aliases",
    ):
        cases.append(
            pytest.param(
                test, tests[test]["expected"]["expected_results"], id=test.removeprefix("test_")
            )
        )
    return cases


@cases(("test", "expected"), MD_UTILS, _stub_link_cases)
def test_source_text_links(test: str, expected: list[str]) -> None:
    """Wikilinks and embeds of obsidiantools' inline fixture, with and without their aliases."""
    links: tuple[Link, ...] = parse_note(_html_stub(), "stub.md").links
    embeds = "embedded" in test
    found = [lk for lk in links if lk.embed == embeds and lk.kind == "wiki"]
    if "keep_aliases" in test:
        assert [(lk.target, lk.display) for lk in found] == [_split_written(e) for e in expected]
        return
    targets = [lk.target for lk in found]
    assert (list(dict.fromkeys(targets)) if "unique" in test else targets) == expected


def _md_link_cases() -> list[Any]:
    md_utils = _tests(MD_UTILS)
    defaults = _tests(DEFAULTS_MD)
    stub_text = str(_fixture(MD_UTILS, "txt_md_links_stub"))
    return [
        pytest.param(
            stub_text,
            [u for _, u in md_utils["test_get_all_md_link_info"]["expected"]["expected_links"]],
            id="get_all_md_link_info",
            marks=_xfail(EXTERNAL_URLS),
        ),
        pytest.param(
            stub_text,
            md_utils["test_get_unique_md_links_has_order_preserved"]["expected"]["expected_links"],
            id="unique_md_links_order",
            marks=_xfail(EXTERNAL_URLS),
        ),
        pytest.param(
            (GENERAL / "md-links_extraction.md").read_text(encoding="utf-8"),
            md_utils["test_unique_md_links"]["expected"]["expected_links"],
            id="md-links_extraction",
            marks=_xfail(EXTERNAL_URLS),
        ),
        pytest.param(
            (STUB / "lipsum" / "Ne fuit.md").read_text(encoding="utf-8"),
            defaults["test_md_links_individual_notes"]["expected"]["expected_md_links"],
            id="Ne_fuit",
            marks=_xfail(EXTERNAL_URLS),
        ),
    ]


@cases(("text", "expected"), MD_UTILS, _md_link_cases)
def test_md_links(text: str, expected: list[str]) -> None:
    """Markdown links `[text](url)` as obsidiantools extracts them."""
    links = parse_note(textwrap.dedent(text), "a.md").links
    found = [lk.target for lk in links if lk.kind == "markdown"]
    assert list(dict.fromkeys(found)) == list(dict.fromkeys(expected))
