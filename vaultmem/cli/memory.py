"""`vaultmem fact|episode|episodes|trends|loops|loop|recall|gate`: the memory commands.

Each is its options, one call to `vault.memory`, and the answer printed as text or JSON.
Writes (`fact set`, `episode add`, `loop add`, `loop resolve`) go through the one write path.
"""

from __future__ import annotations

import datetime as dt
import sys
from typing import cast

import click

from vaultmem import dialect
from vaultmem.cli.context import (
    Ctx,
    emit_json,
    entities_option,
    json_option,
    note_path,
    plural,
)
from vaultmem.errors import VaultmemError
from vaultmem.memories import Written
from vaultmem.memory import episodes as ep
from vaultmem.memory import loops as lp
from vaultmem.memory import recall as rc
from vaultmem.memory.when import EXAMPLES, resolve

TIME_HELP = f"a date or a time form ({EXAMPLES})"


def register_commands(cli: click.Group) -> None:
    for command in (fact_group, episode_group, episodes_cmd, trends_cmd, loops_cmd, loop_group):
        cli.add_command(command)
    cli.add_command(recall_cmd)
    cli.add_command(gate_cmd)
    cli.add_command(salience_cmd)
    cli.add_command(prune_cmd)


# --------------------------------------------------------------------------- time options


def now_of(text: str | None) -> dt.datetime:
    """--now: an ISO date or date-time (UTC unless it says), a time form (noon UTC of its first
    day), else the clock."""
    if text is None:
        return dt.datetime.now(dt.UTC)
    try:
        stamp = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        day = resolve(text, dt.datetime.now(dt.UTC).date()).start
        return dt.datetime.combine(day, dt.time(12), tzinfo=dt.UTC)
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)


def _first(text: str | None, today: dt.date) -> dt.date | None:
    return resolve(text, today).start if text else None


def _last(text: str | None, today: dt.date, future: bool = False) -> dt.date | None:
    return resolve(text, today, future=future).end if text else None


now_option = click.option(
    "--now", "now_text", metavar="WHEN", help="Fix the clock (ISO date-time or a time form)."
)


# --------------------------------------------------------------------------- facts


@click.group("fact")
def fact_group() -> None:
    """Facts: `key:: value` lines in entity notes, with their `was::` history."""


@fact_group.command("set")
@click.argument("entity", callback=note_path)
@click.argument("key")
@click.argument("value")
@click.option("--source", metavar="TEXT", help="Where the value came from (kept with it).")
@click.option("--line", type=click.IntRange(min=1), help="Which line, when KEY is on several.")
@click.option(
    "--create", is_flag=True, help="Make the entity's note in the entities folder if none exists."
)
@click.pass_obj
def fact_set_cmd(
    obj: Ctx, entity: str, key: str, value: str, source: str | None, line: int | None, create: bool
) -> None:
    """Set KEY to VALUE in ENTITY's note (a title, alias or path).

    \b
    A new value rewrites the line and keeps the old one below it:
        - role:: CTO ^f-1a2b
            - was:: CEO (until 2026-11-30)
    The same value again (ignoring case, spacing and punctuation) changes nothing.
    Exit codes: 0 set or unchanged, 1 not found or ambiguous, 2 a value refused,
    6 the note changed on disk while it was written (nothing written: run it again).
    """
    done = obj.vault.memory.set_fact(entity, key, value, source=source, create=create, line=line)
    _say(done)


def _say(done: Written) -> None:
    click.echo(done.plan.message)


@fact_group.command("get")
@click.argument("entity", callback=note_path)
@click.argument("key", required=False)
@json_option("the facts")
@click.pass_obj
def fact_get_cmd(obj: Ctx, entity: str, key: str | None, as_json: bool) -> None:
    """ENTITY's current facts (or KEY's), each with the line it lives on."""
    found = obj.vault.memory.facts(entity, key)
    if as_json:
        emit_json(dialect.entity_facts(found))
        return
    if not found.facts:
        click.echo(f"{found.path}: no {'`' + key + '` fact' if key else 'facts'}", err=True)
        sys.exit(1)
    for f in found.facts:
        where = f"{found.path}#^{f.block}" if f.block else f"{found.path}:{f.line}"
        old = f"  ({plural(len(f.history), 'earlier value')})" if f.history else ""
        click.echo(f"{f.key}: {f.value}  [{where}]{old}")


@fact_group.command("history")
@click.argument("entity", callback=note_path)
@click.argument("key")
@json_option("the chain of values")
@click.pass_obj
def fact_history_cmd(obj: Ctx, entity: str, key: str, as_json: bool) -> None:
    """KEY's values in ENTITY's note, newest first, with the day each stopped being current."""
    found = obj.vault.memory.fact_history(entity, key)
    if as_json:
        emit_json(dialect.entity_facts(found))
        return
    for f in found.facts:
        since = f" (since {f.changed.isoformat()})" if f.changed else ""
        origin = f", source: {f.source}" if f.source else ""
        click.echo(f"{f.key}: {f.value}{since}{origin}  [{found.path}:{f.line}]")
        for h in f.history:
            until = h.until.isoformat() if h.until else "?"
            origin = f", source: {h.source}" if h.source else ""
            click.echo(f"  was {h.value} (until {until}{origin})")


@fact_group.command("list")
@click.option("--key", metavar="KEY", help="Only this key.")
@click.option(
    "--since",
    "since_text",
    metavar="WHEN",
    help=f"Set on or after: {TIME_HELP}. A fact without history (a new key, a property)"
    " counts from its note's last change.",
)
@json_option("the facts")
@click.pass_obj
def fact_list_cmd(obj: Ctx, key: str | None, since_text: str | None, as_json: bool) -> None:
    """Facts across the vault, newest change first.

    A fact's date is the day its value was set: the newest `(until DAY)` of its history. A fact
    without history has no date of its own; the day its note last changed (its file time) is
    the latest it can have been set, so `--since` keeps it only when the note changed since.
    """
    since = _first(since_text, dt.date.today())
    rows = obj.vault.memory.fact_list(key, since)
    if as_json:
        emit_json(dialect.fact_list(rows))
        return
    for r in rows:
        click.echo(f"{r.title}: {r.fact.key} = {r.fact.value}  [{r.path}:{r.fact.line}]")
    if not rows:
        click.echo("no facts", err=True)


# --------------------------------------------------------------------------- episodes


@click.group("episode")
def episode_group() -> None:
    """Episodes: notes of what happened, with an outcome (`episodes` lists them)."""


@episode_group.command("add")
@click.argument("title")
@click.option(
    "--outcome",
    type=click.Choice(ep.OUTCOMES),
    required=True,
    help="How it ended (or that it goes on).",
)
@entities_option("What it was about.")
@click.option("--date", "date_text", metavar="WHEN", help=f"When it happened ({TIME_HELP}).")
@click.option("--duration", metavar="TIME", help="How long it took (45m, 1.5 hours).")
@click.option("--procedure", metavar="NOTE", help="The procedure it followed.")
@click.option("--body", metavar="TEXT", default="", help="What happened; `-` reads stdin.")
@now_option
@click.pass_obj
def episode_add_cmd(
    obj: Ctx,
    title: str,
    outcome: str,
    entities: tuple[str, ...],
    date_text: str | None,
    duration: str | None,
    procedure: str | None,
    body: str,
    now_text: str | None,
) -> None:
    """Write an episode note `episodes/YYYY-MM-DD TITLE.md` (never over another note)."""
    now = now_of(now_text)
    when: dt.datetime | dt.date | None = None
    if date_text:
        try:
            stamp = dt.datetime.fromisoformat(date_text.strip().replace("Z", "+00:00"))
            when = stamp if "T" in date_text or " " in date_text.strip() else stamp.date()
            if isinstance(when, dt.datetime) and when.tzinfo is None:
                when = when.replace(tzinfo=dt.UTC)
        except ValueError:
            when = resolve(date_text, now.date()).start
    text = sys.stdin.read() if body == "-" else body
    done = obj.vault.memory.add_episode(
        title,
        outcome,
        when=when,
        entities=entities,
        duration=duration,
        procedure=procedure,
        body=text,
        now=now,
    )
    _say(done)


@click.command("episodes")
@click.option("--since", "since_text", metavar="WHEN", help=f"From ({TIME_HELP}).")
@click.option("--until", "until_text", metavar="WHEN", help="Up to and including.")
@click.option("--outcome", type=click.Choice(ep.OUTCOMES), help="Only episodes with this outcome.")
@entities_option("About this note.")
@now_option
@json_option("the episodes")
@click.pass_obj
def episodes_cmd(
    obj: Ctx,
    since_text: str | None,
    until_text: str | None,
    outcome: str | None,
    entities: tuple[str, ...],
    now_text: str | None,
    as_json: bool,
) -> None:
    """Episodes, newest first ("7 days ago", "last week", "yesterday", ISO dates...), none
    after the clock (--now sets it back: what had not happened then stays out)."""
    now = now_of(now_text)
    today = now.date()
    found = obj.vault.memory.episodes(
        since=_first(since_text, today),
        until=_last(until_text, today),
        outcome=cast(ep.Outcome | None, outcome),
        entities=entities,
        now=now,
    )
    if as_json:
        emit_json(dialect.episodes(found))
        return
    for e in found:
        about = f"  ({', '.join(e.entities)})" if e.entities else ""
        click.echo(f"{e.day.isoformat()}  {e.outcome or '?':<8}  {e.title}{about}  [{e.path}]")
    if not found:
        click.echo("no episodes", err=True)


@click.command("trends")
@click.argument("entity", callback=note_path)
@click.option(
    "--granularity",
    type=click.Choice(ep.GRANULARITIES),
    default="week",
    show_default=True,
    help="The length of each period.",
)
@click.option("--since", "since_text", metavar="WHEN", help=f"From ({TIME_HELP}).")
@now_option
@json_option("the periods")
@click.pass_obj
def trends_cmd(
    obj: Ctx,
    entity: str,
    granularity: str,
    since_text: str | None,
    now_text: str | None,
    as_json: bool,
) -> None:
    """ENTITY's episode outcomes per period: counts, success and failure rates."""
    today = now_of(now_text).date()
    since = _first(since_text, today)
    rows = obj.vault.memory.trends(
        entity,
        cast(ep.Granularity, granularity),
        since=since,
        until=today if since else None,
    )
    if as_json:
        emit_json(dialect.trends(entity, granularity, rows))
        return
    for r in rows:
        rate = f"{r.success_rate:.0%} success" if r.success_rate is not None else "-"
        click.echo(
            f"{r.period:<10}  success {r.success}  failure {r.failure}  resolved {r.resolved}"
            f"  ongoing {r.ongoing}  {rate}"
        )
    if not rows:
        click.echo(f"no episodes about {entity}", err=True)


# --------------------------------------------------------------------------- loops


@click.command("loops")
@entities_option("About this note.")
@click.option("--due-before", "due_text", metavar="WHEN", help=f"Due by ({TIME_HELP}).")
@click.option("--priority", type=click.Choice(lp.PRIORITIES), help="At least this priority.")
@now_option
@json_option("the loops, with their ids")
@click.pass_obj
def loops_cmd(
    obj: Ctx,
    entities: tuple[str, ...],
    due_text: str | None,
    priority: str | None,
    now_text: str | None,
    as_json: bool,
) -> None:
    """Open loops (every unchecked task), most pressing first: due date, priority, age."""
    today = now_of(now_text).date()
    ranked = obj.vault.memory.loops(
        today,
        entities=entities,
        due_before=_last(due_text, today, future=True),
        priority=cast(lp.Priority | None, priority),
    )
    if as_json:
        emit_json(dialect.loops(ranked))
        return
    for r in ranked:
        why = f"  ({', '.join(r.reasons)})" if r.reasons else ""
        click.echo(f"{r.loop.id}  {r.loop.title}{why}  [{r.loop.path}:{r.loop.line}]")
    if not ranked:
        click.echo("no open loops", err=True)


@click.group("loop")
def loop_group() -> None:
    """Add an open loop to a note, or resolve one (check it in place)."""


@loop_group.command("add")
@click.argument("text")
@click.option(
    "--note",
    "note_ref",
    callback=note_path,
    required=True,
    metavar="NOTE",
    help="The note it goes in.",
)
@click.option("--due", "due_text", metavar="WHEN", help=f"Due date ({TIME_HELP}).")
@click.option("--priority", type=click.Choice(lp.PRIORITIES), help="How pressing it is.")
@click.pass_obj
def loop_add_cmd(
    obj: Ctx, text: str, note_ref: str, due_text: str | None, priority: str | None
) -> None:
    """Append `- [ ] TEXT` to NOTE's open loops section (made when missing)."""
    today = dt.date.today()
    due = resolve(due_text, today, future=True).start if due_text else None
    done = obj.vault.memory.add_loop(
        text, note_ref, due=due, priority=cast(lp.Priority | None, priority)
    )
    _say(done)


@loop_group.command("resolve")
@click.argument("ref")
@click.pass_obj
def loop_resolve_cmd(obj: Ctx, ref: str) -> None:
    """Check the loop REF names (an id from `loops`, or its text) with today's date.

    Several loops matching REF are listed and nothing changes; a task edited or checked in
    Obsidian since it was listed is reported and left alone (exit 1).
    """
    _say(obj.vault.memory.resolve_loop(ref))


# --------------------------------------------------------------------------- recall, gate


@click.command("recall")
@click.argument("message")
@click.option(
    "--days",
    type=click.IntRange(min=1),
    default=rc.DEFAULT_DAYS,
    show_default=True,
    help="How many days back an episode counts as recent work.",
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=rc.DEFAULT_BUDGET,
    show_default=True,
    metavar="CHARS",
    help="The most characters the block may take.",
)
@click.option("--include-expired", is_flag=True, help="Keep notes past their decay tier.")
@now_option
@json_option("the block and its lines")
@click.pass_obj
def recall_cmd(
    obj: Ctx,
    message: str,
    days: int,
    budget: int,
    include_expired: bool,
    now_text: str | None,
    as_json: bool,
) -> None:
    """The context for MESSAGE: when it continues earlier work, the entity's open loops, recent
    episodes and facts in one block within --budget characters; else the best search hits."""
    found = obj.vault.memory.recall(
        message,
        now_of(now_text),
        days=days,
        budget=budget,
        include_expired=include_expired,
    )
    if as_json:
        emit_json(dialect.recall(found))
        return
    if found.text:
        click.echo(found.text)
    else:
        click.echo("nothing relevant stored", err=True)


@click.command("gate")
@click.argument("message")
@click.option("--llm", "llm_spec", metavar="SPEC", help="Ask this model too (ollama:MODEL…).")
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=rc.DEFAULT_BUDGET,
    show_default=True,
    metavar="CHARS",
    help="The most characters the context may take.",
)
@now_option
@json_option("the decision (and its context)")
@click.pass_obj
def gate_cmd(
    obj: Ctx,
    message: str,
    llm_spec: str | None,
    budget: int,
    now_text: str | None,
    as_json: bool,
) -> None:
    """Does MESSAGE need memory? Exit 0 with the context (it does), 2 (no memory needed),
    3 (it would, but nothing relevant is stored), 1 on error. Works offline."""
    try:
        llm = None
        if llm_spec:
            from vaultmem.llm import make_llm

            llm = make_llm(llm_spec)
        result = obj.vault.memory.gate(message, now_of(now_text), llm=llm, budget=budget)
    except VaultmemError as exc:  # 2 and 3 are answers here: every error is 1
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if result.notice:
        click.echo(f"notice: {result.notice}", err=True)
    if as_json:
        emit_json(dialect.gate(result))
    else:
        if result.context is not None and result.context.text:
            click.echo(result.context.text)
        click.echo(f"{result.decision.verdict}: {'; '.join(result.decision.reasons)}", err=True)
    sys.exit(result.decision.exit_code)


# --------------------------------------------------------------------------- salience


@click.command("salience")
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="How many notes and facts to list.",
)
@now_option
@json_option("the notes and facts, with their reasons")
@click.pass_obj
def salience_cmd(obj: Ctx, top: int, now_text: str | None, as_json: bool) -> None:
    """Notes and facts that deserve a look: importance (links in, centrality, open loops,
    facts) × staleness (how long since they changed)."""
    found = obj.vault.memory.salience(now_of(now_text), top)
    if as_json:
        emit_json(dialect.salience(found))
        return
    for s in found:
        click.echo(f"{s.score:6.2f}  {s.label}  ({', '.join(s.reasons)})  [{s.path}]")


# --------------------------------------------------------------------------- prune


@click.command("prune")
@click.option("--yes", is_flag=True, help="Move them to .trash/ (else only list them).")
@now_option
@json_option("the expired notes (and where each went)")
@click.pass_obj
def prune_cmd(obj: Ctx, yes: bool, now_text: str | None, as_json: bool) -> None:
    """Notes past their decay tier's lifetime (`decay:` in front matter), longest expired
    first; with --yes, moved to .trash/ (restorable, purged after 30 days)."""
    memory = obj.vault.memory
    now = now_of(now_text)
    found = memory.expired(now)
    moved: list[str | None] | None = None
    if yes and found:
        moved = [t.entry.path for t in memory.prune(now)]
    if as_json:
        emit_json(dialect.prune(found, moved if yes else None))
        return
    for (path, e), there in zip(found, moved or [None] * len(found), strict=False):
        when = e.expires.date().isoformat() if e.expires else "?"
        shown = f"  -> {there}" if there else ""
        click.echo(f"{path}  ({e.tier}, expired {when}){shown}")
    if not found:
        click.echo("no expired notes", err=True)
    elif not yes:
        click.echo(
            f"{plural(len(found), 'note')} expired: `vaultmem prune --yes` moves them to .trash/",
            err=True,
        )
