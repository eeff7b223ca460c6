"""Running tool bodies on the server's own threads, on a fresh index, `VaultmemError` translated."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp_types import CallToolResult, TextContent

from vaultmem.errors import NoteNotFound, VaultmemError
from vaultmem.server.running import NO_RESTART, UNUSABLE, Live

if TYPE_CHECKING:
    from vaultmem.vault import Vault

log = logging.getLogger("vaultmem.server")

TOOL_THREADS = 2  # one answers while another waits on a reindex or a long gaps report

P = ParamSpec("P")
R = TypeVar("R")


def structured(data: object, *texts: str) -> CallToolResult:
    """A tool result: `data` (the dialect's JSON) as structured content; as text, the same JSON
    for clients that show only text, or `texts` when the answer is text (a note, a persona)."""
    blocks = texts or (json.dumps(data, ensure_ascii=False),)
    return CallToolResult(
        content=[TextContent(type="text", text=t) for t in blocks], structured_content=data
    )


def failure(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


@dataclass
class Runner:
    """Runs the tool bodies for one vault (and what keeps it fresh, when the server runs)."""

    vault: Vault
    live: Live | None = None
    # Tool bodies run on these threads, not on whichever of the event loop's dozens of workers
    # is free: each thread has its own SQLite connection and page cache, and on MDN a cold
    # one added ~8 ms to every search.
    pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(TOOL_THREADS, thread_name_prefix="vaultmem-tool")
    )

    async def answer(
        self, body: Callable[P, CallToolResult], *args: P.args, **kwargs: P.kwargs
    ) -> CallToolResult:
        """Run a tool body on a fresh index, turning VaultmemError into a tool error."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, partial(self._answer, body, *args, **kwargs))

    def _answer(
        self, body: Callable[P, CallToolResult], *args: P.args, **kwargs: P.kwargs
    ) -> CallToolResult:
        try:
            self.fresh()
            result = body(*args, **kwargs)
        except VaultmemError as exc:
            if self.cannot_use(exc):
                return failure(self.unusable(exc))
            return failure(str(exc))
        finally:
            if self.live is not None:
                self.live.answered.set()
        if self.live is not None:
            self.live.worked()
        return result

    async def read(self, body: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Read a resource on a fresh index, turning VaultmemError into a resource error."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, partial(self._read, body, *args, **kwargs))

    def _read(self, body: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            self.fresh()
            return body(*args, **kwargs)
        except VaultmemError as exc:
            if self.cannot_use(exc):
                raise ResourceError(self.unusable(exc)) from exc
            if isinstance(exc, NoteNotFound):
                raise ResourceNotFoundError(str(exc)) from exc
            raise ResourceError(str(exc)) from exc

    def cannot_use(self, exc: VaultmemError) -> bool:
        """Whether `exc` says the index cannot be used (not that a call was wrong): damaged,
        another schema, gone, or what kept the server from opening or building it."""
        return isinstance(exc, UNUSABLE) or (self.live is not None and exc is self.live.problem)

    def unusable(self, problem: VaultmemError) -> str:
        """What a call says when the index cannot be used (the CLI's words); a running server
        checks it again on the next call, so it recovers once a person fixed it."""
        if self.live is None:
            return str(problem)
        self.live.lost(problem)
        return f"{problem}{NO_RESTART}"

    def fresh(self) -> None:
        """Reindex first when notes changed on disk, so every answer reflects the files."""
        if self.live is not None:
            report = self.live.refresh()
            if report is not None:
                log.info("reindexed after edits: %s", report.summary())
