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

import nbformat

#: Methods whose call on a name changes the object in place (a cell that calls one on a
#: name an exercise needs is run).
_MUTATORS = {
    "append",
    "extend",
    "insert",
    "update",
    "setdefault",
    "pop",
    "remove",
    "clear",
    "add",
    "discard",
    "sort",
    "reverse",
    "set_default_dtype",
    "manual_seed",
    "seed",
    "seed_everything",
    "use_deterministic_algorithms",
    "set_num_threads",
    "load_state_dict",
    "register_buffer",
}
_BUILTINS = set(dir(builtins))


def _parse(source: str) -> ast.Module | None:
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
        while stack:  # top-level statements and their blocks, not function or class bodies
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
                        bound.add(
                            (alias.asname or alias.name).split(
                                "."
                            )[0]
                        )
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
                for target in targets:
                    for part in ast.walk(target):
                        if isinstance(
                            part, (ast.Subscript, ast.Attribute)
                        ) and (root := _root(part)):
                            bound.add(
                                root
                            )  # x[0] = ..., x.attr = ...
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and (
                    node.func.attr in _MUTATORS
                    or node.func.attr.endswith("_")
                )
                and (root := _root(node.func.value))
            ):
                bound.add(
                    root
                )  # x.append(...), w.mul_(2), torch.manual_seed(0)
            stack.extend(ast.iter_child_nodes(node))
    return bound, _free_names(tree, frozenset()) - _BUILTINS


def _stored(nodes: list[ast.AST]) -> set[str]:
    return {
        n.id
        for node in nodes
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _free_names(node: ast.AST, local: frozenset[str]) -> set[str]:
    """The names ``node`` reads that are not local to one of its functions or comprehensions."""
    out: set[str] = set()
    for child in ast.iter_child_nodes(node):
        if isinstance(
            child,
            (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda),
        ):
            args = child.args
            params = {
                a.arg
                for a in args.posonlyargs
                + args.args
                + args.kwonlyargs
            } | {a.arg for a in (args.vararg, args.kwarg) if a}
            body = (
                child.body
                if isinstance(child.body, list)
                else [child.body]
            )
            inner = frozenset(local | params | _stored(body))
            outer = [
                *getattr(child, "decorator_list", []),
                *args.defaults,
                *[d for d in args.kw_defaults if d is not None],
            ]
            for part in outer:
                out |= _free_names(
                    ast.Expression(part), local
                ) | _name_of(part, local)
            for stmt in body:
                out |= _free_names(stmt, inner) | _name_of(
                    stmt, inner
                )
        elif isinstance(
            child,
            (
                ast.ListComp,
                ast.SetComp,
                ast.GeneratorExp,
                ast.DictComp,
            ),
        ):
            targets = _stored([g.target for g in child.generators])
            out |= _free_names(child, frozenset(local | targets))
        else:
            out |= _name_of(child, local) | _free_names(
                child, local
            )
    return out


def _name_of(node: ast.AST, local: frozenset[str]) -> set[str]:
    if (
        isinstance(node, ast.Name)
        and isinstance(node.ctx, ast.Load)
        and node.id not in local
    ):
        return {node.id}
    return set()


def cut_after_checker(source: str) -> str:
    """``source`` up to the end of its last top-level statement that calls a checker."""
    tree = _parse(source)
    if tree is None:
        return source
    last = None
    for stmt in tree.body:
        if any(
            isinstance(n, ast.Call)
            and (
                getattr(n.func, "attr", None)
                or getattr(n.func, "id", "")
            ).startswith("check_exercise_")
            for n in ast.walk(stmt)
        ):
            last = stmt.end_lineno
    if last is None:
        return source
    return "\n".join(source.split("\n")[:last])


def cells_to_run(
    nb: nbformat.NotebookNode, needed: set[int]
) -> set[int]:
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
        tree = _parse(cell.source)
        info[index] = (
            _bound_and_used(tree) if tree else (set(), set())
        )
    run = set(needed) | {
        i for i, (b, _) in info.items() if "*" in b
    }
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
