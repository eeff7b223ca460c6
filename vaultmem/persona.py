"""Personas: list them, load one's context within a character budget, create one from a template.

A persona is `<personas folder>/<slug>.md` with `type: persona`, `role`, optional `aliases` and
`budget` in its front matter. Loading it gives an agent, in this order and never more than the
budget (except the persona note itself, which is never cut):

1. the persona note's body, verbatim (its front matter is machine data and is left out);
2. its facts: the front matter properties that are facts rather than bookkeeping (its inline
   `key:: value` fields are already in the body and are not repeated);
3. its working set, ranked: the notes it links to and the notes whose `persona:` property names
   it, each as its opening paragraph(s) (or the linked section) followed by its facts.

The same vault gives byte-identical output: no clock, no file times, ties broken by path.
docs/personas.md explains the ranking and the cut.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from vaultmem import edit, store
from vaultmem.errors import NoteExists, NoteNotFound, UsageError, VaultmemError
from vaultmem.memory.loops import PRIORITY_SCORE
from vaultmem.parser import (
    is_lone_embed,
    linked_name,
    opens_with_markup,
    paragraphs,
    split_front_matter,
    strip_block_id,
)
from vaultmem.resolver import heading_key

if TYPE_CHECKING:
    from vaultmem.vault import Vault

DEFAULT_BUDGET = 5000
SECTIONS = ("Critical Context", "Preferences", "Active Projects", "Key Facts", "Decisions Made")
# One line of guidance under each section of a new persona note, as an Obsidian comment
# (hidden in Obsidian's reading view; `persona load` gives the note as written, so delete each
# line once its section is filled in).
GUIDANCE = {
    "Critical Context": "Who the agent works for and what it must never forget: constraints, "
    "what is off limits, who to ask.",
    "Preferences": "How to work and answer: tone, length, format, tools and habits to keep to.",
    "Active Projects": "Link each project in play now ([[Project]]) with a line on where it "
    "stands; linked notes join the working set.",
    "Key Facts": "Facts needed often, one per line as `key:: value` (names, numbers, places).",
    "Decisions Made": "Decisions already taken, with their date and why, so they are not reopened.",
}
OPENING_MIN = 200  # a first paragraph shorter than this brings the next one along
OPENING_MAX = 800  # an opening never takes more (in whole lines; the first line always counts)

PartKind = Literal["persona", "facts", "loops", "working_set"]
KINDS: tuple[PartKind, ...] = ("persona", "facts", "loops", "working_set")
MAX_LOOPS = 8  # open loops a persona loads, most pressing first

# Properties that describe the file rather than the world: never shown as facts.
_BOOKKEEPING = frozenset(
    {"aliases", "alias", "tags", "tag", "cssclasses", "cssclass", "persona", "publish", "decay"}
)
_PERSONA_OWN = _BOOKKEEPING | {"type", "budget"}
_NESTED = frozenset({"was", "source"})  # a fact's history and origin, nested under it
# Where a link sits in the persona note says how much it matters (lower first).
_SECTION_TIER = {heading_key("Critical Context"): 0, heading_key("Active Projects"): 1}
_OTHER_TIER = 2
_MEMBER_TIER = 3  # only a `persona:` property, no link from the persona
_SLUG_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,79}\Z")


class PersonaExists(VaultmemError):
    """`persona new` would overwrite a file."""

    exit_code = 2


@dataclass(frozen=True)
class PersonaInfo:
    slug: str
    path: str
    title: str
    role: str
    budget: int
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class ContextPart:
    """One piece of a loaded persona: its note, its facts, or one note of its working set."""

    kind: PartKind
    source: str  # vault path the text came from
    heading: str | None  # the section of `source` it came from, when the persona linked one
    text: str  # whole lines, each ending in "\n"

    @property
    def chars(self) -> int:
        return len(self.text)


@dataclass(frozen=True)
class PersonaContext:
    slug: str
    path: str
    role: str
    budget: int
    parts: tuple[ContextPart, ...]
    left_out: tuple[str, ...]  # sources that did not fit the budget (for the report)

    @property
    def used(self) -> int:
        """Characters of `to_markdown()`: what the agent receives, headings included."""
        return sum(len(block) for _, block in _rendered(self.parts))

    @property
    def over_budget(self) -> bool:
        """Only when the persona note alone is longer than the budget (it is never cut)."""
        return self.used > self.budget

    def usage(self) -> dict[str, int]:
        """Characters of `to_markdown()` per kind of part; they add up to `used`."""
        out: dict[str, int] = dict.fromkeys(KINDS, 0)
        for part, block in _rendered(self.parts):
            out[part.kind] += len(block)
        return out

    def to_markdown(self) -> str:
        """What an agent pastes into its prompt."""
        return "".join(block for _, block in _rendered(self.parts))


def _part_block(part: ContextPart, first_of_kind: bool) -> str:
    """A part as it reads in the markdown, with the headings that frame it."""
    if part.kind == "persona":
        return part.text
    if part.kind == "facts":
        return "\n## Persona facts\n" + part.text
    if part.kind == "loops":
        return "\n## Open loops\n" + part.text
    intro = "\n## Working set\n" if first_of_kind else ""
    title = _title(part.source)
    if part.heading:
        title += f" › {part.heading}"
    return f"{intro}\n### {title} ({part.source})\n{part.text}"


def _rendered(parts: Iterable[ContextPart]) -> Iterator[tuple[ContextPart, str]]:
    seen: set[str] = set()
    for part in parts:
        yield part, _part_block(part, part.kind not in seen)
        seen.add(part.kind)


# --------------------------------------------------------------------------- listing


def list_personas(vault: Vault) -> tuple[PersonaInfo, ...]:
    """Every persona note in the personas folder, by slug."""
    folder = vault.config.personas_folder
    out = []
    for note in store.notes_in_folder(vault.conn, folder):
        fm = note.frontmatter
        if not _is_persona(fm):
            continue
        role = fm.get("role")
        out.append(
            PersonaInfo(
                slug=note.title,
                path=note.path,
                title=_display_title(vault, note.path, note.title),
                role=" ".join(role.split()) if isinstance(role, str) else "",
                budget=_budget(fm.get("budget")),
                aliases=note.aliases,
            )
        )
    return tuple(sorted(out, key=lambda p: (p.slug.casefold(), p.slug)))


def _display_title(vault: Vault, path: str, slug: str) -> str:
    """A persona's name for people: its note's first heading when that is a `# Heading`."""
    headings = store.headings_of(vault.conn, path)
    if headings and headings[0].level == 1:
        return headings[0].text
    return slug


def _is_persona(fm: dict[str, object]) -> bool:
    kind = fm.get("type")
    return isinstance(kind, str) and kind.strip().casefold() == "persona"


def _budget(value: object) -> int:
    """The front matter budget when it is a whole number of characters, else the default."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return DEFAULT_BUDGET


def _check_ref(ref: str) -> str:
    """A persona name an agent or a person typed: never a path, whatever it contains."""
    name = ref.strip()
    if not name:
        raise UsageError("no persona given: `vaultmem persona list` shows the personas")
    hostile = (
        "/" in name
        or "\\" in name
        or ".." in name
        or name.startswith(".")
        or any(ord(c) < 32 or ord(c) == 127 for c in name)
    )
    if hostile or len(name) > 200:
        raise UsageError(
            f"{ref!r} is not a persona name: give a slug such as work-assistant (a file name in "
            "the personas folder, without folders or `..`); `vaultmem persona list` shows them"
        )
    return name


def find_persona(vault: Vault, ref: str) -> PersonaInfo:
    """A persona by slug or alias (case-insensitive), from the index only."""
    name = _check_ref(ref)
    personas = list_personas(vault)
    want = name.removesuffix(".md").casefold()
    for match in (
        lambda p: p.slug == name.removesuffix(".md"),
        lambda p: p.slug.casefold() == want,
        lambda p: any(a.casefold() == name.casefold() for a in p.aliases),
    ):
        found = [p for p in personas if match(p)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            names = ", ".join(p.slug for p in found)
            raise NoteNotFound(f"{name!r} names {len(found)} personas ({names}): give the slug")
    folder = vault.config.personas_folder or "the vault root"
    known = ", ".join(p.slug for p in personas)
    not_persona = [
        note.path
        for note in store.notes_in_folder(vault.conn, vault.config.personas_folder)
        if note.title.casefold() == want
    ]
    if not_persona:
        hint = f"{not_persona[0]} has no `type: persona` in its front matter"
    elif known:
        hint = f"known personas: {known}"
    else:
        hint = f"no personas in {folder} yet (`vaultmem persona new SLUG --role TEXT` makes one)"
    raise NoteNotFound(f"no persona {name!r}: {hint}; `vaultmem persona list` shows them all")


# --------------------------------------------------------------------------- loading


@dataclass
class _Member:
    """A working-set note and how the persona points at it."""

    path: str
    tier: int = _MEMBER_TIER
    links: int = 0
    first_link: int = 1 << 30  # where its first link is among the persona's, in reading order
    whole: bool = False  # linked at least once without a heading
    heading: str | None = None  # the first linked heading, used when never linked whole
    date: str = ""

    def rank(self) -> tuple[int, int, int, tuple[int, ...], str]:
        # Newer dates first, undated last. Only notes without a link from the persona reach this
        # (linked ones differ in first_link), and only they have their date looked up.
        newest_first = tuple(-ord(c) for c in self.date) if self.date else (1,)
        return (self.tier, -self.links, self.first_link, newest_first, self.path)


# A line of a part, with what it says for deduplication: (text, normalised line, fact key).
_Item = tuple[str, str | None, tuple[str, str, str] | None]


@dataclass
class _Packer:
    """Fills the budget part by part, whole lines only, and remembers what it has said."""

    budget: int
    parts: list[ContextPart] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    seen_lines: set[str] = field(default_factory=set)
    seen_facts: set[tuple[str, str, str]] = field(default_factory=set)
    used: int = 0

    def frame(self, kind: PartKind, source: str, heading: str | None) -> int:
        """Characters of the headings a part of `kind` would come with."""
        first = all(p.kind != kind for p in self.parts)
        return len(_part_block(ContextPart(kind, source, heading, ""), first))

    def place(self, part: ContextPart) -> None:
        self.used += self.frame(part.kind, part.source, part.heading) + part.chars
        self.parts.append(part)

    def add(
        self, kind: PartKind, source: str, heading: str | None, items: Sequence[_Item]
    ) -> tuple[bool, bool]:
        """Add as many of `items` as fit, in order, each unless already said.

        Returns (placed, complete): whether a part was added, and whether nothing had to be cut.
        A part is added when at least one line fits, or when there is nothing to say but its
        heading fits (a linked note that is empty still exists); a part whose every line was
        said before is not added at all.
        """
        room = self.budget - self.used - self.frame(kind, source, heading)
        taken: list[str] = []
        complete = True
        for text, norm, fact in items:
            if (norm and norm in self.seen_lines) or (fact and fact in self.seen_facts):
                continue
            if len(text) + 1 > room:
                complete = False
                break
            taken.append(text)
            room -= len(text) + 1
            if norm:
                self.seen_lines.add(norm)
            if fact:
                self.seen_facts.add(fact)
        placed = bool(taken) or (not items and room >= 0)
        if placed:
            self.place(ContextPart(kind, source, heading, "".join(f"{t}\n" for t in taken)))
        return placed, complete and (placed or bool(items))


def load_persona(
    vault: Vault,
    slug: str,
    budget: int | None = None,
    *,
    include_expired: bool = False,
    now: dt.datetime | None = None,
) -> PersonaContext:
    """The persona's note, facts and working set, ranked and cut to the budget (see module doc).
    Notes past their decay tier's lifetime at `now` stay out unless `include_expired`."""
    info = find_persona(vault, slug)
    if budget is not None and budget < 0:
        raise UsageError(f"the budget is a number of characters, not {budget}")
    chars = info.budget if budget is None else budget
    conn = vault.conn
    lines = _note_lines(vault, info.path)
    if lines is None:
        raise NoteNotFound(f"{info.path} is in the index but not on disk: run `vaultmem reindex`")
    body = _trim_blank(lines[_front_matter_lines(lines) :])
    packer = _Packer(chars)
    # (1) The persona note is never cut: an agent without its instructions is the wrong agent.
    packer.place(ContextPart("persona", info.path, None, "".join(f"{x}\n" for x in body)))
    if budget is not None and packer.used > budget:
        raise UsageError(
            f"a budget of {budget:,} characters is below the persona note's own "
            f"{packer.used:,} ({info.path}, never cut): give at least {packer.used:,}, or "
            "shorten the note"
        )
    packer.seen_lines.update(n for n in (_norm(x) for x in body) if _worth_dedup(n))
    meta = store.note_facts(conn, [info.path]).get(info.path)
    fm = meta.frontmatter if meta else {}
    entity = _entity(fm, info.slug)  # the file name, as links name it
    for f in store.fields_of(conn, [info.path])[info.path]:
        if f.source == "inline":  # in the body, said already
            packer.seen_facts.add(_fact_key(entity, f.key, strip_block_id(f.value)))

    # (2) The persona's facts: properties that are not the persona's own bookkeeping.
    facts = _property_facts(fm, _PERSONA_OWN, entity)
    if facts and not packer.add("facts", info.path, None, facts)[1]:
        packer.left_out.append(info.path)  # some of the persona's facts did not fit

    # (3) The open loops of the persona and its working set, most pressing first, so an agent
    # starts from what is still to do; notes past their decay tier stay out from here on.
    clock = now or dt.datetime.now(dt.UTC)
    expired = set() if include_expired else vault.memory.expired_paths(clock)
    members = [m for m in _working_set(vault, info) if m.path not in expired]
    loops = _open_loops(vault, info, [m.path for m in members], expired)
    if loops and not packer.add("loops", info.path, None, loops)[1]:
        packer.left_out.append(info.path)

    # (4) The working set, best first; each note once, nothing said twice.
    _pack_working_set(vault, members, packer)
    return PersonaContext(
        slug=info.slug,
        path=info.path,
        role=info.role,
        budget=chars,
        parts=tuple(packer.parts),
        left_out=tuple(packer.left_out),
    )


def _working_set(vault: Vault, info: PersonaInfo) -> list[_Member]:
    conn = vault.conn
    sections = [
        (h.line, h.end_line, _SECTION_TIER.get(heading_key(h.text), _OTHER_TIER))
        for h in store.headings_of(conn, info.path)
    ]
    members: dict[str, _Member] = {}
    # Links come in reading order (line, then position in the line): their index is the order
    # in which the author mentions the notes.
    for position, link in enumerate(store.outgoing(conn, info.path)):
        dst = link.dst_path
        if dst is None or link.dst_kind != "note" or dst == info.path:
            continue  # wanted notes and attachments have no text to give
        m = members.setdefault(dst, _Member(dst))
        line = link.line
        tier = min((t for start, end, t in sections if start <= line <= end), default=_OTHER_TIER)
        m.tier = min(m.tier, tier)
        m.links += 1
        m.first_link = min(m.first_link, position)
        if link.heading and not link.block:
            m.heading = m.heading or link.heading
        else:
            m.whole = True
    for prop in store.property_values(conn, "persona"):
        if prop.path != info.path and _names_persona(prop.items, info.slug):
            m = members.setdefault(prop.path, _Member(prop.path))
            m.links += 1  # opting in counts like one more link from the persona
    unlinked = [m.path for m in members.values() if m.tier == _MEMBER_TIER]
    for path, facts in store.note_facts(conn, unlinked).items():
        members[path].date = (facts.date or "")[:10]
    return sorted(members.values(), key=_Member.rank)


def _open_loops(
    vault: Vault, info: PersonaInfo, members: list[str], expired: set[str]
) -> list[_Item]:
    """The open loops in the persona note or its working set, or linking the persona (none in
    an expired note)."""
    mine = {info.path, *members}
    names = {info.slug.casefold(), _title(info.path).casefold()}
    chosen = [
        x
        for x in vault.memory.all_loops()
        if x.path not in expired and (x.path in mine or names & {_link_name(t) for t in x.links})
    ]
    # by due date, then priority: an order that does not move with the clock, so the same
    # vault loads the same bytes on any day (prompt caches keep working)
    far = dt.date.max
    chosen.sort(key=lambda x: (x.due or far, -PRIORITY_SCORE[x.priority], x.path, x.line))
    out: list[_Item] = []
    for x in chosen[:MAX_LOOPS]:
        due = f" 📅 {x.due.isoformat()}" if x.due else ""
        text = f"- [ ] {x.title}{due} ({x.path}:{x.line}, {x.id})"
        out.append((text, _norm(x.title) if _worth_dedup(_norm(x.title)) else None, None))
    return out


def _names_persona(names: list[object], slug: str) -> bool:
    """Whether a `persona:` property (names or links, one or a list) names `slug`."""
    return any(isinstance(name, str) and _link_name(name) == slug.casefold() for name in names)


def _link_name(value: str) -> str:
    """`[[folder/Name#x|shown]]`, `Name.md` or `Name` -> "name"."""
    return _title(linked_name(value)).casefold()


def _pack_working_set(vault: Vault, members: list[_Member], packer: _Packer) -> None:
    conn = vault.conn
    batch = 32  # notes are read in rank order, and only while the budget lasts
    for start in range(0, len(members), batch):
        group = members[start : start + batch]
        paths = [m.path for m in group]
        smallest = min(packer.frame("working_set", path, None) for path in paths)
        if packer.used + smallest + 2 > packer.budget:
            packer.left_out.extend(paths)  # not even a heading fits: nothing more to read
            continue
        fields = store.fields_of(conn, paths)
        meta = store.note_facts(conn, paths)
        tasks = store.task_lines(conn, paths)
        for m in group:
            if packer.used + packer.frame("working_set", m.path, None) + 2 > packer.budget:
                packer.left_out.append(m.path)  # not even its heading and a word would fit
                continue
            lines = _note_lines(vault, m.path)
            if lines is None:
                packer.left_out.append(m.path)
                continue
            fm = meta[m.path].frontmatter if m.path in meta else {}
            heading, items = _excerpt(conn, m, lines, fm, fields[m.path], tasks[m.path])
            placed, complete = packer.add("working_set", m.path, heading, items)
            if not placed and not complete:
                packer.left_out.append(m.path)  # not even its first line fitted


def _excerpt(
    conn: store.Connection,
    m: _Member,
    lines: list[str],
    fm: dict[str, object],
    fields: list[store.FieldRow],
    task_lines: set[int],
) -> tuple[str | None, list[_Item]]:
    """(heading, lines) a note gives the working set: its opening, then its facts."""
    first, last, heading = _front_matter_lines(lines) + 1, len(lines), None
    if m.heading and not m.whole:
        key = heading_key(m.heading.split("#")[-1])
        for h in store.headings_of(conn, m.path):
            if heading_key(h.text) == key:
                first, last, heading = h.line + 1, h.end_line, h.text
                break
    entity = _entity(fm, _title(m.path))
    summary = (fm.get("summary") or fm.get("description")) if heading is None else None
    opening: list[tuple[int, str]]
    if isinstance(summary, str) and summary.strip():
        opening = [(0, " ".join(summary.split()))]
    else:
        summary = None
        inline_lines = {f.line for f in fields if f.source == "inline"}
        opening = _opening(lines, first, last, inline_lines)
    items: list[_Item] = [(t, n if _worth_dedup(n := _norm(t)) else None, None) for _, t in opening]
    shown = {n for n, _ in opening}
    own: set[tuple[str, str, str]] = set()
    for f in fields:
        key, line = f.key, f.line
        if f.source != "inline" or not first <= line <= last or key.casefold() in _NESTED:
            continue  # `was::`/`source::` belong to a fact; task fields describe the task
        value = strip_block_id(f.value)
        fact = _fact_key(entity, key, value)
        if line in shown:
            own.add(fact)  # its line is in the opening: said already
        if line in task_lines or line in shown:
            continue
        if value and fact not in own:
            own.add(fact)
            items.append((f"- {key}:: {value}", None, fact))
    if heading is None:
        skip = _BOOKKEEPING | ({"summary", "description"} if summary else set())
        items += [i for i in _property_facts(fm, skip, entity) if i[2] not in own]
    return heading, items


def _opening(
    lines: list[str], first: int, last: int, field_lines: set[int]
) -> list[tuple[int, str]]:
    """The first useful paragraph(s) of a note or section, within OPENING_MIN..OPENING_MAX."""
    out: list[tuple[int, str]] = []
    size = 0
    # a fenced code block is one paragraph, so it is skipped as a whole
    for paragraph in paragraphs(lines, first, last):
        if paragraph is None:
            if out:
                break  # the opening ends with its section
            continue
        if not _useful(paragraph, field_lines):
            continue
        for number, text in paragraph:
            if out and size + len(text) + 1 > OPENING_MAX:
                return out
            out.append((number, text))
            size += len(text) + 1
        if size >= OPENING_MIN:
            break
    return out


def _useful(paragraph: list[tuple[int, str]], field_lines: set[int]) -> bool:
    """Not code, a comment, a lone embed or block id, or fields (those come as facts)."""
    if opens_with_markup(paragraph[0][1]):
        return False
    if all(is_lone_embed(t) for _, t in paragraph):
        return False
    return not all(n in field_lines for n, _ in paragraph)


def _property_facts(fm: dict[str, object], skip: Iterable[str], entity: str) -> list[_Item]:
    """Front matter properties as `- key:: value` lines, in front matter order."""
    leave = set(skip)
    out: list[_Item] = []
    for key, value in fm.items():
        shown = _shown(value)
        if key.casefold() not in leave and shown:
            out.append((f"- {key}:: {shown}", None, _fact_key(entity, key, shown)))
    return out


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(s for s in (_shown(v) for v in value) if s)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return ""
    return " ".join(str(value).split())


def _entity(fm: dict[str, object], title: str) -> str:
    """Whom a note's facts are about: its `entity:` property (a name or a link), else itself."""
    named = fm.get("entity")
    if isinstance(named, str) and named.strip():
        return _link_name(named)
    return title.casefold()


def _fact_key(entity: str, key: str, value: str) -> tuple[str, str, str]:
    return entity, key.casefold(), _norm(value).casefold()


def _title(path: str) -> str:
    """A note's title from its vault path (string work: this runs for every candidate)."""
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return [x.rstrip() for x in lines[start:end]]


def _front_matter_lines(lines: list[str]) -> int:
    """How many lines the front matter block takes (0 without one)."""
    return split_front_matter("\n".join(lines))[1]


def _worth_dedup(norm: str) -> bool:
    """Lines long enough that a repeat is a repeat (not `---`, `- [ ]` or a short label)."""
    return len(norm) >= 12


def _note_lines(vault: Vault, path: str) -> list[str] | None:
    """The lines of an indexed note, read from disk; None when it is gone, unreadable or now
    leads outside the vault."""
    try:
        return vault.note_lines(path)
    except NoteNotFound:
        return None


# --------------------------------------------------------------------------- creating


def new_persona(vault: Vault, slug: str, role: str, wait: float = 60.0) -> Path:
    """Write `<personas folder>/<slug>.md` from the template, refusing to overwrite anything;
    indexed at once when the vault has an index (text only: vectors come with the next
    reindex)."""
    if not _SLUG_RE.match(slug):
        raise UsageError(
            f"{slug!r} cannot be a persona slug: use lowercase letters, digits, '-' and '_', "
            "starting with a letter or digit (for example work-assistant)"
        )
    role = " ".join(role.split())
    if not role:
        raise UsageError("give the persona a role: --role 'Engineering assistant for Maya'")
    folder = vault.root / vault.config.personas_folder
    path = folder / f"{slug}.md"
    if not path.resolve().is_relative_to(vault.root.resolve()):
        raise UsageError(f"{path} would be outside the vault; check `personas_folder`")
    rel = path.relative_to(vault.root).as_posix()
    refusal = PersonaExists(
        f"{rel} already exists; vaultmem never overwrites a note. Edit it, or pick another slug"
    )
    try:
        vault.apply(edit.plan_new_note(rel, persona_template(slug, role)), wait=wait, embed=False)
    except NoteExists:
        raise refusal from None
    return path


def persona_template(slug: str, role: str) -> str:
    """A new persona note: front matter and the recommended sections, each with a line of
    guidance (an Obsidian comment) to replace."""
    title = slug.replace("-", " ").replace("_", " ").strip().capitalize()
    sections = "".join(f"\n## {s}\n\n%% {GUIDANCE[s]} Delete this line. %%\n" for s in SECTIONS)
    return (
        "---\n"
        "type: persona\n"
        f"role: {json.dumps(role, ensure_ascii=False)}\n"
        f"budget: {DEFAULT_BUDGET}\n"
        "---\n"
        f"# {title}\n\n"
        f"{role.rstrip('.')}.\n" + sections.rstrip("\n") + "\n"
    )
