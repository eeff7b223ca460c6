"""MiniLM's one-text cache (vaultmem/embed.py `_ONE_TEXT`): a query asked again is not embedded
again, and its vector is bit for bit the one the model gives."""

from __future__ import annotations

import numpy as np
import pytest

from tests import test_embed_choice as choice_tests
from tests.test_embed_choice import StandInMiniLM, needs_minilm
from vaultmem import embed
from vaultmem.embed import MiniLMEmbedder

minilm = choice_tests.minilm  # a stand-in MiniLM installed


def test_a_query_asked_again_is_not_embedded_again(minilm: StandInMiniLM) -> None:
    model = MiniLMEmbedder()
    first = model.embed(["heat pump sizing"])
    assert minilm.embedded == 1
    again = model.embed(["heat pump sizing"])
    assert minilm.embedded == 1  # from the cache
    np.testing.assert_array_equal(first, again)
    model.embed(["heat pump"])  # another text: embedded
    assert minilm.embedded == 2
    # a new embedder (after a model switch) shares it: the model is the process's
    MiniLMEmbedder().embed(["heat pump sizing"])
    assert minilm.embedded == 2


def test_the_cache_gives_copies(minilm: StandInMiniLM) -> None:
    model = MiniLMEmbedder()
    first = model.embed(["tariff api"])
    first[0, :] = 7.0  # a caller scribbling on its vector
    again = model.embed(["tariff api"])
    assert not np.any(again == 7.0)
    np.testing.assert_allclose(np.linalg.norm(again, axis=1), 1.0, atol=1e-6)


def test_batches_are_not_kept_and_the_cache_is_bounded(
    minilm: StandInMiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed, "_ONE_TEXT", embed._Recent(2))
    model = MiniLMEmbedder()
    model.embed(["one", "two", "three"])  # indexing: a batch, not kept
    model.embed(["one"])
    assert minilm.embedded == 4
    model.embed(["two"])
    model.embed(["one"])  # used again: the most recent now
    model.embed(["three"])  # the third: "two", the least recently used, is forgotten
    assert minilm.embedded == 6
    model.embed(["one"])
    assert minilm.embedded == 6
    model.embed(["two"])
    assert minilm.embedded == 7


def test_a_different_model_object_never_reads_anothers_vectors(
    minilm: StandInMiniLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem import encoder

    MiniLMEmbedder().embed(["shared text"])
    other = StandInMiniLM()
    monkeypatch.setattr(encoder, "minilm", lambda: other)
    MiniLMEmbedder().embed(["shared text"])
    assert (minilm.embedded, other.embedded) == (1, 1)


@needs_minilm
def test_the_real_models_cached_vector_is_bit_identical(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "_ONE_TEXT", embed._Recent(8))
    model = MiniLMEmbedder()
    query = "what did we decide about the tariff API"
    fresh = model.embed([query])
    kept = model.embed([query])
    embed._ONE_TEXT.clear()
    again = model.embed([query])  # embedded again by the encoder
    assert fresh.tobytes() == kept.tobytes() == again.tobytes()
    # as the encoder gives it for the text alone, normalised as every embedder's
    from vaultmem import encoder

    raw = encoder.minilm().embed([query], threads=1)
    unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    assert unit.astype(np.float32).tobytes() == kept.tobytes()
