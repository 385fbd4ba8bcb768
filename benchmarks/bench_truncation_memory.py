"""Benchmark: memory of a training step with truncation k = 16 against full backpropagation through time, T = 2000.

What is measured. One gradient step (forward + backward) of an rnnlib
``SimpleRNN`` (hidden 256, tanh, batch 32, input 8) on sequences of length
T = 2000. Its peak memory is dominated by the tensors autograd saves for the
backward pass, which grow with the number of steps backpropagated through. Two
measures, printed side by side:

* **saved** (the primary, deterministic one): the bytes of the distinct tensor
  storages that autograd saves during the forward pass, counted with
  ``torch.autograd.graph.saved_tensors_hooks`` (parameters and the input
  sequence included, each storage once). For chunked truncated BPTT, the
  largest of the chunks' graphs (each is freed by its own backward).
* **RSS**: the largest growth of the process's resident memory over the step
  (``/proc/self/statm`` sampled every 0.2 ms by a thread, minus the value just
  before the step), each variant in a fresh subprocess (allocator noise of a
  few MB included; Linux only).

Variants, each against its full-BPTT counterpart (ratio = truncated / full,
the target is <= 0.1):

1. loss at the last step, the objective of chapter 10 (``last_only=True``):
   ``rnnlib.truncation.sequence_loss(model, x, y, k=16, last_only=True)``, the
   k-step truncated model ``p^k_T`` (it reads only the last k inputs), against
   ``k=None`` (full BPTT through all T steps);
2. loss at every step: truncated BPTT in chunks of k steps, carrying the state
   across chunks but detaching it (the standard TBPTT; rnnlib has no function
   for it, so this script writes the loop with ``model.step``), against full BPTT
   on ``sequence_loss(model, x, y)``.

With ``--with-windows`` it also measures ``sequence_loss(model, x, y, k=16)``
(every step, rnnlib's batched k-step truncated model of chapter 9): it runs all
T windows at once, so it keeps T * k states, about k times full BPTT (2 GB
here, and a few minutes): fast and parallel, not memory-saving, and not what
"training with truncation" means above.

Usage: python benchmarks/bench_truncation_memory.py [--T 2000] [--k 16] [--hidden 256] [--batch 32] [--with-windows]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

import torch

from rnnlib.dynamical import SimpleRNN
from rnnlib.truncation import sequence_loss

VARIANTS = (
    "last_full",
    "last_truncated",
    "all_full",
    "all_tbptt",
    "all_windows",
)


def setup(args) -> tuple[SimpleRNN, torch.Tensor, torch.Tensor]:
    torch.set_num_threads(2)
    gen = torch.Generator().manual_seed(0)
    model = SimpleRNN(args.input_dim, args.hidden, generator=0)
    x = torch.randn(args.batch, args.T, args.input_dim, generator=gen)
    y = torch.randn(args.batch, args.T, 1, generator=gen)
    return model, x, y


def tbptt_chunks(model: SimpleRNN, x: torch.Tensor, y: torch.Tensor, k: int):
    """Yield one loss per chunk of k steps; the state entering a chunk is detached (truncated BPTT)."""
    T = x.shape[1]
    s = model.initial_state(x.shape[0])
    for start in range(0, T, k):
        s = s.detach()
        states = []
        for t in range(start, min(start + k, T)):
            s = model.step(s, x[:, t])
            states.append(s)
        h = torch.stack(states, dim=1)
        yield (
            0.5
            * ((model.output(h) - y[:, start : start + len(states)]) ** 2)
            .sum(dim=2)
            .sum()
            / (x.shape[0] * T)
        )


def losses(
    variant: str,
    model: SimpleRNN,
    x: torch.Tensor,
    y: torch.Tensor,
    k: int,
):
    """The loss(es) of one training step; each is backpropagated before the next is built."""
    if variant == "last_full":
        yield lambda: sequence_loss(model, x, y, None, last_only=True)
    elif variant == "last_truncated":
        yield lambda: sequence_loss(model, x, y, k, last_only=True)
    elif variant == "all_full":
        yield lambda: sequence_loss(model, x, y)
    elif variant == "all_windows":
        yield lambda: sequence_loss(model, x, y, k)
    elif variant == "all_tbptt":
        chunks = tbptt_chunks(model, x, y, k)
        for _ in range(0, x.shape[1], k):
            yield lambda: next(chunks)
    else:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")


def saved_bytes(variant: str, model, x, y, k) -> int:
    """Largest total of distinct storages autograd saves for one backward pass of the step."""
    peak = 0
    for make_loss in losses(variant, model, x, y, k):
        storages: dict[int, int] = {}

        def pack(t: torch.Tensor) -> torch.Tensor:
            storage = t.untyped_storage()
            storages[storage.data_ptr()] = storage.nbytes()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = make_loss()
        peak = max(peak, sum(storages.values()))
        loss.backward()
    model.zero_grad(set_to_none=True)
    return peak


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def rss_growth_child(args) -> None:
    """Run in a subprocess: the largest growth of resident memory over one training step, in bytes."""
    model, x, y = setup(args)
    sequence_loss(
        model, x[:, :4], y[:, :4]
    ).backward()  # warm up torch's lazily loaded kernels
    model.zero_grad(set_to_none=True)
    before = _rss()
    peak, running = [before], [True]

    def poll() -> None:
        while running[0]:
            peak[0] = max(peak[0], _rss())
            time.sleep(0.0002)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    for make_loss in losses(args.child, model, x, y, args.k):
        make_loss().backward()
    running[0] = False
    poller.join()
    print(json.dumps({"rss": max(peak[0], _rss()) - before}))


def rss_growth(variant: str, args) -> int:
    cmd = [
        sys.executable,
        __file__,
        "--child",
        variant,
        "--T",
        str(args.T),
        "--k",
        str(args.k),
        "--hidden",
        str(args.hidden),
        "--batch",
        str(args.batch),
        "--input-dim",
        str(args.input_dim),
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["rss"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--T", type=int, default=2000)
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--input-dim", type=int, default=8)
    parser.add_argument(
        "--with-windows",
        action="store_true",
        help="also measure the batched k-step model (slow, 2 GB)",
    )
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        rss_growth_child(args)
        return
    model, x, y = setup(args)
    print(
        f"one training step of SimpleRNN(hidden {args.hidden}), batch {args.batch}, T {args.T}, k {args.k}; "
        "MB = 2^20 bytes"
    )
    print(f"{'variant':<62} {'saved MB':>9} {'RSS MB':>8}")
    results = {}
    labels = {
        "last_full": "last-step loss, full BPTT (sequence_loss k=None)",
        "last_truncated": f"last-step loss, truncated k={args.k} (sequence_loss k={args.k})",
        "all_full": "every-step loss, full BPTT (sequence_loss)",
        "all_tbptt": f"every-step loss, truncated BPTT in chunks of k={args.k}",
        "all_windows": f"(reference) every-step loss, batched k-step model, k={args.k}",
    }
    for variant in VARIANTS if args.with_windows else VARIANTS[:-1]:
        results[variant] = (
            saved_bytes(variant, model, x, y, args.k),
            rss_growth(variant, args),
        )
        saved, rss = results[variant]
        print(f"{labels[variant]:<62} {saved / 2**20:9.2f} {rss / 2**20:8.1f}")
    print()
    print(f"{'ratio (truncated / full; target <= 0.1)':<62} {'saved':>9} {'RSS':>8}")
    for num, den, label in (
        (
            "last_truncated",
            "last_full",
            "last-step loss (chapter 10)",
        ),
        (
            "all_tbptt",
            "all_full",
            "every-step loss, truncated BPTT",
        ),
        (
            "all_windows",
            "all_full",
            "(reference) batched k-step model",
        ),
    ):
        if num not in results:
            continue
        saved = results[num][0] / results[den][0]
        rss = results[num][1] / max(results[den][1], 1)
        print(f"{label:<62} {saved:9.3f} {rss:8.3f}")


if __name__ == "__main__":
    main()
