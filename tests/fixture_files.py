"""Fixture files in the markdown-it-py style: a title, then input and expected, each closed by `.`.

    title of the case
    .
    input lines
    .
    expected lines
    .

Lines between cases (blank lines, a note about the file) are ignored. `{U+XXXX}` in a
case stands for that character, so invisible ones (a tab, a decomposed accent) stay readable.
Lines are split on "\\n" only: a form feed or U+2028 in a case is part of its line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
_CODEPOINT_RE = re.compile(r"\{U\+([0-9A-Fa-f]{4,6})\}")


@dataclass(frozen=True)
class Case:
    file: str
    line: int  # 1-based line of the title
    title: str
    input: str
    expected: str


def unescape(text: str) -> str:
    return _CODEPOINT_RE.sub(lambda m: chr(int(m.group(1), 16)), text)


def read_cases(path: Path) -> list[Case]:
    """Every case of one fixture file; a file that does not close its last case is an error."""
    lines = path.read_text(encoding="utf-8").split("\n")
    cases: list[Case] = []
    parts: list[str] = []
    start = title_at = 0
    for n, line in enumerate(lines):
        if line.rstrip() != ".":
            continue
        if not parts:
            title_at = n - 1
            title = lines[title_at].strip() if n > 0 else ""
            if not title:
                raise ValueError(f"{path.name}:{n + 1}: a case needs a title line before '.'")
            parts.append(title)
        else:
            parts.append("\n".join(lines[start + 1 : n]))
        start = n
        if len(parts) == 3:
            cases.append(
                Case(path.name, title_at + 1, parts[0], unescape(parts[1]), unescape(parts[2]))
            )
            parts = []
    if parts:
        raise ValueError(f"{path.name}:{title_at + 1}: case {parts[0]!r} is not closed")
    return cases


def fixture_params(folder: str, known_bugs: Mapping[str, str] | None = None) -> list[object]:
    """The cases of every `tests/fixtures/<folder>/*.txt`, as pytest params with readable ids.

    `known_bugs` maps a case's title to why the code gets it wrong today: that case is a strict
    xfail, so it fails loudly once the bug is fixed.
    """
    bugs = dict(known_bugs or {})
    params: list[object] = []
    for path in sorted((FIXTURES / folder).glob("*.txt")):
        for case in read_cases(path):
            case_id = f"{path.stem}:{case.line}:{case.title}"
            reason = bugs.pop(case.title, None)
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            params.append(pytest.param(case, id=case_id, marks=marks))
    if bugs:
        raise ValueError(f"known bugs name no case in tests/fixtures/{folder}: {sorted(bugs)}")
    return params
