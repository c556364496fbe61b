"""An example model file for ``python -m kitsune.bench --workloads bench/models/tiny_mlp.py``.

The factory (default name ``make_model``) returns ``(module, example_inputs)``; taking ``seed`` lets the
harness draw fresh inputs from it for the correctness checks.
"""

import torch
from torch import nn


class TinyMLP(nn.Module):
    def __init__(self, d=256, h=1024):
        super().__init__()
        self.up = nn.Linear(d, h)
        self.down = nn.Linear(h, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(x + self.down(torch.nn.functional.gelu(self.up(x))))


def make_model(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(0)  # the weights stay the same whatever the seed: only the inputs change
    return TinyMLP(), (torch.randn(512, 256, generator=g),)


def small(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(0)
    return TinyMLP(32, 64), (torch.randn(16, 32, generator=g),)
