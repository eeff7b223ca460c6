"""Where the shared conformance data lives, and parametrization that skips clearly without it.

The data (other tools' test suites, a real vault) sits outside the repo in ../shared/data
relative to the project root; it is never copied in (see ../shared/data/README.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
EDGECASES = DATA / "edgecases"
KEPANO_VAULT = DATA / "vaults" / "kepano-obsidian" / "vault"


def absent(path: Path) -> str:
    return f"{path} is absent: the shared test data (../shared/data next to the project) is needed"


def cases(
    names: str | tuple[str, ...], path: Path, build: Callable[[], Iterable[Any]]
) -> pytest.MarkDecorator:
    """`pytest.mark.parametrize(names, build())`, or one case that skips and says why when
    `path` (part of the shared data) is absent."""
    if path.exists():
        return pytest.mark.parametrize(names, list(build()))
    arity = (
        1
        if isinstance(names, str) and "," not in names
        else len(names if isinstance(names, tuple) else names.split(","))
    )
    absent_case = pytest.param(
        *[None] * arity, id="data-absent", marks=pytest.mark.skip(reason=absent(path))
    )
    return pytest.mark.parametrize(names, [absent_case])


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def case_id(*parts: object) -> str:
    """A readable, shell-safe test id: words kept, everything else squeezed to one "-"."""
    text = "-".join(str(p) for p in parts if p not in (None, ""))
    return re.sub(r"[^\w.#|\[\]^!$%`~]+", "-", text).strip("-") or "empty"
