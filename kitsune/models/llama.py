"""One Llama-3.2-1B-sized decoder layer, single decode step with a KV cache.

::

    h   = x + O(SDPA_gqa(q, cat(cache_k, k), cat(cache_v, v)))     q,k,v = QKV(RMSNorm(x))
    out = h + Down(SiLU(gate) * up)                                 gate,up = GateUp(RMSNorm(h))

Full size: hidden 2048, 32 query heads, 8 KV heads, head_dim 64, fused QKV
``Linear(2048 -> (32 + 2*8)*64)``, ``O: Linear(2048 -> 2048)``, fused
``GateUp: Linear(2048 -> 2*8192)``, ``Down: Linear(8192 -> 2048)``, all without
bias; KV cache buffers ``[b, 8, 1024, 64]``. Input ``x: [b, 1, 2048]``, output
``[b, 1, 2048]``. No rotary embedding (not part of the workload spec). By default the
forward is purely functional: the cache buffers are read, never written (the new
k/v are concatenated, so attention runs over ``cache_len + 1`` positions).

``kv_inplace=True`` is the form a real decode loop uses: the buffers have
``cache_len + 1`` slots, the forward takes the step's position ``pos`` (int64
``[1]``) besides ``x``, writes the new k/v row into slot ``pos`` of the buffers
(``index_copy_``, a buffer mutation) and attends over the slots ``<= pos`` (a
boolean mask). At ``pos = cache_len`` (the example input) it computes exactly what
the functional form does, and leaves the new row in the cache.

``LlamaModel`` is the whole decoder for one decode step (``llama1b_decode_b1``):
token embedding (tied with the lm_head), ``layers`` in-place layers, final RMSNorm,
lm_head over the vocabulary; inputs ``token [b, 1]`` and ``pos [1]``.

Scale: ``head_dim`` (64) and the GQA group size (4 query heads per KV head) are
fixed; the number of KV heads is ``max(1, round(8 * scale))`` and everything
follows from it (``n_heads = 4 * n_kv_heads``, ``hidden = 64 * n_heads``,
``intermediate = 4 * hidden``). ``cache_len`` is ``max(1, round(1024 * scale))``.
The batch ``b`` is not scaled (it is the workload variant).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ._common import init_linear, init_norm, randn, scaled


@dataclass(frozen=True)
class LlamaConfig:
    batch: int
    n_kv_heads: int = 8
    group: int = 4
    head_dim: int = 64
    cache_len: int = 1024
    eps: float = 1e-5
    kv_inplace: bool = False  # the cache is updated in place at slot pos (see the module doc)

    @property
    def n_heads(self) -> int:
        return self.n_kv_heads * self.group

    @property
    def hidden(self) -> int:
        return self.n_heads * self.head_dim

    @property
    def intermediate(self) -> int:
        return 4 * self.hidden

    @property
    def cache_slots(self) -> int:
        """Positions the cache buffers hold: the past ones, plus the step's own when it is written in place."""
        return self.cache_len + (1 if self.kv_inplace else 0)

    @classmethod
    def from_scale(cls, scale: float, batch: int, kv_inplace: bool = False) -> "LlamaConfig":
        return cls(batch=batch, n_kv_heads=scaled(8, scale), cache_len=scaled(1024, scale), kv_inplace=kv_inplace)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class LlamaDecodeLayer(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.cfg = cfg
        h, hd = cfg.hidden, cfg.head_dim
        self.attn_norm = RMSNorm(h, cfg.eps)
        self.qkv = nn.Linear(h, (cfg.n_heads + 2 * cfg.n_kv_heads) * hd, bias=False)
        self.o = nn.Linear(cfg.n_heads * hd, h, bias=False)
        self.mlp_norm = RMSNorm(h, cfg.eps)
        self.gate_up = nn.Linear(h, 2 * cfg.intermediate, bias=False)
        self.down = nn.Linear(cfg.intermediate, h, bias=False)
        cache_shape = (cfg.batch, cfg.n_kv_heads, cfg.cache_slots, hd)
        self.register_buffer("cache_k", torch.zeros(cache_shape))
        self.register_buffer("cache_v", torch.zeros(cache_shape))

    def init_weights(self, gen: torch.Generator) -> None:
        init_norm(self.attn_norm.weight, None, gen)
        init_linear(self.qkv, gen)
        init_linear(self.o, gen)
        init_norm(self.mlp_norm.weight, None, gen)
        init_linear(self.gate_up, gen)
        init_linear(self.down, gen, gain=2.0)
        with torch.no_grad():
            # past keys/values have the same O(1) magnitude as freshly projected ones
            self.cache_k.copy_(randn(self.cache_k.shape, gen))
            self.cache_v.copy_(randn(self.cache_v.shape, gen))

    def forward(self, x: torch.Tensor, pos: torch.Tensor | None = None) -> torch.Tensor:
        cfg = self.cfg
        b, s, _ = x.shape
        nh, nkv, hd = cfg.n_heads, cfg.n_kv_heads, cfg.head_dim
        qkv = self.qkv(self.attn_norm(x))  # [b, s, (nh + 2 nkv) hd]
        q = qkv[..., : nh * hd].view(b, s, nh, hd).transpose(1, 2)  # [b, nh, s, hd]
        k = qkv[..., nh * hd : (nh + nkv) * hd].view(b, s, nkv, hd).transpose(1, 2)
        v = qkv[..., (nh + nkv) * hd :].view(b, s, nkv, hd).transpose(1, 2)
        mask = None
        if cfg.kv_inplace:
            if pos is None:
                raise ValueError("a kv_inplace layer needs the step's position pos (int64 [1])")
            self.cache_k.index_copy_(2, pos, k)  # the new row, written into the cache
            self.cache_v.index_copy_(2, pos, v)
            k, v = self.cache_k, self.cache_v  # [b, nkv, cache_len + 1, hd]
            mask = (torch.arange(cfg.cache_slots, device=x.device) <= pos).view(1, -1)  # [s, slots]: written ones
        else:
            k = torch.cat([self.cache_k, k], dim=2)  # [b, nkv, cache_len + s, hd]
            v = torch.cat([self.cache_v, v], dim=2)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)  # [b, nh, s, hd]
        a = a.transpose(1, 2).reshape(b, s, nh * hd)
        h = x + self.o(a)
        gu = self.gate_up(self.mlp_norm(h))
        gate, up = gu[..., : cfg.intermediate], gu[..., cfg.intermediate :]
        return h + self.down(F.silu(gate) * up)


def example_inputs(cfg: LlamaConfig, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
    x = randn((cfg.batch, 1, cfg.hidden), gen)
    return (x, torch.tensor([cfg.cache_len])) if cfg.kv_inplace else (x,)


@dataclass(frozen=True)
class LlamaModelConfig:
    layer: LlamaConfig
    layers: int = 16
    vocab: int = 128256

    @classmethod
    def from_scale(cls, scale: float, batch: int = 1) -> "LlamaModelConfig":
        return cls(LlamaConfig.from_scale(scale, batch, kv_inplace=True), layers=scaled(16, scale, minimum=2),
                   vocab=scaled(128256, scale))


class LlamaModel(nn.Module):
    """Embedding (tied lm_head) -> ``layers`` decoder layers with in-place KV caches -> RMSNorm -> logits."""

    def __init__(self, cfg: LlamaModelConfig):
        super().__init__()
        self.cfg = cfg
        h = cfg.layer.hidden
        self.embed = nn.Embedding(cfg.vocab, h)
        self.layers = nn.ModuleList([LlamaDecodeLayer(cfg.layer) for _ in range(cfg.layers)])
        self.norm = RMSNorm(h, cfg.layer.eps)

    def init_weights(self, gen: torch.Generator) -> None:
        with torch.no_grad():
            # std 1/sqrt(hidden): the tied lm_head's logits are O(1) (the first layer's norm rescales the input)
            self.embed.weight.copy_(randn(self.embed.weight.shape, gen, self.cfg.layer.hidden ** -0.5))
        for layer in self.layers:
            layer.init_weights(gen)
        init_norm(self.norm.weight, None, gen)

    def forward(self, token: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        x = self.embed(token)  # [b, 1, hidden]
        for layer in self.layers:
            x = layer(x, pos)
        # the lm_head is the embedding matrix (tied): logits [b, 1, vocab]
        return F.linear(self.norm(x), self.embed.weight)


def model_example_inputs(cfg: LlamaModelConfig, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
    tok = torch.randint(0, cfg.vocab, (cfg.layer.batch, 1), generator=gen)
    return tok, torch.tensor([cfg.layer.cache_len])
