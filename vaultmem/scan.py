"""Finding the vault's files (ignore rules, symlink loops) and reading notes safely."""

from __future__ import annotations

import codecs
import fnmatch
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Literal, NamedTuple

from vaultmem.edits import digest as content_digest

FileKind = Literal["note", "attachment"]
_BINARY_PROBE = 8192


class VaultFile(NamedTuple):  # a tuple: made once per file on every reindex, so it must be cheap
    path: str  # vault-relative, forward slashes, NFC
    kind: FileKind
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class ScanResult:
    files: list[VaultFile]
    skipped: dict[str, str]  # path -> why


def excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    for raw in patterns:
        pattern = raw.strip().strip("/")
        if not pattern:
            continue
        if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern + "/*"):
            return True
        if "/" not in pattern and fnmatch.fnmatchcase(name, pattern):
            return True
    return False


def scan(root: Path, exclude: tuple[str, ...] = (), max_bytes: int = 10 << 20) -> ScanResult:
    """Every note and attachment under `root`, skipping dot-folders, excludes and oversize notes."""
    files: list[VaultFile] = []
    append = files.append
    skipped: dict[str, str] = {}
    real_root = os.path.realpath(root)
    # (folder on disk, its vault-relative prefix); plain strings and few calls per entry: this
    # loop is most of a no-op reindex
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            skipped[prefix.rstrip("/") or "."] = f"cannot list folder: {exc.strerror or exc}"
            continue
        for entry in entries:
            name = entry.name
            if name[0] == ".":
                continue
            rel = prefix + name
            if not rel.isascii():
                rel = unicodedata.normalize("NFC", rel)
            if exclude and excluded(rel, exclude):
                continue
            try:
                if entry.is_symlink():
                    # The vault's boundary is its real folder: a symlink leading out of it is
                    # never read, so nothing (search, an agent over MCP) can reach outside files.
                    real = os.path.realpath(entry.path)
                    if os.path.exists(real) and not _inside(real, real_root):
                        skipped[rel] = "symlink to outside the vault: vaultmem reads only inside it"
                        continue
                if entry.is_dir():  # follows symlinks; no stat call for plain folders
                    if entry.is_symlink():
                        reason = _symlinked_folder_problem(real, os.path.realpath(folder))
                        if reason:
                            skipped[rel] = reason
                            continue
                    stack.append((entry.path, rel + "/"))
                    continue
                est = entry.stat()  # follows symlinks: a broken one raises
            except OSError as exc:
                broken = entry.is_symlink() and not os.path.exists(entry.path)
                skipped[rel] = "broken symlink" if broken else f"cannot stat: {exc.strerror}"
                continue
            if not S_ISREG(est.st_mode):
                continue  # sockets, fifos, devices
            if name[-3:].lower() == ".md":
                if est.st_size > max_bytes:
                    skipped[rel] = (
                        f"larger than {max_bytes / (1 << 20):g} MB "
                        f"({est.st_size / (1 << 20):.1f} MB);"
                        " raise max_file_mb in .vaultmem/config.toml to index it"
                    )
                    continue
                append(VaultFile(rel, "note", est.st_size, est.st_mtime_ns))
            else:
                append(VaultFile(rel, "attachment", est.st_size, est.st_mtime_ns))
    return ScanResult(files, skipped)  # in walk order: callers sort what they need sorted


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _symlinked_folder_problem(real: str, real_folder: str) -> str | None:
    """Why a symlink to a folder inside the vault must not be followed, or None."""
    inside = real_folder + os.sep
    if real == real_folder or inside.startswith(real + os.sep):
        return "symlink loop: it points at a folder that contains it"
    return "symlink to a folder inside the vault, which is indexed already"


class Unreadable(Exception):
    """A note that cannot be indexed; the message says why (shown by `vaultmem doctor`)."""


@dataclass(frozen=True)
class NoteText:
    text: str
    digest: str
    warning: str | None


def read_note(path: Path) -> NoteText:
    """Read a note's bytes and decode them, refusing binary files."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from exc
    digest = content_digest(data)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return NoteText(data.decode("utf-16", errors="replace"), digest, "UTF-16 file read")
    if b"\x00" in data[:_BINARY_PROBE]:
        raise Unreadable("binary file with a .md name (NUL bytes); not indexed")
    try:
        return NoteText(data.decode("utf-8"), digest, None)
    except UnicodeDecodeError as exc:
        warning = (
            f"not valid UTF-8 (byte {exc.start}); read as Windows-1252, "
            "re-save the file as UTF-8 to silence this"
        )
        return NoteText(data.decode("cp1252", errors="replace"), digest, warning)
