"""Readers of the index's vectors while the upgrade's swap lands (vaultmem/embed_upgrade.py).

The swap replaces every section's vector by MiniLM's (384 numbers) in one commit, where
wordllama's were 256 wide. A reader that takes a note's vector in one state of the index and
the vectors to compare it with in another compares two widths: sqlite-vec refuses, numpy
refuses, or (were the widths equal) the answer means nothing. Each test makes the swap commit
exactly between two reads of one call (a step wrapped to commit it first, on another
connection: no threads racing, no sleeps) and checks the call answers as the index was before
the swap or as it is after it, whole.

MiniLM is played by the stand-in of tests/test_embed_choice.py (hashed words, 384 numbers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests import test_embed_choice as choice_tests
from tests.conftest import MakeVault
from tests.test_embed_choice import StandInMiniLM
from vaultmem import store
from vaultmem.embed import MiniLMEmbedder, WordLlamaEmbedder
from vaultmem.related import Related
from vaultmem.vault import Vault
from vaultmem.vectors import VectorMatrix

MINILM = MiniLMEmbedder.name
WORDLLAMA = WordLlamaEmbedder.name

minilm = choice_tests.minilm  # auto, a stand-in MiniLM installed, limit 6

TOPICS = (
    "heat pump sizing for the old house, radiators and flow temperature",
    "tariff API sync failed again after the token expired",
    "sourdough starter feeding schedule and hydration",
    "garden plan: tomatoes, beans and the compost heap",
    "quarterly budget review with the finance team",
    "bicycle chain and gears need cleaning before the trip",
    "reading list: distributed systems and consensus papers",
    "the heat pump installer quoted a new outdoor unit",
    "miso soup with tofu and wakame, dashi from scratch",
    "electricity tariff comparison: time of use against flat rate",
)


def varied(count: int = 30) -> dict[str, str | bytes]:
    """`count` one-section notes on a handful of topics, a few linked and tagged."""
    out: dict[str, str | bytes] = {}
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        link = f"\n\nSee [[n{(i + 10) % count}]]." if i % 3 == 0 else ""
        tag = f" #topic{i % 5}" if i % 2 == 0 else ""
        out[f"n{i}.md"] = f"# n{i}\n\n{topic} (variant {i}){tag}{link}\n"
    return out


def ready_to_swap(make_vault: MakeVault) -> Vault:
    """A vault past auto's limit on wordllama whose MiniLM vectors are all cached: the next
    step of the upgrade is the swap."""
    vault = make_vault(varied())
    assert vault.reindex().embeddings.model == WORDLLAMA
    step = vault.embed_upgrade.step(batch=100)
    assert not step.swapped and step.status.left == 0
    return vault


def summary(found: tuple[Related, ...]) -> list[tuple[str, float, tuple[str, ...]]]:
    """What related() found, to compare across the two ways of finding the nearest vectors
    (numpy in memory, sqlite-vec), whose distances differ in the last bits."""
    return [(r.path, round(r.score, 5), tuple(x.kind for x in r.reasons)) for r in found]


def swap_from_elsewhere(vault: Vault) -> None:
    """The swap, committed by another `Vault` on the index (as the TUI's background thread or
    another process would)."""
    other = Vault(vault.root)
    assert other.embed_upgrade.run(wait=5.0).swapped
    other.close()


def swap_after(
    monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, vault: Vault, times: int = 1
) -> list[int]:
    """`owner.name` wrapped: its `times`-th call commits the swap right after it returns.
    Returns the calls made so far (a list, for the test to look at)."""
    real: Callable[..., Any] = getattr(owner, name)
    calls: list[int] = []

    def then_swap(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        calls.append(1)
        if len(calls) == times:
            swap_from_elsewhere(vault)
        return out

    monkeypatch.setattr(owner, name, then_swap)
    return calls


@pytest.mark.parametrize("warm", [True, False], ids=["vectors-in-memory", "sqlite-vec"])
def test_related_sees_one_model_when_the_swap_lands_after_the_notes_vector(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch, warm: bool
) -> None:
    vault = ready_to_swap(make_vault)
    before = summary(Vault(vault.root).related("n1", 8))
    assert before and any("meaning" in kinds for _, _, kinds in before)
    reader = Vault(vault.root)
    if warm:
        reader.warm(background=False)
        matrix = reader.index.matrix
        assert matrix is not None and matrix.matrix.shape[1] == 256
    calls = swap_after(monkeypatch, store, "note_vector", vault)
    got = summary(reader.related("n1", 8))
    assert calls, "related() read no note vector"
    assert store.get_meta(Vault(vault.root).conn, "embed_model") == MINILM  # it did land
    assert got == before  # the state it began in, whole
    after = summary(Vault(vault.root).related("n1", 8))
    assert after != before  # the models disagree: the test can tell which one answered
    assert summary(reader.related("n1", 8)) == after  # and the next call follows the swap


def test_related_after_the_swap_landed_between_the_matrix_and_the_notes_vector(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = ready_to_swap(make_vault)
    reader = Vault(vault.root)
    reader.warm(background=False)
    calls = swap_after(monkeypatch, reader.index, "current_matrix", vault)
    got = summary(reader.related("n1", 8))
    assert calls
    assert got == summary(Vault(vault.root).related("n1", 8))  # the new model's answer, whole


def test_gaps_compare_one_models_vectors_when_the_swap_lands_mid_report(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = ready_to_swap(make_vault)
    before = Vault(vault.root).gaps().suggestions
    assert any("close in meaning" in s.evidence for s in before)
    reader = Vault(vault.root)
    calls = swap_after(monkeypatch, store, "note_vector", vault, times=2)  # between two notes
    got = reader.gaps().suggestions
    assert len(calls) >= 2
    assert got == before


@pytest.mark.parametrize("step", ["iter_vectors", "vector_count"])
def test_vectors_loaded_into_memory_are_one_models_whole(
    minilm: StandInMiniLM,
    make_vault: MakeVault,
    monkeypatch: pytest.MonkeyPatch,
    step: str,
) -> None:
    vault = ready_to_swap(make_vault)
    reader = Vault(vault.root)
    swap_after(monkeypatch, store, step, vault)
    matrix = VectorMatrix.load(reader.conn)
    # labelled with the model and generation whose vectors it holds
    assert (matrix.model, matrix.matrix.shape[1]) == (WORDLLAMA, 256)
    assert len(matrix) == 30
    assert matrix.generation + 1 == store.generation(Vault(vault.root).conn)


def test_a_matrix_refreshed_across_the_swap_is_one_models_whole(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = ready_to_swap(make_vault)
    reader = Vault(vault.root)
    old = VectorMatrix.load(reader.conn)
    (vault.root / "new.md").write_text("# new\n\nthe heat pump again\n", encoding="utf-8")
    vault.reindex()  # a new section (wordllama): the refresh reads only what changed
    swap_after(monkeypatch, store, "vector_ids", vault)
    matrix = old.refresh(reader.conn)
    assert (matrix.model, matrix.matrix.shape[1], len(matrix)) == (WORDLLAMA, 256, 31)
    norms = np.linalg.norm(matrix.matrix, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)
    again = matrix.refresh(Vault(vault.root).conn)  # after it: MiniLM's, whole
    assert (again.model, again.matrix.shape[1], len(again)) == (MINILM, 384, 31)
