"""The background upgrade to all-MiniLM-L6-v2 (vaultmem/embed_upgrade.py) as a person sees it
in the app: a short part of the status line while it runs, and a notice when it starts, when
the swap lands, and (once each) when it cannot go on, with what to run."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from vaultmem.embed_upgrade import Report

BUSY_SAY = 60.0  # seconds the upgrade waits for the index's lock before the app says so
DONE = "meaning search now uses all-MiniLM-L6-v2"

Severity = Literal["information", "warning", "error"]


@dataclass(frozen=True)
class Notice:
    """A notification, shown once per `key` in a session."""

    key: str  # "start", "done", "busy", or the problem itself
    message: str
    severity: Severity = "information"
    title: str = "meaning search"
    timeout: float = 8.0


def share(covered: int, sections: int) -> int:
    """How far the upgrade got, in whole percent: never 100 before the swap."""
    if sections <= 0:
        return 0
    return min(99, covered * 100 // sections)


class UpgradeView:
    """Turns the upgrade's reports into the status line's part and the notices to show: each
    notice once per session, however often the thread reports the same thing."""

    def __init__(self) -> None:
        self.line: str | None = None  # the status line's part; None: nothing to show
        self._said: set[str] = set()

    def follow(self, report: Report, now: float | None = None) -> list[Notice]:
        """Update `line` from `report`; the notices it calls for (none said before)."""
        notices: list[Notice] = []
        status = report.status
        pending = status is not None and status.state == "pending"
        shown = f"{share(status.covered, status.sections)}%" if pending and status else ""
        if report.swapped:
            self.line = None
            notices.append(Notice("done", DONE, title="upgrade done"))
        elif report.problem is not None:
            failed = report.failed
            self.line = "meaning upgrade failed" if failed else "meaning upgrade waits"
            severity: Severity = "error" if failed else "warning"
            notices.append(
                Notice(report.problem, report.problem, severity, "meaning search upgrade", 20.0)
            )
        elif report.busy_since is not None:
            self.line = " ".join(filter(None, ("meaning upgrade", shown, "· index busy")))
            waited = (time.monotonic() if now is None else now) - report.busy_since
            if waited >= BUSY_SAY:
                notices.append(
                    Notice(
                        "busy",
                        f"the upgrade of meaning search to all-MiniLM-L6-v2 has waited "
                        f"{waited / 60:.0f} min for the index: another reindex or upgrade holds "
                        "its lock. It goes on by itself once the lock is free; "
                        "`vaultmem upgrade-model --wait 600` waits for it in the foreground",
                        "warning",
                        "meaning search upgrade",
                        20.0,
                    )
                )
        elif pending and status is not None:
            self.line = f"meaning upgrade {shown}"
            minutes = status.minutes_left
            left = f", ~{minutes} min of one core left" if status.left else ""
            notices.append(
                Notice(
                    "start",
                    "meaning search is moving to all-MiniLM-L6-v2 in the background "
                    f"({status.covered:,} of {status.sections:,} sections done{left}); it "
                    "uses wordllama until then, and says when it is done",
                    title="meaning search upgrade",
                )
            )
        else:
            self.line = None  # nothing to upgrade, or done before this session
        fresh = [n for n in notices if n.key not in self._said]
        self._said.update(n.key for n in fresh)
        return fresh
