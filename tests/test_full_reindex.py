"""`reindex --full` keeps the vectors it can (a section whose text and model are unchanged is
not embedded again), still recovers from a damaged index file, and never deletes a file that is
not vaultmem's. A counting embedder proves what was embedded."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_VAULT, MakeVault
from vaultmem import store
from vaultmem.embed import FakeEmbedder, Vectors
from vaultmem.errors import UsageError
from vaultmem.vault import Vault

NOTES = {
    "a.md": "# Alpha\nheat pump sizing\n\n## Sizing\nthe flow temperature matters\n",
    "b.md": "# Beta\nlinks to [[a]]\n\n## Tariffs\ndynamic prices each hour\n",
    "c.md": "# Gamma\nsourdough starter feeding\n",
}


class Counting(FakeEmbedder):
    """The fake embedder, counting every text it is asked to embed."""

    def __init__(self, dim: int = 32) -> None:
        super().__init__(dim)
        self.texts: list[str] = []

    def _embed_batch(self, texts: list[str]) -> Vectors:
        self.texts.extend(texts)
        return super()._embed_batch(texts)


QUERIES = ("flow temperature", "sourdough starter", "dynamic prices", "links")


def hits(vault: Vault, query: str) -> list[tuple[str, int, float]]:
    found = vault.search(query, mode="semantic").hits
    return [(h.path, h.start_line, round(h.score, 6)) for h in found]


def vectors(vault: Vault) -> list[bytes]:
    return sorted(v for _, v in store.iter_vectors(vault.conn))


def sections(vault: Vault) -> int:
    return len(store.chunks_without_vectors(vault.conn)) + store.vector_count(vault.conn)


@pytest.fixture
def indexed(make_vault: MakeVault) -> tuple[Vault, Counting]:
    vault = make_vault(NOTES)
    first = Counting()
    report = vault.index.reindex(embedder=first)
    assert report.embeddings is not None and report.embeddings.embedded == sections(vault) > 3
    assert len(first.texts) == sections(vault)
    return vault, first


def test_full_reindex_embeds_nothing_whose_text_is_unchanged(
    indexed: tuple[Vault, Counting],
) -> None:
    vault, _ = indexed
    before = vectors(vault)
    found = {q: hits(vault, q) for q in QUERIES}
    counting = Counting()
    report = vault.index.reindex(full=True, embedder=counting)
    assert counting.texts == []
    assert report.embeddings is not None
    assert (report.embeddings.embedded, report.embeddings.reused) == (0, len(before))
    assert report.changed == len(NOTES)  # every note was read again: a rebuild
    assert vectors(vault) == before
    assert {q: hits(vault, q) for q in QUERIES} == found  # each section has its own vector


def test_full_reindex_embeds_only_the_sections_that_changed(
    indexed: tuple[Vault, Counting],
) -> None:
    vault, _ = indexed
    total = sections(vault)
    text = NOTES["b.md"].replace("dynamic prices each hour", "prices set a day ahead")
    (vault.root / "b.md").write_text(text, encoding="utf-8")
    counting = Counting()
    report = vault.index.reindex(full=True, embedder=counting)
    assert len(counting.texts) == 1 and "prices set a day ahead" in counting.texts[0]
    assert report.embeddings is not None and report.embeddings.reused == total - 1
    assert ("b.md", 4) in [(h.path, h.start_line) for h in vault.search("a day ahead").hits]


def test_another_model_embeds_everything(indexed: tuple[Vault, Counting]) -> None:
    vault, _ = indexed
    other = Counting(dim=16)  # fake:16, another model name: its vectors are its own
    vault.index.reindex(full=True, embedder=other)
    assert len(other.texts) == sections(vault)
    back = Counting()  # back to fake:32: its cached vectors survived the other model's run
    vault.index.reindex(full=True, embedder=back)
    assert back.texts == []


def test_reindex_embeddings_embeds_everything_again(indexed: tuple[Vault, Counting]) -> None:
    vault, _ = indexed
    counting = Counting()
    vault.index.reindex(embedder=counting, redo_embeddings=True)
    assert counting.texts.count("health check") == 1  # a server is asked before vectors go
    assert len(counting.texts) - 1 == sections(vault)


def test_a_damaged_index_file_is_rebuilt_with_nothing_reused(
    indexed: tuple[Vault, Counting],
) -> None:
    vault, _ = indexed
    before = vectors(vault)
    vault.close()
    # garbage in its pages, its header (vaultmem's id in it) left: a whole file of garbage is
    # not known for vaultmem's and is refused, never replaced (tests/test_index_file.py)
    header = vault.index_path.read_bytes()[:100]
    vault.index_path.write_bytes(header + b"\0garbage where the index was\n" * 500)
    counting = Counting()
    report = vault.index.reindex(full=True, embedder=counting)
    assert report.notes == len(NOTES)
    assert len(counting.texts) == sections(vault)
    assert vectors(vault) == before  # the same model gives the same vectors
    assert vault.search("sourdough").hits[0].path == "c.md"


def test_an_index_cut_short_is_rebuilt(indexed: tuple[Vault, Counting]) -> None:
    vault, _ = indexed
    before = vectors(vault)
    vault.close()
    data = vault.index_path.read_bytes()
    vault.index_path.write_bytes(data[: len(data) // 3])  # pages lost: a disk or a sync gone bad
    counting = Counting()
    report = vault.index.reindex(full=True, embedder=counting)
    assert report.notes == len(NOTES)
    assert report.embeddings is not None
    assert report.embeddings.embedded + report.embeddings.reused == sections(vault)
    assert vectors(vault) == before
    assert store.quick_check(vault.conn) == "ok"


def test_a_cache_whose_vectors_disagree_in_size_is_not_reused(
    indexed: tuple[Vault, Counting],
) -> None:
    vault, _ = indexed
    # damage no reader notices: one cached vector of another size among the model's rows
    vault.conn.execute(
        "UPDATE embeddings SET vector = zeroblob(12)"
        " WHERE text_hash = (SELECT min(text_hash) FROM embeddings)"
    )
    counting = Counting()
    vault.index.reindex(full=True, embedder=counting)
    assert len(counting.texts) == sections(vault)  # that model's cache was dropped, not mixed
    assert store.vector_count(vault.conn) == sections(vault)


class Replaced(Counting):
    """A server whose model was replaced under the same name: other vectors, another width."""

    def __init__(self) -> None:
        super().__init__(dim=16)
        self.name = "fake:32"


def test_a_model_replaced_under_its_name_gets_everything_embedded_again(
    indexed: tuple[Vault, Counting],
) -> None:
    vault, _ = indexed
    (vault.root / "d.md").write_text("# Delta\nnew words to embed\n", encoding="utf-8")
    replaced = Replaced()
    report = vault.index.reindex(full=True, embedder=replaced)
    assert report.embeddings is not None and report.embeddings.notice is not None
    assert "now gives 16-dimensional vectors, the index held 32" in report.embeddings.notice
    assert store.vector_count(vault.conn) == sections(vault)
    assert {len(v) for v in vectors(vault)} == {16 * 4}
    # and incrementally, over an index holding the old width
    vault.index.reindex(embedder=Counting(), redo_embeddings=True)  # back to 32 wide
    assert {len(v) for v in vectors(vault)} == {32 * 4}
    (vault.root / "e.md").write_text("# Epsilon\nmore words\n", encoding="utf-8")
    report = vault.index.reindex(embedder=Replaced())
    assert report.embeddings is not None and report.embeddings.notice is not None
    assert {len(v) for v in vectors(vault)} == {16 * 4}


@pytest.mark.parametrize("name", ["config.toml", ".gitignore"])
def test_full_reindex_never_deletes_the_settings_beside_the_index(
    make_vault: MakeVault, name: str
) -> None:
    vault = make_vault(NOTES)
    vault.init()
    settings = vault.root / ".vaultmem" / name
    before = settings.read_bytes()
    wrong = Vault(vault.root, settings)  # --index naming the config by mistake
    with pytest.raises(UsageError, match="not a vaultmem index"):
        wrong.reindex(full=True)
    assert settings.read_bytes() == before


def test_the_cli_says_how_many_vectors_it_reused(tmp_path: Path) -> None:
    root = shutil.copytree(SAMPLE_VAULT, tmp_path / "v", ignore=shutil.ignore_patterns(".vaultmem"))
    env = {**os.environ, "VAULTMEM_EMBEDDER": "fake"}
    command = [sys.executable, "-m", "vaultmem", "--vault", str(root), "reindex"]
    first = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=300, check=True
    )
    assert " 0 reused" in first.stdout, first.stdout
    full = subprocess.run(
        [*command, "--full"], capture_output=True, text=True, env=env, timeout=300, check=True
    )
    assert "vectors: 0 embedded" in full.stdout and " 0 reused" not in full.stdout, full.stdout
