"""The upgrade: a vault `auto` gave wordllama for its size moves to all-MiniLM-L6-v2 without
anyone waiting for it.

`auto` (vaultmem/embed_choice.py) gives a vault past its limit wordllama, because a first index
with MiniLM would cost minutes to an hour. MiniLM finds better answers, so such a vault (up to
`embed_choice.UPGRADE_LIMIT` sections) has an upgrade pending: a step embeds, with MiniLM, a
batch of section texts the embedding cache has no MiniLM vector for, and commits them to the
cache under the index's write lock, taken for that commit only (reindexes and writes go on
between steps, and searches keep using wordllama's vectors). Once the cache covers every
section, the swap replaces every vector by MiniLM's from the cache in one transaction and
records the choice as `upgraded`; later reindexes embed new sections with MiniLM, and warm
processes notice the model changed (the generation moves) and load the new vectors.

A section added or changed meanwhile simply has no cached vector yet: a later step embeds it,
and the swap happens only when every section has one, checked inside its own transaction.
`vaultmem upgrade-model` runs the steps to the end; the MCP server and the TUI run them in a
`Background` thread at idle priority unless the config says `embed_upgrade = "manual"`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from vaultmem import embed_choice, store
from vaultmem.errors import IndexBusy, UsageError, VaultmemError

if TYPE_CHECKING:
    from vaultmem.embed import Embedder
    from vaultmem.vault import Vault

log = logging.getLogger(__name__)

BATCH = 64  # sections a step embeds and commits: a few seconds of one core
# texts per call to the model: MiniLM runs a call of at most 4 texts on one BLAS thread, in
# the calling thread (vaultmem/embed.py), so the background's work stays at its priority
# (OpenBLAS's own threads were started at normal priority); and a stop is seen between calls
CALL = 4
YIELD_MAX = 2.0  # seconds a step waits for the calls under way before its next call to the model
HOLD_MAX = 10.0  # seconds it waits while a front-end holds it (a person typing), at most
IDLE_CHECK = 60.0  # seconds between looks at a vault with nothing to upgrade
BUSY_RETRY = 5.0  # seconds before trying again when another process holds the lock
FAILED_RETRY = 300.0  # seconds before trying again after the model failed

# pending: steps to run (or the swap); upgraded: done, the index uses MiniLM's vectors;
# unavailable: it would be pending, but MiniLM is not installed; none: nothing to upgrade
State = Literal["pending", "upgraded", "unavailable", "none"]


class Calls:
    """How many calls into a `Vault` are under way (a search, a write, a reindex...): the
    upgrade waits for none before each call to its model, so that it takes no core and no
    GIL from them (a call that lasts longer than YIELD_MAX does not stop it for good)."""

    def __init__(self) -> None:
        self._count = 0
        self._changed = threading.Condition()
        self._quiet_from = 0.0  # time.monotonic() before which the front-end asked for quiet

    def __enter__(self) -> None:
        with self._changed:
            self._count += 1

    def __exit__(self, *_exc: object) -> None:
        with self._changed:
            self._count -= 1
            if not self._count:
                self._changed.notify_all()

    def hold(self, seconds: float) -> None:
        """Count the next `seconds` as busy although no call is under way: a front-end whose
        own work is not a call into the `Vault` (the TUI painting the hits of a query typed a
        moment ago, and the next key likely on its way) keeps the upgrade waiting meanwhile."""
        with self._changed:
            self._quiet_from = max(self._quiet_from, time.monotonic() + seconds)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no call is under way and no hold lasts (at most `timeout` seconds); True
        if none is."""
        started = time.monotonic()
        with self._changed:
            while True:
                now = time.monotonic()
                if not self._count and now >= self._quiet_from:
                    return True
                # a call under way is waited for `timeout`; a hold up to HOLD_MAX, so that
                # someone typing without a pause slows the upgrade down but never stops it
                limit = started + (timeout if self._count else max(timeout, HOLD_MAX))
                if now >= limit:
                    return False
                # a hold ends without a notify: look again when it ends (or at the limit)
                wake = limit if self._count else min(limit, self._quiet_from)
                self._changed.wait(max(0.0, wake - now))


@dataclass(frozen=True)
class Status:
    """Where a vault's upgrade stands (what `stats` shows)."""

    state: State
    reason: str  # in words a person reads
    sections: int = 0  # the vault's sections
    covered: int = 0  # of them, those whose text MiniLM has embedded already

    @property
    def left(self) -> int:
        return max(0, self.sections - self.covered)

    @property
    def minutes_left(self) -> int:
        """About how many minutes of one core the rest costs (0 when nothing is left)."""
        return embed_choice.upgrade_minutes(self.left) if self.left else 0


@dataclass(frozen=True)
class Step:
    """What one step did."""

    embedded: int  # texts embedded and kept in the cache
    status: Status  # where the upgrade stands after it
    swapped: bool = False  # this step replaced the vectors: the index uses MiniLM now


@dataclass(frozen=True)
class Report:
    """What a `Background` upgrade tells its front-end after each step (from its thread)."""

    status: Status | None  # where it stands (None: a failure came before any answer)
    swapped: bool = False  # this step made the swap: meaning search uses MiniLM from now on
    problem: str | None = None  # why it cannot go on now, in words, with what to run
    failed: bool = False  # the problem is a failure (else: MiniLM is not installed)
    busy_since: float | None = None  # another reindex or upgrade holds the index's lock
    # since this moment (time.monotonic()): it tries again every BUSY_RETRY seconds


@dataclass(frozen=True)
class Outcome:
    """What running the upgrade to its end did (`vaultmem upgrade-model`)."""

    status: Status  # after it
    embedded: int  # texts embedded by this run
    seconds: float
    swapped: bool  # this run made the swap


def minilm_name() -> str:
    from vaultmem.embed import MiniLMEmbedder

    return MiniLMEmbedder.name


class Upgrade:
    """One vault's upgrade (`vault.embed_upgrade`): its status, a step, the whole of it."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self._model: Embedder | None = None
        self._model_lock = threading.Lock()
        self._unsaved: list[tuple[str, bytes]] = []  # a batch the lock kept out, for later

    # ---- where it stands

    def status(self) -> Status:
        """Whether an upgrade is pending, and how far it got (read in one snapshot)."""
        conn = self.vault.conn
        with store.snapshot(conn):
            return self._status(conn)

    def _status(self, conn: store.Connection) -> Status:
        vault = self.vault
        model = store.get_meta(conn, "embed_model")
        held = embed_choice.model_spec(model)
        choice = embed_choice.recorded(conn)
        sections = store.section_count(conn)
        if vault.named_embedder() is not None:
            return Status(
                "none",
                "the model was named (--embedder, $VAULTMEM_EMBEDDER or the "
                "config's `embedder`): it is kept",
                sections,
            )
        if choice is None or choice.by != "auto" or choice.why == "kept":
            return Status(
                "none",
                "the index's vectors are from a model chosen by hand or before `auto` "
                "(`vaultmem reindex --embeddings` lets auto choose)",
                sections,
            )
        if held == embed_choice.MINILM_SPEC:
            if choice.why == "upgraded":
                return Status("upgraded", choice.reason, sections, sections)
            return Status("none", "the index uses all-MiniLM-L6-v2 already", sections, sections)
        if held != embed_choice.WORDLLAMA_SPEC or choice.why not in ("large", "absent"):
            return Status("none", "nothing to upgrade", sections)
        if choice.why == "absent" and sections <= vault.auto_limit():
            return Status(
                "none",
                "a vault this small moves to all-MiniLM-L6-v2 at its next `vaultmem reindex` "
                "once the model is installed",
                sections,
            )
        if sections > embed_choice.UPGRADE_LIMIT:
            return Status(
                "none",
                f"the vault has {sections:,} sections, past the {embed_choice.UPGRADE_LIMIT:,} "
                "up to which it is moved to all-MiniLM-L6-v2 (`vaultmem --embedder minilm "
                f"reindex --embeddings` embeds it anyway: {embed_choice.upgrade_cost(sections)})",
                sections,
            )
        if not _installed():
            from vaultmem.encoder import INSTALL_HINT

            return Status("unavailable", f"wordllama stays: {INSTALL_HINT}", sections)
        chunks, covered = store.cache_coverage(conn, minilm_name())
        return Status(
            "pending",
            f"all-MiniLM-L6-v2 has embedded {covered:,} of {chunks:,} sections; the vault "
            "moves to it once it has them all",
            chunks,
            covered,
        )

    # ---- doing it

    def model(self) -> Embedder:
        """MiniLM, loaded once (UsageError with what to install when it is not)."""
        with self._model_lock:
            if self._model is None:
                from vaultmem.embed import make_embedder

                self._model = make_embedder(embed_choice.MINILM_SPEC)
            return self._model

    def step(
        self,
        batch: int = BATCH,
        wait: float = 60.0,
        on_wait: Callable[[str], None] | None = None,
        progress: Callable[[int], None] | None = None,
        stop: threading.Event | None = None,
    ) -> Step:
        """Embed up to `batch` texts MiniLM has not, and keep them; or, when there are none
        left, the swap. `progress(texts)` within the batch; `stop` set: the batch in flight is
        dropped (nothing half-kept). IndexBusy when the lock is held past `wait`."""
        from vaultmem import indexer

        now = self.status()
        if now.state != "pending":
            return Step(0, now)
        model = self.model()
        conn = self.vault.conn
        if self._unsaved:  # embedded while the lock was held: kept now, not embedded again
            unsaved, self._unsaved = self._unsaved, []
            self._keep(model, unsaved, wait, on_wait)
            return Step(len(unsaved), self.status())
        todo = store.uncached_chunks(conn, model.name, batch)
        if not todo:
            return self._swap(model, wait, on_wait)
        texts = store.chunk_texts(conn, [i for i, _ in todo])
        todo = [(i, h) for i, h in todo if i in texts]  # a section gone since: skipped
        rows: list[tuple[str, bytes]] = []
        for start in range(0, len(todo), CALL):
            if stop is not None and stop.is_set():
                return Step(0, now)
            self.vault.calls.wait_idle(YIELD_MAX)
            part = todo[start : start + CALL]
            vectors = model.embed([indexer.embedded_text(model, texts[i]) for i, _ in part])
            rows += [
                (h, v.astype("float32").tobytes()) for (_, h), v in zip(part, vectors, strict=True)
            ]
            if progress is not None:
                progress(len(rows))
        self._keep(model, rows, wait, on_wait)
        return Step(len(rows), self.status())

    def _keep(
        self,
        model: Embedder,
        rows: list[tuple[str, bytes]],
        wait: float,
        on_wait: Callable[[str], None] | None,
    ) -> None:
        """Commit a batch to the cache under the lock; held for the next step when the lock
        stays busy (IndexBusy): a long reindex never makes the work be done twice."""
        from vaultmem import indexer

        conn = self.vault.conn
        try:
            with indexer.lock(self.vault.index_path, wait, on_wait), store.transaction(conn):
                store.cache_vectors(conn, model.name, rows)
        except IndexBusy:
            self._unsaved = rows
            raise

    def _swap(self, model: Embedder, wait: float, on_wait: Callable[[str], None] | None) -> Step:
        """Every vector replaced by MiniLM's from the cache, in one transaction under the
        lock, if the upgrade is still pending and the cache still covers every section."""
        from vaultmem import indexer

        conn = self.vault.conn
        with indexer.lock(self.vault.index_path, wait, on_wait):
            with store.transaction(conn):
                now = self._status(conn)
                if now.state != "pending" or now.left:
                    return Step(0, now)
                width = model.dim * 4
                if store.cached_widths(conn, model.name) - {width}:
                    # vectors cached by another version of the model: embedded again
                    store.forget_cached_widths(conn, model.name, width)
                    return Step(0, self._status(conn))
                store.vectors_from_cache(conn, model.name, model.dim)
                choice = embed_choice.Choice(
                    embed_choice.MINILM_SPEC,
                    "auto",
                    "upgraded",
                    now.sections,
                    self.vault.auto_limit(),
                )
                embed_choice.record(conn, choice, model.name)
                # what warm processes watch: they load the new vectors and query model
                store.set_meta(conn, "generation", str(store.generation(conn) + 1))
            store.checkpoint(conn)
        return Step(0, self.status(), swapped=True)

    def run(
        self,
        progress: Callable[[int, int], None] | None = None,
        wait: float = 60.0,
        on_wait: Callable[[str], None] | None = None,
        batch: int = BATCH,
    ) -> Outcome:
        """Steps until the swap (or until nothing is pending); `progress(done, total)`.
        Interrupted (Ctrl+C), every finished batch is kept: running it again goes on."""
        started = time.perf_counter()
        embedded = 0
        while True:
            current = self.status()
            if current.state == "unavailable":
                raise UsageError(current.reason)

            def within(rows: int, before: int = embedded, left: int = current.left) -> None:
                if progress is not None:
                    progress(before + rows, before + left)

            step = self.step(batch, wait, on_wait, within)
            embedded += step.embedded
            if progress is not None:
                progress(embedded, embedded + step.status.left)
            if step.swapped or step.status.state != "pending":
                return Outcome(
                    step.status, embedded, round(time.perf_counter() - started, 3), step.swapped
                )


class Background:
    """The upgrade's steps in a thread of a long-running front-end, at idle priority: it
    looks again now and then while nothing is pending (a vault may grow past the limit)."""

    def __init__(
        self,
        vault: Vault,
        idle_check: float = IDLE_CHECK,
        listener: Callable[[Report], None] | None = None,
    ) -> None:
        self.vault = vault
        self.idle_check = idle_check
        self.listener = listener  # told a Report after every step, on this thread
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.swapped = threading.Event()  # set once this thread made the swap
        self.last: Status | None = None  # the status after the last step

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="vaultmem-upgrade", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the call to the model in flight (a batch not committed is dropped)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        _idle_priority()
        upgrade = self.vault.embed_upgrade
        said: str | None = None
        busy_since: float | None = None
        with contextlib.suppress(Exception):  # where it stands before the first batch: a
            # front-end shows it at once (a step can take a minute on a loaded machine)
            now = upgrade.status()
            if now.state == "pending":
                self.last = now
                self._tell(Report(now))
        while not self._stop.is_set():
            pause = 0.0
            report: Report
            try:
                step = upgrade.step(wait=0.0, stop=self._stop)
                busy_since = None
                self.last = step.status
                report = Report(step.status, swapped=step.swapped)
                if step.swapped:
                    log.info(
                        "vaultmem: meaning search moved to all-MiniLM-L6-v2 (%s)",
                        step.status.reason,
                    )
                    self._after_swap()
                    self.swapped.set()
                elif step.status.state != "pending":
                    if step.status.state == "unavailable":
                        report = Report(step.status, problem=_waits(step.status.reason))
                        if said != step.status.reason:
                            said = step.status.reason
                            log.warning("vaultmem: %s", report.problem)
                    pause = self.idle_check
            except IndexBusy:
                busy_since = busy_since or time.monotonic()
                report = Report(self.last, busy_since=busy_since)
                pause = BUSY_RETRY  # a reindex or another upgrade: after it
            except Exception as exc:  # the model failed, the index went, a bug:
                # said (once), tried again later; the front-end keeps serving on wordllama
                problem = _failed(exc)
                report = Report(self.last, problem=problem, failed=True)
                if said != problem:
                    said = problem
                    trace = not isinstance(exc, VaultmemError)  # a bug: where it happened
                    log.warning("vaultmem: %s", problem, exc_info=trace)
                pause = FAILED_RETRY
            self._tell(report)
            if pause:
                self._stop.wait(pause)

    def _tell(self, report: Report) -> None:
        if self.listener is None:
            return
        try:
            self.listener(report)
        except Exception:  # a front-end's listener never stops the upgrade
            log.exception("vaultmem: the upgrade's listener failed")

    def _after_swap(self) -> None:
        """Ready this process for the new model before its next search needs it: the query
        model loaded, and the vectors in memory when they were there."""
        with contextlib.suppress(VaultmemError):
            self.vault.embedder()
            if self.vault.index.matrix is not None:
                self.vault.warm(background=False)


def _waits(reason: str) -> str:
    """What a person is told when MiniLM is not installed (`reason` says what to install)."""
    return (
        f"the upgrade of meaning search to all-MiniLM-L6-v2 waits: {reason}; "
        "then run `vaultmem upgrade-model`"
    )


def _failed(exc: Exception) -> str:
    """What a person is told when a step failed: what went wrong and what to run."""
    what = str(exc) or type(exc).__name__
    if not isinstance(exc, VaultmemError):
        what = f"{type(exc).__name__}: {what}"
    return (
        f"the upgrade of meaning search to all-MiniLM-L6-v2 failed ({what}); searches go on "
        "with wordllama. Run `vaultmem upgrade-model` to see why and go on with it"
    )


def _idle_priority() -> None:
    """This thread at the lowest priority (Linux sets it per thread): searches, writes and
    every other program come first."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


def _installed() -> bool:
    from vaultmem.encoder import find_minilm

    return find_minilm() is not None
