"""What the harness's L2 flush costs a memory-bound step: ``triton.testing.do_bench`` zeroes a 256 MB buffer before
each timed call, which leaves the L2 full of dirty lines that the timed call then writes back to DRAM while it streams
its own operands. Times one CUDA-graph replay of Kitsune's program and of Inductor's (``torch.compile`` captured in a
CUDA graph, as the harness does), each after a flush that writes (zero, do_bench's), after one that reads (the same
buffer summed: clean lines), with no flush, and back to back inside a graph of 20 replays (``graph_us``).

With ``--timeline`` it also profiles replays after do_bench's flush (torch.profiler) and prints, per side, each
kernel's mean time, the gaps between kernels and the span from the first kernel's start to the last one's end: where a
replay's time goes beyond its kernels' own.

    python bench/kernels/flush_probe.py [--workloads llama_decode_b1,llama_decode_b8] [--mode bulk-sync] [--timeline]
        [--out F.json]
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch
from graphtime import graph_us

import kitsune
from kitsune.bench.harness import get_source


def timed_ms(fn, flush, reps: int = 100, warmup: int = 10) -> float:
    """Median ms of ``fn`` between two events, ``flush`` run before each call (outside the events)."""
    for _ in range(warmup):
        flush()
        fn()
    times = []
    for _ in range(reps):
        flush()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def timeline(replay, flush, reps: int = 10) -> dict:
    """Kernels of ``reps`` replays, each after ``flush`` (torch.profiler): mean us per kernel name (in launch order),
    the mean span of a replay (first kernel's start to last one's end) and the mean sum of its kernels' times."""
    from torch.profiler import ProfilerActivity, profile

    flush()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        flush()
        torch.cuda.synchronize()
    flush_names = {e.name for e in prof.events() if str(getattr(e, "device_type", "")).endswith("CUDA")}
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            flush()
            replay()
        torch.cuda.synchronize()
    evs = sorted((e for e in prof.events() if str(getattr(e, "device_type", "")).endswith("CUDA")),
                 key=lambda e: e.time_range.start)
    runs, cur = [], []
    for e in evs:
        if e.name in flush_names:
            if cur:
                runs.append(cur)
            cur = []
        else:
            cur.append(e)
    if cur:
        runs.append(cur)
    per: dict[str, list[float]] = {}
    spans, sums, gaps = [], [], []
    for r in runs:
        spans.append(r[-1].time_range.end - r[0].time_range.start)
        sums.append(sum(e.time_range.end - e.time_range.start for e in r))
        for a, b in zip(r, r[1:]):
            gaps.append(b.time_range.start - a.time_range.end)
        for e in r:
            per.setdefault(e.name[:40], []).append(e.time_range.end - e.time_range.start)
    n = max(len(runs), 1)
    return {"kernels": {k: sum(v) / n for k, v in per.items()}, "span_us": statistics.mean(spans) if spans else None,
            "sum_us": statistics.mean(sums) if sums else None, "gaps_us": gaps[: 2 * 8]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="llama_decode_b1,llama_decode_b8")
    ap.add_argument("--mode", default="bulk-sync")
    ap.add_argument("--timeline", action="store_true")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    buf = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    sink = torch.empty((), dtype=torch.int64, device="cuda")
    flushes = {"zero (do_bench)": lambda: buf.zero_(),
               "read": lambda: torch.sum(buf.view(torch.int64), dim=0, out=sink),
               "none": lambda: None}
    rows = []
    for name in a.workloads.split(","):
        model, inputs = get_source(name).build(1.0, torch.bfloat16, "cuda", 0)
        fn = kitsune.compile(model, inputs, mode=a.mode, device="cuda", cuda_graph=False)
        prog = fn.program
        mod, st = prog.module, prog.state
        env = {**prog._tensors, **prog._prepare(inputs)}
        with torch.no_grad():
            cm = torch.compile(model)
            for _ in range(3):
                cm(*inputs)
        torch.cuda.synchronize()
        steps = {"kitsune": lambda: mod.launch(st, env), "inductor": lambda: cm(*inputs)}
        graphs = {}
        for k, step in steps.items():
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s), torch.no_grad():
                step()
            torch.cuda.current_stream().wait_stream(s)
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g), torch.no_grad():
                step()
            graphs[k] = g
        res = {}
        for k, g in graphs.items():
            for fl, f in flushes.items():
                res[(k, fl)] = timed_ms(g.replay, f) * 1e3
            with torch.no_grad():
                res[(k, "graph of 20")] = graph_us(steps[k])
            if a.timeline:
                t = timeline(g.replay, flushes["zero (do_bench)"])
                print(f"{name:18s} {k:9s} span {t['span_us']:.1f} us, kernels' sum {t['sum_us']:.1f} us; "
                      + ", ".join(f"{n} {v:.1f}" for n, v in t["kernels"].items()), flush=True)
                print(f"{name:18s} {k:9s} gaps (us): " + " ".join(f"{x:.1f}" for x in t["gaps_us"]), flush=True)
                rows.append({"workload": name, "side": k, "timeline": t, "device": torch.cuda.get_device_name()})
        for fl in list(flushes) + ["graph of 20"]:
            ku, iu = res[("kitsune", fl)], res[("inductor", fl)]
            print(f"{name:18s} {fl:16s} kitsune {ku:7.1f} us  inductor {iu:7.1f} us  ratio {iu / ku:5.2f}", flush=True)
            rows.append({"workload": name, "flush": fl, "kitsune_us": ku, "inductor_us": iu,
                         "device": torch.cuda.get_device_name()})
        del fn, prog, mod, st, env, cm, graphs
        torch.cuda.empty_cache()
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
