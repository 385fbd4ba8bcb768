"""Measurement: the share of rnnlib's code lines that check arguments (issue 19).

A *code line* is a line of a ``.py`` file under ``rnnlib/`` that holds a token
other than a comment, and is not part of a docstring. A *validation line* is a
code line that belongs to one of:

* ``rnnlib/_validation.py`` (the whole module: checkers, constraint classes,
  the table ``PARAMS``, the decorator);
* a function named ``check_*``, ``_check*`` or ``_validate*`` (the exercise
  checkers of ``rnnlib/homework/`` excluded: they grade answers, they do not
  check arguments);
* an ``if`` statement whose body only raises ``TypeError`` or ``ValueError``
  (the whole statement, condition and message included);
* a statement whose value is a call of a ``check_*``/``_check*`` function
  (``x = check_tensor(x, "x", ndim=3)``, ``check_int(n, "n", minimum=1)``);
* a ``@validate_params(...)`` decorator.

This is the definition of the "validation line" in ``docs/measurements.md``
(1 December 2026). Usage: ``python benchmarks/validation_lines.py [--by-module]``
from the repository root; prints ``validation / code = share``.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "rnnlib"
_CHECK_NAME = re.compile(r"^(check_|_check|_validate)")
_SKIP = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
    tokenize.ENCODING,
}


def _docstring_lines(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        # a string expression statement anywhere in a body is a docstring (or an
        # attribute docstring): documentation, not code
        for stmt in body:
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                out.update(range(stmt.lineno, stmt.end_lineno + 1))
    return out


def code_lines(source: str, tree: ast.AST) -> set[int]:
    """The numbers of the lines that hold code (no comment-only, blank or docstring lines)."""
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in _SKIP:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines - _docstring_lines(tree)


def _span(node: ast.AST) -> set[int]:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return set(range(first, node.end_lineno + 1))


def _callee(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return ""


def _only_raises(body: list[ast.stmt]) -> bool:
    def is_raise(stmt: ast.stmt) -> bool:
        if not isinstance(stmt, ast.Raise) or stmt.exc is None:
            return False
        exc = stmt.exc
        name = _callee(exc) if isinstance(exc, ast.Call) else ""
        return name in ("TypeError", "ValueError")

    return bool(body) and all(is_raise(s) for s in body)


def validation_lines(tree: ast.AST, *, whole: bool, exercise: bool) -> set[int]:
    """The lines of the validation constructs of one module (before intersecting with code lines)."""
    if whole:
        return set(range(1, 10**7))
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if _CHECK_NAME.match(node.name) and not exercise:
                out |= _span(node)
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                name = (
                    target.attr
                    if isinstance(target, ast.Attribute)
                    else getattr(target, "id", "")
                )
                if name == "validate_params":
                    out |= set(range(dec.lineno, dec.end_lineno + 1))
        elif isinstance(node, ast.If):
            if _only_raises(node.body) and not node.orelse:
                out |= _span(node)
        elif isinstance(node, (ast.Expr, ast.Assign, ast.AnnAssign)):
            value = node.value
            if isinstance(value, ast.Call) and _CHECK_NAME.match(_callee(value)):
                out |= _span(node)
    return out


def measure(root: Path = ROOT) -> dict[str, tuple[int, int]]:
    """``module path -> (validation lines, code lines)`` for every module under ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        tree = ast.parse(source)
        rel = path.relative_to(root.parent).as_posix()
        code = code_lines(source, tree)
        valid = validation_lines(
            tree,
            whole=rel == "rnnlib/_validation.py",
            exercise=rel.startswith("rnnlib/homework/"),
        )
        out[rel] = (len(code & valid), len(code))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--by-module", action="store_true")
    args = parser.parse_args()
    table = measure()
    if args.by_module:
        for rel, (v, c) in sorted(table.items(), key=lambda kv: -kv[1][0]):
            if v:
                print(f"{v:5d} / {c:5d} = {v / c:6.1%}  {rel}")
    v = sum(v for v, _ in table.values())
    c = sum(c for _, c in table.values())
    print(f"validation lines / rnnlib code lines: {v:,} / {c:,} = {v / c:.1%}")


if __name__ == "__main__":
    main()
