"""Decay tiers: when a note with `decay:` in its front matter stops being current (pure)."""

from __future__ import annotations

import datetime as dt
from typing import Literal, get_args

Tier = Literal["permanent", "stable", "active", "session", "checkpoint"]
TIERS: tuple[Tier, ...] = get_args(Tier)

LIFETIME: dict[Tier, dt.timedelta | None] = {
    "permanent": None,
    "stable": dt.timedelta(days=90),
    "active": dt.timedelta(days=14),
    "session": dt.timedelta(days=1),
    "checkpoint": dt.timedelta(hours=4),
}


def parse_when(value: object) -> dt.datetime | None:
    """An ISO date or date-time from front matter as an aware datetime (naive means UTC)."""
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        try:
            when = dt.datetime.combine(dt.date.fromisoformat(value[:10]), dt.time())
        except ValueError:
            return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def expires_at(
    frontmatter: dict[str, object], file_time: dt.datetime
) -> tuple[Tier, dt.datetime | None] | None:
    """(tier, expiry) for a note with a known `decay:` tier, else None; permanent never expires.

    The clock starts at the note's `date`, else `created`, else the file's modification time.
    """
    name = str(frontmatter.get("decay", "")).strip().lower()
    if name not in LIFETIME:
        return None
    tier: Tier = name  # narrowed by the `in` test above
    lifetime = LIFETIME[tier]
    if lifetime is None:
        return tier, None
    start = parse_when(frontmatter.get("date")) or parse_when(frontmatter.get("created"))
    return tier, (start or file_time) + lifetime
