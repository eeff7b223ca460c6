"""Quality gates from the config, and duplicate / contradiction flags against current facts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from vaultmem.capture.candidates import Candidate
from vaultmem.capture.flags import CurrentFact, check
from vaultmem.capture.gates import SETTING_KEYS, CaptureSettings, apply_gates, settings_from
from vaultmem.capture.note import Flag
from vaultmem.errors import ConfigError


def fact(
    id_: str, value: str, confidence: float = 0.8, key: str = "role", entity: str = "Maya"
) -> Candidate:
    return Candidate(id_, "fact", entity, key, value, "q", "1", confidence)


EPISODE = Candidate("c-eeeeee", "episode", "Call", "episode", "summary", "q", "1", 0.6)


def test_gates_drop_low_confidence_short_values_and_keep_the_best_n() -> None:
    found = [
        fact("c-000001", "CTO", 0.9),
        fact("c-000002", "x", 0.9),  # too short
        fact("c-000003", "Lisbon", 0.3),  # below the minimum
        fact("c-000004", "tea", 0.5),
        fact("c-000005", "cats", 0.7),
        EPISODE,
    ]
    gated = apply_gates(
        found, CaptureSettings(min_confidence=0.4, min_value_chars=2, max_candidates=3)
    )
    assert [c.id for c in gated.kept] == ["c-000001", "c-000005", "c-eeeeee"]  # order kept
    assert (gated.low_confidence, gated.too_short, gated.over_limit) == (1, 1, 1)


def test_settings_from_the_config_table() -> None:
    s = settings_from(
        {"min_confidence": 0.6, "max_candidates": 10, "inbox": "Inbox/", "auto_accept": 0.95}
    )
    assert (s.min_confidence, s.max_candidates, s.inbox, s.auto_accept) == (0.6, 10, "Inbox", 0.95)
    assert settings_from(None) == CaptureSettings()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"min_confidence": 2}, "between 0 and 1"),
        ({"max_candidates": 0}, "whole number"),
        ({"max_candidates": 2.5}, "whole number"),
        ({"min_confidence": "high"}, "must be a number"),
        ({"min_confidence": float("nan")}, "must be a number"),
        ({"inbox": ".hidden"}, "must be a name"),
        ({"max_transcript_mb": -1}, "positive"),
        ({"mni_confidence": 0.5}, "unknown key `capture.mni_confidence`"),
        ([1], "must be a table"),
    ],
)
def test_bad_settings_are_refused(table: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        settings_from(table)


CURRENT = [
    CurrentFact("Maya", "people/Maya.md", "Role", "CEO", "f-1a2b", aliases=("Maya Chen",)),
    CurrentFact("Maya", "people/Maya.md", "drink", "green tea", None),
]


def test_same_key_other_value_contradicts_with_the_value_now() -> None:
    flags = check([fact("c-000001", "CTO")], CURRENT)
    assert flags == {"c-000001": (Flag("contradicts", "Maya#^f-1a2b", "CEO"),)}


def test_same_value_after_normalising_duplicates() -> None:
    flags = check(
        [fact("c-000001", "**ceo.**"), fact("c-000002", "Green  Tea", key="likes")], CURRENT
    )
    assert flags == {
        "c-000001": (Flag("duplicates", "Maya#^f-1a2b"),),
        "c-000002": (Flag("duplicates", "Maya"),),  # a fact line without a block id: the note
    }


def test_an_alias_names_the_entity_and_other_entities_are_not_compared() -> None:
    assert check([fact("c-000001", "CTO", entity="maya chen")], CURRENT) != {}
    assert check([fact("c-000001", "CTO", entity="Tom")], CURRENT) == {}


def test_near_identical_meaning_by_vectors() -> None:
    def embed(texts: Sequence[str]) -> np.ndarray:
        # a fake embedder: texts about tea point one way, about roles another, the rest a third
        return np.array(
            [
                [1.0, 0, 0] if "tea" in t else [0, 1.0, 0] if "CEO" in t else [0, 0, 1.0]
                for t in texts
            ]
        )

    likes = fact("c-000001", "matcha tea", key="favourite drink")
    other = fact("c-000002", "sailing", key="hobby")
    flags = check([likes, other], CURRENT, embed=embed)
    assert flags == {"c-000001": (Flag("duplicates", "Maya"),)}
    assert check([likes], CURRENT) == {}  # without an embedder, no vectors


def test_loops_and_episodes_are_not_flagged() -> None:
    loop = replace(fact("c-000001", "CEO"), kind="loop", key="loop")
    assert check([loop, EPISODE], CURRENT) == {}


def test_the_config_knows_every_capture_setting() -> None:
    from vaultmem.config import CONFIG_TEMPLATE, KNOWN_KEYS

    assert {k for k in KNOWN_KEYS if k.startswith("capture.")} == {
        f"capture.{k}" for k in SETTING_KEYS
    }
    assert all(f"# {k} = " in CONFIG_TEMPLATE for k in SETTING_KEYS)
