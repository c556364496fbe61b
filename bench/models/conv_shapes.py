"""Single convolutions (+ BatchNorm + activation, as the networks have them) at shapes outside the suite, for
``kitsune-tune bench/models/conv_shapes.py:NAME`` and the harness: how the conv template's heuristic default
compares with its config space where the tuning database has no entry.

Factories (input batch x channels x size; the convolution): ``resnet_stem`` 32 x 3 x 224, 7 x 7 stride 2 to 64
channels + BN + ReLU (ResNet-18/50's); ``effnet_stem`` 32 x 3 x 224, 3 x 3 stride 2 to 32 channels + BN + SiLU
(EfficientNet-B0's, MobileNetV2's with ReLU6); ``patch4`` 32 x 3 x 224, 4 x 4 stride 4 to 96 channels (ConvNeXt's
patchify stem); ``unet_in`` 8 x 3 x 256, 3 x 3 to 64 channels + ReLU (a UNet's first layer, stride 1); ``unet_mid`` SiLU then
3 x 3 512 -> 512 channels over 8 x 16 x 16 (``bench/models/unet.py``'s innermost level: 128 work items of the
default's 128 x 64 tile, K = 4608) and ``unet_up`` the same over 32 x 32 (512 work items), their input written
channels-last by the SiLU's task as in the UNet.
"""

import torch
from torch import nn


def _make(n: int, c: int, size: int, f: int, k: int, stride: int, pad: int, act, seed: int):
    torch.manual_seed(seed)
    layers = [nn.Conv2d(c, f, k, stride, pad, bias=act is None)]
    if act is not None:
        layers += [nn.BatchNorm2d(f), act]
    model = nn.Sequential(*layers).eval()
    if act is not None:
        with torch.no_grad():  # (statistics off their init values, so that the BatchNorm does something)
            model[1].running_mean.uniform_(-0.5, 0.5)
            model[1].running_var.uniform_(0.5, 2.0)
    g = torch.Generator().manual_seed(seed)
    return model, (torch.randn(n, c, size, size, generator=g),)


def resnet_stem(seed: int = 0):
    return _make(32, 3, 224, 64, 7, 2, 3, nn.ReLU(), seed)


def effnet_stem(seed: int = 0):
    return _make(32, 3, 224, 32, 3, 2, 1, nn.SiLU(), seed)


def patch4(seed: int = 0):
    return _make(32, 3, 224, 96, 4, 4, 0, None, seed)


def unet_in(seed: int = 0):
    return _make(8, 3, 256, 64, 3, 1, 1, nn.ReLU(), seed)


def _silu_conv(n: int, c: int, size: int, f: int, seed: int):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.SiLU(), nn.Conv2d(c, f, 3, 1, 1)).eval()
    g = torch.Generator().manual_seed(seed)
    return model, (torch.randn(n, c, size, size, generator=g),)


def unet_mid(seed: int = 0):
    return _silu_conv(8, 512, 16, 512, seed)


def unet_up(seed: int = 0):
    return _silu_conv(8, 512, 32, 512, seed)


def make_model(seed: int = 0):
    return resnet_stem(seed)
