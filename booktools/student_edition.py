"""Generate the student edition of the book from the chapters as written.

The chapters in ``chapters/`` are the instructor edition and the one source of
truth. The student edition is derived from them (CONTRIBUTING.md, "Exercises").

:func:`booktools.markup.student_notebook` writes each chapter's student notebook
(stubs for the solution blocks, the solution prose removed, an answer cell after each
prose exercise; its docstring states the rules). This module assembles the edition:
the notebooks, the book's other sources, its ``_config.yml`` and ``_toc.yml``, and an
install cell at the top of each notebook.

Usage (the Makefile's ``student-notebooks`` target)::

    python -m booktools.student_edition             # notebooks + book sources into student/
    python -m booktools.student_edition --out DIR   # somewhere else
    python -m booktools.student_edition --list      # the exercises of every chapter (markdown rows)

``make student`` then executes the student notebooks once (``booktools.execute``) and
builds their HTML from that execution with ``jupyter-book build student``.

This module imports neither rnnlib nor torch: it only reads and writes notebooks.
"""

from __future__ import annotations

import argparse
import copy
import shutil
import sys
from pathlib import Path

import nbformat
import yaml

from booktools.markup import (
    INSTALL_KEY,
    MarkupError,
    count_stubs,
    find_exercises,
    student_notebook,
)
from booktools.toc import (
    ROOT,
    chapter_notebooks,
    pages,
    read_toc,
    without,
)

#: Pages of the instructor edition that the student edition leaves out.
INSTRUCTOR_ONLY = ("chapters/instructor_guide",)


def student_config(config: dict, repository_url: str | None = None) -> dict:
    """The ``_config.yml`` of the student edition, derived from the book's.

    The title says "student edition"; the launch and repository buttons point at
    ``repository_url`` (a repository that hosts the student edition) or, without
    one, are switched off (the chapter notebooks of the main repository hold the
    solutions). Students download a page's notebook with the download button.
    """
    cfg = copy.deepcopy(config)
    # read by booktools.student_edition, not the build
    cfg.pop("student_edition", None)
    cfg["title"] = f"{config.get('title', 'Book')} (student edition)"
    cfg["exclude_patterns"] = [
        p for p in cfg.get("exclude_patterns", []) if p != "student"
    ]
    html = cfg.setdefault("html", {})
    if repository_url:
        cfg.setdefault("repository", {})["url"] = repository_url
        cfg["repository"]["path_to_book"] = ""
        # the book's own are off (its chapters hold the solutions): on here
        cfg["launch_buttons"] = {
            "notebook_interface": "jupyterlab",
            "binderhub_url": "https://mybinder.org",
            "colab_url": "https://colab.research.google.com",
        }
    else:
        cfg.pop("repository", None)
        cfg["launch_buttons"] = {
            "binderhub_url": "",
            "colab_url": "",
            "notebook_interface": "classic",
        }
        html["use_repository_button"] = False
    html["use_issues_button"] = False
    html["use_edit_page_button"] = False
    return cfg


def install_source(url: str, branch: str = "main") -> str:
    """The install cell's code: the book's package from ``url`` (at ``branch``), where it is missing.

    Colab (or any Python without rnnlib) installs it with its run-time dependencies
    (pyproject.toml); where rnnlib is installed (the course environment, Binder) the cell
    does nothing.
    """
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise ValueError(
            f"url: the repository URL must be http(s), got {url!r} (repository.url in _config.yml)"
        )
    return (
        "# Colab, or any Python without the book's library: install it first.\n"
        "try:\n"
        "    import rnnlib  # noqa: F401\n"
        "except ImportError:\n"
        "    get_ipython().run_line_magic(\n"
        '        "pip",\n'
        f"        \"install --quiet 'rnnlib @ git+{url}@{branch}'\",\n"
        "    )"
    )


def add_install_cell(
    nb: nbformat.NotebookNode, url: str, branch: str = "main"
) -> nbformat.NotebookNode:
    """Put the install cell (:func:`install_source`) before the first code cell of ``nb``."""
    cell = nbformat.v4.new_code_cell(install_source(url, branch))
    cell["id"] = "rnnlib-install"
    cell.metadata[INSTALL_KEY] = True
    # the student book does not show it
    cell.metadata["tags"] = ["remove-cell"]
    nb.cells = [c for c in nb.cells if not c.metadata.get(INSTALL_KEY)]
    first_code = next(
        (i for i, c in enumerate(nb.cells) if c.cell_type == "code"),
        len(nb.cells),
    )
    nb.cells.insert(first_code, cell)
    return nb


def student_repository_url(config: dict) -> str | None:
    """``student_edition.repository_url`` of ``_config.yml``: the repository hosting the student edition, or None.

    The one setting that turns on the student edition's launch buttons (Binder,
    Colab) and its Binder ``environment.yml`` (README.md, "Launch buttons"); empty
    or absent: no buttons.
    """
    value = (config.get("student_edition") or {}).get("repository_url")
    if value in (None, ""):
        return None
    if not isinstance(value, str) or not value.startswith(("https://", "http://")):
        raise ValueError(
            f"student_edition.repository_url in _config.yml must be an http(s) URL or empty, got {value!r}"
        )
    return value


def build_student_edition(
    root: Path = ROOT,
    out: Path | None = None,
    repository_url: str | None = None,
) -> list[Path]:
    """Write the student edition of the book under ``out`` (default ``root/student``).

    ``repository_url``: the repository hosting the student edition (its launch
    buttons); by default ``student_edition.repository_url`` of ``_config.yml``
    (:func:`student_repository_url`).

    Writes one student notebook per chapter notebook of ``_toc.yml``, copies its markdown pages,
    ``references.bib`` and the folders the configuration names (``_static/``,
    ``html_static_path``, ``html_extra_path``),
    and derives ``_config.yml`` and ``_toc.yml`` (without the instructor-only
    pages). The files in ``out/chapters`` are replaced (it is generated; a
    chapter deleted from the book disappears from it). Returns the notebooks written.
    """
    root = Path(root)
    out = Path(out) if out is not None else root / "student"
    toc = read_toc(root)
    if out.resolve() == root.resolve():
        raise ValueError(
            "out: the student edition must not overwrite the book's own root"
        )
    (out / "chapters").mkdir(parents=True, exist_ok=True)
    for old in (out / "chapters").glob("*"):
        if old.is_file():
            old.unlink()
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    if repository_url is None:  # the one setting: student_edition.repository_url
        repository_url = student_repository_url(config)
    written = []
    for path in chapter_notebooks(root):
        target = out / "chapters" / path.name
        nb = student_notebook(path)
        if repository_url:  # the student repository hosts the package too
            add_install_cell(nb, repository_url, "main")
        nbformat.write(nb, target)
        written.append(target)
    for page in pages(root):
        rel = page.relative_to(root)
        if (
            page.suffix == ".md"
            and rel.with_suffix("").as_posix() not in INSTRUCTOR_ONLY
        ):
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(page, out / rel)
    for name in ("references.bib",):
        if (root / name).exists():
            shutil.copy2(root / name, out / name)
    sphinx = config.get("sphinx") or {}
    sphinx_config = sphinx.get("config") or {}
    asset_dirs = {
        "_static",
        *sphinx_config.get("html_static_path", []),
        *sphinx_config.get("html_extra_path", []),
    }
    for name in sorted(
        asset_dirs
    ):  # static files, vendored assets (MathJax, widget manager)
        if (root / name).is_dir():
            shutil.copytree(root / name, out / name, dirs_exist_ok=True)

    def write_yaml(name: str, data: dict) -> None:
        (out / name).write_text(
            f"# Generated by booktools.student_edition from the book's {name}: "
            "do not edit, edit the original.\n" + yaml.safe_dump(data, sort_keys=False),
            encoding="utf-8",
        )

    write_yaml("_config.yml", student_config(config, repository_url))
    if repository_url:  # Binder on the student repository (write_student_repository)
        shutil.copy2(root / "environment.yml", out / "environment.yml")
    write_yaml("_toc.yml", without(toc, INSTRUCTOR_ONLY))
    return written


def write_student_repository(
    out: Path,
    root: Path = ROOT,
    portable: Path | None = None,
) -> list[Path]:
    """Write the folder to publish at ``student_edition.repository_url``: what the launch buttons open.

    The student edition's launch buttons (Binder, Colab) open
    ``<repository_url>/blob/main/chapters/NN.ipynb``, and its install cells run
    ``pip install "rnnlib @ git+<repository_url>@main"``. So the repository holds,
    at those paths: ``chapters/NN.ipynb``, the *portable* student notebooks
    (``make portable``: plain Markdown, read by any front end), the package
    (``rnnlib/``, ``pyproject.toml``, ``requirements.txt``, the licence), Binder's
    ``environment.yml`` (which installs the package from the repository itself) and
    a README. No solution is in it: the notebooks are the student edition's.
    Returns the files written.
    """
    out, root = Path(out), Path(root)
    portable = Path(portable) if portable is not None else root / "portable" / "student"
    notebooks = [portable / path.name for path in chapter_notebooks(root)]
    missing = [nb.name for nb in notebooks if not nb.is_file()]
    if missing:
        raise FileNotFoundError(
            f"portable: no portable student notebook {missing[0]} in {str(portable)!r} "
            f"({len(missing)} of {len(notebooks)} missing; run `make portable` first)"
        )
    if out.resolve() == root.resolve() or root.resolve().is_relative_to(out.resolve()):
        raise ValueError(f"out: {str(out)!r} would overwrite the book's own files")
    if out.exists() and any(out.iterdir()):
        if not ((out / "chapters").is_dir() and (out / "rnnlib").is_dir()):
            raise ValueError(
                f"out: {str(out)!r} exists and is not a student repository written before; "
                "name a new or empty folder"
            )
        shutil.rmtree(out)
    (out / "chapters").mkdir(parents=True)
    written = []
    for nb in notebooks:
        shutil.copy2(nb, out / "chapters" / nb.name)
        written.append(out / "chapters" / nb.name)
    shutil.copytree(
        root / "rnnlib",
        out / "rnnlib",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    for name in (
        "pyproject.toml",
        "requirements.txt",
        "environment.yml",
        "LICENSE",
    ):
        if (root / name).is_file():
            shutil.copy2(root / name, out / name)
            written.append(out / name)
    (out / "README.md").write_text(
        "# Student edition: the notebooks\n\n"
        "The chapters of the course as notebooks that read in any front end (Colab, Binder,\n"
        "VS Code, Jupyter), with the exercises to solve. Each notebook installs the course's\n"
        "package (`rnnlib`, in this repository) in its first cell where it is missing.\n"
        "Locally: `pip install -e .` then open `chapters/`.\n",
        encoding="utf-8",
    )
    written.append(out / "README.md")
    return written


def exercise_rows(root: Path = ROOT) -> list[str]:
    """One markdown table row ``| N.M | title | kind | checker | |`` per exercise of every chapter."""
    rows = []
    for path in chapter_notebooks(root):
        for ex in find_exercises(path):
            title = ex.title.split("·", 1)[-1].strip() if "·" in ex.title else ex.title
            checker = (
                ", ".join(
                    f"`check_exercise_{n.replace('.', '_')}`" for n in ex.checkers
                )
                or "by hand"
            )
            rows.append(
                f"| {ex.number} | {path.stem} | {title} | {ex.kind} | {checker} | ? |"
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the book's root (default: this repository)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write the edition (default: ROOT/student)",
    )
    parser.add_argument(
        "--repository-url",
        default=None,
        help="a repository hosting the student edition (launch buttons); "
        "default: student_edition.repository_url of _config.yml",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="print the exercises of every chapter and exit",
    )
    parser.add_argument(
        "--repository-folder",
        type=Path,
        default=None,
        help="write the folder to publish at student_edition.repository_url "
        "(portable notebooks and the package; make portable first) and exit",
    )
    args = parser.parse_args(argv)
    try:
        if args.list:
            print("\n".join(exercise_rows(args.root)))
            return 0
        if args.repository_folder:
            files = write_student_repository(args.repository_folder, args.root)
            print(
                f"wrote {len(files)} files and the package to {args.repository_folder}: "
                "publish it at student_edition.repository_url"
            )
            return 0
        written = build_student_edition(args.root, args.out, args.repository_url)
    except (MarkupError, FileNotFoundError, ValueError) as exc:
        print(f"student_edition: {exc}", file=sys.stderr)
        return 2
    for path in written:
        stubs = sum(
            count_stubs(c.source)
            for c in nbformat.read(path, as_version=4).cells
            if c.cell_type == "code"
        )
        print(f"wrote {path} ({stubs} stub{'s' if stubs != 1 else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
