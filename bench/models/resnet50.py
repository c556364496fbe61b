"""ResNet-50 v1.5 (He et al., torchvision's ``resnet50`` layout), inference, random weights, written out in plain
torch so that it needs no torchvision: a model outside the suite for
``python -m kitsune.bench --workloads bench/models/resnet50.py``.

Stem Conv 7x7 stride 2 to 64 channels + BN + ReLU, max pool 3x3 stride 2; four stages of (3, 4, 6, 3) bottleneck
blocks of widths 64, 128, 256, 512 and expansion 4, each a 1x1 conv + BN + ReLU, a 3x3 conv (v1.5: the stage's
stride 2 here, on its first block, from the second stage on) + BN + ReLU, a 1x1 conv to 4 x width + BN, a residual
(through a 1x1 conv with the block's stride + BN on each stage's first block) and a ReLU; global average pool,
Linear(2048, classes).

``make_model``: 1000 classes, batch 32 at 224 x 224 (about 25.6 M parameters, 4.1 GMAC per image); ``small``: every
width divided by 8 (stem 8, stages 8 / 16 / 32 / 64, so 256 features), at most 2 blocks a stage (so 1x1 and 3x3
convs, strided and not, downsample and identity residuals, the max pool all remain), 10 classes, batch 2 at 32 x 32,
for the CPU (Triton's interpreter).
"""

import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _image import conv_bn, image_model  # noqa: E402  (bench/models/_image.py)

BLOCKS = (3, 4, 6, 3)
EXPANSION = 4


class Bottleneck(nn.Module):
    def __init__(self, cin: int, width: int, stride: int):
        super().__init__()
        cout = width * EXPANSION
        self.conv = nn.Sequential(conv_bn(cin, width, 1, act=nn.ReLU), conv_bn(width, width, 3, stride, act=nn.ReLU),
                                  conv_bn(width, cout, 1, act=None))
        self.down = None
        if stride != 1 or cin != cout:
            self.down = conv_bn(cin, cout, 1, stride, act=None)

    def forward(self, x):
        return torch.relu(self.conv(x) + (x if self.down is None else self.down(x)))


class ResNet50(nn.Module):
    def __init__(self, width: int = 64, classes: int = 1000, max_repeats: int = 6):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, width, 7, 2, act=nn.ReLU), nn.MaxPool2d(3, 2, 1))
        layers, cin = [], width
        for i, n in enumerate(BLOCKS):
            w = width << i
            for j in range(min(n, max_repeats)):
                layers.append(Bottleneck(cin, w, 2 if i > 0 and j == 0 else 1))
                cin = w * EXPANSION
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(self.layers(self.stem(x)).mean(dim=(2, 3)))


def _build(width: int, classes: int, max_repeats: int, batch: int, size: int, seed: int):
    return image_model(lambda: ResNet50(width, classes, max_repeats), batch, size, seed)


def make_model(seed: int = 0):
    return _build(64, 1000, 6, 32, 224, seed)


def small(seed: int = 0):
    return _build(8, 10, 2, 2, 32, seed)
