"""Link resolution the way Obsidian does it (pure: vault file paths in, resolved paths out)."""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable, Mapping
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


def _variants(target: str) -> tuple[str, ...]:
    """The folded file paths a target can name, best first.

    `Note` names Note.md before a file called plain `Note`; `image.png` names that file before
    a note `image.png.md` (and `Note.1` finds Note.1.md); `Note.md` names only Note.md.
    """
    folded = fold(target)
    if folded.endswith(".md"):
        return (folded,)
    if "." in folded.rsplit("/", 1)[-1]:
        return (folded, folded + ".md")
    return (folded + ".md", folded)


def _rank(path: str, variants: tuple[str, ...]) -> int | None:
    """Which variant `path` ends with (as whole path parts), or None when none does."""
    folded = "/" + fold(path)
    return next((i for i, v in enumerate(variants) if folded.endswith("/" + v)), None)


class FileSet:
    """The vault's files (notes and attachments) indexed for resolution."""

    def __init__(
        self, paths: Iterable[str] = (), url_prefixes: Mapping[str, str] | None = None
    ) -> None:
        # name_key() buckets `Note.md` with a file called plain `Note`; the full folded path
        # (extension kept) tells them apart, so neither hides the other.
        self._by_key: dict[str, list[str]] = {}
        self._by_path: dict[str, str] = {}  # folded path -> path
        # An opt-in extension for vaults made from docs sites (not Obsidian behaviour): links
        # such as `/en-US/docs/Web/API` point into a vault folder, and a folder means its
        # index.md or README.md. Longest prefix first, so nested mappings win.
        self._prefixes = sorted(
            ((fold(k), v.strip("/")) for k, v in (url_prefixes or {}).items()),
            key=lambda kv: -len(kv[0]),
        )
        # add()'s body, inlined: this loop runs over every file on every reindex that resolves
        by_path, by_key = self._by_path, self._by_key
        for path in paths:
            folded = path.lower() if path.isascii() else fold(path)
            if folded in by_path:
                continue
            by_path[folded] = path
            key = folded.rsplit("/", 1)[-1].strip()
            if key.endswith(".md"):
                key = key[:-3]
            if key in by_key:
                by_key[key].append(path)
            else:
                by_key[key] = [path]

    def _map_url(self, target: str) -> str | None:
        """The vault path a docs-site URL names under a configured prefix, else None."""
        return _map_url(self._prefixes, target)

    def __contains__(self, path: str) -> bool:
        return self.exact(path) is not None

    def __len__(self) -> int:
        return len(self._by_path)

    def add(self, path: str) -> None:
        folded = fold(path)
        if folded in self._by_path:
            return
        self._by_path[folded] = path
        key = folded.rsplit("/", 1)[-1].strip()  # name_key(path), from the folded path
        self._by_key.setdefault(key[:-3] if key.endswith(".md") else key, []).append(path)

    def remove(self, path: str) -> None:
        if self._by_path.pop(fold(path), None) is None:
            return
        same = self._by_key.get(name_key(path), [])
        if path in same:
            same.remove(path)

    def named(self, key: str) -> list[str]:
        return self._by_key.get(key, [])

    def exact(self, path: str) -> str | None:
        """The file at vault path `path` (`.md` optional for a note)."""
        return next((hit for v in _variants(path) if (hit := self._by_path.get(v))), None)

    def resolve(self, source: str, target: str) -> Resolution:
        """Resolve `target` as written in the note at `source`."""
        target = unicodedata.normalize("NFC", target.strip())
        if not target:
            return Resolution(source)
        folder = posixpath.dirname(source)
        if self._prefixes and (mapped := self._map_url(target)) is not None:
            tries = [f"{mapped}{p}" for p in FOLDER_NOTES] if mapped else ["index", "README"]
            return Resolution(next((hit for t in tries if (hit := self.exact(t))), None))
        if target.startswith(("./", "../")):
            joined = posixpath.normpath(posixpath.join(folder, target))
            if joined.startswith("../") or joined == "..":
                return Resolution(None)
            return Resolution(self.exact(joined))
        absolute = target.startswith("/")
        target = target.lstrip("/")
        variants = _variants(target)
        ranked = [
            (r, c) for c in self.named(name_key(target)) if (r := _rank(c, variants)) is not None
        ]
        if not ranked:
            return Resolution(None)
        best = min(r for r, _ in ranked)
        candidates = [c for _, c in ranked]
        matches = [c for r, c in ranked if r == best]
        if "/" in target or absolute:  # a path: one file, never ambiguous when it exists
            if hit := self.exact(target):
                return Resolution(hit)
            if not absolute and folder and (hit := self.exact(f"{folder}/{target}")):
                return Resolution(hit)
            return _pick(matches, folder, candidates)
        if hit := self.exact(target):
            return Resolution(hit, tuple(sorted(candidates)) if len(candidates) > 1 else ())
        return _pick(matches, folder, candidates)


FOLDER_NOTES = ("", "/index", "/README")


def _map_url(prefixes: list[tuple[str, str]], target: str) -> str | None:
    folded = fold(target)
    for prefix, folder in prefixes:
        if folded.startswith(prefix):
            rest = target[len(prefix) :].strip("/")
            path = posixpath.normpath(f"{folder}/{rest}" if folder else rest).lstrip("/")
            return "" if path == "." else path
    return None


def _pick(matches: list[str], folder: str, candidates: list[str]) -> Resolution:
    """The file in the linking note's folder, else the shortest path; all candidates reported."""
    reported = tuple(sorted(candidates)) if len(candidates) > 1 else ()
    if len(matches) == 1:
        return Resolution(matches[0], reported)
    local = sorted(m for m in matches if posixpath.dirname(m) == folder)
    if local:
        return Resolution(local[0], reported)
    return Resolution(min(matches, key=lambda p: (len(p), p)), reported)
