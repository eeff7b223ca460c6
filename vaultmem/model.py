"""The note model: frozen values the parser yields and the index stores."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal

LinkKind = Literal["wiki", "markdown", "property"]
JSONValue = str | int | float | bool | None | list["JSONValue"] | dict[str, "JSONValue"]


def content_digest(data: bytes) -> str:
    """The content hash the index stores for every note (blake2b, 16 bytes): a note's revision,
    which every write checks before it replaces the note."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(frozen=True)
class Link:
    """One link as written in a note; resolution happens later, against the whole vault."""

    target: str  # path part as written (trimmed, unescaped); "" for a same-note link
    line: int  # 1-based line in the file
    kind: LinkKind = "wiki"
    heading: str | None = None  # "Heading" or "Heading#Sub"
    block: str | None = None  # block id without "^"
    display: str | None = None  # shown text, None when the link shows its target
    embed: bool = False
    relation: str = "links_to"  # links_to, embeds, or a typed-link key such as depends_on


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int  # 1-based line of the heading itself
    end_line: int  # last line of its section (before the next heading of same or higher level)


@dataclass(frozen=True)
class BlockId:
    id: str
    line: int


@dataclass(frozen=True)
class Field:
    """A Dataview inline field (`key:: value`, `[key:: value]`) or a front matter property."""

    key: str
    value: str
    line: int
    source: Literal["inline", "property"] = "inline"


@dataclass(frozen=True)
class Task:
    line: int
    status: str  # the character inside the brackets: " ", "x", "/", "-", ...
    text: str
    due: str | None = None
    priority: str | None = None  # highest, high, medium, low, lowest
    done: str | None = None  # completion date from ✅

    @property
    def checked(self) -> bool:
        return self.status.lower() == "x"


@dataclass(frozen=True)
class Chunk:
    """A slice of a note for search: one heading's section, or part of a long one."""

    seq: int
    heading_path: tuple[str, ...]
    start_line: int
    end_line: int
    text: str

    @property
    def heading(self) -> str:
        return " > ".join(self.heading_path)


@dataclass(frozen=True)
class ParsedNote:
    """Everything vaultmem reads from one markdown file, before any link is resolved."""

    path: str  # vault-relative, forward slashes
    title: str
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # as written, without "#", deduplicated case-insensitively
    frontmatter: dict[str, JSONValue] = field(default_factory=dict)
    headings: tuple[Heading, ...] = ()
    blocks: tuple[BlockId, ...] = ()
    links: tuple[Link, ...] = ()
    tasks: tuple[Task, ...] = ()
    fields: tuple[Field, ...] = ()
    chunks: tuple[Chunk, ...] = ()
    warnings: tuple[str, ...] = ()
    line_count: int = 0


def title_of(path: str) -> str:
    """A file's title from its vault path: the file name, without `.md` for a note."""
    return path.rsplit("/", 1)[-1].removesuffix(".md")
