"""Shared pytest configuration: a non-interactive matplotlib backend.

Threads are not set here: torch takes them from ``OMP_NUM_THREADS`` (the Makefile's, one
by default; ARCHITECTURE.md, "Threads").
"""

import matplotlib

matplotlib.use("Agg")
