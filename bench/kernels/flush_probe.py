"""What the harness's L2 flush costs a memory-bound step: ``triton.testing.do_bench`` zeroes a 256 MB buffer before
each timed call, which leaves the L2 full of dirty lines that the timed call then writes back to DRAM while it streams
its own operands. Times one CUDA-graph replay of Kitsune's program and of Inductor's (``torch.compile`` captured in a
CUDA graph, as the harness does), each after a flush that writes (zero, do_bench's), after one that reads (the same
buffer summed: clean lines), with no flush, and back to back inside a graph of 20 replays (``graph_us``).

    python bench/kernels/flush_probe.py [--workloads llama_decode_b1,llama_decode_b8] [--mode bulk-sync] [--out F.json]
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="llama_decode_b1,llama_decode_b8")
    ap.add_argument("--mode", default="bulk-sync")
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
