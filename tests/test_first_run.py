"""A newcomer's first commands: `init` in any folder of notes, where the index lives, the
config's keys and warnings, `--version`, shell completion, and docs that say all of it."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT, write_files
from tests.test_cli import run
from vaultmem.config import CONFIG_TEMPLATE, KNOWN_KEYS

NOTES = {
    "Hello.md": "# Hello\nSee [[World]] about the heat pump.\n",
    "sub/World.md": "# World\nThe heat pump runs at night.\n",
}


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """A plain folder of markdown: no .obsidian, no .vaultmem."""
    root = tmp_path / "notes"
    write_files(root, NOTES)
    return root


def test_init_in_a_plain_folder_says_what_it_made(notes: Path) -> None:
    result = run("init", cwd=notes)
    assert result.returncode == 0, result.stderr
    config = notes / ".vaultmem" / "config.toml"
    index = notes / ".vaultmem" / "index.db"
    lines = result.stdout.splitlines()
    assert lines[0] == f"created {config} (settings; every key optional)"
    assert lines[1].startswith("indexed 2 notes, 0 attachments")
    assert lines[2].startswith(f"index: {index} (") and "derived: safe to delete" in lines[2]
    assert lines[3].startswith("next: `vaultmem search WORDS`")
    assert config.is_file() and index.is_file()
    # the folder is a vault now: commands run inside it find it
    found = run("search", "heat pump", "--json", cwd=notes)
    assert found.returncode == 0, found.stderr
    assert {r["path"] for r in json.loads(found.stdout)["results"]} == {
        "Hello.md",
        "sub/World.md",
    }


def test_init_keeps_git_away_from_the_index(notes: Path) -> None:
    assert run("init", cwd=notes).returncode == 0
    ignore = (notes / ".vaultmem" / ".gitignore").read_text()
    assert ignore.splitlines()[-3:] == ["*", "!.gitignore", "!config.toml"]
    # a vault made before the .gitignore existed gets it from a second init; the config stays
    (notes / ".vaultmem" / ".gitignore").unlink()
    (notes / ".vaultmem" / "config.toml").write_text("# mine\n")
    again = run("init", cwd=notes)
    assert again.stdout.startswith("kept ")
    assert (notes / ".vaultmem" / ".gitignore").read_text() == ignore
    assert (notes / ".vaultmem" / "config.toml").read_text() == "# mine\n"


def test_init_elsewhere_names_the_vault_in_what_to_run_next(notes: Path, tmp_path: Path) -> None:
    result = run("--vault", str(notes), "init", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"`vaultmem --vault {notes} search WORDS`" in result.stdout


def test_init_refuses_a_whole_home_folder_unless_named(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_files(home, NOTES)
    result = run("init", cwd=home, env={"HOME": str(home)})
    assert result.returncode == 2
    assert "whole home folder" in result.stderr and f"--vault {home}" in result.stderr
    assert not (home / ".vaultmem").exists()
    assert run("--vault", str(home), "init", env={"HOME": str(home)}).returncode == 0


def test_init_in_an_empty_folder_says_to_add_notes(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run("init", cwd=empty)
    assert result.returncode == 0, result.stderr
    assert "no notes (.md files)" in result.stderr and "vaultmem reindex" in result.stderr


def test_the_index_outside_the_vault_by_variable_or_config(notes: Path, tmp_path: Path) -> None:
    by_env = tmp_path / "cache" / "env.db"
    result = run("init", cwd=notes, env={"VAULTMEM_INDEX": str(by_env)})
    assert result.returncode == 0, result.stderr
    assert by_env.is_file() and not (notes / ".vaultmem" / "index.db").exists()
    assert f"index: {by_env} (" in result.stdout

    home = tmp_path / "home"
    home.mkdir()
    config = notes / ".vaultmem" / "config.toml"
    config.write_text('index = "~/idx/notes.db"\n')
    result = run("reindex", cwd=notes, env={"HOME": str(home)})
    assert result.returncode == 0, result.stderr
    assert (home / "idx" / "notes.db").is_file()
    stats = run("stats", "--json", cwd=notes, env={"HOME": str(home)})
    assert json.loads(stats.stdout)["index_path"] == str(home / "idx" / "notes.db")
    # the variable wins over the config, as the flag wins over the variable
    stats = run(
        "stats", "--json", cwd=notes, env={"HOME": str(home), "VAULTMEM_INDEX": str(by_env)}
    )
    assert json.loads(stats.stdout)["index_path"] == str(by_env)


@pytest.mark.parametrize("index", ["notes.db", "sub/index.db", ""])
def test_an_index_among_the_notes_is_refused(notes: Path, index: str) -> None:
    write_files(notes, {".vaultmem/config.toml": f"index = {json.dumps(index)}\n"})
    result = run("reindex", cwd=notes)
    assert result.returncode == 2
    assert "`index` must be a file path outside the notes" in result.stderr


def test_an_index_in_a_dot_folder_of_the_vault_is_fine(notes: Path) -> None:
    write_files(notes, {".vaultmem/config.toml": 'index = ".cache/vaultmem.db"\n'})
    assert run("reindex", cwd=notes).returncode == 0
    assert (notes / ".cache" / "vaultmem.db").is_file()


def test_a_misspelt_config_key_is_named_with_the_closest_known_one(notes: Path) -> None:
    write_files(
        notes,
        {
            ".vaultmem/config.toml": (
                'persona_folder = "agents"\nmax_file_mbs = 3\nzzz = 1\n[links]\nurl_prefix = {}\n'
            )
        },
    )
    result = run("reindex", cwd=notes)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: unknown key `persona_folder` in .vaultmem/config.toml is ignored; "
        "did you mean `personas_folder`?",
        "warning: unknown key `max_file_mbs` in .vaultmem/config.toml is ignored; "
        "did you mean `max_file_mb`?",
        "warning: unknown key `zzz` in .vaultmem/config.toml is ignored (known: "
        + ", ".join(KNOWN_KEYS)
        + ")",
        "warning: unknown key `links.url_prefix` in .vaultmem/config.toml is ignored; "
        "did you mean `links.url_prefixes`?",
    ]


def test_every_key_the_template_offers_is_known() -> None:
    """Uncommenting any example in the written config gives known keys, in the right table."""
    uncommented = re.sub(r"^# (\w+) = ", r"\1 = ", CONFIG_TEMPLATE, flags=re.MULTILINE)
    data = tomllib.loads(uncommented)
    keys = {k for k, v in data.items() if not isinstance(v, dict)}
    keys |= {f"{t}.{k}" for t, v in data.items() if isinstance(v, dict) for k in v}
    assert keys | {"links", "limits", "memory", "capture"} == set(KNOWN_KEYS)


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert re.fullmatch(r"vaultmem, version \d+\.\d+\.\d+\S*\n", result.stdout)


def test_shell_completion_completes_commands_and_options() -> None:
    env = {"_VAULTMEM_COMPLETE": "bash_complete", "COMP_WORDS": "vaultmem gr", "COMP_CWORD": "1"}
    result = run(env=env)
    assert result.returncode == 0
    assert result.stdout.split() == ["plain,graph"]
    env |= {"COMP_WORDS": "vaultmem search --mo", "COMP_CWORD": "2"}
    assert run(env=env).stdout.split() == ["plain,--mode"]
    source = run(env={"_VAULTMEM_COMPLETE": "bash_source"})
    assert "_vaultmem_completion" in source.stdout


def _read_by_the_code() -> set[str]:
    """Every environment variable the package reads (os.environ, click's envvar=)."""
    found: set[str] = set()
    for path in (ROOT / "vaultmem").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        found |= set(re.findall(r"environ\.get\(\"([A-Z_]+)\"", text))
        found |= set(re.findall(r"envvar=\"([A-Z_]+)\"", text))
    return found


def test_every_variable_and_key_is_documented() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    variables = _read_by_the_code()
    assert {"VAULTMEM_VAULT", "VAULTMEM_INDEX", "OLLAMA_URL"} <= variables  # the scan works
    for name in [*variables, "VISUAL", "EDITOR", "NO_COLOR", "_VAULTMEM_COMPLETE"]:
        assert f"`{name}`" in doc, f"{name} is not in docs/configuration.md"
    for key in KNOWN_KEYS:
        table, _, name = key.rpartition(".")
        shown = f"`[{table}]` `{name}`" if table else f"`{key}`"
        assert shown in doc or f"`[{key}]`" in doc, f"config key {key} is not documented"


def test_help_readme_and_docs_start_the_same_way() -> None:
    """`vaultmem --help`, the README and the walkthrough all start a vault with `vaultmem init`."""
    help_text = run("--help").stdout
    start = help_text.split("Start inside the folder", 1)[1]
    assert start.split("vaultmem ", 1)[1].startswith("init")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    own = readme.split("## On your own notes", 1)[1]
    commands = re.findall(r"^vaultmem (\w+)", own, flags=re.MULTILINE)
    assert commands[0] == "init"
    for command in ("search", "mcp"):
        assert command in commands and f"vaultmem {command}" in help_text
    walkthrough = (ROOT / "docs" / "walkthrough.md").read_text(encoding="utf-8")
    steps = re.findall(r"`vaultmem (\w+)", walkthrough.split("## 2.", 1)[1])
    assert steps[0] == "init"
