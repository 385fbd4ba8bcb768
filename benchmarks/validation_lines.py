"""Measurement: how rnnlib validates its arguments, by four figures.

1. **Declared share**: of the parameters of rnnlib's public functions and classes (the
   names of every ``__all__``, a class by its ``__init__``; ``self``, ``*args`` and
   ``**kwargs`` left out; the fields of result records, which are outputs, counted
   apart), the share whose constraint is declared
   (``rnnlib._validation.validate_params``: the function's ``__rnnlib_params__``). The
   others are listed with a reason (``--undeclared``).
2. **Hand checks the vocabulary expresses**: in a function's body, a call
   ``check_int``/``check_real``/``check_ints``/``check_tensor``/``check_model``/
   ``check_sequence`` whose first argument is one of the function's own parameters, or
   an ``if ...: raise`` on its parameters only. Those of a name ``PARAMS`` declares are
   counted apart: the vocabulary holds that very constraint.
3. **Refusals**: the bad inputs ``tests/test_bad_input.py`` feeds to rnnlib (its rows and
   the cases generated from the declarations).
4. **Validation lines in bodies**: code lines (no comment, blank or docstring line)
   inside function bodies that belong to an ``if`` that only raises ``TypeError`` or
   ``ValueError``, or to a statement whose value is a ``check_*`` call; declarations and
   ``rnnlib/_validation.py`` itself are not counted.

``tests/test_validation_measures.py`` keeps figures 1 and 2 from moving the wrong way.
Usage: ``python benchmarks/validation_lines.py [--undeclared] [--hand]`` from the
repository root.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import io
import sys
import tokenize
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rnnlib"
CHECKS = {
    "check_int",
    "check_real",
    "check_ints",
    "check_tensor",
    "check_model",
    "check_sequence",
}
_SKIP = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
    tokenize.ENCODING,
}


# --- 1. the declared share ----------------------------------------------------------------


def _bad_input_tests():
    """``tests/test_bad_input.py`` as a module: its public-name walk and its refusals."""
    spec = importlib.util.spec_from_file_location(
        "test_bad_input", ROOT / "tests" / "test_bad_input.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def public_callables() -> dict[str, object]:
    """``dotted name -> function`` (a class: its ``__init__``) for every public rnnlib name.

    The names are those the bad-input tests walk (``tests/test_bad_input.py::public_names``).
    """
    return {name: fn for name, (fn, _) in _public().items()}


def _public() -> dict[str, tuple[object, bool]]:
    """``dotted name -> (function, is a result record)``."""
    tests = _bad_input_tests()
    out = {}
    for name, obj in tests.public_names().items():
        fn = obj.__init__ if inspect.isclass(obj) else obj
        if callable(fn):
            record = inspect.isclass(obj) and tests._needs_no_rows(obj)
            out[name] = (fn, record and not hasattr(fn, "__rnnlib_params__"))
    return out


#: Why a public parameter is not declared, by its function and annotation (first match).
_REASONS: list[tuple[Callable[[str, str, str], bool], str]] = [
    (
        lambda fn, p, ann: fn.startswith("rnnlib.train.train_"),
        "an SGD entry point's model and data: checked together by the settings record",
    ),
    (
        lambda fn, p, ann: fn.startswith("rnnlib.elman.elman_"),
        "a pure function for torch.func transforms: types and shapes only, no values",
    ),
    (
        lambda fn, p, ann: ann == "object",
        "the argument a public checker exists to check",
    ),
    (
        lambda fn, p, ann: "tuple[torch.Tensor" in ann,
        "a pair of tensors: the vocabulary has no pair constraint",
    ),
    (
        lambda fn, p, ann: ann.startswith("torch.Tensor"),
        "a tensor whose shape is an expression of other sizes (checked in the body)",
    ),
    (
        lambda fn, p, ann: "ndarray" in ann or ann in ("_empty", "dict"),
        "an array or array-like (lists too, read by np.asarray): checked in the body",
    ),
    (
        lambda fn, p, ann: p in ("position", "k_index"),
        "an index bounded by another argument's shape (checked in the body)",
    ),
    (
        lambda fn, p, ann: fn == "rnnlib.claims.check",
        "a NumPy or torch bool from the chapter's measurement",
    ),
]


def _reason(qualname: str, param: object) -> str:
    ann = param.annotation
    ann = ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))
    for test, why in _REASONS:
        if test(qualname, param.name, ann):
            return why
    return "not declared yet (checked in the body, or not at all)"


class Declared(NamedTuple):
    declared: int
    total: int
    undeclared: list[tuple[str, str, str]]  # (function, parameter, reason)
    record_fields: int = 0  # fields of result records, left out of ``total``

    @property
    def share(self) -> float:
        return self.declared / self.total


def declared_share() -> Declared:
    """The declared share of the inputs of public callables.

    The fields of a result record (a NamedTuple, or a dataclass without
    ``__post_init__`` or declared ``__init__``: what a function returns, built by the
    library; the rule ``tests/test_bad_input.py`` applies when it asks for rows) are not
    inputs: they are
    counted apart and listed with that reason.
    """
    seen: set[int] = set()
    declared = total = fields = 0
    undeclared = []
    for qualname, (fn, record) in sorted(_public().items()):
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            continue
        specs = getattr(fn, "__rnnlib_params__", {})
        for p in sig.parameters.values():
            if p.name in ("self", "cls") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if record:
                fields += 1
                undeclared.append((qualname, p.name, "a result record's field"))
                continue
            total += 1
            if p.name in specs:
                declared += 1
            else:
                undeclared.append((qualname, p.name, _reason(qualname, p)))
    return Declared(declared, total, undeclared, fields)


# --- 2. hand checks -----------------------------------------------------------------------


def _only_raises(body: list[ast.stmt]) -> bool:
    return bool(body) and all(
        isinstance(s, ast.Raise)
        and isinstance(s.exc, ast.Call)
        and getattr(s.exc.func, "id", "") in ("TypeError", "ValueError")
        for s in body
    )


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


class HandCheck(NamedTuple):
    path: str
    line: int
    function: str
    kind: str  # the check_* called, or "if-raise"
    parameters: tuple[str, ...]


def hand_checks(root: Path = PACKAGE) -> list[HandCheck]:
    """Every hand-written check of a function's own parameters (see the module docstring)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "_validation.py":
            continue
        rel = path.relative_to(root.parent).as_posix()
        for fn in ast.walk(ast.parse(path.read_text())):
            if not isinstance(fn, ast.FunctionDef):
                continue
            args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
            params = {a.arg for a in args} - {"self", "cls"}
            for node in ast.walk(fn):
                if (
                    isinstance(node, ast.Call)
                    and _callee(node) in CHECKS
                    and node.args
                    and isinstance(node.args[0], ast.Name)
                    and node.args[0].id in params
                ):
                    found.append(
                        HandCheck(
                            rel, node.lineno, fn.name, _callee(node), (node.args[0].id,)
                        )
                    )
                elif (
                    isinstance(node, ast.If)
                    and not node.orelse
                    and _only_raises(node.body)
                ):
                    names = {
                        n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)
                    }
                    calls = [n for n in ast.walk(node.test) if isinstance(n, ast.Call)]
                    if (
                        names & params
                        and names - {"isinstance", "len"} <= params
                        and all(_callee(c) in ("isinstance", "len") for c in calls)
                    ):
                        found.append(
                            HandCheck(
                                rel,
                                node.lineno,
                                fn.name,
                                "if-raise",
                                tuple(sorted(names & params)),
                            )
                        )
    return found


def of_declared_names(checks: list[HandCheck]) -> list[HandCheck]:
    """The hand checks of a parameter whose name ``PARAMS`` declares."""
    from rnnlib._validation import PARAMS

    return [c for c in checks if any(p in PARAMS for p in c.parameters)]


# --- 3. refusals, 4. validation lines in bodies -------------------------------------------


def refusals() -> int:
    module = _bad_input_tests()
    return len(module.ROWS) + len(list(module._generated_params()))


def _code_lines(source: str, tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in _SKIP:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        for stmt in body if isinstance(body, list) else []:
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                lines -= set(range(stmt.lineno, stmt.end_lineno + 1))
    return lines


def body_validation_lines(root: Path = PACKAGE) -> int:
    total = 0
    for path in sorted(root.rglob("*.py")):
        if path.name == "_validation.py":
            continue
        source = path.read_text()
        tree = ast.parse(source)
        lines: set[int] = set()
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            for node in ast.walk(fn):
                span = None
                if (
                    isinstance(node, ast.If)
                    and not node.orelse
                    and _only_raises(node.body)
                ):
                    span = node
                elif (
                    isinstance(node, (ast.Expr, ast.Assign))
                    and isinstance(node.value, ast.Call)
                    and _callee(node.value).startswith(("check_", "_check"))
                ):
                    span = node
                if span is not None:
                    lines |= set(range(span.lineno, span.end_lineno + 1))
        total += len(lines & _code_lines(source, tree))
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--undeclared", action="store_true", help="list them")
    parser.add_argument("--hand", action="store_true", help="list the hand checks")
    args = parser.parse_args()
    share = declared_share()
    hand = hand_checks()
    named = of_declared_names(hand)
    print(
        f"declared public parameters: {share.declared} / {share.total}"
        f" = {share.share:.1%} (result records' fields, not inputs: {share.record_fields})"
    )
    print(f"hand checks of own parameters: {len(hand)}")
    print(f"  of a name PARAMS declares: {len(named)}")
    print(f"bad inputs refused (tests/test_bad_input.py): {refusals():,}")
    print(f"validation lines in function bodies: {body_validation_lines():,}")
    if args.undeclared:
        for fn, param, reason in share.undeclared:
            print(f"  {fn}({param}): {reason}")
    if args.hand:
        for c in hand:
            print(
                f"  {c.path}:{c.line} {c.function} {c.kind} {', '.join(c.parameters)}"
            )


if __name__ == "__main__":
    main()
