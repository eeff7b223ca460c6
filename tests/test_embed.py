"""Embedders: the bundled wordllama for real, servers through a fake speaking their HTTP APIs."""

from __future__ import annotations

import importlib.util
import math
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from tests.conftest import MakeVault
from tests.fake_model_server import FakeModelServer, Mode, fake_vector, unused_url
from vaultmem import embed
from vaultmem.embed import (
    Embedder,
    FakeEmbedder,
    OllamaEmbedder,
    OpenAIEmbedder,
    SentenceTransformersEmbedder,
    Vectors,
    WordLlamaEmbedder,
    make_embedder,
)
from vaultmem.errors import ModelServerDown, ModelServerError, UsageError

SHORT = 0.3  # seconds: the timeout for the "slow" mode, which answers after 1 s
# seconds: every other call's timeout. A loaded machine can take longer than SHORT to answer
# over loopback; only the test of a slow server may wait that little.
GENEROUS = 60.0


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer(dim=8) as fake:
        yield fake


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("VAULTMEM_EMBEDDER", "OLLAMA_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def ollama(
    server: FakeModelServer, model: str = "nomic-embed-text", timeout: float = GENEROUS
) -> OllamaEmbedder:
    return OllamaEmbedder(model, server.url, timeout=timeout)


def openai(server: FakeModelServer, timeout: float = GENEROUS) -> OpenAIEmbedder:
    return OpenAIEmbedder("text-embedding-3-small", server.url + "/v1", "", timeout=timeout)


MakeServerEmbedder = Callable[..., Embedder]
BACKENDS: dict[str, tuple[MakeServerEmbedder, str]] = {
    "ollama": (ollama, "/api/embed"),
    "openai": (openai, "/v1/embeddings"),
}


def unit(vector: list[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    return v / np.linalg.norm(v)


# --- the shared batching, order and normalisation -------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_100_texts_go_in_two_requests_of_64_and_36(server: FakeModelServer, backend: str) -> None:
    make, path = BACKENDS[backend]
    texts = [f"note {i} " + "word " * (i % 7) for i in range(100)]
    vectors = make(server).embed(texts)
    assert [len(body["input"]) for body in server.posts(path)] == [64, 36]
    assert vectors.shape == (100, 8)
    assert vectors.dtype == np.float32
    # Batches are sorted by length inside, but rows come back in the caller's order.
    for text, row in zip(texts, vectors, strict=True):
        np.testing.assert_allclose(row, unit(fake_vector(text, 8)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rows_are_unit_length(server: FakeModelServer, backend: str) -> None:
    assert np.linalg.norm(fake_vector("heat pump", 8)) > 2  # the server's are not unit length
    vectors = BACKENDS[backend][0](server).embed(["heat pump", "tariff", "Maya Chen"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_server_dim_is_learned_with_one_probe(server: FakeModelServer) -> None:
    embedder = ollama(server)
    assert embedder.dim == 8
    assert embedder.dim == 8
    assert len(server.posts("/api/embed")) == 1
    embedder.embed(["more"])
    assert len(server.posts("/api/embed")) == 2


def test_empty_input_gives_zero_rows_of_the_model_width(server: FakeModelServer) -> None:
    assert ollama(server).embed([]).shape == (0, 8)
    assert FakeEmbedder(16).embed([]).shape == (0, 16)


def test_one_string_is_refused_rather_than_embedded_letter_by_letter() -> None:
    with pytest.raises(TypeError):
        FakeEmbedder().embed("heat pump")


class _Returns(Embedder):
    """A backend returning fixed raw output, to check what `embed` accepts."""

    name = "returns:test"

    def __init__(self, raw: object) -> None:
        self.raw = raw

    def _embed_batch(self, texts: list[str]) -> object:
        return self.raw


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([[math.nan, 1.0]], "returns:test returned vectors with NaN or infinite values"),
        ([[1.0, "x"]], "returns:test returned vectors of different lengths or not made of numbers"),
        ([1.0, 2.0], "returns:test returned something other than a list of vectors"),
        ([], "returns:test returned 0 vectors for 1 texts"),
        ([[]], "returns:test returned empty vectors"),
    ],
)
def test_malformed_vectors_are_a_model_server_error(raw: object, message: str) -> None:
    with pytest.raises(ModelServerError) as caught:
        _Returns(raw).embed(["one"])
    assert str(caught.value) == message


def test_a_zero_vector_stays_zero_instead_of_nan() -> None:
    vectors = _Returns([[0.0, 0.0], [3.0, 4.0]]).embed(["", "text"])
    np.testing.assert_allclose(vectors, [[0.0, 0.0], [0.6, 0.8]])


# --- the fake embedder ------------------------------------------------------------------------


def test_fake_embedder_is_deterministic_and_shared_words_score_higher() -> None:
    fake = FakeEmbedder()
    a, b, c = fake.embed(["heat pump tariff", "the heat pump", "banana bread recipe"])
    assert fake.name == "fake:32"
    assert a @ b > a @ c
    np.testing.assert_array_equal(fake.embed(["heat pump tariff"])[0], a)
    np.testing.assert_allclose(np.linalg.norm([a, b, c], axis=1), 1.0, rtol=1e-6)


# --- Ollama -----------------------------------------------------------------------------------


def test_health_passes_when_the_model_is_pulled(server: FakeModelServer) -> None:
    ollama(server).health()  # "nomic-embed-text" is "nomic-embed-text:latest"
    ollama(server, "llama3.2:latest").health()
    assert [r.path for r in server.requests] == ["/api/tags", "/api/tags"]


def test_health_names_the_missing_model_and_the_pull_to_run(server: FakeModelServer) -> None:
    with pytest.raises(ModelServerError) as caught:
        ollama(server, "mxbai-embed-large").health()
    assert str(caught.value) == (
        f"Ollama at {server.url} has no model `mxbai-embed-large`:"
        " run `ollama pull mxbai-embed-large`"
    )


def test_embedding_with_a_missing_model_says_which_pull_to_run(server: FakeModelServer) -> None:
    with pytest.raises(ModelServerError) as caught:
        ollama(server, "mxbai-embed-large").embed(["x"])
    assert "run `ollama pull mxbai-embed-large`" in str(caught.value)


def test_an_ollama_without_the_endpoint_is_told_to_upgrade(server: FakeModelServer) -> None:
    with pytest.raises(ModelServerError) as caught:
        OllamaEmbedder(url=server.url + "/old").embed(["x"])
    assert str(caught.value) == (
        f"Ollama at {server.url}/old does not know POST /api/embed: upgrade Ollama"
    )


def test_ollama_down_says_how_to_start_it_or_use_the_bundled_model() -> None:
    url = unused_url()
    with pytest.raises(ModelServerDown) as caught:
        OllamaEmbedder(url=url).embed(["x"])
    assert str(caught.value) == (
        f"Ollama is not reachable at {url}: start it with `ollama serve`,"
        " or use the bundled model with --embedder wordllama"
    )
    assert caught.value.exit_code == 5


def test_ollama_health_when_down_is_the_same_error() -> None:
    with pytest.raises(ModelServerDown, match="start it with `ollama serve`"):
        OllamaEmbedder(url=unused_url()).health()


def test_ollama_url_comes_from_the_environment(
    server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_URL", server.url + "/")
    embedder = OllamaEmbedder()
    assert embedder.server.url == server.url
    assert embedder.embed(["x"]).shape == (1, 8)
    assert server.posts("/api/embed") == [{"model": "nomic-embed-text", "input": ["x"]}]


def test_a_url_that_is_not_http_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="is not an http\\(s\\) URL: check OLLAMA_URL"):
        OllamaEmbedder(url="localhost:11434")


# --- OpenAI-compatible servers ------------------------------------------------------------------


def test_openai_sends_the_key_and_a_wrong_key_says_so() -> None:
    with FakeModelServer(api_key="sk-right") as server:
        base = server.url + "/v1"
        OpenAIEmbedder("m", base, "sk-right").embed(["x"])
        assert server.requests[-1].headers["Authorization"] == "Bearer sk-right"
        with pytest.raises(ModelServerError) as caught:
            OpenAIEmbedder("m", base, "sk-wrong").embed(["x"])
    assert str(caught.value) == (
        f"The OpenAI-compatible server at {base} refused the API key (HTTP 401):"
        " set OPENAI_API_KEY to a valid key"
    )


def test_openai_itself_needs_a_key_but_a_local_server_does_not(
    server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UsageError, match="openai:text-embedding-3-small needs an API key"):
        OpenAIEmbedder("text-embedding-3-small")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    assert OpenAIEmbedder("local-model").embed(["x"]).shape == (1, 8)
    assert "Authorization" not in server.requests[-1].headers


def test_openai_down_names_the_servers_it_could_be() -> None:
    url = unused_url()
    with pytest.raises(ModelServerDown) as caught:
        OpenAIEmbedder("m", url, "").embed(["x"])
    assert str(caught.value) == (
        f"The OpenAI-compatible server is not reachable at {url}: start it (LM Studio,"
        " llama.cpp server, vLLM) or check OPENAI_BASE_URL,"
        " or use the bundled model with --embedder wordllama"
    )


# --- misbehaving servers ------------------------------------------------------------------------

MISBEHAVIOURS: list[tuple[Mode, str]] = [
    ("http500", "answered HTTP 500 to POST {path}: llama runner process has terminated"),
    ("wrong_count", "returned 2 vectors for 3 texts"),
    ("ragged", "returned vectors of different lengths or not made of numbers"),
    ("not_json", "answered POST {path} with something that is not JSON: '<html><body>502"),
    ("slow", "did not answer POST {path} within 0.3 s (a model may still be loading)"),
    ("hangup", "broke off POST {path}: Server disconnected without sending a response"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("mode", "message"), MISBEHAVIOURS)
def test_misbehaving_server_gives_a_one_line_model_server_error(
    server: FakeModelServer, backend: str, mode: Mode, message: str
) -> None:
    make, path = BACKENDS[backend]
    server.mode = mode
    with pytest.raises(ModelServerError) as caught:
        make(server, timeout=SHORT if mode == "slow" else GENEROUS).embed(["one", "two", "three"])
    text = str(caught.value)
    assert message.format(path=path.removeprefix("/v1")) in text
    assert "\n" not in text
    assert caught.value.exit_code == 5


@pytest.mark.parametrize("backend", BACKENDS)
def test_vectors_changing_width_is_an_error_naming_both_widths(
    server: FakeModelServer, backend: str
) -> None:
    embedder = BACKENDS[backend][0](server)
    assert embedder.dim == 8
    server.mode = "wrong_dims"
    with pytest.raises(ModelServerError) as caught:
        embedder.embed(["x"])
    assert f"{embedder.name} at {server.url}" in str(caught.value)
    assert "returned 11-dimensional vectors, expected 8" in str(caught.value)


# --- specs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "kind", "name"),
    [
        ("wordllama", WordLlamaEmbedder, "wordllama:l2_supercat_256"),
        ("wordllama:l2_supercat_256", WordLlamaEmbedder, "wordllama:l2_supercat_256"),
        (" WordLlama ", WordLlamaEmbedder, "wordllama:l2_supercat_256"),
        ("ollama", OllamaEmbedder, "ollama:nomic-embed-text"),
        ("ollama:mxbai-embed-large", OllamaEmbedder, "ollama:mxbai-embed-large"),
        ("ollama:hf.co/org/model:Q4_K_M", OllamaEmbedder, "ollama:hf.co/org/model:Q4_K_M"),
        ("openai:text-embedding-3-small", OpenAIEmbedder, "openai:text-embedding-3-small"),
        ("fake", FakeEmbedder, "fake:32"),
        ("fake:16", FakeEmbedder, "fake:16"),
    ],
)
def test_specs_name_embedders_and_names_are_specs(
    spec: str, kind: type[Embedder], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    embedder = make_embedder(spec)
    assert type(embedder) is kind
    assert embedder.name == name
    assert make_embedder(embedder.name).name == name


def test_no_spec_reads_the_environment_then_defaults_to_wordllama(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert isinstance(make_embedder(None), WordLlamaEmbedder)
    monkeypatch.setenv("VAULTMEM_EMBEDDER", "fake:8")
    assert make_embedder(None).name == "fake:8"
    assert make_embedder("ollama").name == "ollama:nomic-embed-text"


@pytest.mark.parametrize(
    "spec", ["bert", "ollama:", "openai", "openai:", "fake:x", "fake:0", "wordllama:other"]
)
def test_an_unknown_spec_lists_the_valid_forms(spec: str) -> None:
    with pytest.raises(UsageError) as caught:
        make_embedder(spec)
    assert str(caught.value) == (
        f"unknown embedder {spec!r}: use one of auto (the default: minilm for small vaults,"
        " wordllama beyond), wordllama (the bundled model),"
        " minilm (all-MiniLM-L6-v2 from a model package), ollama, ollama:<model>,"
        " openai:<model>, sentence-transformers:<name or path>"
    )


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is not None,
    reason="sentence-transformers is installed here",
)
def test_sentence_transformers_missing_says_what_to_install() -> None:
    with pytest.raises(UsageError) as caught:
        make_embedder("sentence-transformers:all-MiniLM-L6-v2")
    assert str(caught.value) == (
        "sentence-transformers is not installed: run"
        " `pip install 'vaultmem[sentence-transformers]'`,"
        " or use the bundled model with --embedder wordllama"
    )
    with pytest.raises(UsageError):
        SentenceTransformersEmbedder("all-MiniLM-L6-v2")


# --- the bundled wordllama, for real ------------------------------------------------------------


def test_wordllama_loads_offline_and_gives_256d_unit_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("wordllama tried to reach the network")

    monkeypatch.setattr(embed, "_wordllama_model", None)  # load afresh, under the guard
    monkeypatch.setattr(socket.socket, "connect", no_network)
    vectors = WordLlamaEmbedder().embed(["heat pump", "heating", "banana bread", "boiler", ""])
    assert vectors.shape == (5, 256)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[:4], axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(vectors[4], np.zeros(256, dtype=np.float32))
    heat_pump, heating, banana_bread, boiler, _ = vectors
    assert heat_pump @ heating > heat_pump @ banana_bread
    assert heat_pump @ boiler > heat_pump @ banana_bread


def test_wordllama_is_imported_lazily_and_leaves_logging_alone() -> None:
    code = (
        "import logging, sys\n"
        "from vaultmem.embed import make_embedder\n"
        "embedder = make_embedder('wordllama')\n"
        "print('wordllama' in sys.modules)\n"
        "embedder.embed(['x'])\n"
        "print('wordllama' in sys.modules, logging.getLogger().handlers,"
        " logging.getLogger().level)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    # the shipped files are read directly: the package (pydantic, requests) is never imported
    assert result.stdout.split("\n")[:2] == ["False", "False [] 30"]


def test_wordllama_package_loader_leaves_logging_alone() -> None:
    """The fallback, for a wordllama whose files are elsewhere: importing it would set up
    logging (basicConfig at INFO), which the front-end owns."""
    code = (
        "import logging\n"
        "from vaultmem import embed\n"
        "embed._load_wordllama_package().embed(['x'])\n"
        "print(logging.getLogger().handlers, logging.getLogger().level)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split("\n")[0] == "[] 30"


@pytest.mark.parametrize("batch_size", [1, 4, 64])
def test_wordllama_read_from_its_files_gives_the_packages_own_vectors(batch_size: int) -> None:
    texts = ["center a div", "", "héllo wörld 日本語 🙂", "word " * 3000, "fetch blocked by CORS"]
    texts += [f"note {i}: a heat pump and its tariff" for i in range(9)]
    files = embed._WordLlamaFiles.find()
    assert files is not None  # the wheel ships them where this wordllama version keeps them
    ours = files.embed(texts, batch_size=batch_size)
    theirs = embed._load_wordllama_package().embed(texts, norm=False, batch_size=batch_size)
    np.testing.assert_array_equal(ours, theirs)
    assert ours.dtype == np.float32


class _Recording(FakeEmbedder):
    """The fake model, keeping every text it is given; `shout` changes what a section is."""

    def __init__(self, shout: bool = False) -> None:
        super().__init__()
        self.shout = shout
        self.texts: list[str] = []

    def section_text(self, headings: str, body: str, limit: int) -> str:
        text = super().section_text(headings, body, limit)
        return text.upper() if self.shout else text

    def _embed_batch(self, texts: list[str]) -> Vectors:
        self.texts.extend(texts)
        return super()._embed_batch(texts)


def test_a_section_is_embedded_as_its_heading_path_and_text(make_vault: MakeVault) -> None:
    long_line = "word " * 1000  # one 5,000-character line: embedded by its first 4,000
    vault = make_vault(
        {"Heat pump.md": f"# Heat pump\n\nRuns at night.\n\n## Costs\n\n{long_line}\n"}
    )
    model = _Recording()
    vault.index.reindex(embedder=model)
    # the heading path, a line break, the section's text: the long one cut at 4,000 characters
    assert "Heat pump\n# Heat pump\n\nRuns at night." in model.texts
    assert f"Heat pump Costs\n{long_line}"[:4000] in model.texts
    assert max(len(t) for t in model.texts) == 4000


def test_a_section_is_embedded_as_its_model_says(make_vault: MakeVault) -> None:
    vault = make_vault({"Heat pump.md": "# Heat pump\n\nRuns at night.\n"})
    model = _Recording(shout=True)
    vault.index.reindex(embedder=model)
    assert model.texts == ["HEAT PUMP\n# HEAT PUMP\n\nRUNS AT NIGHT."]
