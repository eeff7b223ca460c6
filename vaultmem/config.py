"""Settings: `.vaultmem/config.toml` in the vault, with defaults for everything."""

from __future__ import annotations

import os
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

# For vaults made from a docs site (not Obsidian behaviour, so off by default): links whose
# target starts with a URL prefix point into a vault folder, and a link to a folder means its
# index.md or README.md. Example for MDN's content: {"/en-US/docs/" = "en-us/"}
[links]
url_prefixes = {}

# The folder (vault-relative) holding persona notes, `<folder>/<slug>.md` with `type: persona`.
# personas_folder = "personas"
"""


@dataclass(frozen=True)
class Config:
    exclude: tuple[str, ...] = ()
    max_file_mb: float = 10.0
    url_prefixes: dict[str, str] = field(default_factory=dict)
    embedder: str | None = None  # e.g. "wordllama", "ollama:nomic-embed-text"
    llm: str | None = None  # text model for HyDE, e.g. "ollama:llama3.2"
    personas_folder: str = "personas"
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)


def config_path(vault: Path) -> Path:
    return vault / ".vaultmem" / "config.toml"


def write_default_config(vault: Path) -> bool:
    """Write the commented default config (never over one); True when it was created."""
    path = config_path(vault)
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(CONFIG_TEMPLATE, encoding="utf-8")
    os.replace(tmp, path)
    return True


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
    if not isinstance(max_mb, int | float) or max_mb <= 0:
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
    return Config(
        exclude=tuple(exclude),
        max_file_mb=float(max_mb),
        url_prefixes=prefixes,
        embedder=embedder,
        llm=llm,
        personas_folder=personas_folder.strip().strip("/"),
        extra=data,
    )


def _safe_folder(folder: str) -> bool:
    """A vault-relative folder, outside dot-folders and never above the vault ("" is the root)."""
    cleaned = folder.strip()
    if cleaned.startswith("/") or "\\" in cleaned or "\x00" in cleaned:
        return False
    cleaned = cleaned.rstrip("/")
    return not cleaned or all(p and not p.startswith(".") for p in cleaned.split("/"))
