"""GPU: the chain template on a workload per forced chain config (BM,SEG,PREFETCH,warps[,TMA,RING]), checked against
eager and timed as the harness times Kitsune (its launch plan in a CUDA graph, triton do_bench median).

    python bench/kernels/chain_gpu.py [--workload nerf_65k] [--configs 128,128,2,8 ...] [--chain-min-layers N]
        [--chain-min-rows R] [--max-width W] [--baseline] [--keep-db] [--json F]

``--max-width`` widens the chain's intermediates (``CHAIN_MAX_WIDTH``), ``--chain-min-rows`` lowers the rows a chain
needs (DLRM's MLPs: 512 wide, 2048 rows); ``--baseline`` first times the workload without chains; ``--keep-db``
keeps the tuning database for the other kernels (a chain problem is not in it, so the forced config holds).

``measure`` (a fresh compile, checked and timed) serves chain_ab.py too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))


def measure(model, inputs, ref, **rec) -> dict:
    """Compile ``model`` afresh (bulk-sync; the lowering is memoised per graph text and options, and what a probe
    patches is neither), check it against ``ref``, time its launch plan; ``rec`` plus rel_err, ms, kernels,
    templates (or error)."""
    import kitsune
    from kitsune.bench.harness import bench_ms, flatten, rel_errors
    from kitsune.compile import clear_cache
    from kitsune.tools.tune import launch_plan_graph

    clear_cache()
    try:
        fn = kitsune.compile(model, inputs, mode="bulk-sync", cache=False)
        rec["rel_err"] = max(rel_errors(flatten(fn(*inputs)), ref))
        rec["ms"] = bench_ms(launch_plan_graph(fn, inputs).replay)
        low = str(fn.lowered)
        rec["kernels"] = low.count("gpu_queue.kernel ")
        rec["templates"] = sorted({l.split('template = "')[1].split('"')[0] for l in low.splitlines()
                                   if 'template = "' in l})
    except Exception as e:  # noqa: BLE001
        rec["error"] = f"{type(e).__name__}: {str(e)[:400]}"
    print(rec, flush=True)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="nerf_65k")
    ap.add_argument("--configs", nargs="*", default=["128,128,2,8", "128,128,1,8", "128,128,0,8", "128,64,2,8"])
    ap.add_argument("--chain-min-layers", type=int, help="kitsune-form-regions' chain_min_layers (-1: 2 on Hopper)")
    ap.add_argument("--chain-min-rows", type=int, help="kitsune-form-regions' chain_min_rows")
    ap.add_argument("--max-width", type=int, help="CHAIN_MAX_WIDTH for these compiles")
    ap.add_argument("--baseline", action="store_true", help="first the workload without chains")
    ap.add_argument("--keep-db", action="store_true", help="keep the tuning database (other kernels tuned)")
    ap.add_argument("--json")
    a = ap.parse_args()
    if not a.keep_db:
        os.environ["KITSUNE_TUNING_DB"] = "off"
    if a.max_width:
        import kitsune.schedule.chain as ch

        ch.CHAIN_MAX_WIDTH = a.max_width
        ch.chain_form.__defaults__ = (ch.CHAIN_SEG, a.max_width) + ch.chain_form.__defaults__[2:]
    import torch
    from kitsune.bench.harness import flatten
    from kitsune.models import get_workload
    from chain_ab import patched_chains
    from kitsune.schedule import configs

    model, inputs = get_workload(a.workload).build(scale=1.0, dtype=torch.bfloat16, device="cuda")
    with torch.no_grad():
        ref = flatten(model(*inputs))
    rows = []
    if a.baseline:
        with patched_chains(False):
            rows.append(measure(model, inputs, ref, workload=a.workload, config="no chains"))
    orig = configs.ChainConfig.default
    try:
        opts = {k: v for k, v in (("chain_min_layers", a.chain_min_layers), ("chain_min_rows", a.chain_min_rows))
                if v is not None}
        ctx = patched_chains(True, **opts) if opts else contextlib.nullcontext()
        with ctx:
            for c in a.configs:
                vals = [int(x) for x in c.split(",")]
                forced = dict(zip(["BM", "SEG", "PREFETCH", "warps", "TMA", "RING"], vals))
                configs.ChainConfig.default = classmethod(lambda cls, p, gpu, d=forced: cls(**d))
                rows.append(measure(model, inputs, ref, workload=a.workload, config=c))
    finally:
        configs.ChainConfig.default = orig
    if a.json:
        json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
