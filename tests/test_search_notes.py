"""Issue 13 §2 end to end: a note's names and its whole text (with its properties) are indexed
and count in hybrid search; the whole-note index follows edits and deletions."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tests.conftest import MakeVault
from vaultmem import store
from vaultmem.model import Heading, ParsedNote
from vaultmem.store.text import other_names, property_text


def _note(path: str, **kw: object) -> ParsedNote:
    return ParsedNote(path=path, title=path.rsplit("/", 1)[-1].removesuffix(".md"), **kw)  # type: ignore[arg-type]


def test_other_names_are_h1_front_matter_title_and_a_folder_notes_folder() -> None:
    note = _note(
        "web/api/fetch_api/index.md",
        headings=(Heading(1, "Using  Fetch", 5, 9),),
        frontmatter={"title": "Fetch API"},
    )
    # the folder's name ("fetch api") is the front matter title again, case aside: given once
    assert other_names(note) == ("Using Fetch", "Fetch API")
    assert other_names(_note("a/b_c/README.md")) == ("b c",)
    # an H1 that is the title, or a later H1, or an alias adds nothing
    assert other_names(_note("Daily notes.md", headings=(Heading(1, "daily notes", 1, 2),))) == ()
    assert (
        other_names(_note("x.md", headings=(Heading(2, "Intro", 1, 2), Heading(1, "Late", 3, 4))))
        == ()
    )
    assert other_names(_note("x.md", aliases=("Ex",), frontmatter={"title": "ex"})) == ()
    assert other_names(_note("x.md", frontmatter={"title": ["not", "a", "name"]})) == ()


def test_property_text_is_values_without_keys_or_link_brackets() -> None:
    text = property_text(
        {"director": "[[Ridley Scott]]", "genre": ["[[Sci-fi]]", None], "seen": True, "n": {"k": 3}}
    )
    assert text.split("\n") == ["Ridley Scott", "Sci-fi", "3"]
    assert "director" not in text


NOTES: dict[str, str | bytes] = {
    # the answer: its words are spread over its sections, none holds both
    "films/alien.md": (
        "---\ndirector: '[[Ridley Scott]]'\ngenre: science fiction\n---\n"
        "# Alien\n\n## Plot\nA crew wakes on a ship.\n\n## Cast\nSigourney Weaver.\n"
    ),
    "people/neighbour.md": "# Neighbour\nRidley from next door, who likes gardening.\n",
    "books/shelf.md": "# Shelf\nScience books on the left.\n",
    "web/css/index.md": "---\ntitle: Cascading Style Sheets\n---\nStyle rules for pages.\n",
    "web/html/index.md": "---\ntitle: HTML\n---\nStyle sheets are linked from the head.\n",
    "notes/sheets.md": "# Sheets\nBed sheets in the style of a hotel.\n",
}


def test_whole_note_and_properties_lift_a_note_whose_words_are_spread(
    make_vault: MakeVault,
) -> None:
    from dataclasses import replace

    from vaultmem import ranking, search

    vault = make_vault(NOTES)
    vault.reindex()
    text = "ridley scott science fiction film"
    hits = vault.search(text).hits
    paths = [h.path for h in hits]
    # the best whole note (every word, two of them only in its properties) gets the full signal
    assert dict(hits[paths.index("films/alien.md")].explain)["note"] == 0.6
    before = replace(ranking.Weights(), title=0.0, note=0.0)
    plain = [
        h.path
        for h in search.run(vault.conn, search.Query(text, weights=before), vault.embedder).hits
    ]
    assert paths.index("films/alien.md") < plain.index("films/alien.md")


def test_a_folder_notes_front_matter_title_names_it(make_vault: MakeVault) -> None:
    from dataclasses import replace

    from vaultmem import ranking, search

    vault = make_vault(NOTES)
    vault.reindex()
    text = "cascading style sheets"
    hits = vault.search(text).hits
    paths = [h.path for h in hits]
    explain = dict(hits[paths.index("web/css/index.md")].explain)
    assert explain["title"] == 0.5 and explain["note"] == 0.6
    before = replace(ranking.Weights(), title=0.0, note=0.0)
    plain = [
        h.path
        for h in search.run(vault.conn, search.Query(text, weights=before), vault.embedder).hits
    ]
    assert paths.index("web/css/index.md") < plain.index("web/css/index.md")


def test_the_whole_note_index_follows_edits_and_deletions(make_vault: MakeVault) -> None:
    vault = make_vault(NOTES)
    vault.reindex()

    def notes_for(word: str) -> set[str]:
        return {p for p, _ in store.keyword_notes(vault.conn, f'"{word}"', 10)}

    assert notes_for("weaver") == {"films/alien.md"}
    (vault.root / "films/alien.md").write_text("# Alien\nNo cast list any more.\n")
    vault.reindex()
    assert notes_for("weaver") == set()
    assert notes_for("cast") == {"films/alien.md"}
    (vault.root / "films/alien.md").unlink()
    vault.reindex()
    assert notes_for("cast") == set()
    rows = vault.conn.execute("SELECT count(*) FROM notes_fts").fetchone()[0]
    assert rows == len(NOTES) - 1


def test_snippets_are_plain_text() -> None:
    from vaultmem.search import HIGHLIGHT_END as E
    from vaultmem.search import HIGHLIGHT_START as S
    from vaultmem.search import plain_text

    raw = (
        f"#### {S}Daily{E} notes\nOpen [[Daily notes|the daily note]] ![[shot.png]]&nbsp;now\n"
        "| key | value |\n|---|:--:|\n| **bold** | [a link](https://x.org) |\n"
        f"- [ ] a {S}task{E} ^block-1\n> [!note] Careful\n> `code` %%hidden%%\n"
        "tail of a link]] cut [[start of"
    )
    out = plain_text(raw)
    assert out == (
        f"{S}Daily{E} notes Open the daily note now key value bold a link a {S}task{E} "
        "Careful code tail of a link cut start of"
    )
    for syntax in ("#", "|", "![[", "[[", "]]", "&nbsp;", "**", "`", "^block", "%%", "[!"):
        assert syntax not in out
    assert plain_text("[[Note#Part]] and snake_case") == "Note › Part and snake_case"


def test_hits_carry_plain_snippets_and_scores_that_add_up(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "a.md": "## Setup\n#### Wiring the **heat pump**\nSee ![[diagram.png]] and [[b|B]]"
            "&nbsp;first.\n",
            "b.md": "# B\n| part | heat |\n|---|---|\n| pump | yes |\n",
            "c.md": "heat heat heat heat heat, a pump in passing\n",
            # no section holds both words: found by the OR query after the AND one, and
            # scoring above the long one that holds both
            "d.md": "pump pump pump\n",
            "e.md": "A long note. " * 60 + "It mentions heat and a pump once.\n",
        }
    )
    vault.reindex()
    for mode in ("hybrid", "keyword", "semantic"):
        hits = vault.search("heat pump", mode=mode).hits  # type: ignore[arg-type]
        assert hits, mode
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True), mode
        for h in hits:
            assert abs(sum(v for _, v in h.explain) - h.score) < 1e-9, (mode, h)
            for syntax in ("####", "![[", "&nbsp;", "|", "**"):
                assert syntax not in h.snippet, (mode, h.snippet)


NAMED: dict[str, str | bytes] = {
    # the note the question names says its name once; long pages say the word over and over
    "glossary/aria/index.md": "---\ntitle: ARIA\n---\nAccessible Rich Internet Applications.\n",
    **{
        f"roles/r{i}.md": f"# Role {i}\n" + "aria attributes and aria states. " * 30 + "\n"
        for i in range(30)
    },
}


def test_notes_the_query_names_join_the_candidates_when_asked(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem import search

    vault = make_vault(NAMED)
    vault.reindex()
    words = ["aria"]
    assert store.notes_named_by(vault.conn, words, 5)[0] == "glossary/aria/index.md"
    monkeypatch.setattr(search, "NOTES_SCORED", 5)  # the whole-note query misses it…
    monkeypatch.setattr(search, "NOTE_CANDIDATES", 5)
    monkeypatch.setattr(search, "CANDIDATES", 5)  # …and so do the sections' and meaning's

    def found() -> dict[str, dict[str, float]]:
        query = search.Query("aria", limit=40, mode="keyword", weights=search.ranking.Weights())
        hits = search.run(vault.conn, query, vault.embedder).hits
        return {h.path: dict(h.explain) for h in hits}

    assert "glossary/aria/index.md" not in found()
    monkeypatch.setattr(search, "NAMED_CANDIDATES", 10)
    assert found()["glossary/aria/index.md"]["title"] == 0.5  # named outright
    monkeypatch.setattr(search, "NAMED_FLOOR", 1.01)  # no name is that good a match
    assert "glossary/aria/index.md" not in found()


def test_a_rerank_step_orders_the_first_stages_best_notes(make_vault: MakeVault) -> None:
    from vaultmem import search
    from vaultmem.rerank import Reranker

    vault = make_vault(NOTES)
    vault.reindex()
    seen: list[tuple[str, list[str]]] = []

    class Backwards(Reranker):
        def __call__(
            self, conn: store.Connection, query: str, ranked: Sequence[search.ranking.Ranked]
        ) -> list[search.ranking.Ranked]:
            seen.append((query, [r.path for r in ranked]))
            return list(ranked)[::-1]

    backwards = Backwards()
    query = search.Query("sheets style", limit=2)
    plain = search.run(vault.conn, search.Query("sheets style", limit=50), vault.embedder)
    reranked = search.run(vault.conn, query, vault.embedder, reranker=backwards)
    ((text, handed),) = seen
    assert text == "sheets style"
    depth = backwards.settings.depth
    assert handed == [h.path for h in plain.hits][:depth]  # the first stage
    assert [h.path for h in reranked.hits] == handed[::-1][:2]
    assert reranked.hits[0].snippet  # hits are made after the rerank: snippets for its order
