"""Is a training step bound by the GPU or by the host? Per workload and variant: the step's median time
(``do_bench``), the GPU time of one step (the sum of its kernels and copies in torch.profiler), its copies
(device-to-device memcpy: inputs copied into CUDA-graph buffers, outputs cloned), and the host time to issue
one step (``step()`` returns before the GPU finishes; measured after a synchronize).

    python bench/kernels/train_overhead.py mlp_gpt3_T256 nerf_65k [--variants kitsune_graph,inductor_graph,...]
        [--mode bulk-sync] [--out FILE.json]

Variants: eager, inductor_graph (``mode="reduce-overhead"``), kitsune_graph (``cuda_graph=True``),
kitsune_graph_copy (the same, every input copied into the graph's buffers), kitsune_nograph.
"""

from __future__ import annotations

import json
import sys
import time

import torch
import torch._dynamo
from torch.profiler import ProfilerActivity, profile
from triton.testing import do_bench

import kitsune.backend  # noqa: F401  (registers backend="kitsune" without the installed entry point)
from kitsune.runtime import graph_slots
from kitsune.bench.train import make_step

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from train_profile import training_case  # noqa: E402

VARIANTS = ("eager", "inductor_graph", "kitsune_graph", "kitsune_nograph")
# kitsune_graph_copy: kitsune_graph with every input copied into the graph's static buffers (as before
# graph_slots read steady inputs in place)


def gpu_of_one_step(step) -> dict:
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0]
    copies = [e.device_time for e in evs if "Memcpy DtoD" in e.name]
    return {"gpu_us": sum(e.device_time for e in evs), "kernels": len(evs), "copies": len(copies),
            "copy_us": sum(copies)}


def host_of_one_step(step, reps: int = 5) -> float:
    best = float("inf")
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - t)
    torch.cuda.synchronize()
    return best * 1e6


def compiled(model, variant: str, mode: str):
    if variant == "eager":
        return model
    if variant == "inductor_graph":
        return torch.compile(model, mode="reduce-overhead")
    return torch.compile(model, backend="kitsune", options={"mode": mode, "fallback": False,
                                                            "cuda_graph": variant.startswith("kitsune_graph")})


def main() -> None:
    argv = sys.argv[1:]
    opt = {}
    for k in ("--variants", "--mode", "--out"):
        if k in argv:
            i = argv.index(k)
            opt[k] = argv[i + 1]
            del argv[i:i + 2]
    variants = opt.get("--variants", ",".join(VARIANTS)).split(",")
    mode = opt.get("--mode", "bulk-sync")
    out = {}
    print(f"{'workload':16s} {'variant':16s} {'step ms':>8s} {'gpu us':>8s} {'host us':>8s} {'copies':>6s} "
          f"{'copy us':>8s}")
    for name in argv:
        model, inputs, targets = training_case(name)
        rows = {}
        for v in variants:
            torch._dynamo.reset()
            graph_slots.READ_IN_PLACE = v != "kitsune_graph_copy"
            step = make_step(compiled(model, v, mode), model, inputs, targets)
            for _ in range(3):
                step()
            row = {"step_ms": do_bench(step, warmup=50, rep=300, return_mode="median"), **gpu_of_one_step(step),
                   "host_us": host_of_one_step(step)}
            rows[v] = row
            print(f"{name:16s} {v:16s} {row['step_ms']:8.4f} {row['gpu_us']:8.1f} {row['host_us']:8.1f} "
                  f"{row['copies']:6d} {row['copy_us']:8.1f}", flush=True)
            del step
            torch._dynamo.reset()
            torch.cuda.empty_cache()
        out[name] = rows
    if "--out" in opt:
        with open(opt["--out"], "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "mode": mode, "date": time.strftime("%Y-%m-%d"),
                       "torch": torch.__version__, "workloads": out}, fh, indent=1)


if __name__ == "__main__":
    main()
