"""A language model's head: the final LayerNorm, the projection to the vocabulary (GPT-2's, tied to no embedding
here) and the log-probabilities over it, inference, random weights: a model outside the suite for ``python -m
kitsune.bench --workloads bench/models/lm_head.py``. Its log_softmax runs over rows of 50 257 logits, longer than
one tile holds (``kitsune-split-long-norms``: the maximum and the sum of exponentials a task of their own, the
normalisation elementwise).

``make_model``: batch 8 x 128 tokens of width 768 -> 50 257 log-probabilities (1024 rows); ``small``: 2 x 3 tokens of
width 16 -> 16 400 (rows still past 16 384), for the CPU (Triton's interpreter).
"""

import torch
from torch import nn


class LMHead(nn.Module):
    def __init__(self, width: int, vocab: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.proj = nn.Linear(width, vocab, bias=False)

    def forward(self, h):
        return torch.log_softmax(self.proj(self.norm(h)), -1)


def _build(batch: int, tokens: int, width: int, vocab: int, seed: int):
    torch.manual_seed(0)  # the weights stay the same whatever the seed: only the hidden states change
    m = LMHead(width, vocab).eval()
    g = torch.Generator().manual_seed(seed)
    return m, (torch.randn(batch, tokens, width, generator=g),)


def make_model(seed: int = 0):
    return _build(8, 128, 768, 50257, seed)


def small(seed: int = 0):
    return _build(2, 3, 16, 16400, seed)
