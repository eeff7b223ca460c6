"""Quality gates: what a capture keeps of what the extractor proposed (the `[capture]` table).

A candidate below the minimum confidence or with too short a value is dropped; of the rest,
at most `max_candidates` (the most confident, the episode always kept) go into the note.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from vaultmem.capture.candidates import Candidate
from vaultmem.errors import ConfigError


@dataclass(frozen=True)
class CaptureSettings:
    """The `[capture]` table of `.vaultmem/config.toml`."""

    inbox: str = "inbox"  # where capture notes go; reviewed ones move to `<inbox>/processed`
    min_confidence: float = 0.4
    min_value_chars: int = 2
    max_candidates: int = 50
    max_transcript_mb: float = 20.0
    user_entity: str = "Me"  # the note a user's statements about themselves belong to
    auto_accept: float | None = None  # MCP: candidates at or above this go straight in

    @property
    def max_transcript_bytes(self) -> int:
        return int(self.max_transcript_mb * 1024 * 1024)


SETTING_KEYS = {
    "inbox": "folder of capture notes",
    "min_confidence": "candidates below this confidence (0..1) are dropped",
    "min_value_chars": "candidates with a shorter value are dropped",
    "max_candidates": "at most this many candidates per capture",
    "max_transcript_mb": "larger transcripts are refused",
    "user_entity": "the note a user's own statements belong to",
    "auto_accept": "MCP captures at or above this confidence are accepted at once",
}


def settings_from(table: object, where: str = ".vaultmem/config.toml") -> CaptureSettings:
    """The settings a `[capture]` table gives, refused with the key's meaning when wrong."""
    if table is None:
        return CaptureSettings()
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: `capture` must be a table such as [capture]")
    unknown = sorted(set(table) - set(SETTING_KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key `capture.{unknown[0]}`; known: {', '.join(SETTING_KEYS)}"
        )
    values: dict[str, object] = {}
    for key, value in table.items():
        meaning = SETTING_KEYS[key]
        if key in ("inbox", "user_entity"):
            if not isinstance(value, str) or not value.strip() or value.strip().startswith("."):
                raise ConfigError(f"{where}: `capture.{key}` ({meaning}) must be a name")
            values[key] = value.strip().strip("/")
            continue
        number = not isinstance(value, bool) and isinstance(value, int | float)
        if not number or not math.isfinite(float(value)):
            raise ConfigError(f"{where}: `capture.{key}` ({meaning}) must be a number")
        assert isinstance(value, int | float)
        if key in ("min_confidence", "auto_accept") and not 0 <= value <= 1:
            raise ConfigError(f"{where}: `capture.{key}` ({meaning}) must be between 0 and 1")
        if key in ("min_value_chars", "max_candidates") and (
            not isinstance(value, int) or value < (1 if key == "max_candidates" else 0)
        ):
            raise ConfigError(f"{where}: `capture.{key}` ({meaning}) must be a whole number")
        if key == "max_transcript_mb" and value <= 0:
            raise ConfigError(f"{where}: `capture.{key}` ({meaning}) must be positive")
        values[key] = (
            float(value) if key in ("min_confidence", "auto_accept", "max_transcript_mb") else value
        )
    return CaptureSettings(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Gated:
    """The candidates kept, and how many each gate dropped."""

    kept: tuple[Candidate, ...]
    low_confidence: int
    too_short: int
    over_limit: int


def apply_gates(candidates: Sequence[Candidate], settings: CaptureSettings) -> Gated:
    """The candidates that pass the gates, in transcript order (the episode last)."""
    low = [c for c in candidates if c.confidence < settings.min_confidence]
    short = [
        c
        for c in candidates
        if c.confidence >= settings.min_confidence
        and len(c.value.strip()) < settings.min_value_chars
    ]
    passed = [c for c in candidates if c not in low and c not in short]
    episodes = [c for c in passed if c.kind == "episode"]
    others = [c for c in passed if c.kind != "episode"]
    room = max(0, settings.max_candidates - len(episodes))
    if len(others) > room:
        best = sorted(range(len(others)), key=lambda i: (-others[i].confidence, i))[:room]
        chosen = {i for i in best}
        kept = [c for i, c in enumerate(others) if i in chosen]
    else:
        kept = others
    return Gated(tuple(kept + episodes), len(low), len(short), len(others) - len(kept))
