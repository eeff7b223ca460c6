"""Every option of the README's command table reaches the core, proven through the CLI by a
specific result (issue 16 §1). `PROVEN` names, for each option the table lists, the test that
proves it; `test_every_option_in_the_readme_is_proven` fails when the table gains an option
without one, or when a named test is gone. Tests here cover what tests/test_cli.py,
test_cli_effects.py and the others did not.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.capture.test_cli_capture import CHAT
from tests.capture.test_cli_capture import run as capture_run
from tests.conftest import ROOT, MakeVault, write_files
from tests.fake_model_server import FakeModelServer
from tests.test_cli import run
from tests.test_cli_effects import hit_paths
from tests.test_cli_memory import run as memory_run
from tests.test_cli_trash import run as trash_run
from tests.test_memories import EPISODES, MAYA
from vaultmem.vault import Vault

# (command, option) -> the test proving the option changes what the command does
PROVEN: dict[tuple[str, str], str] = {
    ("watch", "--count"): "test_watch_catches_up_with_edits_made_while_nothing_watched",
    (
        "watch",
        "--json",
    ): "test_watch_catches_up_with_edits_made_while_nothing_watched",
    ("reindex", "--full"): "test_reindex_full_parses_every_note_again",
    ("reindex", "--no-embed"): "test_reindex_no_embed_makes_no_vectors",
    (
        "reindex",
        "--embeddings",
    ): "test_reindex_embeddings_re_embeds_with_the_new_model",
    (
        "reindex",
        "--wait",
    ): "test_reindex_wait_outlasts_a_lock_held_for_a_moment",
    ("reindex", "--json"): "test_reindex_search_show_backlinks_stats",
    ("upgrade-model", "--json"): "test_upgrade_model_on_the_command_line",
    (
        "upgrade-model",
        "--wait",
    ): "test_upgrade_model_wait_outlasts_a_lock_held_for_a_moment",
    ("search", "--mode"): "test_search_mode_picks_the_retrievers",
    ("search", "--limit"): "test_search_limit_cuts_the_hits",
    ("search", "--tag"): "test_search_tag_matches_nested_tags_under_it",
    ("search", "--path"): "test_search_path_keeps_notes_under_the_prefix",
    ("search", "--since"): "test_search_since_keeps_notes_on_or_after_the_day",
    ("search", "--hyde"): "test_search_hyde_embeds_the_text_models_passage",
    ("search", "--rerank"): "test_cli_rerank_reorders_and_explains",
    ("search", "--explain"): "test_search_explain_shows_each_signal",
    ("search", "--json"): "test_reindex_search_show_backlinks_stats",
    ("search", "--format"): "test_search_format_text_json_openclaw",
    ("search -", "--json"): "test_batch_search_from_stdin",
    ("get", "--json"): "test_get_json_says_where_the_text_came_from",
    ("show", "--json"): "test_reindex_search_show_backlinks_stats",
    ("backlinks", "--json"): "test_reindex_search_show_backlinks_stats",
    ("stats", "--json"): "test_reindex_search_show_backlinks_stats",
    ("doctor", "--json"): "test_doctor_json_names_the_problem_and_exits_1",
    ("graph path", "--max-depth"): "test_graph_path_max_depth_bounds_the_hops",
    (
        "graph path",
        "--relation",
    ): "test_graph_path_relation_walks_only_that_relation",
    (
        "graph path",
        "--directed",
    ): "test_graph_path_directed_follows_links_as_written",
    ("graph path", "--json"): "test_graph_and_gaps_commands",
    (
        "graph neighbors",
        "--depth",
    ): "test_graph_neighbors_depth_widens_the_ring",
    (
        "graph neighbors",
        "--attachments",
    ): "test_neighbors_leave_attachments_out_unless_asked",
    (
        "graph neighbors",
        "--json",
    ): "test_graph_neighbors_depth_widens_the_ring",
    (
        "graph clusters",
        "--min-size",
    ): "test_graph_clusters_min_size_and_members",
    (
        "graph clusters",
        "--members",
    ): "test_graph_clusters_min_size_and_members",
    ("graph clusters", "--json"): "test_graph_clusters_min_size_and_members",
    ("graph cycles", "--json"): "test_graph_cycles_and_fragile",
    ("graph fragile", "--json"): "test_graph_cycles_and_fragile",
    ("gaps", "--limit"): "test_gaps_limit_cuts_each_list",
    ("gaps", "--json"): "test_gaps_limit_cuts_each_list",
    ("gaps fix-aliases", "--dry-run"): "test_fix_aliases_dry_run_then_yes",
    ("gaps fix-aliases", "--yes"): "test_fix_aliases_dry_run_then_yes",
    ("persona list", "--json"): "test_list_json",
    (
        "persona load",
        "--budget",
    ): "test_load_prints_the_context_and_a_usage_summary",
    ("persona load", "--json"): "test_persona_load_formats",
    ("persona load", "--format"): "test_persona_load_formats",
    ("persona load", "--include-expired"): "test_persona_load_include_expired_keeps_expired_notes",
    ("persona new", "--role"): "test_new_creates_indexes_and_loads",
    (
        "mcp",
        "--http",
    ): "test_the_sdk_client_works_over_http_with_the_token",
    (
        "mcp",
        "--host",
    ): "test_binding_beyond_loopback_without_a_token_is_refused",
    ("mcp", "--port"): "test_localhost_forms_of_the_host_are_accepted",
    ("mcp", "--token"): "test_mcp_without_the_right_token_is_401",
    ("mcp", "--allow-host"): "test_mcp_allow_host_lets_that_host_in",
    ("search", "--mtime"): "test_on_a_fresh_copy_undated_notes_do_not_pass_since",
    ("search", "--personas"): "test_the_cli_leaves_personas_out_unless_asked",
    ("search", "--include-expired"): "test_the_cli_leaves_expired_notes_out_unless_asked",
    ("related", "--limit"): "test_cli_related",
    ("related", "--json"): "test_cli_related",
    ("trash", "--json"): "test_trash_moves_the_note_and_the_index_forgets_it",
    ("trash", "--wait"): "test_a_held_index_lock_exits_4_and_moves_nothing",
    ("trash move", "--json"): "test_trash_move_json_and_wait",
    ("trash move", "--wait"): "test_trash_move_json_and_wait",
    ("trash list", "--json"): "test_trash_list_then_restore_puts_it_back_and_indexes_it",
    ("restore", "--json"): "test_trash_list_then_restore_puts_it_back_and_indexes_it",
    ("restore", "--to"): "test_restore_never_overwrites_and_to_puts_it_elsewhere",
    ("restore", "--wait"): "test_restore_wait_gives_up_on_a_held_lock_and_moves_nothing",
    ("trash purge", "--all"): "test_trash_purge_all_deletes_entries_however_recent",
    ("trash purge", "--older-than"): "test_purge_asks_keeps_recent_entries_and_deletes_on_request",
    ("trash purge", "--yes"): "test_purge_asks_keeps_recent_entries_and_deletes_on_request",
    ("trash purge", "--json"): "test_purge_asks_keeps_recent_entries_and_deletes_on_request",
    ("fact get", "--json"): "test_fact_get_json_gives_the_value_its_block_and_history",
    ("fact history", "--json"): "test_fact_history_text_and_json",
    ("fact list", "--key"): "test_fact_list_key_since_and_json",
    ("fact list", "--since"): "test_fact_list_key_since_and_json",
    ("fact list", "--json"): "test_fact_list_key_since_and_json",
    ("fact set", "--source"): "test_fact_set_source_create_and_line",
    ("fact set", "--line"): "test_fact_set_source_create_and_line",
    ("fact set", "--create"): "test_fact_set_source_create_and_line",
    ("episode add", "--outcome"): "test_episode_add_writes_every_option_into_the_note",
    ("episode add", "--entity"): "test_episode_add_writes_every_option_into_the_note",
    ("episode add", "--date"): "test_episode_add_writes_every_option_into_the_note",
    ("episode add", "--duration"): "test_episode_add_writes_every_option_into_the_note",
    ("episode add", "--procedure"): "test_episode_add_writes_every_option_into_the_note",
    ("episode add", "--body"): "test_episode_add_writes_every_option_into_the_note",
    ("episodes", "--since"): "test_episodes_outcome_entity_until_and_json",
    ("episodes", "--until"): "test_episodes_outcome_entity_until_and_json",
    ("episodes", "--outcome"): "test_episodes_outcome_entity_until_and_json",
    ("episodes", "--entity"): "test_episodes_outcome_entity_until_and_json",
    ("episodes", "--now"): "test_episodes_outcome_entity_until_and_json",
    ("episodes", "--json"): "test_episodes_outcome_entity_until_and_json",
    ("trends", "--granularity"): "test_trends_granularity_and_since",
    ("trends", "--since"): "test_trends_granularity_and_since",
    ("trends", "--json"): "test_trends_json",
    ("loops", "--entity"): "test_loops_entity_and_priority",
    ("loops", "--priority"): "test_loops_entity_and_priority",
    ("loops", "--due-before"): "test_loops_lists_ids_that_resolve_takes",
    ("loops", "--json"): "test_loops_lists_ids_that_resolve_takes",
    ("loop add", "--note"): "test_loop_add_note_due_and_priority",
    ("loop add", "--due"): "test_loop_add_note_due_and_priority",
    ("loop add", "--priority"): "test_loop_add_note_due_and_priority",
    ("recall", "--days"): "test_recall_days_budget_now_and_json",
    ("recall", "--budget"): "test_recall_days_budget_now_and_json",
    ("recall", "--now"): "test_recall_days_budget_now_and_json",
    ("recall", "--json"): "test_recall_days_budget_now_and_json",
    ("recall", "--include-expired"): "test_recall_include_expired_keeps_notes_past_their_decay",
    ("gate", "--llm"): "test_gate_json_and_llm",
    ("gate", "--json"): "test_gate_json_and_llm",
    ("salience", "--top"): "test_salience_top_cuts_the_list",
    ("salience", "--json"): "test_salience_lists_notes_and_facts",
    ("prune", "--yes"): "test_prune_lists_then_moves_expired_notes_to_the_trash",
    ("prune", "--json"): "test_prune_lists_then_moves_expired_notes_to_the_trash",
    ("capture", "--source"): "test_capture_source_and_persona_name_the_capture_note",
    ("capture", "--persona"): "test_capture_source_and_persona_name_the_capture_note",
    ("capture", "--session"): "test_one_session_of_a_locomo_file",
    ("capture", "--dry-run"): "test_dry_run_json",
    ("capture", "--llm"): "test_llm_output_that_fits_the_schema_is_captured",
    ("capture", "--json"): "test_dry_run_json",
    ("review", "--json"): "test_capture_then_review_then_accept",
    ("review accept", "--all"): "test_review_accept_all_above_a_confidence",
    ("review accept", "--min-confidence"): "test_review_accept_all_above_a_confidence",
    ("review edit", "--value"): "test_review_reject_edit_and_errors",
    ("review edit", "--due"): "test_review_reject_edit_and_errors",
    ("review edit", "--key"): "test_review_edit_key_and_entity",
    ("review edit", "--entity"): "test_review_edit_key_and_entity",
}

# Every exit code the README documents (and 6, docs/editing.md), each asserted through the CLI.
EXIT_CODES: dict[int, str] = {
    0: "test_reindex_search_show_backlinks_stats",
    1: "test_doctor_exits_1_on_an_index_problem",
    2: "test_missing_vault_exits_2_with_a_clear_message",
    3: "test_an_index_of_another_schema_exits_3",
    4: "test_reindex_exits_4_while_another_holds_the_lock",
    5: "test_semantic_search_exits_5_when_the_model_server_is_down",
    6: "test_fix_aliases_on_a_note_changed_since_the_reindex_exits_6",
}

_ROW_RE = re.compile(r"^\| `([^`]+)`")
_OPTION_RE = re.compile(r"--[a-z][a-z-]*")


def readme_options() -> set[tuple[str, str]]:
    """(command, option) for every option in the README's command table."""
    readme = (ROOT / "README.md").read_text("utf-8")
    table = readme.split("| command | what it does |", 1)[1].split("\n\n", 1)[0]
    found: set[tuple[str, str]] = set()
    for line in table.splitlines():
        m = _ROW_RE.match(line)
        if not m:
            continue
        usage = m.group(1)  # `graph path A B [--max-depth 5] …`, `search - [--json]`
        words = usage.split()
        command = words[0]
        if len(words) > 1 and re.fullmatch(r"[a-z][a-z-]*|-", words[1]):
            command += " " + words[1]
        found.update((command, option) for option in _OPTION_RE.findall(usage))
    return found


def _test_exists(name: str) -> bool:
    """Whether a test of that name is defined in tests/ (names here are unique in the suite)."""
    pattern = re.compile(rf"^(async )?def {name}\(", re.MULTILINE)
    return any(pattern.search(p.read_text("utf-8")) for p in (ROOT / "tests").rglob("test_*.py"))


def test_every_option_in_the_readme_is_proven() -> None:
    options = readme_options()
    assert ("search", "--since") in options and ("graph path", "--directed") in options
    assert ("gaps fix-aliases", "--dry-run") in options and ("mcp", "--allow-host") in options
    assert sorted(options - set(PROVEN)) == []  # an option in the table without a proof
    assert sorted(set(PROVEN) - options) == []  # a proof of an option the table dropped
    assert [ref for ref in PROVEN.values() if not _test_exists(ref)] == []


def test_every_documented_exit_code_is_asserted_through_the_cli() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    documented = {int(c) for c in re.findall(r"`(\d)` ", readme.split("Exit codes:", 1)[1][:900])}
    assert documented <= set(EXIT_CODES)
    assert set(EXIT_CODES) == set(range(7))
    assert [ref for ref in EXIT_CODES.values() if not _test_exists(ref)] == []


# --------------------------------------------------------------------------- reindex


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """Five notes: three under work/, two under home/, all mentioning "quince"."""
    root = tmp_path / "v"
    write_files(
        root,
        {
            ".obsidian/app.json": "{}",
            "work/plan.md": "# Plan\nThe quince plan for the tariff sync.\n",
            "work/tariff.md": "# Tariff\nQuince tariff notes, the tariff sync and the API.\n",
            "work/deep/api.md": "# API\nThe quince API returns the tariff.\n",
            "home/garden.md": "# Garden\nThe quince tree in the garden.\n",
            "home/jam.md": "# Jam\nQuince jam needs sugar.\n",
        },
    )
    return root


def _summary(result: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def test_reindex_full_parses_every_note_again(notes: Path) -> None:
    v = ("--vault", str(notes))
    assert _summary(run(*v, "reindex", "--json"))["changed"] == 5
    assert _summary(run(*v, "reindex", "--json"))["changed"] == 0  # nothing changed
    full = run(*v, "reindex", "--full")
    assert full.returncode == 0, full.stderr
    assert full.stdout.startswith("5 notes, 0 attachments: 5 changed, 0 removed; 0 links")


def _vectors(root: Path, *options: str) -> int:
    stats = json.loads(run("--vault", str(root), *options, "stats", "--json").stdout)
    return int(stats["vectors"])


def test_reindex_no_embed_makes_no_vectors(notes: Path) -> None:
    v = ("--vault", str(notes))
    assert run(*v, "reindex", "--no-embed").returncode == 0
    assert _vectors(notes) == 0
    semantic = run(*v, "search", "quince", "--mode", "semantic")
    assert semantic.returncode == 2 and "reindex" in semantic.stderr  # no vectors to search
    assert run(*v, "reindex").returncode == 0  # a plain reindex gives the sections vectors
    assert _vectors(notes) == 5
    both = run(*v, "reindex", "--no-embed", "--embeddings")
    assert both.returncode == 2 and "contradict" in both.stderr


def test_reindex_embeddings_re_embeds_with_the_new_model(notes: Path) -> None:
    v = ("--vault", str(notes))
    assert run(*v, "reindex").returncode == 0  # the test embedder ("fake")
    ollama = ("--embedder", "ollama:nomic-embed-text")
    with FakeModelServer() as server:
        env = {"OLLAMA_URL": server.url}
        plain = run(*v, *ollama, "reindex", "--json", env=env)
        assert _summary(plain)["changed"] == 0
        assert server.posts("/api/embed") == []  # nothing changed: nothing embedded
        redo = run(*v, *ollama, "reindex", "--embeddings", env=env)
        assert redo.returncode == 0, redo.stderr
        assert "vectors: 5 embedded, 0 reused (ollama:nomic-embed-text)" in redo.stdout
        sent = [text for body in server.posts("/api/embed") for text in body["input"]]
        assert len(sent) == 5 and any("Quince jam needs sugar." in t for t in sent)
        stats = json.loads(run(*v, *ollama, "stats", "--json", env=env).stdout)
        assert (stats["vectors"], stats["embed_model"]) == (5, "ollama:nomic-embed-text")


def test_reindex_wait_outlasts_a_lock_held_for_a_moment(notes: Path) -> None:
    v = ("--vault", str(notes))
    assert run(*v, "reindex").returncode == 0
    lock = notes / ".vaultmem" / "index.db.lock"
    held = lock.open("a")
    fcntl.flock(held, fcntl.LOCK_EX)
    # released once the waiting reindex has said it waits (or after a generous deadline)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vaultmem", *v, "reindex", "--wait", "300"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(proc.stderr or []), daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while not said and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "it gave up instead of waiting"
    fcntl.flock(held, fcntl.LOCK_UN)
    held.close()
    out, _ = proc.communicate(timeout=300)
    reader.join(timeout=60)
    assert proc.returncode == 0, said
    assert "another reindex is running" in "".join(said)
    assert out.startswith("5 notes")


# --------------------------------------------------------------------------- search


def _json_paths(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 0, result.stderr
    return [r["path"] for r in json.loads(result.stdout)["results"]]


def test_search_mode_picks_the_retrievers(notes: Path) -> None:
    v = ("--vault", str(notes))
    assert run(*v, "reindex").returncode == 0
    # no note holds the word: keywords find nothing, meaning always finds the nearest sections
    keyword = run(*v, "search", "xylophone", "--mode", "keyword", "--json")
    semantic = run(*v, "search", "xylophone", "--mode", "semantic", "--json")
    hybrid = run(*v, "search", "xylophone", "--json")
    assert _json_paths(keyword) == []
    assert len(_json_paths(semantic)) == 5 and len(_json_paths(hybrid)) == 5
    assert [json.loads(r.stdout)["mode"] for r in (keyword, semantic, hybrid)] == [
        "keyword",
        "semantic",
        "hybrid",
    ]
    text = run(*v, "search", "xylophone", "--mode", "keyword")
    assert text.stdout == "" and "no matches for 'xylophone'" in text.stderr


def test_search_limit_cuts_the_hits(notes: Path) -> None:
    v = ("--vault", str(notes))
    assert run(*v, "reindex").returncode == 0
    every = _json_paths(run(*v, "search", "quince", "--mode", "keyword", "--json"))
    assert len(every) == 5
    two = run(*v, "search", "quince", "--mode", "keyword", "--limit", "2")
    assert len(re.findall(r"^\s*\d+\. ", two.stdout, re.MULTILINE)) == 2
    assert (
        _json_paths(run(*v, "search", "quince", "--mode", "keyword", "-n", "2", "--json"))
        == (every[:2])
    )
    assert run(*v, "search", "quince", "--limit", "0").returncode == 2


def test_search_path_keeps_notes_under_the_prefix(notes: Path) -> None:
    v = ("--vault", str(notes))
    assert run(*v, "reindex").returncode == 0
    work = run(*v, "search", "quince", "--path", "work/")
    assert work.returncode == 0, work.stderr
    assert hit_paths(work.stdout) == {"work/plan.md", "work/tariff.md", "work/deep/api.md"}
    deep = run(*v, "search", "quince", "--path", "work/deep", "--mode", "keyword")
    assert hit_paths(deep.stdout) == {"work/deep/api.md"}
    home = run(*v, "search", "quince", "--path", "/home", "--mode", "semantic")
    assert hit_paths(home.stdout) == {"home/garden.md", "home/jam.md"}  # a leading / is fine


def test_search_hyde_embeds_the_text_models_passage(notes: Path) -> None:
    v = ("--vault", str(notes))
    assert run(*v, "reindex").returncode == 0
    with FakeModelServer() as server:
        llm = ("--llm", "ollama:llama3.2")
        env = {"OLLAMA_URL": server.url}
        without = run(*v, *llm, "search", "why did the sync fail", env=env)
        assert without.returncode == 0 and server.posts("/api/generate") == []
        with_hyde = run(*v, *llm, "search", "why did the sync fail", "--hyde", env=env)
        assert with_hyde.returncode == 0, with_hyde.stderr
        (asked,) = server.posts("/api/generate")
        assert asked["model"] == "llama3.2" and "why did the sync fail" in asked["prompt"]
        assert with_hyde.stderr == ""
    no_model = run(*v, "search", "why did the sync fail", "--hyde")
    assert no_model.returncode == 0
    assert "note: --hyde needs a text model (--llm or VAULTMEM_LLM)" in no_model.stderr


def test_search_explain_shows_each_signal(notes: Path) -> None:
    v = ("--vault", str(notes))
    assert run(*v, "reindex").returncode == 0
    plain = run(*v, "search", "tariff sync", "--limit", "2")
    explained = run(*v, "search", "tariff sync", "--limit", "2", "--explain")
    assert explained.returncode == 0, explained.stderr
    assert "=" not in plain.stdout and plain.stderr == ""
    lines = explained.stdout.splitlines()
    sums = [line.strip() for line in lines if line.strip().startswith("= ")]
    assert len(sums) == 2  # one per hit, after its snippet
    assert all(re.fullmatch(r"= (\w+ [+-]\d\.\d{3}\s*)+", s) for s in sums), sums
    assert "keyword" in sums[0]
    assert explained.stderr.strip() == "mode hybrid"
    one = (*v, "search", "tariff sync", "--limit", "1", "--json")
    assert "explain" in json.loads(run(*one, "--explain").stdout)["results"][0]
    assert "explain" not in json.loads(run(*one).stdout)["results"][0]


def test_search_format_text_json_openclaw(notes: Path) -> None:
    v = ("--vault", str(notes), "search", "quince jam", "--mode", "keyword")
    assert run("--vault", str(notes), "reindex").returncode == 0
    text = run(*v, "--format", "text")
    assert text.stdout == run(*v).stdout and text.stdout.startswith(" 1. home/jam.md:1-2")
    as_json = json.loads(run(*v, "--format", "json").stdout)
    assert as_json["results"][0]["path"] == "home/jam.md"
    openclaw = json.loads(run(*v, "--format", "openclaw").stdout)
    assert set(openclaw) == {"query", "results"}
    first = openclaw["results"][0]
    assert (first["path"], first["startLine"], first["header"]) == ("home/jam.md", 1, "Jam")
    assert run(*v, "--format", "yaml").returncode == 2


# --------------------------------------------------------------------------- doctor, graph, gaps


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A chain A -> B -> C -> D, a four-note clique P Q R S, and X <-> Y."""
    root = tmp_path / "g"
    files: dict[str, str | bytes] = {
        ".obsidian/app.json": "{}",
        "A.md": "[[B]]\n",
        "B.md": "[[C]]\n",
        "C.md": "[[D]]\n",
        "D.md": "end\n",
        "X.md": "[[Y]]\n",
        "Y.md": "[[X]]\n",
    }
    for n in "PQRS":
        files[f"{n}.md"] = "".join(f"[[{m}]]\n" for m in "PQRS" if m != n)
    write_files(root, files)
    assert run("--vault", str(root), "reindex").returncode == 0
    return root


def test_graph_path_max_depth_bounds_the_hops(linked: Path) -> None:
    v = ("--vault", str(linked), "graph", "path", "A", "D")
    two = run(*v, "--max-depth", "2")
    assert two.returncode == 1 and two.stdout == ""
    assert two.stderr.splitlines()[0] == "No path from A to D within 2 hops."
    assert "further apart than that: allow more hops" in two.stderr
    three = run(*v, "--max-depth", "3")
    assert three.returncode == 0
    assert [line.strip() for line in three.stdout.splitlines()] == [
        "A.md",
        "-->links_to  B.md",
        "-->links_to  C.md",
        "-->links_to  D.md",
        "3 hops",
    ]
    assert run(*v, "--max-depth", "0").returncode == 2


def test_graph_neighbors_depth_widens_the_ring(linked: Path) -> None:
    v = ("--vault", str(linked), "graph", "neighbors", "A")
    assert run(*v).stdout.splitlines() == ["1  B.md"]
    assert run(*v, "--depth", "2").stdout.splitlines() == ["1  B.md", "2  C.md"]
    assert run(*v, "--depth", "3").stdout.splitlines() == ["1  B.md", "2  C.md", "3  D.md"]
    data = json.loads(run(*v, "--depth", "2", "--json").stdout)
    assert json.dumps(data).count('"C.md"') >= 1 and '"D.md"' not in json.dumps(data)


def test_graph_clusters_min_size_and_members(linked: Path) -> None:
    v = ("--vault", str(linked), "graph", "clusters")
    default = run(*v)
    assert [line.split()[1:3] for line in default.stdout.splitlines()] == [
        ["4", "notes"],
        ["4", "notes"],
    ]
    two = run(*v, "--min-size", "2")
    assert [line.split()[1] for line in two.stdout.splitlines()] == ["4", "4", "2"]
    members = run(*v, "--min-size", "2", "--members").stdout.splitlines()
    assert [line.strip() for line in members if line.startswith("         ")] == [
        "A.md", "B.md", "C.md", "D.md", "P.md", "Q.md", "R.md", "S.md", "X.md", "Y.md",
    ]  # fmt: skip
    data = json.loads(run(*v, "--min-size", "2", "--json").stdout)
    assert [c["size"] for c in data["clusters"]] == [4, 4, 2]
    assert len(json.loads(run(*v, "--json").stdout)["clusters"]) == 2


def test_graph_cycles_and_fragile(linked: Path) -> None:
    v = ("--vault", str(linked), "graph")
    assert run(*v, "cycles").stdout.splitlines() == [
        "cycle 1: 4 notes", "  P.md", "  Q.md", "  R.md", "  S.md",
        "cycle 2: 2 notes", "  X.md", "  Y.md",
    ]  # fmt: skip
    cycles = json.loads(run(*v, "cycles", "--json").stdout)
    assert "X.md" in json.dumps(cycles) and "A.md" not in json.dumps(cycles)
    fragile = json.loads(run(*v, "fragile", "--json").stdout)
    assert [(p["path"], p["pieces"]) for p in fragile["articulation_points"]] == [
        ("B.md", 2),
        ("C.md", 2),
    ]
    assert len(fragile["bridges"]) == 4


def test_gaps_limit_cuts_each_list(linked: Path) -> None:
    v = ("--vault", str(linked), "gaps")
    one = run(*v, "--limit", "1").stdout
    assert "weakly linked (4)\n  A.md\n  … 3 more (--limit 0 shows all)\n" in one
    every = run(*v, "--limit", "0").stdout
    assert "weakly linked (4)\n  A.md\n  D.md\n  X.md\n  Y.md\n" in every and "more" not in every
    data = json.loads(run(*v, "--json", "--limit", "1").stdout)
    assert data["totals"]["weakly_linked"] == 4 and data["weakly_linked"] == [
        {"path": "A.md", "title": "A"}
    ]
    assert len(json.loads(run(*v, "--json", "--limit", "0").stdout)["weakly_linked"]) == 4


def test_doctor_json_names_the_problem_and_exits_1(tmp_path: Path) -> None:
    root = tmp_path / "d"
    write_files(
        root,
        {
            ".obsidian/app.json": "{}",
            "log.md": "Met [[Bob]] today.\n",
            "Robert.md": "---\naliases: [Bob]\n---\n",
        },
    )
    assert run("--vault", str(root), "reindex").returncode == 0
    result = run("--vault", str(root), "doctor", "--json")
    assert result.returncode == 0  # an alias link is advice, not an index problem
    data = json.loads(result.stdout)
    assert data["healthy"] is True
    assert [(x["path"], x["line"], x["fix"]) for x in data["alias_fixable"]] == [
        ("log.md", 1, "[[Robert|Bob]]")
    ]


def test_fix_aliases_dry_run_then_yes(tmp_path: Path) -> None:
    root = tmp_path / "f"
    write_files(
        root,
        {
            ".obsidian/app.json": "{}",
            "log.md": "Met [[Bob]] today.\n",
            "Robert.md": "---\naliases: [Bob]\n---\n",
        },
    )
    v = ("--vault", str(root))
    assert run(*v, "reindex").returncode == 0
    dry = run(*v, "gaps", "fix-aliases", "--dry-run")
    assert dry.returncode == 0
    assert "-Met [[Bob]] today.\n+Met [[Robert|Bob]] today.\n" in dry.stdout
    assert dry.stdout.rstrip().endswith("1 link in 1 note would change (dry run: nothing written)")
    assert (root / "log.md").read_text() == "Met [[Bob]] today.\n"
    done = run(*v, "gaps", "fix-aliases", "--yes")
    assert done.returncode == 0, done.stderr
    assert "fixed 1 link in 1 note (written and reindexed)" in done.stdout
    assert (root / "log.md").read_text() == "Met [[Robert|Bob]] today.\n"
    again = run(*v, "gaps", "fix-aliases", "--yes")
    assert again.stdout == "no alias-fixable links\n"


def test_fix_aliases_on_a_note_changed_since_the_reindex_exits_6(tmp_path: Path) -> None:
    root = tmp_path / "c"
    write_files(
        root,
        {
            ".obsidian/app.json": "{}",
            "log.md": "Met [[Bob]] today.\n",
            "Robert.md": "---\naliases: [Bob]\n---\n",
        },
    )
    v = ("--vault", str(root))
    assert run(*v, "reindex").returncode == 0
    (root / "log.md").write_text("Met [[Bob]] today.\nAn edit the index has not seen.\n")
    result = run(*v, "gaps", "fix-aliases", "--yes")
    assert result.returncode == 6, result.stderr
    assert "log.md changed since the last reindex; run `vaultmem reindex`" in result.stderr
    assert (root / "log.md").read_text().endswith("An edit the index has not seen.\n")


def test_an_index_of_another_schema_exits_3(notes: Path) -> None:
    import sqlean as sqlite3

    v = ("--vault", str(notes))
    assert run(*v, "reindex").returncode == 0
    conn = sqlite3.connect(str(notes / ".vaultmem" / "index.db"))
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")  # an older one
    conn.commit()
    conn.close()
    result = run(*v, "search", "quince")
    assert result.returncode == 3, result.stderr
    assert "vaultmem reindex --full" in result.stderr
    assert run(*v, "reindex", "--full").returncode == 0
    assert run(*v, "search", "quince").returncode == 0


# --------------------------------------------------------------------------- persona, mcp


def test_persona_load_formats(tmp_path: Path) -> None:
    index = ("--vault", str(ROOT / "sample-vault"), "--index", str(tmp_path / "i.db"))
    assert run(*index, "reindex").returncode == 0
    markdown = run(*index, "persona", "load", "health-coach", "--format", "markdown")
    assert markdown.returncode == 0, markdown.stderr
    assert markdown.stdout == run(*index, "persona", "load", "health-coach").stdout
    assert markdown.stdout.startswith("# Health coach\n\nYou are a calm, practical coach")
    as_json = json.loads(run(*index, "persona", "load", "health-coach", "--json").stdout)
    assert as_json == json.loads(
        run(*index, "persona", "load", "health-coach", "--format", "json").stdout
    )
    assert as_json["slug"] == "health-coach" and as_json["used"] <= as_json["budget"]


def test_persona_load_include_expired_keeps_expired_notes(make_vault: MakeVault) -> None:
    """A working-set note past its decay tier leaves `persona load`, and so does its open loop
    although it links the persona; `--include-expired` brings both back."""
    vault = make_vault(
        {
            "personas/helper.md": "---\ntype: persona\n---\n# Helper\n\nSee [[Sprint]] and"
            " [[Standards]].\n",
            "Sprint.md": "---\ndecay: session\ndate: 2020-01-02\n---\nSprint zebra notes.\n"
            "- [ ] file the zebra report for [[helper]]\n",
            "Standards.md": "---\ndecay: permanent\n---\nStandards okapi notes.\n",
        }
    )
    vault.reindex(embed=False)
    args = ("--vault", str(vault.root), "--index", str(vault.index_path), "persona", "load")
    plain = run(*args, "helper")
    assert plain.returncode == 0, plain.stderr
    assert "okapi" in plain.stdout and "zebra" not in plain.stdout
    kept = run(*args, "helper", "--include-expired")
    assert kept.returncode == 0, kept.stderr
    assert "Sprint zebra notes." in kept.stdout and "file the zebra report" in kept.stdout


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(notes: Path, tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    errlog = (tmp_path / "stderr.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vaultmem",
            "--vault",
            str(notes),
            "mcp",
            "--http",
            "--port",
            str(port),
            "--allow-host",
            "notes.lan",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=errlog,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, (tmp_path / "stderr.log").read_text()
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server never came up"
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=60)
        errlog.close()


def test_mcp_allow_host_lets_that_host_in(served: str) -> None:
    port = served.rsplit(":", 1)[1]
    assert httpx.get(served + "/health", headers={"Host": f"notes.lan:{port}"}).status_code == 200
    assert httpx.get(served + "/health", headers={"Host": "notes.lan"}).status_code == 200
    assert httpx.get(served + "/health", headers={"Host": f"other.lan:{port}"}).status_code == 421


# --------------------------------------------------------------------------- trash, restore


@pytest.fixture
def trashable(make_vault: MakeVault) -> Vault:
    vault = make_vault({"a.md": "alpha\n", "b.md": "beta\n"})
    vault.reindex(embed=False)
    return vault


@contextlib.contextmanager
def _hold_the_index_lock(vault: Vault) -> Iterator[None]:
    lock_path = vault.index_path.with_name(vault.index_path.name + ".lock")
    with open(lock_path, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def test_trash_move_json_and_wait(trashable: Vault) -> None:
    with _hold_the_index_lock(trashable):
        held = trash_run(trashable, "trash", "move", "a.md", "--wait", "0.2")
        assert held.exit_code == 4 and (trashable.root / "a.md").exists()
    out = trash_run(trashable, "trash", "move", "a.md", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["trashed"]["entry"] == ".trash/a.md"
    assert not (trashable.root / "a.md").exists()


def test_restore_wait_gives_up_on_a_held_lock_and_moves_nothing(trashable: Vault) -> None:
    assert trash_run(trashable, "trash", "a.md").exit_code == 0
    with _hold_the_index_lock(trashable):
        held = trash_run(trashable, "restore", ".trash/a.md", "--wait", "0.2")
        assert held.exit_code == 4
    assert (trashable.root / ".trash/a.md").exists() and not (trashable.root / "a.md").exists()
    assert trash_run(trashable, "restore", ".trash/a.md", "--wait", "30").exit_code == 0
    assert (trashable.root / "a.md").read_text() == "alpha\n"


def test_trash_purge_all_deletes_entries_however_recent(trashable: Vault) -> None:
    trash_run(trashable, "trash", "a.md")
    trash_run(trashable, "trash", "b.md")
    kept = json.loads(trash_run(trashable, "trash", "purge", "--yes", "--json").stdout)
    assert kept["total"] == 0  # trashed a moment ago: younger than the default 30 days
    gone = json.loads(trash_run(trashable, "trash", "purge", "--all", "--yes", "--json").stdout)
    assert sorted(e["entry"] for e in gone["purged"]) == [".trash/a.md", ".trash/b.md"]
    assert trashable.list_trash() == ()


# --------------------------------------------------------------------------- facts


@pytest.fixture
def memory(make_vault: MakeVault) -> Vault:
    vault = make_vault({"people/Maya Chen.md": MAYA, "Priya.md": "# Priya\n", **EPISODES})
    vault.reindex(embed=False)
    return vault


def test_fact_get_json_gives_the_value_its_block_and_history(memory: Vault) -> None:
    data = json.loads(memory_run(memory, "fact", "get", "Maya", "employer", "--json").stdout)
    assert data["path"] == "people/Maya Chen.md"
    [fact] = data["facts"]
    assert (fact["value"], fact["block"], fact["origin"]) == (
        "Heatwise GmbH",
        "f-0001",
        "call with Maya",
    )
    assert [h["value"] for h in fact["history"]] == ["Acme", "Initech"]


def test_fact_list_key_since_and_json(memory: Vault) -> None:
    every = json.loads(memory_run(memory, "fact", "list", "--json").stdout)
    assert {f["key"] for f in every["facts"]} >= {"employer", "home_city", "outcome"}
    employer = json.loads(memory_run(memory, "fact", "list", "--key", "employer", "--json").stdout)
    assert [(f["title"], f["value"]) for f in employer["facts"]] == [("Maya Chen", "Heatwise GmbH")]
    assert memory_run(memory, "fact", "list", "--key", "employer").stdout == (
        "Maya Chen: employer = Heatwise GmbH  [people/Maya Chen.md:8]\n"
    )
    memory_run(memory, "fact", "set", "Maya", "home_city", "Hamburg")
    since = json.loads(memory_run(memory, "fact", "list", "--since", "2026-06-01", "--json").stdout)
    keys = [f["key"] for f in since["facts"]]
    assert "home_city" in keys and "employer" not in keys  # employer was set on 2025-03-01


def test_fact_set_source_create_and_line(memory: Vault) -> None:
    memory_run(memory, "fact", "set", "Maya", "home_city", "Hamburg", "--source", "chat")
    got = json.loads(memory_run(memory, "fact", "get", "Maya", "home_city", "--json").stdout)
    assert got["facts"][0]["origin"] == "chat"
    refused = memory_run(memory, "fact", "set", "Tariff sync", "status", "green")
    assert refused.exit_code == 1 and not (memory.root / "entities").exists()
    created = memory_run(memory, "fact", "set", "Tariff sync", "status", "green", "--create")
    assert created.exit_code == 0, created.output
    assert (
        (memory.root / "entities/Tariff sync.md")
        .read_text()
        .startswith("## Facts\n- status:: green")
    )
    (memory.root / "Two.md").write_text("# Two\n- size:: small\n- size:: large\n")
    memory.reindex(embed=False)
    memory_run(memory, "fact", "set", "Two", "size", "medium", "--line", "3")
    lines = (memory.root / "Two.md").read_text().splitlines()
    assert lines[1] == "- size:: small" and lines[2].startswith("- size:: medium")


# --------------------------------------------------------------------------- episodes, trends


def test_episode_add_writes_every_option_into_the_note(memory: Vault) -> None:
    out = memory_run(
        memory, "episode", "add", "Gateway fix", "--outcome", "failure", "--entity", "Maya Chen",
        "--entity", "Priya", "--date", "2026-11-29", "--duration", "90 min", "--procedure",
        "Runbook", "--body", "It rebooted again.",
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert (memory.root / "episodes/2026-11-29 Gateway fix.md").read_text() == (
        "---\ntype: episode\ndate: 2026-11-29\noutcome: failure\nentities:\n"
        '  - "[[Maya Chen]]"\n  - "[[Priya]]"\nduration: 1h30m\nprocedure: "[[Runbook]]"\n---\n\n'
        "It rebooted again.\n"
    )


def test_episodes_outcome_entity_until_and_json(memory: Vault) -> None:
    def titles(*args: str) -> list[str]:
        result = memory_run(memory, "episodes", *args, "--json")
        assert result.exit_code == 0, result.output
        return [e["title"] for e in json.loads(result.stdout)["episodes"]]

    assert titles() == ["Hotfix shipped", "Gateway rollback", "Kickoff"]
    assert titles("--outcome", "failure") == ["Gateway rollback"]
    assert titles("--entity", "Tariff sync") == ["Hotfix shipped"]
    assert titles("--until", "2026-11-21") == ["Gateway rollback", "Kickoff"]
    assert titles("--since", "last week", "--now", "2026-11-30") == ["Hotfix shipped"]
    # "last week" from the 24th reaches the 20th; the 27th had not happened yet on the 24th
    assert titles("--since", "last week", "--now", "2026-11-24") == ["Gateway rollback"]
    # --now is an upper bound: nothing after the fixed clock, whatever --until says
    assert titles("--now", "2026-11-24") == ["Gateway rollback", "Kickoff"]
    assert titles("--until", "2026-12-31", "--now", "2026-11-24") == ["Gateway rollback", "Kickoff"]
    assert titles("--now", "2026-11-20T09:59") == ["Kickoff"]  # the rollback was at 10:00
    assert titles("--now", "2026-11-20T10:00") == ["Gateway rollback", "Kickoff"]


def test_trends_granularity_and_since(memory: Vault) -> None:
    def periods(*args: str) -> list[tuple[str, int]]:
        data = json.loads(memory_run(memory, "trends", "Maya Chen", *args, "--json").stdout)
        return [(p["period"], p["decided"]) for p in data["periods"]]

    assert periods() == [("2026-W47", 1), ("2026-W48", 1)]
    assert periods("--granularity", "month") == [("2026-11", 2)]
    assert periods("--granularity", "month", "--since", "2026-11-25", "--now", "2026-11-30") == [
        ("2026-11", 1)
    ]


# --------------------------------------------------------------------------- loops


def test_loops_entity_and_priority(memory: Vault) -> None:
    def texts(*args: str) -> list[str]:
        data = json.loads(memory_run(memory, "loops", *args, "--json").stdout)
        return [x["text"] for x in data["loops"]]

    both = ["Send Maya the tariff sheet", "Ask [[Priya]] about the freeze"]
    assert texts("--now", "2026-11-30") == both
    assert texts("--priority", "high") == both[:1]
    assert texts("--entity", "Priya") == both[1:]


def test_loop_add_note_due_and_priority(memory: Vault) -> None:
    out = memory_run(memory, "loop", "add", "Call Priya", "--note", "Priya", "--due",
                     "2026-12-05", "--priority", "high")  # fmt: skip
    assert out.exit_code == 0, out.output
    assert (memory.root / "Priya.md").read_text() == (
        "# Priya\n\n## Open loops\n- [ ] Call Priya ⏫ 📅 2026-12-05\n"
    )
    assert "Call Priya" not in (memory.root / "people/Maya Chen.md").read_text()
    plain = memory_run(memory, "loop", "add", "Write back", "--note", "Priya")
    assert plain.exit_code == 0, plain.output
    assert (memory.root / "Priya.md").read_text().endswith("- [ ] Write back\n")


# --------------------------------------------------------------------------- recall, gate, salience


def test_recall_days_budget_now_and_json(memory: Vault) -> None:
    ask = ("recall", "where did we leave off with Maya?")

    def kinds(*args: str) -> list[tuple[str, str]]:
        data = json.loads(memory_run(memory, *ask, *args, "--json").stdout)
        assert data["continuation"] is True
        return [(line["kind"], line["path"]) for line in data["lines"]]

    wide = [p for k, p in kinds("--now", "2026-11-30") if k == "episode"]
    assert wide == [
        "episodes/2026-11-27 Hotfix shipped.md",
        "episodes/2026-11-20 Gateway rollback.md",
    ]
    narrow = [p for k, p in kinds("--now", "2026-11-30", "--days", "5") if k == "episode"]
    assert narrow == ["episodes/2026-11-27 Hotfix shipped.md"]
    later = [p for k, p in kinds("--now", "2027-03-01") if k == "episode"]
    assert later == []
    full = memory_run(memory, *ask, "--now", "2026-11-30").stdout
    cut = memory_run(memory, *ask, "--now", "2026-11-30", "--budget", "120").stdout
    assert len(cut.rstrip("\n")) <= 120 < len(full)
    assert cut.startswith("# Continuing: Maya Chen\n")


def test_recall_include_expired_keeps_notes_past_their_decay(make_vault: MakeVault) -> None:
    expired = (
        "---\ntype: episode\ndate: 2026-11-28\noutcome: success\ndecay: session\n"
        'entities:\n  - "[[Maya Chen]]"\n---\n\nA scratch win.\n'
    )
    vault = make_vault({"people/Maya Chen.md": MAYA, "episodes/2026-11-28 Scratch.md": expired})
    vault.reindex(embed=False)
    ask = ("recall", "where did we leave off with Maya?", "--now", "2026-11-30")
    assert "A scratch win" not in memory_run(vault, *ask).stdout
    assert "A scratch win" in memory_run(vault, *ask, "--include-expired").stdout


def test_gate_json_and_llm(memory: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    ask = ("gate", "what is a tariff sheet?", "--json")
    plain = memory_run(memory, *ask)
    assert plain.exit_code == 2
    assert json.loads(plain.stdout)["verdict"] == "no-memory"
    with FakeModelServer() as model:
        model.reply = "MEMORY"
        monkeypatch.setenv("OLLAMA_URL", model.url)
        asked = memory_run(memory, *ask, "--llm", "ollama:llama3.2")
        assert model.posts("/api/generate")
    assert asked.exit_code == 0, asked.output
    data = json.loads(asked.stdout)
    assert (data["verdict"], data["llm"]) == ("needs-memory", "needs-memory")


def test_salience_top_cuts_the_list(memory: Vault) -> None:
    every = json.loads(memory_run(memory, "salience", "--now", "2027-06-01", "--json").stdout)
    top = json.loads(
        memory_run(memory, "salience", "--top", "1", "--now", "2027-06-01", "--json").stdout
    )
    assert len(every["salient"]) > 1 and top["total"] == 1
    assert top["salient"] == every["salient"][:1]


# --------------------------------------------------------------------------- capture, review


@pytest.fixture
def captured(make_vault: MakeVault) -> Vault:
    vault = make_vault({"Maya.md": "# Maya\n\n## Facts\n- role:: CEO ^f-0001\n"})
    vault.reindex(embed=False)
    return vault


def _capture(vault: Vault, *args: str, chat: str = CHAT) -> dict[str, object]:
    result = capture_run(vault, "capture", "-", *args, "--json", stdin=chat)
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def _pending(vault: Vault) -> list[dict[str, object]]:
    data = json.loads(capture_run(vault, "review", "--json").stdout)
    return [i for c in data["captures"] for i in c["items"] if i["item_status"] == "pending"]


def test_capture_source_and_persona_name_the_capture_note(captured: Vault) -> None:
    data = _capture(captured, "--source", "call with Maya", "--persona", "coach")
    path = str(data["path"])
    assert path.startswith("inbox/2") and path.endswith(" call with Maya.md")
    head = (captured.root / str(data["path"])).read_text().split("\n---\n", 1)[0] + "\n"
    assert "\nsource: call with Maya\n" in head and "\npersona: coach\n" in head
    other = _capture(captured, "--source", "standup", chat=CHAT + "Tom: See you.\n")
    head = (captured.root / str(other["path"])).read_text().split("\n---\n", 1)[0] + "\n"
    assert "\nsource: standup\n" in head and "persona:" not in head


def test_review_accept_all_above_a_confidence(captured: Vault) -> None:
    _capture(captured, "--source", "call")
    confidences = sorted(float(str(i["confidence"])) for i in _pending(captured))
    assert confidences == [0.6, 0.65, 0.7]
    out = capture_run(captured, "review", "accept", "--all", "--min-confidence", "0.68")
    assert out.exit_code == 0, out.output
    assert "- role:: CTO ^f-0001" in (captured.root / "Maya.md").read_text()
    assert sorted(str(i["kind"]) for i in _pending(captured)) == ["episode", "loop"]
    rest = capture_run(captured, "review", "accept", "--all")
    assert rest.exit_code == 0, rest.output
    assert _pending(captured) == []
    assert "send the deck" in (captured.root / "Maya.md").read_text()


def test_review_edit_key_and_entity(captured: Vault) -> None:
    _capture(captured, "--source", "call")
    role = next(i for i in _pending(captured) if i["kind"] == "fact")
    out = capture_run(captured, "review", "edit", str(role["item_id"]), "--key", "title",
                      "--entity", "Tom")  # fmt: skip
    assert out.exit_code == 0, out.output
    edited = next(i for i in _pending(captured) if i["kind"] == "fact")
    assert (edited["entity"], edited["key"], edited["value"]) == ("Tom", "title", "CTO")
    assert edited["flags"] == []  # Tom holds no title: nothing is contradicted now
