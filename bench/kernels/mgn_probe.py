"""Where mgn_10k's two edge kernels spend their time: hand-written Triton variants of the generated stages
(bench/kernels/NOTES.md section 25), timed alone in CUDA graphs on the GPU.

edge1: h = relu(e W_e^T + b + P[src, :128] + P[dst, 128:])  (the edge GEMM with its projected endpoints gathered in
       the epilogue, as kitsune-project-gathers leaves it); variants: no gathers (the GEMM's own floor), gathers
       after the K loop (as generated), gathers issued before the K loop.
edge2: m = LN(h W_2^T + b2); out = e + m; agg[dst] += m  (the second GEMM with its norm, residual and fused
       scatter); variants: no scatter, fp32 atomics (as generated), bf16 atomics into a bf16 accumulator (what
       eager's index_add does), and the residual's load issued before the K loop.

    python bench/kernels/mgn_probe.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
import triton
import triton.language as tl

E, N, D = 60000, 10000, 128


@triton.jit
def edge1(e, w, b, p, src, dst, h, M, step, ITERS: tl.constexpr, GATHER: tl.constexpr, BM: tl.constexpr):
    rows_ = tl.arange(0, BM)
    cols = tl.arange(0, 128)
    ks = tl.arange(0, 64)
    bias = tl.load(b + cols).to(tl.float32)
    for it in range(0, ITERS):
        t = tl.program_id(0) + it * step
        rows = t * BM + rows_
        rm = rows < M  # (a tile past the end: every access masked)
        if GATHER == 2:  # endpoints loaded before the K loop
            s = tl.load(src + rows, mask=rm, other=0)
            d = tl.load(dst + rows, mask=rm, other=0)
            gs = tl.load(p + s[:, None] * 256 + cols[None, :], mask=rm[:, None], other=0.0)
            gd = tl.load(p + d[:, None] * 256 + 128 + cols[None, :], mask=rm[:, None], other=0.0)
        acc = tl.zeros([BM, 128], tl.float32)
        for k in range(0, 128, 64):
            a = tl.load(e + rows[:, None] * 128 + k + ks[None, :], mask=rm[:, None], other=0.0)
            bw = tl.load(w + cols[:, None] * 128 + k + ks[None, :])
            acc = tl.dot(a, tl.trans(bw), acc)
        acc = acc + bias[None, :]
        if GATHER == 1:  # after the K loop (as generated)
            s = tl.load(src + rows, mask=rm, other=0)
            d = tl.load(dst + rows, mask=rm, other=0)
            gs = tl.load(p + s[:, None] * 256 + cols[None, :], mask=rm[:, None], other=0.0)
            gd = tl.load(p + d[:, None] * 256 + 128 + cols[None, :], mask=rm[:, None], other=0.0)
        if GATHER:
            acc = acc + gs.to(tl.float32) + gd.to(tl.float32)
        acc = tl.maximum(acc, 0.0)
        tl.store(h + rows[:, None] * 128 + cols[None, :], acc.to(tl.bfloat16), mask=rm[:, None])


@triton.jit
def edge2(hin, w, b, g, beta, e, dst, out, agg, M, step, ITERS: tl.constexpr, SCATTER: tl.constexpr,
          EARLY: tl.constexpr, BM: tl.constexpr):
    rows_ = tl.arange(0, BM)
    cols = tl.arange(0, 128)
    ks = tl.arange(0, 64)
    bias = tl.load(b + cols).to(tl.float32)
    gam = tl.load(g + cols).to(tl.float32)
    bet = tl.load(beta + cols).to(tl.float32)
    for it in range(0, ITERS):
        t = tl.program_id(0) + it * step
        rows = t * BM + rows_
        rm = rows < M  # (a tile past the end: every access masked)
        if EARLY:
            res = tl.load(e + rows[:, None] * 128 + cols[None, :], mask=rm[:, None], other=0.0)
            d = tl.load(dst + rows, mask=rm, other=0)
        acc = tl.zeros([BM, 128], tl.float32)
        for k in range(0, 128, 64):
            a = tl.load(hin + rows[:, None] * 128 + k + ks[None, :], mask=rm[:, None], other=0.0)
            bw = tl.load(w + cols[:, None] * 128 + k + ks[None, :])
            acc = tl.dot(a, tl.trans(bw), acc)
        acc = acc + bias[None, :]
        mean = tl.sum(acc, axis=1) / 128
        xc = acc - mean[:, None]
        var = tl.sum(xc * xc, axis=1) / 128
        m = xc * tl.rsqrt(var + 1e-5)[:, None] * gam[None, :] + bet[None, :]
        if not EARLY:
            res = tl.load(e + rows[:, None] * 128 + cols[None, :], mask=rm[:, None], other=0.0)
            d = tl.load(dst + rows, mask=rm, other=0)
        tl.store(out + rows[:, None] * 128 + cols[None, :], (res.to(tl.float32) + m).to(tl.bfloat16),
                 mask=rm[:, None])
        if SCATTER == 1:
            tl.atomic_add(agg + d[:, None] * 128 + cols[None, :], m, mask=rm[:, None], sem="relaxed")
        if SCATTER == 2:
            tl.atomic_add(agg + d[:, None] * 128 + cols[None, :], m.to(tl.bfloat16), mask=rm[:, None], sem="relaxed")


def edge_inputs(dev: str = "cuda") -> tuple:
    """The edge MLP's tensors at mgn_10k's size, seeded: (e, w1, b1, p, src, dst, w2, b2, gamma, beta) and the
    buffers (h, out, an fp32 and a bf16 node accumulator)."""
    g = torch.Generator(device="cpu").manual_seed(0)
    bf = torch.bfloat16

    def rnd(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g) / scale).to(bf).to(dev)

    e, w1, b1, p = rnd(E, D, scale=4), rnd(D, D, scale=11), rnd(D), rnd(N, 2 * D)
    src = torch.randint(0, N, (E,), generator=g).to(dev)
    dst = torch.randint(0, N, (E,), generator=g).to(dev)
    w2, b2, gam, bet = rnd(D, D, scale=11), rnd(D), rnd(D), rnd(D)
    return (e, w1, b1, p, src, dst, w2, b2, gam, bet, torch.empty(E, D, dtype=bf, device=dev),
            torch.empty(E, D, dtype=bf, device=dev), torch.zeros(N, D, dtype=torch.float32, device=dev),
            torch.zeros(N, D, dtype=bf, device=dev))


def edge_hidden(e, w1, b1, p, src, dst):
    """The edge MLP's first layer in fp32 on the bf16 inputs: relu(e W1^T + b1 + P_src[src] + P_dst[dst])."""
    return torch.relu(e.float() @ w1.float().T + b1.float() + p[src, :D].float() + p[dst, D:].float())


def bench(fn) -> float:
    fn()
    torch.cuda.synchronize()
    return triton.testing.do_bench_cudagraph(fn, rep=200) * 1e3  # us


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    dev = "cuda"
    e, w1, b1, p, src, dst, w2, b2, gam, bet, h, out, agg32, agg16 = edge_inputs(dev)
    bf = torch.bfloat16
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    ref_h = edge_hidden(e, w1, b1, p, src, dst)
    for gather in (0, 1, 2):
        for bm, warps in ((64, 4), (128, 8)):
            for persist in (0, 1):
                grid = (min(sms * (2 if bm == 64 else 1), triton.cdiv(E, bm)) if persist else triton.cdiv(E, bm),)

                def run(gather=gather, bm=bm, warps=warps, grid=grid, persist=persist):
                    edge1[grid](e, w1, b1, p, src, dst, h, E, grid[0], triton.cdiv(triton.cdiv(E, bm), grid[0]),
                                GATHER=gather, BM=bm,
                                num_warps=warps, num_stages=3)
                us = bench(run)
                err = float((h.float() - ref_h).abs().max()) if gather else float("nan")
                rows.append({"kernel": "edge1", "gather": gather, "BM": bm, "warps": warps, "persist": persist,
                             "us": us, "max_err": err})
                print(f"edge1 gather={gather} BM={bm} w={warps} persist={persist}: {us:7.1f} us  err {err:.3g}",
                      flush=True)
    h.copy_(ref_h.to(bf))
    for scatter in (0, 1, 2):
        for early in (0, 1):
            for bm, warps in ((64, 4), (64, 8), (128, 8)):
                for persist in (0, 1):
                    grid = (min(sms * (2 if bm == 64 else 1), triton.cdiv(E, bm)) if persist
                            else triton.cdiv(E, bm),)
                    agg = agg16 if scatter == 2 else agg32

                    def run(scatter=scatter, early=early, bm=bm, warps=warps, grid=grid, agg=agg, persist=persist):
                        agg.zero_()
                        edge2[grid](h, w2, b2, gam, bet, e, dst, out, agg, E, grid[0],
                                    triton.cdiv(triton.cdiv(E, bm), grid[0]), SCATTER=scatter, EARLY=early,
                                    BM=bm, num_warps=warps, num_stages=3)
                    us = bench(run)
                    rows.append({"kernel": "edge2", "scatter": scatter, "early": early, "BM": bm, "warps": warps,
                                 "persist": persist, "us": us})
                    print(f"edge2 scatter={scatter} early={early} BM={bm} w={warps} persist={persist}: {us:7.1f} us",
                          flush=True)
    z = torch.empty(N, D, dtype=torch.float32, device=dev)
    rows.append({"kernel": "zero_fill_fp32", "us": bench(lambda: z.zero_())})
    print(f"zero fill fp32 [10000, 128]: {rows[-1]['us']:.1f} us")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
