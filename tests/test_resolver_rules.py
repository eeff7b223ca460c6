"""The resolver's rules (docs/vault-contract.md, "Resolution") as fixture cases:
tests/fixtures/resolver/*.txt, each a small vault indexed end to end.

A case's input is the vault, one file after each `=== path` line (its content below it; an
attachment or an empty note has none). Its expected output lists every link of every note with
text, by note path and line, then every alias fix `doctor` proposes:

    src:line target[#heading|#^block] -> dst
    src:line target -> dst ambiguous: candidate, candidate
    src:line target#heading -> dst missing heading       (or: missing block)
    src:line target -> wanted
    src:line target -> wanted, alias of path
    fix src:line [[written]] -> [[rewrite]]
"""

from __future__ import annotations

import pytest

from tests.conftest import MakeVault
from tests.fixture_files import Case, fixture_params
from vaultmem.vault import OutLink


def vault_files(text: str) -> dict[str, str]:
    files: dict[str, str] = {}
    path: str | None = None
    for line in text.split("\n"):
        if line.startswith("=== "):
            path = line[4:].strip()
            files[path] = ""
        elif path is None:
            raise ValueError(f"text before the first '=== path' line: {line!r}")
        else:
            files[path] += line + "\n"
    return {p: ("" if not c.strip() else c) for p, c in files.items()}


def _anchor(link: OutLink) -> str:
    if link.block:
        return f"#^{link.block}"
    return f"#{link.heading}" if link.heading else ""


def describe_link(src: str, link: OutLink) -> str:
    head = f"{src}:{link.line} {link.target}{_anchor(link)} -> "
    if link.dst_path is None:
        return head + ("wanted" + (f", alias of {link.alias_fix}" if link.alias_fix else ""))
    out = head + link.dst_path
    if link.anchor_ok is False:
        out += " missing " + ("block" if link.block else "heading")
    if len(link.candidates) > 1:
        out += " ambiguous: " + ", ".join(link.candidates)
    return out


# Cases the code gets wrong today, by title: strict, so each fails loudly once it is fixed.
# (None now: the decomposed file name was fixed with issue 15's scan, tests/hostile/.)
KNOWN_BUGS: dict[str, str] = {}


@pytest.mark.parametrize("case", fixture_params("resolver", KNOWN_BUGS))
def test_resolver_rule(case: Case, make_vault: MakeVault) -> None:
    files = vault_files(case.input)
    vault = make_vault(dict(files))
    try:
        vault.reindex()
        found = [
            describe_link(path, link)
            for path in sorted(p for p, text in files.items() if p.endswith(".md") and text)
            for link in vault.show(path).links
        ]
        found += [
            f"fix {p.src_path}:{p.line} {p.written} -> {p.fix}" for p in vault.alias_fixable()
        ]
    finally:
        vault.close()
    assert "\n".join(found) == case.expected.strip("\n"), f"{case.file}:{case.line} {case.title}"
