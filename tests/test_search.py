"""Search end to end on real indexes: modes, meaning, dates, filters, explain, degraded paths."""

from __future__ import annotations

import datetime as dt
import math
import os
from typing import Any

import pytest

from tests.conftest import MakeVault
from vaultmem import search
from vaultmem.errors import ModelServerDown, UsageError
from vaultmem.ranking import Weights
from vaultmem.search import Mode, Query
from vaultmem.search import run as search_run
from vaultmem.vault import Vault

NOW = dt.datetime(2026, 11, 30, 9, tzinfo=dt.UTC)

NOTES: dict[str, str | bytes] = {
    "heating.md": "# Heat pump\nThe compressor moves warmth from outside air into the flat.\n",
    "baking.md": "# Sourdough\nFeed the starter, fold the dough, bake at 250 degrees.\n",
    "daily/2026-11-29.md": "---\ndate: 2026-11-29\n---\nLong run by the canal, 14 km.\n",
    "daily/2026-11-20.md": "Long run in the park, 10 km. #health/running\n",
    "work/plan.md": "---\ntags: [project]\n---\nThe roadmap for the heat pump gateway.\n",
    "old.md": "---\ndecay: session\ndate: 2026-11-01\n---\nA heat pump scratch note.\n",
}


@pytest.fixture
def vault(make_vault: MakeVault) -> Vault:
    vault = make_vault(NOTES)
    vault.reindex()
    return vault


def test_hybrid_is_the_default_and_explains_itself(vault: Vault) -> None:
    result = vault.search("heat pump", now=NOW)
    assert result.mode == "hybrid" and result.notices == ()
    paths = [h.path for h in result.hits]
    assert paths[0] in ("heating.md", "work/plan.md")
    assert "old.md" not in paths  # past its decay tier's lifetime: out of default search
    every = [h.path for h in vault.search("heat pump", now=NOW, include_expired=True).hits]
    assert every.index("old.md") > every.index("heating.md")  # asked for: there, pushed down
    signals = dict(result.hits[0].explain)
    assert signals["keyword"] > 0 and "vector" in signals


def test_keyword_mode_keeps_the_fast_path(vault: Vault) -> None:
    result = vault.search("sourdough", mode="keyword")
    assert [h.path for h in result.hits] == ["baking.md"]
    assert result.hits[0].header == "Sourdough"


def test_meaning_finds_a_paraphrase_without_shared_words(make_vault: MakeVault) -> None:
    vault = make_vault(NOTES)
    vault.embedder_spec = "wordllama"  # the real bundled model, offline
    vault.reindex()
    result = vault.search("bread recipe", mode="semantic")
    assert result.hits[0].path == "baking.md"
    assert "bread" not in NOTES["baking.md"]  # type: ignore[operator]


def test_dates_route_to_the_day(vault: Vault) -> None:
    result = vault.search("long run yesterday", now=NOW)
    assert result.route is not None and result.route.start == dt.date(2026, 11, 29)
    assert result.hits[0].path == "daily/2026-11-29.md"
    assert dict(result.hits[0].explain)["date"] > 0


def test_a_routed_date_is_still_searched_for_in_the_text(make_vault: MakeVault) -> None:
    """A note that says the date in its text (a changelog's "## May 2023"), not in its date,
    is found by the date's words: routing adds the date signal and takes no words away."""
    vault = make_vault(
        {
            "changelog.md": "# Changelog\n## June 2023\nRelease of sync, a release with more in"
            " this release.\n## May 2023\nRelease of search.\n",
            "plans.md": "# Plans\nA release of the editor, a release of themes: release soon.\n",
        }
    )
    vault.reindex()
    result = vault.search("release May 2023", now=NOW, mode="keyword")
    assert result.route is not None and result.route.start == dt.date(2023, 5, 1)
    assert result.hits[0].header.endswith("May 2023")
    hybrid = vault.search("what was released in May 2023", now=NOW)
    assert hybrid.hits[0].header.endswith("May 2023")


def test_filters(vault: Vault) -> None:
    assert {h.path for h in vault.search("run", tag="health", now=NOW).hits} == {
        "daily/2026-11-20.md"
    }
    assert {h.path for h in vault.search("heat pump", path="work/", now=NOW).hits} == {
        "work/plan.md"
    }
    since = vault.search("run", since=dt.date(2026, 11, 25), now=NOW)
    assert "daily/2026-11-20.md" not in {h.path for h in since.hits}


def test_without_vectors_hybrid_falls_back_and_semantic_refuses(make_vault: MakeVault) -> None:
    vault = make_vault(NOTES)
    vault.reindex(embed=False)
    result = vault.search("sourdough")
    assert result.mode == "keyword" and "no vectors" in result.notices[0]
    assert result.hits[0].path == "baking.md"
    with pytest.raises(UsageError, match="vaultmem reindex"):
        vault.search("sourdough", mode="semantic")


def test_switching_models_is_explained_then_redone(make_vault: MakeVault) -> None:
    vault = make_vault(NOTES)
    first = vault.reindex()
    assert first.embeddings.embedded == 6 and first.embeddings.model == "fake:32"
    vault.embedder_spec = "fake:16"
    vault._embedder = None
    second = vault.reindex()
    assert second.embeddings.notice and "reindex --embeddings" in second.embeddings.notice
    assert "reindex --embeddings" in vault.search("heat").notices[0]
    third = vault.reindex(redo_embeddings=True)
    assert third.embeddings.embedded == 6 and third.embeddings.model == "fake:16"
    assert vault.search("heat").notices == ()


def test_unchanged_text_is_never_embedded_twice(make_vault: MakeVault) -> None:
    vault = make_vault(NOTES)
    vault.reindex()
    (vault.root / "heating.md").rename(vault.root / "renamed.md")
    report = vault.reindex()
    assert (report.embeddings.embedded, report.embeddings.reused) == (0, 1)
    (vault.root / "baking.md").write_text("# Sourdough\nA new line entirely.\n")
    assert vault.reindex().embeddings.embedded == 1


def test_ollama_embeddings_and_hyde_end_to_end(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fake_model_server import FakeModelServer

    with FakeModelServer(dim=8) as server:
        monkeypatch.setenv("OLLAMA_URL", server.url)
        vault = make_vault(NOTES)
        vault.embedder_spec = "ollama:nomic-embed-text"
        vault.llm_spec = "ollama:llama3.2"
        report = vault.reindex()
        assert report.embeddings.model == "ollama:nomic-embed-text"
        assert report.embeddings.embedded == 6
        result = vault.search("flat warmth", hyde=True, now=NOW)
        assert result.notices == ()
        (generate,) = server.posts("/api/generate")
        assert "flat warmth" in generate["prompt"]
        embedded = [text for body in server.posts("/api/embed") for text in body["input"]]
        assert server.reply in embedded  # the passage was searched as a vector
    # the server is gone: hybrid search degrades to keywords and says so; semantic refuses
    degraded = vault.search("sourdough", hyde=True, now=NOW)
    assert degraded.hits[0].path == "baking.md"
    assert any("HyDE skipped" in n for n in degraded.notices)
    assert any("not reachable" in n and "keywords only" in n for n in degraded.notices)
    with pytest.raises(ModelServerDown, match="ollama serve"):
        vault.search("sourdough", mode="semantic")


def test_pseudo_relevance_feedback_reaches_notes_through_shared_words(
    make_vault: MakeVault,
) -> None:
    from vaultmem import search
    from vaultmem.ranking import Weights

    vault = make_vault(
        {
            "a.md": "The solar inverter tripped twice.",
            "b.md": "Inverter firmware update went fine.",
            "d.md": "Inverter warranty runs until 2030.",
        }
    )
    vault.reindex()

    def paths(feedback: float) -> set[str]:
        q = search.Query("solar firmware", mode="keyword", weights=Weights(feedback=feedback))
        return {h.path for h in search.run(vault.conn, q, vault.embedder).hits}

    assert paths(0.0) == {"a.md", "b.md"}  # no section holds both words
    assert paths(0.5) == {"a.md", "b.md", "d.md"}  # "inverter" is what the best ones share


def test_re_embedding_with_a_server_that_is_down_keeps_the_old_vectors(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fake_model_server import unused_url

    vault = make_vault(NOTES)
    vault.reindex()
    monkeypatch.setenv("OLLAMA_URL", unused_url())
    vault.embedder_spec = "ollama:nomic-embed-text"
    vault._embedder = None
    report = vault.reindex(redo_embeddings=True)
    assert report.embeddings.notice and "vectors kept" in report.embeddings.notice
    assert "ollama serve" in report.embeddings.notice
    assert vault.stats().vectors == 6 and vault.stats().embed_model == "fake:32"


# --------------------------------------------------------------------------- found by mutation
# (docs/TESTING.md, "search filters"): each filter at its edges, through the core


@pytest.fixture
def filtered(make_vault: MakeVault) -> Vault:
    vault = make_vault(
        {
            "work/a.md": "quince one [[home/c]] #Area/Work\n",
            "work/b.md": "---\ndate: 2026-03-01\n---\nquince two\n",
            # a `date` property outweighs a date in the path
            "daily/2026-03-09.md": "---\ndate: 2026-03-01\n---\nquince three\n",
            "daily/2026-03-10.md": "quince four\n",
            "home/c.md": "quince five #area\n",
            "home/d.md": "quince six\n",  # dated by its modification time only
            "home/e.md": "---\ndecay: session\ndate: 2026-03-01T00:00:00\n---\nquince seven\n",
            "home/f.md": "---\ndecay: session\n---\nquince eight\n",  # decays from its mtime
            "Xmas/list.md": "quince nine #Xmas\n",
        }
    )
    for name, when in [
        ("d.md", dt.datetime(2026, 3, 5, 0, 0, 1)),
        ("f.md", dt.datetime(2026, 3, 1)),
    ]:
        stamp = when.replace(tzinfo=dt.UTC).timestamp()  # a second into the day: in UTC
        os.utime(vault.root / "home" / name, (stamp, stamp))
    vault.reindex()
    return vault


def _found(vault: Vault, **filters: Any) -> set[str]:
    filters.setdefault("include_expired", True)  # home/e and home/f have expired by NOW
    return {h.path for h in vault.search("quince", mode="keyword", now=NOW, **filters).hits}


def test_the_tag_filter_ignores_case_and_a_leading_hash(filtered: Vault) -> None:
    assert _found(filtered, tag="#AREA") == {"work/a.md", "home/c.md"}
    assert _found(filtered, tag="area/work") == {"work/a.md"}
    assert _found(filtered, tag="work") == set()
    assert _found(filtered, tag="#xmas") == _found(filtered, tag="Xmas") == {"Xmas/list.md"}


def test_the_path_filter_takes_a_leading_slash(filtered: Vault) -> None:
    assert _found(filtered, path="/work") == {"work/a.md", "work/b.md"}
    assert _found(filtered, path="home/") == {"home/c.md", "home/d.md", "home/e.md", "home/f.md"}
    assert _found(filtered, path="Xmas") == {"Xmas/list.md"}
    assert _found(filtered, path="daily/2026-03-1") == {"daily/2026-03-10.md"}


def test_the_since_filter_by_property_then_path_then_modification_time(filtered: Vault) -> None:
    # by the note's own date (its `date` property, else a date in its path); undated notes,
    # however new their files, never pass (issue 14: a fresh copy of a vault is no different)
    assert _found(filtered, since=dt.date(2026, 3, 1)) == {
        "work/b.md", "daily/2026-03-09.md", "daily/2026-03-10.md", "home/e.md",
    }  # fmt: skip
    assert _found(filtered, since=dt.date(2026, 3, 2)) == {"daily/2026-03-10.md"}
    assert _found(filtered, since=dt.date(2026, 3, 10)) == {"daily/2026-03-10.md"}
    assert _found(filtered, since=dt.date(2026, 3, 11)) == set()
    # with `mtime`, by the file's modification time alone (home/d: 5 March, a second into the
    # day; home/f: 1 March; every other file: today)
    modified_today = {
        "work/a.md", "work/b.md", "daily/2026-03-09.md", "daily/2026-03-10.md", "home/c.md",
        "home/e.md", "Xmas/list.md",
    }  # fmt: skip
    assert _found(filtered, since=dt.date(2026, 3, 1), mtime=True) == modified_today | {
        "home/d.md", "home/f.md",
    }  # fmt: skip
    assert _found(filtered, since=dt.date(2026, 3, 2), mtime=True) == modified_today | {"home/d.md"}
    assert _found(filtered, since=dt.date(2026, 3, 5), mtime=True) == modified_today | {"home/d.md"}
    assert _found(filtered, since=dt.date(2026, 3, 6), mtime=True) == modified_today


def test_a_note_expires_at_the_end_of_its_lifetime(filtered: Vault) -> None:
    def expired(note: str, words: str, now: dt.datetime) -> bool:
        (hit,) = filtered.search(words, path=note, now=now, include_expired=True).hits
        return "expired" in dict(hit.explain)

    def hidden(note: str, words: str, now: dt.datetime) -> bool:
        for mode in ("hybrid", "keyword"):  # keyword mode's fast path too
            found = filtered.search(words, path=note, now=now, mode=mode).hits
            if note + ".md" in {h.path for h in found}:
                return False
        return True

    # home/e is dated; home/f has no date: its lifetime starts at its mtime
    for note, words in (("home/e", "quince seven"), ("home/f", "quince eight")):
        for check in (expired, hidden):
            assert check(note, words, dt.datetime(2026, 3, 2, tzinfo=dt.UTC))  # a session: 1 day
            assert not check(note, words, dt.datetime(2026, 3, 1, 23, 59, 59, tzinfo=dt.UTC))


def test_default_search_leaves_expired_notes_out_until_asked(filtered: Vault) -> None:
    """Issue 11 §6: notes past their decay tier's lifetime leave default search, in every mode
    (keyword mode's fast path included); `include_expired` brings them back."""
    for mode in ("hybrid", "keyword", "semantic"):
        shown = {h.path for h in filtered.search("quince", mode=mode, now=NOW, limit=20).hits}
        assert not shown & {"home/e.md", "home/f.md"}, mode
        every = filtered.search("quince", mode=mode, now=NOW, limit=20, include_expired=True)
        assert {"home/e.md", "home/f.md"} <= {h.path for h in every.hits}, mode


def test_a_search_counts_the_expired_notes_it_left_out_when_asked_to(filtered: Vault) -> None:
    """What `--include-expired` would add to the hits shown: counted in every mode, 0 when
    they are asked for, and not counted at all unless a front-end asks (the TUI searches
    at every key)."""
    for mode in ("hybrid", "keyword", "semantic"):
        result = filtered.search("quince", mode=mode, now=NOW, limit=20, count_expired=True)
        assert result.expired_hidden == 2, mode
        assert not {h.path for h in result.hits} & {"home/e.md", "home/f.md"}, mode
        plain = filtered.search("quince", mode=mode, now=NOW, limit=20)
        assert plain.expired_hidden == 0 and plain.hits == result.hits, mode
        every = filtered.search(
            "quince", mode=mode, now=NOW, limit=20, include_expired=True, count_expired=True
        )
        assert every.expired_hidden == 0, mode
    # only those the hits shown would have held: "quince seven" is e's alone
    assert filtered.search("seven", mode="keyword", now=NOW, count_expired=True).expired_hidden == 1
    assert filtered.search("nine", mode="keyword", now=NOW, count_expired=True).expired_hidden == 0
    # before they expire there is nothing to count
    early = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)
    assert filtered.search("quince", now=early, limit=20, count_expired=True).expired_hidden == 0


EXPIRED_AT_NOW = {"home/e.md", "home/f.md"}


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_the_count_is_what_include_expired_would_show(filtered: Vault, mode: Mode) -> None:
    """`expired_hidden` is how many expired notes the same search with `include_expired`
    would show: for queries that match them or not, one of them or both, at every limit
    (1: only the best note; past the number of notes that match)."""
    queries = ["quince", "seven", "quince seven", "quince eight", "eight nine", "nine", "zzz"]
    seen = set()
    for words in queries:
        for limit in (1, 2, 3, 5, 20):
            counted = filtered.search(words, limit=limit, mode=mode, now=NOW, count_expired=True)
            every = filtered.search(words, limit=limit, mode=mode, now=NOW, include_expired=True)
            shown = sum(1 for h in every.hits if h.path in EXPIRED_AT_NOW)
            assert counted.expired_hidden == shown, (words, limit)
            seen.add(shown)
    assert seen == {0, 1, 2}  # the cases cover none, one and both of them


def test_an_expired_note_that_matches_but_would_not_be_shown_is_not_counted(
    make_vault: MakeVault,
) -> None:
    """The count is of the hits the search would show, not of every expired note that holds
    the words: a weak match past the limit is not counted until the limit reaches it."""
    vault = make_vault(
        {
            "fresh/a.md": "# Quokka\nquokka quokka quokka, the quokka colony\n",
            "fresh/b.md": "# Quokka census\nquokka counts by island, quokka\n",
            "old.md": "---\ndecay: session\ndate: 2026-01-01\n---\n"
            + "filler words " * 80
            + "and once a quokka\n",
        }
    )
    vault.reindex()
    for mode in ("hybrid", "keyword"):
        for limit, hidden in ((1, 0), (2, 0), (3, 1), (10, 1)):
            result = vault.search("quokka", limit=limit, mode=mode, now=NOW, count_expired=True)
            assert result.expired_hidden == hidden, (mode, limit)
            assert "old.md" not in {h.path for h in result.hits}


def test_the_count_keeps_to_the_filters_and_leaves_personas_out(make_vault: MakeVault) -> None:
    """Only what `include_expired` alone would add: an expired note outside the path filter,
    or an expired persona note (personas stay out unless asked for), is not counted."""
    old = "---\ndecay: session\ndate: 2026-01-01\n"
    vault = make_vault(
        {
            "work/now.md": "walrus plans\n",
            "work/old.md": old + "---\nwalrus notes of January\n",
            "home/old.md": old + "---\nwalrus at the zoo\n",
            "people/pat.md": old + "type: persona\n---\nPat likes the walrus\n",
        }
    )
    vault.reindex()
    for mode in ("hybrid", "keyword"):

        def count(mode: Mode = mode, **filters: Any) -> int:
            found = vault.search("walrus", mode=mode, now=NOW, count_expired=True, **filters)
            return found.expired_hidden

        assert count() == 2, mode
        assert count(path="work/") == 1, mode
        assert count(personas=True) == 3, mode


def test_a_vault_without_expired_notes_counts_none(make_vault: MakeVault) -> None:
    vault = make_vault(NOTES | {"old.md": "A heat pump scratch note.\n"})  # no decay
    vault.reindex()
    for mode in ("hybrid", "keyword", "semantic"):
        result = vault.search("heat pump", mode=mode, now=NOW, count_expired=True)
        assert result.expired_hidden == 0 and "old.md" in {h.path for h in result.hits}


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_counting_expired_notes_asks_the_index_nothing_more(
    filtered: Vault, mode: Mode, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The count comes from what the search read anyway: with it, a search runs the very
    statements it runs without (the former count ran the whole search a second time)."""
    # the per-index caches of this test alone: those of a whole run's indexes are cleared
    # past a few indexes, which would make one search here read again what another did not
    for cache in ("_COUNTS", "_DECAYING", "_LINKED"):
        monkeypatch.setattr(search, cache, {})
    asked: list[str] = []
    filtered.conn.set_trace_callback(asked.append)
    try:
        for words in ("quince", "quince seven"):
            filtered.search(words, mode=mode, now=NOW)  # fills the per-index caches
            asked.clear()
            plain = filtered.search(words, mode=mode, now=NOW)
            without = list(asked)
            asked.clear()
            counted = filtered.search(words, mode=mode, now=NOW, count_expired=True)
            assert counted.expired_hidden > 0 and counted.hits == plain.hits
            assert any("MATCH" in sql for sql in without) or mode == "semantic"
            assert asked == without, words
    finally:
        filtered.conn.set_trace_callback(None)


def test_links_among_the_hits_count_both_ways(filtered: Vault) -> None:
    hits = filtered.search("quince", path="", now=NOW).hits
    graph = {h.path for h in hits if "graph" in dict(h.explain)}
    assert graph == {"work/a.md", "home/c.md"}  # a links to c: both are lifted


def test_the_date_property_and_the_modification_time_reach_the_ranking(filtered: Vault) -> None:
    dated = filtered.search("quince 2026-03-01", mode="keyword", now=NOW, include_expired=True).hits
    assert {h.path for h in dated if "date" in dict(h.explain)} == {
        "work/b.md", "daily/2026-03-09.md", "home/e.md",  # by property, not by path
    }  # fmt: skip
    weights = Weights(freshness=1.0, graph=0)
    query = Query("quince six", limit=1, mode="keyword", weights=weights, now=NOW)
    (hit,) = search_run(filtered.conn, query, None).hits
    age = (NOW - dt.datetime(2026, 3, 5, 0, 0, 1, tzinfo=dt.UTC)).total_seconds() / 86400
    assert hit.path == "home/d.md"
    assert dict(hit.explain)["freshness"] == pytest.approx(math.exp(-age / 30))


# --------------------------------------------------------------------------- common words


COMMON: dict[str, str | bytes] = {
    **{f"web/page{i}.md": f"# Page {i}\nA web page about topic{i}.\n" for i in range(8)},
    "web/kiln.md": "# Kiln\nFiring clay on the web of a kiln shelf.\n",
    "pots.md": "# Pots\nGlaze the pots before the kiln.\n",
}


def test_words_in_most_sections_leave_the_or_query_but_not_the_ranking(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem import search, store

    vault = make_vault(COMMON)
    vault.reindex()
    sections = store.section_count(vault.conn)
    assert store.sections_holding(vault.conn, "web") > sections / 2
    text = "web kiln glaze"
    before = vault.search(text, mode="keyword").hits
    hybrid_before = vault.search(text).hits
    monkeypatch.setattr(search, "COMMON_CHECKED_FROM", 0)
    assert search.common_words(vault.conn, ["web", "kiln", "glaze"]) == {"web"}
    assert store.notes_holding(vault.conn, "web") == 9 and store.note_text_count(vault.conn) == 10
    assert search.common_words(vault.conn, ["web", "kiln", "glaze"], "notes") == {"web"}
    assert search.common_words(vault.conn, ["page", "kiln"], "notes") == {"page"}
    assert search.fts_queries(text, {"web"}) == [
        '"web" AND "kiln" AND "glaze"',
        '"kiln" OR "glaze"',
    ]
    after = vault.search(text, mode="keyword").hits
    # bm25 gave "web" no weight: the same notes in the same order, scores equal to a hair
    assert [h.path for h in after] == [h.path for h in before if h.score > 1e-3]
    for a, b in zip(after, before, strict=False):
        assert a.score == pytest.approx(b.score, abs=1e-3)
    assert [h.path for h in vault.search(text).hits][:2] == [h.path for h in hybrid_before][:2]
    # a query whose only other word matches nothing still finds the common word's notes
    assert vault.search("web zzzz", mode="keyword").hits
    assert vault.search("web zzzz").hits
    # one word, or an index too small to count in: nothing is left out
    assert search.common_words(vault.conn, ["web"]) == frozenset()
    monkeypatch.setattr(search, "COMMON_CHECKED_FROM", sections + 1)
    assert search.common_words(vault.conn, ["web", "kiln"]) == frozenset()
