"""ViT-B/16 (Dosovitskiy et al., torchvision's ``vit_b_16`` structure: a 16 x 16 patch embedding as a strided Conv2d,
a learned class token prepended, learned position embedding, 12 pre-LayerNorm encoder layers of 12 heads at
d = 768 with an MLP of 3072 and exact (erf) GELU, a final LayerNorm and a linear head on the class token), inference,
random weights, written out in plain torch so that it needs no torchvision: a model outside the suite for
``python -m kitsune.bench --workloads bench/models/vit.py``. Attention is one fused ``Linear(d, 3 d)`` reshaped and
permuted to heads, then ``F.scaled_dot_product_attention`` (non-causal).

``make_model``: batch 8 at 224 x 224, 197 tokens (196 patches + class token: a sequence length that divides no tile),
1000 classes; ``small``: 2 layers at d = 64, 4 heads, MLP 256, batch 2 at 32 x 32 with patch 8 (17 tokens),
10 classes, for the CPU (Triton's interpreter).
"""

import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _image import image_model  # noqa: E402  (bench/models/_image.py)


class EncoderLayer(nn.Module):
    def __init__(self, d: int, heads: int, mlp: int):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d, eps=1e-6)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-6)
        self.fc1 = nn.Linear(d, mlp)
        self.fc2 = nn.Linear(mlp, d)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        qkv = self.qkv(self.ln1(x)).reshape(b, t, 3, h, d // h).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class ViT(nn.Module):
    def __init__(self, size: int, patch: int, layers: int, d: int, heads: int, mlp: int, classes: int):
        super().__init__()
        self.patch = nn.Conv2d(3, d, patch, stride=patch)
        tokens = (size // patch) ** 2 + 1
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, tokens, d) * 0.02)
        self.layers = nn.Sequential(*[EncoderLayer(d, heads, mlp) for _ in range(layers)])
        self.ln = nn.LayerNorm(d, eps=1e-6)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        y = self.patch(x).flatten(2).transpose(1, 2)  # (b, patches, d)
        y = torch.cat([self.cls.expand(y.shape[0], -1, -1), y], dim=1) + self.pos
        y = self.ln(self.layers(y))
        return self.head(y[:, 0])


def _build(size, patch, layers, d, heads, mlp, classes, batch, seed):
    return image_model(lambda: ViT(size, patch, layers, d, heads, mlp, classes), batch, size, seed)


def make_model(seed: int = 0):
    return _build(224, 16, 12, 768, 12, 3072, 1000, 8, seed)


def small(seed: int = 0):
    return _build(32, 8, 2, 64, 4, 256, 10, 2, seed)
