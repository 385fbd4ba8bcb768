"""Benchmark: SGD with :func:`rnnlib.train.train_rnn` against a plain hand-written torch loop (chapter 5).

Both train the same Elman RNN (W, A trained, B frozen) by SGD with batch size 1
on the squared loss of ``out_scale * F_rnn``, for the same number of steps, on
the same samples in the same order. The hand-written loop is what a reader
would write: a forward recursion with ``torch.relu``, ``loss.backward()``, an
in-place update and ``loss.item()`` per step. ``train_rnn`` does the same plus
its bookkeeping: a finiteness check per step, the history at the first and last
step (losses on the training set, distances and spectral norms, flips and the
coupling gap on ``x_eval``). The two run alternately; the printed ratio is the
median of per-round ratios ``train_rnn / hand`` (target <= 1.1), so a machine
shared with other jobs slows both alike.

Usage: python benchmarks/bench_train.py [--widths 128 512 1024] [--steps 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics

import torch
from _timing import interleaved_times  # benchmarks/_timing.py

from rnnlib.elman import ElmanRNN, sample_normalized_sequence
from rnnlib.train import train_rnn


def hand_loop(
    model: ElmanRNN,
    x: torch.Tensor,
    y: torch.Tensor,
    out_scale: float,
    lr: float,
    steps: int,
    seed: int,
):
    """SGD written out in plain torch (the reference)."""
    W = model.W.detach().clone().requires_grad_(True)
    A = model.A.detach().clone().requires_grad_(True)
    B = model.B
    order = torch.randint(
        0,
        x.shape[0],
        (steps, 1),
        generator=torch.Generator().manual_seed(seed),
    )
    losses = []
    for t in range(steps):
        xb = x[order[t]]
        h = torch.relu(xb[:, 0] @ A.T)
        for step in range(1, x.shape[1]):
            h = torch.relu(h @ W.T + xb[:, step] @ A.T)
        loss = 0.5 * (out_scale * h @ B.T - y[order[t]]).square().mean()
        loss.backward()
        with torch.no_grad():
            W -= lr * W.grad
            A -= lr * A.grad
        W.grad = None
        A.grad = None
        losses.append(loss.item())
    return W.detach(), A.detach(), losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[128, 512, 1024])
    parser.add_argument("--n", type=int, default=64, help="training sequences")
    parser.add_argument("--L", type=int, default=6)
    parser.add_argument("--d", type=int, default=6)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"SGD, batch 1, {args.steps} steps, N {args.n}, L {args.L}, d {args.d}, float32, {args.threads} threads; median seconds"
    )
    print(f"{'m':>6} {'hand':>9} {'train_rnn':>10} {'ratio':>7}")
    for m in args.widths:
        model = ElmanRNN(args.d, m, generator=0)
        x = sample_normalized_sequence(args.n, args.L, args.d, 0.5, generator=1)
        y = torch.randn(args.n, 1, generator=torch.Generator().manual_seed(2))
        lr = 0.1 / m
        W_ref, _, _ = hand_loop(model, x, y, 1.0, lr, args.steps, 3)
        res = train_rnn(
            model,
            x,
            y,
            out_scale=1.0,
            lr=lr,
            steps=args.steps,
            generator=3,
            log_every=args.steps,
        )
        assert torch.allclose(res.model.W.detach(), W_ref, atol=1e-5), (
            "the two loops must compute the same SGD"
        )
        hand_times, lib_times = interleaved_times(
            [
                lambda: hand_loop(model, x, y, 1.0, lr, args.steps, 3),
                lambda: train_rnn(
                    model,
                    x,
                    y,
                    out_scale=1.0,
                    lr=lr,
                    steps=args.steps,
                    generator=3,
                    x_eval=x[:16],
                    y_eval=y[:16],
                    log_every=args.steps,
                ),
            ],
            args.repeats,
            warmup=1,
        )
        ratio = statistics.median(b / a for a, b in zip(hand_times, lib_times))
        print(
            f"{m:>6} {statistics.median(hand_times):9.4f} {statistics.median(lib_times):10.4f} {ratio:7.2f}"
        )


if __name__ == "__main__":
    main()
