"""Settings: `.vaultmem/config.toml` in the vault, with defaults for everything."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from vaultmem.errors import ConfigError

CONFIG_TEMPLATE = """\
# vaultmem settings for this vault. Every key is optional.

# Glob patterns (vault-relative) of files and folders to leave out of the index,
# in addition to dot-folders such as .obsidian, .trash and .git.
exclude = []

# Markdown files larger than this many megabytes are skipped (and listed by `vaultmem doctor`).
max_file_mb = 10
"""


@dataclass(frozen=True)
class Config:
    exclude: tuple[str, ...] = ()
    max_file_mb: float = 10.0
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
    if not isinstance(max_mb, int | float) or max_mb <= 0:
        raise ConfigError(f"{path}: `max_file_mb` must be a positive number")
    return Config(exclude=tuple(exclude), max_file_mb=float(max_mb), extra=data)
