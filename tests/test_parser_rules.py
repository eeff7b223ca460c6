"""The parser's rules (docs/vault-contract.md) as fixture cases: tests/fixtures/parser/*.txt.

Each case's input is a whole note; its expected output lists everything the parser found in it,
one item a line, in this order (an empty expected section means: nothing at all):

    heading L: ## text
    wiki|markdown|property L: target|heading|block|display|embed|relation
    tag: name
    task L: [status] text|due|priority|done
    field|property-field L: key|value
    block L: id

L is the 1-based line in the file; an empty field is None (or the empty target of a same-note
link). Nothing else is listed, so a link or tag found where the rule says there is none fails.
"""

from __future__ import annotations

import pytest

from tests.fixture_files import Case, fixture_params
from vaultmem import parser
from vaultmem.model import ParsedNote
from vaultmem.parser import parse_note


def _cell(value: object) -> str:
    return "" if value is None else str(value)


def describe(note: ParsedNote) -> str:
    """Everything a note yields, one readable line per item (the format in the docstring)."""
    out = [f"heading {h.line}: {'#' * h.level} {h.text}" for h in note.headings]
    for lk in note.links:
        cells = (lk.target, lk.heading, lk.block, lk.display, "embed" if lk.embed else None)
        out.append(f"{lk.kind} {lk.line}: {'|'.join(map(_cell, cells))}|{lk.relation}")
    out += [f"tag: {tag}" for tag in note.tags]
    for t in note.tasks:
        parts = (t.text, t.due, t.priority, t.done)
        out.append(f"task {t.line}: [{t.status}] {'|'.join(map(_cell, parts))}")
    for f in note.fields:
        kind = "field" if f.source == "inline" else "property-field"
        out.append(f"{kind} {f.line}: {f.key}|{f.value}")
    out += [f"block {b.line}: {b.id}" for b in note.blocks]
    return "\n".join(out)


@pytest.mark.parametrize("case", fixture_params("parser"))
def test_parser_rule(case: Case) -> None:
    note = parse_note(case.input + "\n", "folder/note.md")  # a file ends with a newline
    assert describe(note) == case.expected.strip("\n"), f"{case.file}:{case.line} {case.title}"


def test_engines_built_inside_a_test_read_every_case_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """The markdown engines are built once, when the parser is imported. Built again here
    they must read every case the same, and the one for paragraphs past the bracket budget
    must read wikilinks and no markdown links: a mutation test reaches the code that builds
    them only through a test that runs it (docs/TESTING.md, "parser")."""
    md, without_links = parser._engines()
    monkeypatch.setattr(parser, "_MD", md)
    monkeypatch.setattr(parser, "_MD_WITHOUT_LINKS", without_links)
    for case in fixture_params("parser"):
        (c,) = case.values
        assert isinstance(c, Case)
        note = parse_note(c.input + "\n", "folder/note.md")
        assert describe(note) == c.expected.strip("\n"), f"{c.file}:{c.line} {c.title}"
    monkeypatch.setattr(parser, "MAX_LINK_BRACKETS", 0)
    note = parse_note("[[[[[[A]] ![i](i.png) [t](t.md) [[E]] `[[code]]` $[[math]]$\n", "n.md")
    assert [lk.target for lk in note.links] == ["[A", "E"]
