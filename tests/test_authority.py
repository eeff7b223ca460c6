"""Link authority (issue 13, round 4): how many notes link to a note, counted in the index
(resolved links, and URL-style links to a note's slug or permalink), and the ranking signal
it gives."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from tests.conftest import MakeVault
from vaultmem import ranking, search, store
from vaultmem.ranking import Candidate, NoteFacts, Weights, authority, rank
from vaultmem.search import Query
from vaultmem.search import run as search_run


@pytest.mark.parametrize(
    ("linked_from", "scale", "value"),
    [
        (0, 1000, 0.0),
        (-3, 1000, 0.0),  # nonsense counts give nothing
        (1, 1000, math.log(2) / math.log(1001)),  # 0.1003
        (9, 1000, math.log(10) / math.log(1001)),  # 0.3333
        (31, 1000, math.log(32) / math.log(1001)),  # 0.5017
        (1000, 1000, 1.0),
        (5000, 1000, 1.0),  # full from the scale on
        (1, 1, 1.0),
        (3, 0, 1.0),  # a scale below one is one
        (9, 99, 0.5),
    ],
)
def test_authority_is_log_scaled_and_full_at_the_scale(
    linked_from: int, scale: int, value: float
) -> None:
    assert authority(linked_from, scale) == pytest.approx(value)


def test_authority_reads_the_module_scale_when_none_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert authority(9) == pytest.approx(math.log(10) / math.log(1 + ranking.AUTHORITY_SCALE))
    monkeypatch.setattr(ranking, "AUTHORITY_SCALE", 9)
    assert authority(9) == 1.0


def _cand(i: int, path: str, keyword: float) -> Candidate:
    return Candidate(i, path, path.removesuffix(".md"), "", 1, 2, keyword)


def test_the_authority_signal_lifts_a_linked_note_by_its_weight() -> None:
    chunks = [_cand(1, "a.md", 10.0), _cand(2, "guide.md", 9.0), _cand(3, "b.md", 8.0)]
    facts = {"guide.md": NoteFacts(linked_from=99), "b.md": NoteFacts(linked_from=1)}
    plain = Weights(heading=0, path=0, graph=0, vector=0, title=0, note=0, authority=0)
    assert [r.path for r in rank(chunks, facts, {"x"}, plain)] == ["a.md", "guide.md", "b.md"]
    found = rank(chunks, facts, {"x"}, replace(plain, authority=0.4))
    assert [r.path for r in found] == ["guide.md", "a.md", "b.md"]
    parts = {r.path: dict(r.parts) for r in found}
    assert parts["guide.md"]["authority"] == pytest.approx(0.4 * math.log(100) / math.log(1001))
    assert parts["guide.md"]["keyword"] == pytest.approx(0.9)
    assert parts["b.md"]["authority"] == pytest.approx(0.4 * math.log(2) / math.log(1001))
    assert "authority" not in parts["a.md"]  # nobody links to it: no part at all
    assert found[0].score == pytest.approx(sum(v for _, v in found[0].parts))


def test_link_authority_is_on_by_default_in_hybrid_search_only() -> None:
    assert Weights().authority == 0.3
    assert search._single("semantic").authority == 0.0  # meaning only
    assert search._single("keyword").authority == 0.3


def test_the_authority_signal_is_off_at_weight_zero() -> None:
    chunks = [_cand(1, "a.md", 10.0), _cand(2, "guide.md", 9.0)]
    facts = {"guide.md": NoteFacts(linked_from=1000)}
    found = rank(chunks, facts, {"x"}, Weights(authority=0.0))
    assert [r.path for r in found] == ["a.md", "guide.md"]
    assert all("authority" not in dict(r.parts) for r in found)


def test_extra_signals_add_their_weighted_values_before_the_graph_step() -> None:
    chunks = [_cand(1, "a.md", 10.0), _cand(2, "b.md", 9.0)]
    plain = Weights(heading=0, path=0, graph=0, vector=0, title=0, note=0)
    found = rank(chunks, {}, {"x"}, plain, signals=[("lead", 0.5, {"b.md": 0.4, "z.md": 1.0})])
    assert [(r.path, dict(r.parts).get("lead")) for r in found] == [
        ("b.md", pytest.approx(0.2)),  # 0.9 + 0.5 x 0.4 passes a.md's 1.0
        ("a.md", None),  # no value for it: no part
    ]
    assert rank(chunks, {}, {"x"}, plain, signals=[("lead", 0.0, {"b.md": 1.0})])[1].parts == (
        ("keyword", pytest.approx(0.9)),
    )


# --------------------------------------------------------------------------- counted in the index

GUIDE = "---\nslug: Web/API/Fetch_API\n---\n# Using fetch\nHow to fetch a resource.\n"
PAGES: dict[str, str | bytes] = {
    "en-us/web/api/fetch_api/index.md": GUIDE,
    "en-us/web/api/fetch/index.md": (
        "---\nslug: Web/API/Window/fetch\n---\n# fetch()\n"
        "See [the guide](/en-US/docs/Web/API/Fetch_API) and"
        " [again](/en-US/docs/Web/API/Fetch_API#concepts)"
        " and [self](/en-US/docs/Web/API/Window/fetch).\n"
    ),
    "en-us/web/api/request/index.md": (
        "# Request\nPart of [the Fetch API](/en-us/docs/web/api/fetch_api/).\n"
        "Not this one: [near miss](/en-US/docs/Web/API/XFetch_API).\n"
    ),
    "en-us/web/api/response/index.md": "# Response\n[[Blog post]] and [[Blog post]].\n",
    "notes/Blog post.md": "---\npermalink: /blog/2026/post/\n---\n# Blog post\nWords.\n",
    "notes/other.md": "[post](https://example.org/blog/2026/post) [[Blog post]] [[other]]\n",
}


def test_linking_notes_count_resolved_links_and_links_to_a_slug_or_permalink(
    make_vault: MakeVault,
) -> None:
    vault = make_vault(PAGES)
    vault.reindex()
    counts = store.linking_note_counts(vault.conn, sorted(PAGES))
    assert counts == {
        # fetch/ (twice, once with an anchor) and request/ (another case, a trailing slash):
        # two notes; XFetch_API ends with the slug's last part but is another page
        "en-us/web/api/fetch_api/index.md": 2,
        # response/ twice and other.md by a wikilink (its web address is no link); the page
        # linking to its own slug does not count
        "notes/Blog post.md": 2,
    }
    assert store.linking_note_counts(vault.conn, []) == {}
    assert store.linking_note_counts(vault.conn, ["notes/other.md"]) == {}  # only a self-link


def test_search_puts_the_note_many_notes_link_to_first_when_weighted(
    make_vault: MakeVault,
) -> None:
    files: dict[str, str | bytes] = {
        "guides/Timers.md": "# Timers\nRepeat a task every second with an interval timer.\n",
        "a/Clock.md": "# Clock\nRepeat a task every second with an interval timer.\n",
    }
    for n in range(12):
        files[f"pages/p{n}.md"] = f"# Page {n}\nSee [[Timers]] for scheduling.\n"
    vault = make_vault(files)
    vault.reindex()
    asked = "repeat task every second interval"

    def top(weights: Weights) -> list[str]:
        hits = search_run(vault.conn, Query(asked, 2, "keyword", weights=weights), None).hits
        return [h.path for h in hits]

    plain = Weights(vector=0.0, authority=0.0)
    assert top(plain) == ["a/Clock.md", "guides/Timers.md"]  # the same words: by path
    weighted = replace(plain, authority=0.3)
    hits = search_run(vault.conn, Query(asked, 2, "keyword", weights=weighted), None).hits
    assert [h.path for h in hits] == ["guides/Timers.md", "a/Clock.md"]
    parts = dict(hits[0].explain)
    assert parts["authority"] == pytest.approx(0.3 * math.log(13) / math.log(1001))
    assert "authority" not in dict(hits[1].explain)
    assert hits[0].score - hits[1].score == pytest.approx(parts["authority"])
    # on by default: a hybrid search explains it
    default = vault.search(asked, limit=2)
    assert default.hits[0].path == "guides/Timers.md"
    assert dict(default.hits[0].explain)["authority"] == pytest.approx(parts["authority"])


def test_the_counts_kept_between_searches_follow_the_index(make_vault: MakeVault) -> None:
    files: dict[str, str | bytes] = {"Timers.md": "# Timers\nAn interval timer.\n"}
    files.update({f"p{n}.md": f"See [[Timers]], page {n}.\n" for n in range(3)})
    vault = make_vault(files)
    vault.reindex()

    def part() -> float:
        hit = next(h for h in vault.search("interval timer").hits if h.path == "Timers.md")
        return dict(hit.explain)["authority"]

    assert part() == pytest.approx(0.3 * math.log(4) / math.log(1001))
    assert part() == pytest.approx(0.3 * math.log(4) / math.log(1001))  # kept: the same
    (vault.root / "p3.md").write_text("Also [[Timers]].\n", encoding="utf-8")
    (vault.root / "p0.md").write_text("No link now.\n", encoding="utf-8")
    vault.reindex()
    assert part() == pytest.approx(0.3 * math.log(4) / math.log(1001))  # one gone, one new
    (vault.root / "p4.md").write_text("And [[Timers]].\n", encoding="utf-8")
    vault.reindex()
    assert part() == pytest.approx(0.3 * math.log(5) / math.log(1001))
