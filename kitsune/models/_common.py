"""Shared helpers for the benchmark workloads: size scaling and deterministic init.

All weights are initialised on the CPU in fp32 from a ``torch.Generator`` seeded
by the caller, so a given ``(workload, scale, seed)`` yields bit-identical
parameters on every device (before the final dtype cast).
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = [
    "scaled",
    "scaled8",
    "init_linear",
    "init_conv",
    "init_norm",
    "randn",
]


def scaled(n: int, scale: float, minimum: int = 1) -> int:
    """``round(n * scale)`` clamped to ``>= minimum`` (exactly ``n`` at scale 1)."""
    return max(minimum, int(round(n * scale)))


def scaled8(n: int, scale: float, minimum: int = 8) -> int:
    """Like :func:`scaled` but rounded to a multiple of 8 (tensor-core friendly).

    Full-size widths in the spec are all multiples of 8, so scale 1.0 is exact.
    """
    return max(minimum, 8 * int(round(n * scale / 8)))


def randn(shape, gen: torch.Generator, std: float = 1.0) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, dtype=torch.float32) * std


@torch.no_grad()
def init_linear(lin: nn.Linear, gen: torch.Generator, gain: float = 1.0, bias_std: float = 0.02) -> None:
    """Weight ~ N(0, gain^2 / fan_in) (variance preserving), bias ~ N(0, bias_std^2)."""
    fan_in = lin.in_features
    lin.weight.copy_(randn(lin.weight.shape, gen, gain / math.sqrt(fan_in)))
    if lin.bias is not None:
        lin.bias.copy_(randn(lin.bias.shape, gen, bias_std))


@torch.no_grad()
def init_conv(conv: nn.Conv2d, gen: torch.Generator, gain: float = 1.0, bias_std: float = 0.02) -> None:
    fan_in = conv.in_channels // conv.groups * conv.kernel_size[0] * conv.kernel_size[1]
    conv.weight.copy_(randn(conv.weight.shape, gen, gain / math.sqrt(fan_in)))
    if conv.bias is not None:
        conv.bias.copy_(randn(conv.bias.shape, gen, bias_std))


@torch.no_grad()
def init_norm(weight: torch.Tensor, bias: torch.Tensor | None, gen: torch.Generator) -> None:
    """Norm affine params near identity but not trivially 1/0 (so they are exercised)."""
    weight.copy_(1.0 + randn(weight.shape, gen, 0.1))
    if bias is not None:
        bias.copy_(randn(bias.shape, gen, 0.1))
