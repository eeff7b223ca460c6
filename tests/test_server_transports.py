"""`vaultmem mcp` as clients meet it: a stdio subprocess, and streamable HTTP on loopback.

Both start the real command in a subprocess and talk to it with the MCP SDK's own client; the
HTTP tests also send raw requests to check the gate (token, Host, Origin, body size, /health).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import TextContent

from tests.conftest import SAMPLE_VAULT, fake_model_env
from vaultmem.errors import UsageError
from vaultmem.server import allowed_hosts, check_bind, is_loopback

pytestmark = pytest.mark.anyio
TOKEN = "s3cret-token-for-tests"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def unindexed_copy(root: Path) -> Path:
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".vaultmem"))
    return root


def _text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


# --------------------------------------------------------------------------- stdio


def test_stdio_answers_lines_that_are_not_messages_with_json_rpc_errors(tmp_path: Path) -> None:
    """Issue 15, defect 19: the SDK dropped them without a word (the client waited forever)."""
    import json

    root = unindexed_copy(tmp_path / "vault")
    lines = [
        "not json",
        '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":"\\ud800"}}',  # lone surrogate
        "[" * 50_000 + "]" * 50_000,  # nesting past any parser's limit
        '{"a": 1}',  # JSON, but no JSON-RPC message
        '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    ]
    server = subprocess.Popen(
        [sys.executable, "-m", "vaultmem", "--vault", str(root), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=fake_model_env(),
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write("".join(line + "\n" for line in lines))
        server.stdin.flush()
        # each line is answered (a hang is caught by pytest's timeout)
        answers = [json.loads(server.stdout.readline()) for _ in lines]
    finally:
        server.stdin.close()
        server.wait(timeout=300)
    assert [(a.get("id"), a.get("error", {}).get("code")) for a in answers] == [
        (None, -32700),
        (None, -32700),
        (None, -32700),
        (None, -32600),
        (1, None),
    ], answers
    assert "recursion" in answers[2]["error"]["message"]
    assert answers[4]["result"] == {}


async def test_stdio_subprocess_builds_the_index_and_answers(tmp_path: Path) -> None:
    root = unindexed_copy(tmp_path / "vault")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "vaultmem", "--vault", str(root), "mcp"],
        env={"VAULTMEM_EMBEDDER": "fake"},
        cwd=str(tmp_path),
    )
    with open(tmp_path / "stderr.log", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "search" in names and "persona_context" in names
            found = await client.call_tool(
                "search", {"query": "tariff sync", "mode": "keyword", "limit": 2}
            )
            assert not found.is_error
            assert found.structured_content is not None
            assert [r["path"] for r in found.structured_content["results"]] == [
                "episodes/2026-11-26 Tariff sync outage.md",  # the expired scratch note: out
                "work/Meeting notes.md",
            ]
            missing = await client.call_tool("read_note", {"ref": "../../etc/passwd"})
            assert missing.is_error and "root:" not in _text(missing)
            # Freshness over the real transport: an edit made while the server runs.
            (root / "Quokka.md").write_text("# Quokka\n\nquokkas smile\n", encoding="utf-8")
            deadline = time.monotonic() + 60  # generous: a loaded machine is slow to notice
            while True:
                seen = await client.call_tool("search", {"query": "quokkas", "mode": "keyword"})
                assert seen.structured_content is not None
                if seen.structured_content["results"]:
                    break
                assert time.monotonic() < deadline, "the edit never showed up"
                await anyio.sleep(0.1)
            assert seen.structured_content["results"][0]["path"] == "Quokka.md"
    log = (tmp_path / "stderr.log").read_text()
    assert "no index for" in log and "building it once" in log
    assert (root / ".vaultmem" / "index.db").exists()


# --------------------------------------------------------------------------- HTTP


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(args: list[str], stderr: IO[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "vaultmem", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        env=fake_model_env(),
    )


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`vaultmem mcp --http` with a token, on a free loopback port; yields its base URL."""
    tmp = tmp_path_factory.mktemp("http")
    root = unindexed_copy(tmp / "vault")
    port = _free_port()
    with open(tmp / "stderr.log", "w") as errlog:
        process = _start(
            ["--vault", str(root), "mcp", "--http", "--port", str(port), "--token", TOKEN], errlog
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, (tmp / "stderr.log").read_text()
                try:
                    if httpx.get(base + "/health", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "the server never came up"
                time.sleep(0.1)
            yield base
        finally:
            process.terminate()
            process.wait(timeout=60)
    assert process.stdout is not None and process.stdout.read() == ""  # nothing on stdout


def _initialize() -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }


MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_health_answers_without_a_token_and_tells_nothing_about_the_vault(
    http_server: str,
) -> None:
    response = httpx.get(http_server + "/health")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "server": "vaultmem",
        "version": response.json()["version"],
    }


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong-token", f"Bearer {TOKEN}x", f"bearer{TOKEN}", TOKEN, f"Basic {TOKEN}"],
)
def test_mcp_without_the_right_token_is_401(http_server: str, authorization: str | None) -> None:
    headers = dict(MCP_HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization
    response = httpx.post(http_server + "/mcp", json=_initialize(), headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert "Maya" not in response.text


def test_the_right_token_is_let_in(http_server: str) -> None:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    response = httpx.post(http_server + "/mcp", json=_initialize(), headers=headers)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1.nip.io", ""])
def test_a_foreign_host_header_is_refused(http_server: str, host: str) -> None:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}", "Host": host}
    response = httpx.post(http_server + "/mcp", json=_initialize(), headers=headers)
    assert response.status_code == 421
    assert httpx.get(http_server + "/health", headers={"Host": host}).status_code == 421


def test_localhost_forms_of_the_host_are_accepted(http_server: str) -> None:
    port = http_server.rsplit(":", 1)[1]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}"):
        assert httpx.get(http_server + "/health", headers={"Host": host}).status_code == 200


def test_a_host_header_in_capitals_is_this_server(http_server: str) -> None:
    # issue 15, defect 17: host names are case-insensitive; `LOCALHOST:port` got 421
    port = http_server.rsplit(":", 1)[1]
    for host in (f"LOCALHOST:{port}", f"LocalHost:{port}"):
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}", "Host": host}
        assert httpx.get(http_server + "/health", headers={"Host": host}).status_code == 200
        response = httpx.post(http_server + "/mcp", json=_initialize(), headers=headers)
        assert response.status_code == 200, response.text
        origin = {"Origin": f"HTTP://LOCALHOST:{port}"}
        response = httpx.post(
            http_server + "/mcp", json=_initialize(), headers={**headers, **origin}
        )
        assert response.status_code == 200, response.text


def test_a_foreign_origin_is_refused(http_server: str) -> None:
    headers = {
        **MCP_HEADERS,
        "Authorization": f"Bearer {TOKEN}",
        "Origin": "http://evil.example",
    }
    response = httpx.post(http_server + "/mcp", json=_initialize(), headers=headers)
    assert response.status_code == 403


def test_a_huge_body_is_413(http_server: str) -> None:
    headers = {
        **MCP_HEADERS,
        "Authorization": f"Bearer {TOKEN}",
        "Content-Type": "application/json",
    }
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "'
        + (b"x" * (2 * 1024 * 1024))
        + b'"}}'
    )
    response = httpx.post(http_server + "/mcp", content=body, headers=headers)
    assert response.status_code == 413


async def test_the_sdk_client_works_over_http_with_the_token(http_server: str) -> None:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    async with http, Client(streamable_http_client(http_server + "/mcp", http_client=http)) as c:
        found = await c.call_tool("search", {"query": "miso", "mode": "keyword", "limit": 1})
        assert found.structured_content is not None
        assert [r["path"] for r in found.structured_content["results"]] == [
            "personal/recipes/Miso Soup.md"
        ]
        note = await c.call_tool("read_note", {"ref": "Miso Soup", "heading": "Ingredients"})
        assert not note.is_error, _text(note)


async def test_the_sdk_client_without_the_token_is_refused(http_server: str) -> None:
    with pytest.raises(Exception) as caught:
        async with Client(http_server + "/mcp") as c:
            await c.list_tools()

    def leaves(exc: BaseException) -> list[BaseException]:
        if isinstance(exc, BaseExceptionGroup):
            return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
        return [exc]

    assert any(isinstance(e, MCPError) for e in leaves(caught.value)), caught.value


def test_binding_beyond_loopback_without_a_token_is_refused(tmp_path: Path) -> None:
    root = unindexed_copy(tmp_path / "vault")
    env = fake_model_env()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "vaultmem",
            "--vault",
            str(root),
            "mcp",
            "--http",
            "--host",
            "0.0.0.0",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 2
    assert "refusing to serve the vault on 0.0.0.0 without a token" in result.stderr
    assert not (root / ".vaultmem").exists()  # refused before touching anything


def test_http_options_need_http(tmp_path: Path) -> None:
    root = unindexed_copy(tmp_path / "vault")
    result = subprocess.run(
        [sys.executable, "-m", "vaultmem", "--vault", str(root), "mcp", "--port", "9999"],
        capture_output=True,
        text=True,
        env=fake_model_env(),
        timeout=60,
    )
    assert result.returncode == 2 and "--port only apply with --http" in result.stderr


# --------------------------------------------------------------------------- the rules, directly


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("myhost.lan", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    if loopback:
        check_bind(host, None)
    else:
        with pytest.raises(UsageError):
            check_bind(host, None)
        check_bind(host, "token")


def test_allowed_hosts_are_the_bind_address_and_localhost_forms() -> None:
    assert allowed_hosts("127.0.0.1", 48400) == [
        "127.0.0.1",
        "127.0.0.1:48400",
        "[::1]",
        "[::1]:48400",
        "localhost",
        "localhost:48400",
    ]
    assert "192.168.1.5:8000" in allowed_hosts("192.168.1.5", 8000)
    assert "0.0.0.0:8000" not in allowed_hosts("0.0.0.0", 8000)
    assert "notes.lan:8000" in allowed_hosts("0.0.0.0", 8000, ("notes.lan",))
