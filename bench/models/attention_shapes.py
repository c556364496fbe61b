"""Prefill attention alone (``F.scaled_dot_product_attention`` over bf16 q, k, v) at shapes outside the suite, for
``kitsune-tune bench/models/attention_shapes.py:NAME``: how the attention template's heuristic default compares
with its config space where the tuning database has no entry.

Factories (batch x heads x tokens x head dim, causal or not): ``bert512`` 8 x 12 x 512 x 64 (BERT-base's),
``gpt2_256c`` 8 x 12 x 256 x 64 causal (``gpt2.py``'s), ``short128`` 32 x 12 x 128 x 64, ``long2048c``
2 x 16 x 2048 x 128 causal (a Llama-sized prefill), ``long4096`` 1 x 32 x 4096 x 64, ``d128_512`` 8 x 16 x 512 x
128, ``llama1024c`` 1 x 32 x 1024 x 64 causal (``llama_prefill.py``'s, its 8 key / value heads repeated), ``d80_512c`` 4 x 32 x 512
x 80 causal (a head dim of no power of two: Phi-2's 80), ``d256_1024c`` 1 x 8 x 1024 x 256 causal (Gemma's head dim).
"""

import torch
import torch.nn.functional as F
from torch import nn


class _Attention(nn.Module):
    def __init__(self, causal: bool):
        super().__init__()
        self.causal = causal

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)


def _make(b: int, h: int, t: int, d: int, causal: bool, seed: int):
    g = torch.Generator().manual_seed(seed)
    return _Attention(causal).eval(), tuple(torch.randn(b, h, t, d, generator=g).to(torch.bfloat16) for _ in range(3))


def bert512(seed: int = 0):
    return _make(8, 12, 512, 64, False, seed)


def gpt2_256c(seed: int = 0):
    return _make(8, 12, 256, 64, True, seed)


def short128(seed: int = 0):
    return _make(32, 12, 128, 64, False, seed)


def long2048c(seed: int = 0):
    return _make(2, 16, 2048, 128, True, seed)


def long4096(seed: int = 0):
    return _make(1, 32, 4096, 64, False, seed)


def d128_512(seed: int = 0):
    return _make(8, 16, 512, 128, False, seed)


def llama1024c(seed: int = 0):
    return _make(1, 32, 1024, 64, True, seed)


def d80_512c(seed: int = 0):
    return _make(4, 32, 512, 80, True, seed)


def d256_1024c(seed: int = 0):
    return _make(1, 8, 1024, 256, True, seed)


def make_model(seed: int = 0):
    return bert512(seed)


def small(seed: int = 0):
    return _make(2, 2, 16, 16, True, seed)
