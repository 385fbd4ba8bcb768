"""No public rnnlib function returns a bare tuple: a multi-value result is a NamedTuple.

A NamedTuple unpacks like the tuple it replaces (``x, y = sample_task(...)`` in
the chapters keeps working) and names its fields for a reader who keeps the
result whole (``res.f_eval``). Read from the syntax tree (``ast``), like
``tests/test_architecture.py``: a public function is a module-level function,
or a method of a module-level class, whose name and class name do not start
with ``_``, in any module of ``rnnlib/`` (underscore modules included: their
public names are re-exported). It is flagged when

* its return annotation is a bare tuple (``tuple[...]``, ``Tuple[...]``,
  ``tuple``), alone or in a union, or
* one of its own ``return`` statements (not those of a nested function) returns
  a tuple display (``return a, b``): a NamedTuple result is built by its class.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TUPLE_NAMES = {"tuple", "Tuple"}


def _is_bare_tuple(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(
        annotation.value, str
    ):  # a string annotation: parse it
        return _is_bare_tuple(ast.parse(annotation.value, mode="eval").body)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _is_bare_tuple(annotation.left) or _is_bare_tuple(annotation.right)
    node = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    if isinstance(node, ast.Attribute):  # typing.Tuple
        return node.attr in TUPLE_NAMES
    return isinstance(node, ast.Name) and node.id in TUPLE_NAMES


def _own_returns(fn: ast.FunctionDef) -> list[ast.Return]:
    """The ``return`` statements of ``fn`` itself, not of functions or classes nested in it."""
    out: list[ast.Return] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(
                child,
                (
                    ast.FunctionDef,
                    ast.AsyncFunctionDef,
                    ast.Lambda,
                    ast.ClassDef,
                ),
            ):
                continue
            if isinstance(child, ast.Return):
                out.append(child)
            visit(child)

    visit(fn)
    return out


def _public_functions(tree: ast.Module):
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not node.name.startswith("_"):
                yield node.name, node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for sub in node.body:
                if isinstance(
                    sub, (ast.FunctionDef, ast.AsyncFunctionDef)
                ) and not sub.name.startswith("_"):
                    yield f"{node.name}.{sub.name}", sub


def bare_tuple_returns(source: str, filename: str) -> list[str]:
    """``filename:line name: why`` for each public function of ``source`` that returns a bare tuple."""
    tree = ast.parse(source, filename=filename)
    out = []
    for name, fn in _public_functions(tree):
        if _is_bare_tuple(fn.returns):
            out.append(
                f"{filename}:{fn.lineno} {name}: annotated -> {ast.unparse(fn.returns)}"
            )
        for ret in _own_returns(fn):
            if isinstance(ret.value, ast.Tuple):
                out.append(
                    f"{filename}:{ret.lineno} {name}: returns the tuple "
                    f"display {ast.unparse(ret.value)[:60]}"
                )
    return out


def test_no_public_function_returns_a_bare_tuple():
    bad = []
    files = sorted((ROOT / "rnnlib").rglob("*.py"))
    assert len(files) > 20
    for path in files:
        bad += bare_tuple_returns(path.read_text(), str(path.relative_to(ROOT)))
    assert not bad, (
        "public rnnlib functions that return a bare tuple (return a typing.NamedTuple "
        "with a docstring per field, listed in the module's __all__):\n  "
        + "\n  ".join(bad)
    )


def test_the_scan_finds_bare_tuples():
    """The check can fail: each way of returning a bare tuple is caught, the allowed ones are not."""
    source = """
from typing import NamedTuple, Tuple
import typing

class Pair(NamedTuple):
    a: int
    b: int

def annotated() -> tuple[int, int]:
    return Pair(1, 2)

def old_style() -> Tuple[int, int]:
    return Pair(1, 2)

def dotted() -> typing.Tuple[int, ...]:
    return Pair(1, 2)

def in_union() -> "int | tuple[int, int]":
    return 1

def display() -> Pair:
    return 1, 2

def unannotated(x):
    if x:
        return (x, x)
    return None

class Model:
    def method(self) -> tuple[int, int]:
        return Pair(1, 2)

def fine() -> Pair:
    def inner():
        return 1, 2
    return Pair(*inner())

def _private() -> tuple[int, int]:
    return 1, 2

class _Hidden:
    def method(self) -> tuple[int, int]:
        return 1, 2

def takes_a_tuple(x: tuple[int, int]) -> int:
    return x[0]
"""
    bad = bare_tuple_returns(source, "synthetic.py")
    flagged = {line.split()[1].rstrip(":") for line in bad}
    assert flagged == {
        "annotated",
        "old_style",
        "dotted",
        "in_union",
        "display",
        "unannotated",
        "Model.method",
    }, bad
