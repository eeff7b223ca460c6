"""Shared helpers for the benchmark scripts: data location, dataset copies, child runs, stats."""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "bench" / "results"
MDN_TARBALL = DATA / "scale" / "mdn-en-us.tar.gz"
KEPANO_VAULT = DATA / "vaults" / "kepano-obsidian" / "vault"
WORK = Path(os.environ.get("VAULTMEM_BENCH_TMP", "/tmp/vaultmem-bench"))
DEFAULT_MDN_DIR = WORK / "mdn"  # holds files/ (the vault root) once extracted

# The Python that has vaultmem installed (the project's venv), for child processes.
PYTHON = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv" / "bin" / "python").exists() \
    else sys.executable


def die(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def require(path: Path, what: str) -> Path:
    if not path.exists():
        die(f"{what} not found at {path} (expected the shared data at ROOT/../shared/data)")
    return path


def ensure_mdn(mdn_dir: Path) -> Path:
    """The MDN vault root (mdn_dir/files), extracting the tarball there first if it is missing."""
    root = mdn_dir / "files"
    if root.is_dir() and any(root.iterdir()):
        return root
    require(MDN_TARBALL, "MDN tarball")
    staging = mdn_dir.with_name(mdn_dir.name + ".extracting")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    print(f"extracting {MDN_TARBALL.name} into {mdn_dir} …", file=sys.stderr, flush=True)
    started = time.perf_counter()
    with tarfile.open(MDN_TARBALL) as tar:
        tar.extractall(staging, filter="data")
    if mdn_dir.exists():
        shutil.rmtree(mdn_dir)
    staging.rename(mdn_dir)
    print(f"extracted in {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)
    return root


def writable_copy(src: Path, dst: Path) -> Path:
    """Copy a (possibly read-only) folder tree to dst with writable permissions."""
    if dst.exists():
        shutil.rmtree(dst)
    for folder, _dirs, files in os.walk(src):
        rel = os.path.relpath(folder, src)
        target = dst / rel if rel != "." else dst
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            shutil.copyfile(os.path.join(folder, name), target / name)
    return dst


def md_files(root: Path) -> list[str]:
    """Every .md file under root (dot-folders excluded, as vaultmem does), sorted."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        out.extend(os.path.join(folder, f) for f in files if f.lower().endswith(".md"))
    out.sort()
    return out


def run_child(args: list[str], cwd: Path = ROOT) -> dict:
    """Run a child process; return its JSON (last stdout line) plus wall seconds and peak RSS MB.

    Peak RSS comes from wait4() on that very child, so it is per run (not a running maximum).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(args, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if code != 0:
        die(f"child {' '.join(args[1:4])}… failed ({code}):\n{stderr[-3000:]}")
    data = json.loads(stdout.strip().splitlines()[-1])
    data["wall_s"] = wall
    data["peak_rss_mb"] = usage.ru_maxrss / 1024  # Linux: KiB
    return data


def median(values: list[float]) -> float:
    return statistics.median(values)


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[k]


def machine_info() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    out = subprocess.run(
        [PYTHON, "-c",
         "import sys, sqlean; print(sys.version.split()[0]); print(sqlean.sqlite_version)"],
        capture_output=True, text=True, check=False,
    ).stdout.split()
    return {
        "nproc": os.cpu_count(),
        "affinity_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu": cpu,
        "ram_gb": ram_gb,
        "python": out[0] if out else platform.python_version(),
        "sqlite": out[1] if len(out) > 1 else None,
        "platform": platform.platform(),
    }


def code_state() -> dict:
    """The vaultmem code measured: HEAD, and a hash of any uncommitted change under vaultmem/."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=False).stdout
    diff = git("diff", "HEAD", "--", "vaultmem")
    return {
        "head": git("rev-parse", "--short", "HEAD").strip(),
        "vaultmem_dirty": bool(diff),
        "vaultmem_diff_sha1": hashlib.sha1(diff.encode()).hexdigest()[:12] if diff else None,
    }


def snapshot_code() -> dict:
    """Freeze a copy of vaultmem/ for this benchmark and put it first on the import path.

    Other engineers edit vaultmem/ while benchmarks run; without a snapshot, runs of one
    benchmark could measure different code. Child processes get it through PYTHONPATH (it
    wins over the editable install's finder, which sits at the end of sys.meta_path).
    Returns the code state, including a hash of the snapshotted sources.
    """
    import atexit

    state = code_state()
    snap = Path(tempfile.mkdtemp(prefix="code-", dir=_mkwork()))
    shutil.copytree(ROOT / "vaultmem", snap / "vaultmem",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    atexit.register(shutil.rmtree, snap, True)
    digest = hashlib.sha1()
    for path in sorted((snap / "vaultmem").rglob("*.py")):
        digest.update(path.relative_to(snap).as_posix().encode() + b"\0" + path.read_bytes())
    state["snapshot_sha1"] = digest.hexdigest()[:12]
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(snap), os.environ.get("PYTHONPATH", "")) if p)
    sys.path.insert(0, str(snap))
    for name in [m for m in sys.modules if m == "vaultmem" or m.startswith("vaultmem.")]:
        del sys.modules[name]
    return state


def base_code(ref: str) -> Path:
    """vaultmem/ as of git REF, extracted into a temporary folder (for PYTHONPATH), removed
    when this process ends."""
    import atexit

    folder = Path(tempfile.mkdtemp(prefix="base-", dir=_mkwork()))
    atexit.register(shutil.rmtree, folder, True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref, "vaultmem"], cwd=ROOT, capture_output=True,
        check=True,
    ).stdout
    archive_path = folder / "code.tar"
    archive_path.write_bytes(archive)
    with tarfile.open(archive_path) as tar:
        tar.extractall(folder, filter="data")
    archive_path.unlink()
    return folder


def _mkwork() -> Path:
    WORK.mkdir(parents=True, exist_ok=True)
    return WORK


def write_json(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
