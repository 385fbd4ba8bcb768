"""Benchmark: the batched k-step truncated model against a naive per-t loop (chapter 9).

``rnnlib.truncation.truncated_states`` computes every ``s^k_t`` (t = 1..T) by
running the T windows ``x_{t-k+1..t}`` as one batch for k sequential steps
(O(T k) arithmetic, depth k). The naive reference restarts a loop for each t
(the same O(T k) arithmetic, but about T k sequential steps). Prints, for each
k, the median time of both and their ratio (naive / batched, higher is better).

Usage: python benchmarks/bench_truncation.py [--T 200] [--ks 4 16 64] [--repeats 5]
"""

from __future__ import annotations

import argparse

import torch
from _timing import median_time  # benchmarks/_timing.py

from rnnlib.dynamical import SimpleRNN
from rnnlib.truncation import truncated_states


def naive_truncated(model: SimpleRNN, x: torch.Tensor, k: int) -> torch.Tensor:
    out = []
    for t in range(x.shape[1]):
        s = model.initial_state(x.shape[0])
        for r in range(max(0, t - k + 1), t + 1):
            s = model.step(s, x[:, r])
        out.append(s)
    return torch.stack(out, dim=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--T", type=int, default=200)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--ks", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = SimpleRNN(4, args.width, spectral_norm=0.9, generator=0)
    x = torch.randn(
        args.batch,
        args.T,
        4,
        generator=torch.Generator().manual_seed(1),
    )
    print(f"T = {args.T}, batch = {args.batch}, width = {args.width}")
    print(f"{'k':>5} {'batched (s)':>12} {'naive (s)':>10} {'naive / batched':>16}")
    with torch.no_grad():
        for k in args.ks:
            fast = median_time(lambda: truncated_states(model, x, k), args.repeats)
            slow = median_time(lambda: naive_truncated(model, x, k), args.repeats)
            print(f"{k:>5} {fast:>12.4f} {slow:>10.4f} {slow / fast:>16.1f}")


if __name__ == "__main__":
    main()
