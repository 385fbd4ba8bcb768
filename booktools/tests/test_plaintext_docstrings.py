"""The docstring hook's ASCII-to-TeX translation (``booktools.sphinx_ext.plaintext_docstrings``).

Each formula below is one of rnnlib's docstrings; its TeX is what a reader of the API
page sees typeset. Code stays code. Every inline literal of rnnlib that carries a formula
sign is either typeset (and safe for MathJax) or is code the test names.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

from booktools import markup
from booktools.sphinx_ext import plaintext_docstrings as P

CASES = [
    (
        "E[w w^T 1[w^T x >= 0]] = I/2",
        r"\mathbb{E}[w w^{T} \mathbf{1}[w^{T} x \ge 0]] = I/2",
    ),
    (
        "K_m(x, x') = <grad_{W,A} F(x), grad_{W,A} F(x')>",
        r"K_m(x, x') = \langle \nabla _{W,A} F(x), \nabla _{W,A} F(x') \rangle",
    ),
    ("Wbar^[L]", r"\bar{W}^{[L]}"),
    (
        "grad_W F = sum_l u_l h^(l-1)^T",
        r"\nabla _W F = \sum_l u_l {h^{(l-1)}}^{T}",
    ),
    (
        "theta^l = arccos(S^l / sqrt(S^l(x,x) S^l(x',x')))",
        r"\theta^{l} = \arccos(S^{l} / \sqrt{S^{l}(x,x) S^{l}(x',x')})",
    ),
    (
        "b_f <= logit(f_max) - q a^2 - u_f_radius x_bound",
        r"b_f \le \operatorname{logit}(f_{\max}) - q a^{2} - "
        r"\mathrm{u\_f\_radius}\, x_{\mathrm{bound}}",
    ),
    ("|x_t|_inf <= 1", r"|x_t|_{\infty} \le 1"),
    ("sqrt(1 + l eps_x^2)", r"\sqrt{1 + l \varepsilon_x^{2}}"),
    (
        "D_L1(z) = 1[z has exactly one 1]",
        r"D_{L1}(z) = \mathbf{1}[z \text{ has exactly one } 1]",
    ),
    (
        "W_g[:, j] <- W_g[:, j] * r_g / sum_i |W_g[i, j]|",
        r"W_g[:, j] \leftarrow W_g[:, j] \cdot r_g / \sum_i |W_g[i, j]|",
    ),
    (
        "(1/m) sum_r H(alpha_r, b0_r) 1[r u + b0_r >= 0]",
        r"(1/m) \sum_r H(\alpha_r, b_{0,r}) \mathbf{1}[r u + b_{0,r} \ge 0]",
    ),
    (
        "-lr out_scale^2 G'(z_i, y_i) K_m(., x_i)",
        r"-\mathrm{lr}\, \mathrm{out\_scale}^{2} G'(z_i, y_i) K_m(\cdot, x_i)",
    ),
]

CODE = [
    "generator: torch.Generator | int | None",
    '"z^3"',
    "x ** 2",
    "model.forward(x) >= 0",
    "train_rnn(x, steps=3) ^ 1",
]


@pytest.mark.parametrize("ascii_, tex", CASES)
def test_formulas_become_tex(ascii_, tex):
    assert markup.is_formula(ascii_)
    assert markup.ascii_to_tex(ascii_) == tex
    assert markup.safe_tex(tex)


@pytest.mark.parametrize("code", CODE)
def test_code_stays_code(code):
    assert not markup.is_formula(code)


def test_render_typesets_a_literal_and_leaves_code():
    lines = P.render(["The identity ``E[H^2] = |theta|^2`` of ``fit(x, ridge=0.1)``."])
    assert lines == [
        r"The identity :math:`\mathbb{E}[H^{2}] = |\theta|^{2}` of "
        "``fit(x, ridge=0.1)``."
    ]


def _literals():
    import rnnlib

    for info in pkgutil.walk_packages(rnnlib.__path__, "rnnlib."):
        module = importlib.import_module(info.name)
        objects = [module] + [
            o
            for n, o in vars(module).items()
            if not n.startswith("_")
            and getattr(o, "__module__", None) == module.__name__
        ]
        for obj in list(objects):
            if inspect.isclass(obj):
                objects += [
                    m
                    for n, m in vars(obj).items()
                    if not n.startswith("_") and callable(m)
                ]
        for obj in objects:
            yield from P.LITERAL.findall(inspect.getdoc(obj) or "")


def test_every_formula_of_rnnlib_is_typeset():
    """A literal with a formula sign is typeset safely, or is one of the code spans named here."""
    left, unsafe, typeset = set(), set(), 0
    for literal in _literals():
        if markup.is_formula(literal):
            typeset += 1
            if not markup.safe_tex(markup.ascii_to_tex(literal)):
                unsafe.add(literal)
        elif markup.FORMULA_SIGNS.search(literal):
            left.add(literal)
    assert typeset > 300
    assert not unsafe
    assert left <= {
        "generator: torch.Generator | int | None",
        '"z^3"',
        # _validation's examples of a declared relation: Python code, not a formula
        'Relation("n_train + n_eval <= 2 ** n", "distinct strings")',
        '@validate_params("n", Relation("n_train + n_eval <= 2 ** n"))',
    }


def test_a_long_inline_formula_breaks_at_its_relations():
    """Inline math cannot wrap: a long one becomes pieces cut before top-level signs."""
    tex = markup.ascii_to_tex(
        "G(out_scale F_rnn(x; theta*)) >= G(out_scale F_rnn(x; theta))"
        " + <grad_theta G(F(x; theta)), theta* - theta> - delta(x)"
    )
    pieces = P._breakable(tex)
    assert len(pieces) == 4 and " ".join(pieces) == tex
    assert pieces[1].startswith(r"\ge") and pieces[3] == r"- \delta(x)"
    assert all(markup.safe_tex(p) for p in pieces)
    assert P._breakable("a = b") == ["a = b"]
