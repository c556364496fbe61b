"""Dataflow placement A/B: per workload, bulk-sync against dataflow with placement auto / spatial / temporal,
each launch plan captured in a CUDA graph and timed (do_bench median over replays), outputs checked against
bulk-sync's, and the kernels of one call (torch.profiler: name, grid-independent measured us).

    python bench/kernels/placement_ab.py inception_b8 dlrm_b2048 mgn_10k nerf_65k [--out FILE.json]
"""

from __future__ import annotations

import json
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile
from triton.testing import do_bench

import kitsune
from kitsune.bench.harness import flatten, get_source
from kitsune.tools.tune import launch_plan_graph

VARIANTS = (("bulk-sync", "auto"), ("dataflow", "auto"), ("dataflow", "spatial"), ("dataflow", "temporal"))


def kernels_of(g) -> list[tuple[str, float]]:
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        g.replay()
        torch.cuda.synchronize()
    evs = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0),
                 key=lambda e: e.time_range.start)
    return [(e.name, round(e.device_time, 1)) for e in evs]


def main() -> None:
    argv = sys.argv[1:]
    out_path = None
    if "--out" in argv:
        i = argv.index("--out")
        out_path = argv[i + 1]
        del argv[i:i + 2]
    rows = []
    print(f"{'workload':14s} {'mode':10s} {'placement':9s} {'ms':>8s} {'kernels':>7s} {'rel err':>8s}  kernel us")
    for name in argv:
        model, inputs = get_source(name).build(1.0, torch.bfloat16, "cuda", 0)
        model.eval()
        ref = None
        for mode, placement in VARIANTS:
            rec = {"workload": name, "mode": mode, "placement": placement}
            try:
                with torch.no_grad():
                    cm = kitsune.compile(model, inputs, mode=mode, placement=placement)
                    got = [o.clone() for o in flatten(cm(*inputs))]
                    if ref is None:
                        ref = got
                    err = max((torch.linalg.vector_norm(a.float() - b.float())
                               / torch.linalg.vector_norm(b.float()).clamp_min(1e-30)).item() for a, b in zip(got, ref))
                    g = launch_plan_graph(cm, inputs)
                    ms = do_bench(g.replay, warmup=25, rep=200, return_mode="median")
                    ks = kernels_of(g)
                rec.update(ms=ms, rel_err=err, kernels=ks)
                print(f"{name:14s} {mode:10s} {placement:9s} {ms:8.4f} {len(ks):7d} {err:8.1e}  "
                      + " ".join(f"{t:.0f}" for _, t in ks[:16]), flush=True)
            except Exception as e:  # noqa: BLE001
                rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                print(f"{name:14s} {mode:10s} {placement:9s} failed: {rec['error'][:100]}", flush=True)
            rows.append(rec)
            torch.cuda.empty_cache()
    if out_path:
        with open(out_path, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d"),
                       "torch": torch.__version__, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
