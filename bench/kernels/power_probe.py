"""Is a compute-bound replay slowed by the GPU's power limit? Kitsune's and Inductor's CUDA-graph replays of one
workload, each after an idle second, run back to back for a few seconds while ``nvidia-smi`` samples the SM clock
and the board power every 50 ms; the replay time is taken per window of 10 replays (CUDA events).

    python bench/kernels/power_probe.py --workload mlp_gpt3_T1024 [--mode bulk-sync] [--seconds 3] [--json F]

Prints per program: the first window's ms per replay, the steady state's (the last half), the median SM clock and
power over the steady state. The harness's ``kitsune_ms`` is a steady-state figure (do_bench), its per-kernel
``measured_us`` one from a few profiled replays.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import threading
import time


def sampler(stop: threading.Event, out: list) -> None:
    p = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader,nounits",
                          "-lms", "50"], stdout=subprocess.PIPE, text=True)
    try:
        for line in p.stdout:
            if stop.is_set():
                break
            try:
                clk, pw, temp = (float(x) for x in line.strip().split(","))
            except ValueError:
                continue
            out.append((time.perf_counter(), clk, pw, temp))
    finally:
        p.kill()


def run(replay, seconds: float) -> dict:
    import torch

    torch.cuda.synchronize()
    time.sleep(1.0)
    samples: list = []
    stop = threading.Event()
    th = threading.Thread(target=sampler, args=(stop, samples), daemon=True)
    th.start()
    time.sleep(0.2)
    t_start = time.perf_counter()
    windows = []
    while time.perf_counter() - t_start < seconds:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(10):
            replay()
        b.record()
        b.synchronize()
        windows.append((time.perf_counter(), a.elapsed_time(b) / 10))
    t_end = time.perf_counter()
    stop.set()
    half = t_start + (t_end - t_start) / 2
    steady = [ms for t, ms in windows if t >= half]
    ss = [s for s in samples if half <= s[0] <= t_end]
    return {"first_ms": windows[0][1], "steady_ms": statistics.median(steady), "windows": len(windows),
            "clock_mhz": statistics.median(s[1] for s in ss) if ss else None,
            "power_w": statistics.median(s[2] for s in ss) if ss else None,
            "temp_c": max(s[3] for s in ss) if ss else None,
            "clock_first_mhz": samples[0][1] if samples else None}


def main() -> int:
    import torch

    import kitsune
    from kitsune.bench.harness import flatten
    from kitsune.models import get_workload
    from kitsune.runtime.program import capture_graph

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="mlp_gpt3_T1024")
    ap.add_argument("--mode", default="bulk-sync")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    model, inputs = get_workload(a.workload).build(scale=1.0, dtype=torch.bfloat16, device="cuda", seed=0)
    model.eval()
    progs = {}
    with torch.no_grad():
        ks = kitsune.compile(model, inputs, mode=a.mode)
        prog = ks.program
        env = {**prog._tensors, **prog._prepare(list(flatten(inputs)))}
        progs["kitsune"] = capture_graph(lambda: prog.module.launch(prog.state, env), warmup=2)[0].replay
        ind = torch.compile(model)
        for _ in range(3):
            ind(*inputs)
        progs["inductor"] = capture_graph(lambda: ind(*inputs), warmup=2)[0].replay
    recs = {}
    for rnd in range(2):  # alternated twice
        for name, rp in progs.items():
            r = run(rp, a.seconds)
            recs[f"{name}#{rnd}"] = r
            print(f"{name:<9} round {rnd}: first {r['first_ms']:.4f} ms, steady {r['steady_ms']:.4f} ms, "
                  f"SM clock {r['clock_first_mhz']} -> {r['clock_mhz']} MHz, {r['power_w']} W, {r['temp_c']} C",
                  flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"workload": a.workload, "mode": a.mode, "device": torch.cuda.get_device_name(),
                       "date": time.strftime("%Y-%m-%d"), "records": recs}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
