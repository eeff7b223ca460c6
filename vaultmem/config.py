"""Settings: `.vaultmem/config.toml` in the vault, with defaults for everything."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from vaultmem.errors import ConfigError

CONFIG_TEMPLATE = """\
# vaultmem settings for this vault. Every key is optional.

# Glob patterns (vault-relative) of files and folders to leave out of the index,
# in addition to dot-folders such as .obsidian, .trash and .git.
exclude = []

# The embedding model for search by meaning: "wordllama" (bundled, offline, the default),
# "ollama:<model>" (OLLAMA_URL), "openai:<model>" (OPENAI_BASE_URL, OPENAI_API_KEY).
# embedder = "ollama:nomic-embed-text"
# A text model for `search --hyde`: "ollama:<model>" or "openai:<model>".
# llm = "ollama:llama3.2"

# Markdown files larger than this many megabytes are skipped (and listed by `vaultmem doctor`).
max_file_mb = 10

# The folder (vault-relative) holding persona notes, `<folder>/<slug>.md` with `type: persona`.
# (Above the tables below: a key written after a [table] line belongs to that table.)
# personas_folder = "personas"

# Bounds on the work one note's front matter can cause. A note over a bound is still indexed,
# with a warning that `vaultmem doctor` lists, instead of slowing or stopping the reindex.
# A changed limit applies to notes as they change; `vaultmem reindex --full` applies it to all.
[limits]
front_matter_kb = 256  # larger front matter is indexed as text, not read as YAML
properties = 1000  # front matter properties kept per note
yaml_values = 20000  # values per note's front matter, YAML aliases expanded ("billion laughs")
yaml_depth = 50  # nesting of lists and mappings in front matter

# For vaults made from a docs site (not Obsidian behaviour, so off by default): links whose
# target starts with a URL prefix point into a vault folder, and a link to a folder means its
# index.md or README.md. Example for MDN's content: {"/en-US/docs/" = "en-us/"}
[links]
url_prefixes = {}
"""


@dataclass(frozen=True)
class FrontMatterLimits:
    """Bounds on the work one note's front matter may cause (the `[limits]` table)."""

    front_matter_kb: float = 256.0
    properties: int = 1000
    yaml_values: int = 20_000
    yaml_depth: int = 50

    @property
    def front_matter_chars(self) -> int:
        return int(self.front_matter_kb * 1024)


_LIMIT_KEYS = {
    "front_matter_kb": "kilobytes of front matter read as YAML",
    "properties": "front matter properties kept per note",
    "yaml_values": "values per note's front matter, aliases expanded",
    "yaml_depth": "nesting depth of front matter values",
}


@dataclass(frozen=True)
class Config:
    exclude: tuple[str, ...] = ()
    max_file_mb: float = 10.0
    url_prefixes: dict[str, str] = field(default_factory=dict)
    embedder: str | None = None  # e.g. "wordllama", "ollama:nomic-embed-text"
    llm: str | None = None  # text model for HyDE, e.g. "ollama:llama3.2"
    personas_folder: str = "personas"
    limits: FrontMatterLimits = FrontMatterLimits()
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)


def config_path(vault: Path) -> Path:
    return vault / ".vaultmem" / "config.toml"


def load_config(vault: Path) -> Config:
    path = config_path(vault)
    if not path.exists():
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}; fix the file or delete it") from exc
    exclude = data.pop("exclude", [])
    if not isinstance(exclude, list) or not all(isinstance(p, str) for p in exclude):
        raise ConfigError(f"{path}: `exclude` must be a list of glob patterns")
    max_mb = data.pop("max_file_mb", 10)
    if isinstance(max_mb, bool) or not isinstance(max_mb, int | float) or not 0 < max_mb < math.inf:
        raise ConfigError(f"{path}: `max_file_mb` must be a positive number")
    links = data.pop("links", {})
    prefixes = links.get("url_prefixes", {}) if isinstance(links, dict) else None
    if not isinstance(prefixes, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k.strip() for k, v in prefixes.items()
    ):
        raise ConfigError(f"{path}: `links.url_prefixes` must map URL prefixes to vault folders")
    embedder = data.pop("embedder", None)
    llm = data.pop("llm", None)
    for key, value in (("embedder", embedder), ("llm", llm)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(f'{path}: `{key}` must be a string such as "ollama:<model>"')
    personas_folder = data.pop("personas_folder", "personas")
    if not isinstance(personas_folder, str) or not _safe_folder(personas_folder):
        raise ConfigError(
            f'{path}: `personas_folder` must be a folder inside the vault, such as "personas"'
        )
    limits = _limits(path, data.pop("limits", {}))
    return Config(
        exclude=tuple(exclude),
        max_file_mb=float(max_mb),
        url_prefixes=prefixes,
        embedder=embedder,
        llm=llm,
        personas_folder=personas_folder.strip().strip("/"),
        limits=limits,
        extra=data,
    )


def _limits(path: Path, table: object) -> FrontMatterLimits:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: `limits` must be a table such as [limits]")
    unknown = sorted(set(table) - set(_LIMIT_KEYS))
    if unknown:
        raise ConfigError(
            f"{path}: unknown key `limits.{unknown[0]}`; known: {', '.join(_LIMIT_KEYS)}"
        )
    for key, value in table.items():
        whole = key != "front_matter_kb"
        if (
            isinstance(value, bool)
            or not isinstance(value, int if whole else int | float)
            or not 0 < value < math.inf  # also refuses nan
        ):
            kind = "a positive whole number" if whole else "a positive number"
            raise ConfigError(f"{path}: `limits.{key}` ({_LIMIT_KEYS[key]}) must be {kind}")
    if "front_matter_kb" in table:
        table = {**table, "front_matter_kb": float(table["front_matter_kb"])}
    return FrontMatterLimits(**table)


def _safe_folder(folder: str) -> bool:
    """A vault-relative folder, outside dot-folders and never above the vault ("" is the root)."""
    cleaned = folder.strip()
    if cleaned.startswith("/") or "\\" in cleaned or "\x00" in cleaned:
        return False
    cleaned = cleaned.rstrip("/")
    return not cleaned or all(p and not p.startswith(".") for p in cleaned.split("/"))
