"""One MeshGraphNet (Pfaff et al.) message-passing step, latent size 128.

::

    m     = LN(Lin(ReLU(Lin(cat(x[src], x[dst], e)))))    edge MLP 384 -> 128 -> 128
    agg   = zeros(N, 128).index_add(0, dst, m)             sum of messages per receiver
    n     = LN(Lin(ReLU(Lin(cat(x, agg)))))                node MLP 256 -> 128 -> 128
    return x + n, e + m

Inputs: ``x [N, 128]``, ``e [E, 128]``, ``src, dst [E]`` (int64, in ``[0, N)``);
full size ``N = 10000``, ``E = 60000``. Gathers use ``index_select``; the
scatter-sum is an out-of-place ``index_add``.

Scale: the latent size (128) is scaled to a multiple of 8 (min 8); ``N`` and
``E`` are scaled (min 2 and 1), keeping the 6 edges/node ratio.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ._common import init_linear, init_norm, randn, scaled, scaled8


@dataclass(frozen=True)
class MGNConfig:
    nodes: int = 10000
    edges: int = 60000
    latent: int = 128

    @classmethod
    def from_scale(cls, scale: float, nodes: int, edges: int) -> "MGNConfig":
        return cls(nodes=scaled(nodes, scale, minimum=2), edges=scaled(edges, scale), latent=scaled8(128, scale))


class MLPBlock(nn.Module):
    """Linear -> ReLU -> Linear -> LayerNorm."""

    def __init__(self, d_in: int, d: int):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d)
        self.fc2 = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def init_weights(self, gen: torch.Generator) -> None:
        init_linear(self.fc1, gen, gain=2**0.5)
        init_linear(self.fc2, gen)
        init_norm(self.norm.weight, self.norm.bias, gen)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.fc2(F.relu(self.fc1(x))))


class MeshGraphNetStep(nn.Module):
    def __init__(self, cfg: MGNConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.latent
        self.edge_mlp = MLPBlock(3 * d, d)
        self.node_mlp = MLPBlock(2 * d, d)

    def init_weights(self, gen: torch.Generator) -> None:
        self.edge_mlp.init_weights(gen)
        self.node_mlp.init_weights(gen)

    def forward(
        self, x: torch.Tensor, e: torch.Tensor, src: torch.Tensor, dst: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        m = self.edge_mlp(torch.cat([x.index_select(0, src), x.index_select(0, dst), e], dim=-1))
        agg = torch.zeros_like(x).index_add(0, dst, m)
        n = self.node_mlp(torch.cat([x, agg], dim=-1))
        return x + n, e + m


def example_inputs(cfg: MGNConfig, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
    x = randn((cfg.nodes, cfg.latent), gen)
    e = randn((cfg.edges, cfg.latent), gen)
    src = torch.randint(0, cfg.nodes, (cfg.edges,), generator=gen, dtype=torch.int64)
    dst = torch.randint(0, cfg.nodes, (cfg.edges,), generator=gen, dtype=torch.int64)
    return x, e, src, dst
