"""Probe: a 3x3 stride-1 max pool (inception_b8's pool branch, [8, 256, 28, 28] bf16) in forms the window
reduction could take, against ATen in the same run (NOTES section 23). CUDA graphs of 20 launches
(``graphtime.graph_us``); each form checked against ``F.max_pool2d`` first.

  nine      today's form: one program per (n, c) image, the 28 x 28 pixels one lane axis of 1024, the nine
            window positions nine masked loads
  sep-flat  separable on the one lane axis of ``nine`` (the gather crosses warps: shared memory)
  sep       separable: per image a [32, 32] block (28 x 28 valid); three row-shifted loads give the vertical max,
            ``tl.gather`` along the row gives its left and right neighbours (no further loads)
  sep-C     as ``sep`` with C images per program ([C, 32, 32])
  nhwc      the input channels-last: a block of pixels x 64 channels, nine 16-byte-vector loads per 8 channels

    python bench/kernels/pool_probe.py [--json out.json]
"""

from __future__ import annotations

import json
import os
import sys
import time

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graphtime import graph_us  # noqa: E402

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def pool_nine(X, Y, H: tl.constexpr, W: tl.constexpr, BP: tl.constexpr):
    pid = tl.program_id(0)
    p = tl.arange(0, BP)
    h = p // W
    w = p % W
    valid = p < H * W
    base = X + pid * (H * W)
    acc = tl.full([BP], float("-inf"), tl.float32)
    for d in tl.static_range(9):
        ih = h + d // 3 - 1
        iw = w + d % 3 - 1
        m = valid & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        v = tl.load(base + p + (d // 3 - 1) * W + (d % 3 - 1), mask=m, other=float("-inf")).to(tl.float32)
        acc = tl.maximum(acc, v)
    tl.store(Y + pid * (H * W) + p, acc.to(Y.dtype.element_ty), mask=valid)


@triton.jit
def pool_sep(X, Y, H: tl.constexpr, W: tl.constexpr, BH: tl.constexpr, BW: tl.constexpr, C: tl.constexpr):
    pid = tl.program_id(0)
    c = tl.arange(0, C)[:, None, None]
    h = tl.arange(0, BH)[None, :, None]
    w = tl.arange(0, BW)[None, None, :]
    base = X + (pid * C + c) * (H * W)
    inside = (w < W) & (h < H)
    v = tl.full([C, BH, BW], float("-inf"), tl.float32)
    for dh in tl.static_range(3):
        ih = h + dh - 1
        m = inside & (ih >= 0) & (ih < H)
        v = tl.maximum(v, tl.load(base + ih * W + w, mask=m, other=float("-inf")).to(tl.float32))
    idx = tl.broadcast_to(w, [C, BH, BW])
    left = tl.gather(v, tl.maximum(idx - 1, 0), 2)
    right = tl.gather(v, tl.minimum(idx + 1, BW - 1), 2)
    out = tl.maximum(v, tl.maximum(tl.where(idx >= 1, left, float("-inf")),
                                   tl.where(idx + 1 < W, right, float("-inf"))))
    tl.store(Y + (pid * C + c) * (H * W) + h * W + w, out.to(Y.dtype.element_ty), mask=inside)


@triton.jit
def pool_sep_flat(X, Y, H: tl.constexpr, W: tl.constexpr, BP: tl.constexpr):
    """The separable form on the image's pixels as one lane axis (what the window template emits for a tile of
    whole rows merged into one axis): the gather crosses warps (through shared memory)."""
    pid = tl.program_id(0)
    p = tl.arange(0, BP)
    h = p // W
    w = p % W
    valid = p < H * W
    base = X + pid * (H * W)
    v = tl.full([BP], float("-inf"), tl.float32)
    for dh in tl.static_range(3):
        ih = h + dh - 1
        m = valid & (ih >= 0) & (ih < H)
        v = tl.maximum(v, tl.load(base + p + (dh - 1) * W, mask=m, other=float("-inf")).to(tl.float32))
    left = tl.gather(v, tl.maximum(p - 1, 0), 0)
    right = tl.gather(v, tl.minimum(p + 1, BP - 1), 0)
    out = tl.maximum(v, tl.maximum(tl.where(w >= 1, left, float("-inf")), tl.where(w + 1 < W, right, float("-inf"))))
    tl.store(Y + pid * (H * W) + p, out.to(Y.dtype.element_ty), mask=valid)


@triton.jit
def pool_nhwc(X, Y, NB: tl.constexpr, H: tl.constexpr, W: tl.constexpr, CH: tl.constexpr, BM: tl.constexpr,
              BC: tl.constexpr):
    """X, Y [N, H, W, C]; a block of BM pixels of the flat index by BC channels."""
    pid = tl.program_id(0)
    ncb: tl.constexpr = CH // BC
    q = (pid // ncb) * BM + tl.arange(0, BM)
    c = (pid % ncb) * BC + tl.arange(0, BC)
    n = q // (H * W)
    h = (q // W) % H
    w = q % W
    valid = q < NB * H * W
    acc = tl.full([BM, BC], float("-inf"), tl.float32)
    for d in tl.static_range(9):
        ih = h + d // 3 - 1
        iw = w + d % 3 - 1
        m = valid & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        v = tl.load(X + (((n * H + ih) * W + iw) * CH)[:, None] + c[None, :], mask=m[:, None], other=float("-inf"))
        acc = tl.maximum(acc, v.to(tl.float32))
    tl.store(Y + (q * CH)[:, None] + c[None, :], acc.to(Y.dtype.element_ty), mask=valid[:, None])


def main() -> None:
    out = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    dev = "cpu" if INTERPRET else "cuda"
    N, C, H, W = (2, 8, 6, 6) if INTERPRET else (8, 256, 28, 28)
    dt = torch.float32 if INTERPRET else torch.bfloat16
    x = torch.randn(N, C, H, W, device=dev, dtype=dt)
    xl = x.permute(0, 2, 3, 1).contiguous()
    ref = F.max_pool2d(x.float(), 3, 1, 1)
    y = torch.empty(N, C, H, W, device=dev, dtype=dt)
    yl = torch.empty(N, H, W, C, device=dev, dtype=dt)
    peers = {}
    if not INTERPRET:
        peers["aten_nchw"] = graph_us(lambda: F.max_pool2d(x, 3, 1, 1))
        xc = x.to(memory_format=torch.channels_last)
        peers["aten_nhwc"] = graph_us(lambda: F.max_pool2d(xc, 3, 1, 1))
        peers["to_nhwc"] = graph_us(lambda: xl.copy_(x.permute(0, 2, 3, 1)))
    print("peers: " + ", ".join(f"{k} {v:.2f} us" for k, v in peers.items()), flush=True)
    p2 = 1 << (H * W - 1).bit_length()
    bw = max(2, 1 << (W - 1).bit_length())
    cands = [("nine", lambda w: pool_nine[(N * C,)](x, y, H, W, p2, num_warps=w), y, (4, 8))]
    cands.append(("sep-flat", lambda w: pool_sep_flat[(N * C,)](x, y, H, W, p2, num_warps=w), y, (4, 8)))
    for cimg in (1, 2, 4):
        if (N * C) % cimg == 0:
            cands.append((f"sep-{cimg}", lambda w, cimg=cimg: pool_sep[(N * C // cimg,)](
                x, y, H, W, bw, bw, cimg, num_warps=w), y, (4, 8)))
    for bm, bc in ((64, 64), (128, 64), (32, 128), (64, 32)):
        bc = min(bc, C)
        cands.append((f"nhwc-{bm}x{bc}", lambda w, bm=bm, bc=bc: pool_nhwc[(-(-(N * H * W) // bm) * (C // bc),)](
            xl, yl, N, H, W, C, bm, bc, num_warps=w), yl, (4, 8)))
    rows = []
    for label, fn, dst, warps in cands:
        for w in warps:
            try:
                dst.zero_()
                fn(w)
                got = (dst.permute(0, 3, 1, 2) if dst is yl else dst).float()
                err = ((got - ref).abs().max() / ref.abs().max()).item()
                us = graph_us(lambda: fn(w)) if (err < 1e-2 and not INTERPRET) else None
            except Exception as e:  # noqa: BLE001
                err, us = None, None
                print(f"#  {label} w{w} failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
            rows.append(dict(variant=label, warps=w, err=err, us=us, **peers))
            print(f"   {label:12s} w{w}  err={err}  {us if us is None else round(us, 2)} us", flush=True)
    if out:
        with open(out, "w") as fh:
            json.dump(dict(device=torch.cuda.get_device_name() if not INTERPRET else "cpu-interpreter",
                           torch=torch.__version__, triton=triton.__version__, date=time.strftime("%Y-%m-%d"),
                           rows=rows), fh, indent=1)


if __name__ == "__main__":
    main()
