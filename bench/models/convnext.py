"""ConvNeXt-T (Liu et al. 2022, "A ConvNet for the 2020s"), inference, random weights, written out in plain torch so
that it needs no timm or torchvision: a model outside the suite for
``python -m kitsune.bench --workloads bench/models/convnext.py``.

Stem Conv2d(3, 96, 4, stride 4) + LayerNorm over channels; four stages of depths (3, 3, 9, 3) and widths
(96, 192, 384, 768); each block: depthwise 7x7 conv -> permute to (N, H, W, C) -> LayerNorm -> Linear(C, 4C) -> GELU
(erf) -> Linear(4C, C) -> layer scale -> permute back -> residual add; between stages LayerNorm over channels
(permute / LayerNorm / permute) + Conv2d(C, 2C, 2, stride 2); global average pool, LayerNorm, Linear(768, classes).
Stochastic depth is left out (identity at inference). The layer scale is drawn uniform in 0.1..1.0 (not the paper's
1e-6 init) so that the block branches matter numerically.

``make_model``: ConvNeXt-T (about 28.6 M parameters, 4.5 GMAC per image), 1000 classes, batch 16 at 224 x 224;
``small``: one block per stage, widths (16, 32, 64, 128), 10 classes, batch 2 at 32 x 32, for the CPU (Triton's
interpreter).
"""

import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _image import image_model  # noqa: E402  (bench/models/_image.py)


class ChannelsLN(nn.Module):
    """LayerNorm over the channels of an (N, C, H, W) tensor, as permute / LayerNorm / permute."""

    def __init__(self, c: int):
        super().__init__()
        self.ln = nn.LayerNorm(c, eps=1e-6)

    def forward(self, x):
        return self.ln(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class Block(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.dwconv = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c, eps=1e-6)
        self.pwconv1 = nn.Linear(c, 4 * c)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * c, c)
        self.gamma = nn.Parameter(torch.empty(c).uniform_(0.1, 1.0))

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.pwconv2(self.act(self.pwconv1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self, depths=(3, 3, 9, 3), widths=(96, 192, 384, 768), classes: int = 1000):
        super().__init__()
        self.downsample = nn.ModuleList([nn.Sequential(nn.Conv2d(3, widths[0], 4, 4), ChannelsLN(widths[0]))])
        for i in range(3):
            self.downsample.append(nn.Sequential(ChannelsLN(widths[i]), nn.Conv2d(widths[i], widths[i + 1], 2, 2)))
        self.stages = nn.ModuleList([nn.Sequential(*[Block(w) for _ in range(d)]) for d, w in zip(depths, widths)])
        self.norm = nn.LayerNorm(widths[-1], eps=1e-6)
        self.head = nn.Linear(widths[-1], classes)

    def forward(self, x):
        for down, stage in zip(self.downsample, self.stages):
            x = stage(down(x))
        return self.head(self.norm(x.mean(dim=(2, 3))))


def _build(depths, widths, classes: int, batch: int, size: int, seed: int):
    return image_model(lambda: ConvNeXt(depths, widths, classes), batch, size, seed)


def make_model(seed: int = 0):
    return _build((3, 3, 9, 3), (96, 192, 384, 768), 1000, 16, 224, seed)


def small(seed: int = 0):
    return _build((1, 1, 1, 1), (16, 32, 64, 128), 10, 2, 32, seed)
