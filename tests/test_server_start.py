"""`vaultmem mcp` when the index cannot be used at start: another schema version, a file that
is not SQLite, a truncated index, one this account may not read, none at all.

The server starts anyway (a client would only show "failed to start"), says the problem once on
stderr, answers every tool call with the CLI's words for it, and recovers by itself once a
person fixed it (`vaultmem reindex --full` in another terminal, the permissions): no restart.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import sqlean
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

from tests.conftest import SAMPLE_VAULT, fake_model_env
from tests.test_server import copy_sample
from vaultmem.server import build_server, serving
from vaultmem.store import SCHEMA_VERSION
from vaultmem.vault import Vault

pytestmark = pytest.mark.anyio
DEADLINE = 120.0  # seconds: a loaded machine is slow, never wrong


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def indexed_copy(root: Path) -> Vault:
    vault = copy_sample(root)
    vault.close()
    return vault


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def failed(result: CallToolResult) -> str:
    assert result.is_error, result
    return text(result)


def other_schema(index: Path) -> None:
    """The index as another version of vaultmem left it."""
    conn = sqlean.connect(str(index))
    conn.execute(
        "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION - 1),)
    )
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def vaultmem(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`vaultmem --vault ROOT ARGS`, as a person runs it in another terminal."""
    return subprocess.run(
        [sys.executable, "-m", "vaultmem", "--vault", str(root), *args],
        capture_output=True,
        text=True,
        env=fake_model_env(),
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


async def until_answered(client: Client, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    """The first answer of `tool` that is not an error (the server saw the fix)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        result = await client.call_tool(tool, arguments)
        if not result.is_error:
            return result
        assert time.monotonic() < deadline, text(result)
        await anyio.sleep(0.05)


@asynccontextmanager
async def stdio(root: Path, log: Path, prefix: tuple[str, ...] = ()) -> AsyncIterator[Client]:
    """The real `vaultmem mcp` over stdio, through the SDK's own client."""
    command, *args = [*prefix, sys.executable, "-m", "vaultmem", "--vault", str(root), "mcp"]
    params = StdioServerParameters(
        command=command, args=args, env=fake_model_env(), cwd=str(root.parent)
    )
    with open(log, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            yield client


@asynccontextmanager
async def in_process(vault: Vault) -> AsyncIterator[Client]:
    """The server as `vaultmem mcp` runs it (`serving`: start-up checks, catch-up), in this
    process, through the SDK's in-memory client."""
    with serving(vault) as live:
        async with Client(build_server(vault, live)) as client:
            yield client


# --------------------------------------------------------------------------- over stdio


async def test_an_index_of_another_schema_is_said_by_every_call_until_reindex_full(
    tmp_path: Path,
) -> None:
    """The server exited at start (code 3): a client showed only "failed to start"."""
    vault = indexed_copy(tmp_path / "vault")
    other_schema(vault.index_path)
    expected = (
        f"the index at {vault.index_path} was built with schema {SCHEMA_VERSION - 1}, this"
        f" vaultmem uses {SCHEMA_VERSION}: run `vaultmem reindex --full`"
    )
    said = vaultmem(vault.root, "search", "tariff")
    assert said.returncode == 3 and expected in said.stderr  # the CLI's words
    log = tmp_path / "stderr.log"
    async with stdio(vault.root, log) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {"search", "read_note", "list_personas"} <= tools
        for tool, arguments in (
            ("search", {"query": "tariff"}),
            ("read_note", {"ref": "Maya Chen"}),
            ("list_personas", {}),
        ):
            message = failed(await client.call_tool(tool, arguments))
            assert message.startswith(expected), message
            assert "no restart needed" in message
        assert not vault.index_path.with_name("index.db.tmp").exists()
        # the person runs what the message says, in another terminal, with the server up
        done = vaultmem(vault.root, "reindex", "--full")
        assert done.returncode == 0, done.stderr
        found = await until_answered(
            client, "search", {"query": "tariff sync", "mode": "keyword", "limit": 1}
        )
        assert found.structured_content is not None
        assert found.structured_content["results"][0]["path"].endswith("Tariff sync outage.md")
    stderr = log.read_text()
    assert stderr.count(expected) == 1, stderr  # said once at start, not on every call
    assert "works again" in stderr


def _without_override() -> tuple[str, ...]:
    """A command prefix running a child without root's override of file permissions (the
    capabilities dac_override and dac_read_search); skips when that cannot be done here."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv is missing: permissions cannot be tested")
    prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search", "--")
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot drop capabilities here: {probe.stderr.decode().strip()}")
    return prefix


async def test_an_index_this_account_may_not_read_is_said_until_the_permissions_are_fixed(
    tmp_path: Path,
) -> None:
    prefix = _without_override()
    vault = indexed_copy(tmp_path / "vault")
    index = vault.index_path
    for leftover in (Path(f"{index}-wal"), Path(f"{index}-shm")):
        leftover.unlink(missing_ok=True)
    index.chmod(0)
    try:
        async with stdio(vault.root, tmp_path / "stderr.log", prefix) as client:
            message = failed(await client.call_tool("search", {"query": "tariff"}))
            assert f"cannot use the index at {index}" in message, message
            assert "this account may not read it" in message and "ls -ld" in message
            assert "reindex --full" not in message  # a rebuild would fail the same way
            assert "no restart needed" in message
            index.chmod(0o644)
            found = await until_answered(client, "search", {"query": "tariff", "limit": 1})
            assert found.structured_content is not None
            assert found.structured_content["results"]
    finally:
        index.chmod(0o644)
    assert "this account may not read it" in (tmp_path / "stderr.log").read_text()


async def test_no_index_in_a_read_only_vault_is_said_until_the_folder_can_be_written(
    tmp_path: Path,
) -> None:
    """No index, and none can be made (a read-only vault folder): the build's error on every
    call, not an exit; once the folder can be written, the next call builds it and answers."""
    prefix = _without_override()
    root = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".vaultmem"))
    root.chmod(0o555)
    try:
        async with stdio(root, tmp_path / "stderr.log", prefix) as client:
            message = failed(await client.call_tool("search", {"query": "tariff"}))
            assert f"cannot create the index at {root / '.vaultmem' / 'index.db'}" in message
            assert "pass --index PATH in a folder you can write" in message
            assert "no restart needed" in message
            root.chmod(0o755)
            found = await until_answered(client, "search", {"query": "tariff", "limit": 1})
            assert found.structured_content is not None
            assert found.structured_content["results"]
    finally:
        root.chmod(0o755)
    assert (root / ".vaultmem" / "index.db").is_file()


# --------------------------------------------------------------------------- in process


async def test_a_file_that_is_not_sqlite_is_said_until_it_is_moved_away(tmp_path: Path) -> None:
    vault = indexed_copy(tmp_path / "vault")
    for leftover in vault.index_path.parent.glob("index.db*"):
        leftover.unlink()
    vault.index_path.write_text("my shopping list, saved in the wrong place\n" * 200)
    async with in_process(vault) as client:
        message = failed(await client.call_tool("search", {"query": "tariff"}))
        assert f"{vault.index_path} is not a vaultmem index" in message, message
        assert "move it away or pass another --index PATH" in message
        assert failed(await client.call_tool("knowledge_gaps", {})) == message
        with pytest.raises(MCPError) as refused:  # resources say it too
            await client.read_resource("vaultmem://persona/work-assistant")
        assert "is not a vaultmem index" in str(refused.value)
        # never replaced by the server: it is not vaultmem's to replace
        assert vault.index_path.read_text().startswith("my shopping list")
        vault.index_path.rename(tmp_path / "shopping.txt")
        # no index now: the server builds it, as at start
        found = await until_answered(client, "search", {"query": "tariff", "limit": 1})
        assert found.structured_content is not None and found.structured_content["results"]


def truncated(data: bytes) -> bytes:
    return data[: len(data) // 3]  # refused as it opens


def garbled(data: bytes) -> bytes:
    half = len(data) // 2 // 4096 * 4096  # the file opens, then a search meets the damage
    return data[:half] + b"Z" * (len(data) - half)


@pytest.mark.parametrize("damage", [truncated, garbled])
async def test_a_damaged_index_is_said_until_reindex_full(
    tmp_path: Path, damage: Callable[[bytes], bytes], caplog: pytest.LogCaptureFixture
) -> None:
    vault = indexed_copy(tmp_path / "vault")
    conn = sqlean.connect(str(vault.index_path))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = vault.index_path.read_bytes()
    vault.index_path.write_bytes(damage(data))
    async with in_process(vault) as client:
        message = failed(await client.call_tool("search", {"query": "tariff"}))
        assert f"{vault.index_path} cannot be read" in message, message
        assert "(database disk image is malformed): run `vaultmem reindex --full`" in message
        assert "no restart needed" in message
        assert failed(await client.call_tool("read_note", {"ref": "Maya Chen"})) == message
        said = [r for r in caplog.records if r.name == "vaultmem.server" and r.levelname == "ERROR"]
        assert [r.getMessage() for r in said] == [message]  # logged once, not on every call
        # another process (another terminal) rebuilds it, replacing the damaged file
        done = vaultmem(vault.root, "reindex", "--full")
        assert done.returncode == 0, done.stderr
        found = await until_answered(client, "search", {"query": "tariff", "limit": 1})
        assert found.structured_content is not None and found.structured_content["results"]


async def test_an_index_damaged_while_serving_is_said_until_reindex_full_replaces_it(
    tmp_path: Path,
) -> None:
    """The server's threads hold connections to the file; `reindex --full` in another terminal
    replaces a damaged file with a new one, which the server must open afresh: the old
    connections would read the damaged one, deleted, forever."""
    vault = indexed_copy(tmp_path / "vault")
    conn = sqlean.connect(str(vault.index_path))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    async with in_process(vault) as client:
        for _ in range(4):  # both tool threads open their connection
            found = await client.call_tool("search", {"query": "tariff", "mode": "keyword"})
            assert not found.is_error, text(found)
        before = vault.index_path.stat().st_ino
        size = vault.index_path.stat().st_size
        with open(vault.index_path, "r+b") as index:  # damaged in place: the same file
            index.seek(size // 2 // 4096 * 4096)
            index.write(b"Z" * (size - size // 2 // 4096 * 4096))
        vault.reopen()  # no connection serves the old pages from its cache: each meets it
        for _ in range(4):
            message = failed(await client.call_tool("search", {"query": "tariff"}))
            assert "run `vaultmem reindex --full`" in message, message
        done = vaultmem(vault.root, "reindex", "--full")
        assert done.returncode == 0, done.stderr
        assert vault.index_path.stat().st_ino != before  # replaced, not emptied in place
        for _ in range(4):  # on either thread
            found = await until_answered(client, "search", {"query": "tariff", "mode": "keyword"})
            assert found.structured_content is not None and found.structured_content["results"]


async def test_no_index_is_built_at_start_and_a_failed_build_is_said(tmp_path: Path) -> None:
    """No index at all: the server builds it before it answers (as documented). When it cannot
    (here, a folder where the index file should be), every call says why."""
    root = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".vaultmem"))
    vault = Vault(root)
    vault.embedder_spec = "fake"
    vault.index_path.mkdir(parents=True)
    async with in_process(vault) as client:
        message = failed(await client.call_tool("search", {"query": "tariff"}))
        assert f"the index path {vault.index_path} is a folder, not a file" in message, message
        vault.index_path.rmdir()
        found = await until_answered(client, "search", {"query": "tariff", "limit": 1})
        assert found.structured_content is not None and found.structured_content["results"]
    assert vault.index_path.is_file()
