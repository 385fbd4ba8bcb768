"""Invalidate the book's execution cache when rnnlib or the pinned requirements change.

jupyter-cache keys an executed notebook on the notebook's own code cells. A
chapter's outputs also depend on the rnnlib package it imports and on the
library versions, so ``make book`` runs this script first: it hashes
``rnnlib/**/*.py``, ``requirements.txt``, ``_config.yml`` and the ``Makefile``
(which sets the execution environment); when the hash
differs from the one stored beside the cache, it deletes the cache (and the
built pages) so that every chapter is executed afresh.

Usage: ``python tools/cache_key.py BUILD_DIR``
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def source_hash() -> str:
    """SHA-256 over the files whose change must re-execute every chapter."""
    digest = hashlib.sha256()
    files = sorted((ROOT / "rnnlib").rglob("*.py")) + [ROOT / name for name in ("requirements.txt", "_config.yml", "Makefile")]
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def main(build_dir: str) -> None:
    build = ROOT / build_dir
    stamp = build / ".rnnlib-cache-key"
    key = source_hash()
    if stamp.exists() and stamp.read_text().strip() == key:
        print("execution cache is up to date with rnnlib/")
        return
    if build.exists():
        print("rnnlib/ or the pins changed: clearing the execution cache and built pages")
        for sub in (".jupyter_cache", "jupyter_execute", "html", ".doctrees"):
            shutil.rmtree(build / sub, ignore_errors=True)
    build.mkdir(parents=True, exist_ok=True)
    stamp.write_text(key + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "_build")
