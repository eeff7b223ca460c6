"""The scoring functions of bench/retrieval.py on hand-made rankings, with exact expected values.

Needs no shared data: only the pure functions are used.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "retrieval.py"


def _load():
    spec = importlib.util.spec_from_file_location("bench_retrieval", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


R = _load()

RANKED = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]


def test_recall_is_the_fraction_of_relevant_found():
    assert R.recall_at_k(RANKED, {"b", "g"}, 5) == 0.5
    assert R.recall_at_k(RANKED, {"b", "g"}, 10) == 1.0
    assert R.recall_at_k(RANKED, {"b", "x", "y"}, 5) == pytest.approx(1 / 3)
    assert R.recall_at_k(RANKED, {"x"}, 10) == 0.0
    assert R.recall_at_k(RANKED, set(), 5) == 0.0  # no evidence scores 0, not 1
    assert R.recall_at_k([], {"a"}, 5) == 0.0
    assert R.recall_at_k(RANKED, ["b", "b", "g"], 5) == 0.5  # duplicates in the truth count once


def test_hit_rate_needs_any_relevant():
    assert R.hit_at_k(RANKED, {"b", "g"}, 5) == 1.0
    assert R.hit_at_k(RANKED, {"f", "g"}, 5) == 0.0
    assert R.hit_at_k(RANKED, {"e"}, 5) == 1.0
    assert R.hit_at_k(RANKED, set(), 5) == 0.0


def test_reciprocal_rank():
    assert R.reciprocal_rank(RANKED, {"a"}) == 1.0
    assert R.reciprocal_rank(RANKED, {"c", "h"}) == pytest.approx(1 / 3)
    assert R.reciprocal_rank(RANKED, {"j"}, k=10) == pytest.approx(0.1)
    assert R.reciprocal_rank(RANKED, {"j"}, k=5) == 0.0
    assert R.reciprocal_rank(RANKED, {"x"}) == 0.0
    assert R.reciprocal_rank(RANKED, set()) == 0.0


def test_ndcg_binary():
    # one relevant at rank 3: (1/log2 4) / 1 = 0.5
    assert R.ndcg_at_k(RANKED, {"c": 1}, 10) == pytest.approx(0.5)
    # relevant at ranks 1 and 3 of two: (1 + 0.5) / (1 + 1/log2 3)
    assert R.ndcg_at_k(RANKED, {"a": 1, "c": 1}, 10) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert R.ndcg_at_k(RANKED, {"a": 1}, 10) == 1.0
    assert R.ndcg_at_k(RANKED, {"x": 1}, 10) == 0.0
    assert R.ndcg_at_k(RANKED, {"k": 1}, 10) == 0.0  # rank 11 is past the cut-off
    assert R.ndcg_at_k(RANKED, {}, 10) == 0.0
    # a relevant document that was never retrieved still counts in the ideal
    assert R.ndcg_at_k(RANKED, {"a": 1, "x": 1}, 10) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_ndcg_graded():
    qrels = {"b": 2, "a": 1, "z": 0}
    # DCG = 1/log2(2) + 2/log2(3); IDCG = 2/log2(2) + 1/log2(3)
    dcg = 1 + 2 / math.log2(3)
    idcg = 2 + 1 / math.log2(3)
    assert R.ndcg_at_k(RANKED, qrels, 10) == pytest.approx(dcg / idcg)
    # exponential gain: 2**rel - 1
    dcg_e = 1 + 3 / math.log2(3)
    idcg_e = 3 + 1 / math.log2(3)
    assert R.ndcg_at_k(RANKED, qrels, 10, gain="exp") == pytest.approx(dcg_e / idcg_e)
    # cut-off smaller than the ideal list: IDCG is cut too
    assert R.ndcg_at_k(["b", "q"], {"b": 1, "a": 1}, 1) == 1.0


def test_rrf():
    fused = R.rrf([["a", "b", "c"], ["c", "a", "d"]], k=60)
    # a: 1/61 + 1/62, c: 1/63 + 1/61, b: 1/62, d: 1/63
    assert fused == ["a", "c", "b", "d"]
    # a tie (rank 1 in one list each) goes to the better best rank, then the earlier list
    assert R.rrf([["x"], ["y"]]) == ["x", "y"]
    assert R.rrf([["y", "x"], ["x", "y"]]) == ["y", "x"]
    assert R.rrf([["a", "b"], ["b"]], weights=[1.0, 0.0]) == ["a", "b"]


def test_evidence_parsing_tolerates_schema_quirks():
    parse = R.evidence_sessions
    assert parse(["D1:3", "D2:8"]) == {1, 2}
    assert parse(["D8:6; D9:17"]) == {8, 9}
    assert parse(["D9:1 D4:4 D4:6"]) == {9, 4}
    assert parse(["D:11:26"]) == {11}
    assert parse(["D30:05"]) == {30}
    assert parse(["D"]) == set()
    assert parse([]) == set()
    # basic-memory's reading keeps only the first id of a string and misses "D:11:26"
    bm = R.evidence_sessions_bm
    assert bm(["D8:6; D9:17", "D9:1 D4:4 D4:6"]) == {8, 9}
    assert bm(["D:11:26", "D"]) == set()
    assert bm(["D30:05"]) == {30}


def test_chunk_text():
    assert R.chunk_text("one\n\ntwo\nthree", size=9) == ["one\ntwo", "three"]
    long = "First sentence here. Second one is here. " + "x" * 30
    pieces = R.chunk_text(long, size=25)
    assert all(len(p) <= 25 for p in pieces)
    assert pieces[0] == "First sentence here."
    assert "".join(pieces).replace(" ", "") == long.replace(" ", "")


def test_fts_query_and_front_matter():
    assert R.fts_or_query('When did "Caroline" go, go?') == '"when" OR "did" OR "caroline" OR "go"'
    assert R.fts_or_query("?!") is None
    assert R.split_note("---\ndate: 2023-05-08\n---\n- **A:** hi\n") == "- **A:** hi\n"
    assert R.split_note("# title\n\ntext\n") == "# title\n\ntext\n"


def test_aggregate_averages_every_query():
    rows = [{"recall@5": 1.0, "mrr": 0.5}, {"recall@5": 0.0, "mrr": 0.0}]
    assert R.aggregate(rows) == {"recall@5": 0.5, "mrr": 0.25, "n": 2}
