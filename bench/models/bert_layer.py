"""One BERT-base encoder layer (d = 768, 12 heads, FFN 3072, post-LayerNorm, GELU), inference, random weights, in
plain torch: a transformer outside the suite for ``python -m kitsune.bench --workloads bench/models/bert_layer.py``.
Its query / key / value projections are separate ``nn.Linear``s, as Hugging Face writes them
(``kitsune-merge-siblings`` makes them one); attention is ``F.scaled_dot_product_attention`` over the whole
sequence (prefill: no mask, no cache).

``make_model``: batch 8 x 512 tokens; ``small``: batch 2 x 16 tokens at d = 64, for the CPU (Triton's interpreter).
"""

import torch
import torch.nn.functional as F
from torch import nn


class BertLayer(nn.Module):
    def __init__(self, d: int, heads: int, ffn: int):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, ffn), nn.Linear(ffn, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x):
        b, t, d = x.shape

        def heads(y):
            return y.view(b, t, self.heads, d // self.heads).transpose(1, 2)

        a = F.scaled_dot_product_attention(heads(self.query(x)), heads(self.key(x)), heads(self.value(x)))
        x = self.ln1(x + self.out(a.transpose(1, 2).reshape(b, t, d)))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


def _build(d, heads, ffn, batch, tokens, seed):
    g = torch.Generator().manual_seed(seed)
    m = BertLayer(d, heads, ffn)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * (0.02 if p.dim() > 1 else 0.1))
        m.ln1.weight.add_(1.0)
        m.ln2.weight.add_(1.0)
    return m.eval(), (torch.randn(batch, tokens, d, generator=g),)


def make_model(seed: int = 0):
    return _build(768, 12, 3072, 8, 512, seed)


def small(seed: int = 0):
    return _build(64, 4, 128, 2, 16, seed)
