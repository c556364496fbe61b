"""How fast one kernel can read N bytes from DRAM at all: the ceiling for a gemv of an N-byte weight timed alone.

Issue 11 asks the gemv template for >= 80% of 3.0 TB/s on the Llama weight shapes; the 8-12 MB ones (QKV, O) reach
44-53%. This probe times the best pure read of the same bytes (no arithmetic but a sum, nothing written but one value
per program) the way ``bench/kernels/run.py`` times a kernel: launches captured in a CUDA graph, each on its own copy
of the operand, the copies together twice the L2, so every launch reads from DRAM (``isolate.copies_past_l2``).

    python bench/kernels/read_floor.py [--mb 8.4,12.6,33.6,67.1,262.7] [--json OUT]

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

from graphtime import graph_us  # noqa: E402

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
    steps = [make_step(op) for op in operands]
    state = {"i": 0}

    def step():
        steps[state["i"] % len(steps)]()
        state["i"] += 1

    return graph_us(step)


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", default="8.4,12.6,33.6,67.1,262.7")
    ap.add_argument("--json")
    args = ap.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
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
