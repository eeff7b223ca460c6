"""The `[limits]` table of `.vaultmem/config.toml`: read, checked, and obeyed by a reindex."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.conftest import MakeVault
from vaultmem.config import CONFIG_TEMPLATE, Config, FrontMatterLimits, load_config
from vaultmem.errors import ConfigError


def config_with(tmp_path: Path, text: str) -> Config:
    (tmp_path / ".vaultmem").mkdir(exist_ok=True)
    (tmp_path / ".vaultmem" / "config.toml").write_text(text, encoding="utf-8")
    return load_config(tmp_path)


def test_the_template_holds_the_defaults() -> None:
    data = tomllib.loads(CONFIG_TEMPLATE)
    assert FrontMatterLimits(**data["limits"]) == FrontMatterLimits()
    # a key uncommented in the template lands at the top level, not inside a table
    uncommented = tomllib.loads(CONFIG_TEMPLATE.replace("# personas_folder", "personas_folder"))
    assert uncommented["personas_folder"] == "personas"


def test_limits_are_read(tmp_path: Path) -> None:
    config = config_with(tmp_path, "[limits]\nproperties = 5\nfront_matter_kb = 1\n")
    assert config.limits == FrontMatterLimits(front_matter_kb=1.0, properties=5)
    assert config.limits.front_matter_chars == 1024
    assert load_config(tmp_path / "none").limits == FrontMatterLimits()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[limits]\nproperties = 0\n", "limits.properties"),
        ("[limits]\nyaml_depth = 2.5\n", "positive whole number"),
        ("[limits]\nyaml_values = true\n", "limits.yaml_values"),
        ("[limits]\nfront_matter_kb = nan\n", "limits.front_matter_kb"),
        ("[limits]\nfront_matter_kb = inf\n", "positive number"),
        ("[limits]\nproperites = 5\n", "unknown key `limits.properites`"),
        ("limits = 5\n", "must be a table"),
        ("max_file_mb = nan\n", "max_file_mb"),
        ("max_file_mb = inf\n", "max_file_mb"),
        ("max_file_mb = true\n", "max_file_mb"),
    ],
)
def test_bad_limits_say_which_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("`", ".")):
        config_with(tmp_path, text)


def test_a_reindex_obeys_the_configured_limits(make_vault: MakeVault) -> None:
    laughs = "a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: [*b, *b, *b, *b]"
    vault = make_vault(
        {
            ".vaultmem/config.toml": "[limits]\nproperties = 3\nyaml_values = 30\n",
            "many.md": "---\np1: 1\np2: 2\np3: 3\np4: 4\n---\nbody\n",
            "lol.md": f"---\n{laughs}\n---\nbody\n",
        }
    )
    vault.reindex()
    assert vault.show("many").frontmatter == {"p1": 1, "p2": 2, "p3": 3}
    assert vault.show("lol").frontmatter == {"a": ["x"] * 4, "b": [["x"] * 4] * 4}
    warnings = dict(vault.doctor().warnings)
    assert "has 4 properties; only the first 3 were read (limits.properties" in warnings["many.md"]
    assert warnings["lol.md"] == (
        "front matter property 'c' left out: more than 30 values with YAML aliases expanded"
        " (limits.yaml_values in .vaultmem/config.toml)"
    )
