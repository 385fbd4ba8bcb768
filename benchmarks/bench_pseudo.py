"""Benchmark: the pseudo-network of eq. (4) by tangent propagation, against a forward pass and torch.func.jvp.

Chapter 3 says that :func:`rnnlib.pseudo.pseudo_network` costs about one
forward pass on top of the forward pass that gives ``h`` and ``D``: the tangent
recursion ``g^(l) = D^(l) (W g^(l-1) + dW h^(l-1) + dA x^(l))`` does one
(batch x m) @ (m x m) product per step, like the forward recursion. Prints,
for each width m, the median times of

* ``forward``: ``elman_hidden_states(W, A, x)`` (one pass);
* ``pseudo``: ``pseudo_network(model, dW, dA, x)`` (states and patterns, then tangents);
* ``sum``: ``pseudo_network_sum``, the explicit sum over ``Back_{l->L}`` (L products of B's rows);
* ``jvp``: ``torch.func.jvp`` of the RNN output in direction (dW, dA);

and the ratios pseudo / forward (expected about 2-3: a forward for the states,
one for the pre-activations, one for the tangents) and pseudo / jvp (the
target is <= 1.0). pseudo and jvp run alternately and their ratio is the median
of the per-round ratios, so that a machine shared with other jobs slows both alike.

Usage: python benchmarks/bench_pseudo.py [--widths 256 1024 2048] [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics

import torch
from _timing import (
    interleaved_times,
    median_time,
)  # benchmarks/_timing.py

from rnnlib.elman import (
    ElmanRNN,
    elman_hidden_states,
    sample_normalized_sequence,
)
from rnnlib.pseudo import (
    pseudo_network,
    pseudo_network_sum,
    random_perturbation,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[256, 1024, 2048])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--L", type=int, default=16)
    parser.add_argument("--d", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(2)
    print(
        f"batch {args.batch}, L {args.L}, d {args.d}, float32, 2 threads; median seconds"
    )
    print(
        f"{'m':>6} {'forward':>9} {'pseudo':>9} {'sum':>9} {'jvp':>9} {'pseudo/fwd':>11} {'pseudo/jvp':>11}"
    )
    for m in args.widths:
        model = ElmanRNN(args.d, m, generator=0)
        x = sample_normalized_sequence(args.batch, args.L, args.d, 0.1, generator=1)
        dW, dA = random_perturbation(args.d, m, 1.0, generator=2)
        W, A, B = model.W.detach(), model.A.detach(), model.B

        def rnn_output(W_, A_):
            return elman_hidden_states(W_, A_, x)[:, -1] @ B.T

        def pseudo():
            with torch.no_grad():
                return pseudo_network(model, dW, dA, x)

        with torch.no_grad():
            t_fwd = median_time(lambda: elman_hidden_states(W, A, x), args.repeats)
            t_sum = median_time(
                lambda: pseudo_network_sum(model, dW, dA, x),
                max(1, args.repeats // 3),
            )
        pseudo_times, jvp_times = interleaved_times(
            [
                pseudo,
                lambda: torch.func.jvp(rnn_output, (W, A), (dW, dA)),
            ],
            args.repeats,
        )
        t_pseudo, t_jvp = (
            statistics.median(pseudo_times),
            statistics.median(jvp_times),
        )
        ratio = statistics.median(a / b for a, b in zip(pseudo_times, jvp_times))
        print(
            f"{m:>6} {t_fwd:9.4f} {t_pseudo:9.4f} {t_sum:9.4f} {t_jvp:9.4f} {t_pseudo / t_fwd:11.2f} {ratio:11.2f}"
        )


if __name__ == "__main__":
    main()
