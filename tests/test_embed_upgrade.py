"""The upgrade of a vault past auto's limit to MiniLM (vaultmem/embed_upgrade.py): batches into
the embedding cache, the swap at full coverage, and its hostile cases.

MiniLM is played by the stand-in of tests/test_embed_choice.py (hashed words, 384 numbers);
the one test of the real package skips without it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tests import test_embed_choice as choice_tests
from tests.conftest import MakeVault
from tests.test_embed_choice import StandInMiniLM, add, needs_minilm, notes
from vaultmem import embed_choice, embed_upgrade, encoder, indexer, store
from vaultmem.cli import cli
from vaultmem.config import load_config
from vaultmem.embed import MiniLMEmbedder, WordLlamaEmbedder
from vaultmem.embed_upgrade import Background
from vaultmem.errors import ConfigError, IndexBusy, UsageError
from vaultmem.vault import Vault

MINILM = MiniLMEmbedder.name
WORDLLAMA = WordLlamaEmbedder.name
ROOT = Path(__file__).resolve().parents[1]
DEADLINE = 60.0


# auto with nobody's choice in the environment, a stand-in MiniLM installed, limit 6
minilm = choice_tests.minilm


def big(make_vault: MakeVault, count: int = 9) -> Vault:
    """A vault past the limit, indexed: auto gave it wordllama."""
    vault = make_vault(notes(count))
    assert vault.reindex().embeddings.model == WORDLLAMA
    return vault


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


def assert_whole(vault: Vault, model: str) -> None:
    """Every section has exactly one vector, and all of them are `model`'s for its text."""
    conn = Vault(vault.root).conn  # a fresh connection: what another process would read
    assert store.get_meta(conn, "embed_model") == model
    ids = [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id")]
    assert sorted(store.vector_ids(conn)) == ids
    got_ids, blobs = store.vectors_of(conn, ids)
    texts = store.chunk_texts(conn, got_ids)
    embedder = MiniLMEmbedder() if model == MINILM else WordLlamaEmbedder()
    want = embedder.embed([indexer.embedded_text(embedder, texts[i]) for i in got_ids])
    got = np.stack([np.frombuffer(b, dtype=np.float32) for b in blobs])
    assert got.shape == want.shape
    assert np.allclose(got, want, atol=1e-5)


# --------------------------------------------------------------------------- pending or not


def test_a_vault_past_the_limit_upgrades_and_then_stays_on_minilm(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault)
    status = vault.embed_upgrade.status()
    assert (status.state, status.sections, status.covered) == ("pending", 9, 0)
    assert vault.embedder().name == WORDLLAMA
    first = vault.embed_upgrade.step(batch=4)
    assert (first.embedded, first.swapped, first.status.covered) == (4, False, 4)
    assert store.get_meta(vault.conn, "embed_model") == WORDLLAMA  # searches: wordllama still
    assert_whole(vault, WORDLLAMA)
    outcome = vault.embed_upgrade.run(batch=4)
    assert minilm.embedded == 9  # each text once: the swap took them from the cache
    assert outcome.swapped and outcome.embedded == 5
    assert outcome.status.state == "upgraded"
    assert "upgraded from wordllama" in outcome.status.reason
    assert_whole(vault, MINILM)
    # this process searches with MiniLM now, without a reindex
    assert vault.embedder().name == MINILM
    result = vault.search("heat pumps", mode="semantic")
    assert result.hits and not result.notices
    # later reindexes embed new sections with MiniLM, and keep it past the limit
    add(vault, notes(12, start=9))
    report = vault.reindex()
    assert (report.embeddings.model, report.embeddings.embedded) == (MINILM, 3)
    assert report.embeddings.notice is None
    assert_whole(vault, MINILM)
    assert vault.stats().embed_reason is not None
    assert "upgraded from wordllama" in (vault.stats().embed_reason or "")
    assert vault.embed_upgrade.status().state == "upgraded"
    assert vault.embed_upgrade.step().embedded == 0  # nothing more to do


def test_a_small_vault_on_minilm_has_nothing_to_upgrade(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = make_vault(notes(3))
    vault.reindex()
    status = vault.embed_upgrade.status()
    assert status.state == "none" and "already" in status.reason
    assert vault.embed_upgrade.step() == embed_upgrade.Step(0, status)


def test_an_explicit_choice_is_never_upgraded(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(notes(9))
    vault.embedder_spec = "wordllama"
    vault.reindex()
    assert vault.embed_upgrade.status().state == "none"
    # nor later, with no model named: the index's vectors are a choice made by hand
    later = Vault(vault.root)
    later.reindex()
    status = later.embed_upgrade.status()
    assert status.state == "none" and "by hand" in status.reason
    assert later.embed_upgrade.run().embedded == 0
    assert minilm.embedded == 0


def test_a_model_named_now_stops_a_pending_upgrade(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = big(make_vault, 9)
    assert vault.embed_upgrade.status().state == "pending"
    monkeypatch.setenv("VAULTMEM_EMBEDDER", "wordllama")
    named = Vault(vault.root)
    status = named.embed_upgrade.status()
    assert status.state == "none" and "was named" in status.reason
    assert named.embed_upgrade.step().embedded == 0
    assert minilm.embedded == 0


def test_past_the_upgrade_bound_nothing_is_pending(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed_choice, "UPGRADE_LIMIT", 8)
    vault = big(make_vault, 9)
    status = vault.embed_upgrade.status()
    assert status.state == "none" and "past the 8" in status.reason
    # an upgraded vault that grows past the bound goes back to wordllama, with a notice
    monkeypatch.setattr(embed_choice, "UPGRADE_LIMIT", 10)
    assert vault.embed_upgrade.run().swapped
    add(vault, notes(11, start=9))
    report = vault.reindex()
    assert report.embeddings.model == WORDLLAMA
    assert report.embeddings.notice is not None and "past 10 sections" in report.embeddings.notice
    assert_whole(vault, WORDLLAMA)


# --------------------------------------------------------------------------- hostile cases


def test_the_vault_changing_between_steps(minilm: StandInMiniLM, make_vault: MakeVault) -> None:
    vault = big(make_vault, 10)
    vault.embed_upgrade.step(batch=3)
    # new, changed and deleted notes between steps
    add(vault, {"new.md": "a new note about solar panels\n", "n0.md": "changed: wind\n"})
    (vault.root / "n1.md").unlink()
    (vault.root / "n9.md").unlink()
    vault.reindex()
    vault.embed_upgrade.step(batch=3)
    add(vault, {"later.md": "written during the upgrade\n"})
    vault.reindex()
    status = vault.embed_upgrade.status()
    assert status.state == "pending" and status.left
    outcome = vault.embed_upgrade.run(batch=3)
    assert outcome.swapped
    assert_whole(vault, MINILM)  # the changed note's new text, the new notes, none deleted
    found = vault.search("solar panels", mode="semantic").hits
    assert found and found[0].path == "new.md"


def test_a_full_reindex_during_the_upgrade_keeps_what_was_embedded(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault, 9)
    vault.embed_upgrade.step(batch=5)
    report = vault.reindex(full=True)
    assert report.embeddings.model == WORDLLAMA
    status = vault.embed_upgrade.status()
    assert (status.state, status.covered) == ("pending", 5)  # the cache survived
    assert vault.embed_upgrade.run().swapped
    assert minilm.embedded == 9
    assert_whole(vault, MINILM)


def test_reindex_embeddings_during_the_upgrade_chooses_again_and_keeps_the_cache(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault, 9)
    vault.embed_upgrade.step(batch=4)
    vault.reindex(redo_embeddings=True)  # still past the limit: wordllama again, by size
    status = vault.embed_upgrade.status()
    assert (status.state, status.covered) == ("pending", 4)
    assert vault.embed_upgrade.run().swapped
    assert_whole(vault, MINILM)


def test_a_failed_swap_leaves_the_old_vectors_whole(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = big(make_vault, 9)
    vault.embed_upgrade.step(batch=100)

    def crash(*_args: object) -> None:
        raise OSError("disk full (a crash inside the swap)")

    with monkeypatch.context() as patched:
        patched.setattr(embed_choice, "record", crash)
        with pytest.raises(OSError, match="disk full"):
            vault.embed_upgrade.step()
    assert_whole(vault, WORDLLAMA)  # the vectors dropped and refilled inside were rolled back
    choice = embed_choice.recorded(vault.conn)
    assert choice is not None and choice.why == "large"
    assert vault.embed_upgrade.step().swapped
    assert_whole(vault, MINILM)


KILLED = """
import sys, time
from pathlib import Path
from tests.test_embed_choice import StandInMiniLM
from vaultmem import encoder
from vaultmem.encoder import ModelSource
from vaultmem.vault import Vault

class Slow(StandInMiniLM):
    def embed(self, texts, threads=1, max_tokens=256):
        time.sleep(0.05)
        return super().embed(texts, threads, max_tokens)

slow = Slow()
encoder.find_minilm = lambda: ModelSource("stand-in")
encoder.minilm = lambda: slow
vault = Vault(Path(sys.argv[1]))
vault.embed_upgrade.run(batch=4)
"""


def test_a_process_killed_between_batches_leaves_one_model_and_resumes(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault, 40)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("VAULTMEM_EMBEDDER", None)
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(vault.root)], cwd=ROOT, env=env, start_new_session=True
    )
    try:
        conn = Vault(vault.root).conn
        wait_for(
            lambda: store.cache_coverage(conn, MINILM)[1] >= 8 or child.poll() is not None,
            "two batches",
        )
        assert child.poll() is None, "the upgrade ended before it was killed"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(DEADLINE)
    status = vault.embed_upgrade.status()
    assert status.state == "pending" and 8 <= status.covered < 40
    assert_whole(vault, WORDLLAMA)  # never half-swapped
    assert vault.search("heat pumps", mode="semantic").hits
    outcome = vault.embed_upgrade.run()
    assert outcome.swapped and outcome.embedded == 40 - status.covered  # resumed
    assert_whole(vault, MINILM)


def test_minilm_uninstalled_midway_stays_on_wordllama_and_says_so(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = big(make_vault, 9)
    vault.embed_upgrade.step(batch=4)
    monkeypatch.setattr(encoder, "find_minilm", lambda: None)
    status = vault.embed_upgrade.status()
    assert status.state == "unavailable"
    assert "pip install" in status.reason and "wordllama stays" in status.reason
    assert vault.embed_upgrade.step().embedded == 0
    with pytest.raises(UsageError, match="pip install"):
        vault.embed_upgrade.run()
    assert vault.reindex().embeddings.model == WORDLLAMA
    assert_whole(vault, WORDLLAMA)
    runner = CliRunner()
    shown = runner.invoke(cli, ["--vault", str(vault.root), "upgrade-model"])
    assert isinstance(shown.exception, UsageError) and shown.exception.exit_code == 2
    assert "pip install" in str(shown.exception)
    lines = runner.invoke(cli, ["--vault", str(vault.root), "stats"]).output
    assert "model upgrade" in lines and "wordllama stays" in lines


def test_the_vault_shrinking_under_the_limit_still_finishes_the_upgrade(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault, 9)
    vault.embed_upgrade.step(batch=3)
    for i in range(3, 9):
        (vault.root / f"n{i}.md").unlink()
    vault.reindex()  # 3 sections: under the limit, but the choice stays (no flip-flop)
    assert store.get_meta(vault.conn, "embed_model") == WORDLLAMA
    outcome = vault.embed_upgrade.run()
    assert outcome.swapped and outcome.embedded == 0  # the 3 left were embedded already
    assert_whole(vault, MINILM)
    assert vault.reindex().embeddings.model == MINILM


def test_two_upgrades_at_once_take_turns_and_swap_once(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault, 30)
    one, two = Vault(vault.root), Vault(vault.root)
    outcomes: list[embed_upgrade.Outcome] = []
    errors: list[BaseException] = []

    def run(v: Vault) -> None:
        try:
            outcomes.append(v.embed_upgrade.run(batch=3))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(v,), daemon=True) for v in (one, two)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE)
    assert not errors and len(outcomes) == 2
    assert sum(o.swapped for o in outcomes) == 1
    assert all(o.status.state == "upgraded" for o in outcomes)
    assert_whole(vault, MINILM)


def test_a_step_waits_for_the_lock_and_says_so(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault, 9)
    with indexer.lock(vault.index_path, 0.0, None), pytest.raises(IndexBusy):
        vault.embed_upgrade.step(wait=0.0)
    assert vault.embed_upgrade.status().covered == 0  # the batch was not kept half-way


def test_a_search_during_the_swap_sees_one_model_whole(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault, 30)
    warm = Vault(vault.root)
    warm.warm(background=False)
    cold = Vault(vault.root)
    cold.embedder()  # chosen before the swap: wordllama
    vault.embed_upgrade.step(batch=30)
    stop = threading.Event()
    seen: list[tuple[str, int, tuple[str, ...]]] = []
    errors: list[BaseException] = []

    def search(v: Vault, name: str) -> None:
        while not stop.is_set():
            try:
                result = v.search("heat pumps tariffs", mode="semantic", limit=5)
                seen.append((name, len(result.hits), result.notices))
            except BaseException as exc:
                errors.append(exc)
                return

    threads = [
        threading.Thread(target=search, args=(v, n), daemon=True)
        for v, n in ((warm, "warm"), (cold, "cold"))
    ]
    for t in threads:
        t.start()
    wait_for(lambda: len({n for n, _, _ in seen}) == 2, "searches before the swap")
    assert vault.embed_upgrade.step().swapped
    after = len(seen)
    wait_for(lambda: len(seen) > after + 10 or bool(errors), "searches after the swap")
    stop.set()
    for t in threads:
        t.join(DEADLINE)
    assert not errors, errors
    assert all(hits == 5 and not notices for _, hits, notices in seen), seen
    # the warm process follows: the new vectors in memory, the new query model
    assert warm.embedder().name == MINILM and cold.embedder().name == MINILM
    matrix = warm.index.current_matrix()
    assert matrix is not None and matrix.model == MINILM and matrix.matrix.shape[1] == 384


def test_a_write_after_another_processs_swap_embeds_with_minilm(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault, 9)
    vault.embedder()  # this process chose wordllama
    Vault(vault.root).embed_upgrade.run()  # another process swaps
    add(vault, {"n0.md": "rewritten after the swap\n"})
    assert vault.reindex().embeddings.model == MINILM
    assert_whole(vault, MINILM)


# --------------------------------------------------------------------------- who runs it


def test_the_background_thread_upgrades_and_readies_the_process(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault, 20)
    vault.warm(background=False)
    background = Background(vault, idle_check=0.05)
    background.start()
    try:
        assert background.swapped.wait(DEADLINE)
    finally:
        background.stop()
    assert_whole(vault, MINILM)
    assert vault.index.matrix is not None and vault.index.matrix.model == MINILM
    assert background.last is not None and background.last.state == "upgraded"


def test_the_background_thread_waits_for_a_held_lock_and_stops_when_asked(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed_upgrade, "BUSY_RETRY", 0.05)
    vault = big(make_vault, 9)
    background = Background(vault, idle_check=0.05)
    with indexer.lock(vault.index_path, 0.0, None):
        background.start()
        wait_for(lambda: minilm.embedded >= 9, "a batch embedded")
        assert vault.embed_upgrade.status().covered == 0  # not kept while the lock is held
    assert background.swapped.wait(DEADLINE)
    background.stop()
    assert background._thread is None


def test_the_server_runs_the_upgrade_unless_the_config_says_manual(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    from vaultmem import live

    vault = big(make_vault, 9)
    (vault.root / ".vaultmem" / "config.toml").write_text('embed_upgrade = "manual"\n')
    assert live.start_upgrade(Vault(vault.root)) is None
    (vault.root / ".vaultmem" / "config.toml").write_text('embed_upgrade = "background"\n')
    background = live.start_upgrade(Vault(vault.root))
    assert background is not None
    try:
        assert background.swapped.wait(DEADLINE)
    finally:
        background.stop()


# --------------------------------------------------------------------------- the CLI, config


def test_upgrade_model_on_the_command_line(minilm: StandInMiniLM, make_vault: MakeVault) -> None:
    vault = big(make_vault, 9)
    runner = CliRunner()
    at = ["--vault", str(vault.root)]
    shown = runner.invoke(cli, [*at, "stats"])
    assert "model upgrade" in shown.output and "0 of 9 sections" in shown.output
    data = json.loads(runner.invoke(cli, [*at, "stats", "--json"]).output)
    assert data["embed_upgrade"] == {
        "state": "pending",
        "reason": data["embed_upgrade"]["reason"],
        "chunks": 9,
        "covered": 0,
        "minutes_left": 1,
    }
    done = runner.invoke(cli, [*at, "upgrade-model", "--json"])
    assert done.exit_code == 0, done.output
    out = json.loads(done.output)
    assert (out["state"], out["swapped"], out["embedded"], out["covered"]) == (
        "upgraded",
        True,
        9,
        9,
    )
    again = runner.invoke(cli, [*at, "upgrade-model"])
    assert again.exit_code == 0 and "nothing to do" in again.output
    assert "model upgrade" not in runner.invoke(cli, [*at, "stats"]).output


def test_upgrade_model_with_nothing_to_upgrade_exits_1(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = make_vault(notes(2))
    vault.reindex()
    shown = CliRunner().invoke(cli, ["--vault", str(vault.root), "upgrade-model"])
    assert shown.exit_code == 1 and "nothing to upgrade" in shown.output


def test_the_limit_is_a_config_key(minilm: StandInMiniLM, make_vault: MakeVault) -> None:
    vault = make_vault(notes(4))
    (vault.root / ".vaultmem").mkdir()
    (vault.root / ".vaultmem" / "config.toml").write_text("embed_auto_limit = 3\n")
    configured = Vault(vault.root)
    report = configured.reindex()
    assert report.embeddings.model == WORDLLAMA  # 4 sections, over 3 (the default would be 6)
    assert "upgrade-model" in (report.embeddings.notice or "")
    assert "over the 3" in (configured.stats().embed_reason or "")
    assert configured.embed_upgrade.status().state == "pending"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("embed_auto_limit = -1", "`embed_auto_limit` must be a whole number"),
        ('embed_auto_limit = "2000"', "`embed_auto_limit` must be a whole number"),
        ("embed_auto_limit = 2.5", "`embed_auto_limit` must be a whole number"),
        ("embed_auto_limit = true", "`embed_auto_limit` must be a whole number"),
        ('embed_upgrade = "now"', '`embed_upgrade` must be "background" or "manual"'),
        ("embed_upgrade = 1", '`embed_upgrade` must be "background" or "manual"'),
    ],
)
def test_bad_config_values_are_refused_clearly(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / ".vaultmem").mkdir()
    (tmp_path / ".vaultmem" / "config.toml").write_text(text + "\n")
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_config(tmp_path)


def test_config_defaults() -> None:
    config = load_config(Path("/nonexistent-vault"))
    assert (config.embed_auto_limit, config.embed_upgrade) == (None, "background")


@needs_minilm
def test_the_real_model_upgrades_a_small_vault(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VAULTMEM_EMBEDDER", raising=False)
    monkeypatch.setattr(embed_choice, "AUTO_LIMIT", 1)
    vault = make_vault(
        {
            "heat.md": "# Heat pumps\n\nA heat pump moves warmth from outside air indoors.\n",
            "bread.md": "# Sourdough\n\nFeed the starter flour and water every day.\n",
        }
    )
    assert vault.reindex().embeddings.model == WORDLLAMA
    assert vault.embed_upgrade.run().swapped
    hits = vault.search("how do I warm my house", mode="semantic").hits
    assert hits and hits[0].path == "heat.md"
    assert store.get_meta(vault.conn, "embed_dim") == "384"


def test_a_running_server_upgrades_in_the_background(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    from vaultmem.server.running import serving

    vault = big(make_vault, 9)
    with serving(vault) as live:
        live.answered.set()
        wait_for(lambda: vault.embed_upgrade.status().state == "upgraded", "the upgrade")
        assert vault.search("heat pumps", mode="semantic").hits
    assert_whole(vault, MINILM)
    assert not any(t.name == "vaultmem-upgrade" for t in threading.enumerate())


def test_a_step_yields_to_calls_under_way(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed_upgrade, "YIELD_MAX", DEADLINE)
    vault = big(make_vault, 9)
    done = threading.Event()
    with vault.calls:  # a search, a write... under way in another thread
        stepping = threading.Thread(
            target=lambda: (vault.embed_upgrade.step(), done.set()), daemon=True
        )
        stepping.start()
        assert not done.wait(0.3)  # a bounded look: it must still be waiting
        assert minilm.embedded == 0
    assert done.wait(DEADLINE)
    assert minilm.embedded == 9
    # and never for longer than YIELD_MAX
    monkeypatch.setattr(embed_upgrade, "YIELD_MAX", 0.01)
    add(vault, {"x.md": "one more\n"})
    vault.reindex()
    with vault.calls:
        assert vault.embed_upgrade.step().embedded == 1


def test_uninstalled_after_the_upgrade_then_installed_again_swaps_back_for_free(
    minilm: StandInMiniLM, make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = big(make_vault, 9)
    assert vault.embed_upgrade.run().swapped
    with monkeypatch.context() as gone:
        gone.setattr(encoder, "find_minilm", lambda: None)
        report = Vault(vault.root).reindex()
        assert report.embeddings.model == WORDLLAMA
        assert "no longer installed" in (report.embeddings.notice or "")
        assert Vault(vault.root).embed_upgrade.status().state == "unavailable"
    back = Vault(vault.root)
    status = back.embed_upgrade.status()
    assert (status.state, status.covered, status.sections) == ("pending", 9, 9)
    embedded = minilm.embedded
    assert back.embed_upgrade.step().swapped
    assert minilm.embedded == embedded  # MiniLM's vectors were still in the cache
    assert_whole(back, MINILM)


def test_stats_say_who_goes_on_with_the_upgrade(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault, 9)
    at = ["--vault", str(vault.root), "stats"]
    assert "the MCP server and the TUI do" in CliRunner().invoke(cli, at).output
    (vault.root / ".vaultmem").mkdir(exist_ok=True)
    (vault.root / ".vaultmem" / "config.toml").write_text('embed_upgrade = "manual"\n')
    shown = CliRunner().invoke(cli, at).output
    assert "`vaultmem upgrade-model` goes on with it" in shown
    assert "the MCP server" not in shown


def test_upgrade_model_wait_outlasts_a_lock_held_for_a_moment(
    minilm: StandInMiniLM, make_vault: MakeVault
) -> None:
    vault = big(make_vault, 9)
    at = ["--vault", str(vault.root), "upgrade-model"]
    with indexer.lock(vault.index_path, 0.0, None):
        given_up = CliRunner().invoke(cli, [*at, "--wait", "0"])
    assert isinstance(given_up.exception, IndexBusy) and given_up.exception.exit_code == 4
    held = threading.Event()
    released = threading.Event()

    def hold() -> None:
        with indexer.lock(vault.index_path, 0.0, None):
            held.set()
            # 9 texts in calls of 4: the ninth, embedded alone, is kept by the process's
            # one-text cache (embed._ONE_TEXT), so the second run embeds 8 and reuses it
            wait_for(lambda: minilm.embedded >= 17, "the batch embedded, the lock awaited")
        released.set()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert held.wait(DEADLINE)
    waited = CliRunner().invoke(cli, [*at, "--wait", "120", "--json"])
    assert released.is_set()
    assert waited.exit_code == 0, waited.output
    assert json.loads(waited.stdout)["swapped"] is True
    assert "another reindex is running" in waited.stderr
