"""Probe: which implicit-GEMM convolution loop structure is fast on the GPU (before building it into codegen).

NCHW bf16 convolutions at the inception_b8 shapes, hand-written in the form Kitsune's evaluator could emit,
against cuDNN (F.conv2d) in the same run. Output tile: BF channels x BH whole output rows of one image,
flattened into one pixel axis of BP = pow2(BH * OW) lanes (M = oh * ow). Variants of the K loop:

  flat     one loop over c * kh * kw in chunks of BK (weights contiguous, window offsets decomposed per lane)
  window   one loop over (kh, kw) x channel chunks: kh, kw scalars, the channel chunk a BK lane axis
           (weights read with stride kh * kw)
  packed   window order with the weights pre-permuted to [f, kh, kw, c] (contiguous channel chunks)
ADDR=1 writes the input address as base + p + const (oh * OW + ow folded back to p) so that Triton sees
contiguous lanes; ADDR=0 as oh * OW + ow.
Also the tile Kitsune emits today (one row segment of 16 pixels x all channels, flat order): ``today`` with
the weight address decomposed into c, kh, kw and recombined as the codegen writes it (WDEC=1), ``today-w``
with it contiguous, ``today-wa`` also with the input address folded. Times: CUDA graphs of 20 launches.

    python bench/kernels/conv_probe.py [--json out.json]
"""

from __future__ import annotations

import json
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from graphtime import graph_us  # bench/kernels/graphtime.py (the script's folder is on sys.path)


@triton.jit
def conv_kernel(X, Wt, Wp, Bias, Y, C: tl.constexpr, H: tl.constexpr, W: tl.constexpr, FO: tl.constexpr,
                KH: tl.constexpr, KW: tl.constexpr, PAD: tl.constexpr, BH: tl.constexpr, BP: tl.constexpr,
                BF: tl.constexpr, BK: tl.constexpr, ORDER: tl.constexpr, ADDR: tl.constexpr,
                SEG: tl.constexpr, WDEC: tl.constexpr):
    pid = tl.program_id(0)
    nfb = tl.cdiv(FO, BF)
    fb = pid % nfb
    rest = pid // nfb
    if SEG:  # row segments of BP pixels (today's tile)
        nsb = tl.cdiv(W, BP)
        sb = rest % nsb
        rest = rest // nsb
        r_ = rest % H
        n = rest // H
        p = tl.arange(0, BP)
        oh = r_ + p * 0
        ow = sb * BP + p
        pval = ow < W
        pix = r_ * W + sb * BP + p
    else:
        nrb = tl.cdiv(H, BH)
        rb = rest % nrb
        n = rest // nrb
        p = tl.arange(0, BP)
        oh = rb * BH + p // W
        ow = p % W
        pval = (p < BH * W) & (oh < H)
        pix = rb * BH * W + p
    f = fb * BF + tl.arange(0, BF)
    fval = f < FO
    r = tl.arange(0, BK)
    acc = tl.zeros([BF, BP], tl.float32)
    xb = X + n * C * H * W
    if ORDER == 0:
        KT: tl.constexpr = C * KH * KW
        for k0 in range(0, KT, BK):
            kk = k0 + r
            c = kk // (KH * KW)
            kh = (kk // KW) % KH
            kw = kk % KW
            if WDEC:  # the weight address as today's codegen writes it: c, kh, kw decomposed and recombined
                woff = ((kk // (KH * KW)) % C) * (KH * KW) + ((kk // KW) % KH) * KW + kk % KW
                w = tl.load(Wt + f[:, None] * KT + woff[None, :], mask=fval[:, None] & (kk[None, :] < KT),
                            other=0.0)
            else:
                w = tl.load(Wt + f[:, None] * KT + kk[None, :], mask=fval[:, None] & (kk[None, :] < KT),
                            other=0.0)
            ih = oh[None, :] + kh[:, None] - PAD
            iw = ow[None, :] + kw[:, None] - PAD
            m = (kk[:, None] < KT) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W) & pval[None, :]
            if ADDR:
                off = c[:, None] * (H * W) + pix[None, :] + ((kh - PAD) * W + kw - PAD)[:, None]
            else:
                off = c[:, None] * (H * W) + ih * W + iw
            x = tl.load(xb + off, mask=m, other=0.0)
            acc = tl.dot(w, x, acc)
    else:
        CC: tl.constexpr = (C + BK - 1) // BK
        for k in range(0, KH * KW * CC):
            kk = k // CC
            cc = k % CC
            kh = kk // KW
            kw = kk % KW
            c = cc * BK + r
            if ORDER == 2:
                w = tl.load(Wp + f[:, None] * (KH * KW * C) + kk * C + c[None, :],
                            mask=fval[:, None] & (c[None, :] < C), other=0.0)
            else:
                w = tl.load(Wt + f[:, None] * (C * KH * KW) + c[None, :] * (KH * KW) + kk,
                            mask=fval[:, None] & (c[None, :] < C), other=0.0)
            ih = oh + kh - PAD
            iw = ow + kw - PAD
            pm = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W) & pval
            m = (c[:, None] < C) & pm[None, :]
            if ADDR:
                off = c[:, None] * (H * W) + (pix + (kh - PAD) * W + kw - PAD)[None, :]
            else:
                off = c[:, None] * (H * W) + (ih * W + iw)[None, :]
            x = tl.load(xb + off, mask=m, other=0.0)
            acc = tl.dot(w, x, acc)
    b = tl.load(Bias + f, mask=fval, other=0.0).to(tl.float32)
    acc = acc + b[:, None]
    yoff = n * FO * H * W + f[:, None] * (H * W) + (oh * W + ow)[None, :]
    tl.store(Y + yoff, acc.to(tl.bfloat16), mask=fval[:, None] & pval[None, :])


SHAPES = {  # name: (N, C, H, W, F, K, pad)
    "3x3_96_128": (8, 96, 28, 28, 128, 3, 1),
    "5x5_16_32": (8, 16, 28, 28, 32, 5, 2),
    "1x1_256_96": (8, 256, 28, 28, 96, 1, 0),
    "1x1_256_64": (8, 256, 28, 28, 64, 1, 0),
}


def p2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def run_variant(x, w, wp, b, y, shape, order, addr, bh, bf, bk, warps, stages, seg=0, wdec=0):
    N, C, H, W, FO, K, pad = shape
    bp = max(16, p2(bh * W)) if not seg else seg
    nf = -(-FO // bf)
    grid = (N * nf * (H * (-(-W // seg)) if seg else -(-H // bh)),)
    fn = lambda: conv_kernel[grid](x, w, wp, b, y, C, H, W, FO, K, K, pad, bh, bp, bf, bk, order, addr,  # noqa
                                    1 if seg else 0, wdec, num_warps=warps, num_stages=stages)
    fn()
    return fn


def main() -> None:
    out = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    torch.manual_seed(0)
    rows = []
    for name, shape in SHAPES.items():
        N, C, H, W, FO, K, pad = shape
        x = torch.randn(N, C, H, W, device="cuda", dtype=torch.bfloat16)
        w = (torch.randn(FO, C, K, K, device="cuda") / (C * K * K) ** 0.5).to(torch.bfloat16)
        b = torch.randn(FO, device="cuda", dtype=torch.bfloat16)
        wp = w.permute(0, 2, 3, 1).contiguous()
        ref = F.conv2d(x, w, b, padding=pad)
        peer = graph_us(lambda: F.conv2d(x, w, b, padding=pad)) / 1e3
        y = torch.empty_like(ref)
        tb = 128 if FO > 64 else p2(FO)
        cands = [("today", 0, 0, 1, tb, 64, 4, 3, 16, 1), ("today-w", 0, 0, 1, tb, 64, 4, 3, 16, 0),
                 ("today-wa", 0, 1, 1, tb, 64, 4, 3, 16, 0)]
        for order in (0, 1, 2):
            for addr in (0, 1):
                for bh in (2, 4):
                    for bf in (32, 64, 128):
                        if bf > max(32, p2(FO)):
                            continue
                        for bk in ((32, 64) if C * K * K >= 64 else (16, 32)):
                            if order and bk > max(16, p2(C)):
                                continue
                            for warps, stages in ((4, 3), (8, 3), (4, 4)):
                                if order == 1 and addr == 0:
                                    continue
                                if warps == 8 and bf * bh * W < 4096:
                                    continue
                                if order == 0 and K == 1 and addr == 0:
                                    continue
                                cands.append((["flat", "window", "packed"][order], order, addr, bh, bf, bk,
                                              warps, stages, 0, 0))
                                if order == 0 and K > 1 and addr == 1:
                                    cands.append(("flat-wdec", order, addr, bh, bf, bk, warps, stages, 0, 1))
        for label, order, addr, bh, bf, bk, warps, stages, seg, wdec in cands:
            if K == 1 and order == 2:
                continue
            try:
                y.zero_()
                fn = run_variant(x, w, wp, b, y, shape, order, addr, bh, bf, bk, warps, stages, seg, wdec)
                torch.cuda.synchronize()
                err = ((y.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
                ms = graph_us(fn) / 1e3 if err < 2e-2 else None
            except Exception as e:  # noqa: BLE001
                err, ms = None, None
                print(f"# {name} {label} failed: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
            rows.append(dict(shape=name, variant=label, addr=addr, bh=bh, bf=bf, bk=bk, warps=warps,
                             stages=stages, seg=seg, err=err, us=None if ms is None else ms * 1e3,
                             cudnn_us=peer * 1e3))
        best = sorted([r for r in rows if r["shape"] == name and r["us"]], key=lambda r: r["us"])
        print(f"== {name}: cuDNN {peer * 1e3:.1f} us")
        seen = set()
        for r in [x for x in rows if x["shape"] == name and x["variant"].startswith("today")] + best:
            key = (r["variant"], r["addr"], r["bh"])
            if key in seen:
                continue
            seen.add(key)
            print(f"  {r['variant']:7s} addr={r['addr']} bh={r['bh']} bf={r['bf']:3d} bk={r['bk']} "
                  f"w={r['warps']} s={r['stages']}  {r['us'] or float('nan'):8.1f} us  "
                  f"x{peer * 1e3 / r['us'] if r['us'] else 0:.2f} of cuDNN  err={r['err']}")
    if out:
        with open(out, "w") as fh:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                           triton=triton.__version__, rows=rows), fh, indent=1)


if __name__ == "__main__":
    main()
