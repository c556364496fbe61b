"""Where a training step's time goes: the GPU kernels of one step, in launch order, for Kitsune's backend
(forward and backward programs, no CUDA graph so that each kernel shows) and for eager.

    python bench/kernels/train_profile.py mlp_gpt3_T256 [nerf_65k ...] [--mode bulk-sync] [--out FILE.json]

Kitsune's kernels are named after their program's kernels (k0, k1, ...: the forward's first, then the loss in
eager, then the backward's); the generated modules (``python -m kitsune.tools.opt`` or the backend's records)
tell what each computes.
"""

from __future__ import annotations

import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import kitsune.backend  # noqa: F401  (registers backend="kitsune" without the installed entry point)
from kitsune.bench.harness import get_source
from kitsune.bench.train import make_step


def training_case(name: str):
    """(model in training mode, inputs, fixed targets of its outputs) of a suite workload, full size, bf16, GPU."""
    model, inputs = get_source(name).build(1.0, torch.bfloat16, "cuda", 0)
    model.train()
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():
        o = model(*inputs)
    outs = o if isinstance(o, (tuple, list)) else (o,)
    return model, inputs, [torch.randn(x.shape, generator=gen).cuda() for x in outs]


def kernels_of_one_step(step) -> list[tuple[str, float]]:
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0]
    evs.sort(key=lambda e: e.time_range.start)
    return [(e.name, e.device_time) for e in evs]


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    mode = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else "bulk-sync"
    args = [a for a in args if a != mode]
    out = {}
    for name in args:
        model, inputs, targets = training_case(name)
        c = torch.compile(model, backend="kitsune", options={"mode": mode, "fallback": False})
        rows = {}
        for label, fn in (("kitsune", c), ("eager", model)):
            seq = kernels_of_one_step(make_step(fn, model, inputs, targets))
            total = sum(t for _, t in seq)
            print(f"{name} {label}: {len(seq)} kernels, {total:.1f} us of kernel time")
            for i, (k, t) in enumerate(seq):
                print(f"  {i:3d} {t:8.1f} us  {k[:110]}")
            rows[label] = seq
        out[name] = rows
    if "--out" in sys.argv:
        with open(sys.argv[sys.argv.index("--out") + 1], "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "mode": mode, "workloads": out}, fh, indent=1)


if __name__ == "__main__":
    main()
