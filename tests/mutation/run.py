"""`make mutation`: mutmut over the modules that decide results, one module at a time.

Each module in pyproject's `[tool.vaultmem.mutation.modules]` runs in its own work folder,
`.mutation/MODULE/`, whose pyproject.toml is the project's with `[tool.mutmut]` narrowed to that
module's files and its own test selection: mutmut then maps each mutated function to the
selected tests that call it and runs only those (in a forked pytest) against each of its
mutants. A folder keeps its results, so a second run re-tests only what changed.

    python -m tests.mutation.run                  # every module, in the configured order
    python -m tests.mutation.run resolver dates   # these modules only
    python -m tests.mutation.run edit             # every part of a module split in parts
    python -m tests.mutation.run --retest resolver  # its survivors again, after new tests
    python -m tests.mutation.run --summary        # the per-module table of the last runs

Run it under `nice -n 19` (the Makefile does): it keeps both cores busy for a long time.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / ".mutation"
# the mutmut statuses a module's table counts, in its order
EXAMPLES = "VAULTMEM_HYPOTHESIS_EXAMPLES"
STATUSES = ("killed", "survived", "timeout", "no tests", "suspicious", "not checked")


@dataclass(frozen=True)
class Module:
    name: str
    files: tuple[str, ...]  # source files, as only_mutate globs
    functions: tuple[str, ...]  # mutant name globs ("vaultmem.search.x__facts__*"); () = all
    tests: tuple[str, ...]  # the pytest selection its mutants run against


def load() -> tuple[dict[str, object], list[Module]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    base = data["tool"]["mutmut"]
    table = data["tool"]["vaultmem"]["mutation"]["modules"]
    modules = [
        Module(
            name,
            tuple(spec["files"]),
            tuple(spec.get("functions", ())),
            tuple(spec["tests"]),
        )
        for name, spec in table.items()
    ]
    return base, modules


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def module_pyproject(base: dict[str, object], module: Module) -> str:
    """The project's pyproject.toml with `[tool.mutmut]` narrowed to one module."""
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    settings = {
        **base,
        "only_mutate": list(module.files),
        "pytest_add_cli_args_test_selection": list(module.tests),
    }
    table = "[tool.mutmut]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in settings.items())
    cut = re.compile(r"^\[tool\.mutmut\]\n(?:(?!\[).*\n|\n)*", re.MULTILINE)
    narrowed, count = cut.subn(table + "\n", text)
    if count != 1:
        raise SystemExit("pyproject.toml needs exactly one [tool.mutmut] table")
    return narrowed


def prepare(base: dict[str, object], module: Module) -> Path:
    """The module's work folder: links to the sources and tests, its own pyproject.toml."""
    work = WORK / module.name
    work.mkdir(parents=True, exist_ok=True)
    wanted = {p.rstrip("/") for p in ["vaultmem", "tests", *_strings(base.get("also_copy"))]}
    for name in wanted:
        link = work / name
        if not link.is_symlink() and not link.exists():
            link.symlink_to(ROOT / name)
    (work / "pyproject.toml").write_text(module_pyproject(base, module), "utf-8")
    return work


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def mutmut() -> str:
    found = shutil.which("mutmut", path=str(Path(sys.executable).parent)) or shutil.which("mutmut")
    if not found:
        raise SystemExit("mutmut is not installed: pip install -e '.[mutation]'")
    return found


def run(base: dict[str, object], module: Module, children: int, retest: bool = False) -> int:
    """mutmut over one module; `retest`: only its mutants not killed last time, again."""
    work = prepare(base, module)
    names = list(module.functions)
    if retest:
        names = survivors(module)
        if not names:
            print(f"== {module.name}: no surviving mutants to test again")
            return 0
    print(f"== {module.name}: {', '.join(module.files)} against {len(module.tests)} test files")
    sys.stdout.flush()
    args = [mutmut(), "run", "--max-children", str(children), *names]
    # Property tests check fewer generated cases per mutant: the fixture cases pin the rules.
    env = {**os.environ, EXAMPLES: os.environ.get(EXAMPLES, "25")}
    return subprocess.run(args, cwd=work, env=env, check=False).returncode


def statuses(module: Module) -> Counter[str]:
    """How many of the module's mutants ended in each status (from `mutmut results`)."""
    work = WORK / module.name
    if not (work / "mutants").is_dir():
        return Counter()
    out = subprocess.run(
        [mutmut(), "results", "--all", "true"],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    counts: Counter[str] = Counter()
    for line in out.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if not sep or not name.startswith("vaultmem."):
            continue
        if module.functions and not any(fnmatch(name, g) for g in module.functions):
            continue
        counts[status] += 1
    return counts


def survivors(module: Module) -> list[str]:
    """The module's mutants that were not killed (survived, no tests, timeout, not checked…)."""
    work = WORK / module.name
    if not (work / "mutants").is_dir():
        return []
    out = subprocess.run(
        [mutmut(), "results"], cwd=work, capture_output=True, text=True, check=True
    ).stdout
    names = [line.strip().rpartition(": ")[0] for line in out.splitlines() if ": " in line]
    if module.functions:
        names = [n for n in names if any(fnmatch(n, g) for g in module.functions)]
    return [n for n in names if n.startswith("vaultmem.")]


def summary(modules: list[Module]) -> None:
    print("| module | mutants | " + " | ".join(STATUSES) + " |")
    print("|---|---:|" + "---:|" * len(STATUSES))
    for module in modules:
        counts = statuses(module)
        if not counts:
            print(f"| {module.name} | not run |" + " |" * len(STATUSES))
            continue
        cells = " | ".join(str(counts.get(s, 0)) for s in STATUSES)
        print(f"| {module.name} | {sum(counts.values())} | {cells} |")
    for module in modules:
        if statuses(module):
            left = survivors(module)
            if left:
                print(f"\n{module.name}: {len(left)} surviving")
                for name in left:
                    print("  " + name)


def select(modules: list[Module], name: str) -> list[Module]:
    """The module called `name`, or else the parts of one split in several (`edit` runs
    `edit-lines-text` and `edit-rest`)."""
    exact = [m for m in modules if m.name == name]
    return exact or [m for m in modules if m.name.startswith(name + "-")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("modules", nargs="*", help="modules to run (default: all, in order)")
    parser.add_argument("--summary", action="store_true", help="print the last results only")
    parser.add_argument(
        "--retest", action="store_true", help="test only the mutants not killed last time again"
    )
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    base, modules = load()
    known = {m.name: m for m in modules}
    unknown = [n for n in args.modules if not select(modules, n)]
    if unknown:
        parser.error(f"unknown module(s) {', '.join(unknown)}: known are {', '.join(known)}")
    chosen = [m for n in args.modules for m in select(modules, n)] if args.modules else modules
    if not args.summary:
        for module in chosen:
            code = run(base, module, args.max_children, args.retest)
            if code != 0:
                raise SystemExit(f"mutmut failed on {module.name} (exit {code})")
    summary(chosen)


if __name__ == "__main__":
    main()
