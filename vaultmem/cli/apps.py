"""`vaultmem tui` and `vaultmem mcp`: the long-running front-ends, imported only when they run.

Textual and the MCP SDK (with the web stack under it) load inside the commands, so every other
command starts without paying for them.
"""

from __future__ import annotations

import os
import signal
import sys

import click

from vaultmem.cli.context import Ctx

DEFAULT_HOST = "127.0.0.1"  # the same as vaultmem.server's, kept here to avoid importing it
DEFAULT_PORT = 48400
INTERRUPTED = 130  # Ctrl+C, as a shell reports a process SIGINT ended


def register_commands(cli: click.Group) -> None:
    cli.add_command(tui)
    cli.add_command(mcp_cmd)


@click.command()
@click.pass_obj
def tui(obj: Ctx) -> None:
    """Open the terminal app: search as you type, notes with their links, browse.

    `vaultmem` with no command does the same in a terminal. Keys: ctrl+p lists every action,
    ? (or F1) shows the keys of the screen you are on.
    """
    from vaultmem import tui as tui_app

    tui_app.run(obj.vault)


@click.command("mcp")
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option(
    "--host",
    default=DEFAULT_HOST,
    show_default=True,
    help="Address to bind with --http; anything but loopback needs --token.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port to serve on with --http.",
)
@click.option(
    "--token",
    metavar="SECRET",
    envvar="VAULTMEM_MCP_TOKEN",
    show_envvar=True,
    help="With --http, require 'Authorization: Bearer SECRET' on every MCP request.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Another Host header to accept with --http (a name clients reach this machine by); "
    "the bind address and localhost forms always are.",
)
@click.pass_obj
def mcp_cmd(
    obj: Ctx, http: bool, host: str, port: int, token: str | None, allow_hosts: tuple[str, ...]
) -> None:
    """Serve the vault to AI agents (Claude Code, Codex, Gemini CLI, Cursor…) over MCP.

    Read-only tools: search, read_note, backlinks, related, find_connections, neighbors,
    knowledge_gaps, list_personas, persona_context, fact_history, episodes, open_loops,
    recall, gate, review_queue; persona notes as resources. Writes: store_fact, add_episode
    and resolve_loop (each undoable in the note, nothing deleted), and capture (one capture
    note in the inbox, for a person to review). The index is built on first start and kept
    fresh while notes change. Logs go to stderr.

    stdio (default): an MCP client starts `vaultmem --vault PATH mcp` itself.
    --http: streamable HTTP at http://HOST:PORT/mcp (and GET /health), for clients that connect.
    """
    from vaultmem import server

    if not http and (token or allow_hosts or host != DEFAULT_HOST or port != DEFAULT_PORT):
        given = [
            flag
            for flag, used in (
                ("--host", host != DEFAULT_HOST),
                ("--port", port != DEFAULT_PORT),
                ("--allow-host", bool(allow_hosts)),
            )
            if used
        ]
        if given:
            raise click.UsageError(f"{', '.join(given)} only apply with --http")
    vault = obj.vault
    if http:
        server.run_http(vault, host=host, port=port, token=token or None, extra_hosts=allow_hosts)
        return
    if sys.stdin.isatty():  # a person, not a client: a silent wait would look like a hang
        signal.signal(signal.SIGINT, _stop_at_once)  # before the hint: it names Ctrl+C
        click.echo(
            "vaultmem mcp: serving MCP over stdio, which is for an MCP client to start and"
            " talk to: add this command to your client's configuration (README, \"Agents"
            ' (MCP)"), or run `vaultmem mcp --http` for clients that connect. Ctrl+C stops it.',
            err=True,
        )
    try:
        server.run_stdio(vault)
    except KeyboardInterrupt:
        click.echo("vaultmem mcp: stopped", err=True)
        sys.exit(INTERRUPTED)


def _stop_at_once(_signum: int, _frame: object) -> None:
    """Ctrl+C on a stdio server a person started in a terminal. The SDK reads stdin on a
    thread that a cancelled server waits for, so a plain Ctrl+C stopped it only once a line
    was typed (and a second one never). No client is attached to a terminal's stdin, so no
    tool call (no write) can be under way; a reindex or an upgrade batch cut short is rolled
    back by SQLite. Clients stop the server as before: they close stdin, or send SIGTERM."""
    sys.stderr.write("\nvaultmem mcp: stopped\n")
    sys.stderr.flush()
    os._exit(INTERRUPTED)
