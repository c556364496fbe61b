"""Single linear layers at shapes outside the suite, bf16, for ``kitsune-tune bench/models/gemm_shapes.py:NAME``
(and the harness): how the gemm template's forms compare where the tuning database has no entry.

Factories ``sq4096`` (4096 x 4096 x 4096), ``wide_gelu`` (2048 rows, 2048 -> 8192, GELU), ``short512``
(512 rows, 4096 -> 4096), ``tall_narrow`` (8192 rows, 4096 -> 1024); weights and inputs seeded.
"""

import torch
from torch import nn


class _Linear(nn.Module):
    def __init__(self, k: int, n: int, act: bool):
        super().__init__()
        self.fc = nn.Linear(k, n)
        self.act = act

    def forward(self, x):
        y = self.fc(x)
        return torch.nn.functional.gelu(y) if self.act else y


def _make(m: int, k: int, n: int, act: bool, seed: int):
    torch.manual_seed(0)
    model = _Linear(k, n, act).to(torch.bfloat16).eval()
    g = torch.Generator().manual_seed(seed)
    return model, (torch.randn(m, k, generator=g).to(torch.bfloat16),)


def sq4096(seed: int = 0):
    return _make(4096, 4096, 4096, False, seed)


def wide_gelu(seed: int = 0):
    return _make(2048, 2048, 8192, True, seed)


def short512(seed: int = 0):
    return _make(512, 4096, 4096, False, seed)


def tall_narrow(seed: int = 0):
    return _make(8192, 4096, 1024, False, seed)


make_model = sq4096
