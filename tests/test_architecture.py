"""The layering: the core runs headless, all SQL is in the store, front-ends write no files."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[1] / "vaultmem" / "cli"
CLI_MODULES = sorted(p.stem for p in CLI.glob("*.py") if p.stem != "__init__")

HEADLESS = [
    "vaultmem.parser",
    "vaultmem.resolver",
    "vaultmem.store",
    "vaultmem.indexer",
    "vaultmem.index",
    "vaultmem.notes",
    "vaultmem.linkgraph",
    "vaultmem.health",
    "vaultmem.vault",
    "vaultmem.vectors",
    "vaultmem.live",
    "vaultmem.persona",
    "vaultmem.gaps",
    "vaultmem.query",
    "vaultmem.related",
    "vaultmem.dialect",
    "vaultmem.cli",
    *(f"vaultmem.cli.{name}" for name in CLI_MODULES),
]


@pytest.mark.parametrize("module", HEADLESS)
def test_module_does_not_import_textual(module: str) -> None:
    code = f"import sys, {module}; print('textual' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


# The MCP SDK (and the web stack under it) loads only when `vaultmem mcp` runs.
WITHOUT_MCP = [*HEADLESS, "vaultmem.live", "vaultmem.gaps"]


@pytest.mark.parametrize("module", WITHOUT_MCP)
def test_module_does_not_import_the_mcp_sdk(module: str) -> None:
    code = (
        f"import sys, {module}; "
        "print(sorted(m for m in ('mcp', 'mcp_types', 'starlette', 'uvicorn') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_tui_package_import_stays_headless() -> None:
    """`vaultmem tui` imports the package first: Textual must load only when the app starts."""
    code = "import sys, vaultmem.tui; print('textual' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


PACKAGE = Path(__file__).resolve().parents[1] / "vaultmem"


def _imported(node: ast.AST) -> list[str]:
    """The modules (and `module.name`s) an import statement names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return []


# Below the core API: the TUI presents what `Vault` (and the pure analysis modules) answer.
# The parser is pure (text in, values out) and the one module that knows markdown syntax: the
# TUI asks it about a line's syntax (wikilinks, fences) instead of carrying its own regexes,
# but never parses notes itself (that is the index's work, read through the core).
BELOW_THE_CORE = (
    "vaultmem.store",
    "vaultmem.parser.parse_note",
    "vaultmem.parser.split_front_matter",
    "vaultmem.resolver",
    "vaultmem.scan",
    "vaultmem.embed",
    "vaultmem.llm",
    "sqlean",
    "sqlite3",
    "sqlite_vec",
)


def test_tui_calls_only_the_core_api() -> None:
    found = [
        f"{file.name}: {name}"
        for file in sorted((PACKAGE / "tui").rglob("*.py"))
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8")))
        for name in _imported(node)
        if any(name == b or name.startswith(b + ".") for b in BELOW_THE_CORE)
    ]
    assert found == []


# --------------------------------------------------------------------------- SQL in the store

STORE = PACKAGE / "store"
SQL_RE = re.compile(
    r"\b(SELECT\s.*\bFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM"
    r"|CREATE\s+(VIRTUAL\s+)?(TABLE|INDEX)|DROP\s+(TABLE|INDEX)|ALTER\s+TABLE|PRAGMA\s+\w+"
    r"|BEGIN(\s+(IMMEDIATE|EXCLUSIVE|DEFERRED))?\s*;?\Z|ROLLBACK|COMMIT\s*;?\Z)\b",
    re.DOTALL,
)
SQL_DRIVERS = ("sqlean", "sqlite3", "sqlite_vec")


def sql_in(source: str) -> list[str]:
    """What in one module's source runs or spells SQL: `.execute*()` calls, SQL string
    literals (the parts of f-strings too), imports of an SQLite driver."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("execute", "executemany", "executescript"):
                found.append((line, f".{node.func.attr}()"))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and SQL_RE.search(node.value)
        ):
            found.append((line, f"SQL {node.value[:50]!r}"))
        found += [(line, f"import {n}") for n in _imported(node) if n.split(".")[0] in SQL_DRIVERS]
    return [f"line {n}: {what}" for n, what in sorted(found)]


def test_the_sql_check_finds_sql() -> None:
    source = (
        "import sqlean\n"
        "def f(conn, table):\n"
        "    conn.execute('SELECT path FROM notes WHERE id = ?', (1,))\n"
        "    sql = f'DELETE FROM {table} WHERE note_id = ?'\n"
        "    conn.executemany(sql, [])\n"
        "    return store.scalar(conn, 'PRAGMA quick_check')\n"
    )
    assert [p.split(":")[0] for p in sql_in(source)] == [
        "line 1",  # the import
        "line 3",  # .execute()
        "line 3",  # its SQL
        "line 4",  # the f-string's SQL
        "line 5",  # .executemany()
        "line 6",  # SQL handed to a helper
    ]
    prose = '"""Select a note from the list, then update it; a commit of the index."""\n'
    assert sql_in(prose) == []


def test_no_sql_outside_the_store() -> None:
    """Every statement lives in `vaultmem/store/`, next to the table it reads or writes."""
    modules = [f for f in sorted(PACKAGE.rglob("*.py")) if STORE not in f.parents]
    assert len(modules) > 40
    found = [
        f"{file.relative_to(PACKAGE)}: {problem}"
        for file in modules
        for problem in sql_in(file.read_text(encoding="utf-8"))
    ]
    assert found == []


# --------------------------------------------------------------------------- writes in the core

# Calls that change the file system. `.replace(x)` with one argument is Path.replace (str's
# takes two); `open` in any mode but reading is a write.
WRITING_METHODS = frozenset(
    {
        "write_text",
        "write_bytes",
        "unlink",
        "rmdir",
        "mkdir",
        "touch",
        "rename",
        "symlink_to",
        "hardlink_to",
        "chmod",
        "lchmod",
    }
)
WRITING_OS = frozenset(
    {
        "replace",
        "rename",
        "renames",
        "remove",
        "unlink",
        "rmdir",
        "removedirs",
        "mkdir",
        "makedirs",
        "symlink",
        "link",
        "chmod",
        "chown",
        "truncate",
        "open",
        "write",
        "mkfifo",
    }
)
WRITING_MODULES = ("shutil", "tempfile")
READING_FUNCTIONS = frozenset({"which", "get_terminal_size", "disk_usage", "gettempdir"})


def _writing_mode(call: ast.Call, position: int) -> bool:
    """Whether an open() call's mode (argument `position`, or `mode=`) may write."""
    mode: ast.expr | None = call.args[position] if len(call.args) > position else None
    mode = next((k.value for k in call.keywords if k.arg == "mode"), mode)
    if mode is None:
        return False  # "r"
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return any(c in mode.value for c in "wax+")
    return True  # a mode computed at run time cannot be shown to only read


def file_writes(source: str) -> list[str]:
    """The places in one module's source that write, move or delete files or folders."""
    found: list[tuple[int, str]] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        for name in _imported(node):
            module, _, attr = name.partition(".")
            if (module in WRITING_MODULES and attr and attr not in READING_FUNCTIONS) or (
                module == "os" and attr in WRITING_OS
            ):
                found.append((line, f"import {name}"))
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open" and _writing_mode(node, 1):
            found.append((line, "open() to write"))
        if not isinstance(func, ast.Attribute):
            continue
        owner = func.value.id if isinstance(func.value, ast.Name) else None
        if (owner in WRITING_MODULES and func.attr not in READING_FUNCTIONS) or (
            owner == "os" and func.attr in WRITING_OS
        ):
            found.append((line, f"{owner}.{func.attr}()"))
        elif func.attr in WRITING_METHODS:
            found.append((line, f".{func.attr}()"))
        elif func.attr == "replace" and len(node.args) == 1 and not node.keywords:
            found.append((line, "Path.replace()"))
        elif func.attr == "open" and owner != "os" and _writing_mode(node, 0):
            found.append((line, ".open() to write"))
    return [f"line {n}: {what}" for n, what in sorted(found)]


def test_the_write_check_finds_writes() -> None:
    source = (
        "import os, shutil\n"
        "from pathlib import Path\n"
        "def f(path: Path, mode: str) -> None:\n"
        "    open(path, 'w').close()\n"
        "    open(path, mode=mode)\n"
        "    path.open('a')\n"
        "    path.write_text('x')\n"
        "    path.with_suffix('.tmp').replace(path)\n"
        "    os.replace(path, path)\n"
        "    shutil.move(path, path)\n"
        "    path.unlink()\n"
        "    from shutil import copyfile, which\n"
    )
    assert [p.split(":")[0] for p in file_writes(source)] == [
        f"line {n}" for n in (4, 5, 6, 7, 8, 9, 10, 11, 12)
    ]
    reads = (
        "import shutil\n"
        "def f(p):\n"
        "    open(p).read(); open(p, 'rb'); p.open(); p.read_text(); p.stat()\n"
        "    shutil.which('xdg-open')\n"
        "    return 'a-b'.replace('-', '_')\n"
    )
    assert file_writes(reads) == []
    # a module using shutil to look up a program and to copy is still caught, at the copy
    both = "import shutil\nshutil.which('x')\nshutil.copy('a', 'b')\n"
    assert file_writes(both) == ["line 3: shutil.copy()"]


FRONT_ENDS = [
    *PACKAGE.glob("cli*.py"),
    *(PACKAGE / "cli").rglob("*.py"),
    *(PACKAGE / "tui").rglob("*.py"),
    *(PACKAGE / "server").rglob("*.py"),
]


def test_front_ends_write_files_only_through_the_core() -> None:
    """The CLI, the TUI and the MCP server present; the core writes (atomically, refusing a
    note changed since it was read, re-indexing what it touched)."""
    assert len(FRONT_ENDS) > 20
    found = [
        f"{file.relative_to(PACKAGE)}: {problem}"
        for file in sorted(FRONT_ENDS)
        for problem in file_writes(file.read_text(encoding="utf-8"))
    ]
    assert found == []


def _imports(file: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return names


def test_command_modules_never_import_the_root() -> None:
    """llm's `register_commands` shape: the root imports its command modules and they register
    themselves on its group; none imports the root (or the package that re-exports it) back."""
    assert {"root", "context", "notes"} <= set(CLI_MODULES)
    cycles = [
        f"{name}.py imports {imported}"
        for name in CLI_MODULES
        if name != "root"
        for imported in _imports(CLI / f"{name}.py")
        if imported in ("vaultmem.cli", "vaultmem.cli.root", "vaultmem.cli.cli")
        or imported.startswith("vaultmem.cli.root.")
    ]
    assert cycles == []


def test_every_command_module_registers_its_commands() -> None:
    from vaultmem.cli import root

    assert set(root.COMMAND_MODULES) == set(CLI_MODULES) - {"root", "context"}
    owners = {cmd.callback.__module__ for cmd in root.cli.commands.values() if cmd.callback}
    assert owners == {f"vaultmem.cli.{m}" for m in root.COMMAND_MODULES}


def test_only_the_server_package_imports_the_mcp_sdk() -> None:
    package = Path(__file__).resolve().parents[1] / "vaultmem"
    found = [
        f"{file.relative_to(package)}: {name}"
        for file in sorted(package.rglob("*.py"))
        if "server" not in file.relative_to(package).parts
        for name in _imports(file)
        if name.split(".")[0] in ("mcp", "mcp_types")
    ]
    assert found == []


def test_the_console_script_and_python_m_reach_the_cli_package() -> None:
    from importlib.metadata import entry_points

    import vaultmem.__main__
    from vaultmem.cli import main

    (script,) = entry_points(group="console_scripts", name="vaultmem")
    assert script.value == "vaultmem.cli:main" and script.load() is main
    assert vaultmem.__main__.main is main
