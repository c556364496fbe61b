"""Why does ResNet's 7 x 7 stride-2 stem over 3 channels take 311 us, and which form of it is fast?

Issue 11, NOTES section 39: ``Y[n, co, oh, ow] = sum_{c, kh, kw} X[n, c, 2 oh + kh - 3, 2 ow + kw - 3] W[co, c, kh, kw]``
over X [32, 3, 224, 224] bf16, W [64, 3, 7, 7] -> Y [32, 64, 112, 112]: 2.4 GFLOP, 61 MB of DRAM traffic, 311 us
in the compiler's conv template (18% of ResNet-50). Its gathered operand: every element a scalar ``ld.global.b16``
whose K digits (c, kh, kw) come from divisions, the warp's lanes along K (7 contiguous taps, then a row jump).

Forms timed here, each checked against ``F.conv2d`` first:

* ``nchw``: the compiler's form (tile 64 channels x BM positions of one output row, K = (c, kh, kw) in BK = 64
  steps, the gathered operand [positions, K] transposed into the dot).
* ``nchw_kn``: the same, the gathered operand loaded [K, positions] (lanes along the positions: stride 2).
* ``cl``: the input first copied to channels-last padded rows ``XT[n, h, w * CP + c]`` ([N, H + 2p, (W + 2p) * CP],
  CP = 4 channels, zeros in the padding), the weight to ``WT[co, kh, kw * CP + c]`` (kw padded to 8: K a row of 32
  contiguous elements); then ``Y = sum_{kh, j} WT[co, kh, j] XT[n, 2 oh + kh, 2 CP ow + j]``: each position's K row
  of a window row is 32 contiguous elements (64 bytes), vector loads. Timed with and without the copy.
* ``cudnn``: ``F.conv2d`` over NCHW and over channels-last (what Inductor calls).

Timing: CUDA-graph replays rotating over copies of the input past the L2 (``graphtime.rotating_us``).

    python bench/kernels/stem_probe.py [--json OUT]
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graphtime import rotating_us  # noqa: E402

N, C, H, W, CO, K, S, P = 32, 3, 224, 224, 64, 7, 2, 3
OH = OW = (H + 2 * P - K) // S + 1
CP, KWP = 4, 8  # channels padded to CP, window columns to KWP: a window row of KWP * CP contiguous elements
HP, WPD = H + 2 * P, W + 2 * P + 2  # padded rows / columns (2 extra: the zero taps kw = 7 of the last position)


@triton.jit
def stem_nchw(x, w, y, BM: tl.constexpr, BK: tl.constexpr, KN: tl.constexpr):
    pid = tl.program_id(0)
    halves = tl.cdiv(112, BM)
    n = pid // (112 * halves)
    oh = (pid // halves) % 112
    h = pid % halves
    co = tl.arange(0, 64)
    ow = h * BM + tl.arange(0, BM)
    acc = tl.zeros([64, BM], tl.float32)
    for k0 in range(0, 147, BK):
        r = k0 + tl.arange(0, BK)
        wv = tl.load(w + (r[None, :] % 147) + 147 * co[:, None])
        wv = tl.where((r < 147)[None, :], wv, 0.0)
        c = (r // 49) % 3
        kh = (r // 7) % 7
        kw = r % 7
        if KN:
            ih = 2 * oh + kh[:, None] - 3
            iw = 2 * ow[None, :] + kw[:, None] - 3
            m = (ih >= 0) & (ih < 224) & (iw >= 0) & (iw < 224)
            xv = tl.load(x + n * 150528 + c[:, None] * 50176 + ih * 224 + iw, mask=m, other=0.0)
            acc = tl.dot(wv, xv, acc)
        else:
            ih = 2 * oh + kh[None, :] - 3
            iw = 2 * ow[:, None] + kw[None, :] - 3
            m = (ih >= 0) & (ih < 224) & (iw >= 0) & (iw < 224)
            xv = tl.load(x + n * 150528 + c[None, :] * 50176 + ih * 224 + iw, mask=m, other=0.0)
            acc = tl.dot(wv, tl.trans(xv), acc)
    tl.store(y + n * 802816 + co[:, None] * 12544 + oh * 112 + ow[None, :], acc.to(tl.bfloat16),
             mask=(ow < 112)[None, :])


@triton.jit
def to_rows(x, xt, total, BLOCK: tl.constexpr):
    """XT[n, h, w * 4 + c] = X[n, c, h - 3, w - 3] (zero outside), [32, 230, 232 * 4]."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c = i % 4
    wq = (i // 4) % 232
    hq = (i // 928) % 230
    n = i // (928 * 230)
    ih = hq - 3
    iw = wq - 3
    m = (i < total) & (c < 3) & (ih >= 0) & (ih < 224) & (iw >= 0) & (iw < 224)
    v = tl.load(x + n * 150528 + c * 50176 + ih * 224 + iw, mask=m, other=0.0)
    tl.store(xt + i, v, mask=i < total)


@triton.jit
def stem_cl(xt, wt, y, BM: tl.constexpr, BK: tl.constexpr):
    """Y[n, co, oh, ow] = sum_{kh, j} WT[co, kh * 32 + j] XT[n, 2 oh + kh, 8 ow + j] (K = 7 x 32 = 224)."""
    pid = tl.program_id(0)
    halves = tl.cdiv(112, BM)
    n = pid // (112 * halves)
    oh = (pid // halves) % 112
    h = pid % halves
    co = tl.arange(0, 64)
    ow = h * BM + tl.arange(0, BM)
    acc = tl.zeros([BM, 64], tl.float32)
    for kb in range(0, tl.cdiv(224, BK)):  # (BK 64: three chunks and a half one, masked; 224 // BK dropped kh = 6)
        r = kb * BK + tl.arange(0, BK)
        kh = (r // 32) % 7
        j = r % 32
        wv = tl.load(wt + r[:, None] + 224 * co[None, :], mask=(r < 224)[:, None], other=0.0)
        xv = tl.load(xt + n * 213440 + (2 * oh + kh[None, :]) * 928 + 8 * ow[:, None] + j[None, :],
                     mask=(ow < 112)[:, None] & (r < 224)[None, :], other=0.0)
        acc = tl.dot(xv, wv, acc)
    tl.store(y + n * 802816 + co[None, :] * 12544 + oh * 112 + ow[:, None], acc.to(tl.bfloat16),
             mask=(ow < 112)[:, None])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--only", help="time only this form (cudnn, nchw, cl)")
    a = ap.parse_args()
    torch.manual_seed(0)
    dev = "cuda"
    nbytes = N * C * H * W * 2
    copies = max(2, -(-80_000_000 // nbytes))
    xs = [torch.randn(N, C, H, W, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
    w = (torch.randn(CO, C, K, K, device=dev) * 0.1).to(torch.bfloat16)
    wt = torch.zeros(CO, K, KWP, CP, device=dev, dtype=torch.bfloat16)
    wt[:, :, :K, :C] = w.permute(0, 2, 3, 1)
    wt = wt.reshape(CO, K * KWP * CP).contiguous()
    ys = [torch.empty(N, CO, OH, OW, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
    xts = [torch.empty(N, HP, WPD * CP, device=dev, dtype=torch.bfloat16) for _ in range(copies)]
    ref = F.conv2d(xs[0].float(), w.float(), stride=S, padding=P)
    total = N * HP * WPD * CP
    rows = []

    def check(name, y):
        err = ((y.float() - ref).abs().max() / ref.abs().max()).item()
        return err

    def report(name, us, err, **kw):
        flops = 2 * N * CO * OH * OW * C * K * K
        rec = {"form": name, "us": round(us, 2), "tflops": round(flops / us / 1e6, 1), "rel_err": err, **kw}
        rows.append(rec)
        print(f"{name:28s} {us:9.2f} us {rec['tflops']:7.1f} TFLOP/s  err {err:.2e} {kw}", flush=True)

    # cuDNN
    for cl in (False, True) if a.only in (None, "cudnn") else ():
        xx = [x.contiguous(memory_format=torch.channels_last) if cl else x for x in xs]
        ww = w.contiguous(memory_format=torch.channels_last) if cl else w
        y = F.conv2d(xx[0], ww, stride=S, padding=P)
        us = rotating_us([lambda x=x: F.conv2d(x, ww, stride=S, padding=P) for x in xx])
        report("cudnn" + ("_cl" if cl else ""), us, check("", y))
    # the compiler's form and its [K, positions] load
    for kn in (0, 1) if a.only in (None, "nchw") else ():
        for bm in (64, 128):
            for bk in (32, 64):
                for warps in (4, 8):
                    grid = (N * OH * triton.cdiv(112, bm),)

                    def run(i, bm=bm, bk=bk, warps=warps, kn=kn, grid=grid):
                        stem_nchw[grid](xs[i], w, ys[i], BM=bm, BK=bk, KN=kn, num_warps=warps, num_stages=3)
                    run(0)
                    err = check("", ys[0])
                    us = rotating_us([lambda i=i: run(i) for i in range(copies)])
                    report("nchw" + ("_kn" if kn else ""), us, err, bm=bm, bk=bk, warps=warps)
    # channels-last rows
    blk = 1024

    def copy(i):
        to_rows[(triton.cdiv(total, blk),)](xs[i], xts[i], total, BLOCK=blk, num_warps=4)
    copy(0)
    us = rotating_us([lambda i=i: copy(i) for i in range(copies)])
    report("to_rows (copy alone)", us, 0.0)
    for bm in (64, 128) if a.only in (None, "cl") else ():
        for bk in (32, 64):
            for warps in (4, 8):
                for stages in (2, 3):
                    grid = (N * OH * triton.cdiv(112, bm),)

                    def run(i, bm=bm, bk=bk, warps=warps, stages=stages, grid=grid):
                        stem_cl[grid](xts[i], wt, ys[i], BM=bm, BK=bk, num_warps=warps, num_stages=stages)
                    copy(0)
                    run(0)
                    err = check("", ys[0])
                    us = rotating_us([lambda i=i: run(i) for i in range(copies)])
                    both = rotating_us([lambda i=i: (copy(i), run(i)) for i in range(copies)])
                    report("cl", us, err, bm=bm, bk=bk, warps=warps, stages=stages, with_copy_us=round(both, 2))
    if a.json:
        json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
