"""The memory tools: facts (`store_fact`, `fact_history`), episodes (`add_episode`,
`episodes`), open loops (`open_loops`, `resolve_loop`), `recall` and the `gate`.

The write tools say so in their annotations (not read-only, not destructive: nothing is ever
deleted), take the note's digest as a precondition where they change an existing note, and
write only through the vault's one write path, inside the vault.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Annotated, Literal

from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from vaultmem import dialect
from vaultmem.memory import recall as rc
from vaultmem.memory.when import resolve
from vaultmem.server.runner import Runner, structured
from vaultmem.server.schema import NoteRef, make_tool

if TYPE_CHECKING:
    from vaultmem.vault import Vault

# Writes that add or change text and never delete; setting the same fact twice changes nothing.
WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
WRITES_IDEMPOTENT = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

When = Annotated[
    str | None,
    Field(
        max_length=100,
        description="A date or a time form: 2026-11-30, yesterday, 7 days ago, last week, "
        "this month, last 30 days, monday, march.",
    ),
]
Now = Annotated[
    str | None,
    Field(max_length=40, description="Fix the clock (ISO date-time); omit for now."),
]
Digest = Annotated[
    str | None,
    Field(
        max_length=128,
        description="The note's digest as you read it (fact_history gives it): the write is "
        "refused when the note changed since.",
    ),
]
Outcome = Annotated[
    Literal["success", "failure", "resolved", "ongoing"],
    Field(description="How it ended: success, failure, resolved or ongoing."),
]
Priority = Annotated[
    Literal["highest", "high", "medium", "low", "lowest"] | None,
    Field(description="Only loops of at least this priority."),
]
Message = Annotated[str, Field(min_length=1, max_length=100_000, description="The user's message.")]


def tools(runner: Runner) -> list[Tool]:
    async def store_fact(
        entity: NoteRef,
        key: Annotated[str, Field(min_length=1, max_length=100, description="The fact's key.")],
        value: Annotated[
            str, Field(min_length=1, max_length=1000, description="The value, one line.")
        ],
        source: Annotated[
            str | None, Field(max_length=300, description="Where the value came from.")
        ] = None,
        create: Annotated[
            bool, Field(description="Make the entity's note when none has that name.")
        ] = False,
        digest: Digest = None,
    ) -> Annotated[CallToolResult, dialect.WrittenOut]:
        """Store a fact `key:: value` in an entity's note. A changed value keeps the old one as
        history right below it (`was:: old (until DAY)`); the same value again changes nothing
        (status `unchanged`). Undo by editing the note: nothing is ever deleted."""
        return await runner.answer(
            _store_fact, runner.vault, entity, key, value, source, create, digest
        )

    async def fact_history(
        entity: NoteRef,
        key: Annotated[str, Field(min_length=1, max_length=100, description="The fact's key.")],
    ) -> Annotated[CallToolResult, dialect.EntityFactsOut]:
        """A fact's current value and its earlier values, newest first, each with the day it
        stopped being current and where it came from; also the note's digest for store_fact."""
        return await runner.answer(_fact_history, runner.vault, entity, key)

    async def add_episode(
        title: Annotated[str, Field(min_length=1, max_length=300, description="What happened.")],
        outcome: Outcome,
        entities: Annotated[
            list[str], Field(max_length=50, description="The notes it was about (names).")
        ] = [],  # noqa: B006 - the SDK copies defaults into the schema; never mutated
        date: Annotated[
            str | None, Field(max_length=40, description="When (ISO date or date-time).")
        ] = None,
        duration: Annotated[str | None, Field(max_length=40, description="e.g. 45m")] = None,
        procedure: Annotated[
            str | None, Field(max_length=300, description="The procedure followed.")
        ] = None,
        body: Annotated[str, Field(max_length=100_000, description="What happened.")] = "",
    ) -> Annotated[CallToolResult, dialect.WrittenOut]:
        """Write an episode note `episodes/YYYY-MM-DD TITLE.md` (a new note, never over one)."""
        return await runner.answer(
            _add_episode, runner.vault, title, outcome, entities, date, duration, procedure, body
        )

    async def episodes(
        since: When = None,
        until: When = None,
        outcome: Annotated[
            Literal["success", "failure", "resolved", "ongoing"] | None,
            Field(description="Only episodes with this outcome."),
        ] = None,
        entity: Annotated[str | None, Field(max_length=300, description="About this note.")] = None,
        now: Now = None,
    ) -> Annotated[CallToolResult, dialect.EpisodesOut]:
        """Episodes (what happened, with an outcome), newest first."""
        return await runner.answer(_episodes, runner.vault, since, until, outcome, entity, now)

    async def open_loops(
        entity: Annotated[str | None, Field(max_length=300, description="About this note.")] = None,
        due_before: When = None,
        priority: Priority = None,
        now: Now = None,
    ) -> Annotated[CallToolResult, dialect.LoopsOut]:
        """Open loops (unchecked tasks) most pressing first, each with the `loop_id` that
        resolve_loop takes."""
        return await runner.answer(_open_loops, runner.vault, entity, due_before, priority, now)

    async def resolve_loop(
        ref: Annotated[
            str,
            Field(
                min_length=1,
                max_length=1000,
                description="A loop_id from open_loops, or text matching exactly one open loop.",
            ),
        ],
        digest: Digest = None,
    ) -> Annotated[CallToolResult, dialect.WrittenOut]:
        """Check an open loop in place with today's date (`- [x] text ✅ DAY`). Several matches
        are listed and nothing changes; a task edited since it was listed is left alone."""
        return await runner.answer(_resolve_loop, runner.vault, ref, digest)

    async def recall(
        message: Message,
        days: Annotated[int, Field(ge=1, le=3650, description="Recent episodes: days.")] = (
            rc.DEFAULT_DAYS
        ),
        budget: Annotated[int, Field(ge=100, le=100_000, description="Characters.")] = (
            rc.DEFAULT_BUDGET
        ),
        now: Now = None,
        include_expired: Annotated[
            bool,
            Field(
                description="Also use notes past their decay tier's lifetime (`decay:` in "
                "their front matter), left out by default."
            ),
        ] = False,
    ) -> Annotated[CallToolResult, dialect.RecallOut]:
        """The memory to continue from: when the message continues earlier work ("where did we
        leave off on X"), X's open loops, recent episodes and facts in one block within the
        budget; otherwise the best search hits. Each line says where it lives."""
        return await runner.answer(
            _recall, runner.vault, message, days, budget, now, include_expired
        )

    async def gate(message: Message, now: Now = None) -> Annotated[CallToolResult, dialect.GateOut]:
        """Does this message need the user's memory? `verdict`: needs-memory (with the context
        in `recall`), no-memory (decided without a search for greetings, general knowledge,
        self-contained requests) or nothing-stored. Offline and fast: call it first."""
        return await runner.answer(_gate, runner.vault, message, now)

    return [
        make_tool(store_fact, "store_fact", "Store a fact", WRITES_IDEMPOTENT),
        make_tool(fact_history, "fact_history", "A fact's history"),
        make_tool(add_episode, "add_episode", "Record an episode", WRITES),
        make_tool(episodes, "episodes", "List episodes"),
        make_tool(open_loops, "open_loops", "List open loops"),
        make_tool(resolve_loop, "resolve_loop", "Resolve an open loop", WRITES),
        make_tool(recall, "recall", "Recall context"),
        make_tool(gate, "gate", "Memory gate"),
    ]


def _now(text: str | None) -> dt.datetime:
    """`now`: an ISO date-time (UTC unless it says), a time form (noon UTC), else the clock."""
    if not text:
        return dt.datetime.now(dt.UTC)
    try:
        stamp = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        day = resolve(text, dt.datetime.now(dt.UTC).date()).start
        return dt.datetime.combine(day, dt.time(12), tzinfo=dt.UTC)
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)


def _store_fact(
    vault: Vault,
    entity: str,
    key: str,
    value: str,
    source: str | None,
    create: bool,
    digest: str | None,
) -> CallToolResult:
    done = vault.memory.set_fact(entity, key, value, source=source, create=create, digest=digest)
    return structured(dialect.written(done))


def _fact_history(vault: Vault, entity: str, key: str) -> CallToolResult:
    return structured(dialect.entity_facts(vault.memory.fact_history(entity, key)))


def _add_episode(
    vault: Vault,
    title: str,
    outcome: str,
    entities: list[str],
    date: str | None,
    duration: str | None,
    procedure: str | None,
    body: str,
) -> CallToolResult:
    when: dt.datetime | dt.date | None = None
    if date:
        try:
            stamp = dt.datetime.fromisoformat(date.strip().replace("Z", "+00:00"))
        except ValueError:
            when = resolve(date, dt.datetime.now(dt.UTC).date()).start
        else:
            when = stamp if "T" in date else stamp.date()
            if isinstance(when, dt.datetime) and when.tzinfo is None:
                when = when.replace(tzinfo=dt.UTC)
    done = vault.memory.add_episode(
        title,
        outcome,
        when=when,
        entities=entities,
        duration=duration,
        procedure=procedure,
        body=body,
    )
    return structured(dialect.written(done))


def _episodes(
    vault: Vault,
    since: str | None,
    until: str | None,
    outcome: Literal["success", "failure", "resolved", "ongoing"] | None,
    entity: str | None,
    now: str | None,
) -> CallToolResult:
    clock = _now(now)
    today = clock.date()
    found = vault.memory.episodes(
        since=resolve(since, today).start if since else None,
        until=resolve(until, today).end if until else None,
        outcome=outcome,
        entities=[entity] if entity else [],
        now=clock,
    )
    return structured(dialect.episodes(found))


def _open_loops(
    vault: Vault,
    entity: str | None,
    due_before: str | None,
    priority: Literal["highest", "high", "medium", "low", "lowest"] | None,
    now: str | None,
) -> CallToolResult:
    today = _now(now).date()
    ranked = vault.memory.loops(
        today,
        entities=[entity] if entity else [],
        due_before=resolve(due_before, today, future=True).end if due_before else None,
        priority=priority,
    )
    return structured(dialect.loops(ranked))


def _resolve_loop(vault: Vault, ref: str, digest: str | None) -> CallToolResult:
    return structured(dialect.written(vault.memory.resolve_loop(ref, digest=digest)))


def _recall(
    vault: Vault, message: str, days: int, budget: int, now: str | None, include_expired: bool
) -> CallToolResult:
    found = vault.memory.recall(
        message, _now(now), days=days, budget=budget, include_expired=include_expired
    )
    return structured(dialect.recall(found), found.text or "nothing relevant stored")


def _gate(vault: Vault, message: str, now: str | None) -> CallToolResult:
    result = vault.memory.gate(message, _now(now))
    data = dialect.gate(result)
    context = result.context.text if result.context else ""
    head = f"{result.decision.verdict}: {'; '.join(result.decision.reasons)}"
    return structured(data, f"{head}\n\n{context}" if context else head)
