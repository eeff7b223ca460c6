"""Shared values for the memory tests: a fixed clock and the fixture vault read as values."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from vaultmem.memory.episodes import Episode, episode_from
from vaultmem.memory.facts import parse_facts
from vaultmem.memory.lines import body_start
from vaultmem.memory.loops import Loop, loops_in
from vaultmem.memory.mentions import EntityName
from vaultmem.memory.recall import NoteFact
from vaultmem.parser import parse_note

NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)  # a Monday
TODAY = NOW.date()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "memory"


@dataclass(frozen=True)
class VaultValues:
    """What the core will hand the pure recall: names, facts, episodes and loops."""

    names: tuple[EntityName, ...]
    facts: tuple[NoteFact, ...]
    episodes: tuple[Episode, ...]
    loops: tuple[Loop, ...]


def read_vault(root: Path) -> VaultValues:
    """Read a folder of notes the way the wired core will read the index and the notes."""
    names: list[EntityName] = []
    facts: list[NoteFact] = []
    episodes: list[Episode] = []
    loops: list[Loop] = []
    wanted: set[str] = set()
    for file in sorted(root.rglob("*.md")):
        path = file.relative_to(root).as_posix()
        text = file.read_text(encoding="utf-8")
        lines = text.split("\n")[:-1]
        note = parse_note(text, path)
        names.append(EntityName(path, (note.title, *note.aliases)))
        body = "\n".join(lines[body_start(lines) :])
        episode = episode_from(path, dict(note.frontmatter), body)
        if episode is not None:
            episodes.append(episode)
            wanted.update(episode.entities)
            continue
        created = note.frontmatter.get("created")
        day = dt.date.fromisoformat(str(created)) if created else None
        facts += [
            NoteFact(path, note.title, f) for f in parse_facts(lines, note) if f.form != "property"
        ]
        loops += loops_in(path, lines, day)
    known = {n.names[0].casefold() for n in names}
    names += [EntityName("", (w,)) for w in sorted(wanted) if w.casefold() not in known]
    return VaultValues(tuple(names), tuple(facts), tuple(episodes), tuple(loops))
