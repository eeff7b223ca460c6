"""Text models for HyDE, through the fake server speaking Ollama's and OpenAI's HTTP APIs."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tests.fake_model_server import FakeModelServer, Mode, unused_url
from vaultmem.errors import ModelServerDown, ModelServerError, UsageError
from vaultmem.llm import OllamaLLM, OpenAILLM, clean_passage, hyde_passage, make_llm

SHORT = 0.3  # seconds: the timeout for the "slow" mode, which answers after 1 s
QUERY = "what did the heat pump installer say about flow temperature?"


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("VAULTMEM_LLM", "OLLAMA_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_ollama_generate_posts_an_unstreamed_request(server: FakeModelServer) -> None:
    text = OllamaLLM("llama3.2", server.url).generate("Say hi.", max_tokens=50)
    assert text == server.reply
    assert server.posts("/api/generate") == [
        {"model": "llama3.2", "prompt": "Say hi.", "stream": False, "options": {"num_predict": 50}}
    ]


def test_openai_generate_posts_a_chat_completion(server: FakeModelServer) -> None:
    text = OpenAILLM("gpt-4o-mini", server.url + "/v1", "sk-test").generate("Say hi.")
    assert text == server.reply
    assert server.posts("/v1/chat/completions") == [
        {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Say hi."}],
         "max_tokens": 200}
    ]  # fmt: skip
    assert server.requests[-1].headers["Authorization"] == "Bearer sk-test"


@pytest.mark.parametrize(
    ("mode", "error"),
    [("http500", ModelServerError), ("not_json", ModelServerError), ("hangup", ModelServerError)],
)
def test_generate_raises_model_server_errors(
    server: FakeModelServer, mode: Mode, error: type[Exception]
) -> None:
    server.mode = mode
    with pytest.raises(error):
        OllamaLLM("llama3.2", server.url).generate("Say hi.")


def test_generate_with_a_missing_model_says_which_pull_to_run(server: FakeModelServer) -> None:
    with pytest.raises(ModelServerError) as caught:
        OllamaLLM("qwen3:8b", server.url).generate("Say hi.")
    assert str(caught.value) == (
        f"Ollama at {server.url} has no model `qwen3:8b`: run `ollama pull qwen3:8b`"
    )


def test_generate_when_down_suggests_going_without_hyde() -> None:
    url = unused_url()
    with pytest.raises(ModelServerDown) as caught:
        OllamaLLM("llama3.2", url).generate("Say hi.")
    assert str(caught.value) == (
        f"Ollama is not reachable at {url}: start it with `ollama serve`, or search without HyDE"
    )


# --- hyde_passage -------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_hyde_passage_asks_for_a_note_answering_the_query(
    server: FakeModelServer, backend: str
) -> None:
    llm: OllamaLLM | OpenAILLM
    if backend == "ollama":
        llm = OllamaLLM("llama3.2", server.url)
    else:
        llm = OpenAILLM("gpt-4o-mini", server.url + "/v1", "")
    assert hyde_passage(llm, QUERY) == server.reply
    if backend == "ollama":
        (body,) = server.posts("/api/generate")
        sent = body["prompt"]
    else:
        (body,) = server.posts("/v1/chat/completions")
        sent = body["messages"][0]["content"]
    assert QUERY in sent
    assert "personal markdown notes" in sent


def test_hyde_passage_is_none_without_a_model_or_query(server: FakeModelServer) -> None:
    assert hyde_passage(None, QUERY) is None
    assert hyde_passage(OllamaLLM("llama3.2", server.url), "   ") is None
    assert server.requests == []


def test_hyde_passage_is_none_with_one_notice_when_the_server_is_down(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = unused_url()
    with caplog.at_level(logging.WARNING, logger="vaultmem.llm"):
        assert hyde_passage(OllamaLLM("llama3.2", url), QUERY) is None
    assert caplog.messages == [
        f"HyDE skipped: Ollama is not reachable at {url}: start it with `ollama serve`,"
        " or search without HyDE"
    ]


@pytest.mark.parametrize("mode", ["http500", "not_json", "slow", "hangup"])
def test_hyde_passage_is_none_when_the_server_misbehaves(
    server: FakeModelServer, mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    server.mode = mode
    with caplog.at_level(logging.WARNING, logger="vaultmem.llm"):
        assert hyde_passage(OllamaLLM("llama3.2", server.url), QUERY, timeout=SHORT) is None
    (message,) = caplog.messages
    assert message.startswith(f"HyDE skipped: Ollama at {server.url} ")
    assert "\n" not in message


@pytest.mark.parametrize("reply", ["", "   \n ", "<think>The user wants a note.</think>", "OK."])
def test_hyde_passage_is_none_when_the_answer_is_garbage(
    server: FakeModelServer, reply: str, caplog: pytest.LogCaptureFixture
) -> None:
    server.reply = reply
    with caplog.at_level(logging.WARNING, logger="vaultmem.llm"):
        assert hyde_passage(OllamaLLM("llama3.2", server.url), QUERY) is None
    assert caplog.messages == [
        f"HyDE skipped: ollama:llama3.2 gave no usable passage for {QUERY!r}"
    ]


@pytest.mark.parametrize(
    ("answer", "passage"),
    [
        ("<think>\nHeat pumps…\n</think>\n\nThe flow is 45 degrees now.", "The flow is 45 degrees now."),  # noqa: E501
        ("Here is a passage:\n\nThe flow is 45 degrees now.", "The flow is 45 degrees now."),
        ('"The flow is 45 degrees now."', "The flow is 45 degrees now."),
        ("The flow is\n45 degrees now.", "The flow is 45 degrees now."),
        ("<think>never closed, cut off by max_tokens", None),
    ],
)  # fmt: skip
def test_clean_passage_keeps_only_the_passage(answer: str, passage: str | None) -> None:
    assert clean_passage(answer) == passage


# --- specs --------------------------------------------------------------------------------------


def test_make_llm_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert make_llm(None) is None
    assert make_llm("none") is None
    assert make_llm("") is None
    ollama = make_llm("ollama:llama3.2")
    assert isinstance(ollama, OllamaLLM)
    assert ollama.name == "ollama:llama3.2"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai = make_llm("openai:gpt-4o-mini")
    assert isinstance(openai, OpenAILLM)
    assert openai.name == "openai:gpt-4o-mini"
    monkeypatch.setenv("VAULTMEM_LLM", "ollama:qwen3:8b")
    assert make_llm(None) is not None
    assert make_llm("off") is None


@pytest.mark.parametrize("where", ["spec", "environment"])
def test_make_llm_keeps_an_ollama_models_tag(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ollama:qwen3:8b` is the model `qwen3:8b`; without its tag Ollama would look for
    `qwen3:latest`, which this server does not have."""
    with FakeModelServer(models=("qwen3:8b",)) as server:
        monkeypatch.setenv("OLLAMA_URL", server.url)
        if where == "environment":
            monkeypatch.setenv("VAULTMEM_LLM", "ollama:qwen3:8b")
        llm = make_llm("ollama:qwen3:8b" if where == "spec" else None)
        assert isinstance(llm, OllamaLLM) and llm.name == "ollama:qwen3:8b"
        assert llm.generate("Say hi.") == server.reply
        assert [body["model"] for body in server.posts("/api/generate")] == ["qwen3:8b"]


@pytest.mark.parametrize("spec", ["llama3.2", "ollama", "ollama:", "openai"])
def test_make_llm_unknown_spec_lists_the_valid_forms(spec: str) -> None:
    with pytest.raises(UsageError) as caught:
        make_llm(spec)
    assert str(caught.value) == (
        f"unknown text model {spec!r}: use one of ollama:<model>, openai:<model>, none"
    )


def test_openai_itself_needs_a_key() -> None:
    with pytest.raises(UsageError, match="openai:gpt-4o-mini needs an API key"):
        make_llm("openai:gpt-4o-mini")
