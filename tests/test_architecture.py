"""The import graph of ``rnnlib/`` and ``booktools/``: no circle, no private name across modules.

Read from the syntax tree (``ast``), so an import inside a function counts as
much as one at the top of a module: a circle hidden in a function body is still
a circle (the two modules cannot be read, or tested, one before the other).

The rule for private names (CONTRIBUTING.md, "Modules and imports"):

* a name that starts with ``_`` belongs to the module that defines it; another
  module may not import it (make it public, or move it to a shared utility);
* a module whose own name starts with ``_`` (``rnnlib._validation``,
  ``rnnlib._rng``, ``rnnlib._linalg``, ``rnnlib.plotting._style``,
  ``rnnlib.homework._core``) is a package-internal utility: the modules of the
  package (and of its subpackages) may import any of its names, private ones
  included; code outside the package (``booktools``, the chapters) may not;
* the exercise checkers (``rnnlib.homework``) may import the private kernel that
  they seal while a student's function runs (``elman._elman_scan``).
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
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
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
                        out.append((module, alias.name, None, node.lineno))
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(module, path, node)
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in mods:
                        out.append((module, sub, None, node.lineno))
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
    return importer == package or importer.startswith(package + ".")


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
        edges = [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]
        lines.append("circle: " + ", ".join(edges))
    assert not circles, "\n".join(lines)


def test_the_scan_sees_imports_inside_functions():
    """The scan is not vacuous: it finds the edges it should (one module-level, one in a function)."""
    mods = modules()
    edges = {(a, b) for a, b, _, _ in imports(mods)}
    assert ("rnnlib.pseudo", "rnnlib.elman") in edges
    assert ("booktools.ledger", "rnnlib.claims") in edges
    assert len(edges) > 50


#: The machinery's shared modules (ARCHITECTURE.md, "booktools, module by module"): where
#: the book's sources are, what their markup means, what their executions left (and what
#: running them needs), and the grader's cell graph. Every other module of booktools is a
#: tool (a command, a Sphinx extension), and a tool imports only these.
BOOKTOOLS_HUBS = (
    "booktools.toc",
    "booktools.markup",
    "booktools.records",
    "booktools.cell_deps",
)


def test_booktools_is_a_star_no_tool_imports_another_tool():
    """A booktools tool imports only the shared modules; a shared module imports only the
    shared modules before it in :data:`BOOKTOOLS_HUBS` (no hub reaches back to a tool)."""
    mods = modules()
    bad = []
    for importer, imported, name, line in imports(mods):
        if not (importer.startswith("booktools.") and imported.startswith("booktools")):
            continue
        if importer == imported or imported == "booktools":
            continue
        where = f"{mods[importer].relative_to(ROOT)}:{line}"
        if importer in BOOKTOOLS_HUBS:
            allowed = BOOKTOOLS_HUBS[: BOOKTOOLS_HUBS.index(importer)]
            if imported not in allowed:
                bad.append(f"{where}: the shared module {importer} imports {imported}")
        elif imported not in BOOKTOOLS_HUBS:
            what = f"{imported}.{name}" if name else imported
            bad.append(
                f"{where}: the tool {importer} imports the tool {what} (move what both "
                f"need into one of {', '.join(BOOKTOOLS_HUBS)}, or run the other tool "
                "as a command)"
            )
    assert not bad, "\n".join(bad)


def test_the_star_check_sees_the_hub_edges():
    """Not vacuous: the tools' imports of the shared modules are seen."""
    edges = {(a, b) for a, b, _, _ in imports(modules())}
    assert ("booktools.student_edition", "booktools.markup") in edges
    assert ("booktools.exec_times", "booktools.records") in edges
    assert ("booktools.nbval_notebooks", "booktools.records") in edges
    assert ("booktools.sphinx_ext.plaintext_docstrings", "booktools.markup") in edges


# --- the written map: ARCHITECTURE.md's module tables match the packages -------------------------

ARCHITECTURE = ROOT / "ARCHITECTURE.md"


def _table_modules(heading: str) -> list[str]:
    """The first-column entries (in backticks) of the table under ``## heading`` / ``### heading``."""
    text = ARCHITECTURE.read_text()
    lines = text.split("\n")
    start = next(
        i
        for i, line in enumerate(lines)
        if line.lstrip("#").strip() == heading and line.startswith("#")
    )
    out = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("| `"):
            out.append(line.split("`")[1])
    return out


def _package_units(pkg: str) -> set[str]:
    """What a map row names: a module ``name`` (``sub.name`` inside a subpackage that
    has no ``__init__`` of its own to list) or a subpackage ``name/``."""
    base = ROOT / pkg
    units = set()
    for path in sorted(base.iterdir()):
        if path.name.startswith((".", "__")) or path.name == "tests":
            continue
        if path.suffix == ".py":
            units.add(path.stem)
        elif (path / "__init__.py").exists():
            if pkg == "booktools":  # machinery: one row per module of a subpackage
                units |= {
                    f"{path.name}.{p.stem}"
                    for p in sorted(path.glob("*.py"))
                    if p.name != "__init__.py"
                }
            else:  # rnnlib: one row per subpackage (plotting/, homework/, claims/, ...)
                units.add(f"{path.name}/")
    return units


def _row_hint(pkg: str, unit: str) -> str:
    if pkg == "rnnlib":
        return f"| `{unit}` | <what it holds> | <chapters> |"
    return f"| `{unit}` | <what it does> | <which make target or test runs it> |"


def test_every_module_is_on_the_map_and_every_row_exists():
    """ARCHITECTURE.md lists each module of rnnlib/ and booktools/ once, and nothing else."""
    problems = []
    for pkg, heading in (
        ("rnnlib", "rnnlib, module by module"),
        ("booktools", "booktools, module by module"),
    ):
        named = _table_modules(heading)
        units = _package_units(pkg)
        for unit in sorted(units - set(named)):
            problems.append(
                f"{pkg}/{unit.rstrip('/').replace('.', '/')} is not in ARCHITECTURE.md's table "
                f"'{heading}': add the row  {_row_hint(pkg, unit)}"
            )
        for unit in sorted(set(named) - units):
            problems.append(
                f"ARCHITECTURE.md's table '{heading}' names `{unit}`, which is not a module of "
                f"{pkg}/: delete or rename its row"
            )
        dup = sorted({u for u in named if named.count(u) > 1})
        if dup:
            problems.append(f"'{heading}' lists {dup} more than once")
    assert not problems, "\n".join(problems)


def test_the_map_carries_no_dated_measurements():
    """Measured, dated figures live in docs/measurements.md, not in the map."""
    import re

    text = ARCHITECTURE.read_text()
    dated = re.findall(
        r"\b\d{1,2} (?:January|February|March|April|May|June|July|August|September|"
        r"October|November|December) 20\d\d\b",
        text,
    )
    assert not dated, (
        f"ARCHITECTURE.md carries dated figures ({dated}); move them to docs/measurements.md"
    )


# --- one copy of each helper: no function body defined twice in rnnlib ---------------------------

#: Copies known and not yet merged: ``name -> why it is still listed`` (none left).
KNOWN_COPIES: dict[str, str] = {
    "main": "the `python -m` entry point of each record command (rnnlib.records.record_cli)",
}


def _body_key(fn: ast.FunctionDef) -> str:
    """The function's body without its docstring, as a syntax tree dump."""
    body = fn.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return ast.dump(ast.Module(body=body, type_ignores=[]))


def function_copies(sources: dict[str, str]) -> list[list[str]]:
    """Groups ``module:name`` of module-level functions defined in two or more modules
    under the same name, or with the same body under any names."""
    by_name: dict[str, list[str]] = {}
    by_body: dict[str, list[str]] = {}
    for module, source in sources.items():
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef):
                where = f"{module}:{node.name}"
                by_name.setdefault(node.name, []).append(where)
                by_body.setdefault(_body_key(node), []).append(where)
    groups = {
        tuple(sorted(g))
        for g in [*by_name.values(), *by_body.values()]
        if len({w.partition(":")[0] for w in g}) > 1
    }
    return [list(g) for g in sorted(groups)]


def test_no_helper_is_defined_twice():
    """A helper two modules need lives once, public (or in an underscore utility) in the lower module."""
    sources = {m: p.read_text() for m, p in modules().items() if m.startswith("rnnlib")}
    bad = [
        g
        for g in function_copies(sources)
        if not {w.partition(":")[2] for w in g} <= set(KNOWN_COPIES)
    ]
    assert not bad, "functions defined in two modules of rnnlib:\n  " + (
        "\n  ".join(", ".join(g) for g in bad)
    )


def test_the_copy_scan_finds_copies():
    same_body = "def _a(z):\n    return (z == 1).sum(dim=1)\n"
    found = function_copies(
        {
            "m1": same_body,
            "m2": same_body.replace("_a", "_b"),
            "m3": "def _c(x):\n    return x\n",
            "m4": "def _c(y):\n    '''doc'''\n    return y + 1\n",
            "m5": "def _d(x):\n    return x * 2\n",
        }
    )
    assert found == [["m1:_a", "m2:_b"], ["m3:_c", "m4:_c"]], found


# --- private methods stay in their module ----------------------------------------------------------


def private_method_calls(
    sources: dict[str, str],
) -> list[str]:
    """``module: obj._name`` where ``obj`` is not ``self``/``cls`` and ``_name`` is a private
    method of a class defined in another module only (a private name used across modules,
    which the import rule does not see)."""
    trees = {m: ast.parse(s) for m, s in sources.items()}
    defined: dict[str, set[str]] = {}
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if (
                        isinstance(item, ast.FunctionDef)
                        and item.name.startswith("_")
                        and not item.name.startswith("__")
                    ):
                        defined.setdefault(item.name, set()).add(module)
    out = []
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in defined
                and module not in defined[node.attr]
                and not (
                    isinstance(node.value, ast.Name)
                    and node.value.id in ("self", "cls")
                )
            ):
                out.append(
                    f"{module}:{node.lineno}: {ast.unparse(node)} "
                    f"(defined in {', '.join(sorted(defined[node.attr]))})"
                )
    return out


def test_no_private_method_is_called_from_another_module():
    sources = {m: p.read_text() for m, p in modules().items() if m.startswith("rnnlib")}
    bad = private_method_calls(sources)
    assert not bad, (
        "private methods used outside their module (give them a public name):\n  "
        + "\n  ".join(bad)
    )


def test_the_private_method_scan_finds_calls():
    found = private_method_calls(
        {
            "a": "class M:\n    def _check(self, x):\n        return self._check(x)\n",
            "b": "def f(model, x):\n    return model._check(x)\n",
            "c": "def g(model):\n    return model.check(1)\n",
        }
    )
    assert len(found) == 1 and found[0].startswith("b:2: model._check"), found


def test_the_shifted_states_are_computed_in_one_place():
    """``h^(l-1)`` from ``h^(1..L)`` (a zero state, then all but the last) is one kernel,
    ``rnnlib._recurrence.previous_states``: an inline copy of the expression elsewhere in
    rnnlib fails (the copy scan above sees functions, not expressions)."""
    import re

    shift = re.compile(
        r"torch\.cat\(\s*\[\s*torch\.zeros_like\((\w+)\[:, :1\]\),\s*\1\[:, :-1\]\s*\]"
    )
    found = [
        m
        for m, p in modules().items()
        if m.startswith("rnnlib")
        and m != "rnnlib._recurrence"
        and shift.search(p.read_text())
    ]
    assert not found, f"inline copies of previous_states in {found}"
    assert shift.search(
        "h0 = torch.cat([torch.zeros_like(s[:, :1]), s[:, :-1]], dim=1)"
    ), "the pattern no longer matches the expression it looks for"
    assert shift.search((ROOT / "rnnlib" / "_recurrence.py").read_text())
