"""What the image models of ``bench/models/`` share: fixed weights with the norms of a trained net, a batch of
random images drawn from the factory's seed, and the convolution + BatchNorm + activation block of the mobile
nets. (Not a model: a helper the model files import from their folder.)"""

import torch
from torch import nn


def trained_norms(m: nn.Module) -> None:
    """BatchNorms get running statistics and affine parameters, LayerNorms affine parameters, of a trained net
    rather than the identity of fresh ones."""
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.1, 0.1)
            mod.running_var.uniform_(0.5, 1.5)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.1, 0.1)
        elif isinstance(mod, nn.LayerNorm):
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.1, 0.1)


def image_model(build, batch: int, size: int, seed: int):
    """``(build().eval(), (images,))``: the weights the same whatever the seed (torch's seed 0, then
    ``trained_norms``), only the ``batch`` x 3 x ``size`` x ``size`` images drawn from ``seed``."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(0)
    m = build()
    trained_norms(m)
    return m.eval(), (torch.randn(batch, 3, size, size, generator=g),)


def conv_bn(cin: int, cout: int, k: int, stride: int = 1, groups: int = 1, act=nn.ReLU6) -> nn.Sequential:
    """A k x k convolution (padding ``k // 2``, no bias) + BatchNorm + ``act()`` (left out where ``act`` is None)."""
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)
