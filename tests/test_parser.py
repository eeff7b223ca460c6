"""Parser cases found by the conformance suites (docs/CONFORMANCE.md), as plain unit tests."""

from __future__ import annotations

import pytest
import yaml

from vaultmem import parser
from vaultmem.config import FrontMatterLimits
from vaultmem.parser import parse_note


def test_footnote_definition_is_not_a_link() -> None:
    """`[^1]: Text` defines a footnote; CommonMark alone would read a link to a note "Text"."""
    note = parse_note("Claim [^1] and [[A]].\n\n[^1]: Source with [[B]] #cited\n", "n.md")
    assert sorted((lk.target, lk.line) for lk in note.links) == [("A", 1), ("B", 3)]
    assert note.tags == ("cited",)


def test_inline_footnote_keeps_its_links() -> None:
    note = parse_note("Text^[see [[C]]] done.\n", "n.md")
    assert [lk.target for lk in note.links] == ["C"]


def test_footnote_reference_stays_in_task_text() -> None:
    note = parse_note("- [ ] check [^1] [due:: 2026-01-02]\n\n[^1]: why\n", "n.md")
    (task,) = note.tasks
    assert (task.text, task.due) == ("check [^1] [due:: 2026-01-02]", "2026-01-02")


def test_unreadable_front_matter_is_searchable_text_but_not_markdown() -> None:
    """`{{ foo }}: bar` over the closing `---` is no heading: Obsidian shows invalid properties."""
    note = parse_note("---\n{{ foo }}: bar #tag [[X]]\n---\n# Real\n", "n.md")
    assert note.frontmatter == {}
    assert [(h.text, h.line) for h in note.headings] == [("Real", 4)]
    assert (note.links, note.tags) == ((), ())
    assert note.chunks[0].text == "---\n{{ foo }}: bar #tag [[X]]\n---"
    assert note.warnings and "broken YAML" in note.warnings[0]


def test_percent_signs_in_inline_code_open_no_comment() -> None:
    """`%%` inside backticks ("Type `%%` to comment") is code: it hides nothing after it."""
    note = parse_note("Type `%%` to comment. See [[A]] #t\n\n%% hidden [[B]] %% [[C]]\n", "n.md")
    assert [lk.target for lk in note.links] == ["A", "C"]
    assert note.tags == ("t",)


# --------------------------------------------------------------------------- found by mutation
# Each test below kills mutants of vaultmem/parser.py that the tests above and the fixture
# cases let through (docs/TESTING.md, "parser"): front matter first.


def _fm(text: str, **limits: float) -> tuple[dict[str, object], tuple[str, ...]]:
    note = parse_note(f"---\n{text}\n---\nbody\n", "n.md", FrontMatterLimits(**limits))
    return note.frontmatter, note.warnings


HINT = "in .vaultmem/config.toml"


def test_good_front_matter_reads_every_kind_of_value_without_a_warning() -> None:
    fm, warnings = _fm(
        "title: Tea é\nwhen: 2026-02-01\nat: 2026-02-01 10:30:00\nn: 3\nx: 1.5\nok: true\n"
        "none:\nnested: {a: [1, {b: 2}], 7: x}\nset: !!set {9, 10}\nbin: !!binary aGk="
    )
    assert fm == {
        "title": "Tea é",
        "when": "2026-02-01",
        "at": "2026-02-01T10:30:00",
        "n": 3,
        "x": 1.5,
        "ok": True,
        "none": None,
        "nested": {"a": [1, {"b": 2}], "7": "x"},
        "set": [10, 9],  # a set's members in the order of their text
        "bin": "b'hi'",  # any other value as its text
    }
    assert warnings == ()


def test_a_value_yaml_cannot_build_is_kept_as_text_with_its_line() -> None:
    fm, warnings = _fm("a: 1\nd: 2026-02-30\nn: !!int abc\nf: !!float x\nk: " + "y" * 41)
    assert fm == {"a": 1, "d": "2026-02-30", "n": "abc", "f": "x", "k": "y" * 41}
    assert warnings == (
        "line 3: '2026-02-30' is not a real date or time; kept as text",
        "line 4: 'abc' is not a number; kept as text",
        "line 5: 'x' is not a number; kept as text",
    )
    _, (warning,) = _fm("t: !!timestamp " + "2" * 40 + "x")
    assert warning == f"line 2: '{'2' * 39}…' is not a real date or time; kept as text"
    _, (warning,) = _fm("t: !!timestamp " + "2" * 40)
    assert warning == f"line 2: '{'2' * 40}' is not a real date or time; kept as text"


def test_the_properties_limit_keeps_the_first_ones() -> None:
    text = "k0: 0\nk1: 1\nk2: 2"
    assert _fm(text, properties=3) == ({"k0": 0, "k1": 1, "k2": 2}, ())
    assert _fm(text + "\nk3: 3", properties=3) == (
        {"k0": 0, "k1": 1, "k2": 2},
        (f"front matter has 4 properties; only the first 3 were read (limits.properties {HINT})",),
    )


def test_the_values_limit_counts_every_value_aliases_expanded() -> None:
    text = "a: &x [1, 2]\nb: *x"  # a list and two numbers, twice: six values
    assert _fm(text, yaml_values=6) == ({"a": [1, 2], "b": [1, 2]}, ())
    assert _fm(text, yaml_values=5) == (
        {"a": [1, 2]},
        (
            "front matter property 'b' left out: more than 5 values with YAML aliases"
            f" expanded (limits.yaml_values {HINT})",
        ),
    )


def test_the_text_limit_counts_text_and_numbers_aliases_expanded() -> None:
    # "a", the 16 letters, "b", then the letters three times more: 66 characters
    text = "a: &x abcdefghijklmnop\nb: [*x, *x, *x]"
    fm = {"a": "abcdefghijklmnop", "b": ["abcdefghijklmnop"] * 3}
    assert _fm(text, front_matter_kb=66 / 1024) == (fm, ())
    left_out = (
        "front matter property 'b' left out: more than 0.0634766 KB of text with YAML"
        f" aliases expanded (limits.front_matter_kb {HINT})"
    )
    assert _fm(text, front_matter_kb=65 / 1024) == ({"a": fm["a"]}, (left_out,))
    # a number counts a third of its bits: 2**300 (301 bits) counts 100 characters
    big = 2**300
    numbers = "a: &n [" + str(big) + "]\nb: [" + ", ".join(["*n"] * 10) + "]"
    assert _fm(numbers, front_matter_kb=1102 / 1024)[0] == {"a": [big], "b": [[big]] * 10}
    assert _fm(numbers, front_matter_kb=1101 / 1024)[0] == {"a": [big]}


def test_the_depth_limit_counts_lists_and_mappings() -> None:
    text = "a: [[[1]]]\nb: [[1]]\nc: {x: {y: {z: 1}}}\nd: {x: {y: 1}}"
    assert _fm(text, yaml_depth=3) == (
        {"b": [[1]], "d": {"x": {"y": 1}}},
        (
            "front matter properties 'a', 'c' left out: nested deeper than 3 levels"
            f" (limits.yaml_depth {HINT})",
        ),
    )


def test_a_recursive_alias_is_left_out_and_a_repeated_one_is_not() -> None:
    assert _fm("a: &a [*a]\nb: &x [1]\nc: *x\nd: [*x, *x]") == (
        {"b": [1], "c": [1], "d": [[1], [1]]},
        (
            "front matter property 'a' left out: a recursive YAML alias"
            " (a value that contains itself)",
        ),
    )


@pytest.mark.parametrize(
    ("dropped", "names"),
    [
        (1, "property 'k1'"),
        (2, "properties 'k1', 'k2'"),
        (5, "properties 'k1', 'k2', 'k3', 'k4', 'k5'"),
        (6, "properties 'k1', 'k2', 'k3', 'k4', 'k5' and 1 more"),
        (7, "properties 'k1', 'k2', 'k3', 'k4', 'k5' and 2 more"),
    ],
)
def test_properties_left_out_are_named_five_at_most(dropped: int, names: str) -> None:
    text = "\n".join(f"k{i}: [[1]]" for i in range(1, dropped + 1))
    fm, warnings = _fm(text + "\nkept: 1", yaml_depth=2)
    assert fm == {"kept": 1}
    assert warnings == (
        f"front matter {names} left out: nested deeper than 2 levels (limits.yaml_depth {HINT})",
    )


def test_a_long_property_name_is_clipped_in_a_warning() -> None:
    long, exact = "k" * 41, "e" * 40
    _, warnings = _fm(f"{long}: [[1]]\n{exact}: [[1]]", yaml_depth=2)
    assert warnings == (
        f"front matter properties '{'k' * 39}…', '{exact}' left out: nested deeper than 2"
        f" levels (limits.yaml_depth {HINT})",
    )


def test_lone_surrogates_are_replaced_and_pairs_joined() -> None:
    """The pure-Python YAML loader (used where libyaml is missing) lets `"\\ud800"` escapes
    through; a lone surrogate cannot be stored as UTF-8."""
    normaliser = parser._Normaliser(FrontMatterLimits())
    assert normaliser.text("é\ud800 \ud83d\ude00") == "é\ufffd 😀"
    assert normaliser.text("plain é") == "plain é"


def test_broken_front_matter_keeps_each_property_that_reads() -> None:
    fm, warnings = _fm(
        "title: Good\n"  # 2
        "created: {{date}}\n"  # 3: Templater's placeholder, a mapping as a key
        "tags:\n- a\n- b: 2\n"  # 4-6: a list at the start of its lines is part of `tags`
        "list:\n# a comment: x\n  - one\n  - two: 2\n"  # 7-10: so are comments and indents
        "t: a: {{x}}\n"  # 11: broken
        "d: 2026-02-30\n"  # 12
        "last: ok"  # 13
    )
    assert fm == {
        "title": "Good",
        "tags": ["a", {"b": 2}],
        "list": ["one", {"two": 2}],
        "d": "2026-02-30",
        "last": "ok",
    }
    assert warnings == (
        "broken YAML front matter: skipped 'created' at line 3: found unhashable key;"
        " 't' at line 11: mapping values are not allowed in this context;"
        " the other properties were kept",
        "line 12: '2026-02-30' is not a real date or time; kept as text",
    )


def test_broken_front_matter_read_in_parts_keeps_the_limits() -> None:
    text = "a: [1, 2]\nb: {{x}}\nc: [3, 4]"  # the limits hold across the parts
    assert _fm(text, yaml_values=5) == (
        {"a": [1, 2]},
        (
            "broken YAML front matter: skipped 'b' at line 3: found unhashable key;"
            " the other properties were kept",
            "front matter property 'c' left out: more than 5 values with YAML aliases"
            f" expanded (limits.yaml_values {HINT})",
        ),
    )
    assert _fm("a: 1\nb: {{x}}\nc: 2\nd: 3", properties=2) == (
        {"a": 1, "c": 2},
        (
            "broken YAML front matter: skipped 'b' at line 3: found unhashable key;"
            " the other properties were kept",
            "front matter has more than 2 properties; only the first 2 were read"
            f" (limits.properties {HINT})",
        ),
    )


def test_broken_front_matter_with_no_broken_property() -> None:
    assert _fm("oops\na: 1") == (
        {"a": 1},
        ("broken YAML front matter: skipped part of it; the other properties were kept",),
    )


def test_front_matter_nothing_of_which_reads() -> None:
    assert _fm(": : :") == (
        {},
        (
            "broken YAML front matter at line 2: did not find expected key;"
            " the note is indexed as text",
        ),
    )
    assert _fm("- a\n- b") == ({}, ("front matter is not a mapping of properties; ignored",))


def test_yaml_errors_say_where_and_what() -> None:
    assert parser._yaml_error(yaml.YAMLError("first\nsecond"), 2) == ": first"
    assert parser._yaml_error(ValueError("v" * 81), 2) == f": ValueError: {'v' * 79}…"
    assert parser._yaml_error(RecursionError("too deep"), 2) == ": RecursionError: too deep"
    with pytest.raises(yaml.YAMLError) as caught:
        parser._read_yaml("a: 1\nb: [\n", 5)  # the note's line 5 is the YAML's first
    assert parser._yaml_error(caught.value, 5) == " at line 7: did not find expected node content"
