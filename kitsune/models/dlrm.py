"""DLRM (MLPerf-style) forward pass.

* bottom MLP ``13 -> 512 -> 256 -> 64`` with ReLU after every layer,
* 8 ``EmbeddingBag(100000, 64, mode="sum")`` tables, each looked up with a
  ``[B, 20]`` index tensor (20 indices per bag); the indices of all tables come
  as one ``int64`` tensor ``[8, B, 20]``,
* dot interaction: ``Z = stack([bottom, emb_0..emb_7]) : [B, 9, 64]``,
  ``Z @ Z^T : [B, 9, 9]``, strict upper triangle (36 values, ``torch.triu_indices``
  order) gathered with a constant index buffer, concatenated after the bottom
  output -> ``[B, 100]``,
* top MLP ``100 -> 512 -> 256 -> 1`` with ReLU between layers (raw logit out).

The triangle is gathered as ``bmm(Z, Z^T).reshape(B, 81).index_select(1, tri_idx)``
with ``tri_idx = li * 9 + lj`` (``li, lj = torch.triu_indices(9, 9, 1)``), a
registered ``int64`` buffer, so the exported graph uses ``index_select`` rather
than advanced indexing (``aten.index.Tensor``).

Scale: the bottom/top hidden widths (512, 256) and the embedding dim (64) are
scaled to multiples of 8 (min 8); the rows per table (100000) are scaled (min
16); the batch ``B`` (2048) is scaled (min 1). Fixed: 13 dense features, 8
tables, 20 indices per bag, so always 36 interaction terms.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ._common import init_linear, randn, scaled, scaled8


@dataclass(frozen=True)
class DLRMConfig:
    batch: int = 2048
    dense_in: int = 13
    bottom: tuple[int, ...] = (512, 256)
    emb_dim: int = 64
    num_tables: int = 8
    rows: int = 100000
    bag: int = 20
    top: tuple[int, ...] = (512, 256)

    @property
    def num_vectors(self) -> int:
        return self.num_tables + 1

    @property
    def num_pairs(self) -> int:
        n = self.num_vectors
        return n * (n - 1) // 2

    @property
    def top_in(self) -> int:
        return self.emb_dim + self.num_pairs

    @classmethod
    def from_scale(cls, scale: float, batch: int) -> "DLRMConfig":
        return cls(
            batch=scaled(batch, scale),
            bottom=(scaled8(512, scale), scaled8(256, scale)),
            emb_dim=scaled8(64, scale),
            rows=scaled(100000, scale, minimum=16),
            top=(scaled8(512, scale), scaled8(256, scale)),
        )


class DLRM(nn.Module):
    def __init__(self, cfg: DLRMConfig):
        super().__init__()
        self.cfg = cfg
        dims = (cfg.dense_in, *cfg.bottom, cfg.emb_dim)
        self.bottom = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.emb = nn.ModuleList(
            nn.EmbeddingBag(cfg.rows, cfg.emb_dim, mode="sum") for _ in range(cfg.num_tables)
        )
        dims = (cfg.top_in, *cfg.top, 1)
        self.top = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.register_buffer("tri_idx", torch.zeros(cfg.num_pairs, dtype=torch.int64))
        self._fill_tri_idx()

    @torch.no_grad()
    def _fill_tri_idx(self) -> None:
        if self.tri_idx.is_meta:
            return
        n = self.cfg.num_vectors
        li, lj = torch.triu_indices(n, n, offset=1)
        self.tri_idx.copy_(li * n + lj)

    def init_weights(self, gen: torch.Generator) -> None:
        cfg = self.cfg
        for i, lin in enumerate(self.bottom):
            # last bottom layer: smaller gain so its dot products match the embeddings'
            init_linear(lin, gen, gain=2**0.5 if i + 1 < len(self.bottom) else 0.5)
        with torch.no_grad():
            for e in self.emb:
                # bag sum of `bag` rows -> per-component std emb_dim**-0.25, so the
                # pairwise dot products are O(1)
                e.weight.copy_(randn(e.weight.shape, gen, (cfg.bag**-0.5) * cfg.emb_dim**-0.25))
        for i, lin in enumerate(self.top):
            init_linear(lin, gen, gain=2**0.5 if i + 1 < len(self.top) else 1.0)
        self._fill_tri_idx()

    def forward(self, dense: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        x = dense
        for lin in self.bottom:
            x = F.relu(lin(x))  # [B, D]
        vecs = [x] + [e(indices[t]) for t, e in enumerate(self.emb)]
        z = torch.stack(vecs, dim=1)  # [B, 9, D]
        zz = torch.bmm(z, z.transpose(1, 2))  # [B, 9, 9]
        n = self.cfg.num_vectors
        inter = zz.reshape(zz.shape[0], n * n).index_select(1, self.tri_idx)  # [B, 36]
        y = torch.cat([x, inter], dim=1)  # [B, D + 36]
        for i, lin in enumerate(self.top):
            y = lin(y)
            if i + 1 < len(self.top):
                y = F.relu(y)
        return y  # [B, 1]


def example_inputs(cfg: DLRMConfig, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
    dense = randn((cfg.batch, cfg.dense_in), gen)
    indices = torch.randint(0, cfg.rows, (cfg.num_tables, cfg.batch, cfg.bag), generator=gen, dtype=torch.int64)
    return dense, indices
