"""The memory service: facts, episodes, open loops, recall and the gate over one vault's index.

It gathers the memory core's values (`vaultmem/memory/`, pure) from the index; its writes are
planned by `memory_writes.MemoryWriter` as editor changes that the one write path applies
(`Vault.apply`: the index lock, an atomic write refusing a note changed since it was read, a
reindex of the touched paths). Reached as `vault.memory`; docs/memory.md is the contract.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, TypeVar, cast

from vaultmem import store
from vaultmem.errors import ChangedOnDisk, NoteExists, NoteNotFound, UsageError, VaultmemError
from vaultmem.memory import episodes as ep
from vaultmem.memory import facts as fc
from vaultmem.memory import gate as gt
from vaultmem.memory import loops as lp
from vaultmem.memory import recall as rc
from vaultmem.memory import salience as sl
from vaultmem.memory.mentions import EntityName, NameIndex, fold
from vaultmem.memory.values import check_key
from vaultmem.memory_writes import MemoryWriter, PlannedWrite, Written, apply_edits
from vaultmem.search import expired_paths

__all__ = ["EntityFacts", "GateResult", "Memory", "PlannedWrite", "Written", "apply_edits"]

if TYPE_CHECKING:
    from vaultmem.llm import LLM
    from vaultmem.search import Mode
    from vaultmem.vault import Vault
    from vaultmem.writer import Trashed

T = TypeVar("T")
DEFAULT_ENTITIES = "entities"
RECALL_DEPTH = 30  # search hits recall reorders by time (bench/memory_temporal.py chose it)
GATE_HITS = 5
# A write that names no revision (no digest, no line) is planned on the note as it is when the
# call reads it; another writer landing first (two agents storing facts about one person at
# once) makes it plan again on the note as it is then, rather than fail with exit code 6
WRITE_TRIES = 5


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class EntityFacts:
    """An entity note and its current facts (of one key, when asked)."""

    path: str
    title: str
    facts: tuple[fc.Fact, ...]
    digest: str | None = None  # the indexed revision: a write's precondition


@dataclass(frozen=True)
class GateResult:
    """The gate's decision and, when memory helps, the context it found."""

    decision: gt.GateDecision
    context: rc.Recall | None
    notice: str | None = None  # a model that was down or answered nonsense (stderr)
    llm: str | None = None  # the model's verdict, when one was asked and answered clearly


# --------------------------------------------------------------------------- the service


class Memory:
    """The memory of one vault: reads from the index, writes planned for the one write path."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault
        self._names: tuple[int, NameIndex] | None = None
        self._lock = threading.Lock()
        # what recall and the gate read of the whole vault, kept per index generation
        self._cache: dict[str, tuple[int, object]] = {}
        self.writer = MemoryWriter(vault, self)

    def _cached(self, what: str, build: Callable[[], T]) -> T:
        """`build()`'s value for the index as it is now, built once per index generation."""
        generation = self._vault.index.generation()
        with self._lock:
            found = self._cache.get(what)
            if found is not None and found[0] == generation:
                return cast(T, found[1])
        value = build()
        with self._lock:
            self._cache[what] = (generation, value)
        return value

    # ---- config

    @property
    def entities_folder(self) -> str:
        table = self._vault.config.extra.get("memory")
        folder = table.get("entities_folder") if isinstance(table, dict) else None
        return str(folder).strip().strip("/") if folder else DEFAULT_ENTITIES

    @property
    def episodes_folder(self) -> str:
        table = self._vault.config.extra.get("memory")
        folder = table.get("episodes_folder") if isinstance(table, dict) else None
        return str(folder).strip().strip("/") if folder else ep.FOLDER

    @property
    def _conn(self) -> store.Connection:
        return self._vault.conn

    # ---- names

    def names(self) -> NameIndex:
        """The names a message can call a note by (titles, aliases, wanted link targets),
        indexed once per index generation."""
        generation = self._vault.index.generation()
        with self._lock:
            if self._names is None or self._names[0] != generation:
                key = self._vault.index.cache_key()
                cached = self._vault.index.read_cache("names", key)
                if isinstance(cached, dict):
                    with contextlib.suppress(KeyError, TypeError, ValueError):
                        self._names = (generation, NameIndex.from_json(cached))
                        return self._names[1]
                notes = store.named_notes(self._conn)
                entities = [EntityName(n.path, (n.title, *n.aliases)) for n in notes]
                known = {fold(n.title) for n in notes}
                entities += [
                    EntityName("", (t,))
                    for t in store.wanted_targets(self._conn)
                    if fold(PurePosixPath(t).name) not in known
                ]
                self._names = (generation, NameIndex(entities))
                # a CLI process reads this instead of indexing 20k names again (0.5 s on MDN)
                self._vault.index.write_cache("names", key, self._names[1].to_json())
            return self._names[1]

    def entity(self, ref: str) -> str:
        """The note an entity names (path, title or alias); a folder or nothing is an error."""
        ref = ref.strip()
        try:
            return self._vault.find_note(ref)
        except NoteNotFound:
            if ref and (self._vault.root / ref.strip("/")).is_dir():
                raise NoteNotFound(
                    f"'{ref}' is a folder, not a note: name the note itself"
                    f" (`vaultmem fact set {ref}/<Note> ...`)"
                ) from None
            raise

    # ---- facts

    def facts(self, ref: str, key: str | None = None) -> EntityFacts:
        """An entity's current facts (of `key`), in line order."""
        path = self.entity(ref)
        rows = store.facts_of(self._conn, [path], check_key(key) if key else None)
        title = store.title_of(self._conn, path) or path
        digest = store.note_digest(self._conn, path)
        return EntityFacts(path, title, tuple(r.fact for r in rows), digest)

    def fact_history(self, ref: str, key: str) -> EntityFacts:
        """The fact `key` of an entity with its `was::` history (newest first)."""
        found = self.facts(ref, key)
        if not found.facts:
            raise NoteNotFound(
                f"{found.path} has no `{key}` fact (`vaultmem fact get {found.title!r}` lists"
                " its facts)"
            )
        return found

    def fact_list(
        self, key: str | None = None, since: dt.date | None = None
    ) -> tuple[store.FactRow, ...]:
        """Facts across the vault (of `key`, changed since `since`), newest change first."""
        return tuple(store.all_facts(self._conn, check_key(key) if key else None, since))

    def note_facts(self, paths: Sequence[str] | None = None) -> list[rc.NoteFact]:
        """Body facts (not front matter) of some notes, or of the whole vault."""
        if paths is None:
            return list(self._cached("facts", self._vault_facts))  # a copy: callers may sort
        rows = store.facts_of(self._conn, paths)
        return [rc.NoteFact(r.path, r.title, r.fact) for r in rows if r.fact.form != "property"]

    def _vault_facts(self) -> list[rc.NoteFact]:
        rows = store.all_facts(self._conn, body_only=True)
        return [rc.NoteFact(r.path, r.title, r.fact) for r in rows if r.fact.form != "property"]

    # ---- episodes

    def all_episodes(self) -> list[ep.Episode]:
        """Every episode note (`type: episode` with a date)."""
        return list(self._cached("episodes", self._read_episodes))

    def _read_episodes(self) -> list[ep.Episode]:
        out = []
        for row in store.episode_rows(self._conn):
            found = ep.episode_from(row.path, row.frontmatter, row.body)
            if found is not None:
                out.append(found)
        return out

    def episodes(
        self,
        *,
        since: dt.date | None = None,
        until: dt.date | None = None,
        outcome: ep.Outcome | None = None,
        entities: Sequence[str] = (),
        now: dt.datetime | None = None,
    ) -> list[ep.Episode]:
        """Episodes in [since, until], with that outcome, about any of `entities`, none after
        `now` (the clock an agent fixes: what had not happened yet stays out), newest first."""
        return ep.select(
            self.all_episodes(),
            since=since,
            until=until,
            outcome=outcome,
            entities=entities,
            now=_aware(now) if now is not None else None,
        )

    def trends(
        self,
        entity: str,
        granularity: ep.Granularity = "week",
        *,
        since: dt.date | None = None,
        until: dt.date | None = None,
    ) -> tuple[ep.TrendRow, ...]:
        """Outcome counts and rates per period of the episodes about `entity`."""
        chosen = ep.select(self.all_episodes(), entities=[entity])
        return ep.trends(
            [(e.day, e.outcome) for e in chosen], granularity, since=since, until=until
        )

    # ---- loops

    def all_loops(self, paths: Sequence[str] | None = None) -> list[lp.Loop]:
        """Every open loop (unchecked task) in the vault or in some notes."""
        if paths is None:
            return list(self._cached("loops", lambda: self._read_loops(None)))
        return self._read_loops(paths)

    def _read_loops(self, paths: Sequence[str] | None) -> list[lp.Loop]:
        tasks = store.open_tasks(self._conn, paths)
        by_note: dict[str, list[store.OpenTask]] = {}
        for t in tasks:
            by_note.setdefault(t.path, []).append(t)
        out: list[lp.Loop] = []
        for path, rows in by_note.items():
            details = {r.task.line: r.detail for r in rows}
            for x in lp.loops_from(path, [r.task for r in rows], _day(rows[0].date)):
                out.append(replace(x, detail=details.get(x.line, "")) if details[x.line] else x)
        return out

    def loops(
        self,
        today: dt.date,
        *,
        entities: Sequence[str] = (),
        due_before: dt.date | None = None,
        priority: lp.Priority | None = None,
    ) -> list[lp.RankedLoop]:
        """Open loops ranked by due date, priority and age (see memory.loops.rank)."""
        chosen = lp.select(
            self.all_loops(), entities=entities, due_before=due_before, priority=priority
        )
        return lp.rank(chosen, today)

    # ---- recall and the gate

    def recall(
        self,
        message: str,
        now: dt.datetime,
        *,
        days: int = rc.DEFAULT_DAYS,
        budget: int = rc.DEFAULT_BUDGET,
        include_expired: bool = False,
        search: bool = True,
    ) -> rc.Recall:
        """The continuation block for `message` (its entity's loops, recent episodes, facts and
        the best hits), else the best search hits, within `budget` characters."""
        if not message.strip():
            raise UsageError("empty message: give recall the message to continue")
        if budget < 1:
            raise UsageError("--budget must be at least 1 character")
        expired = set() if include_expired else self.expired_paths(now)
        hits = self._hits(message, now, RECALL_DEPTH, expired, "hybrid") if search else []
        return rc.recall(
            message,
            now,
            names=self.names(),
            facts=[f for f in self.note_facts() if f.path not in expired],
            episodes=[e for e in self.all_episodes() if e.path not in expired],
            loops=[x for x in self.all_loops() if x.path not in expired],
            hits=hits,
            days=days,
            budget=budget,
        )

    def _hits(
        self, query: str, now: dt.datetime, limit: int, skip: set[str], mode: Mode = "keyword"
    ) -> list[rc.RecallHit]:
        """Search hits as recall takes them: expired notes left out, each with its day and
        whether it is an episode (hybrid for recall; keywords for the gate, which needs only
        the best hit's strength and must stay fast)."""
        found = self._vault.search(
            query, limit=limit + len(skip), mode=mode, now=now, include_expired=True
        )
        hits = [h for h in found.hits if h.path not in skip][:limit]
        if not hits:
            return []
        facts = store.note_facts(self._conn, [h.path for h in hits])
        out = []
        for h in hits:
            nf = facts.get(h.path)
            front = nf.frontmatter if nf is not None and "type" in nf.frontmatter_json else {}
            day = _day(nf.date) if nf is not None else None
            text = h.snippet.replace("\x02", "").replace("\x03", "")
            episode = str(front.get("type", "")).strip().lower() == "episode"
            out.append(rc.RecallHit(h.path, h.title, text, h.start_line, h.score, day, episode))
        return out

    def gate(
        self,
        message: str,
        now: dt.datetime,
        *,
        llm: LLM | None = None,
        budget: int = rc.DEFAULT_BUDGET,
    ) -> GateResult:
        """Whether `message` needs memory: offline rules plus the index (a clear no spares the
        search), or a model's MEMORY/NONE when `llm` is given (nonsense or a down model falls
        back to the offline gate, with a notice)."""
        names = self.names()
        first = gt.classify(message, names)
        notice = None
        verdict_llm: str | None = None
        if llm is not None:
            try:
                answer = llm.generate(
                    gt.LLM_PROMPT.format(message=message[: gt.LONG_MESSAGE]), max_tokens=20
                )
            except VaultmemError as exc:  # down, or an answer that is not one
                notice = f"the model could not answer ({exc}); the offline gate decided"
            else:
                verdict_llm = gt.parse_llm_answer(answer)
                if verdict_llm is None:
                    shown = " ".join(answer.split())[:80]
                    notice = (
                        f"the model's answer {shown!r} is not MEMORY or NONE;"
                        " the offline gate decided"
                    )
        if verdict_llm == "no-memory":  # the model's clear answer decides: no search
            said = gt.GateDecision(
                "no-memory",
                False,
                first.score,
                (*first.reasons, "the model says it needs no memory"),
                first.entities,
                first.query,
            )
            return GateResult(said, None, notice, verdict_llm)
        if not first.search and verdict_llm is None:
            return GateResult(first, None, notice)
        expired = self.expired_paths(now)
        hits = self._hits(first.query or message, now, GATE_HITS, expired)
        best = max(
            (gt.hit_strength(first.query or message, f"{h.title} {h.text}") for h in hits),
            default=0.0,
        )
        decision = gt.classify(message, names, best_hit=best)
        if verdict_llm == "needs-memory" and decision.verdict == "no-memory":
            decision = gt.GateDecision(
                "needs-memory",
                True,
                decision.score,
                (*decision.reasons, "the model says it needs memory"),
                decision.entities,
                decision.query,
            )
        if decision.verdict != "needs-memory":
            return GateResult(decision, None, notice, verdict_llm)
        context = rc.recall(
            message,
            now,
            names=names,
            facts=[f for f in self.note_facts() if f.path not in expired],
            episodes=[e for e in self.all_episodes() if e.path not in expired],
            loops=[x for x in self.all_loops() if x.path not in expired],
            hits=hits,
            budget=budget,
        )
        return GateResult(decision, context, notice, verdict_llm)

    # ---- salience

    def salience(self, now: dt.datetime, top: int = 20) -> list[sl.Salient]:
        """Notes and facts that deserve a look: importance (links in, centrality as the share
        of the most linked note's degree, open loops, facts) × staleness; expired notes are
        prune's, not listed."""
        G = self._vault.graph()
        loops: dict[str, int] = {}
        for x in self.all_loops():
            loops[x.path] = loops.get(x.path, 0) + 1
        facts = store.all_facts(self._conn, body_only=True)
        per_note: dict[str, int] = {}
        for r in facts:
            per_note[r.path] = per_note.get(r.path, 0) + 1
        notes = []
        for n in store.note_summaries(self._conn):
            inlinks = len({src for src, _ in G.in_edges(n.path)}) if n.path in G else 0
            degree = G.degree(n.path) if n.path in G else 0
            notes.append(
                sl.NoteSignals(
                    n.path,
                    n.title,
                    inlinks,
                    float(degree),
                    dt.datetime.fromtimestamp(n.mtime, dt.UTC),
                    loops.get(n.path, 0),
                    per_note.get(n.path, 0),
                )
            )
        signals = [sl.FactSignals(r.path, r.fact.key, r.fact.value, r.fact.changed) for r in facts]
        return sl.rank(notes, signals, now, top=top, skip=self.expired_paths(now))

    # ---- decay

    def expired(self, now: dt.datetime) -> list[tuple[str, sl.Expiry]]:
        """Notes past their decay tier's lifetime at `now`, longest expired first."""
        rows = store.decaying_notes(self._conn)
        return sl.expired([(r.path, r.frontmatter, r.file_time) for r in rows], now)

    def prune(self, now: dt.datetime) -> list[Trashed]:
        """Move every expired note to `.trash/` (restorable: `vault.restore`). A note that
        changed since the index read it is left where it is (ChangedOnDisk)."""
        done = []
        for path, _ in self.expired(now):
            digest = store.note_digest(self._conn, path)
            done.append(self._vault.trash(path, expected_digest=digest))
        return done

    def expired_paths(self, now: dt.datetime) -> set[str]:
        """Notes past their decay tier's lifetime at `now` (they leave recall and personas)."""
        return set(expired_paths(self._conn, _aware(now)))

    # ---- writes: planned by `writer` against the note as read, applied by `vault.apply`
    # (capture, issue 12, calls these)

    def set_fact(
        self,
        entity: str,
        key: str,
        value: str,
        *,
        source: str | None = None,
        create: bool = False,
        line: int | None = None,
        digest: str | None = None,
        today: dt.date | None = None,
    ) -> Written:
        """Make `key` hold `value` in the entity's note (see plan_fact), written at once."""
        day = today or dt.date.today()
        return self._write(
            lambda: self.writer.plan_fact(
                entity,
                key,
                value,
                today=day,
                source=source,
                create=create,
                line=line,
                digest=digest,
            ),
            again=digest is None and line is None,
        )

    def add_episode(
        self,
        title: str,
        outcome: str,
        *,
        when: dt.datetime | dt.date | None = None,
        entities: Sequence[str] = (),
        duration: str | None = None,
        procedure: str | None = None,
        body: str = "",
        now: dt.datetime | None = None,
    ) -> Written:
        """Write a new episode note (see plan_episode)."""
        clock = now or dt.datetime.now(dt.UTC)
        # the name is a free one chosen here: one taken meanwhile makes it choose again
        return self._write(
            lambda: self.writer.plan_episode(
                title,
                outcome,
                now=clock,
                when=when,
                entities=entities,
                duration=duration,
                procedure=procedure,
                body=body,
            ),
            again=True,
        )

    def add_loop(
        self,
        text: str,
        note: str,
        *,
        due: dt.date | None = None,
        priority: lp.Priority | None = None,
    ) -> Written:
        """Append an open loop to a note (see plan_loop)."""
        return self._write(
            lambda: self.writer.plan_loop(text, note, due=due, priority=priority), again=True
        )

    def resolve_loop(
        self, ref: str, *, today: dt.date | None = None, digest: str | None = None
    ) -> Written:
        """Check the loop REF names in place with its completion date (see plan_resolve)."""
        day = today or dt.date.today()
        return self._write(lambda: self.writer.plan_resolve(ref, day, digest), again=digest is None)

    def _write(self, plan: Callable[[], PlannedWrite], *, again: bool) -> Written:
        """Plan and write; with `again`, planned anew on the note as it is now when another
        writer changed it (or took the new note's name) between the reading and the write."""
        for attempt in range(WRITE_TRIES):
            try:
                return self.writer.write(plan())
            except (ChangedOnDisk, NoteExists):
                if not again or attempt == WRITE_TRIES - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover


_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _day(text: str | None) -> dt.date | None:
    if not text or not _DATE_RE.match(text):
        return None
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


def _aware(when: dt.datetime) -> dt.datetime:
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)
