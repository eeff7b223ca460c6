"""Embedding models: the bundled wordllama, packaged MiniLM, Ollama, OpenAI-compatible servers (all HTTP to model servers lives here and in llm.py).

Every embedder gives one float32 row of unit length per text (an empty text gives a zero row),
so a dot product is a cosine similarity. Batching, row order and checking what came back are done
once in `Embedder.embed`; a backend only turns one batch of texts into raw vectors. Every way a
model server can fail becomes a one-line `ModelServerDown` or `ModelServerError`.
"""  # noqa: E501 (the summary line above is the house's one-line "what", kept whole)

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import logging
import os
import re
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import numpy as np
from numpy.typing import NDArray

from vaultmem.errors import ModelServerDown, ModelServerError, UsageError, VaultmemError

if TYPE_CHECKING:
    import httpx  # imported where a model server is called: 0.17 s of every CLI start

    from vaultmem.encoder import MiniLM

Vectors = NDArray[np.float32]
ServerKind = Literal["ollama", "openai"]

DEFAULT_SPEC = "wordllama"  # for a caller without a vault; a vault's default is `auto`
SPEC_FORMS = (
    "auto (the default: minilm for small vaults, wordllama beyond)",
    "wordllama (the bundled model)",
    "minilm (all-MiniLM-L6-v2 from a model package)",
    "ollama",
    "ollama:<model>",
    "openai:<model>",
    "sentence-transformers:<name or path>",
)
DEFAULT_OLLAMA_URL = "http://localhost:11434"
DEFAULT_OLLAMA_MODEL = "nomic-embed-text"
DEFAULT_OPENAI_URL = "https://api.openai.com/v1"
SERVER_TIMEOUT = 15.0
USE_BUNDLED = "or use the bundled model with --embedder wordllama"

WORDLLAMA_CONFIG = "l2_supercat"
WORDLLAMA_DIM = 256


class Embedder(ABC):
    """A text embedding model: `embed` gives one unit-length float32 row per text."""

    name: str
    batch_size: int = 64
    _dim: int | None = None

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> object:
        """Raw vectors for one batch (an array or nested lists); `embed` checks and normalises."""

    @property
    def where(self) -> str:
        """The model, and for a server where it runs, as error messages name it."""
        return self.name

    @property
    def dim(self) -> int:
        """Vector width; for a server it is learned from one probe call the first time."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def health(self) -> None:
        """Check the model can embed now; raises a VaultmemError saying what to do if not."""
        self.embed(["health check"])

    def section_text(self, headings: str, body: str, limit: int) -> str:
        """What this model is given for a section when indexing (a query is given as typed):
        its heading path and its text, cut at `limit` characters."""
        return f"{headings}\n{body}".strip()[:limit]

    def embed(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> Vectors:
        """Embed texts in batches: shape (len(texts), dim), float32, each row of unit length.
        `progress(done)` is told the texts embedded so far after each batch."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Similar lengths go in the same batch: wordllama pads every batch to its longest text,
        # so sorted mixed-length chunks embed ~1.7x faster, and servers do not mind.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: Vectors | None = None
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            vectors = self._checked([texts[i] for i in rows])
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
            if progress is not None:
                progress(start + len(rows))
        assert out is not None
        return out

    def _checked(self, batch: list[str]) -> Vectors:
        raw = self._embed_batch(batch)
        try:
            vectors = np.asarray(raw, dtype=np.float32)
        except (ValueError, TypeError) as exc:
            raise ModelServerError(
                f"{self.where} returned vectors of different lengths or not made of numbers"
            ) from exc
        if vectors.ndim == 1 and vectors.size == 0:
            vectors = vectors.reshape(0, 0)  # an empty list: no vectors at all
        if vectors.ndim != 2:
            raise ModelServerError(f"{self.where} returned something other than a list of vectors")
        if vectors.shape[0] != len(batch):
            raise ModelServerError(
                f"{self.where} returned {vectors.shape[0]} vectors for {len(batch)} texts"
            )
        if vectors.shape[1] == 0:
            raise ModelServerError(f"{self.where} returned empty vectors")
        width = vectors.shape[1]
        if self._dim is not None and width != self._dim:
            raise ModelServerError(
                f"{self.where} returned {width}-dimensional vectors, expected {self._dim}:"
                " did the model behind it change? Embed again with `vaultmem reindex --embeddings`"
            )
        if not np.isfinite(vectors).all():
            raise ModelServerError(f"{self.where} returned vectors with NaN or infinite values")
        self._dim = width
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        # An empty text pools to a zero vector; it stays zero rather than becoming NaN.
        unit: Vectors = vectors / np.maximum(norms, np.finfo(np.float32).tiny)
        return unit


class FakeEmbedder(Embedder):
    """For tests (spec "fake" or "fake:<dim>"): hashed word counts, so shared words score higher."""

    batch_size = 256

    def __init__(self, dim: int = 32) -> None:
        if dim < 1:
            raise UsageError("the fake embedder needs a positive dimension, such as fake:32")
        self.name = f"fake:{dim}"
        self._dim = dim

    def _embed_batch(self, texts: list[str]) -> Vectors:
        dim = self.dim
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
                # Counts only (no random signs): colliding words then never cancel out, so
                # texts sharing a word always score above texts sharing none.
                out[row, int.from_bytes(digest, "big") % dim] += 1.0
        return out


class WordLlamaEmbedder(Embedder):
    """The bundled model: wordllama's l2_supercat, 256-d, from the weights its wheel ships."""

    name = f"wordllama:{WORDLLAMA_CONFIG}_{WORDLLAMA_DIM}"
    batch_size = 256
    _dim = WORDLLAMA_DIM

    def _embed_batch(self, texts: list[str]) -> Vectors:
        # wordllama splits again and pads each inner batch to its longest text, then holds a
        # (batch x tokens x 256) float32 array and copies of it: 64 texts measured fastest, but
        # 64 long sections took ~800 MB on MDN. So the inner batch shrinks as texts grow,
        # keeping about 64k characters in flight (texts arrive sorted by length).
        longest = max((len(t) for t in texts), default=1)
        inner = max(4, min(64, 64_000 // max(longest, 1)))
        vectors: Vectors = _wordllama().embed(texts, norm=False, batch_size=inner)
        return vectors


_wordllama_model: Any = None
_wordllama_lock = threading.Lock()


def _wordllama() -> Any:
    """The wordllama model, loaded once per process on first use (~0.5 s)."""
    global _wordllama_model
    with _wordllama_lock:
        if _wordllama_model is None:
            _wordllama_model = _load_wordllama()
        return _wordllama_model


def _load_wordllama() -> Any:
    """The bundled model: read straight from the files its wheel ships when they are where
    this wordllama version keeps them, else through wordllama's own loader."""
    return _WordLlamaFiles.find() or _load_wordllama_package()


class _WordLlamaFiles:
    """wordllama's inference (tokenize, look up each token's row, average over the real
    tokens) over its own shipped files, without importing the package: `import wordllama`
    brings pydantic, requests and toml (0.4 s of a CLI start) and its loader copies the whole
    table to float32 (32 MB); here the float16 table is memory-mapped and only the rows a
    text uses are read. The vectors are wordllama's own, bit for bit (tests/test_embed.py).
    """

    def __init__(self, weights: Path, tokenizer: Path) -> None:
        import json
        import struct

        from tokenizers import Tokenizer

        with weights.open("rb") as file:
            (size,) = struct.unpack("<Q", file.read(8))
            header = json.loads(file.read(size))
        tensor = header["embedding.weight"]
        if tensor["dtype"] != "F16" or len(tensor["shape"]) != 2:
            raise ValueError(f"unexpected tensor {tensor}")
        start, end = tensor["data_offsets"]
        rows, dim = tensor["shape"]
        if end - start != rows * dim * 2:
            raise ValueError(f"tensor size {end - start} does not match {tensor['shape']}")
        self.table = np.memmap(
            weights, dtype="<f2", mode="r", offset=8 + size + start, shape=(rows, dim)
        )
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_padding()  # as wordllama's inference sets its tokenizer up
        self.tokenizer.no_truncation()

    @classmethod
    def find(cls) -> _WordLlamaFiles | None:
        spec = importlib.util.find_spec("wordllama")
        if spec is None or spec.origin is None:
            return None
        package = Path(spec.origin).parent
        weights = package / "weights" / f"{WORDLLAMA_CONFIG}_{WORDLLAMA_DIM}.safetensors"
        tokenizer = package / "tokenizers" / f"{WORDLLAMA_CONFIG}_tokenizer_config.json"
        if not (weights.is_file() and tokenizer.is_file()):
            return None
        try:
            return cls(weights, tokenizer)
        except Exception:  # tokenizers raises bare Exception; wordllama's loader then says why
            return None

    def embed(self, texts: list[str], norm: bool = False, batch_size: int = 64) -> Vectors:
        """wordllama's `WordLlamaInference.embed` (dense, pooled), step for step."""
        assert not norm  # Embedder.embed normalises
        out = np.empty((len(texts), self.table.shape[1]), dtype=np.float32)
        for i in range(0, len(texts), batch_size):
            encoded = self.tokenizer.encode_batch(
                texts[i : i + batch_size], is_pretokenized=False, add_special_tokens=False
            )
            ids = np.array([e.ids for e in encoded], dtype=np.int32)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
            np.clip(ids, 0, self.table.shape[0] - 1, out=ids)
            x = self.table[ids].astype(np.float32)
            mask_sum = np.maximum(mask.sum(axis=1, keepdims=True), 1.0).astype(np.float32)
            pooled = np.sum(x * mask[..., np.newaxis], axis=1, dtype=np.float32) / mask_sum
            out[i : i + pooled.shape[0]] = pooled
        return out


def _load_wordllama_package() -> Any:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    import wordllama  # type: ignore[import-untyped]

    # Importing wordllama calls logging.basicConfig(level=INFO), which would print every HTTP
    # request and library notice to stderr; the front-end owns logging, so put it back.
    root.handlers[:] = handlers
    root.setLevel(level)
    try:
        # The wheel ships the weights and tokenizer; a plain load() would try to download.
        return wordllama.WordLlama.load(
            config=WORDLLAMA_CONFIG,
            dim=WORDLLAMA_DIM,
            cache_dir=Path(wordllama.__file__).parent,
            disable_download=True,
        )
    except FileNotFoundError as exc:
        raise VaultmemError(
            f"the bundled wordllama model is incomplete ({exc}):"
            " run `pip install --force-reinstall wordllama`"
        ) from exc


class _Recent:
    """The last `size` texts embedded one at a time, with their vectors (least recently used
    forgotten first): MiniLM spends ~12 ms of CPU on one short query, and the TUI searches at
    every keystroke, often for a query it searched a moment ago (a word deleted and typed
    again, a screen searching again after a reindex), as an agent repeats its queries. The
    vector given back is the very one the model gave (a copy): bit for bit the same."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._vectors: OrderedDict[tuple[object, str], Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[object, str], make: Callable[[], Vectors]) -> Vectors:
        """The vector of `key` (the model, the text), made by `make` unless kept already."""
        with self._lock:
            known = self._vectors.get(key)
            if known is not None:
                self._vectors.move_to_end(key)
                return known.copy()
        made = make()  # outside the lock: two threads may embed one text, never wait
        with self._lock:
            self._vectors[key] = made.copy()
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return made

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()


QUERY_CACHE = 512  # one-text MiniLM embeddings a process keeps: 384 floats each, ~0.8 MB
_ONE_TEXT = _Recent(QUERY_CACHE)


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2, 384-d, run in numpy from the weights a PyPI package ships (no torch)."""

    name = "minilm:all-MiniLM-L6-v2"
    # ~1-3 s of work a batch on one core: a progress bar moves often (the encoder cuts its
    # own batches by tokens, so smaller ones cost nothing)
    batch_size = 32
    _dim = 384
    # Text past the model's 256 tokens is not read. Reading it as overlapping windows whose
    # vectors are averaged (encoder.MiniLM.embed's `windows`) was measured in round 6
    # (docs/BENCHMARKS.md): LoCoMo no better, ~1.3-1.5x the embedding's cost.

    def __init__(self) -> None:
        from vaultmem.encoder import INSTALL_HINT, find_minilm

        # fail at once, with what to install, rather than at the first embedding
        if find_minilm() is None:
            raise UsageError(f"{INSTALL_HINT}, {USE_BUNDLED}")

    def _embed_batch(self, texts: list[str]) -> Vectors:
        from vaultmem.encoder import minilm

        model = minilm()
        if len(texts) == 1:  # a query (or a one-section write): asked again, it is free
            return _ONE_TEXT.get((model, texts[0]), lambda: self._embedded(model, texts))
        return self._embedded(model, texts)

    def _embedded(self, model: MiniLM, texts: list[str]) -> Vectors:
        from vaultmem.encoder import bulk_threads

        # one BLAS thread for a query (thread start-up costs more than it saves on one short
        # text); every core for indexing, where the products are large
        threads = 1 if len(texts) <= 4 else bulk_threads()
        vectors = model.embed(texts, threads=threads)
        for row, text in enumerate(texts):
            if not text.strip():
                vectors[row] = 0.0  # the contract: an empty text gives a zero row
        return vectors


class SentenceTransformersEmbedder(Embedder):
    """Any sentence-transformers model by name or path (the optional extra), loaded on first use."""

    batch_size = 64

    def __init__(self, name_or_path: str) -> None:
        if importlib.util.find_spec("sentence_transformers") is None:
            raise UsageError(
                "sentence-transformers is not installed: run"
                f" `pip install 'vaultmem[sentence-transformers]'`, {USE_BUNDLED}"
            )
        self.name_or_path = name_or_path
        self.name = f"sentence-transformers:{name_or_path}"
        self._model: Any = None
        self._lock = threading.Lock()

    def _embed_batch(self, texts: list[str]) -> Vectors:
        vectors: Vectors = self._loaded().encode(
            texts, batch_size=len(texts), convert_to_numpy=True, show_progress_bar=False
        )
        return vectors

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                module = importlib.import_module("sentence_transformers")
                try:
                    self._model = module.SentenceTransformer(self.name_or_path)
                except (OSError, ValueError) as exc:
                    raise UsageError(
                        f"cannot load {self.name}: {_one_line(str(exc))}; check the name or"
                        f" path, {USE_BUNDLED}"
                    ) from exc
            return self._model


class ModelServer:
    """One model server's HTTP API: JSON in, JSON out, every failure a one-line VaultmemError."""

    def __init__(
        self,
        kind: ServerKind,
        url: str,
        *,
        api_key: str | None = None,
        timeout: float = SERVER_TIMEOUT,
        fallback: str = USE_BUNDLED,
    ) -> None:
        self.kind = kind
        self.url = url.strip().rstrip("/")
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            setting = "OLLAMA_URL" if kind == "ollama" else "OPENAI_BASE_URL"
            raise UsageError(f"{url!r} is not an http(s) URL: check {setting}")
        self.api_key = api_key
        self.timeout = timeout
        self.fallback = fallback
        self.label = "Ollama" if kind == "ollama" else "The OpenAI-compatible server"
        # A proxy from the environment never helps reach a server on this machine, and a
        # corporate HTTP_PROXY without NO_PROXY=localhost would break a local Ollama.
        self._trust_env = parts.hostname not in ("localhost", "127.0.0.1", "::1")
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def get(self, path: str, *, timeout: float | None = None) -> Any:
        """GET `path` under the base URL and return the decoded JSON."""
        return self._request("GET", path, None, timeout)

    def post(self, path: str, payload: dict[str, Any], *, timeout: float | None = None) -> Any:
        """POST JSON to `path` under the base URL and return the decoded JSON."""
        return self._request("POST", path, payload, timeout)

    def error(self, call: str, problem: str) -> ModelServerError:
        """A ModelServerError for an answer that came back but makes no sense."""
        return ModelServerError(f"{self.label} at {self.url} answered {call} {problem}")

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def _http(self) -> httpx.Client:
        import httpx

        with self._lock:
            if self._client is None:
                headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
                self._client = httpx.Client(headers=headers, trust_env=self._trust_env)
            return self._client

    def _request(
        self, method: str, path: str, payload: dict[str, Any] | None, timeout: float | None
    ) -> Any:
        import httpx

        call = f"{method} {path}"
        seconds = self.timeout if timeout is None else timeout
        try:
            response = self._http().request(method, self.url + path, json=payload, timeout=seconds)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ModelServerDown(self._down_message()) from exc
        except httpx.TimeoutException as exc:
            raise ModelServerError(
                f"{self.label} at {self.url} did not answer {call} within {seconds:g} s"
                " (a model may still be loading): try again in a moment"
            ) from exc
        except httpx.HTTPError as exc:
            raise ModelServerError(
                f"{self.label} at {self.url} broke off {call}: {_one_line(str(exc))}"
            ) from exc
        if response.status_code >= 400:
            raise ModelServerError(self._status_message(response, call, payload))
        try:
            return response.json()
        except ValueError as exc:
            snippet = _one_line(response.text)[:60]
            raise self.error(call, f"with something that is not JSON: {snippet!r}") from exc

    def _down_message(self) -> str:
        if self.kind == "ollama":
            start = "start it with `ollama serve`"
        else:
            start = "start it (LM Studio, llama.cpp server, vLLM) or check OPENAI_BASE_URL"
        return f"{self.label} is not reachable at {self.url}: {start}, {self.fallback}"

    def _status_message(
        self, response: httpx.Response, call: str, payload: dict[str, Any] | None
    ) -> str:
        detail = _server_detail(response)
        code = response.status_code
        model = payload.get("model") if payload else None
        if self.kind == "ollama" and code == 404 and model and "model" in detail:
            return f"Ollama at {self.url} has no model `{model}`: run `ollama pull {model}`"
        if self.kind == "ollama" and code == 404:
            # Ollama before 0.3 had no /api/embed; its router answers a bare "page not found".
            return f"Ollama at {self.url} does not know {call}: upgrade Ollama"
        if self.kind == "openai" and code in (401, 403):
            return (
                f"{self.label} at {self.url} refused the API key (HTTP {code}):"
                " set OPENAI_API_KEY to a valid key"
            )
        return f"{self.label} at {self.url} answered HTTP {code} to {call}: {detail}"


def ollama_server(
    url: str | None = None, *, timeout: float = SERVER_TIMEOUT, fallback: str = USE_BUNDLED
) -> ModelServer:
    """Ollama at `url`, else $OLLAMA_URL, else localhost:11434."""
    base = url or os.environ.get("OLLAMA_URL") or DEFAULT_OLLAMA_URL
    return ModelServer("ollama", base, timeout=timeout, fallback=fallback)


def openai_server(
    name: str,
    base_url: str | None = None,
    api_key: str | None = None,
    *,
    timeout: float = SERVER_TIMEOUT,
    fallback: str = USE_BUNDLED,
) -> ModelServer:
    """An OpenAI-compatible server at `base_url`, else $OPENAI_BASE_URL, else OpenAI itself.

    The key is `api_key`, else $OPENAI_API_KEY; only OpenAI itself insists on one (`name`, the
    model spec, goes into the message saying so).
    """
    base = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_URL
    key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
    server = ModelServer("openai", base, api_key=key or None, timeout=timeout, fallback=fallback)
    if not key and urlsplit(server.url).hostname == "api.openai.com":
        raise UsageError(
            f"{name} needs an API key: set OPENAI_API_KEY, or point OPENAI_BASE_URL at a local"
            f" server (LM Studio, llama.cpp, vLLM), {fallback}"
        )
    return server


class OllamaEmbedder(Embedder):
    """An embedding model served by Ollama (POST /api/embed)."""

    batch_size = 64

    def __init__(
        self,
        model: str = DEFAULT_OLLAMA_MODEL,
        url: str | None = None,
        *,
        timeout: float = SERVER_TIMEOUT,
    ) -> None:
        self.model = model
        self.name = f"ollama:{model}"
        self.server = ollama_server(url, timeout=timeout)

    @property
    def where(self) -> str:
        return f"{self.name} at {self.server.url}"

    def health(self) -> None:
        """Check Ollama answers and has the model pulled (GET /api/tags)."""
        data = self.server.get("/api/tags")
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, list):
            raise self.server.error("GET /api/tags", "without a `models` list")
        names = {
            _ollama_tag(str(entry.get(key)))
            for entry in models
            if isinstance(entry, dict)
            for key in ("name", "model")
            if entry.get(key)
        }
        if _ollama_tag(self.model) not in names:
            raise ModelServerError(
                f"Ollama at {self.server.url} has no model `{self.model}`:"
                f" run `ollama pull {self.model}`"
            )

    def _embed_batch(self, texts: list[str]) -> object:
        data = self.server.post("/api/embed", {"model": self.model, "input": texts})
        vectors = data.get("embeddings") if isinstance(data, dict) else None
        if not isinstance(vectors, list):
            raise self.server.error("POST /api/embed", "without an `embeddings` list")
        return vectors


class OpenAIEmbedder(Embedder):
    """An embedding model behind an OpenAI-compatible API: OpenAI, LM Studio, llama.cpp, vLLM."""

    batch_size = 64

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = SERVER_TIMEOUT,
    ) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self.server = openai_server(self.name, base_url, api_key, timeout=timeout)

    @property
    def where(self) -> str:
        return f"{self.name} at {self.server.url}"

    def _embed_batch(self, texts: list[str]) -> object:
        data = self.server.post("/embeddings", {"model": self.model, "input": texts})
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list) or not all(
            isinstance(item, dict) and "embedding" in item for item in items
        ):
            raise self.server.error("POST /embeddings", "without a `data` list of embeddings")
        # The API returns rows in input order, but each carries its index; trust the index.
        if all(isinstance(item.get("index"), int) for item in items):
            items = sorted(items, key=lambda item: int(item["index"]))
        return [item["embedding"] for item in items]


def make_embedder(spec: str | None = None) -> Embedder:
    """The embedder a spec names; None reads VAULTMEM_EMBEDDER, then uses the bundled wordllama.

    Specs: "wordllama", "minilm", "ollama", "ollama:<model>", "openai:<model>",
    "sentence-transformers:<name or path>", and "fake" or "fake:<dim>" (for tests only).
    An embedder's `name` is a spec for the same model. "auto" is chosen per vault by
    `Vault` (vaultmem/embed_choice.py); here, without a vault, it is auto's choice for a new
    one: minilm when its package is installed, else wordllama.
    """
    text = (spec or os.environ.get("VAULTMEM_EMBEDDER") or DEFAULT_SPEC).strip()
    kind, colon, arg = text.partition(":")
    kind, arg = kind.strip().lower(), arg.strip()
    if kind == "auto" and not colon:
        from vaultmem.embed_choice import decide
        from vaultmem.encoder import find_minilm

        return make_embedder(decide(0, None, None, find_minilm() is not None).spec)
    if kind == "wordllama" and arg in ("", WordLlamaEmbedder.name.partition(":")[2]):
        return WordLlamaEmbedder()
    if kind == "minilm" and arg in ("", MiniLMEmbedder.name.partition(":")[2]):
        return MiniLMEmbedder()
    if kind == "ollama" and not colon:
        return OllamaEmbedder()
    if kind == "ollama" and arg:
        return OllamaEmbedder(arg)
    if kind == "openai" and arg:
        return OpenAIEmbedder(arg)
    if kind == "sentence-transformers" and arg:
        return SentenceTransformersEmbedder(arg)
    if kind == "fake" and not colon:
        return FakeEmbedder()
    if kind == "fake" and arg.isdigit() and int(arg) > 0:
        return FakeEmbedder(int(arg))
    raise UsageError(f"unknown embedder {text!r}: use one of {', '.join(SPEC_FORMS)}")


def _ollama_tag(model: str) -> str:
    # Ollama reads a model name without a tag as `<name>:latest`.
    return model if ":" in model.rsplit("/", 1)[-1] else f"{model}:latest"


def _server_detail(response: httpx.Response) -> str:
    """The server's own error text: Ollama's {"error": "..."}, OpenAI's {"error": {"message"}}."""
    try:
        data = response.json()
    except ValueError:
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    text = error if isinstance(error, str) and error.strip() else response.text
    return _one_line(text)[:200] or response.reason_phrase or "no details"


def _one_line(text: str) -> str:
    return " ".join(text.split())
