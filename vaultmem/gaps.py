"""The knowledge-gap report over the index, and its one safe fix: rewriting alias links."""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import networkx as nx

from vaultmem import decay, edit, store
from vaultmem import graph as link_graph
from vaultmem.errors import CannotEdit, ChangedOnDisk, NoteExists, NoteNotFound
from vaultmem.health import LinkProblem
from vaultmem.parser import LinkRef, wikilinks_in

if TYPE_CHECKING:
    from vaultmem.vault import Vault

# Labels (tags, typed fields) shared by more notes than this say little about any two of them.
RARE_LABEL_NOTES = 20
# How many gap notes get the (FTS) unlinked-mention search: it costs a query each.
MENTION_BUDGET = 200
# How many gap notes get a nearest-sections search, and how close counts (cosine).
VECTOR_BUDGET = 15
CLOSE_IN_MEANING = 0.5  # for the bundled wordllama: related notes score 0.5-0.6
_WORD_RE = re.compile(r"\w+")


@dataclass(frozen=True)
class WantedNote:
    name: str
    linked_from: tuple[str, ...]


@dataclass(frozen=True)
class Suggestion:
    """Two unlinked notes that look related, and why."""

    source: str  # the note that should link
    target: str
    evidence: str


@dataclass(frozen=True)
class ExpiredNote:
    path: str
    tier: str
    expired_at: str


@dataclass(frozen=True)
class GapsReport:
    notes: int
    orphans: tuple[str, ...]
    dead_ends: tuple[str, ...]
    wanted: tuple[WantedNote, ...]
    alias_fixable: tuple[LinkProblem, ...]
    weakly_linked: tuple[str, ...]
    articulation_points: tuple[tuple[str, int], ...]
    bridges: tuple[tuple[str, str], ...]
    isolated_clusters: tuple[tuple[str, ...], ...]
    suggestions: tuple[Suggestion, ...]
    expired: tuple[ExpiredNote, ...]

    def totals(self) -> dict[str, int]:
        return {
            "orphans": len(self.orphans),
            "dead_ends": len(self.dead_ends),
            "wanted": len(self.wanted),
            "alias_fixable": len(self.alias_fixable),
            "weakly_linked": len(self.weakly_linked),
            "articulation_points": len(self.articulation_points),
            "bridges": len(self.bridges),
            "isolated_clusters": len(self.isolated_clusters),
            "suggestions": len(self.suggestions),
            "expired": len(self.expired),
        }

    def percent(self, count: int) -> float:
        return round(100.0 * count / self.notes, 1) if self.notes else 0.0


def gaps_report(vault: Vault, now: dt.datetime | None = None) -> GapsReport:
    """Every knowledge-gap class, computed from the index and its link graph."""
    G = vault.graph()
    # A persona note (type: persona) is read by agents, not linked to by notes: it is never an
    # orphan, a dead end, weakly linked or a link to suggest (docs/personas.md).
    personas = store.persona_paths(vault.conn)
    orphans = [n for n in link_graph.orphans(G) if n not in personas]
    weak = [n for n in link_graph.weakly_linked(G) if n not in personas]
    dead = [n for n in link_graph.dead_ends(G) if n not in personas]
    fragile = link_graph.fragile(G)
    wanted = tuple(
        WantedNote(
            G.nodes[node]["title"],
            tuple(sorted(p for p in G.predecessors(node) if G.nodes[p]["kind"] == "note")),
        )
        for node, _ in link_graph.wanted_ranked(G)
    )
    return GapsReport(
        notes=sum(1 for _, kind in G.nodes(data="kind") if kind == "note"),
        orphans=tuple(orphans),
        dead_ends=tuple(dead),
        wanted=wanted,
        alias_fixable=vault.alias_fixable(),
        weakly_linked=tuple(weak),
        articulation_points=fragile.articulation_points,
        bridges=fragile.bridges,
        isolated_clusters=tuple(link_graph.isolated_clusters(G)),
        suggestions=tuple(
            s
            for s in _suggestions(vault, G, [*orphans, *weak, *dead])
            if s.source not in personas and s.target not in personas
        ),
        expired=tuple(_expired(vault, now or dt.datetime.now(dt.UTC))),
    )


def _linked(G: nx.DiGraph, a: str, b: str) -> bool:
    return bool(G.has_edge(a, b) or G.has_edge(b, a))


def _suggestions(vault: Vault, G: nx.DiGraph, gap_notes: list[str]) -> list[Suggestion]:
    """Links worth adding around the notes with the fewest links.

    Three kinds of evidence: another note mentions the gap note's title without linking it (an
    "unlinked mention"), a section of another note is close in meaning (the index's vectors),
    and the gap note shares a rare tag or `key:: value` field with a note.
    """
    out: dict[tuple[str, str], Suggestion] = {}
    # the notes' vectors and those they are compared with in one state of the index: the
    # upgrade's swap of models (another width) lands before or after, never in between
    with store.snapshot(vault.conn):
        for note in gap_notes[:VECTOR_BUDGET]:
            vector = store.note_vector(vault.conn, note)
            if vector is None:
                continue
            nearest = store.nearest_chunks(vault.conn, vector, 12)
            rows = store.chunk_rows(vault.conn, [i for i, _ in nearest])
            for chunk_id, distance in nearest:
                if chunk_id not in rows or distance is None or 1 - distance < CLOSE_IN_MEANING:
                    continue
                path, heading = rows[chunk_id].path, rows[chunk_id].heading
                if path != note and path in G and not _linked(G, note, path):
                    where = f" (“{heading}”)" if heading else ""
                    why = f"close in meaning{where}, cosine {1 - distance:.2f}"
                    out.setdefault((note, path), Suggestion(note, path, why))
    for note in gap_notes[:MENTION_BUDGET]:
        title = G.nodes[note]["title"]
        words = _WORD_RE.findall(title.lower())
        if len("".join(words)) < 4:
            continue  # short titles ("AI", "Q4") are mentioned everywhere by chance
        for mention in store.mentions(vault.conn, words, limit=5):
            path = mention.path
            if path != note and path in G and not _linked(G, path, note):
                out.setdefault(
                    (path, note),
                    Suggestion(path, note, f"mentions “{title}” (section at line {mention.line})"),
                )
    by_label: dict[str, list[str]] = defaultdict(list)
    for shared_label in store.shared_labels(vault.conn, RARE_LABEL_NOTES):
        by_label[shared_label.label].append(shared_label.path)
    shared: dict[tuple[str, str], list[str]] = defaultdict(list)
    gap_set = set(gap_notes)
    for label, paths in by_label.items():
        for a in paths:
            if a not in gap_set:
                continue
            for b in paths:
                if b != a and not _linked(G, a, b):
                    shared[(a, b)].append(label)
    for (a, b), labels in sorted(shared.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.setdefault((a, b), Suggestion(a, b, "both have " + ", ".join(sorted(labels)[:3])))
    return sorted(out.values(), key=lambda s: (s.target, s.source))


def _expired(vault: Vault, now: dt.datetime) -> list[ExpiredNote]:
    found = []
    for note in store.decaying_notes(vault.conn):
        when = decay.expires_at(note.frontmatter, note.file_time)
        if when is not None and when[1] is not None and when[1] <= now:
            found.append(ExpiredNote(note.path, when[0], when[1].isoformat()))
    return found


# --------------------------------------------------------------------------- the alias fix


@dataclass(frozen=True)
class FileFix:
    """One note's alias links rewritten: the diff to show and the write to make."""

    path: str
    diff: str
    change: edit.Change  # only over the revision the plan was made from
    fixes: int


@dataclass(frozen=True)
class Refusal:
    """A note whose alias links are left as they are, and why."""

    path: str
    reason: str
    changed: bool = False  # it changed on disk since it was read or indexed (exit code 6)


@dataclass(frozen=True)
class AliasFixPlan:
    files: tuple[FileFix, ...]
    refused: tuple[Refusal, ...]  # notes that cannot be fixed now (nothing is written to them)

    @property
    def fixes(self) -> int:
        return sum(f.fixes for f in self.files)


@dataclass(frozen=True)
class AliasFixResult:
    fixed: int  # links rewritten
    written: tuple[str, ...]  # notes written (and reindexed)
    refused: tuple[Refusal, ...]  # notes not written, and why


def plan_alias_fixes(vault: Vault) -> AliasFixPlan:
    """Rewrite each alias-fixable `[[Alias]]` to `[[Note|Alias]]`; nothing else in the file.

    Each note is read for editing (its encoding and line ends kept; lines numbered as the
    parser numbers them, so a form feed or a Unicode line separator inside a line never moves
    a link to another line). A note that changed since the last reindex, or that cannot be
    edited (outside the vault, an encoding that cannot hold the fix, gone), is refused with the
    reason rather than ending the whole plan.
    """
    by_file: dict[str, list[LinkProblem]] = defaultdict(list)
    for problem in vault.alias_fixable():
        by_file[problem.src_path].append(problem)
    files: list[FileFix] = []
    refused: list[Refusal] = []
    planned: set[str] = set()  # files on disk: a symlink in the vault and its target are one
    for path, problems in sorted(by_file.items()):
        try:
            source = vault.read_for_edit(path)
            if source.file in planned:
                continue  # the same bytes and links, fixed through the other name
            if source.digest != store.note_digest(vault.conn, path):
                raise ChangedOnDisk(
                    f"{path} changed since the last reindex; run `vaultmem reindex` and try again"
                )
            lines = list(source.lines)
            done = 0
            for problem in problems:
                index = problem.line - 1
                if not 0 <= index < len(lines) or problem.fix is None:
                    continue
                new_text = _rewrite(lines[index].text, problem)
                if new_text != lines[index].text:
                    lines[index] = edit.Line(new_text, lines[index].end)
                    done += 1
            if not done:
                continue
            change = edit.plan_edit(source, lines)
        except ChangedOnDisk as exc:
            refused.append(Refusal(path, str(exc), changed=True))
            continue
        except (CannotEdit, NoteNotFound) as exc:
            refused.append(Refusal(path, str(exc)))
            continue
        diff = edit.unified_diff(path, source.lines, lines)
        files.append(FileFix(path, diff, change, done))
        planned.add(source.file)
    return AliasFixPlan(tuple(files), tuple(refused))


def _rewrite(line: str, problem: LinkProblem) -> str:
    """Replace the written alias link on `line` (however it was spaced) with the fix."""
    assert problem.fix is not None
    wanted = next(wikilinks_in(problem.written), None)  # the link as the index recorded it
    if wanted is None or (wanted.start, wanted.end) != (0, len(problem.written)):
        return line  # not one whole wikilink (a markdown link, say): left as it is
    for span in wikilinks_in(line):
        if span.embed == wanted.embed and _same_ref(span.ref, wanted.ref):
            return line[: span.start] + problem.fix + line[span.end :]
    return line


def _same_ref(a: LinkRef, b: LinkRef) -> bool:
    """The same link, however it was spaced or cased."""
    ours = (a.target, a.heading, a.block, a.display)
    theirs = (b.target, b.heading, b.block, b.display)
    return all(
        (x or "").casefold() == (y or "").casefold() for x, y in zip(ours, theirs, strict=True)
    )


def apply_alias_fixes(vault: Vault, plan: AliasFixPlan, wait: float = 60.0) -> AliasFixResult:
    """Write the planned notes, each atomically and only over the revision planned from, each
    reindexed as it is written. A note changed since (while the diff was shown) is refused
    and the others are still written: the result says which were."""
    written: list[str] = []
    refused: list[Refusal] = []
    fixed = 0
    for fix in plan.files:
        try:
            vault.apply(fix.change, wait=wait)
        except ChangedOnDisk as exc:
            refused.append(Refusal(fix.path, str(exc), changed=True))
            continue
        except (CannotEdit, NoteExists, NoteNotFound) as exc:
            refused.append(Refusal(fix.path, str(exc)))
            continue
        written.append(fix.path)
        fixed += fix.fixes
    return AliasFixResult(fixed, tuple(written), tuple(refused))


# --------------------------------------------------------------------------- the classes, shown

GapKey = Literal[
    "orphans",
    "dead_ends",
    "wanted",
    "alias_fixable",
    "weakly_linked",
    "articulation_points",
    "bridges",
    "isolated_clusters",
    "suggestions",
    "expired",
]


@dataclass(frozen=True)
class GapClass:
    """One kind of knowledge gap, as every front-end names and explains it."""

    key: GapKey  # the report's field, the JSON key and the TUI's tab id
    label: str  # a short name: "Dead ends"
    description: str  # what its rows are, in a few words
    columns: tuple[str, ...]  # a heading for each of its rows' cells
    of_notes: bool  # its rows are notes, so a share of all notes means something
    empty: str  # what an empty class says


# In the order every front-end lists them.
GAP_CLASSES: tuple[GapClass, ...] = (
    GapClass(
        "orphans",
        "Orphans",
        "notes with no links in or out",
        ("note (no links in or out)",),
        True,
        "No orphans: every note links or is linked to.",
    ),
    GapClass(
        "dead_ends",
        "Dead ends",
        "notes linked to that link to no other note",
        ("note (linked to, links nowhere)",),
        True,
        "No dead ends: every linked-to note links on.",
    ),
    GapClass(
        "wanted",
        "Wanted",
        "notes linked to but not written yet, most wanted first",
        ("wanted note", "linked from"),
        False,
        "No wanted notes: every link has its note.",
    ),
    GapClass(
        "alias_fixable",
        "Alias links",
        "links naming another note's alias, which Obsidian does not resolve",
        ("where", "link", "fix"),
        False,
        "No alias-fixable links: nothing to fix.",
    ),
    GapClass(
        "weakly_linked",
        "Weakly linked",
        "notes linked with exactly one other note",
        ("note (one neighbour)",),
        True,
        "No weakly linked notes.",
    ),
    GapClass(
        "articulation_points",
        "Articulation points",
        "notes whose removal splits their group of notes",
        ("note (removing it splits the graph)", "pieces"),
        True,
        "No articulation points: no single note holds groups together.",
    ),
    GapClass(
        "bridges",
        "Bridges",
        "single links holding two groups of notes together",
        ("link holding two groups together",),
        False,
        "No bridges: no single link holds groups together.",
    ),
    GapClass(
        "isolated_clusters",
        "Isolated clusters",
        "small groups of linked notes cut off from the rest",
        ("notes", "members"),
        False,
        "No small isolated clusters.",
    ),
    GapClass(
        "suggestions",
        "Suggestions",
        "links worth adding, with the evidence",
        ("note", "could link to", "why"),
        False,
        "No suggested links.",
    ),
    GapClass(
        "expired",
        "Expired",
        "notes past their decay tier",
        ("note", "tier", "expired"),
        True,
        "No expired notes.",
    ),
)


def gap_class(key: str) -> GapClass:
    """The class named `key` (KeyError when there is none)."""
    for gap in GAP_CLASSES:
        if gap.key == key:
            return gap
    raise KeyError(key)


@dataclass(frozen=True)
class GapRow:
    """One row of a gap class as text cells (one per column), and the note it is about."""

    cells: tuple[str, ...]
    path: str | None  # the note to open for this row


@dataclass(frozen=True)
class GapCount:
    """How big one gap class is in a report."""

    gap: GapClass
    count: int
    percent: float | None  # of all notes, for classes whose rows are notes


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def gap_counts(report: GapsReport) -> tuple[GapCount, ...]:
    """How many rows each class has (and what share of all notes), in the classes' order."""
    totals = report.totals()
    return tuple(
        GapCount(gap, totals[gap.key], report.percent(totals[gap.key]) if gap.of_notes else None)
        for gap in GAP_CLASSES
    )


def gap_rows(report: GapsReport, key: GapKey) -> tuple[GapRow, ...]:
    """The rows of one gap class, as text cells under the class's columns."""
    if key == "orphans":
        return tuple(GapRow((p,), p) for p in report.orphans)
    if key == "dead_ends":
        return tuple(GapRow((p,), p) for p in report.dead_ends)
    if key == "weakly_linked":
        return tuple(GapRow((p,), p) for p in report.weakly_linked)
    if key == "wanted":
        return tuple(
            GapRow(
                (
                    w.name,
                    f"{_plural(len(w.linked_from), 'note')}: {', '.join(w.linked_from[:3])}"
                    + (" …" if len(w.linked_from) > 3 else ""),
                ),
                w.linked_from[0] if w.linked_from else None,
            )
            for w in report.wanted
        )
    if key == "alias_fixable":
        return tuple(
            GapRow((f"{p.src_path}:{p.line}", p.written, p.fix or ""), p.src_path)
            for p in report.alias_fixable
        )
    if key == "articulation_points":
        return tuple(GapRow((p, str(k)), p) for p, k in report.articulation_points)
    if key == "bridges":
        return tuple(GapRow((f"{a} — {b}",), a) for a, b in report.bridges)
    if key == "isolated_clusters":
        return tuple(GapRow((str(len(c)), ", ".join(c)), c[0]) for c in report.isolated_clusters)
    if key == "suggestions":
        return tuple(GapRow((s.source, s.target, s.evidence), s.source) for s in report.suggestions)
    if key == "expired":
        return tuple(GapRow((e.path, e.tier, e.expired_at[:10]), e.path) for e in report.expired)
    raise KeyError(key)
