"""ResNet-18 (He et al., torchvision's layout: 7x7 stem, max pool, four stages of two BasicBlocks, global average
pool, fully connected), inference, random weights, written out in plain torch so that it needs no torchvision:
a model outside the suite for ``python -m kitsune.bench --workloads bench/models/resnet18.py``.

``make_model``: batch 32 at 224 x 224 (the issue's "ResNet-18 at batch 32"); ``small``: batch 2 at 32 x 32 with
quarter widths, for the CPU (Triton's interpreter).
"""

import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _image import image_model  # noqa: E402  (bench/models/_image.py)


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class ResNet18(nn.Module):
    def __init__(self, width: int = 64, classes: int = 1000):
        super().__init__()
        w = width
        self.stem = nn.Sequential(nn.Conv2d(3, w, 7, 2, 3, bias=False), nn.BatchNorm2d(w), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        layers, cin = [], w
        for i, cout in enumerate((w, 2 * w, 4 * w, 8 * w)):
            layers += [BasicBlock(cin, cout, 1 if i == 0 else 2), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        y = self.layers(self.stem(x))
        return self.fc(y.mean(dim=(2, 3)))


def _build(width: int, classes: int, batch: int, size: int, seed: int):
    return image_model(lambda: ResNet18(width, classes), batch, size, seed)


def make_model(seed: int = 0):
    return _build(64, 1000, 32, 224, seed)


def small(seed: int = 0):
    return _build(16, 10, 2, 32, seed)
