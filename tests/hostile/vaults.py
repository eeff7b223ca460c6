"""Hostile vaults: notes and files built to break an indexer, and what a reindex must make of them.

Each `Case` builds its files into its own folder of a vault (and, when it needs one, a folder
outside the vault), may change them between the scan and the reads of a reindex (`during`,
the races), and says what the index must hold afterwards: which notes are indexed, which words
search finds in them, which paths `doctor` reports (with a warning or a skip reason) and which
words must never be found (text from outside the vault). `build_vault` puts any set of cases
into one vault, so the same cases run one by one and all at once.

Add a case for every bug found: the suite grows with them. `python -m tests.hostile.vaults DIR`
writes the all-at-once vault (without the races) into DIR to try it by hand.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
import tempfile
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Category = Literal["yaml", "encodings", "names", "sizes", "file types", "races"]
CATEGORIES: tuple[Category, ...] = ("yaml", "encodings", "names", "sizes", "file types", "races")

Build = Callable[[Path, Path], None]  # (the case's folder in the vault, its folder outside)


@dataclass(frozen=True)
class Case:
    name: str  # also the case's folder in the vault
    category: Category
    build: Build
    indexed: tuple[str, ...] = ()  # notes (paths as the index names them) that must be indexed
    found: tuple[tuple[str, str], ...] = ()  # (word, note): keyword search finds note by word
    # (path, words in its warning or skip reason); a path ending in "*" means one under it
    reported: tuple[tuple[str, str], ...] = ()
    never_found: tuple[str, ...] = ()  # words no search may find (they live outside the vault)
    during: Build | None = None  # run between the reindex's scan and its reads (a race)
    defect: int | None = None  # the issue-15 defect this case reproduces
    needs: Callable[[], str | None] = field(default=lambda: None)  # why it cannot run here

    def rel(self, path: str) -> str:
        return f"{self.name}/{path}"


def _write(folder: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8") if isinstance(content, str) else content
        path.write_bytes(data)


def files(spec: dict[str, str | bytes]) -> Build:
    """A build that writes these files (str as UTF-8) into the case's folder."""
    return lambda folder, _outside: _write(folder, spec)


def _raw_name(folder: Path, name: bytes, content: bytes) -> None:
    """A file whose name holds bytes that are not UTF-8 (Linux allows any byte but / and NUL)."""
    with open(os.path.join(os.fsencode(folder), name), "wb") as handle:
        handle.write(content)


def _front(yaml_text: str, body: str = "body text") -> str:
    return f"---\n{yaml_text}\n---\n{body}\n"


NFD_DEJA = "de\u0301ja\u0300 vu"  # "déjà vu" as macOS writes it
NFC_DEJA = "déjà vu"


def _billion_laughs() -> str:
    """Nine levels of nine aliases: 387 million values once expanded, from 500 bytes."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 10):
        refs = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"l{level}: &l{level} [{refs}]")
    return "\n".join(lines)


def _many_properties(count: int) -> str:
    return "\n".join(f"p{n}: {n}" for n in range(count))


# ---------------------------------------------------------------------------------- YAML

YAML: list[Case] = [
    Case(
        "invalid-date",
        "yaml",
        files({"a.md": _front("date: 2026-02-30\ntitle: kept", "lemonade")}),
        indexed=("a.md",),
        found=(("lemonade", "a.md"),),
        reported=(("a.md", "'2026-02-30' is not a real date"),),
        defect=4,
    ),
    Case(
        "invalid-month-and-hour",
        "yaml",
        files(
            {
                "m.md": _front("due: 2026-13-01", "marmalade"),
                "h.md": _front("at: 2026-01-01 25:00:00", "hourglass"),
            }
        ),
        indexed=("m.md", "h.md"),
        found=(("marmalade", "m.md"), ("hourglass", "h.md")),
        reported=(("m.md", "not a real date"), ("h.md", "not a real date")),
        defect=4,
    ),
    Case(
        "number-too-long",
        "yaml",
        files({"n.md": _front("n: " + "9" * 5000, "numerals")}),
        indexed=("n.md",),
        found=(("numerals", "n.md"),),
        reported=(("n.md", "is not a number"),),
        defect=4,
    ),
    Case(
        "bad-tagged-scalars",
        "yaml",
        files({"t.md": _front('a: !!int abc\nb: !!float x\nc: !!timestamp "never"', "tagged")}),
        indexed=("t.md",),
        found=(("tagged", "t.md"),),
        reported=(("t.md", "'never' is not a real date"),),
        defect=4,
    ),
    Case(
        "recursive-alias",
        "yaml",
        files(
            {
                "list.md": _front("a: &a [*a]\nb: kept", "recursion"),
                "map.md": _front("a: &a {self: *a}", "mapping"),
            }
        ),
        indexed=("list.md", "map.md"),
        found=(("recursion", "list.md"), ("mapping", "map.md")),
        reported=(("list.md", "recursive YAML alias"), ("map.md", "recursive YAML alias")),
        defect=5,
    ),
    Case(
        "billion-laughs",
        "yaml",
        files({"lol.md": _front(_billion_laughs(), "giggles")}),
        indexed=("lol.md",),
        found=(("giggles", "lol.md"),),
        reported=(("lol.md", "values with YAML aliases expanded"),),
        defect=6,
    ),
    Case(
        "alias-text-bomb",  # aliases of a long string: few values, megabytes of text
        "yaml",
        files(
            {
                "bomb.md": _front(
                    f"s: &s {'x' * 50_000}\nmany: [{', '.join(['*s'] * 200)}]", "detonator"
                )
            }
        ),
        indexed=("bomb.md",),
        found=(("detonator", "bomb.md"),),
        reported=(("bomb.md", "KB of text with YAML aliases expanded"),),
    ),
    Case(
        "twenty-thousand-properties",
        "yaml",
        files({"props.md": _front(_many_properties(20_000), "plenty")}),
        indexed=("props.md",),
        found=(("plenty", "props.md"),),
        reported=(("props.md", "20,000 properties"),),
        defect=7,
    ),
    Case(
        "deep-nesting",  # libyaml stops at 1,000 levels; the parser must stop well before
        "yaml",
        files({"deep.md": _front("a: " + "[" * 900 + "]" * 900 + "\nb: kept", "abyss")}),
        indexed=("deep.md",),
        found=(("abyss", "deep.md"),),
        reported=(("deep.md", "nested deeper than"),),
    ),
    Case(
        "front-matter-too-large",
        "yaml",
        files({"big.md": _front("\n".join(f"k{n}: {'v' * 90}" for n in range(4000)), "bulky")}),
        indexed=("big.md",),
        found=(("bulky", "big.md"),),
        reported=(("big.md", "front matter larger than"),),
    ),
    Case(
        "python-object-tag",  # the safe loader must never run code
        "yaml",
        files(
            {
                "evil.md": _front(
                    'x: !!python/object/apply:os.system ["touch /tmp/vaultmem-pwned"]\nok: 1',
                    "sinister",
                )
            }
        ),
        indexed=("evil.md",),
        found=(("sinister", "evil.md"),),
        reported=(("evil.md", "broken YAML front matter"),),
    ),
    Case(
        "unhashable-key-and-not-a-mapping",
        "yaml",
        files(
            {
                "key.md": _front("? [a, b]\n: x", "unhashable"),
                "list.md": _front("- a\n- b", "listed"),
                "escape.md": _front('a: "\\ud800"', "surrogate"),
            }
        ),
        indexed=("key.md", "list.md", "escape.md"),
        found=(("unhashable", "key.md"), ("listed", "list.md"), ("surrogate", "escape.md")),
        reported=(
            ("key.md", "broken YAML"),
            ("list.md", "not a mapping"),
            ("escape.md", "broken YAML"),
        ),
    ),
]

# ----------------------------------------------------------------------------- encodings

ENCODINGS: list[Case] = [
    Case(
        "utf16",
        "encodings",
        files(
            {
                "le.md": "\ufeff# Little endian\nwidechar".encode("utf-16-le"),
                "be.md": "\ufeff# Big endian\nbigchar".encode("utf-16-be"),
            }
        ),
        indexed=("le.md", "be.md"),
        found=(("widechar", "le.md"), ("bigchar", "be.md")),
        reported=(("le.md", "UTF-16"), ("be.md", "UTF-16")),
    ),
    Case(
        "latin1-and-broken-utf8",
        "encodings",
        files(
            {
                "latin.md": "caf\xe9 cr\xe8me brul\xe9e".encode("latin-1"),
                "fm.md": b"---\ntitle: caf\xe9\n---\nfrontbody\n",
                "cesu.md": b"surrogate \xed\xa0\x80 bytes encoded\n",
            }
        ),
        indexed=("latin.md", "fm.md", "cesu.md"),
        found=(("crème", "latin.md"), ("frontbody", "fm.md"), ("encoded", "cesu.md")),
        reported=(("latin.md", "not valid UTF-8"), ("cesu.md", "not valid UTF-8")),
    ),
    Case(
        "binary-named-md",
        "encodings",
        files({"blob.md": b"\x00\x01\x02\xff" * 100, "ok.md": "fine neighbour"}),
        indexed=("ok.md",),
        found=(("neighbour", "ok.md"),),
        reported=(("blob.md", "binary file"),),
    ),
    Case(
        "line-ends-and-nul",
        "encodings",
        files(
            {
                "cr.md": "# Old Mac\rcarriage\rreturns\r",
                "bom.md": "\ufeff---\r\ntags: [x]\r\n---\r\nbyteorder\r\n",
                "nul.md": "a" * 9000 + "\x00 tail nulword\n",
                "seps.md": "form\x0cfeed and line\u2028separator paragraphs\n",
            }
        ),
        indexed=("cr.md", "bom.md", "nul.md", "seps.md"),
        found=(("carriage", "cr.md"), ("byteorder", "bom.md"), ("separator", "seps.md")),
        reported=(("nul.md", "NUL bytes replaced"),),
    ),
]

# --------------------------------------------------------------------------------- names


def _nfd_twins(folder: Path, _outside: Path) -> None:
    _write(folder, {"café.md": "composed form", "cafe\u0301.md": "decomposed form"})


def _bad_bytes(folder: Path, _outside: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    _raw_name(folder, b"caf\xe9.md", b"latin name bytes [[other]]")
    _write(folder, {"other.md": "the other note"})


def _bad_byte_twins(folder: Path, _outside: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    _raw_name(folder, b"a\xfe.md", b"first twin")
    _raw_name(folder, b"a\xff.md", b"second twin")


def _bad_folder(folder: Path, _outside: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    sub = os.path.join(os.fsencode(folder), b"dir\xff")
    os.mkdir(sub)
    with open(os.path.join(sub, b"inner.md"), "wb") as handle:
        handle.write(b"inside a folder with a bad name")


def _greek_question_mark(folder: Path, _outside: Path) -> None:
    # U+037E is canonically the ASCII semicolon: NFC turns "a\u037e.md" into "a;.md"
    _write(folder, {"a;.md": "ascii semicolon", "a\u037e.md": "greek question mark"})


def _too_deep(folder: Path, _outside: Path) -> None:
    """Folders nested past PATH_MAX (4,096 bytes), made one level at a time."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(40):
            os.mkdir("d" * 120, dir_fd=fd)
            inner = os.open("d" * 120, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        note = os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(note, b"too deep to reach")
        os.close(note)
    finally:
        os.close(fd)
    _write(folder, {"shallow.md": "shallow note"})


NAMES: list[Case] = [
    Case(
        "nfd-name",
        "names",
        files({f"{NFD_DEJA}.md": "macintosh wrote this"}),
        indexed=(f"{NFC_DEJA}.md",),
        found=(("macintosh", f"{NFC_DEJA}.md"),),
        defect=15,
    ),
    Case(
        "nfd-folder",
        "names",
        files({"re\u0301sume\u0301/note.md": "folder decomposed"}),
        indexed=("résumé/note.md",),
        found=(("decomposed", "résumé/note.md"),),
        defect=15,
    ),
    Case(
        "nfc-and-nfd-twins",
        "names",
        _nfd_twins,
        indexed=("café.md",),
        found=(("composed", "café.md"),),
        reported=(("café.md", "all read as"),),
        defect=8,
    ),
    Case(
        "not-utf8-name",
        "names",
        _bad_bytes,
        indexed=("caf\ufffd.md", "other.md"),
        found=(("latin", "caf\ufffd.md"),),
        reported=(("caf\ufffd.md", "not valid UTF-8"),),
        defect=9,
    ),
    Case(
        "not-utf8-twins",
        "names",
        _bad_byte_twins,
        indexed=("a\ufffd.md",),
        reported=(("a\ufffd.md", "all read as"),),
        defect=9,
    ),
    Case(
        "not-utf8-folder",
        "names",
        _bad_folder,
        indexed=("dir\ufffd/inner.md",),
        found=(("inside", "dir\ufffd/inner.md"),),
        reported=(("dir\ufffd/inner.md", "not valid UTF-8"),),
        defect=9,
    ),
    Case(
        "nfc-to-ascii-twins",
        "names",
        _greek_question_mark,
        indexed=("a;.md",),
        found=(("ascii", "a;.md"),),
        reported=(("a;.md", "all read as"),),
        defect=8,
    ),
    Case(
        "control-and-link-characters",
        "names",
        files(
            {
                "tab\there.md": "tabbed",
                "new\nline.md": "newlined",
                "bell\x07.md": "ringing",
                "a]]b.md": "brackets",
                "#hash.md": "hashed",
                "a|b.md": "piped",
                " spaced .md": "spaced",
                "%20.md": "percent",
            }
        ),
        indexed=(
            "tab\there.md",
            "new\nline.md",
            "bell\x07.md",
            "a]]b.md",
            "#hash.md",
            "a|b.md",
            " spaced .md",
            "%20.md",
        ),
        found=(("newlined", "new\nline.md"), ("ringing", "bell\x07.md")),
    ),
    Case(
        "path-too-long",
        "names",
        _too_deep,
        indexed=("shallow.md",),
        reported=(("d" * 120 + "/*", "cannot list folder"),),
    ),
    Case(
        "long-name",
        "names",
        files({"n" * 252 + ".md": "lengthy"}),
        indexed=("n" * 252 + ".md",),
        found=(("lengthy", "n" * 252 + ".md"),),
    ),
]

# --------------------------------------------------------------------------------- sizes

SIZES: list[Case] = [
    Case(
        "long-line",
        "sizes",
        files({"line.md": "word " * 400_000 + "needle\n"}),
        indexed=("line.md",),
        found=(("needle", "line.md"),),
    ),
    Case(
        "many-lines-and-links",
        "sizes",
        files(
            {
                "lines.md": "\n" * 100_000 + "bottom\n",
                "links.md": "".join(f"- [[target {n}]] #t{n}\n" for n in range(5_000)),
            }
        ),
        indexed=("lines.md", "links.md"),
        found=(("bottom", "lines.md"),),
    ),
    # bodies the parser once took minutes or hours on (quadratic scans); each must parse
    # in linear time (tests/test_parser_bounded.py has them at full size)
    Case(
        "bracket-floods",
        "sizes",
        files(
            {
                "double.md": "[[" * 50_000 + " needle [[Real]]\n",
                "open.md": "[" * 200_000 + " lantern\n",
                "then-link.md": "[" * 30_000 + " marigold [x](double.md) [[Real]]\n",
            }
        ),
        indexed=("double.md", "open.md", "then-link.md"),
        found=(("needle", "double.md"), ("lantern", "open.md"), ("marigold", "then-link.md")),
        reported=(("then-link.md", "markdown links"),),
    ),
    Case(
        "headings-and-ticks",
        "sizes",
        files(
            {
                "headings.md": "".join(f"## Part {i}\nline\n" for i in range(20_000)),
                "ticks.md": "".join("`" * k + " " for k in range(2, 700)) + "%% x %% wombat\n",
            }
        ),
        indexed=("headings.md", "ticks.md"),
        found=(("wombat", "ticks.md"),),
    ),
    Case(
        "unclosed-front-matter",
        "sizes",
        files({"open.md": "---\n" + "k: v\n" * 10_000 + "unterminated\n", "empty.md": ""}),
        indexed=("open.md", "empty.md"),
        found=(("unterminated", "open.md"),),
    ),
]

# ----------------------------------------------------------------------------- file types


def _fifo(folder: Path, _outside: Path) -> None:
    _write(folder, {"ok.md": "plain sibling"})
    os.mkfifo(folder / "pipe.md")


def _socket(folder: Path, _outside: Path) -> None:
    _write(folder, {"ok.md": "plain sibling"})
    sock = socket.socket(socket.AF_UNIX)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:  # AF_UNIX paths are short (108 bytes): bind through the folder's descriptor
        sock.bind(f"/proc/self/fd/{fd}/socket.md")
    finally:
        os.close(fd)
        sock.close()


def _can_mknod() -> str | None:
    with tempfile.TemporaryDirectory() as scratch:
        try:
            os.mknod(os.path.join(scratch, "n"), stat.S_IFCHR | 0o600, os.makedev(1, 3))
        except OSError as exc:
            return f"cannot make a device node here ({exc.strerror})"
    return None


def _device(folder: Path, _outside: Path) -> None:
    _write(folder, {"ok.md": "plain sibling"})
    os.mknod(folder / "null.md", stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null


def _links(folder: Path, outside: Path) -> None:
    _write(folder, {"real.md": "real note", "x.md/inner.md": "in a folder named like a note"})
    _write(outside, {"secret.md": "outsidesecret", "dir/leak.md": "outsidefolder"})
    os.symlink("missing.md", folder / "broken.md")
    os.symlink("loop.md", folder / "loop.md")
    os.symlink(outside / "secret.md", folder / "secret.md")
    os.symlink(outside / "dir", folder / "dir")
    os.symlink("real.md", folder / "alias.md")  # a symlinked note inside the vault is read
    os.mkfifo(folder / "fifo")
    os.symlink("fifo", folder / "pipe.md")


FILE_TYPES: list[Case] = [
    Case(
        "fifo",
        "file types",
        _fifo,
        indexed=("ok.md",),
        reported=(("pipe.md", "named pipe"),),
    ),
    Case(
        "socket",
        "file types",
        _socket,
        indexed=("ok.md",),
        reported=(("socket.md", "socket"),),
        needs=lambda: None if os.path.isdir("/proc/self/fd") else "binds through /proc (Linux)",
    ),
    Case(
        "device",
        "file types",
        _device,
        indexed=("ok.md",),
        reported=(("null.md", "device"),),
        needs=_can_mknod,
    ),
    Case(
        "symlinks-and-folders",
        "file types",
        _links,
        indexed=("real.md", "alias.md", "x.md/inner.md"),
        found=(("real", "alias.md"), ("named", "x.md/inner.md")),
        reported=(
            ("broken.md", "broken symlink"),
            ("loop.md", "symlink loop"),
            ("secret.md", "outside the vault"),
            ("dir", "outside the vault"),
            ("fifo", "named pipe"),
            ("pipe.md", "named pipe"),
        ),
        never_found=("outsidesecret", "outsidefolder"),
    ),
]

# --------------------------------------------------------------------------------- races


def _swap_for_outside_symlink(folder: Path, outside: Path) -> None:
    os.remove(folder / "swapped.md")
    os.symlink(outside / "passwords.md", folder / "swapped.md")


def _swap_folder_for_outside_symlink(folder: Path, outside: Path) -> None:
    os.rename(folder / "sub", outside / "moved-away")
    os.symlink(outside / "sub", folder / "sub")


def _swap_for_fifo(folder: Path, _outside: Path) -> None:
    os.remove(folder / "piped.md")
    os.mkfifo(folder / "piped.md")


def _swap_for_folder(folder: Path, _outside: Path) -> None:
    os.remove(folder / "now-a-folder.md")
    os.mkdir(folder / "now-a-folder.md")


def _grow(folder: Path, _outside: Path) -> None:
    os.truncate(folder / "grows.md", 11 << 20)  # past the default max_file_mb of 10


def _delete(folder: Path, _outside: Path) -> None:
    os.remove(folder / "gone.md")


def _innocent_note(folder: Path, outside: Path) -> None:
    _write(folder, {"swapped.md": "innocent", "stays.md": "steady"})
    _write(outside, {"passwords.md": "hunter2secret"})


def _innocent_folder(folder: Path, outside: Path) -> None:
    _write(folder, {"sub/n.md": "innocent folder", "stays.md": "steady"})
    _write(outside, {"sub/n.md": "folderleaksecret"})


RACES: list[Case] = [
    Case(
        "swapped-for-symlink-outside",
        "races",
        _innocent_note,
        during=_swap_for_outside_symlink,
        indexed=("stays.md",),
        reported=(("swapped.md", "outside the vault"),),
        never_found=("hunter2secret",),
        defect=3,
    ),
    Case(
        "folder-swapped-for-symlink-outside",
        "races",
        _innocent_folder,
        during=_swap_folder_for_outside_symlink,
        indexed=("stays.md",),
        reported=(("sub/n.md", "outside the vault"),),
        never_found=("folderleaksecret",),
        defect=3,
    ),
    Case(
        "swapped-for-fifo",
        "races",
        files({"piped.md": "plain at first", "stays.md": "steady"}),
        during=_swap_for_fifo,
        indexed=("stays.md",),
        reported=(("piped.md", "named pipe"),),
        defect=11,
    ),
    Case(
        "swapped-for-folder",
        "races",
        files({"now-a-folder.md": "plain at first", "stays.md": "steady"}),
        during=_swap_for_folder,
        indexed=("stays.md",),
        reported=(("now-a-folder.md", "folder"),),
    ),
    Case(
        "grows-past-the-limit",
        "races",
        files({"grows.md": "small at first", "stays.md": "steady"}),
        during=_grow,
        indexed=("stays.md",),
        reported=(("grows.md", "larger than 10 MB"),),
    ),
    Case(
        "deleted",
        "races",
        files({"gone.md": "here at first", "stays.md": "steady"}),
        during=_delete,
        indexed=("stays.md",),
    ),
]

CASES: tuple[Case, ...] = (*YAML, *ENCODINGS, *NAMES, *SIZES, *FILE_TYPES, *RACES)
GOOD_NOTES = {
    "control/plain.md": "an ordinary note [[control/linked]] #fine",
    "control/linked.md": "x",
}


def build_vault(vault: Path, outside: Path, cases: Iterable[Case]) -> list[Case]:
    """Write `cases` (each in its own folder) and a few ordinary notes into `vault`; returns the
    cases built (those that can run on this machine)."""
    built: list[Case] = []
    _write(vault, GOOD_NOTES)
    (vault / ".obsidian").mkdir(parents=True, exist_ok=True)
    for case in cases:
        if case.needs() is not None:
            continue
        case.build(vault / case.name, outside / case.name)
        built.append(case)
    return built


def races(vault: Path, outside: Path, cases: Iterable[Case]) -> None:
    """Run the cases' changes meant for the moment between a reindex's scan and its reads."""
    for case in cases:
        if case.during is not None:
            case.during(vault / case.name, outside / case.name)


def index_name(rel: str) -> str:
    """How the index must name a vault-relative path found on disk: NFC, and bytes that are
    not UTF-8 (lone surrogates in Python) as U+FFFD."""
    fixed = os.fsencode(rel).decode("utf-8", "replace")
    return unicodedata.normalize("NFC", fixed)


def release_fifos(root: Path) -> None:
    """Let a reader blocked on opening a FIFO under `root` go (it reads end-of-file)."""
    for folder, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            path = os.path.join(folder, name)
            try:
                if stat.S_ISFIFO(os.lstat(path).st_mode):
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass  # no reader waiting


if __name__ == "__main__":  # python -m tests.hostile.vaults DIR
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "hostile-vault")
    made = build_vault(target / "vault", target / "outside", [c for c in CASES if not c.during])
    print(f"{len(made)} cases in {target / 'vault'} (outside files in {target / 'outside'})")
