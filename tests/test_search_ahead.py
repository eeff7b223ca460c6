"""While a warm search waits for its vectors, the searching thread reads ahead (the facts of
the notes found so far, their link counts, their text scores, the likely hits' snippets):
every hit is the same as when nothing was read ahead."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import pytest

from vaultmem import ranking, search
from vaultmem.vault import Vault

NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
TEXTS = (
    "what did we decide about rollback",
    "heat pump tariff",
    "sourdough starter",
    "kyoto",
    "maya tea",
    "project deadline budget",
)


def _hits(vault: Vault, text: str) -> tuple[search.Hit, ...]:
    matrix = vault.index.current_matrix()
    assert matrix is not None
    q = search.Query(text, 10, "hybrid", now=NOW)
    return search.run(vault.conn, q, vault.embedder, None, matrix).hits


def test_reading_ahead_changes_no_hit(sample_vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    sample_vault.warm(background=False)

    def at_once(fn: Callable[..., Any], *args: Any) -> Future[Any]:
        done: Future[Any] = Future()
        done.set_result(fn(*args))
        return done

    def never(*args: Any) -> None:
        raise AssertionError("nothing is read ahead when the vectors are in")

    with monkeypatch.context() as m:  # the vectors are in before the searching thread looks
        m.setattr(search._POOL, "submit", at_once)
        m.setattr(ranking, "prepare", never)
        plain = [_hits(sample_vault, t) for t in TEXTS]

    # the vectors come in only once everything was read ahead
    gate = threading.Event()
    nearest = search._matrix_nearest
    likely = search._likely_hits
    read: list[list[int]] = []

    def late(*args: Any) -> list[tuple[int, float]]:
        assert gate.wait(60)
        return nearest(*args)

    def last_read_ahead(*args: Any) -> list[int]:
        found = likely(*args)
        read.append(found)
        gate.set()
        return found

    monkeypatch.setattr(search, "_matrix_nearest", late)
    monkeypatch.setattr(search, "_likely_hits", last_read_ahead)
    ahead = []
    for text in TEXTS:
        gate.clear()
        ahead.append(_hits(sample_vault, text))
    assert ahead == plain  # paths, lines, scores, snippets and --explain parts
    assert sum(1 for hits in plain if hits) >= 4
    assert sum(1 for ids in read if ids) >= 4  # snippets were read ahead


def test_rank_with_text_scores_made_ahead_is_rank() -> None:
    candidates = [
        ranking.Candidate(1, "a/Heat pump.md", "Heat pump", "Tariff", 1, 4, keyword=3.0),
        ranking.Candidate(2, "a/Heat pump.md", "Heat pump", "Noise", 5, 9, keyword=1.0),
        ranking.Candidate(3, "b/Tariffs.md", "Tariffs", "", 1, 3, keyword=2.0, vector=0.4),
        ranking.Candidate(4, "c/Pumps.md", "Pumps", "Heat", 1, 2, vector=0.7),
    ]
    facts = {
        "a/Heat pump.md": ranking.NoteFacts(names=("Heat pump", "heat pumps")),
        "b/Tariffs.md": ranking.NoteFacts(names=("Tariffs",)),
        "c/Pumps.md": ranking.NoteFacts(names=("Pumps",)),
    }
    words = {"heat", "pump", "tariff"}
    alone = ranking.rank(candidates, facts, words)
    memo = ranking.Memo(frozenset(words))
    ranking.prepare(memo, candidates[:3], facts)
    assert memo.shares and memo.names
    assert ranking.rank(candidates, facts, words, memo=memo) == alone
    # a memo made for other words is not used
    other = ranking.Memo(frozenset({"noise"}))
    ranking.prepare(other, candidates, facts)
    assert ranking.rank(candidates, facts, words, memo=other) == alone


def test_what_the_worker_reads_for_its_hits_changes_no_hit(
    sample_vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the searching thread is still busy as the vectors come in, the worker reads the
    vector hits' rows and facts on its own connection: the hits are the same as when the
    searching thread reads them itself."""
    sample_vault.warm(background=False)
    matrix = sample_vault.index.current_matrix()
    assert matrix is not None

    def run(text: str, beside: Any) -> tuple[search.Hit, ...]:
        q = search.Query(text, 10, "hybrid", now=NOW)
        return search.run(sample_vault.conn, q, sample_vault.embedder, None, matrix, beside=beside)

    finished = threading.Event()
    sides: list[Any] = []
    job, taken = search._vectors_job, search._whole_notes_taken

    def recorded(*args: Any) -> Any:
        got = job(*args)
        sides.append(got[1])
        finished.set()
        return got

    def after_the_worker(*args: Any) -> Any:  # the searching thread is slow today
        assert finished.wait(60)
        return taken(*args)

    for text in TEXTS:
        alone = run(text, None)
        with monkeypatch.context() as m:
            m.setattr(search, "_vectors_job", recorded)
            m.setattr(search, "_whole_notes_taken", after_the_worker)
            finished.clear()
            both = run(text, lambda: sample_vault.index.conn)
        assert both == alone
    assert sum(1 for side in sides if side is not None and side.facts) >= 4
