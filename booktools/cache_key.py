"""Invalidate the book's execution cache when rnnlib or the pinned requirements change.

jupyter-cache keys an executed notebook on the notebook's own code cells. A
chapter's outputs also depend on the rnnlib package it imports and on the
library versions, so ``make book`` runs this module first: it hashes
``rnnlib/**/*.py``, ``requirements.txt``, ``_config.yml``, the ``Makefile``
(which sets the execution environment), the claims registry ``chapters/claims.yml``
(a claim's default verdict is part of its chapter's output), the recorded runs
``chapters/records/*.json`` and the data files rnnlib ships (``rnnlib/_data/``: a
chapter shows them); when the hash
differs from the one stored beside the cache, it deletes the cache, the built
pages and the exported notebooks nbval compares with (``nbval/``) so that every
chapter is executed afresh.

Usage: ``python -m booktools.cache_key BUILD_DIR ...`` (``make cache-check`` passes
``_build`` and ``student/_build``).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
from pathlib import Path

from booktools.toc import ROOT


def source_hash(root: Path = ROOT) -> str:
    """SHA-256 over the files of the book in ``root`` whose change must re-execute every chapter."""
    digest = hashlib.sha256()
    files = (
        sorted((root / "rnnlib").rglob("*.py"))
        + sorted(p for p in (root / "rnnlib" / "_data").rglob("*") if p.is_file())
        + sorted((root / "chapters" / "records").glob("*.json"))
    ) + [
        root / name
        for name in (
            "requirements.txt",
            "_config.yml",
            "Makefile",
            "chapters/claims.yml",
        )
    ]
    for path in files:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def check(build_dir: str, root: Path = ROOT) -> None:
    """Clear ``build_dir`` (relative to the book's ``root``) of executions made with other sources."""
    build = Path(root) / build_dir
    stamp = build / ".rnnlib-cache-key"
    key = source_hash(root)
    if stamp.exists() and stamp.read_text().strip() == key:
        print(f"{build_dir}: execution cache is up to date with rnnlib/")
        return
    if build.exists():
        print(
            f"{build_dir}: rnnlib/ or the pins changed: clearing the execution cache and built pages"
        )
        for sub in (
            ".jupyter_cache",
            "jupyter_execute",
            "html",
            ".doctrees",
            "nbval",
        ):
            shutil.rmtree(build / sub, ignore_errors=True)
    build.mkdir(parents=True, exist_ok=True)
    stamp.write_text(key + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "build_dirs",
        nargs="*",
        default=["_build"],
        help="build folders (default: _build)",
    )
    for build_dir in parser.parse_args(argv).build_dirs:
        check(build_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
