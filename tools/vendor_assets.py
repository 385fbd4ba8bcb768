"""Copy the browser assets the book serves itself (no CDN) from node_modules into _static/vendor.

The built HTML must work with no network: MathJax 3 comes from the npm package
``mathjax`` (pinned in package.json / package-lock.json and installed by
``make env`` with ``npm ci``). Only what the pages load is copied: the
``tex-chtml`` component, its fonts and its lazily loaded input/output/ui/a11y
modules.

Usage: ``python tools/vendor_assets.py`` (run by the Makefile).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "_static" / "vendor"

#: (source under node_modules, destination under _static/vendor)
ASSETS = [
    ("mathjax/es5/tex-chtml.js", "mathjax/tex-chtml.js"),
    ("mathjax/es5/input", "mathjax/input"),
    ("mathjax/es5/output", "mathjax/output"),
    ("mathjax/es5/ui", "mathjax/ui"),
    ("mathjax/es5/a11y", "mathjax/a11y"),
]


def main() -> int:
    modules = ROOT / "node_modules"
    missing = [src for src, _ in ASSETS if not (modules / src).exists()]
    if missing:
        print(f"missing npm assets {missing}: run `npm ci` in {ROOT}", file=sys.stderr)
        return 1
    for src, dst in ASSETS:
        target = VENDOR / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        if (modules / src).is_dir():
            shutil.copytree(modules / src, target, dirs_exist_ok=True)
        else:
            shutil.copy2(modules / src, target)
    print(f"vendored {len(ASSETS)} asset groups into {VENDOR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
