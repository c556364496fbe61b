"""GPT-2 small (12 layers, d = 768, 12 heads, causal attention, pre-LayerNorm, tanh GELU), prefill of a batch of
token ids, random weights: the hand-written model of ``bench/compile_time.py`` (transformers' layout: ``Conv1D``
projections, one fused ``c_attn`` split into q / k / v) as a model outside the suite for
``python -m kitsune.bench --workloads bench/models/gpt2.py``.

``make_model``: 12 layers, batch 8 x 256 tokens; ``small``: 2 layers at d = 64, batch 2 x 16, for the CPU.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from compile_time import _handwritten_gpt2  # noqa: E402


def _build(n_layer, d, n_head, batch, tokens, seed):
    torch.manual_seed(seed)
    m = _handwritten_gpt2(n_layer, d, n_head, 50257 if d >= 256 else 512, 1024).eval()
    g = torch.Generator().manual_seed(seed)
    return m, (torch.randint(0, m.wte.num_embeddings, (batch, tokens), generator=g),)


def make_model(seed: int = 0):
    return _build(12, 768, 12, 8, 256, seed)


def small(seed: int = 0):
    return _build(2, 64, 4, 2, 16, seed)
