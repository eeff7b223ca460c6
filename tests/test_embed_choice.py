"""The `auto` embedder (vaultmem/embed_choice.py): MiniLM for vaults up to a size, wordllama
beyond, the choice kept in the index (hysteresis), a missing MiniLM package, explicit choices.

MiniLM is played by a stand-in (hashed words, 384 numbers) so these tests need neither its
weights nor its seconds; the one test of the real package skips without it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultmem import embed_choice, encoder, store
from vaultmem.cli import cli
from vaultmem.embed import MiniLMEmbedder, WordLlamaEmbedder, make_embedder
from vaultmem.embed_choice import Choice, decide, for_search
from vaultmem.encoder import ModelSource
from vaultmem.vault import Vault

MINILM = MiniLMEmbedder.name
WORDLLAMA = WordLlamaEmbedder.name
LIMIT = 100


# --------------------------------------------------------------------------- the rule


def test_a_vault_at_the_limit_gets_minilm_and_one_past_it_wordllama() -> None:
    at = decide(LIMIT, None, None, installed=True, limit=LIMIT)
    assert (at.spec, at.by, at.why, at.redo, at.notice) == ("minilm", "auto", "small", False, None)
    past = decide(LIMIT + 1, None, None, installed=True, limit=LIMIT)
    assert (past.spec, past.why, past.redo) == ("wordllama", "large", False)
    assert "101 sections, over the 100" in past.reason
    # said once, at the first index: the upgrade exists, and what it costs
    assert past.notice is not None
    assert "`vaultmem upgrade-model` moves it to all-MiniLM-L6-v2" in past.notice
    assert "~1 minute of one core" in past.notice
    absent = decide(12_000, None, None, installed=False, limit=LIMIT)
    assert absent.notice is not None and "pip install 'vaultmem[minilm]'" in absent.notice
    assert "~20 minutes of one core" in absent.notice
    # past the upgrade's bound: nothing to offer
    assert decide(embed_choice.UPGRADE_LIMIT + 1, None, None, True, LIMIT).notice is None


def test_a_vault_that_grows_past_the_limit_switches_to_wordllama_once() -> None:
    chose = Choice("minilm", "auto", "small", 80, LIMIT)
    grown = decide(LIMIT + 1, MINILM, chose, installed=True, limit=LIMIT)
    assert (grown.spec, grown.why, grown.redo) == ("wordllama", "large", True)
    assert grown.notice is not None and "grown past 100 sections (101)" in grown.notice
    assert "--embedder minilm" in grown.notice
    # at the next reindex the index holds wordllama's vectors, chosen for size: it stays
    again = decide(LIMIT + 5, WORDLLAMA, grown, installed=True, limit=LIMIT)
    assert (again.spec, again.redo, again.notice) == ("wordllama", False, None)


def test_a_vault_that_shrinks_back_under_the_limit_keeps_wordllama() -> None:
    switched = Choice("wordllama", "auto", "large", LIMIT + 1, LIMIT)
    for sections in (LIMIT, LIMIT // 2, 1):
        choice = decide(sections, WORDLLAMA, switched, installed=True, limit=LIMIT)
        assert (choice.spec, choice.why, choice.redo) == ("wordllama", "large", False)


def test_a_vault_at_the_limit_stays_on_minilm() -> None:
    chose = Choice("minilm", "auto", "small", 10, LIMIT)
    choice = decide(LIMIT, MINILM, chose, installed=True, limit=LIMIT)
    assert (choice.spec, choice.redo, choice.notice) == ("minilm", False, None)


def test_minilm_chosen_by_hand_is_kept_past_the_limit() -> None:
    by_hand = Choice("minilm", "you", "you")
    choice = decide(LIMIT * 10, MINILM, by_hand, installed=True, limit=LIMIT)
    assert (choice.spec, choice.why, choice.redo) == ("minilm", "kept", False)


def test_an_index_made_before_auto_keeps_its_model() -> None:
    # vectors from wordllama (the old default) and no record: no surprise re-embedding
    choice = decide(5, WORDLLAMA, None, installed=True, limit=LIMIT)
    assert (choice.spec, choice.why, choice.redo) == ("wordllama", "kept", False)
    assert "reindex --embeddings" in choice.reason


def test_making_every_vector_again_chooses_by_size_alone() -> None:
    switched = Choice("wordllama", "auto", "large", LIMIT + 1, LIMIT)
    choice = decide(5, WORDLLAMA, switched, installed=True, limit=LIMIT, again=True)
    assert (choice.spec, choice.why) == ("minilm", "small")


def test_without_the_minilm_package_a_small_vault_gets_wordllama_and_is_told() -> None:
    choice = decide(10, None, None, installed=False, limit=LIMIT)
    assert (choice.spec, choice.why, choice.redo) == ("wordllama", "absent", False)
    assert choice.notice is not None and "pip install 'vaultmem[minilm]'" in choice.notice
    assert "not installed" in choice.reason
    # an empty vault has nothing to say it about
    assert decide(0, None, None, installed=False, limit=LIMIT).notice is None


def test_minilm_uninstalled_after_it_made_the_vectors_moves_to_wordllama() -> None:
    chose = Choice("minilm", "auto", "small", 10, LIMIT)
    choice = decide(10, MINILM, chose, installed=False, limit=LIMIT)
    assert (choice.spec, choice.why, choice.redo) == ("wordllama", "absent", True)
    assert choice.notice is not None and "no longer installed" in choice.notice


def test_minilm_installed_later_takes_over_a_small_vault_once() -> None:
    absent = Choice("wordllama", "auto", "absent", 10, LIMIT)
    choice = decide(10, WORDLLAMA, absent, installed=True, limit=LIMIT)
    assert (choice.spec, choice.why, choice.redo) == ("minilm", "small", True)
    assert choice.notice is not None and "installed now" in choice.notice
    # but not a vault that has grown past the limit meanwhile
    big = decide(LIMIT + 1, WORDLLAMA, absent, installed=True, limit=LIMIT)
    assert (big.spec, big.redo) == ("wordllama", False)


def test_searching_uses_the_vectors_model_until_a_reindex_switches() -> None:
    chose = Choice("minilm", "auto", "small", 10, LIMIT)
    assert for_search(LIMIT + 1, MINILM, chose, installed=True, limit=LIMIT).spec == "minilm"
    absent = Choice("wordllama", "auto", "absent", 10, LIMIT)
    assert for_search(10, WORDLLAMA, absent, installed=True, limit=LIMIT).spec == "wordllama"
    # MiniLM's vectors without MiniLM: wordllama (search then says the vectors do not match)
    assert for_search(10, MINILM, chose, installed=False, limit=LIMIT).spec == "wordllama"
    assert for_search(0, None, None, installed=True, limit=LIMIT).spec == "minilm"


def test_another_models_vectors_are_left_to_reindex_embeddings() -> None:
    choice = decide(5, "ollama:nomic-embed-text", None, installed=True, limit=LIMIT)
    assert (choice.spec, choice.redo) == ("minilm", False)


@pytest.mark.parametrize("spec", [None, "", "auto", " AUTO "])
def test_auto_is_the_default_spelled_any_way(spec: str | None) -> None:
    assert embed_choice.is_auto(spec)


@pytest.mark.parametrize("spec", ["minilm", "wordllama", "ollama:auto", "autos", "fake:8"])
def test_a_named_model_is_not_auto(spec: str) -> None:
    assert not embed_choice.is_auto(spec)


def test_make_embedder_auto_without_a_vault_is_a_new_vaults_choice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(encoder, "find_minilm", lambda: None)
    assert isinstance(make_embedder("auto"), WordLlamaEmbedder)


# --------------------------------------------------------------------------- a vault


# the tests of the real package (the rest play it with StandInMiniLM)
needs_minilm = pytest.mark.skipif(
    encoder.find_minilm() is None,
    reason="the all-MiniLM-L6-v2 package is not installed (`pip install 'vaultmem[minilm]'`)",
)


class StandInMiniLM:
    """Plays all-MiniLM-L6-v2: each text a bag of its words hashed into 384 numbers."""

    def __init__(self) -> None:
        self.embedded = 0

    def embed(self, texts: Sequence[str], threads: int = 1, max_tokens: int = 256) -> np.ndarray:
        self.embedded += len(texts)
        out = np.zeros((len(texts), 384), np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, sum(map(ord, word)) % 384] += 1.0
        return out


@pytest.fixture
def minilm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> StandInMiniLM:
    """auto with nobody's choice in the environment, a stand-in MiniLM installed, limit 6."""
    monkeypatch.delenv("VAULTMEM_EMBEDDER", raising=False)
    model = StandInMiniLM()
    source = ModelSource("stand-in", folder=tmp_path)
    monkeypatch.setattr(encoder, "find_minilm", lambda: source)
    monkeypatch.setattr(encoder, "minilm", lambda: model)
    monkeypatch.setattr(embed_choice, "AUTO_LIMIT", 6)
    return model


def notes(count: int, start: int = 0) -> dict[str, str | bytes]:
    """`count` notes of one section each."""
    return {f"n{i}.md": f"note {i} about heat pumps and tariffs\n" for i in range(start, count)}


def add(vault: Vault, files: dict[str, str | bytes]) -> None:
    for rel, text in files.items():
        assert isinstance(text, str)
        (vault.root / rel).write_text(text, encoding="utf-8")


def held(vault: Vault) -> tuple[str | None, str | None, str | None]:
    s = vault.stats()
    return s.embed_model, s.embed_by, s.embed_reason


def test_a_small_vault_gets_minilm_and_keeps_the_choice_in_the_index(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = make_vault(notes(3))
    report = vault.reindex()
    assert report.embeddings.model == MINILM and report.embeddings.notice is None
    assert minilm.embedded == 3
    model, by, reason = held(vault)
    assert (model, by) == (MINILM, "auto")
    assert reason is not None and "3 sections, at most 6" in reason
    assert vault.search("heat pumps").hits  # searched with the same model
    # a new process reads the same choice from the index
    fresh = Vault(vault.root)
    assert fresh.embedder().name == MINILM


def test_a_vault_past_the_limit_gets_wordllama(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = make_vault(notes(7))
    assert vault.reindex().embeddings.model == WORDLLAMA
    assert minilm.embedded == 0
    model, by, reason = held(vault)
    assert (model, by) == (WORDLLAMA, "auto")
    assert reason is not None and "7 sections, over the 6" in reason


def test_growing_past_the_limit_switches_once_and_shrinking_does_not_switch_back(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = make_vault(notes(6))
    assert vault.reindex().embeddings.model == MINILM  # 6 sections: at the limit
    add(vault, notes(8, start=6))
    grown = vault.reindex()
    assert grown.embeddings.model == WORDLLAMA
    assert grown.embeddings.embedded == 8  # every section made again by the new model
    assert grown.embeddings.notice is not None
    assert "grown past 6 sections (8)" in grown.embeddings.notice
    assert vault.embedder().name == WORDLLAMA  # this process searches with it too
    assert store.vector_count(vault.conn) == 8
    assert vault.search("heat pumps", mode="semantic").hits
    # the next reindex says nothing more
    add(vault, {"n8.md": "one more note\n"})
    assert vault.reindex().embeddings.notice is None
    # back under the limit: wordllama stays (no flip at every reindex near the limit)
    for i in range(2, 9):
        (vault.root / f"n{i}.md").unlink()
    quiet = vault.reindex()
    assert quiet.embeddings.notice is None
    assert held(vault)[:2] == (WORDLLAMA, "auto")
    assert Vault(vault.root).embedder().name == WORDLLAMA


def test_a_full_reindex_keeps_the_choice(minilm: StandInMiniLM, make_vault: MakeVault) -> None:
    vault = make_vault(notes(7))
    vault.reindex()
    for i in range(2, 7):
        (vault.root / f"n{i}.md").unlink()
    report = vault.reindex(full=True)  # 2 sections now, but the choice was wordllama's
    assert report.embeddings.model == WORDLLAMA and report.embeddings.notice is None
    assert held(vault)[:2] == (WORDLLAMA, "auto")


def test_reindex_embeddings_chooses_again(minilm: StandInMiniLM, make_vault: MakeVault) -> None:
    vault = make_vault(notes(7))
    vault.reindex()
    for i in range(2, 7):
        (vault.root / f"n{i}.md").unlink()
    vault.reindex()
    report = vault.reindex(redo_embeddings=True)
    assert report.embeddings.model == MINILM
    assert held(vault)[:2] == (MINILM, "auto")


def test_an_explicit_embedder_always_wins_and_auto_keeps_it_after(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = make_vault(notes(9))  # past the limit: auto would take wordllama
    vault.embedder_spec = "minilm"
    assert vault.reindex().embeddings.model == MINILM
    model, by, reason = held(vault)
    assert (model, by) == (MINILM, "you")
    assert reason is not None and "--embedder" in reason
    # later, with no choice named, auto keeps what the index was built with
    later = Vault(vault.root)
    report = later.reindex()
    assert report.embeddings.model == MINILM and report.embeddings.notice is None
    assert later.embedder().name == MINILM
    assert held(later)[1] == "auto" and "built with" in (held(later)[2] or "")


def test_an_explicit_choice_from_the_environment_or_config_wins(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(notes(2))  # auto would take MiniLM
    monkeypatch.setenv("VAULTMEM_EMBEDDER", "wordllama")
    assert vault.reindex().embeddings.model == WORDLLAMA
    assert held(vault)[1] == "you"
    monkeypatch.delenv("VAULTMEM_EMBEDDER")
    (vault.root / ".vaultmem").mkdir(exist_ok=True)
    (vault.root / ".vaultmem" / "config.toml").write_text('embedder = "fake:16"\n')
    configured = Vault(vault.root)
    report = configured.reindex(redo_embeddings=True)
    assert report.embeddings.model == "fake:16"
    assert held(configured)[:2] == ("fake:16", "you")


def test_without_the_minilm_package_auto_uses_wordllama_and_says_so(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(encoder, "find_minilm", lambda: None)
    vault = make_vault(notes(3))
    report = vault.reindex()  # no crash
    assert report.embeddings.model == WORDLLAMA
    assert report.embeddings.notice is not None
    assert "pip install 'vaultmem[minilm]'" in report.embeddings.notice
    assert held(vault)[:2] == (WORDLLAMA, "auto")
    assert vault.search("heat pumps").hits
    assert vault.reindex().embeddings.notice is None  # said once
    # installed later: the small vault moves to MiniLM at its next reindex, once
    monkeypatch.setattr(encoder, "find_minilm", lambda: ModelSource("stand-in"))
    moved = Vault(vault.root).reindex()
    assert moved.embeddings.model == MINILM
    assert moved.embeddings.notice is not None and "installed now" in moved.embeddings.notice


def test_a_damaged_record_is_ignored(minilm: StandInMiniLM, make_vault: MakeVault) -> None:
    vault = make_vault(notes(2))
    vault.reindex()
    for bad in ("{", "[]", '{"model": 1}', json.dumps({"model": MINILM, "by": "x", "why": "y"})):
        with store.transaction(vault.conn):
            store.set_meta(vault.conn, embed_choice.META_KEY, bad)
        assert embed_choice.recorded(vault.conn) is None
        assert Vault(vault.root).reindex().embeddings.model == MINILM  # kept, no crash


def test_stats_say_which_model_and_why(minilm: StandInMiniLM, make_vault: MakeVault) -> None:
    vault = make_vault(notes(2))
    runner = CliRunner()
    assert runner.invoke(cli, ["--vault", str(vault.root), "reindex"]).exit_code == 0
    shown = runner.invoke(cli, ["--vault", str(vault.root), "stats"])
    assert shown.exit_code == 0, shown.output
    assert re.search(r"vectors\s+2 \(minilm:all-MiniLM-L6-v2\)", shown.output)
    assert re.search(
        r"meaning model\s+chosen automatically: the vault had 2 sections", shown.output
    )
    data = json.loads(runner.invoke(cli, ["--vault", str(vault.root), "stats", "--json"]).output)
    assert data["embed_model"] == MINILM
    assert data["embed_chosen_by"] == "auto"
    assert "at most 6" in data["embed_reason"]


def test_the_embedding_progress_shows_before_the_first_batch_and_within_batches(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed_choice, "AUTO_LIMIT", 100)
    monkeypatch.setattr(MiniLMEmbedder, "batch_size", 2)
    vault = make_vault(notes(5))
    seen: list[tuple[int, int]] = []

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "embed":
            seen.append((done, total))

    vault.reindex(progress=progress)
    assert seen == [(0, 5), (2, 5), (4, 5), (5, 5), (5, 5)]


@needs_minilm
def test_auto_with_the_real_package_indexes_a_small_vault_with_minilm(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VAULTMEM_EMBEDDER", raising=False)
    vault = make_vault({"a.md": "# Heat pumps\nsizing a heat pump\n", "b.md": "# Bread\nrye\n"})
    assert vault.reindex().embeddings.model == MINILM
    hits = vault.search("how big should the heat pump be", mode="semantic").hits
    assert hits[0].path == "a.md"
