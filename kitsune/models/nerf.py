"""NeRF MLP (Mildenhall et al.), density + RGB head folded into one output layer.

8 ``Linear`` layers of width 256 each followed by ReLU; the 63-feature input
(positionally encoded xyz) is concatenated back in before the layer with 0-based
index 4, which therefore takes ``256 + 63`` inputs (``cat([h, x], -1)``); the
output layer is ``Linear(256 -> 4)`` (no activation). ``x: [P, 63] -> [P, 4]``.

Scale: the width (256) is scaled to a multiple of 8 (min 8) and the number of
points ``P`` (65536) is scaled (min 1); depth 8, skip position, 63 input and 4
output features are fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ._common import init_linear, randn, scaled, scaled8


@dataclass(frozen=True)
class NeRFConfig:
    points: int = 65536
    width: int = 256
    in_features: int = 63
    out_features: int = 4
    depth: int = 8
    skip: int = 4  # layer index whose input is cat([h, x])

    @classmethod
    def from_scale(cls, scale: float, points: int) -> "NeRFConfig":
        return cls(points=scaled(points, scale), width=scaled8(256, scale))


class NeRFMLP(nn.Module):
    def __init__(self, cfg: NeRFConfig):
        super().__init__()
        self.cfg = cfg
        w = cfg.width

        def fan_in(i: int) -> int:
            if i == 0:
                return cfg.in_features
            return w + cfg.in_features if i == cfg.skip else w

        self.layers = nn.ModuleList(nn.Linear(fan_in(i), w) for i in range(cfg.depth))
        self.out = nn.Linear(w, cfg.out_features)

    def init_weights(self, gen: torch.Generator) -> None:
        for lin in self.layers:
            init_linear(lin, gen, gain=2**0.5)
        init_linear(self.out, gen)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        for i, lin in enumerate(self.layers):
            if i == self.cfg.skip:
                h = torch.cat([h, x], dim=-1)
            h = F.relu(lin(h))
        return self.out(h)


def example_inputs(cfg: NeRFConfig, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
    return (randn((cfg.points, cfg.in_features), gen),)
