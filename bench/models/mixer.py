"""MLP-Mixer B/16 (Tolstikhin et al.: a 16 x 16 patch embedding as a strided Conv2d, 12 mixer layers at d = 768, each
a pre-LayerNorm token-mixing MLP across the 196 patches (transpose, Linear(196, 384), GELU, Linear(384, 196),
transpose back) and a pre-LayerNorm channel MLP (Linear(768, 3072), GELU, Linear(3072, 768)), both residual; a final
LayerNorm, mean over tokens and a linear head), inference, random weights, in plain torch: a model outside the suite
for ``python -m kitsune.bench --workloads bench/models/mixer.py``.

``make_model``: batch 8 at 224 x 224 (196 tokens), 1000 classes; ``small``: 2 layers at d = 64, token MLP 32,
channel MLP 128, batch 2 at 32 x 32 with patch 8 (16 tokens), 10 classes, for the CPU (Triton's interpreter).
"""

import os
import sys

import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _image import image_model  # noqa: E402  (bench/models/_image.py)


class MixerLayer(nn.Module):
    def __init__(self, tokens: int, d: int, token_mlp: int, channel_mlp: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d, eps=1e-6)
        self.tok1 = nn.Linear(tokens, token_mlp)
        self.tok2 = nn.Linear(token_mlp, tokens)
        self.ln2 = nn.LayerNorm(d, eps=1e-6)
        self.ch1 = nn.Linear(d, channel_mlp)
        self.ch2 = nn.Linear(channel_mlp, d)

    def forward(self, x):  # x: (b, tokens, d)
        y = self.ln1(x).transpose(1, 2)  # (b, d, tokens)
        x = x + self.tok2(F.gelu(self.tok1(y))).transpose(1, 2)
        return x + self.ch2(F.gelu(self.ch1(self.ln2(x))))


class Mixer(nn.Module):
    def __init__(self, size: int, patch: int, layers: int, d: int, token_mlp: int, channel_mlp: int, classes: int):
        super().__init__()
        tokens = (size // patch) ** 2
        self.patch = nn.Conv2d(3, d, patch, stride=patch)
        self.layers = nn.Sequential(*[MixerLayer(tokens, d, token_mlp, channel_mlp) for _ in range(layers)])
        self.ln = nn.LayerNorm(d, eps=1e-6)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        y = self.patch(x).flatten(2).transpose(1, 2)  # (b, tokens, d)
        y = self.ln(self.layers(y))
        return self.head(y.mean(dim=1))


def _build(size, patch, layers, d, token_mlp, channel_mlp, classes, batch, seed):
    return image_model(lambda: Mixer(size, patch, layers, d, token_mlp, channel_mlp, classes), batch, size, seed)


def make_model(seed: int = 0):
    return _build(224, 16, 12, 768, 384, 3072, 1000, 8, seed)


def small(seed: int = 0):
    return _build(32, 8, 2, 64, 32, 128, 10, 2, seed)
