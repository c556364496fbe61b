"""The generated kernels of one workload under source-level variants, each kernel's time from a profiled replay of
the launch plan (as plan_breakdown.py): what separates a generated kernel from a hand-written one
(bench/kernels/NOTES.md section 25).

    python bench/kernels/gen_probe.py --workload mgn_10k [--mode bulk-sync] [--json OUT]

Variants: ``as-is``; ``no-index-checks`` (``kitsune.compile(index_checks=False)``); ``no-where`` (the
evaluator's ``tl.where(mask, v, 0.0)`` re-masking of in-register values dropped: loads and stores keep their
masks, so the values outside the result differ but nothing outside it is written); ``per-item-all``: every gemm
stage as one program per tile (``PER_ITEM``) through a temporary tuning database.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

_WHERE = re.compile(r"^(\s+)(v\d+) = tl\.where\(v\d+(?:\[[^\]]*\])?, (v\d+), 0\.0\)$", re.M)


def _no_where(src: str) -> str:
    """``vB = tl.where(mask, vA, 0.0)`` -> ``vB = vA`` (inside stage functions)."""
    return _WHERE.sub(lambda m: f"{m[1]}{m[2]} = {m[3]}", src)


def run(workload: str, mode: str, variant: str) -> dict:
    import torch

    import kitsune
    import kitsune.codegen.triton_gen as tg
    import importlib

    kc = importlib.import_module("kitsune.compile")
    from kitsune.models import get_workload
    from kitsune.tools.tune import launch_plan_graph
    from plan_breakdown import _profiled_kernels
    from triton.testing import do_bench

    orig = tg.generate_triton
    edit = _no_where if variant == "no-where" else None

    def patched(*a, **k):
        src = orig(*a, **k)
        return edit(src) if edit else src

    tg.generate_triton = patched
    kc._lowered.clear()
    try:
        model, inputs = get_workload(workload).build(scale=1.0, dtype=torch.bfloat16, device="cuda")
        with torch.no_grad():
            cm = kitsune.compile(model, inputs, mode=mode, index_checks=variant != "no-index-checks")
            out = cm(*inputs)
            ref = model(*inputs)
            errs = [float((o.float() - r.float()).norm() / r.float().norm()) for o, r in
                    zip(out if isinstance(out, (tuple, list)) else [out], ref if isinstance(ref, (tuple, list))
                        else [ref])]
            g = launch_plan_graph(cm, inputs)
        ms = do_bench(g.replay, warmup=25, rep=200, return_mode="median")
        rows = _profiled_kernels(g.replay)
    finally:
        tg.generate_triton = orig
        kc._lowered.clear()
    rec = {"workload": workload, "mode": mode, "variant": variant, "replay_ms": ms, "rel_err": max(errs),
           "kernels": {r["name"][:24]: round(r["us"], 1) for r in rows}}
    print(f"{variant:16s} replay {ms * 1e3:6.1f} us  err {max(errs):.2e}  " +
          "  ".join(f"{k}={v}" for k, v in rec["kernels"].items()), flush=True)
    return rec


def kernel_alone(workload: str, kernel: str, mode: str = "bulk-sync") -> list[dict]:
    """Kernel ``kernel`` of the workload's program timed alone on the program's own buffers (after one call
    filled them), in a CUDA graph with its ticket counter reset before each launch; beside it the same stage with
    ``tl.program_id`` instead of the ticket, and (mgn_10k's edge GEMM) mgn_probe.py's hand-written edge1 on the
    same tensors."""
    import torch
    import triton

    import kitsune
    from kitsune.codegen.aot import load_module_source
    from kitsune.models import get_workload

    model, inputs = get_workload(workload).build(scale=1.0, dtype=torch.bfloat16, device="cuda")
    with torch.no_grad():
        cm = kitsune.compile(model, inputs, mode=mode)
        cm(*inputs)
        torch.cuda.synchronize()
    prog = cm.program
    state = prog.state
    env = dict(state["buffers"])
    env.update(prog._tensors)
    env.update(dict(zip(prog.input_names, inputs)))
    ctr, err = state["counters"], state["err"]
    ep = torch.zeros_like(state["epoch"])
    out = []

    def time_entry(label, k):
        args = [env[n] for n in k["tensors"]]

        def go():
            ctr.zero_()
            k["fn"][(k["grid"],)](*args, ctr, err, ep, k["ticket"], WATCHDOG=0, num_warps=k["num_warps"],
                                  num_stages=k["num_stages"])
        us = triton.testing.do_bench_cudagraph(go, rep=200) * 1e3
        out.append({"variant": label, "us": us})
        print(f"{kernel} {label:24s} {us:7.1f} us (incl. a counter reset)", flush=True)

    (k,) = [k for k in prog.module.KERNELS if k["name"] == kernel]
    time_entry("generated", k)
    src = prog.source
    a = src.index(f"def {kernel}(")
    b = src.index("pid = tl.atomic_add(ctr + ticket, 1)", a)
    edited = src[:b] + "pid = tl.program_id(0)  # " + src[b + len("pid = "):]
    mod = load_module_source(edited, __import__("tempfile").mkdtemp())
    (k2,) = [k for k in mod.KERNELS if k["name"] == kernel]
    time_entry("program_id instead of ticket", k2)

    def reset():
        ctr.zero_()
    us = triton.testing.do_bench_cudagraph(reset, rep=200) * 1e3
    out.append({"variant": "counter reset alone", "us": us})
    print(f"counter reset alone {us:.1f} us", flush=True)
    if workload == "mgn_10k" and kernel == "k1":
        import mgn_probe as mp

        e, src_i, dst_i = inputs[1], inputs[2], inputs[3]
        names = k["tensors"]  # e, W_e, b, src, dst, P, h
        w, bias, p = env[names[1]], env[names[2]], env[names[5]]
        h = torch.empty_like(e)
        for bm, warps, grid in ((64, 4, 938), (64, 4, 264)):
            def go(bm=bm, warps=warps, grid=grid):
                ctr.zero_()
                mp.edge1[(grid,)](e, w, bias, p, src_i, dst_i, h, e.shape[0], grid, triton.cdiv(938, grid),
                                  GATHER=1, BM=bm, num_warps=warps, num_stages=3)
            us = triton.testing.do_bench_cudagraph(go, rep=200) * 1e3
            go()
            ref = env[names[6]]
            err_ = float((h.float() - ref.float()).abs().max())
            out.append({"variant": f"hand edge1 grid {grid}", "us": us, "max_diff": err_})
            print(f"hand edge1 BM {bm} grid {grid}: {us:.1f} us, max diff to generated {err_:.3g}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="mgn_10k")
    ap.add_argument("--mode", default="bulk-sync")
    ap.add_argument("--variants", default="as-is,no-index-checks,no-where,as-is")
    ap.add_argument("--kernel", help="time this kernel alone instead (kernel_alone)")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.kernel:
        out = kernel_alone(a.workload, a.kernel, a.mode)
    else:
        out = [run(a.workload, a.mode, v) for v in a.variants.split(",")]
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
