"""Does a kernel that prefetches the next kernel's weights into the L2 speed up a chain of memory-bound gemvs?

Issue 14's llama_decode_b1 streams 124 MB through six dependent kernels at ~2.4 TB/s; the pieces that run below the
DRAM's rate (the 8-12 MB QKV and O projections, the attention) leave the pipe idle while the next weights wait to be
read. This probe builds b1's chain from plain Triton gemvs (QKV 3072x2048, a 2 MB attention-sized read, O 2048x2048,
gate/up 16384x2048, down 2048x8192; bf16 weights, 4 rows a program as Kitsune's M = 1 gemv) and times one step,
its weights rotated past the L2, with each kernel also prefetching into the L2 the weights of the kernels after it:

    python bench/kernels/l2_prefetch_probe.py [--json OUT]

Prefetch forms: ``line`` (``prefetch.global.L2`` per 128-byte line, one per thread), ``bulk`` (one
``cp.async.bulk.prefetch.L2.global`` of the program's contiguous share, from one thread); distance: the next
kernel's weights, or the next kernels' up to a byte budget.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from graphtime import rotating_us  # noqa: E402

LINE = 64  # bf16 elements in a 128-byte line


@triton.jit
def _prefetch(pf, pf_lo, pf_n, pid, nprog, FORM: tl.constexpr):
    """Program ``pid`` of ``nprog`` prefetches its share of elements [pf_lo, pf_lo + pf_n) of ``pf`` into the L2."""
    share = tl.cdiv(tl.cdiv(pf_n, nprog), 64) * 64
    lo = pf_lo + pid * share
    hi = tl.minimum(lo + share, pf_lo + pf_n)
    if FORM == 1:
        for i in range(lo, hi, 64 * 128):
            offs = i + tl.arange(0, 128) * 64
            offs = tl.minimum(offs, hi - 1)
            tl.inline_asm_elementwise("prefetch.global.L2 [$1];\n\tmov.u32 $0, 0;", "=r,l", [pf + offs],
                                      dtype=tl.int32, is_pure=False, pack=1)
    if FORM == 2:
        nbytes = (hi - lo) * 2
        first = tl.arange(0, 128) == 0
        if nbytes > 0:
            tl.inline_asm_elementwise(
                "{\n\t.reg .pred p;\n\tsetp.ne.s32 p, $2, 0;\n\t@p cp.async.bulk.prefetch.L2.global [$1], $3;\n\t"
                "mov.u32 $0, 0;\n\t}", "=r,l,r,r", [pf + lo + tl.zeros([128], tl.int32), first.to(tl.int32),
                                                   nbytes + tl.zeros([128], tl.int32)],
                dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _gemv(w, x, y, K, pf0, lo0, n0, pf1, lo1, n1, ROWS: tl.constexpr, BK: tl.constexpr, FORM: tl.constexpr,
          EVICT: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    if FORM != 0:
        _prefetch(pf0, lo0, n0, pid, nprog, FORM)
        _prefetch(pf1, lo1, n1, pid, nprog, FORM)
    rows = pid * ROWS + tl.arange(0, ROWS)
    acc = tl.zeros([ROWS, BK], tl.float32)
    for k in range(0, K, BK):
        cols = k + tl.arange(0, BK)
        if EVICT:
            wv = tl.load(w + rows[:, None].to(tl.int64) * K + cols[None, :], eviction_policy="evict_first")
        else:
            wv = tl.load(w + rows[:, None].to(tl.int64) * K + cols[None, :])
        xv = tl.load(x + cols)
        acc += wv.to(tl.float32) * xv.to(tl.float32)[None, :]
    tl.store(y + rows, tl.sum(acc, axis=1).to(tl.bfloat16))


# (name, N rows, K) of b1's chain; "attn" is a 2 MB read shaped as a gemv of 1024 rows of 1024
CHAIN = [("qkv", 3072, 2048), ("attn", 1024, 1024), ("o", 2048, 2048), ("gate_up", 16384, 2048),
         ("down", 2048, 8192)]


def _plan(form: int, budgets_mb, distance: int):
    """For each kernel, up to two (weight index, lo, n) prefetch ranges of the kernels after it: kernel i takes up to
    ``budgets_mb[i]`` MB (a number: the same for all) of what the next ``distance`` kernels read and no earlier kernel
    prefetched, in order."""
    plans = []
    sizes = [n * k for _, n, k in CHAIN]
    done = [0] * len(CHAIN)  # what earlier kernels already prefetched of each weight (elements, from its start)
    for i in range(len(CHAIN)):
        mb = budgets_mb[i] if isinstance(budgets_mb, (list, tuple)) else budgets_mb
        budget = int(mb * 1e6 / 2)
        ranges = []
        for j in range(i + 1, min(len(CHAIN), i + 1 + distance)):
            take = min(sizes[j] - done[j], budget)
            take = take // LINE * LINE
            if take > 0 and form:
                ranges.append((j, done[j], take))
                done[j] += take
                budget -= take
            if len(ranges) == 2 or budget <= 0:
                break
        plans.append(ranges)
    return plans


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    dev = "cuda"
    torch.manual_seed(0)
    copies = 3  # 3 x 124 MB rotated: each step's weights left the 50 MB L2 two steps before
    weights = [[torch.randn(n, k, device=dev, dtype=torch.bfloat16) * 0.02 for _, n, k in CHAIN]
               for _ in range(copies)]
    xs = [torch.randn(max(k for _, _, k in CHAIN), device=dev, dtype=torch.bfloat16)]
    ys = [torch.empty(n, device=dev, dtype=torch.bfloat16) for _, n, _ in CHAIN]
    dummy = weights[0][0]

    def step_fn(ws, form, plan, evict, bk):
        def step():
            x = xs[0]  # every kernel reads one input vector; the stream orders the launches
            for i, (name, n, k) in enumerate(CHAIN):
                r = plan[i] + [(None, 0, 0)] * (2 - len(plan[i]))
                pfa = [(ws[j] if j is not None else dummy, lo, m) for j, lo, m in r]
                _gemv[(n // 4,)](ws[i], x, ys[i], k, pfa[0][0], pfa[0][1], pfa[0][2], pfa[1][0], pfa[1][1],
                                 pfa[1][2], ROWS=4, BK=min(k, bk), FORM=form, EVICT=evict, num_warps=4)
        return step

    def time_variant(form, budget, distance, evict, bk=2048):
        plan = _plan(form, budget, distance)
        return rotating_us([step_fn(weights[c], form, plan, evict, bk) for c in range(copies)], reps=21), plan

    # (name, form, per-kernel MB budgets or one for all, distance, evict_first on the own weights)
    variants = [("none", 0, 0, 1, 0),
                ("bulk next 4MB", 2, 4, 1, 0), ("bulk next 8MB", 2, 8, 1, 0), ("bulk next 12MB", 2, 12, 1, 0),
                ("bulk next2 8MB", 2, 8, 2, 0), ("line next 8MB", 1, 8, 1, 0),
                ("bulk attn->o only", 2, [0, 9, 0, 0, 0], 1, 0),
                ("bulk qkv,attn->o", 2, [4.2, 4.2, 0, 0, 0], 2, 0),
                ("bulk qkv,attn->o; o->gu 4", 2, [4.2, 4.2, 4, 0, 0], 2, 0),
                ("bulk gu->down 8", 2, [0, 0, 0, 8, 0], 1, 0)]
    rows = []
    total = sum(n * k * 2 for _, n, k in CHAIN)
    for rnd in range(2):
        for name, form, budget, dist, evict in variants:
            us, plan = time_variant(form, budget, dist, evict)
            rows.append({"variant": name, "round": rnd, "us": round(us, 2),
                         "tb_s": round(total / us / 1e6, 3),
                         "plan": [[(CHAIN[j][0], lo, m) for j, lo, m in p] for p in plan]})
            print(f"{rnd} {name:32s} {us:8.2f} us  {total / us / 1e6:5.2f} TB/s", flush=True)
    # one step as kitsune.bench times a workload: a graph of one step, do_bench (L2 flushed before each replay)
    from kitsune.bench.harness import bench_ms
    from kitsune.runtime.program import capture_graph

    g, _ = capture_graph(step_fn(weights[0], 0, _plan(0, 0, 1), 0, 2048))
    us = bench_ms(g.replay) * 1e3
    rows.append({"variant": "harness-timed step, no prefetch", "us": round(us, 2)})
    print(f"harness-timed step (one graph replay, flushed) {us:8.2f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "triton": triton.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
