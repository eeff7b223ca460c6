"""The wheel a person installs: built from a clean copy of the source, installed into a fresh
venv, and run there (the console script, a vault without .obsidian, the TUI's stylesheet).

The build needs setuptools from the package registry (pip's isolated build); where pip cannot
reach it the test is skipped, saying so. The fresh venv gets the wheel alone (`--no-deps`) and
borrows its dependencies from the test venv through a `.pth` line, so it takes seconds, while
vaultmem itself can only come from the wheel (the test venv's editable install is not on the
borrowed path: its `.pth` hook is never run there).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLE_VAULT

# What pip prints when the registry cannot be reached (or has nothing for the build).
OFFLINE = (
    "Could not find a version that satisfies the requirement",
    "No matching distribution found",
    "Failed to establish a new connection",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Max retries exceeded",
)


def _source_files() -> set[str]:
    """Every file of the package as the repository has it (bytecode aside)."""
    return {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "vaultmem").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built by pip from a copy of the source (the repository gets no build/)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(
        ROOT / "vaultmem", src / "vaultmem", ignore=shutil.ignore_patterns("__pycache__")
    )
    dist = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        if any(sign in done.stdout + done.stderr for sign in OFFLINE):
            pytest.skip("pip cannot reach the package registry to build the wheel (setuptools)")
        raise AssertionError(f"pip wheel failed:\n{done.stdout}\n{done.stderr}")
    (built,) = dist.glob("vaultmem-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel (no dependencies: those come from the test venv)."""
    root = tmp_path_factory.mktemp("venv") / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib, "_borrowed_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    install = ["install", "--no-deps", "--no-index", str(wheel)]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), *install],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
    env |= {"VAULTMEM_EMBEDDER": "fake", "PYTHONPATH": ""}
    return subprocess.run(
        [str(venv / "bin" / args[0]), *args[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_the_wheel_carries_every_file_of_the_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        scripts = zf.read(entry_points).decode()
    missing = _source_files() - names
    assert not missing, f"files the wheel leaves out: {sorted(missing)}"
    assert "vaultmem/tui/vaultmem.tcss" in names
    assert "vaultmem = vaultmem.cli:main" in scripts


def test_the_installed_command_works_on_a_plain_folder(venv: Path, tmp_path: Path) -> None:
    python = _run(venv, "python", "-c", "import vaultmem; print(vaultmem.__file__)", cwd=tmp_path)
    assert python.stdout.strip().startswith(str(venv)), python.stdout + python.stderr
    version = _run(venv, "vaultmem", "--version", cwd=tmp_path)
    assert version.returncode == 0 and "vaultmem, version" in version.stdout

    notes = tmp_path / "notes"  # a folder of markdown, no .obsidian
    shutil.copytree(SAMPLE_VAULT / "work", notes)
    init = _run(venv, "vaultmem", "init", cwd=notes)
    assert init.returncode == 0, init.stderr
    assert "created" in init.stdout and "next:" in init.stdout
    found = _run(venv, "vaultmem", "search", "tariff", "--json", cwd=notes)
    assert found.returncode == 0, found.stderr
    assert '"results": [{' in found.stdout


def test_the_installed_app_finds_its_stylesheet(venv: Path, tmp_path: Path) -> None:
    vault = tmp_path / "notes"
    shutil.copytree(SAMPLE_VAULT, vault, ignore=shutil.ignore_patterns(".vaultmem"))
    assert _run(venv, "vaultmem", "--vault", str(vault), "reindex", cwd=tmp_path).returncode == 0
    script = (
        "import asyncio, sys, vaultmem.tui.app as a\n"
        "from vaultmem.vault import Vault\n"
        "async def main():\n"
        "    app = a.VaultmemApp(Vault(__import__('pathlib').Path(sys.argv[1])), live=False)\n"
        "    async with app.run_test(size=(80, 24)) as pilot:\n"
        "        await pilot.pause()\n"
        "        print(type(app.screen).__name__, a.__file__)\n"
        "asyncio.run(main())\n"
    )
    done = _run(venv, "python", "-c", script, str(vault), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    screen, module = done.stdout.split()
    assert screen == "SearchScreen" and module.startswith(str(venv))
