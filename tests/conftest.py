"""Shared pytest configuration: a non-interactive matplotlib backend and two torch threads."""

import matplotlib
import torch

matplotlib.use("Agg")
torch.set_num_threads(2)
