"""Tests of the shared validators: each error names the argument and the expectation."""

import numpy as np
import pytest
import torch

from rnnlib._validation import (
    as_generator,
    check_int,
    check_real,
    check_tensor,
)


def test_check_tensor_accepts_good_input():
    x = torch.zeros(2, 3)
    assert check_tensor(x, "x", shape=(2, None)) is x


@pytest.mark.parametrize(
    "x, kwargs, exc, match",
    [
        ("a", {}, TypeError, "x must be a torch.Tensor, got str"),
        (
            torch.zeros(2),
            {"ndim": 2},
            ValueError,
            "x must have 2 dimensions, got shape",
        ),
        (
            torch.zeros(2, 3),
            {"shape": (2, 4)},
            ValueError,
            r"x must have shape \(2, 4\)",
        ),
        (
            torch.zeros(2, dtype=torch.int32),
            {},
            TypeError,
            "floating-point dtype",
        ),
        (
            torch.tensor([1.0, float("inf")]),
            {},
            ValueError,
            "NaN or infinite",
        ),
        (torch.zeros(0), {}, ValueError, "must not be empty"),
    ],
)
def test_check_tensor_rejects(x, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        check_tensor(x, "x", **kwargs)


def test_check_int_and_real():
    assert check_int(3, "k", minimum=1) == 3
    with pytest.raises(ValueError, match="k must be >= 1, got 0"):
        check_int(0, "k", minimum=1)
    with pytest.raises(TypeError, match="k must be an integer"):
        check_int(1.0, "k")
    assert check_real(0.5, "lam", low=0, high=1, low_open=True) == 0.5
    with pytest.raises(ValueError, match=r"lam must lie in \(0, 1\]"):
        check_real(0, "lam", low=0, high=1, low_open=True)
    with pytest.raises(ValueError, match="lam must be finite"):
        check_real(float("nan"), "lam")


def test_as_generator():
    g = torch.Generator().manual_seed(1)
    assert as_generator(g) is g
    a = torch.rand(3, generator=as_generator(5))
    b = torch.rand(3, generator=as_generator(5))
    assert torch.equal(a, b)
    assert torch.equal(
        torch.rand(3, generator=as_generator(None)),
        torch.rand(3, generator=as_generator(0)),
    )
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        as_generator(1.5)


def test_derived_streams_are_distinct_and_reproducible():
    from rnnlib._rng import derive, derive_seed

    assert derive_seed(1, "weights", 0) == derive_seed(1, "weights", 0)
    seeds = {
        derive_seed(s, name, k)
        for s in (0, 1, 2)
        for name in ("weights", "data")
        for k in range(3)
    }
    assert (
        len(seeds) == 18
    )  # no two (seed, stream) pairs share a stream, unlike seed + k
    g = torch.Generator().manual_seed(5)
    a = torch.randn(3, generator=derive(g, "x"))
    assert not torch.equal(
        a, torch.randn(3, generator=derive(g, "x"))
    )  # a generator advances


def test_one_dtype_model_and_lambda_check():
    import torch

    from rnnlib._validation import (
        OPEN_UNIT,
        PARAMS,
        DType,
        check_model,
    )
    from rnnlib.dynamical import LSTM, SimpleRNN

    assert DType().check(torch.float64, "dtype") is torch.float64
    for bad in (torch.int64, torch.float16, "float32"):
        with pytest.raises(
            TypeError,
            match=r"^dtype must be torch\.float32 or torch\.float64, got ",
        ):
            DType().check(bad, "dtype")
    lam = PARAMS["lam"]  # projections accept the closed ball
    assert lam.check(1.0, "lam") == 1.0
    with pytest.raises(
        ValueError,
        match=r"^lam must lie in \(0\.0, 1\.0\), got 1\.0$",
    ):  # the truncation bounds divide by 1 - lambda
        OPEN_UNIT.check(1.0, "lam")
    with pytest.raises(
        ValueError,
        match=r"^project must lie in \(0\.0, 1\.0\], got 0\.0$",
    ):
        lam.check(0.0, "project")
    model = LSTM(2, 3, generator=0)
    assert check_model(model, LSTM, finite=True) is model
    with pytest.raises(
        TypeError,
        match=r"^model must be an rnnlib\.dynamical\.SimpleRNN, got LSTM$",
    ):
        check_model(model, SimpleRNN)
    with torch.no_grad():
        model.b[4] = float("inf")
    check_model(model, LSTM)  # finiteness only when asked
    with pytest.raises(
        ValueError,
        match=r"^model\.b contains NaN or infinite entries$",
    ):
        check_model(model, LSTM, finite=True)


@pytest.mark.parametrize("bad", [[], (), "12", 3, None])
def test_check_sequence_refuses_empty_strings_and_scalars(bad):
    from rnnlib._validation import check_sequence

    with pytest.raises(
        ValueError,
        match=r"^widths must be a non-empty sequence of integers, got ",
    ):
        check_sequence(bad, "widths", "integers")
    assert check_sequence((1, 2), "widths", "integers") == [1, 2]


def test_validate_params_checks_by_name_converts_and_records():
    from rnnlib._validation import (
        PARAMS,
        POSITIVE,
        Int,
        validate_params,
    )

    @validate_params("L", "eps_x", k=Int(2, 5), lr=POSITIVE)
    def f(L, eps_x=0.5, *, k=None, lr=1e-2):
        return L, eps_x, k, lr

    assert f.__rnnlib_params__ == {
        "L": PARAMS["L"],
        "eps_x": PARAMS["eps_x"],
        "k": Int(2, 5),
        "lr": POSITIVE,
    }
    # converted values are passed on: numpy scalars become int / float
    out = f(np.int64(4), np.float32(0.25), k=3, lr=1)
    assert out == (4, 0.25, 3, 1.0)
    assert type(out[0]) is int and type(out[3]) is float
    assert f(3) == (
        3,
        0.5,
        None,
        0.01,
    )  # a None default may stay None
    with pytest.raises(ValueError, match=r"^L must be >= 3, got 2$"):
        f(2)
    with pytest.raises(
        ValueError,
        match=r"^eps_x must lie in \(0\.0, 1\.0\], got 0\.0$",
    ):
        f(3, 0.0)
    with pytest.raises(ValueError, match=r"^k must be <= 5, got 6$"):
        f(3, k=6)
    with pytest.raises(TypeError, match=r"^lr must be a real number, got str"):
        f(3, lr="0.1")
    with pytest.raises(TypeError):  # a missing argument: the signature's own error
        f()


def test_validate_params_refuses_an_undeclared_argument_name():
    from rnnlib._validation import validate_params

    with pytest.raises(TypeError, match="has no argument"):

        @validate_params("eps_x")
        def g(L):
            return L


def test_choice_and_bool_name_the_argument_and_the_options():
    from rnnlib._validation import Bool, Choice, validate_params

    @validate_params(kind=Choice("a", "b"), flag=Bool())
    def f(kind="a", flag=False):
        return kind, flag

    assert f("b", True) == ("b", True)
    with pytest.raises(
        ValueError,
        match=r"^kind must be one of \('a', 'b'\), got 'c'$",
    ):
        f("c")
    with pytest.raises(TypeError, match=r"^kind must be one of"):
        f(1)
    with pytest.raises(TypeError, match=r"^flag must be a bool, got int$"):
        f(flag=1)


def test_only_the_outermost_declared_call_checks():
    """A declared call inside another skips only the very object its caller checked under the same constraint."""
    from rnnlib import _validation
    from rnnlib._validation import Int, validate_params

    calls = []
    spec = Int(1)
    counting = type(
        "Counting",
        (),
        {"check": lambda self, v, n: calls.append(n) or spec.check(v, n)},
    )()

    @validate_params(L=counting)
    def inner(L):
        return L

    @validate_params(L=counting)
    def outer(L):
        return inner(L) + inner(L + 0)  # the checked object, then the same value

    assert outer(3) == 6 and calls == [
        "L"
    ]  # 3 + 0 is the cached int 3: the same object

    @validate_params(L=counting)
    def derives(L):
        return inner(L - 3)  # a derived value is checked, whatever its name

    with pytest.raises(ValueError, match=r"^L must be >= 1, got 0$"):
        derives(3)
    with pytest.raises(ValueError, match=r"^L must be >= 1, got 0$"):
        inner(0)  # called directly, it checks
    with pytest.raises(ValueError):
        outer(0)
    assert _validation._INSIDE.depth == 0  # reset after an error


def test_a_name_no_enclosing_call_declared_is_checked_where_it_is_declared():
    """A declared caller that does not declare an argument it passes on leaves it to the callee."""
    from rnnlib import _validation
    from rnnlib._validation import Int, validate_params

    @validate_params(L=Int(1), ridge=Int(0))
    def inner(L, ridge):
        return L + ridge

    @validate_params(L=Int(1))
    def outer(L, fit_ridge):  # ridge is not declared here
        return inner(L, ridge=fit_ridge)

    assert outer(3, 0) == 3
    with pytest.raises(ValueError, match=r"^ridge must be >= 0, got -1$"):
        outer(3, -1)
    assert _validation._INSIDE.checked == {}


def test_declared_tensors_share_their_symbols_and_read_other_arguments():
    """``Tensor``: a symbol names one size in every tensor of the call, ``"arg.attr"`` reads another argument."""
    import torch

    from rnnlib._validation import (
        Ints,
        Model,
        Tensor,
        validate_params,
    )
    from rnnlib.dynamical import LSTM, SimpleRNN

    @validate_params(
        model=Model(SimpleRNN),
        x=Tensor(shape=("B", "T", "model.input_dim"), dtype_of="model"),
        y=Tensor(shape=("B", "T", None)),
        W=Tensor(shape=("m", "m")),
        ks=Ints(1),
    )
    def f(x, y, W, model, ks):
        return ks

    rnn = SimpleRNN(3, 4, generator=0)
    x, y, W = (
        torch.zeros(2, 5, 3),
        torch.zeros(2, 5, 1),
        torch.eye(4),
    )
    assert f(x, y, W, rnn, range(1, 3)) == [1, 2]
    with pytest.raises(
        ValueError,
        match=r"^y must have shape \(B, T, \*\), got \(2, 4, 1\) \(dimension 1 should be 5\)$",
    ):
        f(x, y[:, :4], W, rnn, [1])
    with pytest.raises(
        ValueError,
        match=r"^x must have shape \(B, T, model\.input_dim\), got .* should be 3\)$",
    ):
        f(torch.zeros(2, 5, 2), y, W, rnn, [1])
    with pytest.raises(TypeError, match=r"^x has dtype torch\.float64 but model's"):
        f(x.double(), y, W, rnn, [1])
    with pytest.raises(ValueError, match=r"^W must have shape \(m, m\)"):
        f(x, y, W[:, :3], rnn, [1])
    with pytest.raises(TypeError, match=r"^model must be an "):
        f(x, y, W, LSTM(3, 4), [1])  # the model is checked first
    with pytest.raises(ValueError, match=r"^ks\[i\] must be >= 1"):
        f(x, y, W, rnn, [1, 0])
    with pytest.raises(TypeError, match="refers to undeclared"):
        validate_params(x=Tensor(shape=("model.input_dim",)))(lambda x, model: x)


def test_a_subclass_declares_its_base_constraints_once():
    """``validate_params(Base.__init__, extra=...)`` takes the base's declarations and adds its own."""
    from rnnlib.dynamical import (
        LinearSystem,
        SimpleRNN,
        _MatrixRNN,
    )

    base = _MatrixRNN.__init__.__rnnlib_params__
    assert LinearSystem.__init__ is _MatrixRNN.__init__
    assert SimpleRNN.__init__.__rnnlib_params__ == {
        **base,
        "activation": SimpleRNN.__init__.__rnnlib_params__["activation"],
    }
    with pytest.raises(ValueError, match=r"^spectral_norm must lie in"):
        SimpleRNN(3, 4, spectral_norm=-1.0)


def test_an_integer_bound_may_name_another_argument():
    """``Int(1, "steps")``: checked after ``steps``, against its checked value, naming it."""
    from rnnlib._validation import Int, validate_params

    @validate_params(steps=Int(1), n_logs=Int(1, "steps"))
    def f(n_logs, steps):
        return n_logs, steps

    assert f(3, 8) == (3, 8) and f(8, 8) == (8, 8)
    with pytest.raises(ValueError, match=r"^n_logs must be <= steps = 8, got 9$"):
        f(9, 8)
    with pytest.raises(ValueError, match=r"^steps must be >= 1, got 0$"):
        f(1, 0)  # the named argument is checked first
    with pytest.raises(ValueError, match=r"^n_logs must be >= 1, got 0$"):
        f(0, 8)
    with pytest.raises(TypeError, match=r"refers to undeclared \['steps'\]"):
        validate_params(n_logs=Int(1, "steps"))(lambda n_logs, steps: None)


def test_a_relation_between_arguments_is_declared_and_checked_after_them():
    """``Relation``: an expression over the arguments, its sides in the message; None skips it."""
    from rnnlib._validation import Int, Relation, validate_params

    @validate_params(
        Relation("n_train + n_eval <= 2 ** n", "distinct strings"),
        n=Int(1),
        n_train=Int(1),
        n_eval=Int(1),
    )
    def f(n, n_train, n_eval=None):
        return n_train

    assert f(3, 5, 3) == 5 and f(3, 9) == 9  # n_eval None: the relation is skipped
    with pytest.raises(
        ValueError,
        match=r"^n_train \+ n_eval <= 2 \*\* n must hold \(distinct strings\), "
        r"got n_train \+ n_eval = 9 and 2 \*\* n = 8$",
    ):
        f(3, 5, 4)
    with pytest.raises(ValueError, match=r"^n must be >= 1"):
        f(0, 5, 4)  # an argument's own constraint comes first
    assert [r.expression for r in f.__rnnlib_relations__] == [
        "n_train + n_eval <= 2 ** n"
    ]

    @validate_params(Relation("patience is None or valid is not None", "a split"))
    def g(valid=None, patience=None):
        return patience

    assert g(None, None) is None and g([1], 2) == 2
    with pytest.raises(ValueError, match=r"^patience is None or valid is not None"):
        g(None, 2)  # it speaks of None: evaluated as written
    with pytest.raises(TypeError, match=r"has no argument \['m'\]"):
        validate_params(Relation("m <= n"))(lambda n: None)


def test_either_seq_instance_and_values_name_the_argument():
    from rnnlib._validation import (
        Choice,
        Either,
        Instance,
        Real,
        Seq,
        Tensor,
        validate_params,
    )

    @validate_params(
        W=Tensor(shape=("rows", None)),
        radius=Either(Tensor(shape=("rows",), values="nonnegative"), Real(0.0)),
    )
    def project(W, radius):
        return radius

    W = torch.ones(3, 2)
    assert project(W, 2) == 2.0 and isinstance(project(W, 2), float)
    assert project(W, torch.ones(3)).shape == (3,)
    with pytest.raises(TypeError, match=r"^radius must be a torch\.Tensor or a real"):
        project(W, "1")
    with pytest.raises(ValueError, match=r"^radius must lie in \[0\.0, inf\]"):
        project(W, -1.0)
    with pytest.raises(ValueError, match=r"^radius must have nonnegative"):
        project(W, -torch.ones(3))
    with pytest.raises(ValueError, match=r"dimension 0 should be 3"):
        project(W, torch.ones(4))  # the symbol "rows" is W's

    @validate_params(
        kinds=Seq(Choice("rnn", "lstm"), "model kinds"),
        y=Tensor(ndim=1, values="sign"),
    )
    def fit(kinds, y):
        return kinds

    assert fit(("rnn", "lstm"), torch.tensor([1.0, -1.0])) == ["rnn", "lstm"]
    with pytest.raises(ValueError, match=r"^kinds must be a non-empty sequence of"):
        fit("rnn", torch.ones(2))
    with pytest.raises(ValueError, match=r"^kinds\[i\] must be one of"):
        fit(["rnn", "gru"], torch.ones(2))
    with pytest.raises(ValueError, match=r"^y must have \+-1 entries"):
        fit(["rnn"], torch.tensor([1.0, 0.0]))

    @validate_params(target=Instance(dict), r=Real(0.0, low_open=True, allow_inf=True))
    def read(target, r=float("inf")):
        return r

    assert read({}) == float("inf") and read({}, 2) == 2.0
    with pytest.raises(TypeError, match=r"^target must be an builtins\.dict"):
        read([])
    with pytest.raises(ValueError, match=r"^r must lie in \(0\.0, inf\]"):
        read({}, 0.0)
    with pytest.raises(ValueError, match=r"^r must be finite"):
        read({}, float("nan"))


def test_function_and_path_constraints_name_the_argument():
    from pathlib import Path

    from rnnlib._validation import Function, PathLike, validate_params

    @validate_params(student=Function(), folder=PathLike())
    def grade(student, folder=None):
        return folder

    assert grade(len, "out") == "out"
    assert grade(lambda x: x, Path("out")) == Path("out")  # passed on unchanged
    assert grade(len) is None  # an optional path may be left out
    with pytest.raises(TypeError, match=r"^student must be callable, got str$"):
        grade("len")
    with pytest.raises(TypeError, match=r"^folder must be a path \(str or pathlib"):
        grade(len, 3)
