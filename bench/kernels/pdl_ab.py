"""A/B: programmatic dependent launch (PDL) of a compiled program's kernels: off, 1 (next kernel launched once every
program started), 2 (once every program did its work). Setting 3 (each program prefetched its weights into L2,
waited, then let the next kernel launch) existed at commit 0e2b444 only: measured slower, removed (NOTES section 18).

    python bench/kernels/pdl_ab.py [--workloads all|a,b] [--modes bulk-sync] [--settings 0,1,2] [--rounds 4]
                                   [--out FILE.json]

Per workload and mode, one compiled program; its launch (every kernel, in order, with ``state["pdl"]`` 0, 1 or 2:
``launch_pdl`` + ``griddepcontrol`` in each kernel when set) is checked against eager (bf16, rel. err < 2e-2, each
setting and once more after the timing) and timed in CUDA graphs (``graph_us``: 20 launches per graph, do_bench
median), the three settings alternately, ``--rounds`` times, the order flipping every round. Prints the medians
and each setting / off - 1.
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch
from graphtime import graph_us

import kitsune
from kitsune.bench.harness import get_source
from kitsune.models import WORKLOADS


def rel_err(a, b) -> float:
    return ((a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-6)).item()


def worst(outs, ref) -> float:
    """The largest error of an eager result against the program output of its shape (a program's outputs may
    include the buffers it mutates, a KV cache, in another order)."""
    return max(rel_err(next(o for o in outs if o.shape == r.shape), r) for r in ref)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="all")
    ap.add_argument("--modes", default="bulk-sync")
    ap.add_argument("--settings", default="0,1,2", help="PDL settings to compare (the first is the baseline)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    names = list(WORKLOADS) if a.workloads == "all" else a.workloads.split(",")
    settings = [int(x) for x in a.settings.split(",")]
    rows = []
    print(f"{'workload':16s} {'mode':9s} {'kernels':>7s} " + " ".join(f"{'pdl ' + str(p) + ' us':>10s} {'vs ' + str(settings[0]):>7s}" for p in settings) + "  max err")
    for name in names:
        src = get_source(name)
        model, inputs = src.build(1.0, torch.bfloat16, "cuda", 0)
        with torch.no_grad():
            ref = model(*inputs)
        ref = ref if isinstance(ref, (list, tuple)) else [ref]
        for mode in a.modes.split(","):
            fn = kitsune.compile(model, inputs, mode=mode, device="cuda", cuda_graph=False)
            prog = fn.program
            mod, st = prog.module, prog.state
            env = {**prog._tensors, **prog._prepare(inputs)}
            res = {}
            for pdl in settings:
                st["pdl"] = pdl
                outs = mod.launch(st, env)
                torch.cuda.synchronize()
                res[pdl] = worst(outs, ref)
            times = {p: [] for p in settings}
            for r in range(a.rounds):
                for pdl in (settings if r % 2 == 0 else settings[::-1]):
                    st["pdl"] = pdl
                    times[pdl].append(graph_us(lambda: mod.launch(st, env)))
            for pdl in settings:  # after the timing: still right
                st["pdl"] = pdl
                outs = mod.launch(st, env)
                torch.cuda.synchronize()
                res[f"after{pdl}"] = worst(outs, ref)
            med = {p: statistics.median(times[p]) for p in settings}
            ok = max(res.values()) < 2e-2
            base = med[settings[0]]
            print(f"{name:16s} {mode:9s} {len(mod.KERNELS):7d} " + " ".join(f"{med[p]:10.1f} {med[p] / base - 1:+7.1%}" for p in settings)
                  + f"  {max(res.values()):.1e} {'ok' if ok else 'WRONG'}", flush=True)
            rows.append({"workload": name, "mode": mode, "kernels": len(mod.KERNELS),
                         "us": {str(p): times[p] for p in settings}, "median_us": {str(p): med[p] for p in settings},
                         "err": {str(k): v for k, v in res.items()}, "ok": ok, "device": torch.cuda.get_device_name()})
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
