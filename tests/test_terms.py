"""OR queries ranked from cached per-word bm25 terms (store/terms.py): the same rows, order
and scores as SQLite's own query to the last bit, and never an answer from an index that
has changed since the terms were read."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import pytest

from tests.conftest import MakeVault
from vaultmem import edit, search, store
from vaultmem.store import terms
from vaultmem.vault import Vault

pytestmark = pytest.mark.skipif(
    not terms.enabled(), reason="cached bm25 terms are used on x86-64 SQLite builds only"
)

WORDS = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda",
    "sigma", "omega", "tau", "rho", "phi", "psi", "chi",
]  # fmt: skip


@pytest.fixture(autouse=True)
def fresh_terms(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no cached terms, and the cache answers itself: no answer is
    checked against SQLite's and quietly replaced by it (the check is tested on its own)."""
    terms.clear()
    monkeypatch.setattr(terms, "CHECKED", 0)
    yield
    terms.clear()


def _vault(make_vault: MakeVault) -> Vault:
    """Notes of random words in several sections and columns, plus five notes alike but for
    their names (their bm25 ties), and words held in titles, headings, tags and paths."""
    rng = random.Random(7)
    files: dict[str, str] = {}
    for n in range(40):
        sections = []
        for s in range(rng.randint(1, 4)):
            body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 60)))
            sections.append(f"## {rng.choice(WORDS)} part {s}\n\n{body}\n")
        tags = f"---\ntags: [{rng.choice(WORDS)}]\n---\n" if n % 3 == 0 else ""
        folder = rng.choice(["", "rho/", "notes/phi/"])
        files[f"{folder}{WORDS[n % len(WORDS)]} {n}.md"] = tags + "\n".join(sections)
    for n in range(5):
        files[f"twin{n}.md"] = "alpha beta alpha zeta\n"
    vault = make_vault(files)
    vault.reindex(embed=False)
    return vault


def _or_queries() -> list[str]:
    rng = random.Random(11)
    queries = [" OR ".join(f'"{w}"' for w in pair) for pair in itertools.combinations(WORDS, 2)]
    for size in (3, 4, 6):
        for _ in range(15):
            queries.append(" OR ".join(f'"{w}"' for w in rng.sample(WORDS, size)))
    queries += ['"alpha" OR "zeta"', '"zeta" OR "alpha"', '"twin0" OR "twin1" OR "md"']
    queries += ['"alpha" OR "nowhere"', '"nowhere" OR "nothing"']
    # AND queries (a row must hold every word: the same sum of terms) and one word alone
    queries += [q.replace(" OR ", " AND ") for q in queries[:60]]
    queries += [f'"{w}"' for w in WORDS] + ['"twin2"', '"nowhere"', '"alpha" AND "nowhere"']
    return queries


def _plain(conn: store.Connection, match: str, limit: int) -> list[store.ChunkMatch]:
    return store.keyword_chunks(conn, match, limit)


def test_or_queries_from_cached_terms_are_sqlites_to_the_bit(make_vault: MakeVault) -> None:
    vault = _vault(make_vault)
    conn = vault.conn
    tied_at_the_cut = 0
    for match in _or_queries():
        for limit in (1, 3, 7, 100):
            plain = _plain(conn, match, limit)
            cached = store.keyword_chunks(conn, match, limit, cached=True)
            assert cached == plain, (match, limit)  # rows, order and every score's bits
            assert [m.bm25.hex() for m in cached] == [m.bm25.hex() for m in plain]
            assert store.keyword_notes(conn, match, limit, cached=True) == store.keyword_notes(
                conn, match, limit
            )
            longer = _plain(conn, match, limit + 1)
            if len(longer) > limit and longer[limit].bm25 == longer[limit - 1].bm25:
                tied_at_the_cut += 1
    assert tied_at_the_cut > 0  # ties at the cut were met, and kept in SQLite's order
    assert terms.cached_rows() > 0  # and the cache answered, not SQLite
    assert not terms._broken


def test_only_queries_of_quoted_words_all_joined_alike_are_answered(
    make_vault: MakeVault,
) -> None:
    conn = _vault(make_vault).conn
    bm25 = store.text.BM25
    for match in ['"alpha" OR "beta"', '"alpha"', '"alpha" AND "beta"']:
        assert terms.ranked(conn, "chunks_fts", bm25, match, 10)
    for match in [
        "alpha OR beta",
        '"alpha" OR beta',
        '"alpha" AND "beta" OR "zeta"',
        '"alpha" NOT "beta"',
        'title : "alpha"',
        "NEAR(alpha beta)",
        '"alpha" "beta"',
        "",
    ]:
        assert terms.ranked(conn, "chunks_fts", bm25, match, 10) is None
    assert terms.ranked(conn, "chunks_fts", bm25, '"alpha" OR "beta"', 0) is None


def test_an_edit_through_apply_is_never_answered_from_old_terms(make_vault: MakeVault) -> None:
    vault = _vault(make_vault)
    match = '"alpha" OR "quokka"'
    before = store.keyword_chunks(vault.conn, match, 100, cached=True)
    assert "twin0.md" in {m.path for m in before}
    source = vault.read_for_edit("twin0.md")
    vault.apply(edit.plan_edit(source, edit.replace_line(source.lines, 1, "quokka quokka")))
    after = store.keyword_chunks(vault.conn, match, 100, cached=True)
    assert after == _plain(vault.conn, match, 100)
    assert after != before
    assert after[0].path == "twin0.md"  # the only note holding the new word, twice
    # a new note, too
    vault.apply(edit.plan_new_note("new.md", "quokka alpha quokka alpha quokka\n"))
    again = store.keyword_chunks(vault.conn, match, 100, cached=True)
    assert again == _plain(vault.conn, match, 100)
    assert "new.md" in {m.path for m in again}
    notes = store.keyword_notes(vault.conn, match, 100, cached=True)
    assert notes == store.keyword_notes(vault.conn, match, 100)
    assert "new.md" in dict(notes)


def test_a_reindex_is_never_answered_from_old_terms(make_vault: MakeVault) -> None:
    vault = _vault(make_vault)
    match = '"beta" OR "zeta"'
    before = store.keyword_chunks(vault.conn, match, 100, cached=True)
    (vault.root / "twin3.md").write_text("zeta zeta zeta beta\n", encoding="utf-8")
    (vault.root / "twin4.md").unlink()
    vault.reindex(embed=False)
    after = store.keyword_chunks(vault.conn, match, 100, cached=True)
    assert after == _plain(vault.conn, match, 100)
    assert after != before
    assert "twin4.md" not in {m.path for m in after}
    # and a full reindex (a new index in place: the counters start again)
    vault.reindex(full=True, embed=False)
    assert store.keyword_chunks(vault.conn, match, 100, cached=True) == _plain(
        vault.conn, match, 100
    )


def test_a_text_change_without_a_generation_bump_is_never_answered_from_old_terms(
    make_vault: MakeVault,
) -> None:
    """Another process mid-reindex: its sections' text committed, its generation bump not
    yet. The FTS5 table's structure record changes with the text, and the terms with it."""
    vault = _vault(make_vault)
    match = '"gamma" OR "kappa"'
    before = store.keyword_chunks(vault.conn, match, 100, cached=True)
    generation = store.generation(vault.conn)
    other = store.connect(vault.index_path)
    try:
        with store.transaction(other):
            first = before[0].id
            other.execute("DELETE FROM chunks_fts WHERE rowid = ?", (first,))
    finally:
        other.close()
    assert store.generation(vault.conn) == generation
    after = store.keyword_chunks(vault.conn, match, 100, cached=True)
    assert after == _plain(vault.conn, match, 100)
    assert first not in {m.id for m in after}


def test_the_cache_stays_within_its_bound(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(make_vault)
    monkeypatch.setattr(terms, "TERM_ROWS", 30)
    for match in _or_queries()[:40]:
        assert store.keyword_chunks(vault.conn, match, 10, cached=True) == _plain(
            vault.conn, match, 10
        )
        assert terms.cached_rows() <= 30


def test_an_answer_unlike_sqlites_is_caught_and_sqlite_answers_from_then_on(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build of SQLite that adds the terms otherwise (a fused multiply-add) is caught by
    the first answers' check, and the table is asked of SQLite from then on."""
    vault = _vault(make_vault)
    monkeypatch.setattr(terms, "CHECKED", 3)
    real = terms._top

    def off_by_an_ulp(lists, limit, every):  # type: ignore[no-untyped-def]
        return [(rowid, rank * (1 + 2**-52)) for rowid, rank in real(lists, limit, every)]

    monkeypatch.setattr(terms, "_top", off_by_an_ulp)
    match = '"alpha" OR "beta"'
    assert store.keyword_chunks(vault.conn, match, 10, cached=True) == _plain(vault.conn, match, 10)
    assert "chunks_fts" in terms._broken
    assert terms.ranked(vault.conn, "chunks_fts", store.text.BM25, match, 10) is None


def test_warm_search_ranks_alike_with_and_without_cached_terms(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Search in a warm process (the vectors in memory) ranks its OR queries from the terms;
    every hit is the same as with SQLite ranking them, in every mode."""
    vault = _vault(make_vault)
    vault.reindex()
    vault.warm(background=False)
    texts = ["alpha zeta", "gamma quokka", "beta kappa sigma", "twin alpha", "rho phi tau"]
    for mode in search.MODES:
        cached = [vault.search(t, 10, mode=mode).hits for t in texts]
        assert terms.cached_rows() > 0 or mode == "semantic"
        with monkeypatch.context() as m:
            m.setattr(terms, "enabled", lambda: False)
            plain = [vault.search(t, 10, mode=mode).hits for t in texts]
        assert cached == plain
        assert any(cached)
