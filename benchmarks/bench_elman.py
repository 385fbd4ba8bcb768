"""Benchmark: rnnlib's ElmanRNN forward+backward against torch.nn.RNN on the same shapes.

Prints, for each width m, the median time of one forward+backward pass of both
models (batch 256, L 50, d 16 by default), their ratio (rnnlib / torch.nn.RNN,
lower is better; the target is <= 1.2), and the achieved FLOP/s of rnnlib's pass
as a fraction of a same-shape matmul's FLOP/s on this machine. The two models
run alternately, and the ratio is the median of the per-round ratios, so that a
machine shared with other jobs slows both alike.

FLOP count of one forward+backward pass: the recurrent matmuls, 3 per step
(forward W h, and the two gradient products), plus the input projection, 3 x:
    flops = 3 * 2 * L * batch * (m * m + m * d)
The matmul reference runs the (batch x m) @ (m x m) product the recurrence uses.

Usage: python benchmarks/bench_elman.py [--widths 256 512 1024] [--repeats 15]
"""

from __future__ import annotations

import argparse
import statistics

import torch
from _timing import (
    interleaved_times,
    median_time,
)  # benchmarks/_timing.py

from rnnlib.elman import ElmanRNN


def bench(width: int, batch: int, L: int, d: int, repeats: int) -> dict[str, float]:
    net = ElmanRNN(d, width, generator=0)
    ref = torch.nn.RNN(d, width, nonlinearity="relu", bias=False, batch_first=True)
    with torch.no_grad():
        ref.weight_ih_l0.copy_(net.A)
        ref.weight_hh_l0.copy_(net.W)
    x = torch.randn(batch, L, d, generator=torch.Generator().manual_seed(1)) * 0.1
    B = net.B

    def ours():
        net.zero_grad(set_to_none=True)
        net(x).sum().backward()

    def theirs():
        ref.zero_grad(set_to_none=True)
        (ref(x)[1][0] @ B.T).sum().backward()

    h = torch.randn(batch, width)
    W = torch.randn(width, width)
    ours_times, ref_times = interleaved_times([ours, theirs], repeats)
    t_ours, t_ref = (
        statistics.median(ours_times),
        statistics.median(ref_times),
    )
    ratio = statistics.median(a / b for a, b in zip(ours_times, ref_times))
    t_mm = median_time(lambda: h @ W, repeats * 10)
    flops = 3 * 2 * L * batch * (width * width + width * d)
    mm_flops_per_s = 2 * batch * width * width / t_mm
    return {
        "m": width,
        "rnnlib_ms": 1e3 * t_ours,
        "torch_ms": 1e3 * t_ref,
        "ratio": ratio,
        "gflops": flops / t_ours / 1e9,
        "matmul_gflops": mm_flops_per_s / 1e9,
        "fraction_of_matmul": flops / t_ours / mm_flops_per_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[256, 512, 1024])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--length", type=int, default=50)
    parser.add_argument("--input-dim", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"ElmanRNN vs torch.nn.RNN, forward+backward, batch {args.batch}, L {args.length}, "
        f"d {args.input_dim}, {args.threads} threads, median of {args.repeats}"
    )
    print(
        f"{'m':>6} {'rnnlib ms':>10} {'torch ms':>10} {'ratio':>7} {'GFLOP/s':>8} {'matmul':>8} {'fraction':>8}"
    )
    for m in args.widths:
        r = bench(
            m,
            args.batch,
            args.length,
            args.input_dim,
            args.repeats,
        )
        print(
            f"{r['m']:>6} {r['rnnlib_ms']:>10.1f} {r['torch_ms']:>10.1f} {r['ratio']:>7.2f} "
            f"{r['gflops']:>8.1f} {r['matmul_gflops']:>8.1f} {r['fraction_of_matmul']:>8.2f}"
        )


if __name__ == "__main__":
    main()
