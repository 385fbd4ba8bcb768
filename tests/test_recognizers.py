"""Tests of rnnlib.recognizers: the learners of chapter 7 on held-out splits."""

import numpy as np
import pytest
import torch

from rnnlib.concepts import fit_additive
from rnnlib.elman import ElmanRNN
from rnnlib.languages import (
    PAD,
    encode_strings,
    get_language,
    held_out_split,
    language_dataset,
    sample_dl1_balanced,
)
from rnnlib.recognizers import (
    PracticalRNN,
    additive_baseline,
    token_codes,
    train_practical_rnn,
    train_wide_rnn,
)
from rnnlib.train import DivergenceError, train_rnn


def testtoken_codes_follow_the_normalized_input():
    z = torch.tensor([[PAD, PAD, 1, 0], [0, 1, 1, 0]])
    codes = token_codes(z)
    assert codes.tolist() == [
        [0, 0, 1, 3, 2, 4],
        [1, 2, 3, 3, 2, 4],
    ]
    x = encode_strings(z, 0.5)
    start = (x[..., 3] == 1) & (torch.arange(6) < 5)
    assert torch.equal(start, codes == 1)  # the start token sits where the codes say
    assert torch.equal(x.abs().sum(dim=2) == 0, codes == 0)  # and the zero padding too


def test_wide_rnn_is_train_rnn_on_encoded_strings():
    split = language_dataset("tomita4", 200, 6, min_length=1, generator=0)
    r = train_wide_rnn(
        split,
        16,
        eps_x=0.5,
        lr=0.02,
        steps=20,
        batch_size=8,
        generator=3,
    )
    # the same run by hand, with the streams train_wide_rnn derives
    from rnnlib._rng import derive

    model = ElmanRNN(4, 16, 1, generator=derive(3, "weights"))
    x = encode_strings(split.z_train, 0.5)
    y = 2 * split.y_train[:, None] - 1
    ref = train_rnn(
        model,
        x,
        y,
        out_scale=1.0,
        lr=0.02,
        steps=20,
        loss="logistic",
        batch_size=8,
        generator=derive(3, "batches"),
        log_every=20,
    )
    pred = (ref.predict(encode_strings(split.z_test, 0.5))[:, 0] > 0).float()
    assert torch.equal(r.predict(split.z_test), pred)
    assert np.allclose(r.losses, ref.history.step_loss)
    assert r.test_accuracy == float((pred == split.y_test).double().mean())


def test_wide_rnn_learns_an_easy_language_and_diverges_loudly():
    split = language_dataset("tomita4", 600, 6, min_length=1, generator=1)
    r = train_wide_rnn(split, 64, lr=0.02, steps=150, generator=0)
    assert r.train_accuracy > 0.9 and r.test_accuracy > split.majority_baseline + 0.1
    with pytest.raises(DivergenceError, match="lr"):
        train_wide_rnn(split, 64, lr=1e4, steps=50, generator=0)


def test_practical_rnn_is_seeded_and_learns_parity():
    state = torch.random.get_rng_state()
    a, b = (
        PracticalRNN(8, generator=5),
        PracticalRNN(8, generator=5),
    )
    assert torch.equal(
        torch.random.get_rng_state(), state
    )  # no draw from the global generator
    z = torch.tensor([[PAD, 1, 0], [1, 1, 0]])
    assert torch.equal(a(z), b(z))
    # a GRU with Adam learns parity on unseen strings (chapter 7's contrast with the wide RNN)
    split = language_dataset("parity", 600, 6, min_length=1, generator=2)
    r = train_practical_rnn(split, 16, lr=0.02, steps=250, generator=0)
    assert r.test_accuracy > 0.9


def test_additive_baseline_is_the_least_squares_fit():
    z = sample_dl1_balanced(400, 8, min_length=2, generator=0)
    split = held_out_split(z, get_language("dl1")(z), generator=0)
    r = additive_baseline(split)
    codes = token_codes(split.z_train)
    onehot = (
        torch.nn.functional.one_hot(codes, 5).reshape(len(codes), -1).double().numpy()
    )
    X = np.concatenate([np.ones((len(codes), 1)), onehot], axis=1)
    coef = np.linalg.lstsq(X, split.y_train.double().numpy(), rcond=None)[0]
    Xt = np.concatenate(
        [
            np.ones((len(split.z_test), 1)),
            torch.nn.functional.one_hot(token_codes(split.z_test), 5)
            .reshape(len(split.z_test), -1)
            .double()
            .numpy(),
        ],
        1,
    )
    assert np.array_equal(
        r.predict(split.z_test).numpy(),
        (Xt @ coef > 0.5).astype(np.float32),
    )
    # D_L1 with 0, 1 or 2 ones is not additive: no better than the majority answer (chapter 2)
    assert r.test_accuracy < split.majority_baseline + 0.1
    with pytest.raises(ValueError, match="training width"):
        r.predict(torch.zeros(2, 5, dtype=torch.int64))
    assert fit_additive(codes, split.y_train.double(), alphabet_size=5).mse > 0.1
