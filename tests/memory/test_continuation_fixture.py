"""The seeds' continuation fixture, adapted into notes, run through the real recall code.

Upstream's rule: detection must match `expectDetection`; for a positive case one `expectAny`
needle must be a substring of one of the first six recalled lines (case-insensitive); the pass
rate must reach the fixture's `threshold` (0.85). The notes are tests/fixtures/memory/
continuation (built from the fixture by build_continuation.py). This is the pure logic alone:
no search hits are given, so a case passes only on names, cues and word overlap. The same
cases run again below through `vault.memory.recall` over an index of the same notes (names,
facts, loops and episodes from the index, and its search hits), as `vaultmem recall` runs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import SHARED_DATA
from tests.memory.conftest import FIXTURES, NOW, read_vault
from vaultmem.memory.recall import recall

SOURCE = SHARED_DATA / "seed-fixtures" / "continuation-eval-fixture-set.json"
TOP = 6

pytestmark = pytest.mark.skipif(
    not SOURCE.exists(), reason=f"the seeds' fixture is not at {SOURCE} (shared data absent)"
)


def _fixture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SOURCE.read_text(encoding="utf-8"))
    return data


def _passes(case: dict[str, Any]) -> tuple[bool, str]:
    values = read_vault(FIXTURES / "continuation")
    result = recall(
        case["query"],
        NOW,
        names=values.names,
        facts=values.facts,
        episodes=values.episodes,
        loops=values.loops,
        days=_fixture()["windowDays"],
    )
    detected = result.continuation is not None
    if detected != case["expectDetection"]:
        return False, f"detected={detected}"
    if not detected:
        return True, "not a continuation"
    top = [line.text.lower() for line in result.lines[:TOP]]
    needles = [n.lower() for n in case["expectAny"]]
    found = [n for n in needles if any(n in line for line in top)]
    return bool(found), f"found {found} in {top}"


CASES = _fixture()["cases"] if SOURCE.exists() else []


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    ok, why = _passes(case)
    assert ok, why


def test_pass_rate_reaches_the_fixture_threshold() -> None:
    data = _fixture()
    passed = sum(_passes(c)[0] for c in data["cases"])
    assert passed / len(data["cases"]) >= data["threshold"], f"{passed}/{len(data['cases'])}"


# --------------------------------------------------------------------------- through the index


@pytest.fixture(scope="module")
def indexed_fixture(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The fixture notes copied into a vault and indexed: recall as `vaultmem recall` runs it,
    with the index's names, facts, loops and episodes and its search hits."""
    import shutil

    from vaultmem.vault import Vault

    root = tmp_path_factory.mktemp("continuation") / "vault"
    shutil.copytree(FIXTURES / "continuation", root)
    vault = Vault(root)
    vault.embedder_spec = "fake"
    vault.reindex(embed=False)
    return vault


def _passes_indexed(vault: Any, case: dict[str, Any]) -> tuple[bool, str]:
    result = vault.memory.recall(case["query"], NOW, days=_fixture()["windowDays"])
    detected = result.continuation is not None
    if detected != case["expectDetection"]:
        return False, f"detected={detected}"
    if not detected:
        return True, "not a continuation"
    top = [line.text.lower() for line in result.lines[:TOP]]
    found = [n for n in (x.lower() for x in case["expectAny"]) if any(n in t for t in top)]
    return bool(found), f"found {found} in {top}"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_through_the_index(indexed_fixture: Any, case: dict[str, Any]) -> None:
    ok, why = _passes_indexed(indexed_fixture, case)
    assert ok, why
