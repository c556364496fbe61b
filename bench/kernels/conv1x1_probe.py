"""Can a Triton kernel beat cuDNN on inception_b8's merged 1x1 convolution over its NCHW input at all?

Issue 11's last convolution below cuDNN: the three 1x1 convolutions that read the block's input x [8, 256, 28, 28]
(NCHW, the program's input) merged into one of 176 output channels; Kitsune's conv template runs it at 7.4 us
against cuDNN's 5.6 (0.75x), tiles of whole output rows (two 28-wide rows: 56 pixels in 64 lanes) whatever the
config. A 1x1 convolution with stride 1 is a GEMM per image, Y_n[f, p] = W[f, :] X_n[:, p], its pixel axis
contiguous in the input: this probe times that GEMM written directly in Triton, with flat pixel tiles that cross
row boundaries (64-256 pixels, no padded lanes but the image's last tile), over the config space, against cuDNN
on the same NCHW tensors, both rotating over copies of their operands past the L2 (weights and input from DRAM).

    python bench/kernels/conv1x1_probe.py [--json OUT]

Forms: ``wfirst`` (the weights the first operand: acc[BF, BP], stored NCHW, the pixel axis contiguous) and
``xfirst`` (acc[BP, BF], stored channels-last, as the program stores the 3x3 / 5x5 branches' inputs).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(__file__))
from graphtime import rotating_us  # noqa: E402

N, C, H, W, FO = 8, 256, 28, 28, 176
P = H * W


@triton.jit
def conv1x1(X, Wt, B, Y, C: tl.constexpr, P: tl.constexpr, FO: tl.constexpr, BF: tl.constexpr, BP: tl.constexpr,
            BK: tl.constexpr, XFIRST: tl.constexpr, GROUP_F: tl.constexpr, ROWS: tl.constexpr = 0,
            Y1=None, Y2=None, EPI: tl.constexpr = 0):
    # ROWS > 0: a tile is ROWS whole 28-wide rows in BP lanes (Kitsune's conv template today), else BP flat pixels;
    # EPI 1: inception's epilogue (ReLU, channels 0-63 NCHW to Y1, 64-159 channels-last to Y, 160-175 to Y2;
    # x first only)
    pid = tl.program_id(0)
    SEG: tl.constexpr = BP if ROWS == 0 else ROWS * 28
    npb = tl.cdiv(P, SEG)
    nfb = tl.cdiv(FO, BF)
    n = pid // (npb * nfb)
    r = pid % (npb * nfb)
    if GROUP_F:  # the channel blocks of one pixel tile next to each other (its input tile read once from DRAM)
        pb = r // nfb
        fb = r % nfb
    else:
        fb = r // npb
        pb = r % npb
    f = fb * BF + tl.arange(0, BF)
    lane = tl.arange(0, BP)
    p = pb * SEG + lane
    pin = (p < P) & (lane < SEG)  # lanes past the tile's rows are masked (Kitsune's row tiles: 56 of 64)
    xb = X + n.to(tl.int64) * C * P
    if XFIRST:
        acc = tl.zeros([BP, BF], tl.float32)
    else:
        acc = tl.zeros([BF, BP], tl.float32)
    for k in range(0, C, BK):
        kk = k + tl.arange(0, BK)
        w = tl.load(Wt + f[:, None] * C + kk[None, :], mask=f[:, None] < FO, other=0.0)  # [BF, BK]
        x = tl.load(xb + kk[:, None] * P + p[None, :], mask=pin[None, :], other=0.0)  # [BK, BP]
        if XFIRST:
            acc = tl.dot(tl.trans(x), tl.trans(w), acc)
        else:
            acc = tl.dot(w, x, acc)
    bias = tl.load(B + f, mask=f < FO, other=0.0).to(tl.float32)
    yb = Y + n.to(tl.int64) * FO * P
    if EPI:
        acc = tl.maximum(acc + bias[None, :], 0.0)
        pm = pin[:, None]
        tl.store(Y1 + n.to(tl.int64) * 64 * P + f[None, :] * P + p[:, None], acc.to(tl.bfloat16),
                 mask=pm & (f[None, :] < 64))
        tl.store(Y + n.to(tl.int64) * 96 * P + p[:, None] * 96 + f[None, :] - 64, acc.to(tl.bfloat16),
                 mask=pm & (f[None, :] >= 64) & (f[None, :] < 160))
        tl.store(Y2 + n.to(tl.int64) * 16 * P + p[:, None] * 16 + f[None, :] - 160, acc.to(tl.bfloat16),
                 mask=pm & (f[None, :] >= 160) & (f[None, :] < FO))
    elif XFIRST:
        acc = acc + bias[None, :]
        tl.store(yb + p[:, None] * FO + f[None, :], acc.to(tl.bfloat16), mask=pin[:, None] & (f[None, :] < FO))
    else:
        acc = acc + bias[:, None]
        tl.store(yb + f[:, None] * P + p[None, :], acc.to(tl.bfloat16), mask=(f[:, None] < FO) & pin[None, :])


def _rotating(make, sets):
    """Per-launch microseconds of ``make(*operands)`` over the rotating operand sets."""
    return rotating_us([make(*s) for s in sets])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--factors-only", action="store_true", help="skip the config sweep")
    args = ap.parse_args()
    torch.manual_seed(0)
    dev = "cuda"
    copies = 16  # 16 x (3.2 MB input + 0.1 MB weights): past the 50 MB L2
    sets = [(torch.randn(N, C, H, W, device=dev, dtype=torch.bfloat16),
             torch.randn(FO, C, device=dev, dtype=torch.bfloat16) / 16,
             torch.randn(FO, device=dev, dtype=torch.bfloat16)) for _ in range(copies)]
    y_nchw = torch.empty(N, FO, P, device=dev, dtype=torch.bfloat16)
    y_cl = torch.empty(N, P, FO, device=dev, dtype=torch.bfloat16)
    x0, w0, b0 = sets[0]
    ref = F.conv2d(x0, w0[:, :, None, None], b0).float()
    rows = []
    cudnn = _rotating(lambda x, w, b: (lambda: F.conv2d(x, w[:, :, None, None], b)), sets)
    rows.append({"variant": "cudnn (NCHW)", "us": cudnn})
    print(f"cudnn NCHW {cudnn:7.2f} us", flush=True)
    for xfirst in (() if args.factors_only else (0, 1)):
        for bf in (64, 128):
            for bp in (64, 128, 256):
                for bk in (64, 128, 256):
                    for warps, stages in ((4, 3), (4, 4), (8, 3)):
                        if bf * bp > 128 * 128 and warps == 4:
                            continue
                        if (bf + bp) * bk * 2 * stages > 200 * 1024:
                            continue
                        for group in ((0, 1) if bk == 64 else (1,)):
                            y = y_cl if xfirst else y_nchw
                            grid = (N * triton.cdiv(P, bp) * triton.cdiv(FO, bf),)

                            def make(x, w, b, bf=bf, bp=bp, bk=bk, warps=warps, stages=stages, group=group, y=y,
                                     grid=grid, xfirst=xfirst):
                                return lambda: conv1x1[grid](x, w, b, y, C, P, FO, bf, bp, bk, xfirst, group,
                                                             num_warps=warps, num_stages=stages)
                            try:
                                make(x0, w0, b0)()
                                torch.cuda.synchronize()
                            except Exception as e:  # (out of resources)
                                print(f"skip {bf} {bp} {bk} {warps} {stages}: {type(e).__name__}")
                                continue
                            out = (y.view(N, P, FO).permute(0, 2, 1) if xfirst else y).float().reshape(N, FO, H, W)
                            err = float((out - ref).norm() / ref.norm())
                            us = _rotating(make, sets)
                            name = (f"{'xfirst' if xfirst else 'wfirst'} BF{bf} BP{bp} BK{bk} w{warps} s{stages} "
                                    f"g{group} grid{grid[0]}")
                            rows.append({"variant": name, "us": us, "err": err, "x_cudnn": cudnn / us})
    # which factor costs Kitsune's kernel (7.5 us at BF64 BM64 BK64 w4 s3): row tiles (2 rows of 28 in 64 lanes)
    # and / or the three-output epilogue, at that config, x first
    y0 = torch.empty(N, P, 96, device=dev, dtype=torch.bfloat16)
    y1 = torch.empty(N, 64, P, device=dev, dtype=torch.bfloat16)
    y2 = torch.empty(N, P, 16, device=dev, dtype=torch.bfloat16)
    for rws in (0, 2):
        for epi in (0, 1):
            grid = (N * triton.cdiv(P, 64 if rws == 0 else rws * 28) * triton.cdiv(FO, 64),)

            def make(x, w, b, rws=rws, epi=epi, grid=grid):
                return lambda: conv1x1[grid](x, w, b, y0 if epi else y_cl, C, P, FO, 64, 64, 64, 1, 0, rws, y1, y2,
                                             epi, num_warps=4, num_stages=3)
            make(x0, w0, b0)()
            torch.cuda.synchronize()
            if epi:
                full = torch.relu(ref).reshape(N, FO, P)
                err = max(float((y1.float() - full[:, :64]).norm() / full[:, :64].norm()),
                          float((y0.float().permute(0, 2, 1) - full[:, 64:160]).norm() / full[:, 64:160].norm()),
                          float((y2.float().permute(0, 2, 1) - full[:, 160:]).norm() / full[:, 160:].norm()))
            else:
                out = y_cl.float().permute(0, 2, 1).reshape(N, FO, H, W)
                err = float((out - ref).norm() / ref.norm())
            us = _rotating(make, sets)
            name = f"factor: {'rows 2x28' if rws else 'flat 64'} {'3-output epilogue' if epi else 'one output'}"
            print(f"{name:50s} {us:7.2f} us  err {err:.1e}", flush=True)
            rows.append({"variant": name, "us": us, "err": err, "x_cudnn": cudnn / us})
    nobias = _rotating(lambda x, w, b: (lambda: F.conv2d(x, w[:, :, None, None])), sets)
    print(f"cudnn NCHW without bias (the kernel table's peer) {nobias:7.2f} us", flush=True)
    rows.append({"variant": "cudnn (NCHW, no bias)", "us": nobias})
    rows.sort(key=lambda r: r["us"])
    for r in rows[:15]:
        print(f"{r['variant']:50s} {r['us']:7.2f} us  x cuDNN {cudnn / r['us']:5.2f}  err {r.get('err', 0):.1e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "triton": triton.__version__, "cudnn_us": cudnn, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
