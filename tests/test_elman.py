"""Tests of rnnlib.elman: shapes, initialization, agreement with torch.nn.RNN, gradients, validation."""

import math

import pytest
import torch

from rnnlib.elman import (
    ElmanRNN,
    elman_hidden_states,
    normalize_sequence,
    sample_normalized_sequence,
    sample_true_sequence,
)


@pytest.fixture
def net():
    return ElmanRNN(input_dim=5, width=32, output_dim=3, generator=0)


def test_shapes(net):
    x = sample_normalized_sequence(4, 7, 5, 0.1, generator=1)
    assert x.shape == (4, 7, 5)
    assert net(x).shape == (4, 3)
    assert net.hidden_states(x).shape == (4, 7, 32)
    patterns = net.activation_patterns(x)
    assert patterns.shape == (4, 7, 32) and patterns.dtype == torch.bool
    assert (net.width, net.input_dim, net.output_dim) == (32, 5, 3)


def test_initialization_variances():
    """Entries of W, A are N(0, 2/m) and of B are N(0, 2/d_out): check mean and variance with a fixed seed."""
    m, d, d_out = 1000, 50, 20
    net = ElmanRNN(d, m, d_out, generator=123)
    for tensor, var in (
        (net.W, 2 / m),
        (net.A, 2 / m),
        (net.B, 2 / d_out),
    ):
        n = tensor.numel()
        sample_var = float(tensor.detach().var())
        # the sample variance of n Gaussians has relative sd sqrt(2/n); allow 5 of them
        assert abs(sample_var / var - 1) < 5 * math.sqrt(2 / n)
        assert abs(float(tensor.detach().mean())) < 5 * math.sqrt(var / n)


def test_initialization_is_reproducible_and_seed_dependent():
    a, b, c = (
        ElmanRNN(3, 8, generator=7),
        ElmanRNN(3, 8, generator=7),
        ElmanRNN(3, 8, generator=8),
    )
    assert torch.equal(a.W, b.W) and torch.equal(a.B, b.B)
    assert not torch.equal(a.W, c.W)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_forward_equals_torch_nn_rnn(dtype):
    """Independent reference: torch.nn.RNN(relu, bias=False) loaded with the same W and A."""
    d, m = 6, 40
    net = ElmanRNN(d, m, 2, generator=3, dtype=dtype)
    ref = torch.nn.RNN(d, m, nonlinearity="relu", bias=False, batch_first=True).to(
        dtype
    )
    with torch.no_grad():
        ref.weight_ih_l0.copy_(net.A)
        ref.weight_hh_l0.copy_(net.W)
    x = sample_normalized_sequence(5, 9, d, 0.3, generator=4, dtype=dtype)
    out, h_n = ref(x)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    torch.testing.assert_close(net.hidden_states(x), out, atol=tol, rtol=tol)
    torch.testing.assert_close(net(x), h_n[0] @ net.B.T, atol=tol, rtol=tol)


def test_gradients_flow_to_W_and_A_only(net):
    x = sample_normalized_sequence(4, 6, 5, 0.5, generator=2)
    net(x).sum().backward()
    assert [name for name, _ in net.named_parameters()] == [
        "W",
        "A",
    ]
    assert net.W.grad is not None and net.W.grad.abs().sum() > 0
    assert net.A.grad is not None and net.A.grad.abs().sum() > 0
    assert not net.B.requires_grad and net.B.grad is None
    # an optimizer over model.parameters() cannot move B
    B_before = net.B.clone()
    torch.optim.SGD(net.parameters(), lr=1.0).step()
    assert torch.equal(net.B, B_before)


def test_gradients_match_torch_nn_rnn():
    d, m = 4, 16
    net = ElmanRNN(d, m, generator=5, dtype=torch.float64)
    ref = torch.nn.RNN(d, m, nonlinearity="relu", bias=False, batch_first=True).double()
    with torch.no_grad():
        ref.weight_ih_l0.copy_(net.A)
        ref.weight_hh_l0.copy_(net.W)
    x = sample_normalized_sequence(3, 8, d, 0.5, generator=6, dtype=torch.float64)
    net(x).pow(2).sum().backward()
    (ref(x)[1][0] @ net.B.T).pow(2).sum().backward()
    torch.testing.assert_close(net.W.grad, ref.weight_hh_l0.grad)
    torch.testing.assert_close(net.A.grad, ref.weight_ih_l0.grad)


def test_activation_patterns_match_hidden_state_support(net):
    """h^(l) = relu(pre-activation), so h > 0 implies D = 1 and D = 0 implies h = 0."""
    x = sample_normalized_sequence(4, 6, 5, 0.5, generator=2)
    h = net.hidden_states(x)
    D = net.activation_patterns(x)
    assert torch.all(D[h > 0])
    assert torch.all(h[~D] == 0)


def test_normalize_sequence_layout():
    x_bar = sample_true_sequence(2, 5, 4, generator=0)
    x = normalize_sequence(x_bar, 0.25)
    assert x.shape == (2, 5, 4)
    e_d = torch.tensor([0.0, 0.0, 0.0, 1.0])
    assert torch.equal(x[:, 0], e_d.expand(2, 4)) and torch.equal(
        x[:, -1], e_d.expand(2, 4)
    )
    torch.testing.assert_close(x[:, 1:-1, :-1], 0.25 * x_bar)
    assert torch.all(x[:, 1:-1, -1] == 0)
    torch.testing.assert_close(x[:, 1:-1].norm(dim=2), torch.full((2, 3), 0.25))


def test_sample_true_sequence_is_on_the_right_sphere():
    x_bar = sample_true_sequence(100, 6, 5, generator=0, dtype=torch.float64)
    assert x_bar.shape == (100, 4, 4)
    torch.testing.assert_close(
        x_bar.norm(dim=2), torch.ones(100, 4, dtype=torch.float64)
    )
    assert torch.all(x_bar[..., -1] == 0.5)
    # the free coordinates are centred (uniform direction on the sphere)
    assert x_bar[..., :-1].mean().abs() < 0.05


def test_elman_hidden_states_is_a_pure_function_for_torch_func(
    net,
):
    x = sample_normalized_sequence(2, 5, 5, 0.5, generator=2)
    out, tangent = torch.func.jvp(
        lambda W, A: elman_hidden_states(W, A, x),
        (net.W.detach(), net.A.detach()),
        (torch.zeros_like(net.W), torch.zeros_like(net.A)),
    )
    torch.testing.assert_close(out, net.hidden_states(x).detach())
    assert torch.all(tangent == 0)


# --- bad input: every error names the argument and says what was expected -----------------


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (
            dict(input_dim=0, width=4),
            ValueError,
            "input_dim must be >= 1",
        ),
        (
            dict(input_dim=3, width=0),
            ValueError,
            "width must be >= 1",
        ),
        (
            dict(input_dim=3, width=4, output_dim=0),
            ValueError,
            "output_dim must be >= 1",
        ),
        (
            dict(input_dim=3, width=2.5),
            TypeError,
            "width must be an integer",
        ),
        (
            dict(input_dim=3, width=True),
            TypeError,
            "width must be an integer",
        ),
        (
            dict(input_dim=3, width=4, generator="seed"),
            TypeError,
            "generator must be",
        ),
        (
            dict(input_dim=3, width=4, dtype=torch.int64),
            TypeError,
            "dtype must be",
        ),
        (
            dict(input_dim=3, width=5, doubled=True),
            ValueError,
            "width must be even with doubled=True",
        ),
        (
            dict(input_dim=3, width=4, doubled=1),
            TypeError,
            "doubled must be",
        ),
    ],
)
def test_constructor_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ElmanRNN(**kwargs)


@pytest.mark.parametrize(
    "x, exc, match",
    [
        (
            torch.zeros(4, 5),
            ValueError,
            r"x must have 3 dimensions \(batch, L, 5\)",
        ),
        (
            torch.zeros(2, 4, 3),
            ValueError,
            r"dimension 2 should be 5",
        ),
        (
            torch.zeros(2, 4, 5, dtype=torch.int64),
            TypeError,
            "floating-point",
        ),
        (
            torch.zeros(2, 4, 5, dtype=torch.float64),
            TypeError,
            "dtype torch.float64 but the model",
        ),
        (torch.full((2, 4, 5), float("nan")), ValueError, "NaN"),
        (torch.zeros(0, 4, 5), ValueError, "must not be empty"),
        ([[0.0]], TypeError, "x must be a torch.Tensor"),
    ],
)
def test_forward_validation(net, x, exc, match):
    for method in (
        net.forward,
        net.hidden_states,
        net.activation_patterns,
    ):
        with pytest.raises(exc, match=match):
            method(x)


def test_normalize_sequence_validation():
    good = sample_true_sequence(2, 5, 4, generator=0)
    with pytest.raises(ValueError, match="x_bar tokens must be unit vectors"):
        normalize_sequence(2 * good, 0.1)
    shifted = good.clone()
    shifted[..., -1] = -0.5
    with pytest.raises(ValueError, match="last coordinate 1/2"):
        normalize_sequence(shifted, 0.1)
    with pytest.raises(ValueError, match=r"eps_x must lie in \(0.0, 1.0\]"):
        normalize_sequence(good, 0.0)
    with pytest.raises(ValueError, match=r"eps_x must lie in"):
        normalize_sequence(good, 1.5)
    with pytest.raises(TypeError, match="eps_x must be a real number"):
        normalize_sequence(good, "0.1")
    with pytest.raises(ValueError, match="x_bar must have 3 dimensions"):
        normalize_sequence(good[0], 0.1)
    with pytest.raises(ValueError, match="d-1 >= 2"):
        normalize_sequence(torch.ones(1, 2, 1), 0.1)
    nan = good.clone()
    nan[0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="x_bar contains NaN"):
        normalize_sequence(nan, 0.1)


@pytest.mark.parametrize(
    "args, match",
    [
        ((0, 5, 4), "batch_size must be >= 1"),
        ((1, 2, 4), "L must be >= 3"),
        ((1, 5, 2), "d must be >= 3"),
    ],
)
def test_sampler_validation(args, match):
    with pytest.raises(ValueError, match=match):
        sample_true_sequence(*args)


def test_doubled_initialization_has_zero_output_and_mirrored_halves():
    """Two copies of m/2 neurons read out as +B_1 and -B_1: the same hidden states, output 0."""
    net = ElmanRNN(5, 64, 2, generator=3, dtype=torch.float64, doubled=True)
    x = sample_normalized_sequence(8, 6, 5, 0.5, generator=1, dtype=torch.float64)
    h = net.hidden_states(x)
    # equal up to rounding: BLAS may sum the two halves' rows in another order
    torch.testing.assert_close(h[..., :32], h[..., 32:], rtol=0, atol=1e-13)
    assert h[..., :32].abs().max() > 0.01  # not a dead network
    with torch.no_grad():
        out = net(x)
    assert out.abs().max() < 1e-12
    assert torch.equal(net.B[:, :32], -net.B[:, 32:])
    assert not net.W[:32, 32:].any() and not net.W[32:, :32].any()
    assert "doubled=True" in repr(net)


def test_doubled_initialization_keeps_the_row_statistics():
    """Each row of W and A has the expected squared norm of the i.i.d. initialization (2 and 2d/m)."""
    m, d = 512, 4
    net = ElmanRNN(d, m, 4, generator=0, dtype=torch.float64, doubled=True)
    W, A = net.W.detach(), net.A.detach()
    assert float(W.square().sum(1).mean()) == pytest.approx(2.0, rel=0.05)
    assert float(A.square().sum(1).mean()) == pytest.approx(2.0 * d / m, rel=0.1)
    # 4 outputs x 256 independent entries: 4 standard deviations
    assert float(net.B.square().mean()) == pytest.approx(2.0 / 4, rel=0.18)
    # the i.i.d. draws are unchanged by the option's existence
    a = ElmanRNN(d, 16, generator=7)
    b = ElmanRNN(d, 16, generator=7, doubled=False)
    assert torch.equal(a.W, b.W) and torch.equal(a.B, b.B)
