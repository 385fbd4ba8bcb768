"""Shared pytest configuration of the machinery's tests: a non-interactive matplotlib backend."""

import matplotlib

matplotlib.use("Agg")
