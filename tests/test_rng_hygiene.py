"""Every random draw in rnnlib goes through an explicit seed or generator.

Scans the source of ``rnnlib/`` (the syntax tree, not the text) for draws from a
global random number generator, which would make a chapter's numbers depend on
whatever ran before:

* torch samplers (``torch.randn``, ``rand``, ``randint``, ``randperm``, ``normal``,
  ``bernoulli``, ``multinomial``, ``poisson``, the ``*_like`` forms) and in-place
  samplers (``.normal_()``, ``.uniform_()``, ``.bernoulli_()``, ``.random_()``,
  ``.exponential_()``, ``.cauchy_()``, ``.log_normal_()``, ``.geometric_()``) and
  ``torch.nn.init`` initializers, each without a ``generator=`` argument;
* ``torch.nn`` layers that initialize their weights from the global generator
  (``nn.Linear``, ``nn.RNN``, ...), and dropout;
* any ``numpy.random.<f>(...)`` module-level call (``default_rng(seed)`` /
  ``Generator`` / ``SeedSequence`` with a seed are fine);
* any call of Python's ``random`` module other than ``random.Random(seed)``;
* unseeded seeding (``torch.seed()``, ``np.random.default_rng()``, ``.seed()``).

Seeding a global generator on purpose (``torch.manual_seed``, ``np.random.seed``,
``random.seed`` in ``rnnlib.seed_everything``, which is for the reader's own code)
is not a draw. A line that must draw from the global generator says why in a
comment containing ``rng-ok:``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "rnnlib").rglob("*.py"))

TORCH_SAMPLERS = {
    "randn",
    "rand",
    "randint",
    "randperm",
    "normal",
    "bernoulli",
    "multinomial",
    "poisson",
    "randn_like",
    "rand_like",
    "randint_like",
    "binomial",
}
INPLACE_SAMPLERS = {
    "normal_",
    "uniform_",
    "bernoulli_",
    "random_",
    "exponential_",
    "cauchy_",
    "log_normal_",
    "geometric_",
}
INIT_FUNCTIONS = {
    "uniform_",
    "normal_",
    "trunc_normal_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
}
GLOBAL_INIT_LAYERS = {
    "Linear",
    "Bilinear",
    "RNN",
    "LSTM",
    "GRU",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "Embedding",
    "MultiheadAttention",
    "Transformer",
    "TransformerEncoderLayer",
    "LazyLinear",
}
DROPOUT = {
    "Dropout",
    "dropout",
    "Dropout1d",
    "Dropout2d",
    "AlphaDropout",
    "alpha_dropout",
    "rrelu",
    "RReLU",
}
SEEDERS = {"seed", "manual_seed"}


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(_dotted(node.func) + "()")
    else:
        parts.append("?")
    return ".".join(reversed(parts))


def _has_generator(call: ast.Call) -> bool:
    return any(kw.arg in ("generator", "rng") for kw in call.keywords) or any(
        kw.arg is None
        for kw in call.keywords  # **kwargs: cannot tell, trust it
    )


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local names of the random modules: ``import numpy as np`` -> {'np': 'numpy'}."""
    names = {
        "torch": "torch",
        "np": "numpy",
        "numpy": "numpy",
        "random": "random",
        "nn": "torch.nn",
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if (
                    full
                    in (
                        "torch.nn",
                        "numpy.random",
                        "torch.nn.init",
                        "torch.nn.functional",
                    )
                    or node.module == "random"
                ):
                    names[alias.asname or alias.name] = full
    return names


def unseeded_draws(path: Path) -> list[str]:
    """``file:line: call`` for each draw from a global generator in one source file."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    aliases = _aliases(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        head, _, rest = name.partition(".")
        full = f"{aliases.get(head, head)}.{rest}" if rest else aliases.get(head, head)
        last = full.rsplit(".", 1)[-1]
        bad = False
        if (
            full.startswith("torch.")
            and full.count(".") == 1
            and last in TORCH_SAMPLERS
        ):
            bad = not _has_generator(node)
        elif full.startswith("torch.nn.init.") and last in INIT_FUNCTIONS:
            bad = not _has_generator(node)
        elif (
            isinstance(node.func, ast.Attribute)
            and last in INPLACE_SAMPLERS
            and not full.startswith("torch.nn.init.")
        ):
            bad = not _has_generator(node)
        elif full.startswith("torch.nn.") and last in GLOBAL_INIT_LAYERS | DROPOUT:
            # a layer built on the meta device draws nothing (its weights are then set explicitly)
            bad = not any(
                kw.arg == "device"
                and isinstance(kw.value, ast.Constant)
                and kw.value.value == "meta"
                for kw in node.keywords
            )
        elif "()" in name and not isinstance(node.func, ast.Attribute):
            pass
        elif "()" in name and full.startswith(("numpy.random.", "random.")):
            pass  # a method of a generator object, e.g. np.random.default_rng(0).normal()
        elif full.startswith("numpy.random."):
            if last in (
                "default_rng",
                "Generator",
                "SeedSequence",
                "PCG64",
                "Philox",
            ):
                bad = not node.args and not node.keywords
            else:
                bad = last != "seed" or not node.args
        elif full.startswith("random.") and full.count(".") == 1:
            if last == "Random":
                bad = not node.args
            else:
                bad = last != "seed" or not node.args
        elif full in ("torch.seed", "torch.random.seed") or (
            last == "seed"
            and isinstance(node.func, ast.Attribute)
            and not node.args
            and not full.startswith(("numpy", "random"))
        ):
            bad = True
        if bad and "rng-ok:" not in lines[node.lineno - 1]:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}(...)")
    return found


def test_the_scan_finds_global_draws(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import torch\nimport numpy as np\nimport random\nfrom torch import nn\n"
        "g = torch.Generator().manual_seed(0)\n"
        "a = torch.randn(3)\n"  # 6: global
        "b = torch.randn(3, generator=g)\n"  # fine
        "c = torch.empty(3).normal_()\n"  # 8: global
        "d = torch.empty(3).normal_(generator=g)\n"  # fine
        "e = np.random.rand(3)\n"  # 10: global
        "f = np.random.default_rng(0).normal()\n"  # fine
        "h = random.random()\n"  # 12: global
        "i = random.Random(0).random()\n"  # fine
        "j = nn.Linear(3, 3)\n"  # 14: global init
        "k = torch.nn.init.normal_(j.weight)\n"  # 15: global
        "l = np.random.default_rng()\n"  # 16: unseeded
        "m = torch.rand(2)  # rng-ok: a reason\n"  # allowed
        "torch.manual_seed(0); np.random.seed(0); random.seed(0)\n"  # seeding: fine
    )
    sample_root = tmp_path
    found = [line.split(":")[1] for line in unseeded_draws_at(sample, sample_root)]
    assert found == ["6", "8", "10", "12", "14", "15", "16"], found


def unseeded_draws_at(path: Path, root: Path) -> list[str]:
    global ROOT
    saved, ROOT = ROOT, root
    try:
        return unseeded_draws(path)
    finally:
        ROOT = saved


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_rnnlib_draws_only_from_explicit_generators(path):
    found = unseeded_draws(path)
    assert not found, (
        "draws from a global random generator (pass generator=/a seeded Generator, or say why with "
        "'# rng-ok: reason'):\n  " + "\n  ".join(found)
    )


def test_lstm_to_torch_leaves_the_global_generator_alone():
    import torch

    from rnnlib.dynamical import LSTM

    model = LSTM(3, 4, generator=0)
    state = torch.get_rng_state().clone()
    lstm = model.to_torch()
    assert torch.equal(state, torch.get_rng_state())
    assert torch.equal(lstm.weight_hh_l0, model.W)


def seed_arithmetic(path: Path) -> list[str]:
    """Seeds made by arithmetic (``generator=seed + k``, ``manual_seed(10_000 + seed)``) and ``seed`` parameters."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            values = [kw.value for kw in node.keywords if kw.arg == "generator"]
            if isinstance(node.func, ast.Attribute) and node.func.attr == "manual_seed":
                values += node.args
            found += [
                f"{path.name}:{v.lineno}: {ast.unparse(v)}"
                for v in values
                if isinstance(v, ast.BinOp)
            ]
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name != "seed_everything"
        ):
            args = node.args.args + node.args.kwonlyargs
            found += [
                f"{path.name}:{node.lineno}: {node.name}(seed=...)"
                for a in args
                if a.arg == "seed"
            ]
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_streams_are_derived_not_computed(path):
    """One convention: a ``generator`` argument, sub-streams by ``rnnlib._rng.derive``, never ``seed + k``."""
    found = seed_arithmetic(path)
    assert not found, (
        "seed arithmetic or a seed= parameter (take generator= and use rnnlib._rng.derive(generator, name, k)):\n  "
        + "\n  ".join(found)
    )
