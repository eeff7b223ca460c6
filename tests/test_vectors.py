"""The in-memory vector matrix answers exactly as sqlite-vec does, and follows the index."""

from __future__ import annotations

import datetime as dt
import threading

import numpy as np

from tests.conftest import MakeVault
from vaultmem import search, store
from vaultmem.vault import Vault
from vaultmem.vectors import VectorMatrix


def _query(vault: Vault, text: str) -> np.ndarray:
    return vault.embedder().embed([text])[0]


def test_matrix_matches_sqlite_vec(sample_vault: Vault) -> None:
    matrix = VectorMatrix.load(sample_vault.conn)
    assert len(matrix) == store.scalar(sample_vault.conn, "SELECT count(*) FROM chunk_vectors")
    for text in ("heat pump tariff", "sourdough starter", "kyoto temples"):
        vector = _query(sample_vault, text)
        want = store.nearest_chunks(sample_vault.conn, vector.astype(np.float32).tobytes(), 10)
        got = matrix.nearest(vector, 10)
        assert [i for i, _ in got] == [i for i, _ in want]
        assert np.allclose([d for _, d in got], [d for _, d in want], atol=1e-5)


def test_warm_search_gives_the_same_results(sample_vault: Vault) -> None:
    cold = [h.path for h in sample_vault.search("what did we decide about rollback").hits]
    sample_vault.warm(background=False)
    assert sample_vault.index.matrix is not None
    warm = [h.path for h in sample_vault.search("what did we decide about rollback").hits]
    assert warm == cold


def test_matrix_catches_up_after_an_edit(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "# A\nalpha beta\n", "b.md": "# B\ngamma delta\n"})
    vault.reindex()
    vault.warm(background=False)
    before = vault.index.matrix
    assert before is not None and len(before) == 2
    (vault.root / "b.md").write_text("# B\nepsilon zeta\n", encoding="utf-8")
    (vault.root / "c.md").write_text("# C\neta theta\n", encoding="utf-8")
    vault.reindex()
    after = vault.index.matrix
    assert after is not None and after is not before
    assert sorted(after.ids.tolist()) == sorted(store.vector_ids(vault.conn))
    fresh = VectorMatrix.load(vault.conn)
    vector = _query(vault, "eta theta")
    assert after.nearest(vector, 3) == fresh.nearest(vector, 3)


def test_matrix_of_an_index_without_vectors_is_empty(make_vault: MakeVault) -> None:
    vault = make_vault({"a.md": "alpha\n"})
    vault.reindex(embed=False)
    matrix = VectorMatrix.load(vault.conn)
    assert len(matrix) == 0
    assert matrix.nearest(np.ones(8, dtype=np.float32), 5) == []


DEADLINE_S = 120.0  # generous: a nice-19 run on a loaded machine
SEARCHES = ("what did we decide about rollback", "heat pump tariff", "sourdough starter", "kyoto")


def test_whole_note_query_beside_gives_the_same_hits(sample_vault: Vault) -> None:
    """With the vectors in memory, the worker thread reads what the search needs next on its
    own connection (`beside`: the vector hits' rows and facts, and the whole-note query when
    it gets to it first): the hits are those of the searching thread reading it all itself.
    The searching thread's first keyword query waits until the worker has asked for its
    connection (which it does once the vectors are in, the searching thread not yet waiting
    for them), so the worker's reads run in every search, however loaded the machine."""
    sample_vault.warm(background=False)
    matrix = sample_vault.index.current_matrix()
    conn = sample_vault.conn
    asked_from: list[str] = []
    asked = threading.Event()

    def beside() -> store.Connection:
        asked_from.append(threading.current_thread().name)
        asked.set()
        return sample_vault.index.conn

    now = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    for text in SEARCHES:
        q = search.Query(text, 10, "hybrid", now=now)
        alone = search.run(conn, q, sample_vault.embedder, None, matrix)
        asked.clear()
        held: list[str] = []

        def until_the_worker_asked(sql: str, held: list[str] = held) -> None:
            if "MATCH" in sql and not held:  # this thread's first keyword query
                held.append(sql)
                asked.wait(DEADLINE_S)

        conn.set_trace_callback(until_the_worker_asked)
        try:
            both = search.run(conn, q, sample_vault.embedder, None, matrix, beside=beside)
        finally:
            conn.set_trace_callback(None)
        assert held and asked.is_set(), f"the worker never asked for its connection: {text!r}"
        assert both.hits == alone.hits
        assert both.hits
    assert len(asked_from) >= len(SEARCHES)
    assert all(name.startswith("vaultmem-vectors") for name in asked_from), asked_from


def test_whole_note_query_from_the_worker_or_taken_back(sample_vault: Vault) -> None:
    """The whole-note query's notes are the same whether the worker ran it on its connection
    (the job done before it is asked for) or the searching thread takes it back unstarted."""
    conn = sample_vault.conn
    matches = search.fts_queries("heat pump tariff")
    here = search._whole_notes(conn, matches)
    assert here
    done = search._whole_notes_beside(lambda: sample_vault.index.conn, matches)
    assert done is not None
    done.result(timeout=60)
    assert search._whole_notes_taken(conn, done, matches) == here
    gate = threading.Event()
    blocker = search._POOL.submit(gate.wait, 60)  # the worker is busy: the job waits
    queued = search._whole_notes_beside(lambda: sample_vault.index.conn, matches)
    try:
        assert search._whole_notes_taken(conn, queued, matches) == here
        assert queued is not None and queued.cancelled()
    finally:
        gate.set()
        blocker.result(timeout=60)


def test_whole_note_query_asked_again_when_the_workers_connection_fails(
    sample_vault: Vault,
) -> None:
    conn = sample_vault.conn
    matches = search.fts_queries("heat pump tariff")

    def broken() -> store.Connection:
        raise store.OperationalError("unable to open database file")

    failed = search._whole_notes_beside(broken, matches)
    assert failed is not None
    assert isinstance(failed.exception(timeout=60), store.OperationalError)
    assert search._whole_notes_taken(conn, failed, matches) == search._whole_notes(conn, matches)
