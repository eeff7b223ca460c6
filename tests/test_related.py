"""`related` (issue 13 §5): the notes most like one note, by meaning, shared links,
co-citation and rare shared tags, each with why; the CLI, the MCP tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import MakeVault, write_files
from vaultmem import related as related_mod
from vaultmem.errors import VaultmemError
from vaultmem.vault import Vault

NOTES: dict[str, str | bytes] = {
    "heat pump.md": "#energy #rare-tag\n# Heat pump\n"
    "See [[Compressor]] and [[Hub]]. [[Heat pump]]\n",
    # both link to Compressor (rare: two notes link to it) and to Hub (linked from everywhere)
    "boiler.md": "#energy\nThe old boiler, replaced. [[Compressor]] [[Hub]]\n",
    # carries the rare tag only
    "tariff.md": "#rare-tag\nNight tariff for the heat pump.\n",
    # cites heat pump and solar together
    "review.md": "Review: [[Heat pump]] and [[Solar]].\n",
    "solar.md": "Solar panels on the roof.\n",
    "Compressor.md": "Moves warmth.\n",
    "Hub.md": "Everything links here.\n",
    # nothing in common with heat pump but the hub
    **{f"misc/{i}.md": f"[[Hub]] note {i} #energy\n" for i in range(12)},
}


@pytest.fixture
def vault(make_vault: MakeVault) -> Vault:
    v = make_vault(NOTES)
    v.reindex()
    return v


def reasons(found: tuple[related_mod.Related, ...], path: str) -> dict[str, related_mod.Reason]:
    (hit,) = [r for r in found if r.path == path]
    return {why.kind: why for why in hit.reasons}


def test_each_kind_of_evidence_with_why(vault: Vault) -> None:
    found = vault.related("Heat pump", 30)
    paths = [r.path for r in found]
    assert "heat pump.md" not in paths  # never itself, self links aside
    boiler = reasons(found, "boiler.md")
    assert boiler["links"].shared[0] == "Compressor.md"  # the rarer target named first
    assert boiler["links"].detail.startswith("both link to Compressor")
    assert reasons(found, "solar.md")["cocited"].shared == ("review.md",)
    assert reasons(found, "solar.md")["cocited"].detail == "linked together from review"
    assert reasons(found, "tariff.md")["tags"].shared == ("rare-tag",)
    for r in found:
        assert abs(sum(why.strength for why in r.reasons) - r.score) < 1e-9
        assert 0 < r.score <= sum(related_mod.WEIGHTS.values()) + 1e-9
    assert [r.score for r in found] == sorted((r.score for r in found), reverse=True)


def test_rare_evidence_outweighs_common(vault: Vault) -> None:
    found = vault.related("Heat pump", 30)
    score = {r.path: r.score for r in found}
    # boiler shares a rare target and a tag; a misc note shares only the hub and a common tag
    assert score["boiler.md"] > score.get("misc/0.md", 0.0)
    misc = reasons(found, "misc/0.md") if "misc/0.md" in score else {}
    assert (
        "tags" not in misc or misc["tags"].strength < reasons(found, "tariff.md")["tags"].strength
    )


def test_meaning_without_links(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "bread.md": "Sourdough bread: feed the starter, knead the dough, bake it hot.\n",
            "baking.md": "Baking bread at home: dough, starter, a hot oven.\n",
            "taxes.md": "File the tax return before the deadline.\n",
        }
    )
    vault.embedder_spec = "wordllama"  # the bundled model: real meaning, offline
    vault.reindex()
    found = vault.related("bread", 5)
    assert found[0].path == "baking.md"
    assert found[0].reasons[0].kind == "meaning"
    assert found[0].reasons[0].detail.startswith("close in meaning (")


def test_a_lone_note_has_nothing_related(make_vault: MakeVault) -> None:
    vault = make_vault({"only.md": "Just me.\n"})
    vault.reindex(embed=False)
    assert vault.related("only") == ()
    with pytest.raises(VaultmemError):
        vault.related("no such note")


def test_cli_related(tmp_path: Path) -> None:
    from tests.test_cli import run

    root = tmp_path / "v"
    write_files(root, {k: v for k, v in NOTES.items() if isinstance(v, str)})
    base = ("--vault", str(root))
    assert run(*base, "reindex").returncode == 0
    out = run(*base, "related", "Heat pump", "--json", "--limit", "3")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["path"] == "heat pump.md" and len(data["related"]) == 3
    first = data["related"][0]
    assert set(first) == {"path", "title", "score", "signals"}
    assert {"kind", "strength", "detail", "shared"} == set(first["signals"][0])
    text = run(*base, "related", "Heat pump")
    assert text.returncode == 0 and "both link to Compressor" in text.stdout
    missing = run(*base, "related", "nothing like it")
    assert missing.returncode != 0 and "nothing like it" in missing.stderr
