"""The chapters' time budget, in units of a reference workload measured beside them.

CONTRIBUTING's budget (each chapter "executes in about a minute of CPU",
at most :data:`CHAPTER_LIMIT_S` seconds; the book :data:`BOOK_LIMIT_S`) is a
*performance figure*, not a property of the code: a chapter's CPU seconds grow on a
slower machine and on a busy one (shared caches, hyper-threads; two fresh-clone runs
of one commit differed by 15-40 % per chapter). So no step of ``make test`` compares a
time with it. Instead every execution run measures :func:`reference_workload` (a fixed
single-threaded torch training loop, shaped like the chapters' work: small matrices,
autograd, Python overhead) in one of its workers, and each chapter's record keeps the
ratio *chapter CPU / reference CPU*. The limits are expressed in those units, calibrated
on the project's reference machine (an idle two-core CI machine:
:data:`REFERENCE_SECONDS_ON_REFERENCE_MACHINE`), so "90 s on the reference machine" reads
the same on a laptop twice as fast. ``make test`` reports the ratios (the "Execution
times" appendix shows them); ``make bench`` enforces them
(``python -m booktools.exec_times --enforce``).

A ratio is not immune to load either (contention slows workloads unequally), which is
why even the ratio is a benchmark's verdict and not a test's.
"""

from __future__ import annotations

import time

#: Seconds of kernel CPU per chapter, and for the book, on the reference machine.
CHAPTER_LIMIT_S = 90.0
BOOK_LIMIT_S = 600.0
#: The guide's target per chapter (reported beside the limit, not enforced).
CHAPTER_TARGET_S = 60.0
#: CPU seconds of :func:`reference_workload` on the reference machine, as the executions
#: of ``make test`` measure it there: beside the first chapters and the unit tests, on an
#: idle two-core machine (fresh clone, 2 December 2026: chapter 11's 40.5 s of CPU were
#: 17.8 references). Alone on that machine it takes about 1.3-1.8 s: the unit is the one
#: the build measures, not the machine's best.
REFERENCE_SECONDS_ON_REFERENCE_MACHINE = 2.27
#: Steps of the reference loop.
REFERENCE_STEPS = 1000


def limit_units(seconds: float) -> float:
    """A limit given in reference-machine seconds, in reference units."""
    return seconds / REFERENCE_SECONDS_ON_REFERENCE_MACHINE


def reference_workload(steps: int = REFERENCE_STEPS) -> float:
    """Run the reference workload on one thread; return its CPU seconds (this process).

    A ReLU RNN (torch.nn.RNN, 16 inputs, 128 units) over 12 steps, batch 32, with a
    linear read-out, trained by SGD for ``steps`` steps: the size and kind of the
    chapters' work (Part I's lazy training and Part II's next-step models).
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        gen = torch.Generator().manual_seed(0)
        rnn = torch.nn.RNN(16, 128, nonlinearity="relu", batch_first=True)
        head = torch.nn.Linear(128, 1)
        with torch.no_grad():
            for p in [*rnn.parameters(), *head.parameters()]:
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
        params = [*rnn.parameters(), *head.parameters()]
        opt = torch.optim.SGD(params, lr=1e-3)
        x = torch.randn(32, 12, 16, generator=gen)
        y = torch.randn(32, 1, generator=gen)
        start = time.process_time()
        for _ in range(steps):
            opt.zero_grad()
            out, _ = rnn(x)
            loss = ((head(out[:, -1]) - y) ** 2).mean()
            loss.backward()
            opt.step()
        return time.process_time() - start
    finally:
        torch.set_num_threads(threads)


def is_stall(wall: float, cpu: float | None) -> bool:
    """Whether an execution waited far longer than it computed: wall > 3 x CPU + 10 s.

    On an idle machine an execution's wall time is its CPU time plus a few seconds of
    kernel start; a wall time far above that is a wait (a time-out waited out), reported
    as a warning. Under load the ratio says less: a warning, never
    a failure.
    """
    return cpu is not None and wall > 3 * cpu + 10


def main(argv: list[str] | None = None) -> int:
    """Print the reference workload's CPU seconds here (five runs) beside the calibration."""
    import argparse

    parser = argparse.ArgumentParser(
        description="the reference workload of the chapters' budget, measured here"
    )
    parser.add_argument("--runs", type=int, default=5, help="runs (default 5)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs: expected an integer >= 1, got {args.runs}")
    runs = sorted(reference_workload() for _ in range(args.runs))
    median = runs[len(runs) // 2]
    print(
        f"reference workload: {' '.join(f'{r:.3f}' for r in runs)} s CPU "
        f"(median {median:.3f}; on the reference machine "
        f"{REFERENCE_SECONDS_ON_REFERENCE_MACHINE:.3f}: this machine runs the chapters' "
        f"budget at {median / REFERENCE_SECONDS_ON_REFERENCE_MACHINE:.2f} x its time)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
