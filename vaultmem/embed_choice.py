"""Which embedding model a vault uses when nobody chose one: `auto`, the default.

all-MiniLM-L6-v2 (`minilm`, from a model package) finds better answers than the bundled
wordllama on every set measured, but embeds ~100x slower (docs/BENCHMARKS.md, round 5), so a
vault's first index with it costs minutes, not seconds. `auto` takes MiniLM for vaults up to
`AUTO_LIMIT` sections and wordllama beyond, and records its choice in the index (the meta key
`embed_choice`), so that a vault near the limit does not flip models on every reindex:

- a vault that grows past the limit switches to wordllama once, with a notice, and stays there
  (`reindex --embeddings` decides again from scratch; `--embedder minilm` keeps MiniLM);
- an index whose vectors were made before `auto` existed, or by a model someone chose with
  `--embedder`, `$VAULTMEM_EMBEDDER` or the config's `embedder`, keeps that model;
- without the MiniLM package, wordllama, with a notice saying what to install; once it is
  installed, a vault still under the limit moves to MiniLM at its next reindex;
- a vault given wordllama for its size can still move to MiniLM without anyone waiting: the
  upgrade (vaultmem/embed_upgrade.py) embeds it a batch at a time and swaps the vectors once
  every section has MiniLM's, recorded as `upgraded`; such a vault keeps MiniLM up to
  `UPGRADE_LIMIT` sections.

The limit is the config's `embed_auto_limit` when set (`Vault` passes it), else `AUTO_LIMIT`.

`decide` is the rule (pure); `recorded`/`record` read and write what the index keeps.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Literal

from vaultmem import store

AUTO_SPEC = "auto"
MINILM_SPEC = "minilm"
WORDLLAMA_SPEC = "wordllama"
# Sections (what the indexer embeds) up to which `auto` takes MiniLM. Its first index at the
# limit costs ~1.5 to 5 minutes of one core (docs/BENCHMARKS.md, round 5; README).
AUTO_LIMIT = 2000
# Sections up to which a vault past the limit is moved to MiniLM by the upgrade. At ~10
# sections per CPU-second that is ~35 minutes of one idle-priority core, once, and ~30 MB of
# cached vectors; a 126k-section vault (MDN) would take ~3.5 hours and ~190 MB, and every
# later reindex of a big import would embed at MiniLM's pace: past this bound, wordllama.
UPGRADE_LIMIT = 20_000
# Sections MiniLM embeds per CPU-second on a typical vault (docs/BENCHMARKS.md, round 5:
# 6.5 for long sections to 24 for short notes; SciFact's abstracts 10.8): for estimates.
MINILM_RATE = 10.0
META_KEY = "embed_choice"

By = Literal["auto", "you"]
# small: at most the limit; large: past it; absent: MiniLM's package not installed; kept: the
# index's vectors came from a model chosen by hand, or before `auto` existed; you: chosen now;
# upgraded: a large vault moved to MiniLM by the upgrade (vaultmem/embed_upgrade.py)
Why = Literal["small", "large", "absent", "kept", "you", "upgraded"]
WHYS = ("small", "large", "absent", "kept", "you", "upgraded")


@dataclass(frozen=True)
class Choice:
    """The model a vault uses, who chose it and why (what `stats` shows)."""

    spec: str  # an embedder spec: "minilm", "wordllama", or what a person gave
    by: By
    why: Why
    sections: int = 0  # the vault's sections when the choice was made
    limit: int = AUTO_LIMIT
    notice: str | None = None  # said once, when this choice switched models
    redo: bool = False  # the index's vectors are another model's: make every vector again

    @property
    def reason(self) -> str:
        """Why this model, in words a person reads."""
        if self.why == "you":
            return "chosen with --embedder, $VAULTMEM_EMBEDDER or the config's `embedder`"
        if self.why == "kept":
            return (
                "the model the index was built with (`vaultmem reindex --embeddings` chooses again)"
            )
        if self.why == "absent":
            return (
                "chosen automatically: all-MiniLM-L6-v2 is not installed"
                " (`pip install 'vaultmem[minilm]'`)"
            )
        if self.why == "upgraded":
            return (
                "upgraded from wordllama once all-MiniLM-L6-v2 had embedded the vault "
                f"({self.sections:,} sections, over the {self.limit:,} up to which it is used "
                "from the first index)"
            )
        if self.why == "large":
            return (
                f"chosen automatically: the vault had {self.sections:,} sections, over the "
                f"{self.limit:,} up to which all-MiniLM-L6-v2 is used"
            )
        return (
            f"chosen automatically: the vault had {self.sections:,} sections, at most "
            f"{self.limit:,} (all-MiniLM-L6-v2 up to there, wordllama beyond)"
        )

    def to_json(self, model: str) -> str:
        return json.dumps(
            {
                "model": model,
                "by": self.by,
                "why": self.why,
                "sections": self.sections,
                "limit": self.limit,
            }
        )


def is_auto(spec: str | None) -> bool:
    return spec is None or spec.strip().lower() in ("", AUTO_SPEC)


def model_spec(model: str | None) -> str | None:
    """`minilm` or `wordllama` for the name of one of auto's two models, else None."""
    from vaultmem.embed import MiniLMEmbedder, WordLlamaEmbedder

    if model == MiniLMEmbedder.name:
        return MINILM_SPEC
    if model == WordLlamaEmbedder.name:
        return WORDLLAMA_SPEC
    return None


def decide(
    sections: int,
    model: str | None,
    previous: Choice | None,
    installed: bool,
    limit: int | None = None,
    again: bool = False,
) -> Choice:
    """auto's choice for a vault of `sections` sections whose index holds vectors of `model`
    (None: none yet), chosen before as `previous` (None: not by auto, or never recorded).

    `installed`: whether MiniLM's package is there. `again`: every vector is being made again
    (`reindex --embeddings`), so nothing recorded binds the choice.
    """
    limit = AUTO_LIMIT if limit is None else limit
    fresh = _fresh(sections, installed, limit)
    held = None if again else model_spec(model)
    if held is None:
        # No vectors yet, or another model's (kept until `reindex --embeddings`), or a choice
        # made again: by size alone.
        return fresh
    by_auto = previous is not None and previous.by == "auto"
    upgraded = by_auto and previous is not None and previous.why == "upgraded"
    if held == MINILM_SPEC:
        if not installed:
            return Choice(
                WORDLLAMA_SPEC,
                "auto",
                "absent",
                sections,
                limit,
                notice="all-MiniLM-L6-v2 is no longer installed: every vector is made again "
                "with wordllama (`pip install 'vaultmem[minilm]'` to go back)",
                redo=True,
            )
        if upgraded and sections > UPGRADE_LIMIT:
            return Choice(
                WORDLLAMA_SPEC,
                "auto",
                "large",
                sections,
                limit,
                notice=f"the vault has grown past {UPGRADE_LIMIT:,} sections ({sections:,}), "
                "the most all-MiniLM-L6-v2 is kept for: meaning search moves to wordllama, "
                "which embeds ~100x faster (`--embedder minilm` keeps all-MiniLM-L6-v2)",
                redo=True,
            )
        if by_auto and not upgraded and sections > limit:
            return Choice(
                WORDLLAMA_SPEC,
                "auto",
                "large",
                sections,
                limit,
                notice=f"the vault has grown past {limit:,} sections ({sections:,}): meaning "
                "search moves to wordllama, which embeds ~100x faster, and stays there "
                "(`--embedder minilm` keeps all-MiniLM-L6-v2)",
                redo=True,
            )
        return _kept(MINILM_SPEC, previous, sections, limit)
    # wordllama
    if by_auto and previous is not None and previous.why == "absent" and fresh.spec == MINILM_SPEC:
        return Choice(
            MINILM_SPEC,
            "auto",
            "small",
            sections,
            limit,
            notice="all-MiniLM-L6-v2 is installed now: every vector is made again with it "
            f"({sections:,} sections)",
            redo=True,
        )
    return _kept(WORDLLAMA_SPEC, previous, sections, limit)


def for_search(
    sections: int,
    model: str | None,
    previous: Choice | None,
    installed: bool,
    limit: int | None = None,
) -> Choice:
    """auto's model for searching the index as it is: a switch `decide` would make waits for
    the next reindex (the vectors are still the old model's), unless that model cannot run."""
    limit = AUTO_LIMIT if limit is None else limit
    choice = decide(sections, model, previous, installed, limit)
    if choice.redo and model_spec(model) == MINILM_SPEC and installed:
        return _kept(MINILM_SPEC, previous, sections, limit)
    if choice.redo and model_spec(model) == WORDLLAMA_SPEC:
        return _kept(WORDLLAMA_SPEC, previous, sections, limit)
    return Choice(choice.spec, choice.by, choice.why, choice.sections, choice.limit)


def _fresh(sections: int, installed: bool, limit: int) -> Choice:
    if sections > limit:
        return Choice(
            WORDLLAMA_SPEC,
            "auto",
            "large",
            sections,
            limit,
            notice=_large(sections, limit, installed),
        )
    if not installed:
        return Choice(
            WORDLLAMA_SPEC,
            "auto",
            "absent",
            sections,
            limit,
            notice="meaning search uses wordllama: all-MiniLM-L6-v2, which finds better "
            f"answers in vaults up to {limit:,} sections, is not installed "
            "(`pip install 'vaultmem[minilm]'`, then `vaultmem reindex`)"
            if sections
            else None,
        )
    return Choice(MINILM_SPEC, "auto", "small", sections, limit)


def upgrade_minutes(sections: int) -> int:
    """About how many minutes of one core MiniLM takes to embed `sections` sections."""
    return max(1, math.ceil(sections / MINILM_RATE / 60))


def upgrade_cost(sections: int) -> str:
    """What embedding `sections` sections with MiniLM costs, in words."""
    minutes = upgrade_minutes(sections)
    return f"~{minutes} minute{'s' * (minutes != 1)} of one core"


def _large(sections: int, limit: int, installed: bool) -> str | None:
    """What a vault past the limit is told once, at its first index: that it can still move
    to MiniLM, and what that costs."""
    if sections > UPGRADE_LIMIT:
        return None
    said = (
        f"meaning search uses wordllama: the vault has {sections:,} sections, over the "
        f"{limit:,} up to which all-MiniLM-L6-v2 (better answers, ~100x slower to embed) "
        "is used from the start"
    )
    cost = upgrade_cost(sections)
    if not installed:
        return (
            f"{said}; with `pip install 'vaultmem[minilm]'`, `vaultmem upgrade-model` can move "
            f"it to all-MiniLM-L6-v2 ({cost})"
        )
    return (
        f"{said}; `vaultmem upgrade-model` moves it to all-MiniLM-L6-v2 ({cost}; searches "
        "keep working meanwhile), and the MCP server and the TUI do it in the background "
        'unless the config says `embed_upgrade = "manual"`'
    )


def _kept(spec: str, previous: Choice | None, sections: int, limit: int) -> Choice:
    """The index's model stays: as auto chose it (with auto's reason), or as it was made."""
    if previous is not None and previous.by == "auto":
        return Choice(spec, "auto", previous.why, previous.sections, previous.limit)
    return Choice(spec, "auto", "kept", sections, limit)


def explicit(spec: str) -> Choice:
    """A model someone named: it always wins."""
    return Choice(spec.strip(), "you", "you")


def recorded(conn: store.Connection) -> Choice | None:
    """The choice the index keeps for the model its vectors are from (None: none recorded,
    one recorded for vectors since replaced, or unreadable)."""
    text = store.get_meta(conn, META_KEY)
    if not text:
        return None
    try:
        data = json.loads(text)
        model = str(data["model"])
        by, why = data["by"], data["why"]
        sections, limit = int(data.get("sections", 0)), int(data.get("limit", AUTO_LIMIT))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    if by not in ("auto", "you") or why not in WHYS:
        return None
    if model != store.get_meta(conn, "embed_model"):
        return None
    return Choice(model_spec(model) or model, by, why, sections, limit)


def record(conn: store.Connection, choice: Choice, model: str) -> None:
    """Keep `choice` in the index beside the vectors of `model` it made."""
    store.set_meta(conn, META_KEY, choice.to_json(model))
