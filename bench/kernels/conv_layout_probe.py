"""Probe: does a channels-last (NHWC) activation layout, a window-major K loop with packed weights, flat pixel
tiles or TMA make Kitsune's implicit-GEMM convolutions reach cuDNN? Measured before building (NOTES section 23).

Shapes: inception_b8's (bf16, batch 8, 28 x 28, stride 1, "same" padding). Variants, each a hand-written Triton
kernel in a form the conv template could emit, checked against F.conv2d before it is timed (CUDA graph of 20
launches, ``graphtime.graph_us``):

  nchw-rows  today's form: NCHW input, K = c * kh * kw in chunks, whole output rows of one image flattened into
             one pixel axis of pow2 lanes (2 rows = 56 of 64 lanes)
  nchw-flat  the same K loop, pixel tiles cut from the flat index q = (n, oh, ow) (no idle lanes)
  nhwc       NHWC input, K loop window-major (kh, kw) x channel chunks, weights packed [kh, kw, c, f]: the
             input chunk is BK contiguous channels of a pixel (16-byte loads), the mask is per pixel
  nhwc-tma   as nhwc, input and weight tiles by TMA descriptors: BH rows x 32 columns of one image (28 valid),
             the window's shift as the box's start (zero fill outside the image)
  bgemm      a 1x1 convolution on NCHW as a batched GEMM per image: O_n[f, p] = W[f, c] X_n[c, p], pixel tiles
             inside an image; ``POOL`` 1 takes the 3x3 / stride-1 max pool of X on the fly (9 loads per element)
  bgemm-tma  the same with TMA descriptors (X as [N*C, HW], rows never cross an image)

Peers in the same run: cuDNN NCHW (F.conv2d), cuDNN channels-last (what Inductor calls after its layout
kernels), and max_pool2d + conv for the pooled branch.

    python bench/kernels/conv_layout_probe.py [--json out.json] [--quick]
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
def conv_nchw(X, Wt, Bias, Y, NB: tl.constexpr, C: tl.constexpr, H: tl.constexpr, W: tl.constexpr,
              FO: tl.constexpr, KS: tl.constexpr, PAD: tl.constexpr, BM: tl.constexpr, BF: tl.constexpr,
              BK: tl.constexpr, ROWS: tl.constexpr):
    """K = c * kh * kw (weights [f, c, kh, kw] contiguous along K); pixels: ROWS > 0 -> ROWS whole rows of one
    image in BM lanes, else BM pixels of the flat index."""
    pid = tl.program_id(0)
    nfb: tl.constexpr = (FO + BF - 1) // BF
    fb = pid % nfb
    t = pid // nfb
    lane = tl.arange(0, BM)
    if ROWS > 0:
        nrb: tl.constexpr = (H + ROWS - 1) // ROWS
        n = t // nrb
        oh = (t % nrb) * ROWS + lane // W
        ow = lane % W
        pval = (lane < ROWS * W) & (oh < H)
        n = n + lane * 0
    else:
        q = t * BM + lane
        pval = q < NB * H * W
        n = q // (H * W)
        oh = (q // W) % H
        ow = q % W
    f = fb * BF + tl.arange(0, BF)
    fval = f < FO
    r = tl.arange(0, BK)
    KT: tl.constexpr = C * KS * KS
    acc = tl.zeros([BM, BF], tl.float32)
    for k0 in range(0, KT, BK):
        kk = k0 + r
        c = kk // (KS * KS)
        kh = (kk // KS) % KS
        kw = kk % KS
        ih = oh[:, None] + kh[None, :] - PAD
        iw = ow[:, None] + kw[None, :] - PAD
        m = (kk[None, :] < KT) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W) & pval[:, None]
        off = (n * (C * H * W))[:, None] + c[None, :] * (H * W) + ih * W + iw
        a = tl.load(X + off, mask=m, other=0.0)
        b = tl.load(Wt + f[None, :] * KT + kk[:, None], mask=fval[None, :] & (kk[:, None] < KT), other=0.0)
        acc = tl.dot(a, b, acc)
    bias = tl.load(Bias + f, mask=fval, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    yoff = (n * (FO * H * W) + oh * W + ow)[:, None] + f[None, :] * (H * W)
    tl.store(Y + yoff, acc.to(tl.bfloat16), mask=pval[:, None] & fval[None, :])


@triton.jit
def conv_nhwc(X, Wp, Bias, Y, NB: tl.constexpr, C: tl.constexpr, H: tl.constexpr, W: tl.constexpr,
              FO: tl.constexpr, KS: tl.constexpr, PAD: tl.constexpr, BM: tl.constexpr, BF: tl.constexpr,
              BK: tl.constexpr, OUT_NHWC: tl.constexpr):
    """X [N, H, W, C]; Wp [kh, kw, c, f] (row-major [KS*KS*C, FO]); flat pixel tiles of BM."""
    pid = tl.program_id(0)
    nfb: tl.constexpr = (FO + BF - 1) // BF
    fb = pid % nfb
    t = pid // nfb
    q = t * BM + tl.arange(0, BM)
    pval = q < NB * H * W
    n = q // (H * W)
    oh = (q // W) % H
    ow = q % W
    f = fb * BF + tl.arange(0, BF)
    fval = f < FO
    r = tl.arange(0, BK)
    CC: tl.constexpr = (C + BK - 1) // BK
    acc = tl.zeros([BM, BF], tl.float32)
    for k in range(0, KS * KS * CC):
        kk = k // CC
        c = (k % CC) * BK + r
        ih = oh + kk // KS - PAD
        iw = ow + kk % KS - PAD
        pm = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W) & pval
        a = tl.load(X + (((n * H + ih) * W + iw) * C)[:, None] + c[None, :], mask=pm[:, None] & (c < C)[None, :],
                    other=0.0)
        b = tl.load(Wp + (kk * C + c)[:, None] * FO + f[None, :], mask=(c < C)[:, None] & fval[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
    bias = tl.load(Bias + f, mask=fval, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    if OUT_NHWC:
        yoff = q[:, None] * FO + f[None, :]
    else:
        yoff = (n * (FO * H * W) + oh * W + ow)[:, None] + f[None, :] * (H * W)
    tl.store(Y + yoff, acc.to(tl.bfloat16), mask=pval[:, None] & fval[None, :])


@triton.jit
def conv_nhwc_tma(xd, wd, Bias, Y, NB: tl.constexpr, C: tl.constexpr, H: tl.constexpr, W: tl.constexpr,
                  FO: tl.constexpr, KS: tl.constexpr, PAD: tl.constexpr, BH: tl.constexpr, BW: tl.constexpr,
                  BF: tl.constexpr, BK: tl.constexpr):
    """xd: descriptor of X [N, H, W, C], block [1, BH, BW, BK]; wd: of Wp [KS*KS*C, FO], block [BK, BF]. A work
    item: BH output rows x BW (>= W) columns of one image."""
    pid = tl.program_id(0)
    nfb: tl.constexpr = (FO + BF - 1) // BF
    nrb: tl.constexpr = (H + BH - 1) // BH
    fb = pid % nfb
    t = pid // nfb
    n = t // nrb
    oh0 = (t % nrb) * BH
    CC: tl.constexpr = (C + BK - 1) // BK
    acc = tl.zeros([BH * BW, BF], tl.float32)
    for k in range(0, KS * KS * CC):
        kk = k // CC
        c0 = (k % CC) * BK
        a = xd.load([n, oh0 + kk // KS - PAD, kk % KS - PAD, c0]).reshape(BH * BW, BK)
        b = wd.load([kk * C + c0, fb * BF])
        acc = tl.dot(a, b, acc)
    f = fb * BF + tl.arange(0, BF)
    fval = f < FO
    lane = tl.arange(0, BH * BW)
    oh = oh0 + lane // BW
    ow = lane % BW
    pval = (oh < H) & (ow < W)
    bias = tl.load(Bias + f, mask=fval, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    yoff = (n * (FO * H * W) + oh * W + ow)[:, None] + f[None, :] * (H * W)
    tl.store(Y + yoff, acc.to(tl.bfloat16), mask=pval[:, None] & fval[None, :])


@triton.jit
def conv1x1_bgemm(X, Wt, Bias, Y, C: tl.constexpr, HW: tl.constexpr, H: tl.constexpr, W: tl.constexpr,
                  FO: tl.constexpr, BP: tl.constexpr, BF: tl.constexpr, BK: tl.constexpr, POOL: tl.constexpr):
    """Y_n[f, p] = sum_c W[f, c] X_n[c, p] (+ bias); POOL: X_n[c, p] replaced by its 3x3 stride-1 max pool."""
    pid = tl.program_id(0)
    nfb: tl.constexpr = (FO + BF - 1) // BF
    npb: tl.constexpr = (HW + BP - 1) // BP
    fb = pid % nfb
    t = pid // nfb
    pb = t % npb
    n = t // npb
    p = pb * BP + tl.arange(0, BP)
    pval = p < HW
    f = fb * BF + tl.arange(0, BF)
    fval = f < FO
    r = tl.arange(0, BK)
    acc = tl.zeros([BF, BP], tl.float32)
    xb = X + n * (C * HW)
    for c0 in range(0, C, BK):
        c = c0 + r
        w = tl.load(Wt + f[:, None] * C + c[None, :], mask=fval[:, None] & (c < C)[None, :], other=0.0)
        if POOL:
            oh = p // W
            ow = p % W
            x = tl.full([BK, BP], float("-inf"), X.dtype.element_ty)
            for d in tl.static_range(9):
                ih = oh + d // 3 - 1
                iw = ow + d % 3 - 1
                pm = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W) & pval
                v = tl.load(xb + c[:, None] * HW + (p + (d // 3 - 1) * W + (d % 3 - 1))[None, :],
                            mask=(c < C)[:, None] & pm[None, :], other=float("-inf"))
                x = tl.maximum(x, v)
            x = tl.where(pval[None, :], x, 0.0).to(X.dtype.element_ty)
        else:
            x = tl.load(xb + c[:, None] * HW + p[None, :], mask=(c < C)[:, None] & pval[None, :], other=0.0)
        acc = tl.dot(w, x, acc)
    bias = tl.load(Bias + f, mask=fval, other=0.0).to(tl.float32)
    acc = acc + bias[:, None]
    tl.store(Y + n * (FO * HW) + f[:, None] * HW + p[None, :], acc.to(tl.bfloat16),
             mask=fval[:, None] & pval[None, :])


@triton.jit
def conv1x1_bgemm_tma(xd, wd, Bias, Y, C: tl.constexpr, HW: tl.constexpr, FO: tl.constexpr, BP: tl.constexpr,
                      BF: tl.constexpr, BK: tl.constexpr):
    """xd: descriptor of X as [N*C, HW], block [BK, BP]; wd: of W [FO, C], block [BF, BK]."""
    pid = tl.program_id(0)
    nfb: tl.constexpr = (FO + BF - 1) // BF
    npb: tl.constexpr = (HW + BP - 1) // BP
    fb = pid % nfb
    t = pid // nfb
    pb = t % npb
    n = t // npb
    acc = tl.zeros([BF, BP], tl.float32)
    for c0 in range(0, C, BK):
        w = wd.load([fb * BF, c0])
        x = xd.load([n * C + c0, pb * BP])
        acc = tl.dot(w, x, acc)
    f = fb * BF + tl.arange(0, BF)
    p = pb * BP + tl.arange(0, BP)
    fval = f < FO
    bias = tl.load(Bias + f, mask=fval, other=0.0).to(tl.float32)
    acc = acc + bias[:, None]
    tl.store(Y + n * (FO * HW) + f[:, None] * HW + p[None, :], acc.to(tl.bfloat16),
             mask=fval[:, None] & (p < HW)[None, :])


# name: (N, C, H, W, F, K, pad, pool)
SHAPES = {
    "3x3_96_128": (8, 96, 28, 28, 128, 3, 1, 0),
    "5x5_16_32": (8, 16, 28, 28, 32, 5, 2, 0),
    "1x1_256_176": (8, 256, 28, 28, 176, 1, 0, 0),  # the three 1x1 convolutions of x, merged
    "1x1_256_96": (8, 256, 28, 28, 96, 1, 0, 0),
    "1x1_256_64": (8, 256, 28, 28, 64, 1, 0, 0),
    "pool_1x1_256_32": (8, 256, 28, 28, 32, 1, 0, 1),  # max_pool2d(3, 1, 1) then 1x1
}


def p2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def candidates(shape, quick: bool):
    N, C, H, W, FO, K, pad, pool = shape
    bfs = [b for b in (32, 64, 128) if b <= max(32, p2(FO))]
    ws = ((4, 3), (4, 4), (8, 3)) if (K > 1 or FO > 128) else ((4, 3), (8, 3))
    out = []
    if K == 1:
        for bp in (64, 128):
            for bf in bfs:
                for bk in (32, 64):
                    for warps, stages in ws:
                        if warps == 8 and bf * bp < 8192:
                            continue
                        out.append(("bgemm", dict(BP=bp, BF=bf, BK=bk), warps, stages))
                        if not pool:
                            out.append(("bgemm-tma", dict(BP=bp, BF=bf, BK=bk), warps, stages))
    if not pool:
        out.append(("nchw-rows", dict(BM=64, BF=min(64, max(16, p2(FO))), BK=64, ROWS=2), 4, 3))
        for bm in (64, 128):
            for bf in bfs:
                for bk in (16, 32, 64):
                    if bk > max(16, p2(C)) or (bk == 16 and C >= 32):
                        continue
                    for warps, stages in ws:
                        if warps == 8 and bf * bm < 8192:
                            continue
                        if K > 1:  # a 1x1 convolution reads the user's NCHW input
                            out.append(("nhwc", dict(BM=bm, BF=bf, BK=bk, OUT_NHWC=0), warps, stages))
                        if K > 1 and C % bk == 0:
                            out.append(("nhwc-tma", dict(BH=bm // 32, BW=32, BF=bf, BK=bk), warps, stages))
                        if (warps, stages) == (4, 3):
                            out.append(("nchw-flat", dict(BM=bm, BF=bf, BK=bk, ROWS=0), warps, stages))
    if quick:
        out = out[:: max(1, len(out) // 6)]
    return out


def launch(label, cfg, warps, stages, t, shape):
    N, C, H, W, FO, K, pad, pool = shape
    x, xl, w, wp, b, y = t["x"], t["xl"], t["w"], t["wp"], t["b"], t["y"]
    if label in ("nchw-rows", "nchw-flat"):
        rows = cfg["ROWS"]
        items = N * (-(-H // rows)) if rows else -(-(N * H * W) // cfg["BM"])
        grid = (items * -(-FO // cfg["BF"]),)
        return lambda: conv_nchw[grid](x, w, b, y, N, C, H, W, FO, K, pad, cfg["BM"], cfg["BF"], cfg["BK"], rows,
                                       num_warps=warps, num_stages=stages)
    if label == "nhwc":
        grid = (-(-(N * H * W) // cfg["BM"]) * -(-FO // cfg["BF"]),)
        return lambda: conv_nhwc[grid](xl, wp, b, y, N, C, H, W, FO, K, pad, cfg["BM"], cfg["BF"], cfg["BK"],
                                       cfg["OUT_NHWC"], num_warps=warps, num_stages=stages)
    if label == "nhwc-tma":
        from triton.tools.tensor_descriptor import TensorDescriptor

        xd = TensorDescriptor.from_tensor(xl, [1, cfg["BH"], cfg["BW"], cfg["BK"]])
        wd = TensorDescriptor.from_tensor(wp, [cfg["BK"], cfg["BF"]])
        grid = (N * -(-H // cfg["BH"]) * -(-FO // cfg["BF"]),)
        return lambda: conv_nhwc_tma[grid](xd, wd, b, y, N, C, H, W, FO, K, pad, cfg["BH"], cfg["BW"], cfg["BF"],
                                           cfg["BK"], num_warps=warps, num_stages=stages)
    if label == "bgemm":
        grid = (N * -(-(H * W) // cfg["BP"]) * -(-FO // cfg["BF"]),)
        w2 = w.view(FO, C)
        return lambda: conv1x1_bgemm[grid](x, w2, b, y, C, H * W, H, W, FO, cfg["BP"], cfg["BF"], cfg["BK"], pool,
                                           num_warps=warps, num_stages=stages)
    if label == "bgemm-tma":
        from triton.tools.tensor_descriptor import TensorDescriptor

        xd = TensorDescriptor.from_tensor(x.view(N * C, H * W), [cfg["BK"], cfg["BP"]])
        wd = TensorDescriptor.from_tensor(w.view(FO, C), [cfg["BF"], cfg["BK"]])
        grid = (N * -(-(H * W) // cfg["BP"]) * -(-FO // cfg["BF"]),)
        return lambda: conv1x1_bgemm_tma[grid](xd, wd, b, y, C, H * W, FO, cfg["BP"], cfg["BF"], cfg["BK"],
                                               num_warps=warps, num_stages=stages)
    raise ValueError(label)


def main() -> None:
    out = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    quick = "--quick" in sys.argv
    dev = "cpu" if INTERPRET else "cuda"
    dt = torch.float32 if INTERPRET else torch.bfloat16  # the interpreter's bf16 dot is not exact
    shapes = SHAPES
    if INTERPRET:  # a CPU check of the kernels' arithmetic at a small size
        shapes = {k: (2, min(v[1], 32), 6, 6, min(v[4], 48)) + v[5:] for k, v in SHAPES.items()}  # C*HW*4 B: 16-byte rows
    torch.manual_seed(0)
    rows = []
    for name, shape in shapes.items():
        N, C, H, W, FO, K, pad, pool = shape
        x = torch.randn(N, C, H, W, device=dev, dtype=dt)
        w = (torch.randn(FO, C, K, K, device=dev) / (C * K * K) ** 0.5).to(dt)
        b = torch.randn(FO, device=dev, dtype=dt)
        t = dict(x=x, xl=x.permute(0, 2, 3, 1).contiguous(), w=w,
                 wp=w.permute(2, 3, 1, 0).contiguous().view(K * K * C, FO), b=b)
        xin = F.max_pool2d(x.float(), 3, 1, 1).to(dt) if pool else x
        ref = F.conv2d(xin.float(), w.float(), b.float(), padding=pad)
        peers = {}
        if not INTERPRET:
            peers["cudnn_nchw"] = graph_us((lambda: F.conv2d(F.max_pool2d(x, 3, 1, 1), w, b)) if pool else
                                           (lambda: F.conv2d(x, w, b, padding=pad)))
            xc, wc = x.to(memory_format=torch.channels_last), w.to(memory_format=torch.channels_last)
            peers["cudnn_nhwc"] = graph_us((lambda: F.conv2d(F.max_pool2d(xc, 3, 1, 1), wc, b)) if pool else
                                           (lambda: F.conv2d(xc, wc, b, padding=pad)))
            if pool:
                peers["maxpool_nchw"] = graph_us(lambda: F.max_pool2d(x, 3, 1, 1))
        t["y"] = torch.empty(N, FO, H, W, device=dev, dtype=dt)
        print(f"== {name} {shape}: " + ", ".join(f"{k} {v:.2f} us" for k, v in peers.items()), flush=True)
        best = {}
        cands = candidates(shape, quick)
        if INTERPRET:  # one of each form
            cands = [c for i, c in enumerate(cands) if c[0] not in [d[0] for d in cands[:i]]]
        for label, cfg, warps, stages in cands:
            t0 = time.perf_counter()
            try:
                t["y"].zero_()
                fn = launch(label, cfg, warps, stages, t, shape)
                fn()
                if not INTERPRET:
                    torch.cuda.synchronize()
                err = ((t["y"].float() - ref).abs().max() / ref.abs().max()).item()
                us = graph_us(fn) if (err < 2e-2 and not INTERPRET) else None
            except Exception as e:  # noqa: BLE001
                err, us = None, None
                print(f"#  {label} {cfg} w{warps} s{stages} failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
            row = dict(shape=name, variant=label, cfg=cfg, warps=warps, stages=stages, err=err, us=us, **peers)
            rows.append(row)
            if INTERPRET:
                print(f"   {label:10s} {cfg} err={err} ({time.perf_counter() - t0:.1f} s)", flush=True)
            if us is not None and (label not in best or us < best[label]["us"]):
                best[label] = row
        for label, r in sorted(best.items(), key=lambda kv: kv[1]["us"]):
            ref_us = min(peers.values()) if peers else float("nan")
            print(f"   {label:10s} {r['us']:7.2f} us  {r['cfg']} w{r['warps']} s{r['stages']}  "
                  f"best cuDNN / this {ref_us / r['us']:.2f}", flush=True)
    if out:
        with open(out, "w") as fh:
            json.dump(dict(device=torch.cuda.get_device_name() if not INTERPRET else "cpu-interpreter",
                           torch=torch.__version__, triton=triton.__version__, date=time.strftime("%Y-%m-%d"),
                           rows=rows), fh, indent=1)


if __name__ == "__main__":
    main()
