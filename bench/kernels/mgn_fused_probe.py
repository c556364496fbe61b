"""mgn_10k's edge MLP as one kernel: is a two-layer chain with gathered endpoints, a LayerNorm, a residual and a fused
scatter worth building in the compiler? (bench/kernels/NOTES.md section 26)

Per tile of edges, hand-written Triton:

    a   = e[rows]                                             (read once: the first dot's operand and the residual)
    h   = relu(a W_e^T + b1 + P[src, :128] + P[dst, 128:])    (as kitsune-project-gathers leaves the first layer)
    m   = LN(h W_2^T + b2)                                    (h stays in registers, the second dot's A operand)
    out = e + m ;  agg[dst] += m                              (fp32 atomics, or bf16 atomics as eager's index_add)

against the two kernels of bench/kernels/mgn_probe.py (edge1 + edge2, their best configs) in the same process.
Variants: rows per tile and warps, one program per tile or persistent, fp32 / bf16 atomics, the endpoint gathers
issued before or after the first dot.

    python bench/kernels/mgn_fused_probe.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
import triton
import triton.language as tl

from mgn_probe import D, E, N, bench, edge1, edge2, edge_hidden, edge_inputs


@triton.jit
def edge_fused(e, w1, b1, p, src, dst, w2, b2, g, beta, out, agg, M, step, ITERS: tl.constexpr,
               SCATTER: tl.constexpr, EARLY: tl.constexpr, BM: tl.constexpr, SEG: tl.constexpr):
    """The first layer in column segments of SEG: each segment of h is the second dot's A operand for SEG of its
    K as soon as it is computed, so only one segment of h is live."""
    rows_ = tl.arange(0, BM)
    cols = tl.arange(0, 128)
    seg = tl.arange(0, SEG)
    bias2 = tl.load(b2 + cols).to(tl.float32)
    gam = tl.load(g + cols).to(tl.float32)
    bet = tl.load(beta + cols).to(tl.float32)
    for it in range(0, ITERS):
        t = tl.program_id(0) + it * step
        rows = t * BM + rows_
        rm = rows < M
        s = tl.load(src + rows, mask=rm, other=0)
        d = tl.load(dst + rows, mask=rm, other=0)
        a = tl.load(e + rows[:, None] * 128 + cols[None, :], mask=rm[:, None], other=0.0)
        acc2 = tl.zeros([BM, 128], tl.float32)
        for j in tl.static_range(0, 128, SEG):
            if EARLY:
                gs = tl.load(p + s[:, None] * 256 + j + seg[None, :], mask=rm[:, None], other=0.0)
                gd = tl.load(p + d[:, None] * 256 + 128 + j + seg[None, :], mask=rm[:, None], other=0.0)
            wa = tl.load(w1 + (j + seg)[:, None] * 128 + cols[None, :])  # W_e[j:j+SEG, :]
            acc = tl.dot(a, tl.trans(wa))
            if not EARLY:
                gs = tl.load(p + s[:, None] * 256 + j + seg[None, :], mask=rm[:, None], other=0.0)
                gd = tl.load(p + d[:, None] * 256 + 128 + j + seg[None, :], mask=rm[:, None], other=0.0)
            bias1 = tl.load(b1 + j + seg).to(tl.float32)
            acc = acc + bias1[None, :] + gs.to(tl.float32) + gd.to(tl.float32)
            h = tl.maximum(acc, 0.0).to(tl.bfloat16)
            wb = tl.load(w2 + cols[:, None] * 128 + j + seg[None, :])  # W_2[:, j:j+SEG]
            acc2 = tl.dot(h, tl.trans(wb), acc2)
        acc2 = acc2 + bias2[None, :]
        mean = tl.sum(acc2, axis=1) / 128
        xc = acc2 - mean[:, None]
        var = tl.sum(xc * xc, axis=1) / 128
        m = (xc * tl.rsqrt(var + 1e-5)[:, None] * gam[None, :] + bet[None, :]).to(tl.bfloat16)
        tl.store(out + rows[:, None] * 128 + cols[None, :], (a.to(tl.float32) + m.to(tl.float32)).to(tl.bfloat16),
                 mask=rm[:, None])
        if SCATTER == 1:
            tl.atomic_add(agg + d[:, None] * 128 + cols[None, :], m.to(tl.float32), mask=rm[:, None], sem="relaxed")
        if SCATTER == 2:
            tl.atomic_add(agg + d[:, None] * 128 + cols[None, :], m, mask=rm[:, None], sem="relaxed")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    dev = "cuda"
    e, w1, b1, p, src, dst, w2, b2, gam, bet, h, out, agg32, agg16 = edge_inputs(dev)
    bf = torch.bfloat16
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    # reference (fp32 math on the bf16 inputs; h and m rounded to bf16 as the kernels do)
    rh = edge_hidden(e, w1, b1, p, src, dst).to(bf)
    rm_ = torch.nn.functional.layer_norm(rh.float() @ w2.float().T + b2.float(), (D,), gam.float(), bet.float())
    rm_ = rm_.to(bf)
    ref_out = (e.float() + rm_.float())
    ref_agg = torch.zeros(N, D, device=dev).index_add_(0, dst, rm_.float())
    rows = []

    def record(name, us, **kw):
        rows.append({"kernel": name, "us": us, **kw})
        print(f"{name:12s} {' '.join(f'{k}={v}' for k, v in kw.items())}: {us:7.1f} us", flush=True)

    # the two-kernel baseline (mgn_probe's best configs: 64 rows / 4 warps, one program per tile)
    for scatter in (1, 2):
        agg = agg16 if scatter == 2 else agg32

        def two(agg=agg, scatter=scatter):
            agg.zero_()
            edge1[(triton.cdiv(E, 64),)](e, w1, b1, p, src, dst, h, E, triton.cdiv(E, 64), 1, GATHER=1, BM=64,
                                        num_warps=4, num_stages=3)
            edge2[(triton.cdiv(E, 64),)](h, w2, b2, gam, bet, e, dst, out, agg, E, triton.cdiv(E, 64), 1,
                                        SCATTER=scatter, EARLY=0, BM=64, num_warps=4, num_stages=3)
        record("two_kernels", bench(two), scatter=scatter)
    configs = [(sc, 0, seg, bm, w, pe) for sc in (1, 2) for seg in (32, 64, 128) for bm, w in ((64, 4), (64, 8), (128, 8))
               for pe in (0, 1)]
    configs += [(1, 1, 64, bm, w, 0) for bm, w in ((64, 4), (64, 8), (128, 8))]
    for scatter, early, seg, bm, warps, persist in configs:
        tiles = triton.cdiv(E, bm)
        grid = (min(sms * max(1, 128 // bm), tiles) if persist else tiles,)
        agg = agg16 if scatter == 2 else agg32

        def run(scatter=scatter, early=early, bm=bm, warps=warps, grid=grid, agg=agg, seg=seg):
            agg.zero_()
            edge_fused[grid](e, w1, b1, p, src, dst, w2, b2, gam, bet, out, agg, E, grid[0],
                             triton.cdiv(triton.cdiv(E, bm), grid[0]), SCATTER=scatter, EARLY=early,
                             BM=bm, SEG=seg, num_warps=warps, num_stages=1)
        kw = dict(scatter=scatter, early=early, SEG=seg, BM=bm, warps=warps, persist=persist)
        try:
            us = bench(run)
        except Exception as ex:  # noqa: BLE001 (a config that does not compile is a row, not a stop)
            record("fused", float("nan"), **kw, error=str(ex)[:80])
            continue
        run()
        torch.cuda.synchronize()
        err_out = float((out.float() - ref_out).abs().max())
        err_agg = float((agg.float() - ref_agg).abs().max())
        record("fused", us, **kw, err_out=round(err_out, 4), err_agg=round(err_agg, 4))
    z = torch.empty(N, D, dtype=torch.float32, device=dev)
    record("zero_fill", bench(lambda: z.zero_()))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
