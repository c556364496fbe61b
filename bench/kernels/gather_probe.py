"""Probe: DLRM's embedding bags and pairwise interaction, in the forms a template could emit, against torch.

    python bench/kernels/gather_probe.py [--out FILE.json]

Embedding bags (dlrm_b2048: 8 tables [100000, 64] bf16, 2048 bags of 20 indices each, sum):
* ``flat``: what Kitsune emits today (the generic evaluator): one load of a [B, 64, 32] tile (bag, column,
  index padded to 32) and a sum over the last axis;
* ``idxmid``: the same rows as a [B, 32, 64] tile (index in the middle, the row's 64 columns last), sum over
  axis 1;
* ``loop``: an fp32 accumulator [B, 64] and a loop over the 20 indices, one [B, 64] row load per step
  (``num_stages`` pipelines it);
B bags per program, warps; all 8 tables in one launch (program -> table, bag block).

Interaction (the 9 vectors of a sample, [2048, 9, 64] -> Z = T T^T [2048, 9, 9]):
* ``ewise``: Kitsune's form today (multiply-accumulate over an [8, 128, 8] tile with // 9 and % 9 indices);
* ``dot``: BB samples per program, the 9 rows padded to 16, one batched tl.dot [BB, 16, 64] x [BB, 64, 16].
Peers: torch ``F.embedding_bag`` per table, ``torch.bmm``. Every variant is checked against torch first.
Timing: do_bench (L2 flushed between calls) of one call captured in a CUDA graph.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from triton.testing import do_bench

T_, V, D, NB, L = 8, 100000, 64, 2048, 20


@triton.jit
def bag_tile(idx, w, out, B: tl.constexpr, V: tl.constexpr, NB: tl.constexpr, L: tl.constexpr, LP: tl.constexpr,
             D: tl.constexpr, IDX_MID: tl.constexpr):
    """One load of the bags' rows and a sum over the index axis: [B, D, LP] (``flat``), or [B, LP, D] with
    ``IDX_MID`` (``idxmid``)."""
    pid = tl.program_id(0)
    per: tl.constexpr = NB // B
    t = pid // per
    c = pid % per
    b = tl.arange(0, B)
    d = tl.arange(0, D)
    j = tl.arange(0, LP)
    jm = j < L
    ix = tl.load(idx + t * NB * L + (c * B + b)[:, None] * L + j[None, :], mask=jm[None, :], other=0).to(tl.int64)
    if IDX_MID:
        rows = tl.load(w + t * V * D + D * ix[:, :, None] + d[None, None, :], mask=jm[None, :, None], other=0.0)
        acc = tl.sum(rows.to(tl.float32), axis=1)
    else:
        rows = tl.load(w + t * V * D + d[None, :, None] + D * ix[:, None, :], mask=jm[None, None, :], other=0.0)
        acc = tl.sum(rows.to(tl.float32), axis=2)
    tl.store(out + t * NB * D + (c * B + b)[:, None] * D + d[None, :], acc.to(tl.bfloat16))


@triton.jit
def bag_loop(idx, w, out, B: tl.constexpr, V: tl.constexpr, NB: tl.constexpr, L: tl.constexpr, D: tl.constexpr,
             STAGES: tl.constexpr):
    pid = tl.program_id(0)
    per: tl.constexpr = NB // B
    t = pid // per
    c = pid % per
    b = tl.arange(0, B)
    d = tl.arange(0, D)
    acc = tl.zeros([B, D], tl.float32)
    for j in tl.range(0, L, num_stages=STAGES):
        ix = tl.load(idx + t * NB * L + (c * B + b) * L + j).to(tl.int64)
        acc += tl.load(w + t * V * D + D * ix[:, None] + d[None, :]).to(tl.float32)
    tl.store(out + t * NB * D + (c * B + b)[:, None] * D + d[None, :], acc.to(tl.bfloat16))


@triton.jit
def inter_ewise(x, z, NS: tl.constexpr):
    pid = tl.program_id(0)
    o1 = tl.arange(0, 8)
    o3 = tl.minimum(tl.arange(0, 128), 80)
    r5 = tl.arange(0, 8)
    c2 = pid
    acc = tl.full([8, 128, 8], 0.0, tl.float32)
    for k6 in range(0, 64, 8):
        v7 = tl.load(x + (64 * (((648 * c2 + 81 * o1[:, None, None] + o3[None, :, None]) // 9) % 9) + 4608 * c2 + k6
                          + 576 * o1[:, None, None] + r5[None, None, :])).to(tl.float32)
        v8 = tl.load(x + (64 * (o3[None, :, None] % 9) + 4608 * c2 + k6 + 576 * o1[:, None, None]
                          + r5[None, None, :])).to(tl.float32)
        acc = acc + v7 * v8
    v10 = tl.sum(acc, axis=2)
    o3r = tl.arange(0, 128)
    tl.store(z + (648 * c2 + 81 * o1[:, None] + o3[None, :]), v10.to(tl.bfloat16), mask=(o3r[None, :] < 81))


@triton.jit
def inter_dot(x, z, BB: tl.constexpr):
    pid = tl.program_id(0)
    s = pid * BB + tl.arange(0, BB)
    i = tl.arange(0, 16)
    k = tl.arange(0, 64)
    m = (i < 9)
    a = tl.load(x + s[:, None, None] * 576 + i[None, :, None] * 64 + k[None, None, :], mask=m[None, :, None],
                other=0.0)
    bt = tl.load(x + s[:, None, None] * 576 + i[None, None, :] * 64 + k[None, :, None], mask=m[None, None, :],
                 other=0.0)
    acc = tl.dot(a, bt)
    tl.store(z + s[:, None, None] * 81 + i[None, :, None] * 9 + i[None, None, :], acc.to(tl.bfloat16),
             mask=m[None, :, None] & m[None, None, :])


def timed(fn) -> float:
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return do_bench(g.replay, warmup=25, rep=200, return_mode="median") * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    a = ap.parse_args()
    torch.manual_seed(0)
    dev = "cuda"
    w = torch.randn(T_, V, D, device=dev, dtype=torch.bfloat16)
    idx = torch.randint(0, V, (T_, NB, L), device=dev, dtype=torch.int64)
    out = torch.empty(T_, NB, D, device=dev, dtype=torch.bfloat16)
    ref = torch.stack([F.embedding_bag(idx[t], w[t], mode="sum") for t in range(T_)])
    rows = []

    def rec(kind, variant, cfg, us, err):
        r = {"kind": kind, "variant": variant, "cfg": cfg, "us": us, "err": err}
        rows.append(r)
        print(f"{kind:12s} {variant:8s} {str(cfg):40s} {us:8.2f} us  err {err:.2e}", flush=True)

    gathered = T_ * NB * L * D * 2
    peer = timed(lambda: [F.embedding_bag(idx[t], w[t], mode="sum") for t in range(T_)])
    rec("bag", "torch", {}, peer, 0.0)
    for B in (4, 8, 16, 32):
        for warps in (2, 4, 8):
            for variant in ("flat", "idxmid", "loop"):
                for st in ((1, 2, 3, 4) if variant == "loop" else (1,)):
                    grid = (T_ * NB // B,)
                    if variant in ("flat", "idxmid"):
                        fn = lambda: bag_tile[grid](idx, w, out, B, V, NB, L, 32, D, variant == "idxmid",  # noqa: E731
                                                    num_warps=warps)
                    else:
                        fn = lambda: bag_loop[grid](idx, w, out, B, V, NB, L, D, st, num_warps=warps)  # noqa: E731
                    try:
                        out.zero_()
                        fn()
                        torch.cuda.synchronize()
                        err = ((out.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
                        if err > 2e-2:
                            rec("bag", variant, {"B": B, "warps": warps, "stages": st}, float("nan"), err)
                            continue
                        rec("bag", variant, {"B": B, "warps": warps, "stages": st}, timed(fn), err)
                    except Exception as e:  # noqa: BLE001
                        print(f"bag {variant} B{B} w{warps} s{st}: {type(e).__name__}: {str(e)[:200]}", flush=True)
    best = min((r for r in rows if r["kind"] == "bag" and r["us"] == r["us"]), key=lambda r: r["us"])
    print(f"bag best {best['variant']} {best['cfg']} {best['us']:.2f} us = {gathered / best['us'] / 1e6:.2f} TB/s "
          f"of the gathered bytes; torch {peer:.2f} us", flush=True)

    x = torch.randn(NB, 9, D, device=dev, dtype=torch.bfloat16)
    z = torch.empty(NB, 9, 9, device=dev, dtype=torch.bfloat16)
    zref = torch.bmm(x.float(), x.float().transpose(1, 2))
    rec("interaction", "torch", {}, timed(lambda: torch.bmm(x, x.transpose(1, 2))), 0.0)

    def check(fn):
        z.zero_()
        fn()
        torch.cuda.synchronize()
        return ((z.float() - zref).abs().max() / zref.abs().max()).item()

    fn = lambda: inter_ewise[(NB // 8,)](x, z, 0, num_warps=4)  # noqa: E731
    rec("interaction", "ewise", {"warps": 4}, timed(fn), check(fn))
    for BB in (2, 4, 8, 16):
        for warps in (1, 2, 4):
            fn = lambda: inter_dot[(NB // BB,)](x, z, BB, num_warps=warps)  # noqa: E731
            try:
                err = check(fn)
                rec("interaction", "dot", {"BB": BB, "warps": warps}, timed(fn), err)
            except Exception as e:  # noqa: BLE001
                print(f"inter dot BB{BB} w{warps}: {type(e).__name__}: {str(e)[:200]}", flush=True)
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
            "timing": "do_bench median of one call in a CUDA graph (L2 flushed)", "gathered_bytes": gathered}
    if a.out:
        json.dump({"meta": meta, "records": rows}, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
