"""Copy the browser assets the book serves itself (no CDN) from node_modules into _static/vendor.

The built HTML must work with no network: MathJax 3 comes from the npm package
``mathjax`` (pinned in package.json / package-lock.json and installed by
``make env`` with ``npm ci``). Only what the pages load is copied: the
``tex-chtml`` component, its fonts and its lazily loaded input/output/ui/a11y
modules. The ipywidgets embed manager (``@jupyter-widgets/html-manager``'s
``embed-amd.js`` with the Font Awesome fonts it loads from beside itself) and
RequireJS, which it needs, replace the CDN scripts myst-nb would add to pages with
widgets (``nb_ipywidgets_js`` in ``_config.yml``).

The files go to ``_extra/_vendor`` and reach the built book as ``_build/html/_vendor``
through Sphinx's ``html_extra_path``, not ``html_static_path``: Jupyter Book adds *every*
``.js``/``.css`` file under a static path as a ``<script>``/``<link>`` to every page, which
would load all MathJax components, RequireJS and the 3.6 MB widget manager on each page
(and RequireJS before other scripts). Pages load only what ``mathjax_path`` and
``nb_ipywidgets_js`` name.

Usage: ``python -m booktools.vendor_assets`` (run by ``make env``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from booktools.toc import ROOT

#: the book's own browser scripts, shipped in this package
ASSETS_DIR = Path(__file__).resolve().parent / "assets"
VENDOR = ROOT / "_extra" / "_vendor"

#: (source under node_modules, destination under _extra/_vendor[, patterns a folder copy skips])
ASSETS = [
    ("mathjax/es5/tex-chtml.js", "mathjax/tex-chtml.js"),
    ("mathjax/es5/input", "mathjax/input"),
    ("mathjax/es5/output", "mathjax/output"),
    ("mathjax/es5/ui", "mathjax/ui"),
    ("mathjax/es5/a11y", "mathjax/a11y"),
    ("requirejs/require.js", "requirejs/require.js"),
    (
        "@jupyter-widgets/html-manager/dist",
        "jupyter-widgets/html-manager",
        ("embed.js", "embed.js.*", "libembed-amd.js", "*.map"),
    ),
]

#: the book's own scripts, copied beside the vendored ones: (source under booktools/assets, destination)
LOCAL = [
    ("ipywidgets_offline.js", "jupyter-widgets/offline.js"),
]


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    modules = ROOT / "node_modules"
    missing = [src for src, *_ in ASSETS if not (modules / src).exists()]
    if missing:
        print(
            f"missing npm assets {missing}: run `npm ci` in {ROOT}",
            file=sys.stderr,
        )
        return 1
    for src, dst, *skip in ASSETS:
        target = VENDOR / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        if (modules / src).is_dir():
            ignore = shutil.ignore_patterns(*skip[0]) if skip else None
            shutil.copytree(
                modules / src,
                target,
                dirs_exist_ok=True,
                ignore=ignore,
            )
        else:
            shutil.copy2(modules / src, target)
    for src, dst in LOCAL:
        (VENDOR / dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ASSETS_DIR / src, VENDOR / dst)
    print(f"vendored {len(ASSETS)} asset groups into {VENDOR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
