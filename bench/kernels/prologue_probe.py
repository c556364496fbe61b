"""Probe: a small contraction as its consumer GEMM's operand prologue (form-regions' ``small_k``), DLRM's bottom
layers 0 and 1 in one kernel, against the two kernels; and the prologue's loads prefetched one K step ahead.

    python bench/kernels/prologue_probe.py [dlrm_b2048] [--json F]

Compiles the workload in bulk-sync mode three times: ``small_k`` 0 (separate kernels), fused without the
prologue's loads issued a step ahead (``dot.prefetch_prologue_loads`` off), and as shipped. Triton pipelines only
the loads that feed the anchor dot through cp.async, and the layer-0 weight's 13-element rows (26 bytes) are not
4-byte aligned, so without the prefetch each K step waits on an L2 round trip before its first dot.
Per variant: each kernel alone (module_probe's method) and the whole launch plan's CUDA-graph replay (do_bench
median with its L2 flush, as the harness), outputs against the separate program.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))


def main() -> None:
    import torch
    from graphtime import kernels_alone_us
    from triton.testing import do_bench

    import kitsune
    import kitsune.codegen.triton_gen.templates.dot as dot
    import kitsune.passes.form_regions as fr
    from kitsune.bench.harness import flatten
    from kitsune.compile import clear_cache
    from kitsune.models import get_workload
    from kitsune.tools.tune import launch_plan_graph

    ap = argparse.ArgumentParser()
    ap.add_argument("workload", nargs="?", default="dlrm_b2048")
    ap.add_argument("--json")
    a = ap.parse_args()
    model, inputs = get_workload(a.workload).build(scale=1.0, dtype=torch.bfloat16, device="cuda")
    variants = {}
    with torch.no_grad():
        for name, patches in (("separate", [(fr._Former, "small_contraction_only", staticmethod(lambda g, k: False))]),
                              ("fused", [(dot, "prefetch_prologue_loads", lambda *a: None)]),
                              ("fused+prefetch", [])):
            saved = [(obj, attr, vars(obj)[attr]) for obj, attr, _ in patches]
            for obj, attr, value in patches:
                setattr(obj, attr, value)
            try:
                clear_cache()  # the lowering is memoised by the graph's text
                variants[name] = kitsune.compile(model, inputs, mode="bulk-sync", cache=False)
            finally:
                for obj, attr, value in saved:
                    setattr(obj, attr, value)
        ref = [o.float().clone() for o in flatten(variants["separate"](*inputs))]
    recs = []
    for name, cm in variants.items():
        prog = cm.program
        with torch.no_grad():
            outs = [o.float() for o in flatten(cm(*inputs))]
        err = max(float((o - r).abs().max()) for o, r in zip(outs, ref))
        mod, st = prog.module, prog.state
        env = {**prog._tensors, **prog._prepare(list(flatten(inputs)))}
        kern = {n: round(us, 2) for n, us in kernels_alone_us(st, env, mod.KERNELS).items()}
        st["counters"].zero_()  # (the kernels alone left their tickets counted from zero)
        st["epoch"].zero_()
        with torch.no_grad():
            g = launch_plan_graph(cm, inputs)
        ms = do_bench(g.replay, warmup=25, rep=300, return_mode="median")
        recs.append({"variant": name, "replay_us": ms * 1e3, "max_err": err, "kernels_alone_us": kern})
        print(f"{name:>15}: replay {ms * 1e3:6.1f} us, max err {err:.3g}; alone: "
              + " ".join(f"{n} {u}" for n, u in kern.items()), flush=True)
    if a.json:
        json.dump({"meta": {"device": torch.cuda.get_device_name(), "torch": torch.__version__}, "records": recs},
                  open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
