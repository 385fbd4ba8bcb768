"""Which cells of a notebook a given cell needs: the names it reads, and the earlier cells that bind them.

Static analysis of the code cells (Python's ``ast``), used where only part of a notebook
is executed: the grader's fast mode (:mod:`booktools.grade`: an exercise cell and what it
needs) and the student executions (:mod:`booktools.execute`: the stubs and what they need,
the rest of the notebook reused from its chapter's execution). Imports neither rnnlib nor
Jupyter.
"""

from __future__ import annotations

import ast
import builtins
import symtable

import nbformat

#: Methods whose call on a name changes the object in place (a cell that calls one on a
#: name an exercise needs is run).
_MUTATORS = set(
    "append extend insert update setdefault pop remove clear add discard sort reverse"
    " set_default_dtype manual_seed seed seed_everything use_deterministic_algorithms"
    " set_num_threads load_state_dict register_buffer".split()
)
_BUILTINS = set(dir(builtins))


def parse_cell(source: str) -> ast.Module | None:
    """The syntax tree of a code cell, its ``%`` and ``!`` lines blanked; None if it does not parse."""
    code = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line
        for line in source.split("\n")
    )
    try:
        return ast.parse(code)
    except SyntaxError:
        return None


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _bound_and_used(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names a cell binds or changes at top level, and every name it reads (function bodies too)."""
    bound: set[str] = set()
    for stmt in tree.body:
        stack = [stmt]
        while (
            stack
        ):  # top-level statements and their blocks, not function or class bodies
            node = stack.pop()
            if isinstance(
                node,
                (
                    ast.FunctionDef,
                    ast.AsyncFunctionDef,
                    ast.ClassDef,
                ),
            ):
                bound.add(node.name)
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.name == "*":
                        bound.add("*")
                    else:
                        bound.add((alias.asname or alias.name).split(".")[0])
                continue
            if isinstance(node, ast.Name) and isinstance(
                node.ctx, (ast.Store, ast.Del)
            ):
                bound.add(node.id)
            if isinstance(
                node,
                (
                    ast.Assign,
                    ast.AugAssign,
                    ast.AnnAssign,
                    ast.Delete,
                ),
            ):
                targets = (
                    node.targets
                    if isinstance(node, (ast.Assign, ast.Delete))
                    else [node.target]
                )
                # x[0] = ..., x.attr = ...
                for target in targets:
                    for part in ast.walk(target):
                        if isinstance(part, (ast.Subscript, ast.Attribute)) and (
                            root := _root(part)
                        ):
                            bound.add(root)
            # x.append(...), w.mul_(2), torch.manual_seed(0)
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and (node.func.attr in _MUTATORS or node.func.attr.endswith("_"))
                and (root := _root(node.func.value))
            ):
                bound.add(root)
            stack.extend(ast.iter_child_nodes(node))
    return bound, _read_names(tree) - _BUILTINS


def _read_names(tree: ast.Module) -> set[str]:
    """Every global name a cell reads, in its function and class bodies too (``symtable``)."""

    def reads(table: symtable.SymbolTable) -> set[str]:
        top = table.get_type() == "module"
        names = {
            s.get_name()
            for s in table.get_symbols()
            if s.is_referenced() and (top or s.is_global())
        }
        for child in table.get_children():
            names |= reads(child)
        return names

    try:
        table = symtable.symtable(ast.unparse(tree), "<cell>", "exec")
    except SyntaxError:  # parses, but does not compile: it binds and reads nothing
        return set()
    return reads(table)


def _calls_checker(stmt: ast.stmt) -> bool:
    return any(
        isinstance(n, ast.Call)
        and (getattr(n.func, "attr", None) or getattr(n.func, "id", "")).startswith(
            "check_exercise_"
        )
        for n in ast.walk(stmt)
    )


def cut_after_checker(source: str) -> str:
    """``source`` up to the end of its last top-level statement that calls a checker."""
    tree = parse_cell(source)
    if tree is None:
        return source
    last = None
    for stmt in tree.body:
        if _calls_checker(stmt):
            last = stmt.end_lineno
    if last is None:
        return source
    return "\n".join(source.split("\n")[:last])


def drop_checker_calls(source: str) -> str:
    """``source`` without its top-level statements that call a checker, cut after the last of them.

    What the grader runs of a student's exercise cell: the definitions, not the
    student's own check (whose inputs are fixed and whose ``rnnlib`` the student's
    cells may have patched); the grader runs the exercise on fresh inputs after it.
    A statement that calls a checker inside a larger block (an ``if``, a loop) is
    dropped whole. A cell that does not parse is returned as it is.
    """
    tree = parse_cell(source)
    if tree is None:
        return source
    lines = source.split("\n")
    checks = [stmt for stmt in tree.body if _calls_checker(stmt)]
    if not checks:
        return source
    keep = lines[: checks[-1].end_lineno]
    for stmt in reversed(checks):
        keep[stmt.lineno - 1 : stmt.end_lineno] = []
    return "\n".join(keep)


def cells_to_run(nb: nbformat.NotebookNode, needed: set[int]) -> set[int]:
    """The code cells to execute so that the cells ``needed`` run as in the whole notebook.

    From each needed cell back: for every name it reads (in its function bodies
    too), the last earlier cell that binds or changes that name at top level
    (an assignment, a ``def``, an import, ``x[...] =``, an in-place method such as
    ``x.append`` or ``w.mul_``, a seed), and so on from those cells. Cells that
    import ``*`` are always run; a cell that does not parse binds nothing.
    """
    info: dict[int, tuple[set[str], set[str]]] = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tree = parse_cell(cell.source)
        info[index] = _bound_and_used(tree) if tree else (set(), set())
    run = set(needed) | {i for i, (b, _) in info.items() if "*" in b}
    todo = sorted(run)
    while todo:
        index = todo.pop()
        for name in info.get(index, (set(), set()))[1]:
            for earlier in range(index - 1, -1, -1):
                if name in info.get(earlier, (set(), set()))[0]:
                    if earlier not in run:
                        run.add(earlier)
                        todo.append(earlier)
                    break
    return run
