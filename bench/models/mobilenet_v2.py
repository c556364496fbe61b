"""MobileNetV2 (Sandler et al. 2018, torchvision's ``mobilenet_v2`` layout), inference, random weights, written out in
plain torch so that it needs no torchvision: a model outside the suite for
``python -m kitsune.bench --workloads bench/models/mobilenet_v2.py``.

Stem Conv 3x3 stride 2 to 32 channels + BN + ReLU6; 17 inverted-residual blocks from the paper's table
(t, c, n, s) = (1,16,1,1), (6,24,2,2), (6,32,3,2), (6,64,4,2), (6,96,3,1), (6,160,3,2), (6,320,1,1), each a 1x1 expand
+ BN + ReLU6 (skipped when t = 1), a 3x3 depthwise conv + BN + ReLU6 and a 1x1 projection + BN, with a residual when
the stride is 1 and the channels match; 1x1 conv to 1280 + BN + ReLU6, global average pool, Linear(1280, classes).
Dropout is left out (identity at inference).

``make_model``: width 1.0, 1000 classes, batch 32 at 224 x 224 (about 3.5 M parameters, 0.3 GMAC per image);
``small``: width multiplier 0.25 (every channel count, the last 1280 included, divided by 4 with a floor of 8),
10 classes, batch 2 at 32 x 32, for the CPU (Triton's interpreter).
"""

import os
import sys

from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _image import conv_bn, image_model  # noqa: E402  (bench/models/_image.py)

CFG = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))




class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, t: int):
        super().__init__()
        hidden = cin * t
        layers = [] if t == 1 else [conv_bn(cin, hidden, 1)]
        layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden), conv_bn(hidden, cout, 1, act=None)]
        self.conv = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.conv(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    def __init__(self, width: float = 1.0, classes: int = 1000):
        super().__init__()

        def ch(c):
            return max(8, int(c * width))

        cin = ch(32)
        layers = [conv_bn(3, cin, 3, 2)]
        for t, c, n, s in CFG:
            cout = ch(c)
            for i in range(n):
                layers.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                cin = cout
        last = ch(1280)
        layers.append(conv_bn(cin, last, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(last, classes)

    def forward(self, x):
        return self.classifier(self.features(x).mean(dim=(2, 3)))


def _build(width: float, classes: int, batch: int, size: int, seed: int):
    return image_model(lambda: MobileNetV2(width, classes), batch, size, seed)


def make_model(seed: int = 0):
    return _build(1.0, 1000, 32, 224, seed)


def small(seed: int = 0):
    return _build(0.25, 10, 2, 32, seed)
