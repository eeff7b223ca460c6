"""One measured step, run in its own process by bench/reindex.py; prints one JSON line.

    python bench/_worker.py floor    VAULT
    python bench/_worker.py walkstat VAULT
    python bench/_worker.py baseline VAULT DB
    python bench/_worker.py vaultmem VAULT INDEX
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

WIKI_RE = re.compile(r"\[\[([^\]]+)\]\]")
MD_LINK_RE = re.compile(r"\]\(([^)]+)\)")


def walk_md(root: str):
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.lower().endswith(".md"):
                yield os.path.join(folder, name)


def floor(root: str) -> dict:
    started = time.perf_counter()
    files = size = 0
    for path in walk_md(root):
        with open(path, "rb") as fh:
            size += len(fh.read())
        files += 1
    return {"files": files, "bytes": size, "seconds": time.perf_counter() - started}


def walkstat(root: str) -> dict:
    """A tight os.scandir walk + stat of every .md: what a no-op reindex that lists the tree
    and stats every note cannot go below (in Python)."""
    started = time.perf_counter()
    files = 0
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir():
                    stack.append(entry.path)
                elif entry.name.lower().endswith(".md"):
                    entry.stat()
                    files += 1
    return {"files": files, "seconds": time.perf_counter() - started}


def baseline(root: str, db: str) -> dict:
    """Read + regex link scan + one-transaction insert into a plain FTS5 table."""
    import sqlean as sqlite3

    started = time.perf_counter()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(
        "CREATE VIRTUAL TABLE docs USING fts5(path, body,"
        " tokenize = 'porter unicode61 remove_diacritics 2')"
    )
    files = links = 0
    conn.execute("BEGIN")
    for path in walk_md(root):
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8", errors="replace")
        links += len(WIKI_RE.findall(text)) + len(MD_LINK_RE.findall(text))
        conn.execute("INSERT INTO docs(path, body) VALUES (?, ?)",
                     (os.path.relpath(path, root), text))
        files += 1
    conn.execute("COMMIT")
    conn.close()
    return {"files": files, "links": links, "seconds": time.perf_counter() - started}


def vaultmem(root: str, index: str) -> dict:
    started = time.perf_counter()
    import vaultmem
    from vaultmem.vault import Vault

    imported = time.perf_counter()
    vault = Vault(Path(root), Path(index))
    # the figure is the text index alone ("no embeddings yet"): vectors are timed apart
    report = vault.reindex(full=False, embed=False)
    done = time.perf_counter()
    embed_s = None
    if os.environ.get("VAULTMEM_BENCH_EMBED") == "1":
        vectors = vault.reindex(embed=True).embeddings
        embed_s = vectors.seconds if vectors.embedded else None
    return {
        "embed_s": embed_s,
        "import_s": imported - started,
        "seconds": done - imported,
        "notes": report.notes,
        "attachments": report.attachments,
        "changed": report.changed,
        "links": report.links,
        "wanted": report.wanted,
        "skipped": report.skipped,
        "report_seconds": report.seconds,
        "module": vaultmem.__file__,
    }


def main() -> None:
    mode, *args = sys.argv[1:]
    modes = {"floor": floor, "walkstat": walkstat, "baseline": baseline, "vaultmem": vaultmem}
    result = modes[mode](*args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
