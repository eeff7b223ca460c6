"""The CLI as a person runs it: a real `python -m vaultmem` process, its output and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_files


def run(
    *args: str, cwd: Path | None = None, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "VAULTMEM_VAULT"}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "vaultmem", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=300,  # a deadline, not a wait: generous for a loaded machine
    )


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    write_files(
        root,
        {
            ".obsidian/app.json": "{}",
            "Alpha.md": (
                "---\naliases: [First]\ntags: [greek]\n---\n# Alpha\nSee [[Beta]] and [[Gamma]].\n"
            ),
            "sub/Beta.md": (
                "# Beta\nBeta talks about solar panels.\n\n## Details\nmore [[Alpha#Alpha]]\n"
            ),
        },
    )
    return root


def test_missing_vault_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    result = run("--vault", str(tmp_path / "nope"), "stats")
    assert result.returncode == 2
    assert "does not exist" in result.stderr
    result = run("stats", cwd=tmp_path)  # not a vault, nothing given
    assert result.returncode == 2
    assert "--vault PATH" in result.stderr


def test_no_index_exits_3_and_names_the_command(vault_dir: Path) -> None:
    result = run("--vault", str(vault_dir), "search", "x")
    assert result.returncode == 3
    assert "vaultmem reindex" in result.stderr


def test_reindex_search_show_backlinks_stats(vault_dir: Path) -> None:
    result = run("reindex", "--json", cwd=vault_dir)  # the current folder holds .obsidian
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert {k: summary[k] for k in ("notes", "changed", "removed", "links", "wanted_links")} == {
        "notes": 2,
        "changed": 2,
        "removed": 0,
        "links": 3,
        "wanted_links": 1,
    }
    assert isinstance(summary["seconds"], float)

    base = ("--vault", str(vault_dir))
    result = run(*base, "search", "solar panels", "--json", "--mode", "keyword")
    data = json.loads(result.stdout)
    assert (data["query"], data["mode"], data["notices"], data["dates"]) == (
        "solar panels",
        "keyword",
        [],
        None,
    )
    (hit,) = data["results"]
    assert hit == {
        "path": "sub/Beta.md",
        "title": "Beta",
        "heading": "Beta",
        "start_line": 1,
        "end_line": 2,
        "score": hit["score"],
        "snippet": hit["snippet"],
    }
    assert "solar" in hit["snippet"] and "\x02" not in hit["snippet"]
    assert json.loads(run(*base, "search", "solar panels", "--format", "json").stdout) == (
        json.loads(run(*base, "search", "solar panels", "--json").stdout)
    )

    # The enhanced-memory / OpenClaw shape, for the agents that expect it.
    result = run(*base, "search", "solar panels", "--format", "openclaw", "--mode", "keyword")
    (hit,) = json.loads(result.stdout)["results"]
    assert set(hit) == {"path", "startLine", "endLine", "score", "snippet", "header"}
    assert (hit["path"], hit["startLine"], hit["endLine"], hit["header"]) == (
        "sub/Beta.md",
        1,
        2,
        "Beta",
    )
    both = run(*base, "search", "x", "--json", "--format", "openclaw")
    assert both.returncode == 2 and "contradict" in both.stderr

    result = run(*base, "show", "first", "--json")  # by alias
    info = json.loads(result.stdout)
    assert info["path"] == "Alpha.md" and info["tags"] == ["greek"]
    assert [(x["target"], x["to"], x["status"]) for x in info["outgoing"]] == [
        ("Beta", {"path": "sub/Beta.md", "title": "Beta"}, "resolved"),
        ("Gamma", None, "wanted"),
    ]
    assert info["backlinks"] == [
        {
            "path": "sub/Beta.md",
            "title": "Beta",
            "line": 5,
            "relation": "links_to",
            "anchor": "Alpha",
            "context": "more [[Alpha#Alpha]]",
        }
    ]
    assert info["sections"] == [{"heading": "Alpha", "level": 1, "start_line": 5, "end_line": 6}]

    result = run(*base, "backlinks", "alpha")
    assert result.stdout.strip() == "sub/Beta.md:5  more [[Alpha#Alpha]]"
    assert json.loads(run(*base, "backlinks", "alpha", "--json").stdout) == {
        "path": "Alpha.md",
        "title": "Alpha",
        "total": 1,
        "backlinks": info["backlinks"],
    }

    stats = json.loads(run(*base, "stats", "--json").stdout)
    assert (stats["notes"], stats["links"], stats["wanted_notes"]) == (2, 3, 1)
    assert stats["last_reindex"].endswith("+00:00")  # ISO 8601, UTC


def test_batch_search_from_stdin(vault_dir: Path) -> None:
    run("--vault", str(vault_dir), "reindex")
    result = run(
        "--vault",
        str(vault_dir),
        "search",
        "-",
        "--json",
        "--mode",
        "keyword",
        stdin="solar\n\nalpha\nnothing-matches-this\n",
    )
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [x["query"] for x in lines] == ["solar", "alpha", "nothing-matches-this"]
    assert [len(x["results"]) for x in lines] == [1, 2, 0]
    assert lines[1]["results"][0]["path"] == "Alpha.md"  # title outweighs a body mention


def test_show_unknown_note_suggests_close_matches(vault_dir: Path) -> None:
    run("--vault", str(vault_dir), "reindex")
    result = run("--vault", str(vault_dir), "show", "Alpah")
    assert result.returncode == 1
    assert "did you mean 'Alpha'" in result.stderr


def test_index_outside_a_read_only_vault(vault_dir: Path, tmp_path: Path) -> None:
    index = tmp_path / "elsewhere" / "i.db"
    os.chmod(vault_dir, 0o555)
    try:
        result = run("--vault", str(vault_dir), "--index", str(index), "reindex")
        assert result.returncode == 0, result.stderr
        assert index.exists() and not (vault_dir / ".vaultmem").exists()
    finally:
        os.chmod(vault_dir, 0o755)


def test_init_writes_config_once_and_indexes(vault_dir: Path) -> None:
    result = run("--vault", str(vault_dir), "init")
    assert result.returncode == 0, result.stderr
    assert "created" in result.stdout and "2 notes" in result.stdout
    config = (vault_dir / ".vaultmem" / "config.toml").read_text()
    (vault_dir / ".vaultmem" / "config.toml").write_text(config + "\n# mine\n")
    assert "kept" in run("--vault", str(vault_dir), "init").stdout
    assert (vault_dir / ".vaultmem" / "config.toml").read_text().endswith("# mine\n")


def test_doctor_reports_and_exit_code(vault_dir: Path) -> None:
    write_files(vault_dir, {"broken.md": "---\na: [x\n---\n[[First]]\n"})
    run("--vault", str(vault_dir), "reindex")
    result = run("--vault", str(vault_dir), "doctor", "--json")
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert report["parse_warnings"][0]["path"] == "broken.md"
    assert [(x["written"], x["fix"]) for x in report["alias_fixable"]] == [
        ("[[First]]", "[[Alpha|First]]")
    ]
    text = run("--vault", str(vault_dir), "doctor").stdout
    assert "alias-fixable links (1)" in text and "index (0)" in text


def test_help_texts() -> None:
    result = run("--help")
    assert result.returncode == 0
    for command in ("init", "reindex", "search", "show", "backlinks", "stats", "doctor"):
        assert command in result.stdout
    assert "--limit" in run("search", "--help").stdout
