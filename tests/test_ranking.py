"""Fusion and signals, on hand-made candidates with exact expected orders."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.dates import DateRoute
from vaultmem.ranking import Candidate, NoteFacts, Weights, for_query, name_match, rank


def cand(
    i: int,
    path: str,
    keyword: float | None = None,
    vector: float | None = None,
    heading: str = "",
    title: str = "",
) -> Candidate:
    return Candidate(i, path, title or path.removesuffix(".md"), heading, 1, 2, keyword, vector)


def test_keyword_leads_and_meaning_breaks_ties() -> None:
    found = rank(
        [cand(1, "a.md", 10.0, 0.1), cand(2, "b.md", 10.0, 0.9), cand(3, "c.md", 2.0, 0.95)],
        {},
        {"x"},
        Weights(heading=0, path=0, graph=0),
    )
    assert [r.path for r in found] == ["b.md", "a.md", "c.md"]
    # min-max over the candidates: 0.1 is the floor, 0.95 the top
    assert dict(found[0].parts) == {"keyword": 1.0, "vector": pytest.approx(0.3 * 0.8 / 0.85)}


def test_best_chunk_per_note_and_both_retrievers_merge() -> None:
    found = rank(
        [
            cand(1, "a.md", 4.0),
            cand(2, "a.md", 8.0),
            cand(3, "a.md", vector=0.5),
            cand(4, "b.md", vector=0.9),
        ],
        {},
        {"x"},
        Weights(heading=0, path=0, graph=0),
    )
    assert [r.path for r in found] == ["a.md", "b.md"]
    assert found[0].best.chunk_id == 2
    assert dict(found[1].parts) == {"vector": 0.3}  # no keyword evidence: meaning alone


def test_low_overlap_weighting_leans_on_meaning_when_asked() -> None:
    chunks = [cand(1, "a.md", 4.0, 0.2), cand(2, "b.md", 2.0, vector=0.9)]
    plain = rank(chunks, {}, {"x"}, Weights(heading=0, path=0, graph=0))
    leaning = rank(chunks, {}, {"x"}, Weights(heading=0, path=0, graph=0, low_overlap=1.0))
    assert [r.path for r in plain] == ["a.md", "b.md"]
    # two keyword notes (< 3): b's meaning counts double, 0.5 + 0.6 beats a's 1.0 + 0
    assert [r.path for r in leaning] == ["b.md", "a.md"]


def test_date_route_and_expired_notes() -> None:
    when = DateRoute(dt.date(2026, 11, 29), dt.date(2026, 11, 29), "yesterday", "run")
    found = rank(
        [cand(1, "notes/run.md", 5.0), cand(2, "daily/2026-11-29.md", 4.0), cand(3, "old.md", 5.0)],
        {"old.md": NoteFacts(expired=True)},
        {"run"},
        Weights(heading=0, path=0, graph=0),
        route=when,
    )
    assert [r.path for r in found] == ["daily/2026-11-29.md", "notes/run.md", "old.md"]
    assert dict(found[0].parts)["date"] == 0.5
    assert dict(found[2].parts)["expired"] == -0.5


def test_heading_path_and_graph_signals_are_bounded_tie_breakers() -> None:
    facts = {"b.md": NoteFacts(links=frozenset({"c.md", "d.md", "e.md", "f.md"}))}
    found = rank(
        [
            cand(1, "a.md", 10.0),
            cand(2, "b.md", 9.9),
            cand(3, "c.md", 1.0),
            cand(4, "d.md", 1.0),
            cand(5, "e.md", 1.0),
            cand(6, "f.md", 1.0),
            cand(7, "pump.md", 9.5, heading="Heat pump"),
        ],
        facts,
        {"pump"},
        Weights(vector=0),
    )
    graph = dict(found[0].parts).get("graph") or dict(found[1].parts).get("graph")
    assert graph == 0.03  # four linked top notes count as three: capped
    assert [r.path for r in found][:3] == ["pump.md", "b.md", "a.md"]


def test_empty() -> None:
    assert rank([], {}, {"x"}) == []


# --- experimental signals (issue 13): off by default, measured in bench/devset.py -------------


def test_name_match_rewards_the_note_named_by_the_query() -> None:
    from vaultmem.ranking import name_match

    assert name_match({"daily", "notes"}, ["Daily notes"]) == 1.0
    assert name_match({"daily", "notes"}, ["Daily notes plugin"]) == pytest.approx(2 / 3)
    assert name_match({"daily", "notes"}, ["Templates", "Daily notes"]) == 1.0  # best name
    assert name_match({"configuration"}, ["Configuration folder"]) == 0.5
    # a shared five-letter prefix stands in for stemming, on words longer than five letters
    assert name_match({"templates"}, ["Template"]) == 1.0
    assert name_match({"configurations"}, ["Configuration"]) == 1.0
    assert name_match({"notes"}, ["Note"]) == 0.0
    assert name_match({"daily"}, []) == 0.0
    assert name_match(set(), ["Daily notes"]) == 0.0


def test_title_signal_lifts_the_named_note_over_a_heading_elsewhere() -> None:
    chunks = [
        cand(1, "guides/Workflow.md", 10.0, heading="Daily notes"),
        cand(2, "Daily notes.md", 8.0),
    ]
    names = {"guides/Workflow.md": ("Workflow",), "Daily notes.md": ("Daily notes", "Journal")}
    plain = rank(chunks, {}, {"daily", "notes"}, Weights(graph=0, title=0.0), names=names)
    titled = rank(chunks, {}, {"daily", "notes"}, Weights(graph=0, title=0.5), names=names)
    assert [r.path for r in plain] == ["guides/Workflow.md", "Daily notes.md"]
    assert [r.path for r in titled] == ["Daily notes.md", "guides/Workflow.md"]
    assert dict(titled[0].parts)["title"] == 0.5
    # without names the signal cannot fire
    assert "title" not in dict(rank(chunks, {}, {"daily"}, Weights(title=0.5))[0].parts)


def test_other_sections_add_bounded_evidence() -> None:
    from vaultmem.ranking import other_sections

    assert other_sections([1.0]) == 0.0
    assert other_sections([0.4, 1.0, 0.6]) == pytest.approx(0.6 + 0.5 * 0.4)
    assert other_sections([1.0, 1.0, 1.0, 1.0]) == 1.0
    chunks = [cand(1, "a.md", 10.0), cand(2, "b.md", 9.0), cand(3, "b.md", 8.0)]
    plain = rank(chunks, {}, {"x"}, Weights(heading=0, path=0, graph=0))
    summed = rank(chunks, {}, {"x"}, Weights(heading=0, path=0, graph=0, evidence=0.3))
    assert [r.path for r in plain] == ["a.md", "b.md"]
    assert [r.path for r in summed] == ["b.md", "a.md"]  # 0.9 + 0.3 x 0.8 beats 1.0
    assert dict(summed[0].parts)["evidence"] == pytest.approx(0.3 * 0.8)


def test_whole_note_scores_add_a_bounded_note_signal() -> None:
    chunks = [cand(1, "a.md", 10.0), cand(2, "b.md", 9.0), cand(3, "c.md", vector=0.5)]
    scores = {"b.md": 1.0, "a.md": 0.2, "c.md": 0.9}
    plain = rank(chunks, {}, {"x"}, Weights(heading=0, path=0, graph=0, vector=0.0))
    noted = rank(
        chunks,
        {},
        {"x"},
        Weights(heading=0, path=0, graph=0, vector=0.0, note=0.6),
        note_scores=scores,
    )
    assert [r.path for r in plain][:2] == ["a.md", "b.md"]
    assert [r.path for r in noted] == ["b.md", "a.md", "c.md"]  # 0.9 + 0.6 beats 1.0 + 0.12
    assert dict(noted[0].parts)["note"] == pytest.approx(0.6)
    assert dict(noted[2].parts) == {"note": pytest.approx(0.54)}  # found by meaning only
    # without scores the signal cannot fire
    assert "note" not in dict(rank(chunks, {}, {"x"}, Weights(note=0.6))[0].parts)


# --------------------------------------------------------------------------- found by mutation
# (docs/TESTING.md, "ranking"): the five-letter prefix match of name_match at its edges, names
# with no words, and the date signal's sources


@pytest.mark.parametrize(
    ("query", "names", "score"),
    [
        ({"managing"}, ["Manager"], 1.0),  # six letters or more: the first five match
        ({"manage"}, ["Manager"], 1.0),  # a query word of exactly six letters
        ({"managing"}, ["Manage"], 1.0),  # a name word of exactly six letters
        ({"tasks"}, ["Tasksheet"], 0.0),  # five letters: whole words only
        ({"tasksheet"}, ["Tasks"], 0.0),
        ({"heating", "zzzzzzz"}, ["Heating"], 0.5),  # a long word matching nothing counts 0
        ({"daily", "notes"}, ["", "!!", "Daily notes"], 1.0),  # wordless names are skipped
        ({"daily", "notes"}, ["Daily notes", ""], 1.0),
    ],
)
def test_name_match_prefixes_at_their_edges(
    query: set[str], names: list[str], score: float
) -> None:
    assert name_match(query, names) == pytest.approx(score)


def _date_part(path: str, facts: NoteFacts) -> float | None:
    when = DateRoute(dt.date(2026, 3, 1), dt.date(2026, 3, 1), "March 1", "")
    (found,) = rank([cand(1, path, 1.0)], {path: facts}, {"x"}, Weights(graph=0), route=when)
    return dict(found.parts).get("date")


def test_the_date_signal_reads_the_path_and_the_date_property_alike() -> None:
    assert _date_part("daily/2026-03-01.md", NoteFacts(date="2026-05-05")) == 0.5
    assert _date_part("log.md", NoteFacts(date="2026-03-01T09:30:00")) == 0.5
    assert _date_part("log.md", NoteFacts(date="2026-03-01")) == 0.5
    assert _date_part("daily/2026-03-02.md", NoteFacts(date="2026-03-03")) is None
    assert _date_part("log.md", NoteFacts()) is None


@pytest.mark.parametrize(
    ("query", "heading", "share"),
    [
        (set(), "Plan", 0.0),  # no query words: no share
        ({"plan", "zzz"}, "Plan", 0.5),
        ({"plan", "budget"}, "The plan", 0.5),
        ({"zzzzzzz"}, "Plan", 0.0),
        ({"tasks"}, "Tasksheet", 0.0),  # five letters: whole words only
        ({"manage"}, "Manager", 1.0),  # six: the first five letters match
        ({"managing"}, "Manager", 1.0),
    ],
)
def test_the_heading_signal_is_the_share_of_query_words_it_holds(
    query: set[str], heading: str, share: float
) -> None:
    (found,) = rank(
        [cand(1, "n.md", 1.0, heading=heading)], {}, query, Weights(heading=1.0, path=0, graph=0)
    )
    assert dict(found.parts).get("heading", 0.0) == pytest.approx(share)


def test_the_section_shown_is_the_one_carrying_most_of_the_score() -> None:
    """Keyword scores count relative to the best one, so a small bm25 still leads."""
    found = rank(
        [cand(1, "a.md", 0.1, 0.1), cand(2, "a.md", 0.05, 0.9), cand(3, "b.md", 0.1, 0.1)],
        {},
        {"x"},
        Weights(heading=0, path=0, graph=0),
    )
    assert {r.path: r.best.chunk_id for r in found}["a.md"] == 1
    found = rank(
        [cand(1, "a.md", 2.0, 0.0), cand(2, "a.md", None, 0.6), cand(3, "b.md", 4.0, 0.0)],
        {},
        {"x"},
        Weights(heading=0, path=0, graph=0),
    )
    assert {r.path: r.best.chunk_id for r in found}["a.md"] == 1  # meaning alone adds less


def _shown(candidates: list[Candidate]) -> int:
    """The chunk rank() shows for note a.md among `candidates`."""
    found = rank(candidates, {}, {"x"}, Weights(heading=0, path=0, graph=0))
    return {r.path: r.best.chunk_id for r in found}["a.md"]


def test_the_section_shown_weighs_meaning_by_its_place_in_the_spread() -> None:
    # vectors spread from 0.4 to 0.5: a's second section is at the top of it, the first at
    # the bottom, which outweighs a fifth less keyword evidence
    c = cand(3, "b.md", 1.0, 0.4)
    assert _shown([cand(1, "a.md", 1.0, 0.4), cand(2, "a.md", 0.8, 0.5), c]) == 2
    assert _shown([cand(1, "a.md", 1.0, 0.4), cand(2, "a.md", 1.0, 0.5), c]) == 2
    # no spread (one note): every section with a vector gets the whole vector weight, once
    assert _shown([cand(1, "a.md", 1.0), cand(2, "a.md", 0.5, 0.9)]) == 1
    assert _shown([cand(1, "a.md", 1.0), cand(2, "a.md", 0.75, 0.9)]) == 2
    # a section without a vector against one at the bottom of the spread: keywords decide
    assert _shown([cand(1, "a.md", 1.0), cand(2, "a.md", 0.5, 0.4), cand(3, "b.md", 1.0, 0.5)]) == 1
    # a tie goes to the first section
    assert _shown([cand(7, "a.md", 1.0, 0.5), cand(4, "a.md", 1.0, 0.5), c]) == 4


def test_rank_returns_ten_notes_unless_told() -> None:
    many = [cand(i, f"n{i:02}.md", float(20 - i)) for i in range(12)]
    assert len(rank(many, {}, {"x"})) == 10
    assert len(rank(many, {}, {"x"}, limit=11)) == 11


@pytest.mark.parametrize(("keyword_notes", "boosted"), [(2, True), (3, False)])
def test_low_overlap_counts_only_notes_the_keywords_found(
    keyword_notes: int, boosted: bool
) -> None:
    """Fewer than three notes with keyword evidence: the vector weight grows (low_overlap)."""
    found = [cand(i, f"k{i}.md", 0.5, 0.1) for i in range(keyword_notes)]
    found += [cand(10, "v1.md", None, 1.0), cand(11, "v2.md", None, 0.5)]  # meaning only
    ranked = rank(found, {}, {"x"}, Weights(heading=0, path=0, graph=0, low_overlap=1.0))
    top = dict(next(r for r in ranked if r.path == "v1.md").parts)
    assert top["vector"] == pytest.approx(0.6 if boosted else 0.3)


NOW = dt.datetime(2026, 3, 31, 12, tzinfo=dt.UTC)


def test_each_signal_is_named_and_the_score_is_their_sum() -> None:
    found = rank(
        [cand(1, "plan.md", 2.0, 0.5, heading="Plan"), cand(2, "b.md", 1.0, 0.1)],
        {},
        {"plan"},
        Weights(graph=0),
    )
    assert [name for name, _ in found[0].parts] == ["keyword", "vector", "heading", "path"]
    for r in found:
        assert r.score == pytest.approx(sum(v for _, v in r.parts))
    (alone,) = rank([cand(1, "a.md", 1.0, 0.4)], {}, {"x"}, Weights(graph=0))
    assert dict(alone.parts)["vector"] == pytest.approx(0.3)  # one note: no spread, full weight


def _freshness(modified: dt.datetime | None, now: dt.datetime | None = NOW) -> float | None:
    facts = {"a.md": NoteFacts(modified=modified)}
    (found,) = rank([cand(1, "a.md", 1.0)], facts, {"x"}, Weights(freshness=1.0), now=now)
    return dict(found.parts).get("freshness")


def test_freshness_halves_about_every_three_weeks() -> None:
    assert _freshness(NOW) == pytest.approx(1.0)
    assert _freshness(NOW - dt.timedelta(days=30)) == pytest.approx(math.exp(-1))
    assert _freshness(NOW - dt.timedelta(days=60)) == pytest.approx(math.exp(-2))
    assert _freshness(NOW + dt.timedelta(days=5)) == pytest.approx(1.0)  # a clock behind
    assert _freshness(None) is None and _freshness(NOW, now=None) is None
    # off by default, with or without a clock and a modification time
    (found,) = rank([cand(1, "a.md", 1.0)], {"a.md": NoteFacts()}, {"x"}, now=NOW)
    assert "freshness" not in dict(found.parts)


def test_title_and_note_signals_of_notes_they_know_nothing_about_are_zero() -> None:
    weights = Weights(title=1.0, note=1.0, heading=0, path=0, graph=0)
    names = {"a.md": ["Plan"]}
    found = rank([cand(1, "a.md", 1.0), cand(2, "b.md", 1.0)], {}, {"plan"}, weights, names=names,
                 note_scores={"a.md": 0.5})  # fmt: skip
    parts = {r.path: dict(r.parts) for r in found}
    assert parts["a.md"]["title"] == 1.0 and parts["a.md"]["note"] == 0.5
    assert "title" not in parts["b.md"] and "note" not in parts["b.md"]


def test_the_evidence_signal_needs_keyword_evidence() -> None:
    weights = Weights(evidence=1.0, heading=0, path=0, graph=0)
    found = rank([cand(1, "a.md", 0.5), cand(2, "a.md", 0.25), cand(3, "a.md", None, 0.9)],
                 {}, {"x"}, weights)  # fmt: skip
    assert dict(found[0].parts)["evidence"] == pytest.approx(0.5)  # 0.25 of 0.5; meaning: 0
    only_meaning = rank([cand(1, "a.md", None, 0.9), cand(2, "a.md", None, 0.8)], {}, {"x"},
                        weights)  # fmt: skip
    assert "evidence" not in dict(only_meaning[0].parts)


def test_the_date_signal_reads_the_path_and_the_title_each() -> None:
    when = DateRoute(dt.date(2026, 3, 1), dt.date(2026, 3, 1), "March 1", "")
    for path, title in [("daily/2026-03-01.md", "Daily"), ("log.md", "2026-03-01 standup")]:
        c = Candidate(1, path, title, "", 1, 2, 1.0)
        (found,) = rank([c], {}, {"x"}, Weights(graph=0), route=when)
        assert dict(found.parts)["date"] == 0.5, path


def _graph_part(limit: int, linked_to: int) -> float | None:
    """The graph signal of the best of 30 notes when it links to the note ranked `linked_to`."""
    paths = [f"n{i:02}.md" for i in range(30)]
    candidates = [cand(i, p, float(100 - i)) for i, p in enumerate(paths)]
    facts = {paths[0]: NoteFacts(links=frozenset({paths[linked_to]}))}
    found = rank(candidates, facts, {"x"}, Weights(heading=0, path=0), limit=limit)
    return dict(found[0].parts).get("graph")


def test_the_graph_signal_counts_links_among_twice_the_limit_or_ten() -> None:
    assert _graph_part(8, 15) == pytest.approx(0.01)  # within the best 16
    assert _graph_part(8, 16) is None
    assert _graph_part(8, 20) is None
    assert _graph_part(5, 9) == pytest.approx(0.01)  # at least the best 10
    assert _graph_part(5, 10) is None


def test_the_graph_signal_grows_with_links_up_to_three() -> None:
    paths = [f"n{i}.md" for i in range(5)]
    for links, part in [(1, 0.01), (2, 0.02), (3, 0.03), (4, 0.03)]:
        facts = {paths[0]: NoteFacts(links=frozenset(paths[1 : 1 + links]))}
        found = rank([cand(i, p, 10.0 - i) for i, p in enumerate(paths)], facts, {"x"})
        assert dict(found[0].parts)["graph"] == pytest.approx(part)


# --------------------------------------------------------------------------- reciprocal-rank fusion


def test_rrf_fusion_counts_places_not_distances() -> None:
    # a.md wins the keywords by a mile, b.md wins meaning by a hair: blended, a.md's lead in
    # keywords decides; by places, each is first once and second once
    chunks = [cand(1, "a.md", 100.0, 0.50), cand(2, "b.md", 1.0, 0.51), cand(3, "c.md", 0.5, 0.1)]
    off = dict(heading=0, path=0, graph=0, title=0, note=0)
    blended = rank(chunks, {}, {"x"}, Weights(**off, vector=1.0))  # type: ignore[arg-type]
    fused = rank(chunks, {}, {"x"}, Weights(**off, vector=1.0, fusion="rrf", rrf_k=0))  # type: ignore[arg-type]
    assert blended[0].path == "a.md" and blended[0].score > 1.9 * blended[1].score
    assert {r.path for r in fused[:2]} == {"a.md", "b.md"}
    assert fused[0].score == pytest.approx(fused[1].score)  # 1/1 + 1/2 each (k = 0)
    # rank 1 is worth the full weight, rank n (k + 1) / (k + n)
    third = dict(fused[2].parts)
    assert third["keyword"] == pytest.approx(1 / 3) and third["vector"] == pytest.approx(1 / 3)
    k60 = rank(chunks, {}, {"x"}, Weights(**off, vector=1.0, fusion="rrf"))  # type: ignore[arg-type]
    assert dict(k60[-1].parts)["keyword"] == pytest.approx(61 / 63)


def test_rrf_fusion_places_the_note_scores_and_shares_ties() -> None:
    chunks = [cand(1, "a.md", 2.0), cand(2, "b.md", 2.0), cand(3, "c.md", 1.0)]
    found = rank(
        chunks,
        {},
        {"x"},
        Weights(heading=0, path=0, graph=0, title=0, note=0.5, fusion="rrf", rrf_k=0),
        note_scores={"c.md": 0.9, "a.md": 0.3},
    )
    parts = {r.path: dict(r.parts) for r in found}
    assert parts["a.md"]["keyword"] == parts["b.md"]["keyword"] == 1.0  # a tie shares place 1
    assert parts["c.md"]["keyword"] == pytest.approx(1 / 3)
    assert parts["c.md"]["note"] == 0.5 and parts["a.md"]["note"] == pytest.approx(0.25)
    assert "note" not in parts["b.md"]  # no whole-note score: no note signal


# --------------------------------------------------------------------------- the word matching's
# set look-ups (for speed) give what the plain loops they replaced gave


def _reference_name_match(query: set[str], names: list[str]) -> float:
    import re

    best = 0.0
    for name in names:
        have = {w.lower() for w in re.findall(r"\w+", name)}
        if not have or not query:
            continue
        hit_q = sum(
            1 for q in query if q in have or (len(q) > 5 and any(h.startswith(q[:5]) for h in have))
        )
        hit_n = sum(
            1
            for h in have
            if h in query or (len(h) > 5 and any(q.startswith(h[:5]) for q in query))
        )
        best = max(best, (hit_q / len(query)) * (hit_n / len(have)))
    return best


_word = st.text(alphabet="abcdeé_1", min_size=1, max_size=8)


@given(st.sets(_word, max_size=5), st.lists(st.lists(_word, max_size=5).map(" ".join), max_size=4))
@settings(max_examples=400, deadline=None)
def test_name_match_is_the_plain_loops_result(query: set[str], names: list[str]) -> None:
    assert name_match(query, names) == pytest.approx(_reference_name_match(query, names))


LONG = {f"w{i}" for i in range(8)}  # eight searched words: a long query past long_words 7
SHORT = {f"w{i}" for i in range(7)}


def test_the_long_query_weights_are_off_by_default() -> None:
    assert Weights().long_words == 0
    assert for_query(Weights(), 100) == Weights()


def test_a_long_query_weighs_meaning_more_and_the_whole_note_less() -> None:
    chunks = [cand(1, "a.md", 10.0, 0.1), cand(2, "b.md", 8.0, 0.9)]
    notes = {"a.md": 1.0, "b.md": 0.5}
    w = Weights(heading=0, path=0, graph=0, title=0, authority=0, long_words=7)
    short = rank(chunks, {}, SHORT, w, note_scores=notes)
    long = rank(chunks, {}, LONG, w, note_scores=notes)
    # seven words: keyword 1.0 + note 0.6 for a.md (1.6) against 0.8 + 0.3 + 0.3 (1.4) for b.md
    assert [r.path for r in short] == ["a.md", "b.md"]
    assert dict(short[1].parts) == pytest.approx({"keyword": 0.8, "vector": 0.3, "note": 0.3})
    # eight words: meaning 0.4 and the whole note 0.3: a.md 1.0 + 0.3 (1.3), b.md 0.8 + 0.4
    # + 0.15 (1.35)
    assert [r.path for r in long] == ["b.md", "a.md"]
    assert dict(long[0].parts) == pytest.approx({"keyword": 0.8, "vector": 0.4, "note": 0.15})
    assert dict(long[1].parts) == pytest.approx({"keyword": 1.0, "note": 0.3})
    for r in long:  # --explain adds up to the score shown
        assert sum(v for _, v in r.parts) == pytest.approx(r.score)


def test_the_long_query_rule_can_be_turned_off_and_keeps_a_weight_that_is_off() -> None:
    chunks = [cand(1, "a.md", 10.0, 0.1), cand(2, "b.md", 8.0, 0.9)]
    notes = {"a.md": 1.0, "b.md": 0.5}
    w = Weights(heading=0, path=0, graph=0, title=0, authority=0, long_words=7)
    off = rank(chunks, {}, LONG, replace(w, long_words=0), note_scores=notes)
    assert [r.path for r in off] == ["a.md", "b.md"]
    assert dict(off[1].parts) == pytest.approx({"keyword": 0.8, "vector": 0.3, "note": 0.3})
    # keyword-only weights (no meaning, no whole note) stay so for a long query
    bare = rank(chunks, {}, LONG, replace(w, vector=0.0, note=0.0), note_scores=notes)
    assert [dict(r.parts) for r in bare] == [{"keyword": 1.0}, {"keyword": 0.8}]
    # the threshold is configurable: a longer one leaves eight words alone
    assert for_query(replace(w, long_words=8), 8) == replace(w, long_words=8)
    assert for_query(w, 8).vector == w.long_vector and for_query(w, 8).note == w.long_note


def test_keyword_and_meaning_modes_do_not_take_the_long_query_weights() -> None:
    from vaultmem.search import _single

    assert _single("keyword").long_words == 0
    assert _single("semantic").long_words == 0
    assert for_query(_single("semantic"), 20) == _single("semantic")
    assert for_query(replace(_single("keyword"), long_words=7), 20).vector == 0.0
