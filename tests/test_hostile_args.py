"""Hostile arguments (issue 15, defects 14, 17, 20, 21): bytes that are not UTF-8, numbers
that are no numbers, days that do not exist, a model server down where nothing stands in.
Each is a clear message and an exit code that means something, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MakeVault, write_files
from vaultmem.dates import no_such_day
from vaultmem.errors import NoteNotFound

FILES = {
    "Café Lumière.md": "# Café Lumière\nFlat white, heat pump talk. [[Maya]]\n",
    "Maya.md": "# Maya\nHeat pump tariff. [[Café Lumière]]\n",
}


def run(root: Path, *args: str | bytes, embedder: str = "fake") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
    env["VAULTMEM_EMBEDDER"] = embedder
    env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"  # nothing listens on port 9
    return subprocess.run(
        [sys.executable, "-m", "vaultmem", "--vault", str(root), *args],
        capture_output=True,
        text=True,
        errors="replace",
        env=env,
        timeout=300,  # a deadline, not a wait
    )


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("args") / "v"
    write_files(root, FILES)
    (root / ".obsidian").mkdir()
    assert run(root, "reindex").returncode == 0
    return root


# --------------------------------------------------------------------------- defect 14


@pytest.mark.parametrize("command", ["search", "show", "backlinks"])
def test_an_argument_that_is_not_utf8_is_no_traceback(root: Path, command: str) -> None:
    done = run(root, command, b"caf\xe9 \xff")  # Latin-1 bytes from a terminal
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr  # found nothing, or no such note
    if command != "search":
        assert "no note named 'caf\ufffd \ufffd'" in done.stderr


def test_a_query_that_is_not_utf8_reaches_wordllama_as_text(make_vault: MakeVault) -> None:
    vault = make_vault(FILES)  # wordllama raised TypeError on a lone surrogate
    vault.reindex()
    found = vault.search("heat pump caf\udce9")
    assert "Maya.md" in [h.path for h in found.hits]
    with pytest.raises(NoteNotFound, match="no note named 'caf\ufffd'"):
        vault.show("caf\udce9")


# --------------------------------------------------------------------------- defect 17


def test_doctor_refuses_a_negative_limit(root: Path) -> None:
    done = run(root, "doctor", "--limit", "-1")
    assert done.returncode == 2
    assert "more (--limit)" not in done.stdout
    assert "--limit" in done.stderr
    shown = run(root, "doctor", "--limit", "0")
    assert shown.returncode == 0 and "more (--limit)" not in shown.stdout


@pytest.mark.parametrize("wait", ["nan", "NaN", "inf", "-1"])
def test_reindex_refuses_a_wait_that_is_no_number_of_seconds(root: Path, wait: str) -> None:
    done = run(root, "reindex", "--wait", wait)  # nan waited for ever on a held lock
    assert done.returncode == 2, done.stderr
    assert "--wait" in done.stderr and "Traceback" not in done.stderr


def test_the_core_refuses_a_wait_of_nan(make_vault: MakeVault) -> None:
    from vaultmem.errors import UsageError

    vault = make_vault(FILES)
    with pytest.raises(UsageError, match="not a number of seconds"):
        vault.reindex(wait=float("nan"), embed=False)


# --------------------------------------------------------------------------- defect 20


@pytest.mark.parametrize(
    ("day", "said"),
    [
        ("2026-02-30", "2026-02-30 is not a day: February 2026 has 28 days"),
        ("2024-02-30", "2024-02-30 is not a day: February 2024 has 29 days"),
        ("2026-04-31", "2026-04-31 is not a day: April 2026 has 30 days"),
        ("2026-13-01", "2026-13-01 is not a day: there is no month 13 (months run 01 to 12)"),
        ("2026-00-10", "2026-00-10 is not a day: there is no month 0 (months run 01 to 12)"),
        ("2026-02-00", "2026-02-00 is not a day: February 2026 has 28 days"),
    ],
)
def test_a_day_that_does_not_exist_says_so(root: Path, day: str, said: str) -> None:
    assert no_such_day(day) == said
    done = run(root, "search", "heat", "--since", day)
    assert done.returncode == 2
    assert said in done.stderr
    assert "does not match the format" not in done.stderr


def test_real_days_and_words_are_not_refused() -> None:
    assert no_such_day("2024-02-29") is None
    assert no_such_day("last week") is None


# --------------------------------------------------------------------------- defect 21


def test_semantic_search_without_vectors_and_the_model_server_down_exits_5(
    tmp_path: Path,
) -> None:
    root = tmp_path / "v"
    write_files(root, FILES)
    assert run(root, "reindex", "--no-embed").returncode == 0
    down = run(root, "search", "heat", "--mode", "semantic", embedder="openai:some-model")
    assert down.returncode == 5, down.stderr  # as the README says: nothing can stand in
    assert "no vectors" in down.stderr and "not reachable" in down.stderr
    # the model there to make them: run what the message says
    up = run(root, "search", "heat", "--mode", "semantic")
    assert up.returncode == 2, up.stderr
    assert "run `vaultmem reindex`" in up.stderr
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    assert "`search --mode semantic`, also when the index has no vectors yet" in readme
