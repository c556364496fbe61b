"""GPU A/B: chain tasks on and off (kitsune-form-regions ``chains``), bulk-sync, per workload; checked against
eager, timed as the harness times Kitsune (launch plan in a CUDA graph, do_bench median), both in one process.

    python bench/kernels/chain_ab.py [--workloads mgn_10k,nerf_65k] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))


def compiled(model, inputs, chains: bool):
    import kitsune
    import kitsune.passes.form_regions as fr
    from kitsune.compile import clear_cache

    clear_cache()  # (the lowering is memoised per graph text and options: the form-regions patch is not one)

    orig = fr.FormRegionsPass

    class Patched(orig):  # the pipeline imports FormRegionsPass from the module when it builds its passes
        def __init__(self, **kw):
            super().__init__(**{"chains": chains, **kw})

    fr.FormRegionsPass = Patched
    try:
        return kitsune.compile(model, inputs, mode="bulk-sync", cache=False)
    finally:
        fr.FormRegionsPass = orig


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="mgn_10k,nerf_65k")
    ap.add_argument("--json")
    a = ap.parse_args()
    import torch
    from kitsune.bench.harness import bench_ms, flatten, rel_errors
    from kitsune.tools.tune import launch_plan_graph
    from kitsune.models import get_workload

    rows = []
    for w in a.workloads.split(","):
        model, inputs = get_workload(w).build(scale=1.0, dtype=torch.bfloat16, device="cuda")
        with torch.no_grad():
            ref = flatten(model(*inputs))
        for chains in (True, False, True):
            rec = dict(workload=w, chains=chains)
            try:
                fn = compiled(model, inputs, chains)
                rec["rel_err"] = max(rel_errors(flatten(fn(*inputs)), ref))
                rec["ms"] = bench_ms(launch_plan_graph(fn, inputs).replay)
                rec["kernels"] = str(fn.lowered).count("gpu_queue.kernel ")
            except Exception as e:  # noqa: BLE001
                rec["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            rows.append(rec)
            print(rec, flush=True)
    if a.json:
        json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
