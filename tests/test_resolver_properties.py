"""Property-based tests (Hypothesis) of link resolution and of file names: any vault paths and
link targets resolve without raising, to a file of the vault; any file name a disk can hold
(Unicode, NFD, control characters, bytes that are not UTF-8, 255 bytes long) is scanned,
named as the index names it, read back by that name, and never stops a reindex."""

from __future__ import annotations

import os
import posixpath
import tempfile
import unicodedata
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.hostile.vaults import index_name
from vaultmem.resolver import FileSet, fold, name_key
from vaultmem.scan import read_note, scan
from vaultmem.vault import Vault

CHECKED = settings(
    # VAULTMEM_HYPOTHESIS_EXAMPLES=5000 for a longer hunt than CI's
    max_examples=int(os.environ.get("VAULTMEM_HYPOTHESIS_EXAMPLES", "300")),
    deadline=None,  # not the clock: see tests/test_parser_properties.py; a hang ends at 300 s
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# Names built from what trips resolvers: dots, spaces, case, accents in both forms, the
# characters of link syntax, and any other text.
NAME_BITS = ["a", "A", "é", "e\u0301", ".", " ", "-", "#", "|", "^", "[", "]", "%20", "md", "ß"]
part = (
    st.lists(st.one_of(st.sampled_from(NAME_BITS), st.text(max_size=4)), min_size=1, max_size=6)
    .map("".join)
    .map(lambda s: unicodedata.normalize("NFC", s.replace("/", "").replace("\x00", "")).strip())
    .filter(lambda s: bool(s) and not s.startswith("."))
)
vault_path = st.lists(part, min_size=1, max_size=3).map("/".join)
note_path = vault_path.map(lambda p: p + ".md")
file_path = st.one_of(note_path, vault_path, vault_path.map(lambda p: p + ".png"))
target = st.one_of(
    file_path,
    st.text(max_size=30),
    st.lists(st.sampled_from(["..", ".", "/", "a", "b.md", " ", "#x"]), max_size=6).map("".join),
)


@CHECKED
@given(st.lists(file_path, max_size=12), file_path, target)
def test_any_target_resolves_to_a_file_of_the_vault(
    paths: list[str], source: str, written: str
) -> None:
    files = FileSet(paths)
    got = files.resolve(source, written)
    assert got.path is None or got.path in paths or got.path == source
    assert set(got.candidates) <= set(paths)
    assert got == files.resolve(source, written)  # the same answer every time


@CHECKED
@given(st.lists(note_path, min_size=1, max_size=12), file_path, st.data())
def test_a_notes_own_path_finds_it(paths: list[str], source: str, data: st.DataObject) -> None:
    files = FileSet(paths)
    wanted = data.draw(st.sampled_from(paths))
    assume(not wanted.startswith("/"))
    got = files.resolve(source, wanted)
    assert got.path is not None and fold(got.path) == fold(wanted)
    name = posixpath.basename(wanted).removesuffix(".md")
    if not fold(name).endswith(".md"):  # `[[a.md]]` names a.md itself, not a.md.md
        bare = files.resolve(source, name)
        assert bare.path is not None and name_key(bare.path) == name_key(wanted)


# A file name as a Linux disk holds it: any bytes but "/" and NUL, at most 255 of them.
disk_name = st.one_of(
    st.binary(min_size=1, max_size=255),
    st.text(min_size=1, max_size=60).map(os.fsencode),
    st.text(min_size=1, max_size=30).map(lambda s: unicodedata.normalize("NFD", s).encode()),
).map(lambda b: b.replace(b"/", b"_").replace(b"\x00", b"_")[:252] + b".md")
disk_name = disk_name.filter(lambda b: not b.startswith(b"."))


@CHECKED
@given(disk_name)
def test_any_file_name_is_scanned_and_read_back_by_its_index_name(name: bytes) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        with open(os.path.join(os.fsencode(scratch), name), "wb") as handle:
            handle.write(b"some words\n")
        result = scan(Path(scratch))
        assert result.skipped == {}
        (found,) = result.files
        assert found.path == index_name(os.fsdecode(name))
        assert found.path.encode("utf-8")  # storable: no lone surrogate left
        assert read_note(Path(scratch) / found.disk_path).text == "some words\n"
        assert read_note(Path(scratch) / found.path).text == "some words\n"  # as vault.py reads


@settings(CHECKED, max_examples=25, deadline=timedelta(seconds=60))
@given(st.lists(disk_name, min_size=1, max_size=4, unique=True))
def test_a_reindex_of_any_file_names_accounts_for_each_file(names: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "vault"
        root.mkdir()
        for n, name in enumerate(names):
            with open(os.path.join(os.fsencode(root), name), "wb") as handle:
                handle.write(f"words of note {n}\n".encode())
        vault = Vault(root, Path(scratch) / "index.db")
        report = vault.reindex(embed=False)
        doctor = vault.doctor()
        assert report.notes + len(doctor.skipped) == len(names)
        assert {p for p, _ in doctor.skipped} <= {index_name(os.fsdecode(n)) for n in names}
        vault.close()
