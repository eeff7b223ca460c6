"""A fake model server for tests: Ollama's and OpenAI's HTTP APIs on loopback, misbehaving on cue.

It speaks Ollama's GET /api/tags, POST /api/embed and POST /api/generate, and OpenAI's
POST /v1/embeddings and POST /v1/chat/completions. Vectors are deterministic (seeded by a hash of
the text) and deliberately not of unit length. Set `mode` to make every POST misbehave.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

import numpy as np

Mode = Literal[
    "ok",  # answer properly
    "http500",  # HTTP 500 with an error body
    "wrong_count",  # one vector fewer than texts
    "wrong_dims",  # vectors three wider than `dim`
    "ragged",  # vectors of different widths in one answer
    "not_json",  # an HTML error page with status 200
    "slow",  # answer properly after `slow_seconds`
    "hangup",  # close the connection without answering
]


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


def fake_vector(text: str, dim: int) -> list[float]:
    """The vector the fake server gives `text`: seeded by its hash, length about 5·√dim."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    return [float(x) for x in np.random.default_rng(seed).normal(scale=5.0, size=dim)]


def unused_url() -> str:
    """A loopback URL where nothing listens, so connecting is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _ollama_tag(model: str) -> str:
    return model if ":" in model else f"{model}:latest"


class FakeModelServer:
    """A real HTTP server in a thread; `url` is Ollama's base, `url + "/v1"` OpenAI's."""

    def __init__(
        self,
        dim: int = 8,
        models: tuple[str, ...] = ("nomic-embed-text:latest", "llama3.2:latest"),
        api_key: str | None = None,
    ) -> None:
        self.dim = dim
        self.models = models
        self.api_key = api_key
        self.mode: Mode = "ok"
        self.slow_seconds = 1.0
        self.reply = (
            "The heat pump was installed in March; the installer set the flow temperature"
            " to 45 degrees and the bills dropped by a third."
        )
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a "slow" handler may still be asleep at stop()
        # A short poll interval: shutdown() waits for one, and every test stops a server.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def posts(self, path: str) -> list[Any]:
        """The JSON bodies POSTed to `path`, in order."""
        with self._lock:
            return [r.body for r in self.requests if r.method == "POST" and r.path == path]

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def start(self) -> FakeModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def vectors(self, texts: list[str]) -> list[list[float]]:
        """The embeddings for `texts`, bent as the current mode says."""
        vectors = [fake_vector(text, self.dim) for text in texts]
        if self.mode == "wrong_count":
            return vectors[:-1]
        if self.mode == "wrong_dims":
            return [[*v, 1.0, 2.0, 3.0] for v in vectors]
        if self.mode == "ragged":
            return [v if i % 2 else v[:-1] for i, v in enumerate(vectors)]
        return vectors

    def has_model(self, model: str) -> bool:
        return _ollama_tag(model) in {_ollama_tag(m) for m in self.models}


def _handler_for(fake: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

        def do_GET(self) -> None:
            fake.record(Request("GET", self.path, None, dict(self.headers)))
            if self.path == "/api/tags":
                models = [{"name": m, "model": m, "size": 1} for m in fake.models]
                self._json(200, {"models": models})
            else:
                self._text(404, "404 page not found")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"null")
            fake.record(Request("POST", self.path, body, dict(self.headers)))
            if fake.mode == "hangup":
                self.close_connection = True
                return
            if fake.mode == "slow":
                time.sleep(fake.slow_seconds)
            if fake.mode == "http500":
                self._json(500, {"error": "llama runner process has terminated: out of memory"})
                return
            if fake.mode == "not_json":
                self._text(200, "<html><body>502 Bad Gateway</body></html>", "text/html")
                return
            route = {
                "/api/embed": self._ollama_embed,
                "/api/generate": self._ollama_generate,
                "/v1/embeddings": self._openai_embeddings,
                "/v1/chat/completions": self._openai_chat,
            }.get(self.path)
            if route is None:
                self._text(404, "404 page not found")
            else:
                route(body)

        def _ollama_embed(self, body: dict[str, Any]) -> None:
            if not fake.has_model(body["model"]):
                missing = f'model "{body["model"]}" not found, try pulling it first'
                self._json(404, {"error": missing})
                return
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            self._json(200, {"model": body["model"], "embeddings": fake.vectors(texts)})

        def _ollama_generate(self, body: dict[str, Any]) -> None:
            if not fake.has_model(body["model"]):
                missing = f'model "{body["model"]}" not found, try pulling it first'
                self._json(404, {"error": missing})
                return
            self._json(200, {"model": body["model"], "response": fake.reply, "done": True})

        def _authorised(self) -> bool:
            if fake.api_key is None or self.headers.get("Authorization") == (
                f"Bearer {fake.api_key}"
            ):
                return True
            error = {"message": "Incorrect API key provided", "type": "invalid_request_error"}
            self._json(401, {"error": error})
            return False

        def _openai_embeddings(self, body: dict[str, Any]) -> None:
            if not self._authorised():
                return
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [
                {"object": "embedding", "index": i, "embedding": v}
                for i, v in enumerate(fake.vectors(texts))
            ]
            # Rows come back in reverse, each with its index: clients must use the index.
            self._json(200, {"object": "list", "model": body["model"], "data": data[::-1]})

        def _openai_chat(self, body: dict[str, Any]) -> None:
            if not self._authorised():
                return
            message = {"role": "assistant", "content": fake.reply}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            self._json(200, {"object": "chat.completion", "choices": [choice]})

        def _json(self, status: int, payload: object) -> None:
            self._text(status, json.dumps(payload), "application/json")

        def _text(self, status: int, text: str, content_type: str = "text/plain") -> None:
            data = text.encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (the "slow" mode)

    return Handler
