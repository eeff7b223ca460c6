"""The note-name fuzzy matcher behind the pickers: pure functions, no Textual."""

from __future__ import annotations

import pytest

from vaultmem.tui.fuzzy import (
    Entry,
    NameIndex,
    allowed_typos,
    fold,
    score,
    typo_variants,
)

# The sample vault's names the way the path picker sees them: title, aliases, path.
NOTES = [
    Entry("Maya Chen.md", ("Maya Chen", "Maya", "M. Chen", "Maya Chen.md")),
    Entry("personal/recipes/Shakshuka.md", ("Shakshuka", "personal/recipes/Shakshuka.md")),
    Entry("personal/recipes/Miso Soup.md", ("Miso Soup", "personal/recipes/Miso Soup.md")),
    Entry(
        "personal/recipes/Sourdough Loaf.md",
        ("Sourdough Loaf", "personal/recipes/Sourdough Loaf.md"),
    ),
    Entry("personal/Café Lumière.md", ("Café Lumière", "personal/Café Lumière.md")),
    Entry(
        "personal/travel/日本旅行.md",
        ("日本旅行", "Japan trip 2026", "Japan 2026", "personal/travel/日本旅行.md"),
    ),
    Entry(
        "work/projects/Heatwise Gateway.md",
        ("Heatwise Gateway", "work/projects/Heatwise Gateway.md"),
    ),
    Entry("work/Heatwise.md", ("Heatwise", "work/Heatwise.md")),
    Entry(
        "work/projects/Tariff Optimizer.md",
        ("Tariff Optimizer", "work/projects/Tariff Optimizer.md"),
    ),
    Entry(
        "episodes/2026-11-26 Tariff sync outage.md",
        ("2026-11-26 Tariff sync outage", "episodes/2026-11-26 Tariff sync outage.md"),
    ),
    Entry(
        "work/people/Priya Raman.md",
        ("Priya Raman", "Priya", "PR", "work/people/Priya Raman.md"),
    ),
    Entry("work/Meeting notes.md", ("Meeting notes", "work/Meeting notes.md")),
    Entry("personal/home/Meeting notes.md", ("Meeting notes", "personal/home/Meeting notes.md")),
    Entry("personal/books/The Overstory.md", ("The Overstory", "personal/books/The Overstory.md")),
]


@pytest.fixture(scope="module")
def index() -> NameIndex:
    return NameIndex(NOTES)


def top(index: NameIndex, query: str) -> str:
    found = index.search(query, limit=5)
    assert found, f"nothing found for {query!r}"
    return found[0].key


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("hg", "work/projects/Heatwise Gateway.md"),  # word-start abbreviation
        ("tso", "episodes/2026-11-26 Tariff sync outage.md"),
        ("tariff opt", "work/projects/Tariff Optimizer.md"),  # spaces are ignored
        ("heatwise", "work/Heatwise.md"),  # the exact title beats the longer one
        ("maya", "Maya Chen.md"),  # an exact alias
        ("pr", "work/people/Priya Raman.md"),  # a two-letter alias, exactly
        ("cafe lum", "personal/Café Lumière.md"),  # accents ignored
        ("japan trip", "personal/travel/日本旅行.md"),
        ("日本", "personal/travel/日本旅行.md"),
        ("recipes/miso", "personal/recipes/Miso Soup.md"),  # a path
        ("SHAKSHUKA", "personal/recipes/Shakshuka.md"),  # case ignored
        ("shaksuka", "personal/recipes/Shakshuka.md"),  # a missing letter is still in order
    ],
)
def test_abbreviations_and_names_find_their_note(
    index: NameIndex, query: str, expected: str
) -> None:
    assert top(index, query) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Shakshuak", "personal/recipes/Shakshuka.md"),  # two letters swapped
        ("sourdouhg", "personal/recipes/Sourdough Loaf.md"),
        ("overstroy", "personal/books/The Overstory.md"),
        ("shakshoka", "personal/recipes/Shakshuka.md"),  # a wrong letter
        ("tarrif optimiser", "work/projects/Tariff Optimizer.md"),  # two typos in a long query
    ],
)
def test_a_typo_still_finds_the_note_but_ranks_below_exact_matches(
    index: NameIndex, query: str, expected: str
) -> None:
    (best, *_) = index.search(query)
    assert best.key == expected
    assert best.typos >= 1


def test_in_order_matches_always_rank_above_typo_matches() -> None:
    # "gatewya" is in "g-a-t-e-w-a-y … spread out" in order, however poorly; in "Gateway"
    # only with a letter dropped. The in-order match ranks first despite its low score.
    spread = "g" + "_" * 40 + "a" * 1 + "_" * 40 + "tewya"
    index = NameIndex([Entry("typo", ("Gateway",)), Entry("in order", (spread,))])
    found = index.search("gatewya", limit=5)
    assert [(m.key, m.typos) for m in found] == [("in order", 0), ("typo", 1)]
    assert found[0].score < found[1].score


def test_typo_matches_are_only_looked_for_when_in_order_ones_are_few() -> None:
    index = NameIndex([Entry("typo", ("abcd",)), Entry("spread", ("axxxxxxbxxxxxdxxxxxxc",))])
    assert [m.key for m in index.search("abdc", limit=1)] == ["spread"]
    assert [m.key for m in index.search("abdc", limit=2)] == ["spread", "typo"]


def test_typos_are_only_tolerated_in_longer_queries() -> None:
    assert [allowed_typos(q) for q in ("abc", "abcd", "abcdefg", "abcdefgh")] == [0, 1, 1, 2]
    index = NameIndex([Entry("a", ("Miso",))])
    assert index.search("mxo") == []  # three letters: no typo allowed
    assert [m.key for m in index.search("mixo")] == ["a"]


def test_strewn_letters_in_a_long_path_are_not_a_typo_match() -> None:
    index = NameIndex([Entry("p", ("mozilla/api/proxy/requestdetails",))])
    assert index.search("xyzq") == []


def test_each_entry_appears_once_with_its_best_name(index: NameIndex) -> None:
    found = index.search("priya")
    keys = [m.key for m in found]
    assert len(keys) == len(set(keys))
    assert found[0].name == "Priya"  # the alias matches exactly: better than the title


def test_positions_point_at_the_matched_letters() -> None:
    match = score("hg", "Heatwise Gateway")
    assert match is not None
    assert match.positions == (0, 9)
    assert "".join("Heatwise Gateway"[i] for i in match.positions) == "HG"
    match = score("cafe", "Café Lumière")
    assert match is not None and match.positions == (0, 1, 2, 3)


def test_word_starts_runs_and_prefixes_score_higher() -> None:
    def value(query: str, name: str) -> int:
        found = score(query, name)
        assert found is not None
        return found.score

    assert value("gw", "Gate Way") > value("gw", "Giraffe Taxonomy Wow")
    assert value("gate", "Gateway") > value("gate", "Big ate")
    assert value("sleep", "Sleep") > value("sleep", "Sleep Log") > value("sleep", "My Sleep Log")
    assert score("xyz", "Gateway") is None
    assert score("  ", "Gateway") is None


def test_ties_keep_the_given_order_among_equal_names() -> None:
    index = NameIndex([Entry("b", ("Notes",)), Entry("a", ("Notes",)), Entry("c", ("Notes",))])
    assert [m.key for m in index.search("notes")] == ["b", "a", "c"]


def test_typing_further_narrows_and_backspacing_widens_again(index: NameIndex) -> None:
    fresh = NameIndex(NOTES)
    for typed in ("m", "mi", "mis", "mi", "m", "ma", "may"):
        # the incremental narrowing must give exactly what a fresh index gives
        assert [m.key for m in index.search(typed)] == [
            m.key for m in NameIndex(NOTES).search(typed)
        ]
        fresh.search(typed)
    assert top(fresh, "may") == "Maya Chen.md"


def test_limit_and_empty_queries(index: NameIndex) -> None:
    assert index.search("", limit=5) == []
    assert index.search("e", limit=0) == []
    assert len(index.search("e", limit=3)) == 3
    assert index.size == len(NOTES)


def test_fold_keeps_one_character_per_character() -> None:
    for text in ("Café Lumière", "日本旅行", "İstanbul", "Straße", "ＡＢＣ", "e\u0301"):
        assert len(fold(text)) == len(text)
    assert fold("Café Lumière") == "cafe lumiere"
    assert fold("ＡＢＣ") == "abc"


def test_typo_variants_drop_each_letter_once() -> None:
    assert typo_variants("abc", 1) == {"bc", "ac", "ab"}
    assert typo_variants("aab", 1) == {"ab", "aa"}
    assert len(typo_variants("abcd", 2)) == 6
