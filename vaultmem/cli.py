"""The `vaultmem` command line: options, one core call, output as text or JSON.

Exit codes: 0 success; 1 not found, or `doctor` found index problems; 2 bad usage, missing vault
or bad config; 3 no index yet or an index from another schema; 4 another reindex holds the lock.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from vaultmem import __version__
from vaultmem.errors import VaultmemError
from vaultmem.indexer import Progress, ReindexReport
from vaultmem.search import MODES, Mode
from vaultmem.vault import (
    HIGHLIGHT_END,
    HIGHLIGHT_START,
    NoteInfo,
    SearchResult,
    Vault,
    locate_vault,
)

F = TypeVar("F", bound=Callable[..., Any])


class Ctx:
    def __init__(
        self, vault: str | None, index: str | None, embedder: str | None, llm: str | None
    ) -> None:
        self.vault_arg = vault
        self.index_arg = index
        self.embedder = embedder
        self.llm = llm
        self._vault: Vault | None = None

    @property
    def vault(self) -> Vault:
        if self._vault is None:
            root = locate_vault(self.vault_arg)
            index = Path(self.index_arg).expanduser().resolve() if self.index_arg else None
            self._vault = Vault(root, index)
            self._vault.embedder_spec = self.embedder
            self._vault.llm_spec = self.llm
        return self._vault


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, default=_json_default))


def _json_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _highlight(snippet: str) -> str:
    out = []
    for i, part in enumerate(
        snippet.replace(HIGHLIGHT_END, HIGHLIGHT_START).split(HIGHLIGHT_START)
    ):
        out.append(click.style(part, bold=True, fg="yellow") if i % 2 else part)
    return " ".join("".join(out).split())


@contextmanager
def _progress_bar() -> Iterator[Progress | None]:
    """A progress bar on stderr when it is a terminal; nothing when piped or in CI."""
    if not sys.stderr.isatty():
        yield None
        return
    bars: dict[str, Any] = {}

    def report(phase: str, done: int, total: int) -> None:
        if total < 200:
            return
        bar = bars.get(phase)
        if bar is None:
            label = {
                "parse": "indexing notes",
                "links": "resolving links",
                "embed": "embedding sections",
            }.get(phase, phase)
            bar = click.progressbar(length=total, label=label, file=sys.stderr)
            bar.__enter__()
            bars[phase] = bar
        bar.update(done - bar.pos)

    try:
        yield report
    finally:
        for bar in bars.values():
            bar.__exit__(None, None, None)


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--vault",
    "vault",
    metavar="PATH",
    envvar="VAULTMEM_VAULT",
    show_envvar=True,
    help="The vault folder (default: the current folder when it holds .obsidian or .vaultmem).",
)
@click.option(
    "--index",
    "index",
    metavar="PATH",
    help="Where the index lives (default: VAULT/.vaultmem/index.db); use it for a read-only vault.",
)
@click.option(
    "--embedder",
    metavar="SPEC",
    envvar="VAULTMEM_EMBEDDER",
    show_envvar=True,
    help="Embedding model: wordllama (bundled, default), ollama[:MODEL], openai:MODEL, "
    "sentence-transformers:NAME.",
)
@click.option(
    "--llm",
    metavar="SPEC",
    envvar="VAULTMEM_LLM",
    show_envvar=True,
    help="Text model for --hyde: ollama:MODEL or openai:MODEL.",
)
@click.version_option(__version__, prog_name="vaultmem")
@click.pass_context
def cli(
    ctx: click.Context,
    vault: str | None,
    index: str | None,
    embedder: str | None,
    llm: str | None,
) -> None:
    """vaultmem: your markdown vault as fast, searchable, graph-aware memory.

    Start with `vaultmem --vault PATH reindex`, then `vaultmem search WORDS`.
    """
    ctx.obj = Ctx(vault, index, embedder, llm)
    if ctx.invoked_subcommand is None:
        if sys.stdin.isatty() and sys.stdout.isatty() and _finds_vault(vault):
            ctx.invoke(tui)  # `vaultmem` alone in a terminal, in (or given) a vault: the app
            return
        click.echo(ctx.get_help())


def _finds_vault(given: str | None) -> bool:
    """Whether a vault was given or the current folder is one (else `vaultmem` prints help)."""
    if given:
        return True  # a bad --vault gets its error from the app's command, not silence
    try:
        locate_vault(None)
    except VaultmemError:
        return False
    return True


@cli.command()
@click.pass_obj
def tui(obj: Ctx) -> None:
    """Open the terminal app: search as you type, notes with their links, browse.

    `vaultmem` with no command does the same in a terminal. Keys: ctrl+p lists every action,
    ? (or F1) shows the keys of the screen you are on.
    """
    from vaultmem import tui as tui_app  # Textual loads only here: the CLI stays headless

    tui_app.run(obj.vault)


@cli.command()
@click.pass_obj
def init(obj: Ctx) -> None:
    """Make the vault a vaultmem vault (.vaultmem/config.toml) and build its index."""
    vault = obj.vault
    created = vault.init()
    click.echo(("created " if created else "kept ") + str(vault.root / ".vaultmem" / "config.toml"))
    with _progress_bar() as progress:
        report = vault.reindex(progress=progress)
    click.echo(report.summary())


@cli.command("reindex")
@click.option("--full", is_flag=True, help="Rebuild the index from scratch.")
@click.option(
    "--wait",
    type=float,
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for another running reindex before giving up.",
)
@click.option("--no-embed", is_flag=True, help="Skip making vectors (keyword search only).")
@click.option(
    "--embeddings",
    "redo_embeddings",
    is_flag=True,
    help="Make every vector again (after switching --embedder); the text index is kept.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_obj
def reindex_cmd(
    obj: Ctx, full: bool, wait: float, no_embed: bool, redo_embeddings: bool, as_json: bool
) -> None:
    """Bring the index in line with the vault (only changed files are parsed)."""
    vault = obj.vault
    if no_embed and redo_embeddings:
        raise click.UsageError("--no-embed and --embeddings contradict each other")

    def waiting(message: str) -> None:
        click.echo(message, err=True)

    with _progress_bar() as progress:
        report: ReindexReport = vault.reindex(
            full=full,
            progress=progress,
            wait=wait,
            on_wait=waiting,
            embed=not no_embed,
            redo_embeddings=redo_embeddings,
        )
    if report.embeddings.notice:
        click.echo(f"note: {report.embeddings.notice}", err=True)
    if as_json:
        emit_json(dataclasses.asdict(report))
    else:
        click.echo(report.summary())


def _print_result(result: SearchResult, explain: bool = False) -> None:
    if not result.hits:
        click.echo(f"no matches for {result.query!r}", err=True)
        return
    for rank, hit in enumerate(result.hits, start=1):
        where = f"{hit.path}:{hit.start_line}-{hit.end_line}"
        header = f"  {click.style(hit.header, fg='cyan')}" if hit.header else ""
        click.echo(f"{rank:2}. {click.style(where, bold=True)}  {hit.score:.2f}{header}")
        if hit.snippet.strip():
            click.echo(f"    {_highlight(hit.snippet)}")
        if explain:
            parts = "  ".join(f"{name} {value:+.3f}" for name, value in hit.explain)
            click.echo(click.style(f"    = {parts}", dim=True))
    if explain:
        dates = ""
        if result.route:
            dates = f", dates {result.route.start}..{result.route.end} ({result.route.phrase!r})"
        click.echo(click.style(f"mode {result.mode}{dates}", dim=True), err=True)


@cli.command()
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
    type=click.DateTime(formats=["%Y-%m-%d"]),
    metavar="YYYY-MM-DD",
    help="Only notes dated (or changed) on or after this day.",
)
@click.option("--hyde", is_flag=True, help="Also search by a passage a text model (--llm) writes.")
@click.option("--explain", is_flag=True, help="Show what each signal added to each hit's score.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print {"query", "results": [{"path", "startLine", "endLine", "score", '
    '"snippet", "header"}]} (with --explain, also each hit\'s signals).',
)
@click.pass_obj
def search(
    obj: Ctx,
    query: str,
    limit: int,
    mode: Mode,
    tag: str | None,
    path_prefix: str | None,
    since: dt.datetime | None,
    hyde: bool,
    explain: bool,
    as_json: bool,
) -> None:
    """Find notes by words and by meaning (best section per note).

    Dates in the query ("yesterday", "last Monday", "Feb 8", 2026-11-28) favour notes of that
    day. QUERY "-" reads one query per line from stdin and answers each in turn (one JSON
    object per line with --json), so thousands of queries run in one process.
    """
    vault = obj.vault
    queries = (line.rstrip("\n") for line in sys.stdin) if query == "-" else iter([query])
    told: set[str] = set()
    for q in queries:
        if query == "-" and not q.strip():
            continue
        result = vault.search(
            q,
            limit=limit,
            mode=mode,
            tag=tag,
            path=path_prefix,
            since=since.date() if since else None,
            hyde=hyde,
        )
        for notice in result.notices:
            if notice not in told:  # once per process, not once per batch query
                click.echo(f"note: {notice}", err=True)
                told.add(notice)
        if as_json:
            emit_json(result.to_json(explain))
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


@cli.command()
@click.argument("note")
@click.option("--json", "as_json", is_flag=True, help="Print everything as JSON.")
@click.pass_obj
def show(obj: Ctx, note: str, as_json: bool) -> None:
    """Show a note's metadata, headings, outgoing links and backlinks.

    NOTE is a vault path, a title or an alias.
    """
    info = obj.vault.show(note)
    if as_json:
        data = dataclasses.asdict(info)
        for link, out in zip(info.links, data["links"], strict=True):
            out["status"] = link.status
        emit_json(data)
    else:
        _print_note(info)


@cli.command()
@click.argument("note")
@click.option("--json", "as_json", is_flag=True, help="Print the backlinks as JSON.")
@click.pass_obj
def backlinks(obj: Ctx, note: str, as_json: bool) -> None:
    """List the notes that link to NOTE, with the line around each link."""
    vault = obj.vault
    found = vault.backlinks(vault.find_note(note))
    if as_json:
        emit_json([dataclasses.asdict(b) for b in found])
        return
    if not found:
        click.echo("no backlinks", err=True)
    for b in found:
        click.echo(f"{b.src_path}:{b.line}  {b.context}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.pass_obj
def stats(obj: Ctx, as_json: bool) -> None:
    """Counts of notes, links, tags and tasks in the index."""
    figures = obj.vault.stats()
    if as_json:
        emit_json(dataclasses.asdict(figures))
        return
    for key, value in dataclasses.asdict(figures).items():
        click.echo(f"{key.replace('_', ' '):22} {value}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--limit", type=int, default=20, show_default=True, help="Rows per section.")
@click.pass_obj
def doctor(obj: Ctx, as_json: bool, limit: int) -> None:
    """Parse warnings, skipped files, ambiguous and alias-fixable links, index health."""
    report = obj.vault.doctor()
    if as_json:
        emit_json(dataclasses.asdict(report))
    else:
        sections: list[tuple[str, list[str]]] = [
            ("parse warnings", [f"{p}: {w}" for p, w in report.warnings]),
            ("skipped files", [f"{p}: {r}" for p, r in report.skipped]),
            (
                "ambiguous links",
                [f"{x.src_path}:{x.line} {x.written}: {x.detail}" for x in report.ambiguous],
            ),
            (
                "alias-fixable links",
                [
                    f"{x.src_path}:{x.line} {x.written} -> {x.fix} ({x.detail})"
                    for x in report.alias_fixable
                ],
            ),
            (
                "links to a missing heading or block",
                [f"{x.src_path}:{x.line} {x.written}: {x.detail}" for x in report.missing_anchors],
            ),
            ("index", list(report.index_problems) or ["ok"]),
        ]
        for title, rows in sections:
            click.echo(click.style(f"{title} ({len(rows) if rows != ['ok'] else 0})", bold=True))
            for row in rows[:limit]:
                click.echo("  " + row)
            if len(rows) > limit:
                click.echo(f"  … {len(rows) - limit} more (--limit)")
    if not report.healthy:
        sys.exit(1)


# Registered last: these modules import the helpers above.
from vaultmem.cli_graph import gaps_group, graph_group  # noqa: E402
from vaultmem.cli_mcp import mcp_cmd  # noqa: E402
from vaultmem.cli_persona import persona_group  # noqa: E402

cli.add_command(graph_group)
cli.add_command(gaps_group)
cli.add_command(mcp_cmd)
cli.add_command(persona_group)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except VaultmemError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(0)
