"""Text generation for HyDE: Ollama or an OpenAI-compatible server writes a hypothetical note.

HyDE (hypothetical document embeddings) embeds a short made-up passage that answers the query,
which lands nearer the notes that hold the answer than the bare question does. It is an extra:
when the server is down or answers nonsense, `hyde_passage` says so once on stderr and search
goes on without it.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Protocol

from vaultmem.embed import SERVER_TIMEOUT, ollama_server, openai_server
from vaultmem.errors import ModelServerDown, ModelServerError, UsageError

log = logging.getLogger(__name__)

SPEC_FORMS = ("ollama:<model>", "openai:<model>", "none")
WITHOUT_HYDE = "or search without HyDE"

HYDE_PROMPT = """\
Write a short passage, two to four sentences, as it might appear in someone's personal \
markdown notes, that answers or covers the following:

{query}

Write only the passage, in plain prose: no preamble, no heading, no list, no questions back."""

HYDE_MIN_WORDS = 4
HYDE_MAX_CHARS = 1500


class LLM(Protocol):
    """A text generation model: a prompt in, the model's text out."""

    name: str

    def generate(self, prompt: str, max_tokens: int = 200, timeout: float = SERVER_TIMEOUT) -> str:
        """The model's answer; raises ModelServerDown or ModelServerError when it has none."""
        ...


class OllamaLLM:
    """A model served by Ollama (POST /api/generate, not streamed)."""

    def __init__(self, model: str, url: str | None = None) -> None:
        self.model = model
        self.name = f"ollama:{model}"
        self.server = ollama_server(url, fallback=WITHOUT_HYDE)

    def generate(self, prompt: str, max_tokens: int = 200, timeout: float = SERVER_TIMEOUT) -> str:
        payload = {
            "model": self.model,
            "prompt": prompt,
            "stream": False,
            "options": {"num_predict": max_tokens},
        }
        data = self.server.post("/api/generate", payload, timeout=timeout)
        text = data.get("response") if isinstance(data, dict) else None
        if not isinstance(text, str):
            raise self.server.error("POST /api/generate", "without a `response` text")
        return text


class OpenAILLM:
    """A chat model behind an OpenAI-compatible API (POST /chat/completions)."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self.server = openai_server(self.name, base_url, api_key, fallback=WITHOUT_HYDE)

    def generate(self, prompt: str, max_tokens: int = 200, timeout: float = SERVER_TIMEOUT) -> str:
        payload = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
        }
        data = self.server.post("/chat/completions", payload, timeout=timeout)
        try:
            text = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            text = None
        if not isinstance(text, str):
            raise self.server.error("POST /chat/completions", "without a message content")
        return text


def make_llm(spec: str | None = None) -> LLM | None:
    """The text model a spec names, or None for no HyDE; None reads VAULTMEM_LLM.

    Specs: "ollama:<model>", "openai:<model>", and "none" (or an empty spec) for no model.
    """
    text = (spec or os.environ.get("VAULTMEM_LLM") or "").strip()
    if text.lower() in ("", "none", "off"):
        return None
    kind, _, model = text.partition(":")
    kind, model = kind.strip().lower(), model.strip()
    if kind == "ollama" and model:
        return OllamaLLM(model)
    if kind == "openai" and model:
        return OpenAILLM(model)
    raise UsageError(f"unknown text model {text!r}: use one of {', '.join(SPEC_FORMS)}")


def hyde_passage(llm: LLM | None, query: str, *, timeout: float = SERVER_TIMEOUT) -> str | None:
    """A short hypothetical note passage answering `query`, or None when no usable one came.

    A server that is down, fails or answers nonsense gives None and one notice on stderr; HyDE
    only ever adds to a search, so it never raises for those.
    """
    if llm is None or not query.strip():
        return None
    try:
        answer = llm.generate(HYDE_PROMPT.format(query=query.strip()), timeout=timeout)
    except (ModelServerDown, ModelServerError) as exc:
        log.warning("HyDE skipped: %s", exc)
        return None
    passage = clean_passage(answer)
    if passage is None:
        log.warning("HyDE skipped: %s gave no usable passage for %r", llm.name, query[:80])
    return passage


def clean_passage(answer: str) -> str | None:
    """The passage in a model's answer: reasoning, preamble and quotes dropped; None if empty."""
    # Reasoning models (qwen3, deepseek-r1) put their thinking in <think> blocks.
    text = re.sub(r"<think>.*?(</think>|$)", "", answer, flags=re.DOTALL | re.IGNORECASE)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    # "Here is a passage:" on a line of its own, despite the prompt.
    if len(lines) > 1 and lines[0].endswith(":"):
        lines = lines[1:]
    passage = " ".join(lines).strip().strip("\"'“”").strip()
    if len(re.findall(r"\w+", passage)) < HYDE_MIN_WORDS:
        return None
    return passage[:HYDE_MAX_CHARS]
