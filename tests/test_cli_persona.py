"""`vaultmem persona …` as a person runs it: a real process, its output and exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_VAULT
from tests.test_cli import run
from vaultmem.persona import load_persona
from vaultmem.vault import Vault


@pytest.fixture
def indexed(sample_vault: Vault, tmp_path: Path) -> list[str]:
    """Global options for a copy of the sample vault and its index: `new` never writes the repo."""
    sample_vault.close()
    root = shutil.copytree(SAMPLE_VAULT, tmp_path / "copy")
    return ["--vault", str(root), "--index", str(sample_vault.index_path)]


def test_list(indexed: list[str]) -> None:
    result = run(*indexed, "persona", "list")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "health-coach      4000 chars  Running and nutrition coach for Maya  "
        "[personas/health-coach.md]",
        "work-assistant    6000 chars  Engineering assistant for Maya at Heatwise  "
        "[personas/work-assistant.md]",
    ]


def test_list_json(indexed: list[str]) -> None:
    result = run(*indexed, "persona", "list", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["personas"][1] == {
        "slug": "work-assistant",
        "path": "personas/work-assistant.md",
        "title": "Work assistant",  # the note's `# Work assistant`, not its slug
        "role": "Engineering assistant for Maya at Heatwise",
        "budget": 6000,
        "aliases": ["Work assistant", "heatwise-assistant"],
    }


def test_load_prints_the_context_and_a_usage_summary(
    indexed: list[str], sample_vault: Vault
) -> None:
    result = run(*indexed, "persona", "load", "work-assistant", "--budget", "2500")
    assert result.returncode == 0, result.stderr
    assert result.stdout == load_persona(sample_vault, "work-assistant", 2500).to_markdown()
    assert result.stderr.splitlines() == [
        "work-assistant: 2,485 of 2,500 chars: persona note 1,343, facts 70, "
        "open loops 549, working set 523 (1 note)",
        "left out (6): work/projects/Tariff Optimizer.md, procedures/firmware-rollback.md, "
        "work/projects/Heatwise Gateway.md, Maya Chen.md, work/Architecture Decisions.md "
        "and 1 more",
    ]
    again = run(*indexed, "persona", "load", "work-assistant", "--budget", "2500")
    assert again.stdout == result.stdout  # byte-stable across processes


def test_load_json(indexed: list[str]) -> None:
    result = run(*indexed, "persona", "load", "Work assistant", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    data = json.loads(result.stdout)
    assert (data["slug"], data["title"], data["budget"], data["used"]) == (
        "work-assistant",
        "Work assistant",
        6000,
        5988,
    )
    assert data["usage"] == {"persona": 1343, "facts": 70, "loops": 549, "working_set": 4026}
    assert [p["kind"] for p in data["parts"]] == ["persona", "facts", "loops"] + ["working_set"] * 7
    assert data["parts"][0] == {
        "kind": "persona",
        "path": "personas/work-assistant.md",
        "title": "Work assistant",
        "heading": None,
        "chars": len(data["parts"][0]["text"]),
        "text": data["parts"][0]["text"],
    }
    assert data["left_out"] == []
    # `--json`, as every read command takes it, is the same as `--format json`
    same = run(*indexed, "persona", "load", "Work assistant", "--json")
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout) == data


def test_load_below_the_persona_notes_size_is_refused_with_the_size_needed(
    indexed: list[str],
) -> None:
    result = run(*indexed, "persona", "load", "health-coach", "--budget", "100")
    assert result.returncode == 2
    assert result.stderr == (
        "error: a budget of 100 characters is below the persona note's own 1,108 "
        "(personas/health-coach.md, never cut): give at least 1,108, or shorten the note\n"
    )
    assert result.stdout == ""
    enough = run(*indexed, "persona", "load", "health-coach", "--budget", "1108")
    assert enough.returncode == 0, enough.stderr
    assert enough.stderr.startswith("health-coach: 1,108 of 1,108 chars: persona note 1,108")


def test_load_over_its_own_budget_says_so(indexed: list[str]) -> None:
    """The budget in the persona's front matter is the persona's to set: loading still works,
    and says the note alone is over it."""
    note = Path(indexed[1]) / "personas" / "health-coach.md"
    note.write_text(note.read_text(encoding="utf-8").replace("budget: 4000", "budget: 100"))
    assert run(*indexed, "reindex", "--no-embed").returncode == 0
    result = run(*indexed, "persona", "load", "health-coach")
    assert result.returncode == 0, result.stderr
    assert result.stdout == note.read_text(encoding="utf-8").split("\n---\n", 1)[1].lstrip("\n")
    assert "the persona note alone is 1,108 chars, over the budget" in result.stderr


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["load", "nobody"], 1, "known personas: health-coach, work-assistant"),
        (["load", "../personas/work-assistant"], 2, "is not a persona name"),
        (["load", "/etc/passwd"], 2, "is not a persona name"),
        (["load", "work-assistant", "--budget", "-5"], 2, "--budget"),
        (["load", "work-assistant", "--budget", "0"], 2, "--budget"),
        (["load", "work-assistant", "--format", "yaml"], 2, "--format"),
        (["new", "work-assistant", "--role", "x"], 2, "never overwrites"),
        (["new", "../evil", "--role", "x"], 2, "cannot be a persona slug"),
        (["new", "fine"], 2, "--role"),
    ],
)
def test_errors_and_exit_codes(
    indexed: list[str], args: list[str], code: int, message: str
) -> None:
    result = run(*indexed, "persona", *args)
    assert result.returncode == code, result.stderr
    assert message in result.stderr
    assert result.stdout == ""


def test_new_creates_indexes_and_loads(tmp_path: Path) -> None:
    root = tmp_path / "v"
    shutil.copytree(SAMPLE_VAULT, root)
    vault = ["--vault", str(root)]
    assert run(*vault, "reindex", "--no-embed").returncode == 0
    result = run(*vault, "persona", "new", "reviewer", "--role", "Code reviewer for Maya")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "created personas/reviewer.md",
        "indexed; fill in its sections, then `vaultmem persona load reviewer`",
    ]
    listed = json.loads(run(*vault, "persona", "list", "--json").stdout)["personas"]
    assert [p["slug"] for p in listed] == ["health-coach", "reviewer", "work-assistant"]
    loaded = run(*vault, "persona", "load", "reviewer")
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.startswith(
        "# Reviewer\n\nCode reviewer for Maya.\n\n## Critical Context\n"
    )


def test_new_without_an_index_says_what_to_run(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / ".obsidian").mkdir(parents=True)
    result = run("--vault", str(root), "persona", "new", "helper", "--role", "Helps")
    assert result.returncode == 0, result.stderr
    assert "run `vaultmem reindex`" in result.stdout
    assert (root / "personas/helper.md").is_file()
    assert not (root / ".vaultmem/index.db").exists()


def test_load_without_an_index_exits_3(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / ".obsidian").mkdir(parents=True)
    result = run("--vault", str(root), "persona", "load", "x")
    assert result.returncode == 3
    assert "vaultmem reindex" in result.stderr
