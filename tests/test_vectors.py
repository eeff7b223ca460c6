"""The in-memory vector matrix answers exactly as sqlite-vec does, and follows the index."""

from __future__ import annotations

import numpy as np

from tests.conftest import MakeVault
from vaultmem import store
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
