"""How fast one kernel can read N bytes from DRAM at all: the ceiling for a gemv of an N-byte weight timed alone.

Issue 11 asks the gemv template for >= 80% of 3.0 TB/s on the Llama weight shapes; the 8-12 MB ones (QKV, O) reach
44-53%. This probe times the best pure read of the same bytes (no arithmetic but a sum, nothing written but one value
per program) the way ``bench/kernels/run.py`` times a kernel: launches captured in a CUDA graph, each on its own copy
of the operand, the copies together twice the L2, so every launch reads from DRAM (``isolate.copies_past_l2``).

    python bench/kernels/read_floor.py [--mb 8.4,12.6,33.6,67.1,262.7] [--json OUT]
    python bench/kernels/read_floor.py --harness [--mb 124,138] [--json OUT]

``--harness`` times the read as ``kitsune.bench`` times a workload instead: one launch captured in a CUDA graph,
``do_bench`` (its L2 flush before every replay) median of the replay, and an empty kernel's graph beside it (the
replay's own cost). That is the floor of a workload's harness time for its ``floor_bytes``: a decode step cannot
run faster than one kernel that does nothing but read its bytes.

Variants, the best of each reported: a Triton streaming sum (one block per program, or a loop over blocks per
program with a grid of 1 or 4 waves; 4 / 8 warps), ``torch.sum`` and ``copy_`` (bytes read + written over its time).
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

from kitsune.schedule.isolate import copies_past_l2  # noqa: E402

HBM = 3.0e12


@triton.jit
def _read_sum(x, out, n, ITERS, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], tl.float32)
    base = pid.to(tl.int64) * BLOCK * ITERS
    for i in range(ITERS):
        offs = base + i * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(out + pid, tl.sum(acc))


def _time_rotating(make_step, operands) -> float:
    """Per-launch microseconds of ``make_step(op)`` over the rotating copies."""
    return rotating_us([make_step(op) for op in operands])


def probe(mb: float, sms: int) -> dict:
    n = int(mb * 1e6 / 2) // 8192 * 8192
    nbytes = 2 * n
    ops = [c["w"] for c in copies_past_l2({"w": torch.randn(n, device="cuda", dtype=torch.bfloat16)}, "cuda", 20)]
    outs = torch.empty(1 << 20, device="cuda", dtype=torch.float32)
    rows = []
    for block in (2048, 8192):
        for warps in (4, 8):
            blocks = -(-n // block)
            for waves in (None, 1, 4):
                grid = blocks if waves is None else min(blocks, sms * waves)
                iters = -(-blocks // grid)
                grid = -(-blocks // iters)
                if waves is not None and iters == 1:
                    continue

                def make(w, grid=grid, block=block, iters=iters, warps=warps):
                    return lambda: _read_sum[(grid,)](w, outs, n, iters, BLOCK=block, num_warps=warps)

                us = _time_rotating(make, ops)
                rows.append({"variant": f"triton block {block} x{iters} grid {grid} w{warps}", "us": us,
                             "tbps": nbytes / us / 1e6})
    us = _time_rotating(lambda w: (lambda: torch.sum(w)), ops)
    rows.append({"variant": "torch.sum", "us": us, "tbps": nbytes / us / 1e6})
    dst = torch.empty_like(ops[0])
    us = _time_rotating(lambda w: (lambda: dst.copy_(w)), ops)
    rows.append({"variant": "copy_ (read + write)", "us": us, "tbps": 2 * nbytes / us / 1e6})
    best = min((r for r in rows if r["variant"].startswith("triton")), key=lambda r: r["us"])
    return {"mb": nbytes / 1e6, "best": best, "torch_sum": rows[-2], "copy": rows[-1], "rows": rows}


def harness_floor(mb: float, sms: int) -> dict:
    """The best pure read of ``mb`` MB as the harness times a step (a graph of one launch, do_bench with its flush)."""
    from kitsune.bench.harness import bench_ms
    from kitsune.runtime.program import capture_graph

    n = int(mb * 1e6 / 2) // 8192 * 8192
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    outs = torch.empty(1 << 20, device="cuda", dtype=torch.float32)

    rows = []
    for block in (2048, 8192):
        blocks = -(-n // block)
        for iters in (1, 2, 4):
            grid = -(-blocks // iters)
            g, _ = capture_graph(lambda grid=grid, block=block, iters=iters: _read_sum[(grid,)](
                w, outs, n, iters, BLOCK=block, num_warps=4))
            ms = bench_ms(g.replay)
            rows.append({"variant": f"triton block {block} x{iters} grid {grid} w4", "us": ms * 1e3,
                         "tbps": 2 * n / ms / 1e9})
    empty, _ = capture_graph(lambda: _read_sum[(1,)](w, outs, 0, 0, BLOCK=2048, num_warps=4))
    replay_us = bench_ms(empty.replay) * 1e3
    best = min(rows, key=lambda r: r["us"])
    return {"mb": 2 * n / 1e6, "best": best, "empty_graph_us": replay_us, "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", default="8.4,12.6,33.6,67.1,262.7")
    ap.add_argument("--json")
    ap.add_argument("--harness", action="store_true", help="time as kitsune.bench does (one step, flushed L2)")
    args = ap.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    if args.harness:
        mbs = [124.0, 138.0] if args.mb == ap.get_default("mb") else [float(m) for m in args.mb.split(",")]
        res = [harness_floor(m, sms) for m in mbs]
        print(f"{'MB':>7} {'best us':>8} {'TB/s':>6} {'% 3.0':>6} {'empty graph us':>14}  best variant")
        for r in res:
            b = r["best"]
            print(f"{r['mb']:7.1f} {b['us']:8.2f} {b['tbps']:6.2f} {100 * b['tbps'] * 1e12 / HBM:6.0f} "
                  f"{r['empty_graph_us']:14.2f}  {b['variant']}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"device": torch.cuda.get_device_name(), "mode": "harness", "results": res}, f, indent=1)
        return
    res = [probe(float(m), sms) for m in args.mb.split(",")]
    print(f"{'MB':>7} {'best triton us':>14} {'TB/s':>6} {'% 3.0':>6} {'torch.sum us':>12} {'% 3.0':>6} "
          f"{'copy TB/s':>9}  best variant")
    for r in res:
        b, s = r["best"], r["torch_sum"]
        print(f"{r['mb']:7.1f} {b['us']:14.2f} {b['tbps']:6.2f} {100 * b['tbps'] * 1e12 / HBM:6.0f} {s['us']:12.2f} "
              f"{100 * s['tbps'] * 1e12 / HBM:6.0f} {r['copy']['tbps']:9.2f}  {b['variant']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "results": res}, f, indent=1)


if __name__ == "__main__":
    main()
