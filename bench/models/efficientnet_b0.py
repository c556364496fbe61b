"""EfficientNet-B0 (Tan & Le 2019, torchvision's ``efficientnet_b0`` layout), inference, random weights, written out
in plain torch so that it needs no torchvision or timm: a model outside the suite for
``python -m kitsune.bench --workloads bench/models/efficientnet_b0.py``.

Stem Conv 3x3 stride 2 to 32 channels + BN + SiLU; 16 MBConv blocks from the paper's table (e, k, s, c, n) =
(1,3,1,16,1), (6,3,2,24,2), (6,5,2,40,2), (6,3,2,80,3), (6,5,1,112,3), (6,5,2,192,4), (6,3,1,320,1), each a 1x1
expand + BN + SiLU (skipped when e = 1), a k x k depthwise conv (the stage's stride on its first block) + BN + SiLU,
a squeeze-excitation (global average pool, 1x1 conv with bias to max(1, block input channels // 4), SiLU, 1x1 conv
with bias back, sigmoid, multiply) and a 1x1 projection + BN, with a residual when the stride is 1 and the channels
match; 1x1 conv to 1280 + BN + SiLU, global average pool, Linear(1280, classes). Dropout and stochastic depth are
left out (identity at inference).

``make_model``: width 1.0, 1000 classes, batch 32 at 224 x 224 (about 5.3 M parameters, 0.4 GMAC per image);
``small``: width multiplier 0.25 (every channel count, the last 1280 included, divided by 4 with a floor of 8), at
most 2 blocks a stage (so 3x3 and 5x5 depthwise convs at strides 1 and 2, and residuals, all remain), 10 classes,
batch 2 at 32 x 32, for the CPU (Triton's interpreter).
"""

import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _image import conv_bn, image_model  # noqa: E402  (bench/models/_image.py)

CFG = ((1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3), (6, 5, 2, 192, 4),
       (6, 3, 1, 320, 1))




class SqueezeExcite(nn.Module):
    def __init__(self, c: int, squeeze: int):
        super().__init__()
        self.reduce = nn.Conv2d(c, squeeze, 1)
        self.expand = nn.Conv2d(squeeze, c, 1)

    def forward(self, x):
        s = nn.functional.silu(self.reduce(x.mean(dim=(2, 3), keepdim=True)))
        return x * torch.sigmoid(self.expand(s))


class MBConv(nn.Module):
    def __init__(self, cin: int, cout: int, k: int, stride: int, e: int):
        super().__init__()
        hidden = cin * e
        layers = [] if e == 1 else [conv_bn(cin, hidden, 1, act=nn.SiLU)]
        layers += [conv_bn(hidden, hidden, k, stride, groups=hidden, act=nn.SiLU),
                   SqueezeExcite(hidden, max(1, cin // 4)), conv_bn(hidden, cout, 1, act=None)]
        self.conv = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.conv(x)
        return x + y if self.residual else y


class EfficientNetB0(nn.Module):
    def __init__(self, width: float = 1.0, classes: int = 1000, max_repeats: int = 4):
        super().__init__()

        def ch(c):
            return max(8, int(c * width))

        cin = ch(32)
        layers = [conv_bn(3, cin, 3, 2, act=nn.SiLU)]
        for e, k, s, c, n in CFG:
            cout = ch(c)
            for i in range(min(n, max_repeats)):
                layers.append(MBConv(cin, cout, k, s if i == 0 else 1, e))
                cin = cout
        last = ch(1280)
        layers.append(conv_bn(cin, last, 1, act=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(last, classes)

    def forward(self, x):
        return self.classifier(self.features(x).mean(dim=(2, 3)))


def _build(width: float, classes: int, max_repeats: int, batch: int, size: int, seed: int):
    return image_model(lambda: EfficientNetB0(width, classes, max_repeats), batch, size, seed)


def make_model(seed: int = 0):
    return _build(1.0, 1000, 4, 32, 224, seed)


def small(seed: int = 0):
    return _build(0.25, 10, 2, 2, 32, seed)
