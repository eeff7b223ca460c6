"""Obsidian's search operators (issue 13 §4): parsing, bad input, and search end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from vaultmem import query
from vaultmem.errors import UsageError
from vaultmem.query import AllOf, AnyOf, Not, QueryError, Term, parse
from vaultmem.vault import Vault


def test_words_rank_and_operators_filter() -> None:
    p = parse('"heat pump" -draft tag:#home/energy quick')
    assert p.text == "heat pump quick"
    assert p.filter == AllOf(
        (
            Term("phrase", "heat pump", 0),
            Not(Term("word", "draft", 13)),
            Term("tag", "home/energy", 19),
        )
    )
    assert parse("plain words only").filter is None
    assert parse("a OR b c").filter is None  # words only rank, OR or not


def test_or_groups_and_parentheses() -> None:
    p = parse("(soup OR tag:#stew) -tag:old")
    assert p.text == "soup"
    assert p.filter == AllOf(
        (AnyOf((Term("word", "soup", 1), Term("tag", "stew", 9))), Not(Term("tag", "old", 21)))
    )
    assert parse("tag:a OR tag:b OR tag:c").filter == AnyOf(
        (Term("tag", "a", 0), Term("tag", "b", 9), Term("tag", "c", 18))
    )
    assert parse("x or y").filter is None  # lower-case "or" is a word, as in Obsidian


def test_operator_values() -> None:
    assert parse("section:(heat pump)").filter == Term("section", "heat pump", 0)
    assert parse('line:"a b" file:Plan.md').filter == AllOf(
        (Term("line", "a b", 0), Term("file", "Plan", 11))
    )
    assert parse("path:/work/").filter == Term("path", "work/", 0)
    assert parse("task-done:call").filter == Term("task-done", "call", 0)
    assert parse("section:(heat pump)").text == "heat pump"  # their words rank too


def test_operators_in_another_case_are_operators() -> None:
    assert parse("TAG:#x Path:a").filter == AllOf((Term("tag", "x", 0), Term("path", "a", 7)))


@pytest.mark.parametrize(
    ("text", "problem", "at"),
    [
        ("tag:", "tag: needs a value", 0),
        ("notes tag: x", "tag: needs a value", 6),
        ("path:../secrets", "cannot leave the vault", 0),
        ("path:a/../../b", "cannot leave the vault", 0),
        ('line:("a b)', "quote is never closed", 6),
        ("section:()", "section: needs a value", 0),
        ("--x", "double '-'", 0),
    ],
)
def test_a_malformed_query_points_at_its_bad_part(text: str, problem: str, at: int) -> None:
    with pytest.raises(QueryError) as caught:
        parse(text)
    err = caught.value
    assert isinstance(err, UsageError)  # exit code 2, as any usage error
    assert problem in str(err) and err.at == at
    shown, caret = str(err).splitlines()[1:]
    assert caret.index("^") - 2 == at and shown[2:] == text  # the caret under the bad part


@pytest.mark.parametrize(
    ("text", "words", "notice"),
    [
        # a question people type, from LoCoMo: the stray quote must not refuse it
        (
            'When did Joanna first watch "Eternal Sunshine of the Spotless Mind?',
            "When did Joanna first watch Eternal Sunshine of the Spotless Mind",
            'a quote never closed is ignored (character 29: … Joanna first watch "Eternal',
        ),
        ("a smiley :)", "a smiley", "a ')' with no '(' is ignored (character 11:"),
        ("x OR", "x", "an OR with nothing after it is ignored (character 3:"),
        ("OR x", "x", "an OR with nothing before it is ignored (character 1:"),
        ("a AND (b OR", "a AND b", "an OR with nothing after it is ignored (character 10:"),
        ("a (b OR c", "a b c", "a '(' never closed is closed at the end (character 3:"),
    ],
)
def test_unbalanced_quotes_parentheses_and_a_lone_or_are_searched_with_a_note(
    text: str, words: str, notice: str
) -> None:
    parsed = parse(text)
    assert parsed.text == words
    assert any(n.startswith(notice) for n in parsed.notices), parsed.notices


def test_unknown_operator_is_words_with_a_notice() -> None:
    p = parse("color:red shoes")
    assert p.filter is None and p.text == "color red shoes"
    assert p.notices == ("unknown operator 'color:' searched as words",)


def test_lone_dash_only_negatives_long_queries_and_stop_words() -> None:
    assert parse("- apples").notices == ("a lone '-' excludes nothing: ignored",)
    assert parse("-").text == "" and parse("-").filter is None
    assert query.only_excludes(parse("-draft -tag:old").filter)
    assert not query.only_excludes(parse("-draft tag:new").filter)
    long = parse("word " * 2500)  # 12.5 KB
    assert len(long.text.split()) == query.MAX_WORDS
    assert any("first 64 words" in n for n in long.notices)
    huge = "tag: " + "x" * 10_000
    with pytest.raises(QueryError) as caught:
        parse(huge)
    assert len(str(caught.value)) < 300  # the message shows a window, not 10 KB
    assert len(parse('"' + "x " * 5000).notices[0]) < 200


NOTES: dict[str, str | bytes] = {
    "energy/heat pump.md": "---\ntags: [home/energy]\n---\n"
    "# Heat pump\nThe heat pump runs at night.\n"
    "## Costs\nThe tariff is cheap.\n- [ ] call the installer\n",
    "energy/draft.md": "#draft\nA heat pump draft: pump sizes.\n- [x] measure the pump\n",
    "kitchen/soup.md": "# Soup\nHeat the stock, then pump up the flavour.\n",
    "kitchen/stew.md": "---\ntags: [stew]\n---\nSlow cooking in a pot.\n",
    "work/plan.md": "# Plan\nheat\n\npump\n",
}


@pytest.fixture
def vault(make_vault: MakeVault) -> Vault:
    v = make_vault(NOTES)
    v.reindex()
    return v


def paths(vault: Vault, text: str, mode: str = "hybrid") -> set[str]:
    return {h.path for h in vault.search(text, mode=mode).hits}  # type: ignore[arg-type]


def test_search_with_operators(vault: Vault) -> None:
    assert paths(vault, '"heat pump"') == {"energy/heat pump.md", "energy/draft.md"}
    assert paths(vault, '"heat pump" -draft') == {"energy/heat pump.md"}
    assert paths(vault, "heat -tag:#draft tag:home") == {"energy/heat pump.md"}
    assert paths(vault, "cooking tag:stew OR path:kitchen") == {
        "kitchen/soup.md",
        "kitchen/stew.md",
    }
    assert paths(vault, "heat file:plan") == {"work/plan.md"}
    assert paths(vault, "file:plan.md") == {"work/plan.md"}  # operators alone list the notes
    # work/plan.md holds both words in one section, but not on one line
    assert "work/plan.md" in paths(vault, "section:(heat pump)")
    assert "work/plan.md" not in paths(vault, '"heat pump"')  # a blank line between them
    assert paths(vault, "line:(heat pump)") == {
        "energy/heat pump.md",
        "energy/draft.md",
        "kitchen/soup.md",
    }
    assert "work/plan.md" in paths(vault, "heat pump")
    assert paths(vault, "task:installer") == {"energy/heat pump.md"}
    assert paths(vault, "task-done:pump") == {"energy/draft.md"}
    assert paths(vault, "task-todo:pump") == set()
    assert paths(vault, "TAG:#STEW") == {"kitchen/stew.md"}
    assert paths(vault, "pump tag:draft", mode="keyword") == {"energy/draft.md"}


@pytest.mark.parametrize(
    ("text", "loose", "phrases"),
    [
        ('what about "heat pump" costs', "what about  heat pump  costs", ("heat pump",)),
        ('"a b" x "c"', " a b  x  c ", ("a b", "c")),
        ('"heat pump"', " heat pump ", ("heat pump",)),
    ],
)
def test_loosened_turns_phrases_into_words(text: str, loose: str, phrases: tuple[str]) -> None:
    assert query.loosened(text) == (loose, phrases)
    assert parse(loose).filter is None  # nothing left that filters


@pytest.mark.parametrize(
    "text",
    ["heat pump", '"heat pump" -draft', '"heat pump" tag:x', '("a b" OR c)', '"a b" OR c',
     '-"a b" c', "tag:", '"never closed'],
)  # fmt: skip
def test_loosened_leaves_every_other_query(text: str) -> None:
    assert query.loosened(text) is None


def test_a_phrase_no_note_holds_is_answered_by_its_words_with_a_notice(vault: Vault) -> None:
    for mode in ("hybrid", "keyword", "semantic"):
        result = vault.search('when is the "cheap night tariff"', mode=mode)  # type: ignore[arg-type]
        assert "energy/heat pump.md" in {h.path for h in result.hits}, mode
        said = 'no note holds the exact phrase "cheap night tariff"'
        assert any(n.startswith(said) for n in result.notices), (mode, result.notices)
        assert result.query == 'when is the "cheap night tariff"'
    # a phrase some note holds keeps Obsidian's meaning: only those notes, no notice
    held = vault.search('"heat pump"')
    assert {h.path for h in held.hits} == {"energy/heat pump.md", "energy/draft.md"}
    assert not any("exact phrase" in n for n in held.notices)
    # with an operator beside it, nothing matched means nothing matched
    assert vault.search('"cheap night tariff" tag:stew').hits == ()
    assert vault.search('"cheap night tariff" -draft').hits == ()
    assert vault.search('"cheap night tariff"', tag="stew").hits == ()  # flags, as operators
    assert vault.search('"cheap night tariff"', path="kitchen").hits == ()
    # words no note has: still nothing by keywords, and no notice about the phrase
    none = vault.search('"zyxw qvut"', mode="keyword")
    assert none.hits == () and not any("exact phrase" in n for n in none.notices)


def test_bad_queries_through_search(vault: Vault) -> None:
    with pytest.raises(QueryError):
        vault.search("heat tag:")
    stray = vault.search('"heat pump')
    assert stray.hits and "quote never closed" in stray.notices[0]
    result = vault.search("-heat -pump")
    # only exclusions ("-webkit-box-shadow" is a CSS name): its words are searched, with a note
    assert result.hits and "only says what to leave out" in result.notices[-1]
    assert vault.search("-").hits == ()
    assert vault.search("the of and").hits  # stop words only: searched anyway
    result = vault.search("pump colour:blue")
    assert "unknown operator 'colour:'" in result.notices[0]
    assert vault.search("heat " * 2500).hits  # 12.5 KB: cut to 64 words, still answered


def test_cli_refuses_a_malformed_query_and_a_batch_goes_on(tmp_path: Path) -> None:
    from tests.conftest import write_files
    from tests.test_cli import run

    root = tmp_path / "v"
    write_files(root, {"a.md": "# A\nsolar panels on the roof\n", "b.md": "# B\n#draft solar\n"})
    base = ("--vault", str(root))
    assert run(*base, "reindex").returncode == 0
    bad = run(*base, "search", "solar path:../x")
    assert bad.returncode == 2
    assert "cannot leave the vault" in bad.stderr and "^" in bad.stderr
    ok = run(*base, "search", "solar -tag:draft", "--json")
    assert [r["path"] for r in json.loads(ok.stdout)["results"]] == ["a.md"]
    batch = run(*base, "search", "-", "--json", stdin="solar tag:\nsolar tag:draft\n")
    assert batch.returncode == 0
    first, second = (json.loads(line) for line in batch.stdout.splitlines())
    assert first["results"] == [] and "tag: needs a value" in first["notices"][0]
    assert [r["path"] for r in second["results"]] == ["b.md"]


def test_dates_are_read_from_the_words_as_typed() -> None:
    """The ranking words split "2026-03-01" into 2026 03 01; the date router must see it whole
    (found when query operators arrived: ISO dates in queries stopped routing)."""
    parsed = parse('quince 2026-03-01 "heat pump" -draft tag:x')
    assert parsed.typed == "quince 2026-03-01 heat pump"
    assert "2026-03-01" not in parsed.text
