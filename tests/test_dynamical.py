"""Tests of rnnlib.dynamical: the simple recurrent models of Part II, cross-checked against torch.nn."""

import pytest
import torch
from torch import nn

from rnnlib.dynamical import (
    INIT_SCHEMES,
    LSTM,
    LinearSystem,
    SimpleRNN,
    recurrent_matrix,
)

D = torch.float64


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_simple_rnn_matches_torch_rnn(activation):
    model = SimpleRNN(3, 5, activation=activation, generator=1, dtype=D)
    ref = nn.RNN(
        3,
        5,
        nonlinearity=activation,
        bias=False,
        batch_first=True,
        dtype=D,
    )
    with torch.no_grad():
        ref.weight_hh_l0.copy_(model.W)
        ref.weight_ih_l0.copy_(model.U)
    x = torch.randn(
        4,
        7,
        3,
        dtype=D,
        generator=torch.Generator().manual_seed(2),
    )
    expected, _ = ref(x)
    torch.testing.assert_close(model(x), expected)


def test_linear_system_is_the_linear_recurrence():
    model = LinearSystem(2, 4, generator=3, dtype=D)
    x = torch.randn(3, 6, 2, dtype=D)
    h = torch.zeros(3, 4, dtype=D)
    for t in range(6):
        h = h @ model.W.T + x[:, t] @ model.U.T
    torch.testing.assert_close(model(x)[:, -1], h)
    assert model.output(model(x)).shape == (3, 6, 1)


def test_lstm_matches_torch_lstm_and_round_trips():
    model = LSTM(3, 6, 2, forget_bias=0.7, generator=4, dtype=D)
    with torch.no_grad():
        model.b.normal_(generator=torch.Generator().manual_seed(5))
    ref = model.to_torch()
    x = torch.randn(
        2,
        9,
        3,
        dtype=D,
        generator=torch.Generator().manual_seed(6),
    )
    out, (h_n, c_n) = ref(x)
    states = model(x)
    torch.testing.assert_close(model.hidden(states), out)
    torch.testing.assert_close(states[:, -1, :6], c_n[0])
    # torch's two bias vectors are summed on the way back
    with torch.no_grad():
        ref.bias_hh_l0.fill_(0.3)
        ref.bias_ih_l0.sub_(0.3)
    back = LSTM.from_torch(ref, 2)
    torch.testing.assert_close(back(x), states)
    assert set(model.gate_matrices()) == {f"{a}_{g}" for a in "WUb" for g in "ifzo"}
    assert model.gate_matrices()["b_f"][0].item() != 0.7  # overwritten by normal_ above


def test_lstm_forget_bias_and_output_shapes():
    model = LSTM(2, 4, 3, forget_bias=10.0)
    assert torch.all(model.gate_matrices()["b_f"] == 10.0)
    x = torch.randn(5, 3, 2)
    assert model(x).shape == (5, 3, 8)
    assert model.output(model(x)).shape == (5, 3, 3)


@pytest.mark.parametrize("scheme", INIT_SCHEMES)
def test_recurrent_matrix_schemes_and_rescaling(scheme):
    W = recurrent_matrix(20, scheme, generator=0, dtype=D)
    assert W.shape == (20, 20)
    W = recurrent_matrix(20, scheme, spectral_norm=0.7, generator=0, dtype=D)
    assert torch.linalg.matrix_norm(W, ord=2).item() == pytest.approx(0.7)


def test_orthogonal_init_is_orthogonal():
    W = recurrent_matrix(16, "orthogonal", generator=1, dtype=D)
    torch.testing.assert_close(W @ W.T, torch.eye(16, dtype=D))


def test_models_are_reproducible_by_default():
    torch.testing.assert_close(SimpleRNN(2, 3).W, SimpleRNN(2, 3).W)


def test_bad_inputs_are_refused_with_the_argument_name():
    model = SimpleRNN(3, 4)
    with pytest.raises(ValueError, match="x"):
        model(torch.randn(2, 5, 4))
    with pytest.raises(ValueError, match="x"):
        model(torch.full((2, 5, 3), float("nan")))
    with pytest.raises(TypeError, match="dtype"):
        model(torch.randn(2, 5, 3, dtype=D))
    with pytest.raises(ValueError, match="s0"):
        model(torch.randn(2, 5, 3), torch.zeros(3, 4))
    with pytest.raises(ValueError, match="activation"):
        SimpleRNN(3, 4, activation="sigmoid")
    with pytest.raises(ValueError, match="scheme"):
        recurrent_matrix(4, "xavier")
    with pytest.raises(ValueError, match="hidden_dim"):
        LSTM(3, 0)
    with pytest.raises(TypeError, match="dtype"):
        LinearSystem(3, 4, dtype=torch.int64)
    with pytest.raises(TypeError, match="lstm"):
        LSTM.from_torch(nn.GRU(2, 3))
