"""Link resolution the way Obsidian does it (pure: vault file paths in, resolved paths out)."""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

_PUNCT_RE = re.compile(r"[!-/:-@\[-`{-~]+")
_SPACES_RE = re.compile(r"\s+")


def fold(text: str) -> str:
    """Compare names the way Obsidian does: Unicode NFC, case-insensitive."""
    if text.isascii():  # the common case, and the hot path of every reindex
        return text.lower()
    return unicodedata.normalize("NFC", text).lower()


def name_key(path_or_target: str) -> str:
    """The lookup key of a file or link target: its last path part, folded, without `.md`."""
    name = path_or_target.rstrip("/").rsplit("/", 1)[-1].strip()
    folded = fold(name)
    return folded[:-3] if folded.endswith(".md") else folded


def heading_key(heading: str) -> str:
    """`[[#my plan]]` finds `## My Plan!`: punctuation to spaces, spaces collapsed, case folded."""
    return _SPACES_RE.sub(" ", _PUNCT_RE.sub(" ", fold(heading))).strip()


@dataclass(frozen=True)
class Resolution:
    path: str | None  # the file the link points to, or None for a wanted note
    candidates: tuple[str, ...] = ()  # every file that matched, when more than one did

    @property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1


def _strip_md(folded_path: str) -> str:
    return folded_path[:-3] if folded_path.endswith(".md") else folded_path


class FileSet:
    """The vault's files (notes and attachments) indexed for resolution."""

    def __init__(self, paths: Iterable[str] = ()) -> None:
        self._by_key: dict[str, list[str]] = {}
        self._by_path: dict[str, str] = {}  # folded path without ".md" for notes -> path
        for path in paths:
            self.add(path)

    def __contains__(self, path: str) -> bool:
        return _strip_md(fold(path)) in self._by_path

    def __len__(self) -> int:
        return len(self._by_path)

    def add(self, path: str) -> None:
        folded = _strip_md(fold(path))
        if folded in self._by_path:
            return
        self._by_path[folded] = path
        key = folded.rsplit("/", 1)[-1].strip()  # name_key(path), from the folded path
        self._by_key.setdefault(key, []).append(path)

    def remove(self, path: str) -> None:
        folded = _strip_md(fold(path))
        if self._by_path.pop(folded, None) is None:
            return
        same = self._by_key.get(name_key(path), [])
        if path in same:
            same.remove(path)

    def named(self, key: str) -> list[str]:
        return self._by_key.get(key, [])

    def exact(self, path: str) -> str | None:
        return self._by_path.get(_strip_md(fold(path)))

    def resolve(self, source: str, target: str) -> Resolution:
        """Resolve `target` as written in the note at `source`."""
        target = unicodedata.normalize("NFC", target.strip())
        if not target:
            return Resolution(source)
        folder = posixpath.dirname(source)
        if target.startswith(("./", "../")):
            joined = posixpath.normpath(posixpath.join(folder, target))
            if joined.startswith("../") or joined == "..":
                return Resolution(None)
            return Resolution(self.exact(joined))
        absolute = target.startswith("/")
        target = target.lstrip("/")
        candidates = self.named(name_key(target))
        if not candidates:
            return Resolution(None)
        if "/" in target:
            if hit := self.exact(target):
                return Resolution(hit)
            if not absolute and folder and (hit := self.exact(f"{folder}/{target}")):
                return Resolution(hit)
            suffix = "/" + _strip_md(fold(target))
            matches = [c for c in candidates if ("/" + _strip_md(fold(c))).endswith(suffix)]
            return _pick(matches, folder)
        if hit := self.exact(target):
            return Resolution(hit, tuple(sorted(candidates)) if len(candidates) > 1 else ())
        return _pick(candidates, folder)


def _pick(matches: list[str], folder: str) -> Resolution:
    if not matches:
        return Resolution(None)
    if len(matches) == 1:
        return Resolution(matches[0])
    ordered = tuple(sorted(matches))
    local = [m for m in ordered if posixpath.dirname(m) == folder]
    if local:
        return Resolution(local[0], ordered)
    return Resolution(min(ordered, key=lambda p: (len(p), p)), ordered)
