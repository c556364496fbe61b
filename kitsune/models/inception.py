"""GoogLeNet-style Inception block on 256 channels (inception 3b-like widths).

Branches on ``x [B, 256, 28, 28]`` (all convs with bias, "same" padding):

1. ``conv1x1 -> 64``
2. ``conv1x1 -> 96``, ReLU, ``conv3x3 -> 128``
3. ``conv1x1 -> 16``, ReLU, ``conv5x5 -> 32``
4. ``maxpool 3x3 stride 1 pad 1``, ``conv1x1 -> 32``

then ``cat`` along channels (64+128+32+32 = 256) and ReLU.

Scale: every branch width is scaled (``round(c * scale)``, min 1) and the input
channel count is the sum of the scaled branch outputs (so input and output
channels stay equal, 256 at scale 1); the spatial size (28) is scaled (min 4).
The batch ``B`` (8) is not scaled.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ._common import init_conv, randn, scaled


@dataclass(frozen=True)
class InceptionConfig:
    batch: int = 8
    size: int = 28
    c1: int = 64
    c3r: int = 96
    c3: int = 128
    c5r: int = 16
    c5: int = 32
    cp: int = 32

    @property
    def channels(self) -> int:
        return self.c1 + self.c3 + self.c5 + self.cp

    @classmethod
    def from_scale(cls, scale: float, batch: int) -> "InceptionConfig":
        s = lambda c: scaled(c, scale)  # noqa: E731
        return cls(
            batch=batch, size=scaled(28, scale, minimum=4),
            c1=s(64), c3r=s(96), c3=s(128), c5r=s(16), c5=s(32), cp=s(32),
        )


class InceptionBlock(nn.Module):
    def __init__(self, cfg: InceptionConfig):
        super().__init__()
        self.cfg = cfg
        c = cfg.channels
        self.b1 = nn.Conv2d(c, cfg.c1, 1)
        self.b2_reduce = nn.Conv2d(c, cfg.c3r, 1)
        self.b2 = nn.Conv2d(cfg.c3r, cfg.c3, 3, padding=1)
        self.b3_reduce = nn.Conv2d(c, cfg.c5r, 1)
        self.b3 = nn.Conv2d(cfg.c5r, cfg.c5, 5, padding=2)
        self.b4 = nn.Conv2d(c, cfg.cp, 1)

    def init_weights(self, gen: torch.Generator) -> None:
        for conv in (self.b1, self.b2_reduce, self.b2, self.b3_reduce, self.b3, self.b4):
            init_conv(conv, gen, gain=2**0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y1 = self.b1(x)
        y2 = self.b2(F.relu(self.b2_reduce(x)))
        y3 = self.b3(F.relu(self.b3_reduce(x)))
        y4 = self.b4(F.max_pool2d(x, kernel_size=3, stride=1, padding=1))
        return F.relu(torch.cat([y1, y2, y3, y4], dim=1))


def example_inputs(cfg: InceptionConfig, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
    return (randn((cfg.batch, cfg.channels, cfg.size, cfg.size), gen),)
