"""A small diffusion-style convolutional UNet (the denoiser layout of Stable Diffusion's UNet, without its attention
blocks), inference, random weights, written out in plain torch so that it needs no diffusers: a model outside the
suite for ``python -m kitsune.bench --workloads bench/models/unet.py``.

ResBlock (Stable Diffusion's): GroupNorm(32 groups, eps 1e-5) + SiLU + 3x3 conv, plus a per-channel bias from the
timestep embedding (SiLU + Linear); GroupNorm + SiLU + 3x3 conv; residual add (through a 1x1 conv where the channels
change). The timestep embedding is computed in the graph from a fixed sinusoidal vector (timestep 500, a buffer) by
Linear(C, 4C) + SiLU + Linear(4C, 4C), shared by the whole batch. Encoder: conv_in 4 -> C on the latent; levels of
widths (C, 2C, 4C), two ResBlocks each, a stride-2 3x3 conv between levels; middle: two ResBlocks at 4C. Decoder,
the mirror: at each level the encoder level's output is concatenated along the channels (``torch.cat``) before the
level's two ResBlocks, then nearest-neighbour 2x upsampling (``F.interpolate``) + 3x3 conv up to the next level;
GroupNorm + SiLU + conv_out to 4 channels. GroupNorms get the affine parameters of a trained net (``trained_norms``,
extended here to GroupNorm); each ResBlock's second conv is its default init scaled by 0.25 (``BRANCH_SCALE``), so
that the residual branches are smaller than the stream, as in a trained net, and bf16 rounding does not pile up to
the tolerance over the 14 ResBlocks (bf16 eager vs fp32 at full size: 1e-2 rather than 2e-2).

``make_model``: C = 128, three levels (128, 256, 512), batch 8 at 4 x 64 x 64 (SD's latent of a 512 x 512 image);
``small``: C = 8, two levels (8, 16), 4 groups per GroupNorm, batch 2 at 4 x 16 x 16, for the CPU (Triton's
interpreter): every op form of the full model (GroupNorm, SiLU, strided conv, upsample, concat, 1x1 skip conv,
the timestep bias).
"""

import math
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _image import trained_norms  # noqa: E402  (bench/models/_image.py)


BRANCH_SCALE = 0.25  # conv2's default init scaled down: bf16 eager's error vs fp32 at full size 2.1e-2 -> 1e-2


class ResBlock(nn.Module):
    def __init__(self, cin: int, cout: int, temb: int, groups: int):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin, eps=1e-5)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.temb_proj = nn.Linear(temb, cout)
        self.norm2 = nn.GroupNorm(groups, cout, eps=1e-5)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        with torch.no_grad():  # a quiet residual branch, as in a trained net (SD initialises conv2 to zero)
            self.conv2.weight.mul_(BRANCH_SCALE)
            self.conv2.bias.mul_(BRANCH_SCALE)
        self.skip = None if cin == cout else nn.Conv2d(cin, cout, 1)

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb_proj(F.silu(emb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + (x if self.skip is None else self.skip(x))


class UNet(nn.Module):
    def __init__(self, width: int = 128, mults=(1, 2, 4), groups: int = 32, latent: int = 4, t: float = 500.0):
        super().__init__()
        temb = 4 * width
        half = width // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
        self.register_buffer("t_freq", torch.cat([torch.cos(t * freqs), torch.sin(t * freqs)])[None])
        self.time_mlp = nn.Sequential(nn.Linear(width, temb), nn.SiLU(), nn.Linear(temb, temb))
        self.conv_in = nn.Conv2d(latent, width, 3, padding=1)
        chans = [width * m for m in mults]
        self.down_blocks, self.downsample = nn.ModuleList(), nn.ModuleList()
        cin = width
        for i, c in enumerate(chans):
            self.down_blocks.append(nn.ModuleList([ResBlock(cin, c, temb, groups), ResBlock(c, c, temb, groups)]))
            cin = c
            if i < len(chans) - 1:
                self.downsample.append(nn.Conv2d(c, c, 3, stride=2, padding=1))
        self.mid = nn.ModuleList([ResBlock(cin, cin, temb, groups), ResBlock(cin, cin, temb, groups)])
        self.up_blocks, self.upsample = nn.ModuleList(), nn.ModuleList()
        for i, c in reversed(list(enumerate(chans))):
            self.up_blocks.append(nn.ModuleList([ResBlock(cin + c, c, temb, groups), ResBlock(c, c, temb, groups)]))
            cin = c
            if i > 0:
                self.upsample.append(nn.Conv2d(c, c, 3, padding=1))
        self.norm_out = nn.GroupNorm(groups, cin, eps=1e-5)
        self.conv_out = nn.Conv2d(cin, latent, 3, padding=1)

    def forward(self, x):
        emb = self.time_mlp(self.t_freq)
        h = self.conv_in(x)
        skips = []
        for i, blocks in enumerate(self.down_blocks):
            for b in blocks:
                h = b(h, emb)
            skips.append(h)
            if i < len(self.downsample):
                h = self.downsample[i](h)
        for b in self.mid:
            h = b(h, emb)
        for i, blocks in enumerate(self.up_blocks):
            h = torch.cat([h, skips.pop()], dim=1)
            for b in blocks:
                h = b(h, emb)
            if i < len(self.upsample):
                h = self.upsample[i](F.interpolate(h, scale_factor=2, mode="nearest"))
        return self.conv_out(F.silu(self.norm_out(h)))


def trained_group_norms(m: nn.Module) -> None:
    """``trained_norms`` for GroupNorm too: affine parameters of a trained net rather than the identity."""
    trained_norms(m)
    for mod in m.modules():
        if isinstance(mod, nn.GroupNorm):
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.1, 0.1)


def _build(width: int, mults, groups: int, batch: int, size: int, seed: int):
    """As ``_image.image_model``, for a 4-channel latent: the weights the same whatever the seed (torch's seed 0,
    then ``trained_group_norms``), only the ``batch`` x 4 x ``size`` x ``size`` latents drawn from ``seed``."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(0)
    m = UNet(width, mults, groups)
    trained_group_norms(m)
    return m.eval(), (torch.randn(batch, 4, size, size, generator=g),)


def make_model(seed: int = 0):
    return _build(128, (1, 2, 4), 32, 8, 64, seed)


def small(seed: int = 0):
    return _build(8, (1, 2), 4, 2, 16, seed)
