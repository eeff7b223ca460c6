"""The soak benchmark (bench/soak.py) for a few seconds: the MCP server, the TUI's core, an
editor and reindexes at once give no error. Its 30-minute run is by hand (docs/BENCHMARKS.md)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_a_short_soak_has_no_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("soak", ROOT / "bench" / "soak.py")
    assert spec is not None and spec.loader is not None
    soak = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "soak", soak)
    spec.loader.exec_module(soak)
    monkeypatch.setattr(soak, "write_json", lambda name, data: _write(tmp_path / name, data))
    monkeypatch.setattr(soak, "snapshot_code", lambda: {})  # the tests' own code is fixed
    code = soak.main(
        ["--minutes", "0.4", "--notes", "40", "--embedder", "fake", "--work", str(tmp_path)]
    )
    result = json.loads((tmp_path / "soak.json").read_text())
    assert result["error_list"] == []
    assert code == 0
    calls = result["calls"]
    for who in ("mcp search", "mcp read_note", "core search", "edit", "reindex"):
        assert calls.get(who, 0) > 0, (who, calls)


def _write(path: Path, data: dict[str, object]) -> Path:
    path.write_text(json.dumps(data))
    return path
