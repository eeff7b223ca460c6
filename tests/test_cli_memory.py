"""The memory commands as a person runs them: text, --json, exit codes."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from click.testing import CliRunner, Result

from tests.conftest import MakeVault
from tests.test_memories import EPISODES, MAYA
from vaultmem.cli import cli
from vaultmem.errors import VaultmemError
from vaultmem.vault import Vault


@pytest.fixture
def vault(make_vault: MakeVault) -> Vault:
    v = make_vault({"people/Maya Chen.md": MAYA, "Priya.md": "# Priya\n", **EPISODES})
    v.reindex(embed=False)
    return v


@dataclass
class Ran:
    exit_code: int
    stdout: str
    output: str  # stdout, stderr and the error message as `main` prints it


def run(vault: Vault, *args: str) -> Ran:
    """The command in this process, with the exit code and message `vaultmem.cli.main` gives a
    VaultmemError (the subprocess route costs a second or more per run)."""
    result: Result = CliRunner().invoke(cli, ["--vault", str(vault.root), *args])
    if isinstance(result.exception, VaultmemError):
        exc = result.exception
        return Ran(exc.exit_code, result.stdout, result.output + f"error: {exc}\n")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.output)


def test_fact_get_prints_values_and_where(vault: Vault) -> None:
    out = run(vault, "fact", "get", "Maya", "employer")
    assert out.exit_code == 0
    assert out.output == (
        "employer: Heatwise GmbH  [people/Maya Chen.md#^f-0001]  (2 earlier values)\n"
    )


def test_fact_get_of_nothing_exits_1(vault: Vault) -> None:
    assert run(vault, "fact", "get", "Maya", "shoe_size").exit_code == 1
    missing = run(vault, "fact", "get", "Nobody")
    assert missing.exit_code == 1 and "no note named 'Nobody'" in missing.output


def test_fact_history_text_and_json(vault: Vault) -> None:
    out = run(vault, "fact", "history", "Maya", "employer")
    assert out.output.splitlines() == [
        "employer: Heatwise GmbH (since 2025-03-01), source: call with Maya"
        "  [people/Maya Chen.md:8]",
        "  was Acme (until 2025-03-01, source: LinkedIn)",
        "  was Initech (until 2023-01-10)",
    ]
    data = json.loads(run(vault, "fact", "history", "Maya", "employer", "--json").output)
    assert data["facts"][0]["history"][1] == {
        "value": "Initech",
        "until": "2023-01-10",
        "origin": None,
        "line": 11,
    }
    assert len(data["digest"]) > 10


def test_episodes_with_time_forms(vault: Vault) -> None:
    out = run(vault, "episodes", "--since", "2 weeks ago", "--now", "2026-11-30")
    assert [line.split("  ")[0] for line in out.output.splitlines()] == [
        "2026-11-27",
        "2026-11-20",
    ]
    bad = run(vault, "episodes", "--since", "the other day")
    assert bad.exit_code == 2 and "cannot read the date" in bad.output


def test_trends_json(vault: Vault) -> None:
    data = json.loads(run(vault, "trends", "Maya Chen", "--json").output)
    assert [(p["period"], p["success_rate"]) for p in data["periods"]] == [
        ("2026-W47", 0.0),
        ("2026-W48", 1.0),
    ]


def test_loops_lists_ids_that_resolve_takes(vault: Vault) -> None:
    data = json.loads(run(vault, "loops", "--json", "--now", "2026-11-30").output)
    assert [x["text"] for x in data["loops"]] == [
        "Send Maya the tariff sheet",
        "Ask [[Priya]] about the freeze",
    ]
    assert data["loops"][0]["loop_id"].startswith("l-")
    due = run(vault, "loops", "--due-before", "tomorrow", "--now", "2026-11-30")
    assert due.stdout == "" and "no open loops" in due.output


def test_recall_prints_the_block(vault: Vault) -> None:
    out = run(vault, "recall", "where did we leave off with Maya?", "--now", "2026-11-30")
    assert out.exit_code == 0
    assert "Send Maya the tariff sheet" in out.output


def test_gate_exit_codes(vault: Vault) -> None:
    assert run(vault, "gate", "thanks, bye!").exit_code == 2
    needs = run(vault, "gate", "what did we decide with Maya about the tariff sheet?")
    assert needs.exit_code == 0 and "tariff sheet" in needs.stdout
    nothing = run(vault, "gate", "what did my dentist say about the crown last time?")
    assert nothing.exit_code == 3
    empty = run(vault, "gate", "   ")
    assert empty.exit_code == 1 and "empty message" in empty.output


def test_gate_in_another_language_and_huge(vault: Vault) -> None:
    assert run(vault, "gate", "Wie spät ist es in Tokio?").exit_code in (2, 3)
    huge = "please summarise this text: " + "lorem ipsum dolor sit amet " * 20_000
    assert run(vault, "gate", huge).exit_code == 2


def test_salience_lists_notes_and_facts(vault: Vault) -> None:
    data = json.loads(run(vault, "salience", "--json", "--now", "2027-06-01").output)
    kinds = {s["kind"] for s in data["salient"]}
    assert kinds == {"note", "fact"}
    top = data["salient"][0]
    assert top["score"] == pytest.approx(top["importance"] * top["staleness"], abs=1e-3)
