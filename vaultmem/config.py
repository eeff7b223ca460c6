"""Settings: `.vaultmem/config.toml` in the vault, with defaults for everything."""

from __future__ import annotations

import difflib
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from vaultmem.errors import ConfigError

CONFIG_TEMPLATE = """\
# vaultmem settings for this vault. Every key is optional.

# Glob patterns (vault-relative) of files and folders to leave out of the index,
# in addition to dot-folders such as .obsidian, .trash and .git.
exclude = []

# The embedding model for search by meaning: "auto" (the default: all-MiniLM-L6-v2 for vaults
# up to 2,000 sections when `vaultmem[minilm]` is installed, the bundled wordllama beyond; the
# choice is kept in the index), "minilm", "wordllama" (bundled, offline), "ollama:<model>"
# (OLLAMA_URL), "openai:<model>" (OPENAI_BASE_URL, OPENAI_API_KEY).
# embedder = "ollama:nomic-embed-text"
# The sections up to which "auto" takes all-MiniLM-L6-v2 from the first index (~10 sections
# per CPU-second: 2,000 is ~3.5 minutes of one core); larger vaults start with wordllama.
# embed_auto_limit = 2000
# A vault past that limit (up to 20,000 sections) moves to all-MiniLM-L6-v2 by the upgrade:
# "background" (the MCP server and the TUI embed it at idle priority, a batch at a time, and
# swap the vectors when done) or "manual" (only `vaultmem upgrade-model` does it).
# embed_upgrade = "background"
# Re-read the best 20 hits of hybrid and semantic search with all-MiniLM-L6-v2 (`pip install
# 'vaultmem[minilm]'`): better answers to questions in everyday words, but ~1.4 s of CPU a
# search for sections it has not read before (README, "Search by meaning, offline").
# rerank = true
# A text model for `search --hyde`: "ollama:<model>" or "openai:<model>".
# llm = "ollama:llama3.2"

# Markdown files larger than this many megabytes are skipped (and listed by `vaultmem doctor`).
max_file_mb = 10

# The folder (vault-relative) holding persona notes, `<folder>/<slug>.md` with `type: persona`.
# personas_folder = "personas"

# Where the index lives (default: .vaultmem/index.db in the vault). For a vault kept in a sync
# service, keep it outside the synced folder; `~` is your home, a relative path is from the vault.
# index = "~/.cache/vaultmem/notes.db"

# Tables come last (every key after a [table] line belongs to it).
# Bounds on the work one note's front matter can cause. A note over a bound is still indexed,
# with a warning that `vaultmem doctor` lists, instead of slowing or stopping the reindex.
# A changed limit applies to notes as they change; `vaultmem reindex --full` applies it to all.
[limits]
front_matter_kb = 256  # larger front matter is indexed as text, not read as YAML
properties = 1000  # front matter properties kept per note
yaml_values = 20000  # values per note's front matter, YAML aliases expanded ("billion laughs")
yaml_depth = 50  # nesting of lists and mappings in front matter

# Where memory writes put new notes (docs/memory.md): `fact set --create` makes
# <entities_folder>/<Entity>.md, `episode add` writes <episodes_folder>/YYYY-MM-DD <title>.md.
[memory]
# entities_folder = "entities"
# episodes_folder = "episodes"

# Capture and review (`vaultmem capture`, `vaultmem review`; docs/capture.md).
[capture]
# inbox = "inbox"  # capture notes; reviewed ones move to inbox/processed/
# min_confidence = 0.4  # candidates below are left out of a capture
# min_value_chars = 2  # candidates with a shorter value are left out
# max_candidates = 50  # the most confident N per capture
# max_transcript_mb = 20  # larger transcripts are refused
# user_entity = "Me"  # the note a user's own statements belong to
# auto_accept = 0.95  # MCP captures at or above this are accepted at once (unset: none)

# For vaults made from a docs site (not Obsidian behaviour, so off by default): links whose
# target starts with a URL prefix point into a vault folder, and a link to a folder means its
# index.md or README.md. Example for MDN's content: {"/en-US/docs/" = "en-us/"}
[links]
url_prefixes = {}
"""

# `.vaultmem/.gitignore`: a vault kept in Git shares its settings, never the derived index.
GITIGNORE = """\
# vaultmem: the index is derived from the notes (`vaultmem reindex` rebuilds it); keep it out
# of Git. The settings in config.toml are worth sharing.
*
!.gitignore
!config.toml
"""


# who runs the upgrade of a vault past auto's limit to MiniLM (vaultmem/embed_upgrade.py)
EmbedUpgrade = Literal["background", "manual"]


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
    embed_auto_limit: int | None = None  # auto's limit (None: embed_choice.AUTO_LIMIT)
    embed_upgrade: EmbedUpgrade = "background"  # who runs the upgrade to MiniLM
    llm: str | None = None  # text model for HyDE, e.g. "ollama:llama3.2"
    rerank: bool = False  # re-rank the best hits with all-MiniLM-L6-v2 (vaultmem/rerank.py)
    personas_folder: str = "personas"
    limits: FrontMatterLimits = FrontMatterLimits()
    index: str | None = None  # where the index lives, as written (see index_path)
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)

    def index_path(self, vault: Path) -> Path:
        """The index file: `index` (`~` expanded, relative to the vault), else the default."""
        if self.index is None:
            return vault / ".vaultmem" / "index.db"
        return (vault / Path(self.index).expanduser()).resolve()


def config_path(vault: Path) -> Path:
    return vault / ".vaultmem" / "config.toml"


def write_default_config(vault: Path) -> bool:
    """Write the commented default config (never over one); True when it was created. Also
    `.vaultmem/.gitignore`, so Git keeps the config and never the derived index."""
    path = config_path(vault)
    created = False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for file, text in ((path, CONFIG_TEMPLATE), (path.parent / ".gitignore", GITIGNORE)):
            if not file.exists():
                tmp = file.with_name(file.name + ".tmp")
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, file)
                created = created or file == path
    except OSError as exc:  # a read-only vault (permissions, a read-only disk)
        raise ConfigError(
            f"cannot write the settings in {path.parent} ({exc.strerror}): `init` needs to"
            f" write in the vault; for a read-only vault, skip it and keep the index elsewhere"
            f" (`vaultmem --vault {vault} --index PATH reindex`)"
        ) from exc
    return created


def load_config(vault: Path) -> Config:
    path = config_path(vault)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return Config()
    except PermissionError as exc:  # the file, or .vaultmem/ itself, closed to this account
        raise ConfigError(
            f"cannot read {path} ({exc.strerror}): check the permissions of it and of "
            f"{path.parent} (`ls -ld {path.parent} {path}`)"
        ) from exc
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
    auto_limit = data.pop("embed_auto_limit", None)
    if auto_limit is not None and (
        isinstance(auto_limit, bool) or not isinstance(auto_limit, int) or auto_limit < 0
    ):
        raise ConfigError(
            f"{path}: `embed_auto_limit` must be a whole number of sections, 0 or more, such "
            "as 2000 (the vaults up to which `auto` takes all-MiniLM-L6-v2)"
        )
    upgrade = data.pop("embed_upgrade", "background")
    if upgrade not in get_args(EmbedUpgrade):
        raise ConfigError(
            f'{path}: `embed_upgrade` must be "background" or "manual", not {upgrade!r}'
        )
    rerank = data.pop("rerank", False)
    if not isinstance(rerank, bool):
        raise ConfigError(f"{path}: `rerank` must be true or false")
    personas_folder = data.pop("personas_folder", "personas")
    if not isinstance(personas_folder, str) or not _safe_folder(personas_folder):
        raise ConfigError(
            f'{path}: `personas_folder` must be a folder inside the vault, such as "personas"'
        )
    limits = _limits(path, data.pop("limits", {}))
    index = data.pop("index", None)
    if index is not None and not _index_outside_notes(vault, index):
        raise ConfigError(
            f'{path}: `index` must be a file path outside the notes, such as "~/.cache/vaultmem/'
            'notes.db" (or inside a dot-folder of the vault)'
        )
    return Config(
        exclude=tuple(exclude),
        max_file_mb=float(max_mb),
        url_prefixes=prefixes,
        embedder=embedder,
        embed_auto_limit=auto_limit,
        embed_upgrade=upgrade,
        llm=llm,
        rerank=rerank,
        personas_folder=personas_folder.strip().strip("/"),
        limits=limits,
        index=index,
        extra=data | {f"links.{k}": v for k, v in links.items() if k != "url_prefixes"},
    )


def _index_outside_notes(vault: Path, index: object) -> bool:
    """Whether `index` names a file that is not indexed as a note or attachment itself."""
    if not isinstance(index, str) or not index.strip() or "\x00" in index:
        return False
    file = (vault / Path(index).expanduser()).resolve()
    try:
        inside = file.relative_to(vault.resolve())
    except ValueError:
        return True
    return len(inside.parts) > 1 and any(part.startswith(".") for part in inside.parts[:-1])


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


# the [capture] table's keys (vaultmem/capture/gates.py checks their values)
_CAPTURE_KEYS = (
    "inbox",
    "min_confidence",
    "min_value_chars",
    "max_candidates",
    "max_transcript_mb",
    "user_entity",
    "auto_accept",
)

# Every key the config reads ([table] keys as `table.key`), for the unknown-key warning.
KNOWN_KEYS = (
    "exclude",
    "max_file_mb",
    "embedder",
    "embed_auto_limit",
    "embed_upgrade",
    "llm",
    "rerank",
    "personas_folder",
    "index",
    "links",
    "links.url_prefixes",
    "limits",
    *(f"limits.{key}" for key in _LIMIT_KEYS),
    "memory",  # the [memory] table, read by memories.Memory
    "memory.entities_folder",
    "memory.episodes_folder",
    "capture",  # read (and checked) by the capture service: vaultmem/capture/gates.py
    *(f"capture.{key}" for key in _CAPTURE_KEYS),
)


def unknown_key_warnings(config: Config) -> tuple[str, ...]:
    """A sentence per key the config has but nothing reads (a typo, most often), naming the
    closest known key."""
    out = []
    for key in config.extra:
        value = config.extra[key]
        if key in KNOWN_KEYS and isinstance(value, dict):
            # a table read by its own service ([memory]: memories.Memory): check its keys
            for sub in value:
                full = f"{key}.{sub}"
                if full not in KNOWN_KEYS:
                    close = difflib.get_close_matches(full, KNOWN_KEYS, n=1, cutoff=0.6)
                    hint = f"; did you mean `{close[0]}`?" if close else ""
                    out.append(f"unknown key `{full}` in .vaultmem/config.toml is ignored{hint}")
            continue
        close = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=0.6)
        hint = f"; did you mean `{close[0]}`?" if close else f" (known: {', '.join(KNOWN_KEYS)})"
        out.append(f"unknown key `{key}` in .vaultmem/config.toml is ignored{hint}")
    return tuple(out)
