"""The memory tools through the MCP SDK's client: reads, and writes with their preconditions."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from tests.conftest import MakeVault
from tests.test_server import copy_sample, failed, ok, text
from vaultmem.server import build_server
from vaultmem.vault import Vault

pytestmark = pytest.mark.anyio
MAYA = "Maya Chen.md"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return copy_sample(tmp_path / "vault")


@pytest.fixture
async def client(vault: Vault) -> AsyncIterator[Client]:
    async with Client(build_server(vault)) as connected:
        yield connected


async def test_store_fact_with_the_digest_fact_history_gave(client: Client, vault: Vault) -> None:
    before = ok(await client.call_tool("fact_history", {"entity": "Maya", "key": "home_city"}))
    assert before["facts"][0]["value"] == "Berlin (Prenzlauer Berg)"
    answer = ok(
        await client.call_tool(
            "store_fact",
            {
                "entity": "Maya",
                "key": "home_city",
                "value": "Hamburg",
                "source": "chat",
                "digest": before["digest"],
            },
        )
    )
    assert (answer["status"], answer["path"], answer["block"]) == ("changed", MAYA, "f-0c31")
    assert answer["touched"] == [{"path": MAYA, "title": "Maya Chen"}]
    after = ok(await client.call_tool("fact_history", {"entity": "Maya", "key": "home_city"}))
    assert after["facts"][0]["history"][0]["value"] == "Berlin (Prenzlauer Berg)"
    # the digest read before the write is stale now: refused, nothing written
    stale = failed(
        await client.call_tool(
            "store_fact",
            {"entity": "Maya", "key": "home_city", "value": "Munich", "digest": before["digest"]},
        )
    )
    assert "changed since you read it" in stale
    assert "Munich" not in (vault.root / MAYA).read_text(encoding="utf-8")


async def test_store_fact_refuses_a_bad_value_and_an_entity_outside(client: Client) -> None:
    message = failed(
        await client.call_tool("store_fact", {"entity": "Maya", "key": "x", "value": "a:: b"})
    )
    assert "::" in message
    outside = failed(
        await client.call_tool(
            "store_fact",
            {"entity": "../../outside", "key": "x", "value": "y", "create": True},
        )
    )
    assert "entities folder" in outside


async def test_add_episode_then_list_it(client: Client, vault: Vault) -> None:
    answer = ok(
        await client.call_tool(
            "add_episode",
            {
                "title": "Gateway 2.4.2 rollout",
                "outcome": "success",
                "entities": ["Heatwise Gateway"],
                "date": "2026-11-29",
                "body": "Rolled out to the beta ring.",
            },
        )
    )
    assert answer["status"] == "written"
    assert answer["path"] == "episodes/2026-11-29 Gateway 2.4.2 rollout.md"
    listed = ok(await client.call_tool("episodes", {"entity": "Heatwise Gateway"}))
    assert listed["episodes"][0]["path"] == answer["path"]
    assert listed["episodes"][0]["summary"] == "Rolled out to the beta ring."


async def test_resolve_loop_by_the_id_open_loops_gave(client: Client, vault: Vault) -> None:
    loops = ok(await client.call_tool("open_loops", {"entity": "Heatwise Gateway"}))
    first = loops["loops"][0]
    answer = ok(await client.call_tool("resolve_loop", {"ref": first["loop_id"]}))
    assert answer["status"] == "resolved" and answer["path"] == first["path"]
    line = (vault.root / first["path"]).read_text(encoding="utf-8").splitlines()[first["line"] - 1]
    assert line.startswith("- [x] ") and "✅" in line
    again = failed(await client.call_tool("resolve_loop", {"ref": first["loop_id"]}))
    assert "no open loop has id" in again


async def test_recall_and_gate_answer_with_text_for_the_agent(client: Client) -> None:
    result = await client.call_tool(
        "recall", {"message": "where did we leave off on the tariff optimizer?"}
    )
    data = ok(result)
    assert data["continuation"] is True and text(result) == data["context"]
    greeting = ok(await client.call_tool("gate", {"message": "thanks!"}))
    assert (greeting["verdict"], greeting["search"], greeting["recall"]) == (
        "no-memory",
        False,
        None,
    )


EXPIRING = {
    "personas/helper.md": "---\ntype: persona\n---\n# Helper\n\nSee [[Sprint]] and"
    " [[Standards]].\n",
    "Sprint.md": "---\ndecay: session\ndate: 2020-01-02\n---\nSprint zebra notes.\n"
    "- [ ] file the zebra report for [[helper]]\n",
    "Standards.md": "---\ndecay: permanent\n---\nStandards okapi notes.\n",
}


async def test_persona_context_and_recall_leave_expired_notes_out_unless_asked(
    make_vault: MakeVault,
) -> None:
    """Issue 11 §6 for agents: a note past its decay tier (Sprint: a session, in 2020) leaves
    the persona's working set and recall; `include_expired` brings it back."""
    vault = make_vault(EXPIRING)
    vault.reindex(embed=False)
    async with Client(build_server(vault)) as client:
        plain = text(await client.call_tool("persona_context", {"slug": "helper"}))
        assert "okapi" in plain and "zebra" not in plain
        kept = text(
            await client.call_tool("persona_context", {"slug": "helper", "include_expired": True})
        )
        assert "Sprint zebra notes." in kept and "file the zebra report" in kept
        ask = {"message": "where did we leave off on the Sprint zebra report?", "now": "2026-11-30"}
        assert "zebra" not in text(await client.call_tool("recall", ask))
        again = text(await client.call_tool("recall", {**ask, "include_expired": True}))
        assert "zebra" in again
