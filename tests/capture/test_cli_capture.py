"""`vaultmem capture` and `vaultmem review` as a person runs them: output, JSON, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from tests.conftest import MakeVault
from tests.fake_model_server import FakeModelServer, unused_url
from vaultmem.cli import cli
from vaultmem.errors import VaultmemError
from vaultmem.vault import Vault

CHAT = "Date: 2026-11-30\nMaya: My role is CTO.\nTom: Nice!\nMaya: I'll send the deck on Friday.\n"


@pytest.fixture
def vault(make_vault: MakeVault) -> Vault:
    v = make_vault({"Maya.md": "# Maya\n\n## Facts\n- role:: CEO ^f-0001\n"})
    v.reindex()
    return v


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    stdout: str
    output: str  # stdout and stderr


def run(vault: Vault, *args: str, stdin: str | bytes | None = None) -> Outcome:
    """The command as `vaultmem` runs it (root.main's translation of errors to exit codes)."""
    result: Result = CliRunner().invoke(
        cli, ["--vault", str(vault.root), *args], input=stdin, standalone_mode=False
    )
    exc = result.exception
    if isinstance(exc, VaultmemError):
        return Outcome(exc.exit_code, result.stdout, result.output + f"error: {exc}")
    if isinstance(exc, click.ClickException):
        return Outcome(exc.exit_code, result.stdout, result.output + exc.format_message())
    if exc is not None and not isinstance(exc, SystemExit):
        raise exc
    return Outcome(result.exit_code, result.stdout, result.output)


def chat_file(tmp_path: Path, text: str = CHAT) -> str:
    path = tmp_path / "chat.txt"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_capture_then_review_then_accept(vault: Vault, tmp_path: Path) -> None:
    result = run(vault, "capture", chat_file(tmp_path), "--source", "call")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("inbox/")
    assert "contradicts [[Maya#^f-0001]]" in result.stdout
    listed = run(vault, "review", "--json")
    data = json.loads(listed.stdout)
    assert data["pending"] == 3
    role = next(i for c in data["captures"] for i in c["items"] if i["key"] == "role")
    assert role["flags"] == [
        {"flag": "contradicts", "target": "Maya#^f-0001", "current_value": "CEO"}
    ]
    accepted = run(vault, "review", "accept", role["item_id"])
    assert accepted.exit_code == 0, accepted.output
    assert "accepted → Maya#^f-0001" in accepted.stdout
    assert "- role:: CTO ^f-0001" in (vault.root / "Maya.md").read_text()
    text = run(vault, "review").stdout
    assert "accepted" in text and "“My role is CTO.” (turn 1)" in text


def test_the_installed_command_reads_standard_input_and_exits_2_on_bad_input(vault: Vault) -> None:
    def vaultmem(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "vaultmem", "--vault", str(vault.root), *args],
            input=stdin, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    bad = vaultmem("capture", "--source", "x", stdin="")
    assert bad.returncode == 2 and "standard input is empty" in bad.stderr
    good = vaultmem("capture", "-", "--source", "piped", stdin=CHAT)
    assert good.returncode == 0 and good.stdout.startswith("inbox/2026-")


def test_capture_from_standard_input_and_again(vault: Vault) -> None:
    first = run(vault, "capture", "-", "--source", "piped", "--json", stdin=CHAT)
    assert json.loads(first.stdout)["capture_status"] == "written"
    again = run(vault, "capture", "--source", "piped", stdin=CHAT)
    assert again.exit_code == 0
    assert again.stdout.startswith("already captured in inbox/")


def test_dry_run_json(vault: Vault, tmp_path: Path) -> None:
    result = run(vault, "capture", chat_file(tmp_path), "--source", "x", "--dry-run", "--json")
    data = json.loads(result.stdout)
    assert (data["capture_status"], data["path"]) == ("dry-run", None)
    assert not (vault.root / "inbox").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "empty"), (b"\x00\x01binary", "binary"), (b'[{"role": 1}]', "no `role`")],
)
def test_bad_transcripts_exit_2(vault: Vault, tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    result = run(vault, "capture", str(path), "--source", "x")
    assert result.exit_code == 2 and message in result.output
    assert not (vault.root / "inbox").exists()


def test_a_missing_file_and_a_folder(vault: Vault, tmp_path: Path) -> None:
    assert (
        "no transcript at" in run(vault, "capture", str(tmp_path / "nope"), "--source", "x").output
    )
    assert "is a folder" in run(vault, "capture", str(tmp_path), "--source", "x").output


def test_one_session_of_a_locomo_file(vault: Vault) -> None:
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "capture" / "locomo_sample.json"
    result = run(vault, "capture", str(fixture), "--source", "locomo", "--session", "session_2",
                 "--json")  # fmt: skip
    data = json.loads(result.stdout)
    assert {i["turn"] for i in data["items"]} == {"D2:1"}
    bad = run(vault, "capture", str(fixture), "--source", "locomo", "--session", "session_7")
    assert bad.exit_code == 2 and "session_1, session_2" in bad.output


def test_llm_with_a_server_that_is_down_exits_5(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_URL", unused_url())
    result = run(vault, "capture", chat_file(tmp_path), "--source", "x", "--llm", "ollama:llama3.2")
    assert result.exit_code == 5
    assert "capture without --llm" in result.output and "nothing was written" in result.output
    assert not (vault.root / "inbox").exists()


def test_llm_with_malformed_output_exits_5_and_writes_nothing(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeModelServer() as server:
        server.reply = '{"candidates": [{"kind": "fact", "entity": "Maya"'
        monkeypatch.setenv("OLLAMA_URL", server.url)
        result = run(
            vault, "capture", chat_file(tmp_path), "--source", "x", "--llm", "ollama:llama3.2"
        )
    assert result.exit_code == 5 and "malformed or cut off" in result.output
    assert not (vault.root / "inbox").exists()


def test_llm_output_that_fits_the_schema_is_captured(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fact = {"kind": "fact", "entity": "Maya", "key": "role", "value": "CTO"}
    answer = {"candidates": [{**fact, "quote": "My role is CTO.", "turn": "1", "confidence": 0.9}]}
    with FakeModelServer() as server:
        server.reply = json.dumps(answer)
        monkeypatch.setenv("OLLAMA_URL", server.url)
        result = run(vault, "capture", chat_file(tmp_path), "--source", "x", "--llm",
                     "ollama:llama3.2", "--json")  # fmt: skip
    data = json.loads(result.stdout)
    assert data["extractor"] == "ollama:llama3.2"
    assert [(i["key"], i["value"]) for i in data["items"]] == [("role", "CTO")]
    assert 'extractor: "ollama:llama3.2"' in (vault.root / data["path"]).read_text()


def test_review_reject_edit_and_errors(vault: Vault, tmp_path: Path) -> None:
    run(vault, "capture", chat_file(tmp_path), "--source", "call")
    items = json.loads(run(vault, "review", "--json").stdout)["captures"][0]["items"]
    loop = next(i for i in items if i["kind"] == "loop")
    edited = run(vault, "review", "edit", loop["item_id"], "--value", "send the slides", "--due",
                 "2026-12-10")  # fmt: skip
    assert edited.exit_code == 0, edited.output
    items = json.loads(run(vault, "review", "--json").stdout)["captures"][0]["items"]
    loop = next(i for i in items if i["kind"] == "loop")
    assert (loop["value"], loop["due"]) == ("send the slides", "2026-12-10")
    rejected = run(vault, "review", "reject", loop["item_id"])
    assert "rejected" in rejected.stdout
    assert run(vault, "review", "accept", "c-000000").exit_code == 1
    assert run(vault, "review", "accept").exit_code == 2  # nothing named
    assert run(vault, "review", "accept", "c-000000", "--all").exit_code == 2


def test_review_of_an_empty_inbox(vault: Vault) -> None:
    result = run(vault, "review")
    assert result.exit_code == 0 and "nothing to review" in result.output
    assert json.loads(run(vault, "review", "--json").stdout) == {"pending": 0, "captures": []}


def test_review_undo_takes_back_the_latest_decision(vault: Vault, tmp_path: Path) -> None:
    run(vault, "capture", chat_file(tmp_path), "--source", "call")
    items = json.loads(run(vault, "review", "--json").stdout)["captures"][0]["items"]
    first = items[0]["item_id"]
    assert run(vault, "review", "reject", first).exit_code == 0
    undone = run(vault, "review", "undo")
    assert undone.exit_code == 0 and f"{first}: decision undone" in undone.stdout
    again = json.loads(run(vault, "review", "--json").stdout)["captures"][0]["items"]
    assert [i["item_id"] for i in again] == [i["item_id"] for i in items]
    nothing = run(vault, "review", "undo")
    assert nothing.exit_code != 0 and "no review decision to undo" in nothing.output
