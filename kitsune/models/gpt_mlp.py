"""GPT-3 (175B) MLP block, one shard of 8-way tensor parallelism.

``Linear(12288 -> 6144, bias) -> GELU(erf) -> Linear(6144 -> 12288, bias)``
on ``x: [T, 12288]``.

Scale: ``d_model`` (12288) and ``d_ff`` (6144) are scaled and rounded to a
multiple of 8 (min 8); the token count ``T`` is scaled (min 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ._common import init_linear, randn, scaled, scaled8


@dataclass(frozen=True)
class GPTMLPConfig:
    tokens: int
    d_model: int = 12288
    d_ff: int = 6144  # 4 * 12288 / 8 (tensor-parallel shard)

    @classmethod
    def from_scale(cls, scale: float, tokens: int) -> "GPTMLPConfig":
        return cls(tokens=scaled(tokens, scale), d_model=scaled8(12288, scale), d_ff=scaled8(6144, scale))


class GPTMLP(nn.Module):
    def __init__(self, cfg: GPTMLPConfig):
        super().__init__()
        self.cfg = cfg
        self.fc1 = nn.Linear(cfg.d_model, cfg.d_ff, bias=True)
        self.act = nn.GELU(approximate="none")
        self.fc2 = nn.Linear(cfg.d_ff, cfg.d_model, bias=True)

    def init_weights(self, gen: torch.Generator) -> None:
        init_linear(self.fc1, gen)
        init_linear(self.fc2, gen, gain=1.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


def example_inputs(cfg: GPTMLPConfig, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
    return (randn((cfg.tokens, cfg.d_model), gen),)
