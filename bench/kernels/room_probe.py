"""Probe: a wide kernel that leaves room on every SM for the branch beside it (DLRM's bags and bottom MLP).

    python bench/kernels/room_probe.py [dlrm_b2048] [--kernel k1] [--grids 1024,528,396,264]

Compiles the workload in bulk-sync mode, then rewrites one kernel of the generated module (by default the
widest one, with one program per work item) into a persistent loop of G programs (``pid + it * G`` over the
same items, the same stage dispatch): at G = resident CTAs per SM minus one, times the SM count, the hardware
has room on every SM for the concurrent branch's CTAs from the start. Per G: the launch plan's CUDA-graph
replay (do_bench median, as the harness), the kernel alone, one profiled replay's kernels (start / end, so the
overlap of the branches shows), and the outputs against the unmodified program's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))


def persistent_text(src: str, kernel: str, items: int, grid: int) -> str:
    """``src`` with kernel ``kernel``'s dispatch (``if pid < ..`` chain after the ticket) run in a loop of
    ``ceil(items / grid)`` rounds by ``grid`` programs."""
    lines = src.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {kernel}("))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(("def ", "@", "# ====")))
    out = lines[:start]
    rounds = math.ceil(items / grid)
    i = start
    while i < end:
        ln = lines[i]
        if "tl.atomic_add(ctr + ticket, 1)" in ln:
            out.append(ln.replace(f"epoch * {items}", f"epoch * {grid}").replace("pid = ", "pid0 = "))
            out.append(f"    for it in range(0, {rounds}):")
            out.append(f"        pid = pid0 + it * {grid}")
            i += 1
            continue
        if ln.startswith("    if BUMP"):  # not the last kernel in these probes: drop the bump block
            i += 1
            while lines[i].startswith("        "):
                i += 1
            continue
        if re.match(r"    (if|elif) pid < ", ln) or (ln.startswith("        ") and out and out[-1].lstrip().startswith(
                ("if pid", "elif pid", "k"))):
            out.append("    " + ln)
            i += 1
            continue
        out.append(ln)
        i += 1
    out += lines[end:]
    text = "\n".join(out) + "\n"
    return re.sub(rf'(\{{"name": "{kernel}", "fn": \w+, "grid": ){items}', rf"\g<1>{grid}", text)


def stage_variant(src: str, kernel: str, unroll: bool, chunksum: bool) -> str:
    """``src`` with the stage functions of ``kernel`` changed: ``unroll``, their reduction loops as
    ``tl.static_range`` (independent index loads may issue together); ``chunksum``, a 3-d accumulator
    ``accN = tl.full([a, b, c], ..)`` summed over its last axis each chunk (a 2-d accumulator, fewer registers)."""
    lines = src.splitlines()
    out, inside = [], False
    for ln in lines:
        if ln.startswith("def "):
            inside = ln.startswith(f"def {kernel}_")
        if inside and unroll:
            ln = re.sub(r"for (k\d+) in range\(", r"for \1 in tl.static_range(", ln)
        if inside and chunksum:
            m = re.match(r"(\s+)(acc\d+) = tl.full\(\[(\d+), (\d+), (\d+)\], (.*)$", ln)
            if m:
                ln = f"{m[1]}{m[2]} = tl.full([{m[3]}, {m[4]}], {m[6]}"
            ln = re.sub(r"(acc\d+) = (acc\d+) \+ (v\d+)$", r"\1 = \2 + tl.sum(\3, axis=2)", ln)
            ln = re.sub(r"= tl.sum\((acc\d+), axis=2\)", r"= \1", ln)
        out.append(ln)
    return "\n".join(out) + "\n"


def set_carveout(jit_fn, percent: int) -> list[int]:
    """Preferred shared-memory carveout (percent of the unified L1 / shared memory) of every compiled kernel of
    ``jit_fn`` (cuFuncSetAttribute, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT); their registers."""
    import ctypes

    import torch

    cuda = ctypes.CDLL("libcuda.so.1")
    regs = []
    for kern in jit_fn.device_caches[torch.cuda.current_device()][0].values():
        kern._init_handles()
        if percent >= 0:
            rc = cuda.cuFuncSetAttribute(ctypes.c_void_p(kern.function), 9, ctypes.c_int(percent))
            assert rc == 0, rc
        regs.append(kern.n_regs)
    return regs


def main() -> None:
    import torch
    from triton.testing import do_bench

    import kitsune
    from kitsune.bench.harness import flatten
    from kitsune.models import get_workload
    from kitsune.runtime.program import load_source
    from kitsune.tools.tune import launch_plan_graph
    from plan_breakdown import _profiled_kernels

    ap = argparse.ArgumentParser()
    ap.add_argument("workload", nargs="?", default="dlrm_b2048")
    ap.add_argument("--kernel", default="k1")
    ap.add_argument("--variants", default="",
                    help="comma list of GRID[:u][:c][:sNN] (u: unrolled loops, c: chunk sums, sNN: carveout NN%%)")
    ap.add_argument("--json")
    a = ap.parse_args()
    model, inputs = get_workload(a.workload).build(scale=1.0, dtype=torch.bfloat16, device="cuda")
    with torch.no_grad():
        cm = kitsune.compile(model, inputs, mode="bulk-sync", cache=False)
        ref = [o.float().clone() for o in flatten(cm(*inputs))]
    prog = cm.program
    src = prog.source
    k = next(k for k in prog.module.KERNELS if k["name"] == a.kernel)
    items = k["grid"]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    variants = a.variants.split(",") if a.variants else [str(items), str(4 * sms), str(3 * sms), f"{3 * sms}:s100"]
    orig_module = prog.module
    recs = []
    for v in variants:
        parts = v.split(":")
        g = int(parts[0])
        carve = next((int(p[1:]) for p in parts if p.startswith("s")), -1)
        text = src if g == items else persistent_text(src, a.kernel, items, g)
        text = stage_variant(text, a.kernel, "u" in parts, "c" in parts)
        mod = load_source(text, interpret=False)
        prog.module = mod
        for key in ("branches", "streams", "bump"):
            prog.state.pop(key, None)
        prog.state["counters"].zero_()  # tickets count per epoch by the grid: start both afresh
        prog.state["epoch"].zero_()
        for n in k["tensors"]:  # the kernel's results: a kernel that does nothing shows as an error
            if n.startswith(f"{a.kernel}_out") and n in prog.state["buffers"]:
                prog.state["buffers"][n].fill_(float("nan"))
        with torch.no_grad():
            outs = [o.float() for o in flatten(cm(*inputs))]
            err = max(float((o - r).abs().max()) for o, r in zip(outs, ref))
            regs = set_carveout(getattr(mod, a.kernel), carve)
            graph = launch_plan_graph(cm, inputs)
        ms = do_bench(graph.replay, warmup=25, rep=300, return_mode="median")
        flush = torch.empty(int(256e6 // 4), dtype=torch.int32, device="cuda")
        names = {kk["name"] for kk in mod.KERNELS}

        def cold_replay():  # as do_bench: the L2 flushed (and left dirty) before the replay
            flush.zero_()
            graph.replay()

        rows = [r for r in _profiled_kernels(cold_replay) if r["name"] in names]
        t0 = rows[0]["start"] if rows else 0.0
        kern = [r for r in rows if r["name"] == a.kernel]
        rec = {"variant": v, "regs": regs, "grid": g, "replay_us": ms * 1e3, "max_err": err,
               "kernel_us": kern[0]["us"] if kern else None,
               "kernels": [(r["name"], round(r["start"] - t0, 1), round(r["end"] - t0, 1)) for r in rows]}
        recs.append(rec)
        print(f"{v:>14} regs {regs}: replay {rec['replay_us']:6.1f} us, {a.kernel} {rec['kernel_us']:.1f} us, "
              f"max err {err:.3g}; " + " ".join(f"{n}[{s}-{e}]" for n, s, e in rec["kernels"]), flush=True)
    prog.module = orig_module
    if a.json:
        meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
        json.dump({"meta": meta, "records": recs}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
