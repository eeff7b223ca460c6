"""A note of one section: its keyword share is the better of its section's and its whole note's
(ranking.Weights.one_section; docs/BENCHMARKS.md, issue 13 round 6)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.conftest import MakeVault
from vaultmem import ranking, search, store
from vaultmem.ranking import Candidate, NoteFacts, Weights, rank

PLAIN = Weights(heading=0, path=0, graph=0, vector=0.0, title=0.0, authority=0.0, note=0.6)


def _cand(
    i: int, path: str, keyword: float | None = None, vector: float | None = None
) -> Candidate:
    return Candidate(i, path, path.removesuffix(".md"), "", 1, 2, keyword, vector)


def _parts(found: list[ranking.Ranked]) -> dict[str, dict[str, float]]:
    return {r.path: dict(r.parts) for r in found}


def test_a_one_section_note_keeps_the_better_of_its_two_keyword_shares() -> None:
    chunks = [
        _cand(1, "top.md", 10.0),
        _cand(2, "one.md", 5.0),  # one section, its whole note scores better: 0.9
        _cand(3, "many.md", 5.0),  # three sections: the whole note is the note signal's only
        _cand(4, "many.md", 2.0),
        _cand(5, "lower.md", 8.0),  # one section, its whole note scores worse: 0.3
        _cand(6, "meaning.md", vector=0.9),  # one section, found by meaning only
    ]
    facts = {
        "one.md": NoteFacts(one_section=True),
        "many.md": NoteFacts(),
        "lower.md": NoteFacts(one_section=True),
        "meaning.md": NoteFacts(one_section=True),
    }
    notes = {"top.md": 0.5, "one.md": 0.9, "many.md": 0.9, "lower.md": 0.3, "meaning.md": 1.0}
    found = rank(chunks, facts, {"x"}, PLAIN, note_scores=notes)
    parts = _parts(found)
    assert parts["one.md"]["keyword"] == pytest.approx(0.9)
    assert parts["many.md"]["keyword"] == pytest.approx(0.5)
    assert parts["lower.md"]["keyword"] == pytest.approx(0.8)
    assert parts["top.md"]["keyword"] == pytest.approx(1.0)  # sections not known: as before
    assert "keyword" not in parts["meaning.md"]  # no keyword match: nothing to take the max of
    assert parts["one.md"]["note"] == pytest.approx(0.6 * 0.9)  # the note signal unchanged
    # one.md (0.9 + 0.54) now passes top.md (1.0 + 0.3); many.md, as tied before, stays below
    assert [r.path for r in found][:3] == ["one.md", "top.md", "many.md"]
    for r in found:  # --explain adds up to the score shown
        assert sum(v for _, v in r.parts) == pytest.approx(r.score)

    off = _parts(rank(chunks, facts, {"x"}, replace(PLAIN, one_section=False), note_scores=notes))
    assert off["one.md"]["keyword"] == pytest.approx(0.5)
    assert off["lower.md"]["keyword"] == pytest.approx(0.8)
    # no whole-note scores (keyword mode, the note weight off): nothing changes
    assert _parts(rank(chunks, facts, {"x"}, PLAIN))["one.md"]["keyword"] == pytest.approx(0.5)
    # reciprocal-rank fusion ranks places, not shares: left alone
    rrf = _parts(rank(chunks, facts, {"x"}, replace(PLAIN, fusion="rrf"), note_scores=notes))
    rrf_off = _parts(
        rank(
            chunks, facts, {"x"}, replace(PLAIN, fusion="rrf", one_section=False), note_scores=notes
        )
    )
    assert rrf == rrf_off


NOTES: dict[str, str | bytes] = {
    # one section; two of the query's words only in its properties
    "films/fiction.md": (
        "---\ndirector: Ridley Scott\ngenre: science fiction\n---\nA film about a crew.\n"
    ),
    # three sections, the words spread over them
    "films/alien.md": (
        "# Alien\n\n## Director\nRidley Scott.\n\n## Genre\nScience fiction.\n\n"
        "## Plot\nA crew wakes on a ship.\n"
    ),
    "people/ridley.md": "Ridley from next door films his garden for a gardening film club.\n",
    "books/shelf.md": "# Shelf\nScience books on the left.\n",
}
QUERY = "ridley scott science fiction film"


def _explained(vault: object, weights: Weights) -> dict[str, dict[str, float]]:
    found = search.run(vault.conn, search.Query(QUERY, weights=weights), vault.embedder)  # type: ignore[attr-defined]
    for h in found.hits:
        assert sum(v for _, v in h.explain) == pytest.approx(h.score)
    return {h.path: dict(h.explain) for h in found.hits}


def test_search_reads_each_notes_sections_and_lifts_a_one_section_note(
    make_vault: MakeVault,
) -> None:
    vault = make_vault(NOTES)
    vault.reindex()
    counts = store.text.section_counts(vault.conn, [*NOTES, "missing.md"])
    assert counts["films/fiction.md"] == 1 and counts["people/ridley.md"] == 1
    assert counts["films/alien.md"] > 1 and "missing.md" not in counts

    on = _explained(vault, ranking.Weights())
    off = _explained(vault, replace(ranking.Weights(), one_section=False))
    whole = on["films/fiction.md"]["note"] / ranking.Weights().note
    assert off["films/fiction.md"]["keyword"] < whole  # its section holds "film" alone
    assert on["films/fiction.md"]["keyword"] == pytest.approx(whole)
    assert on["films/alien.md"]["keyword"] == pytest.approx(off["films/alien.md"]["keyword"])

    # a second section: the note is no longer read whole (counts are per index generation)
    (vault.root / "films/fiction.md").write_text(
        "---\ndirector: Ridley Scott\ngenre: science fiction\n---\nA film about a crew.\n\n"
        "## Later\nA sequel is planned.\n"
    )
    vault.reindex()
    on = _explained(vault, ranking.Weights())
    off = _explained(vault, replace(ranking.Weights(), one_section=False))
    assert on["films/fiction.md"]["keyword"] == pytest.approx(off["films/fiction.md"]["keyword"])
