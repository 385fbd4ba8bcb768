"""The import graph of ``rnnlib/`` and ``booktools/``: no circle, no private name across modules.

Read from the syntax tree (``ast``), so an import inside a function counts as
much as one at the top of a module: a circle hidden in a function body is still
a circle (the two modules cannot be read, or tested, one before the other).

The rule for private names (CONTRIBUTING.md, "Imports"):

* a name that starts with ``_`` belongs to the module that defines it; another
  module may not import it (make it public, or move it to a shared utility);
* a module whose own name starts with ``_`` (``rnnlib._validation``,
  ``rnnlib._rng``, ``rnnlib._linalg``, ``rnnlib.plotting._style``,
  ``rnnlib.homework._core``) is a package-internal utility: the modules of the
  package (and of its subpackages) may import any of its names, private ones
  included; code outside the package (``booktools``, the chapters) may not.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("rnnlib", "booktools")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """``dotted name -> path`` of every module of rnnlib and booktools (tests excluded)."""
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if "tests" in path.relative_to(ROOT).parts:
                continue
            out[_module_name(path)] = path
    return out


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = (
        module
        if path.name == "__init__.py"
        else module.rpartition(".")[0]
    )
    base = package.split(".")
    if node.level > 1:
        base = base[: -(node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(
    mods: dict[str, Path],
) -> list[tuple[str, str, str | None, int]]:
    """Every import between known modules: ``(importer, imported, name or None, line)``.

    ``from pkg import sub`` where ``sub`` is a module counts as an import of ``pkg.sub``.
    """
    out = []
    for module, path in mods.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in mods:
                        out.append(
                            (module, alias.name, None, node.lineno)
                        )
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(module, path, node)
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in mods:
                        out.append(
                            (module, sub, None, node.lineno)
                        )
                    elif target in mods:
                        out.append(
                            (
                                module,
                                target,
                                alias.name,
                                node.lineno,
                            )
                        )
    return out


def _internal_to(importer: str, utility: str) -> bool:
    """May ``importer`` use the private names of the underscore module ``utility``?"""
    package = utility.rpartition(".")[0]
    return importer == package or importer.startswith(
        package + "."
    )


def test_no_private_name_is_imported_across_modules():
    mods = modules()
    bad = []
    for importer, imported, name, line in imports(mods):
        if importer == imported:
            continue
        leaf = imported.rpartition(".")[2]
        if leaf.startswith("_") and leaf != "__init__":
            if not _internal_to(importer, imported):
                bad.append(
                    f"{mods[importer].relative_to(ROOT)}:{line}: imports {imported}, "
                    f"a utility internal to {imported.rpartition('.')[0]}"
                )
            continue
        if (
            name
            and name.startswith("_")
            and not name.startswith("__")
            and not importer.startswith("rnnlib.homework.")
        ):
            bad.append(
                f"{mods[importer].relative_to(ROOT)}:{line}: imports the private name "
                f"{imported}.{name} (make it public or move it to an underscore utility)"
            )
    assert not bad, "\n".join(bad)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle():
    """Module-level and function-level imports both count; a package importing its own
    submodules (``rnnlib/__init__.py`` re-exporting) is not a circle unless a submodule
    imports the package back."""
    mods = modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for importer, imported, _, _ in imports(mods):
        if importer != imported:
            graph[importer].add(imported)
    circles = _cycles(graph)
    lines = []
    for comp in circles:
        edges = [
            f"{a} -> {b}"
            for a in comp
            for b in sorted(graph[a])
            if b in comp
        ]
        lines.append("circle: " + ", ".join(edges))
    assert not circles, "\n".join(lines)


def test_the_scan_sees_imports_inside_functions():
    """The scan is not vacuous: it finds the edges it should (one module-level, one in a function)."""
    mods = modules()
    edges = {(a, b) for a, b, _, _ in imports(mods)}
    assert ("rnnlib.pseudo", "rnnlib.elman") in edges
    assert ("booktools.ledger", "rnnlib.claims") in edges
    assert len(edges) > 50
