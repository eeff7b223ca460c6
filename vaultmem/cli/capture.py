"""`vaultmem capture` (a transcript into a capture note) and `vaultmem review` (its items)."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from vaultmem.capture.candidates import Candidate
from vaultmem.capture.note import CaptureNote, Flag, Item
from vaultmem.capturing import CaptureResult, Decision
from vaultmem.cli.context import Ctx, emit_json, json_option, plural
from vaultmem.dialect import captures as capture_dialect
from vaultmem.errors import UsageError
from vaultmem.llm import make_llm
from vaultmem.memory.when import resolve


def register_commands(cli: click.Group) -> None:
    cli.add_command(capture_cmd)
    cli.add_command(review_group)


@click.command("capture")
@click.argument("file", required=False, default="-", metavar="[FILE|-]")
@click.option(
    "--source",
    "label",
    required=True,
    metavar="LABEL",
    help="Where the transcript came from, e.g. 'call with Maya' (names the capture note).",
)
@click.option("--persona", metavar="SLUG", help="The persona (agent) whose conversation it is.")
@click.option(
    "--session",
    metavar="NAME",
    help="Capture one session of a file holding several (LoCoMo `session_3`, a LongMemEval "
    "session id, a conversation's title, or its number).",
)
@click.option("--dry-run", is_flag=True, help="Show the candidates; write nothing.")
@click.option(
    "--llm",
    "llm_spec",
    metavar="SPEC",
    help="Extract with a text model instead of the offline rules: ollama:<model> or "
    "openai:<model>. Its output is checked against a schema; anything malformed writes nothing.",
)
@json_option("the capture")
@click.pass_obj
def capture_cmd(
    obj: Ctx,
    file: str,
    label: str,
    persona: str | None,
    session: str | None,
    dry_run: bool,
    llm_spec: str | None,
    as_json: bool,
) -> None:
    """Propose memories from a chat transcript, as one capture note in the inbox to review.

    FILE is plain text or markdown with speaker turns (`Maya: …`), a JSON list of
    {role, content} messages, a Claude or ChatGPT export, or a LoCoMo / LongMemEval file;
    `-` (the default) reads standard input. Candidates (facts, open loops, decisions and one
    episode) go into `inbox/YYYY-MM-DD LABEL.md`, each with its quote, turn and confidence,
    flagged when it repeats or contradicts a fact the vault holds; nothing else is written
    until you accept them (`vaultmem review`). The same transcript is never captured twice.

    Exit codes: 0 captured (or already captured, or nothing to capture), 2 bad transcript or
    arguments, 5 model server down or malformed model output.
    """
    vault = obj.vault
    captures = vault.captures
    if file == "-":
        stdin = sys.stdin.buffer
        if sys.stdin.isatty():
            raise UsageError("give a transcript FILE, or pipe one in (`… | vaultmem capture -`)")
        transcript = captures.read_transcript(stdin, "standard input")
    else:
        transcript = captures.read_transcript_file(Path(file))
    if session is not None:
        transcript = transcript.session(session)
    llm = make_llm(llm_spec) if llm_spec else None
    if llm_spec and llm is None:
        raise UsageError(f"--llm {llm_spec!r} names no model: use ollama:<model> or openai:<model>")
    result = captures.capture(transcript, source=label, persona=persona, llm=llm, dry_run=dry_run)
    if as_json:
        emit_json(capture_dialect.capture(result))
        return
    _print_capture(result, len(transcript.turns))


def _print_capture(result: CaptureResult, turns: int) -> None:
    if result.status == "already-captured":
        click.echo(f"already captured in {result.path}: this transcript was captured before;"
                   " nothing written")  # fmt: skip
        return
    if result.status == "nothing-to-capture":
        click.echo(
            f"nothing to capture in {plural(turns, 'turn')}: no statement passed the gates"
            " (`capture.min_confidence` in .vaultmem/config.toml); nothing written"
        )
        return
    counts: dict[str, int] = {}
    for c in result.candidates:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    summary = ", ".join(plural(n, kind) for kind, n in counts.items())
    where = result.path if result.status == "written" else "dry run, nothing written"
    click.echo(click.style(f"{where}: {summary} from {plural(turns, 'turn')}", bold=True))
    for c in result.candidates:
        click.echo("  " + _line(c, result.flags.get(c.id, ())))
    gated = result.gated
    if gated is not None and (gated.low_confidence or gated.too_short or gated.over_limit):
        click.echo(
            f"dropped: {gated.low_confidence} below the minimum confidence,"
            f" {gated.too_short} too short, {gated.over_limit} over the limit per capture",
            err=True,
        )
    for d in result.accepted:
        click.echo(f"auto-accepted {d.message}")
    if result.status == "written":
        click.echo(
            "review them: `vaultmem review` (or check and strike them in Obsidian)", err=True
        )


def _line(c: Candidate, flags: Sequence[Flag], status: str = "") -> str:
    what = f"{c.key}:: {c.value}" if c.kind == "fact" else c.value
    if c.kind == "episode":
        what = f"{c.entity} ({c.outcome}): {c.value}"
    due = f" (due {c.due.isoformat()})" if c.due else ""
    flagged = "".join(f"  {f.kind} [[{f.target}]]" for f in flags)
    mark = f"{status:9} " if status else ""
    entity = "" if c.kind == "episode" else f"[[{c.entity}]] "
    return f"{c.id}  {mark}{c.kind:8} {c.confidence:.2f}  {entity}{what}{due}{flagged}"


@click.group("review", invoke_without_command=True)
@json_option("the review queue")
@click.pass_context
def review_group(ctx: click.Context, as_json: bool) -> None:
    """Captured memories waiting for you: list them, then accept, edit or reject each.

    Accepting writes through the memory layer (a fact into its entity's note, keeping the
    old value as `was::` history; a loop as a task; the episode as an episode note), checks
    the item and records where it went; rejecting strikes it. Edits you made to a capture
    note in Obsidian count as they stand. A capture whose items are all decided is marked
    reviewed and moves to `inbox/processed/`.
    """
    if ctx.invoked_subcommand is not None:
        return
    obj: Ctx = ctx.obj
    notes = obj.vault.captures.pending()
    if as_json:
        emit_json(capture_dialect.review(notes))
        return
    if not notes:
        click.echo("nothing to review: `vaultmem capture FILE --source LABEL` proposes memories",
                   err=True)  # fmt: skip
        return
    total = sum(len(n.pending) for n in notes)
    click.echo(click.style(f"{plural(total, 'item')} to review in {plural(len(notes), 'capture')}",
                           bold=True))  # fmt: skip
    for note in notes:
        _print_note(note)
    click.echo("`vaultmem review accept ID…` / `reject ID…` / `edit ID --value V` / `undo`",
               err=True)  # fmt: skip


def _print_note(note: CaptureNote) -> None:
    h = note.header
    click.echo(
        f"\n{note.path}  ({h.source}, {h.extractor or 'by hand'}, {len(note.pending)} pending)"
    )
    for i in note.items:
        _print_item(i)


def _print_item(i: Item) -> None:
    click.echo("  " + _line(i.candidate, i.flags, i.status))
    if i.candidate.quote:
        turn = f" (turn {i.candidate.turn})" if i.candidate.turn else ""
        click.echo(f"      “{i.candidate.quote}”{turn}")


def _print_decisions(decisions: Sequence[Decision]) -> None:
    """What each decision did; exit 1 when any was refused (the others stand)."""
    for d in decisions:
        click.echo(d.message, err=d.status == "refused")
    if not decisions:
        click.echo("nothing to decide", err=True)
    if any(d.status == "refused" for d in decisions):
        raise click.exceptions.Exit(1)


@review_group.command("accept")
@click.argument("ids", nargs=-1, metavar="ID…")
@click.option("--all", "all_items", is_flag=True, help="Every pending item of every capture.")
@click.option(
    "--min-confidence",
    type=click.FloatRange(0, 1),
    metavar="X",
    help="Only items at or above this confidence.",
)
@click.pass_obj
def accept_cmd(
    obj: Ctx, ids: tuple[str, ...], all_items: bool, min_confidence: float | None
) -> None:
    """Accept items (ids from `vaultmem review`, or NOTE:ID) and write them into the vault."""
    if ids and all_items:
        raise UsageError("give item ids or --all, not both")
    decisions = obj.vault.captures.accept(ids, all_items=all_items, min_confidence=min_confidence)
    _print_decisions(decisions)


@review_group.command("reject")
@click.argument("ids", nargs=-1, required=True, metavar="ID…")
@click.pass_obj
def reject_cmd(obj: Ctx, ids: tuple[str, ...]) -> None:
    """Reject items: each is struck in its capture note, and nothing else is written."""
    _print_decisions(obj.vault.captures.reject(ids))


@review_group.command("undo")
@click.argument("item_id", metavar="[ID]", required=False)
@click.pass_obj
def undo_cmd(obj: Ctx, item_id: str | None) -> None:
    """Take back a decision (the latest, or the one on ID) while the notes it wrote are as it
    left them: they get their bytes back, a capture it finished returns to the inbox."""
    click.echo(obj.vault.captures.undo(item_id).message)


@review_group.command("edit")
@click.argument("item_id", metavar="ID")
@click.option("--value", help="The new value (a fact's value, a loop's or decision's text, "
              "the episode's summary).")  # fmt: skip
@click.option("--key", help="The fact's new key.")
@click.option("--entity", help="The note it belongs to.")
@click.option("--due", metavar="DATE", help="A loop's due date (2026-12-05, friday, next week).")
@click.pass_obj
def edit_cmd(
    obj: Ctx,
    item_id: str,
    value: str | None,
    key: str | None,
    entity: str | None,
    due: str | None,
) -> None:
    """Change a pending item before accepting it (the capture note is rewritten in place)."""
    day = resolve(due, dt.date.today(), future=True).start if due else None
    decision = obj.vault.captures.edit(item_id, value=value, key=key, entity=entity, due=day)
    click.echo(decision.message)
