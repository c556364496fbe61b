"""Where a launch plan's time goes: its CUDA-graph replay (what the harness times) next to the kernels inside it.

    python bench/kernels/plan_breakdown.py [--workloads mlp_gpt3_T1024,...] [--mode bulk-sync] [--json F]

Per workload: the replay's median (triton do_bench, as the harness), then one profiled replay's kernels
(torch.profiler, CUPTI sees inside CUDA graphs): name, duration, and the gap before it; the sum of kernel time
against the span from the first kernel's start to the last one's end. A replay slower than its kernels' sum by
more than the launch gaps points at something outside the kernels (clocks, a wait, a memset or copy node).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))


def _loop_ms(fn, n: int = 20) -> float:
    """Mean ms of ``n`` back-to-back calls between two CUDA events (no L2 flush between them, unlike do_bench)."""
    import torch

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(n):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / n


def _profiled_kernels(replay, times: int = 3) -> list[dict]:
    """The kernels of the last of ``times`` profiled replays: name, duration, gap before it, start and end (us)."""
    import torch

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(times):
            replay()
        torch.cuda.synchronize()
    evs = sorted([e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA],
                 key=lambda e: e.time_range.start)
    per = len(evs) // times if evs else 0
    rows, prev_end = [], None
    for e in (evs[-per:] if per else []):
        gap = (e.time_range.start - prev_end) if prev_end is not None else 0.0
        rows.append({"name": e.name[:60], "us": e.time_range.end - e.time_range.start, "gap_us": gap,
                     "start": e.time_range.start, "end": e.time_range.end})
        prev_end = e.time_range.end
    return rows


def breakdown(workload: str, mode: str, with_peer: bool = False, placement: str = "auto") -> dict:
    import torch
    from triton.testing import do_bench

    import kitsune
    from kitsune.models import get_workload
    from kitsune.tools.tune import launch_plan_graph

    model, inputs = get_workload(workload).build(scale=1.0, dtype=torch.bfloat16, device="cuda")
    with torch.no_grad():
        cm = kitsune.compile(model, inputs, mode=mode, placement=placement)
        g = launch_plan_graph(cm, inputs)
    ms = do_bench(g.replay, warmup=25, rep=200, return_mode="median")
    loop_ms = _loop_ms(g.replay)
    peer = None
    if with_peer:  # Inductor + CUDA graph, timed both ways
        ind = torch.compile(model)
        with torch.no_grad():
            ind(*inputs)
            ind(*inputs)
            torch.cuda.synchronize()
            pg = torch.cuda.CUDAGraph()
            with torch.cuda.graph(pg):
                ind(*inputs)
        peer = {"do_bench_ms": do_bench(pg.replay, warmup=25, rep=200, return_mode="median"),
                "loop_ms": _loop_ms(pg.replay)}
    torch.cuda.synchronize()
    rows = _profiled_kernels(g.replay)
    if with_peer:
        peer["kernels"] = _profiled_kernels(pg.replay)
        peer["kernel_sum_us"] = sum(r["us"] for r in peer["kernels"])
    span = (rows[-1]["end"] - rows[0]["start"]) if rows else None
    rec = {"workload": workload, "mode": mode, "placement": cm.placement, "replay_ms": ms, "loop_ms": loop_ms, "peer": peer, "kernels": rows,
           "kernel_sum_us": sum(r["us"] for r in rows), "span_us": span}
    print(f"{workload} {mode}: replay {ms * 1e3:.1f} us (back to back {loop_ms * 1e3:.1f}; Inductor + graph "
          f"{ {k: peer[k] for k in ('do_bench_ms', 'loop_ms')} if peer else None}); kernels {rec['kernel_sum_us']:.1f} us over a span of "
          f"{span:.1f} us", flush=True)
    for r in rows:
        print(f"    {r['us']:8.1f} us  (gap {r['gap_us']:5.1f})  {r['name']}", flush=True)
    if peer:
        print(f"  Inductor + graph kernels {peer['kernel_sum_us']:.1f} us:", flush=True)
        for r in peer["kernels"]:
            print(f"    {r['us']:8.1f} us  (gap {r['gap_us']:5.1f})  {r['name']}", flush=True)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="mlp_gpt3_T1024,mlp_gpt3_T256")
    ap.add_argument("--mode", default="bulk-sync")
    ap.add_argument("--peer", action="store_true", help="also Inductor + CUDA graph, timed both ways")
    ap.add_argument("--chain-min-layers", type=int, help="kitsune-form-regions' chain_min_layers for these compiles")
    ap.add_argument("--placement", default="auto", help="dataflow mode: auto (the tuned one), spatial, temporal, separate")
    ap.add_argument("--json")
    a = ap.parse_args()
    import contextlib

    from chain_ab import patched_chains

    ctx = patched_chains(True, chain_min_layers=a.chain_min_layers) if a.chain_min_layers is not None \
        else contextlib.nullcontext()
    with ctx:
        out = [breakdown(w, a.mode, a.peer, a.placement) for w in a.workloads.split(",")]
    if a.json:
        json.dump(out, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
