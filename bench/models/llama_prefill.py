"""A Llama-3.2-1B-shaped decoder stack doing prefill (d = 2048, 32 query heads, 8 KV heads (GQA) x 64, SwiGLU MLP
8192, RMSNorm eps 1e-5, rotary embeddings with theta 500000 and Llama 3's frequency scaling), random weights, in
plain torch: a layer-stack benchmark outside the suite for
``python -m kitsune.bench --workloads bench/models/llama_prefill.py``.

Hugging Face's layout: separate ``q / k / v`` and ``gate / up`` projections (``kitsune-merge-siblings`` may merge
them), no biases. Input: token ids through the full ``nn.Embedding(128256, 2048)`` (a gather); attention is
``F.scaled_dot_product_attention(is_causal=True, enable_gqa=True)`` over the whole sequence (no cache in or out).
The rotary ``cos`` / ``sin`` tables ``[tokens, head_dim]`` are precomputed buffers (positions ``0 .. tokens - 1``),
so the bf16 cast rounds them once rather than the angles. The output is the final RMSNorm's hidden states
``[b, tokens, 2048]``: no lm_head.

``make_model``: 4 layers, batch 1 x 1024 tokens; ``small``: 2 layers at d = 64 (4 heads, 2 KV heads, MLP 128,
vocab 256), batch 2 x 16, for the CPU (Triton's interpreter).
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def _rope_tables(head_dim: int, tokens: int, theta: float):
    """cos / sin ``[tokens, head_dim]`` (halves repeated, for ``rotate_half``), with Llama 3's frequency scaling
    (factor 32, low / high frequency factors 1 / 4, original context 8192)."""
    inv = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    factor, low, high, ctx = 32.0, 1.0, 4.0, 8192
    wavelen = 2 * math.pi / inv
    smooth = (ctx / wavelen - low) / (high - low)
    scaled = torch.where(wavelen > ctx / low, inv / factor, inv)
    mid = (wavelen <= ctx / low) & (wavelen >= ctx / high)
    inv = torch.where(mid, (1 - smooth) * inv / factor + smooth * inv, scaled)
    ang = torch.outer(torch.arange(tokens, dtype=torch.float64), inv)
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos().float(), ang.sin().float()


def _rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


class LlamaLayer(nn.Module):
    def __init__(self, d: int, heads: int, kv_heads: int, ffn: int, eps: float):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.attn_norm = RMSNorm(d, eps)
        self.q = nn.Linear(d, heads * self.hd, bias=False)
        self.k = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o = nn.Linear(heads * self.hd, d, bias=False)
        self.mlp_norm = RMSNorm(d, eps)
        self.gate = nn.Linear(d, ffn, bias=False)
        self.up = nn.Linear(d, ffn, bias=False)
        self.down = nn.Linear(ffn, d, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        y = self.attn_norm(x)
        q = self.q(y).view(b, t, self.heads, self.hd).transpose(1, 2)  # [b, heads, t, hd]
        k = self.k(y).view(b, t, self.kv_heads, self.hd).transpose(1, 2)  # [b, kv_heads, t, hd]
        v = self.v(y).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)  # [b, heads, t, hd]
        x = x + self.o(a.transpose(1, 2).reshape(b, t, self.heads * self.hd))
        y = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class LlamaPrefill(nn.Module):
    def __init__(self, layers, d, heads, kv_heads, ffn, vocab, tokens, eps=1e-5, theta=500000.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(LlamaLayer(d, heads, kv_heads, ffn, eps) for _ in range(layers))
        self.norm = RMSNorm(d, eps)
        cos, sin = _rope_tables(d // heads, tokens, theta)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)

    def forward(self, ids):
        t = ids.shape[1]
        cos, sin = self.cos[:t], self.sin[:t]
        x = self.embed(ids)  # [b, t, d]
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.norm(x)


def _build(layers, d, heads, kv_heads, ffn, vocab, batch, tokens, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.device("meta"):  # skip torch's default init (the embedding alone is 263M values at full size)
        m = LlamaPrefill(layers, d, heads, kv_heads, ffn, vocab, tokens)
    m = m.to_empty(device="cpu")
    cos, sin = _rope_tables(d // heads, tokens, 500000.0)
    with torch.no_grad():
        m.cos.copy_(cos)
        m.sin.copy_(sin)
        for name, p in m.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))  # near 1, not trivially 1
            else:
                p.copy_(0.02 * torch.randn(p.shape, generator=g))  # linears and the embedding
    ids = torch.randint(0, vocab, (batch, tokens), generator=g)
    return m.eval(), (ids,)


def make_model(seed: int = 0):
    return _build(4, 2048, 32, 8, 8192, 128256, 1, 1024, seed)


def small(seed: int = 0):
    return _build(2, 64, 4, 2, 128, 256, 2, 16, seed)
