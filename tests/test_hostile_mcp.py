"""The MCP server over the all-at-once hostile vault (races aside): every indexed note can be
read and its backlinks listed through the tools, searches answer, and nothing hangs."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from tests.hostile.vaults import CASES, build_vault
from vaultmem.server import build_server
from vaultmem.vault import Vault

pytestmark = pytest.mark.anyio
DEADLINE = 180.0  # seconds for all the calls: only a hang comes near it


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    root = tmp_path_factory.mktemp("hostile-mcp")
    build_vault(root / "vault", root / "outside", [c for c in CASES if c.during is None])
    vault = Vault(root / "vault")
    vault.embedder_spec = "fake"
    vault.reindex()
    return vault


@pytest.fixture
async def client(hostile: Vault) -> AsyncIterator[Client]:
    async with Client(build_server(hostile)) as connected:
        yield connected


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_every_indexed_note_reads_through_mcp(client: Client, hostile: Vault) -> None:
    paths = [r[0] for r in hostile.conn.execute("SELECT path FROM notes WHERE kind = 'note'")]
    assert len(paths) > 50
    refused: list[str] = []
    with anyio.fail_after(DEADLINE):
        for path in paths:
            note = await client.call_tool("read_note", {"ref": path})
            if note.is_error:
                refused.append(f"{path!r}: {text(note)}")
            links = await client.call_tool("backlinks", {"ref": path})
            assert not links.is_error, text(links)
    assert refused == []


async def test_searches_over_the_hostile_vault_answer(client: Client) -> None:
    with anyio.fail_after(DEADLINE):
        for case in CASES:
            for word, path in case.found:
                found = await client.call_tool("search", {"query": word, "mode": "keyword"})
                assert not found.is_error and found.structured_content is not None, text(found)
                paths = [hit["path"] for hit in found.structured_content["results"]]
                assert case.rel(path) in paths, (case.name, word)

    for case in CASES:
        for word in case.never_found:
            found = await client.call_tool("search", {"query": word})
            assert not found.is_error and found.structured_content is not None
            assert found.structured_content["results"] == [] or all(
                word not in hit["snippet"] for hit in found.structured_content["results"]
            )
