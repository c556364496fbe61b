"""N replays of a compiled program's CUDA graph give bit-identical outputs (issue 14's replay test), or, with
``--tol``, outputs within that relative distance of the first call's (issue 16's: a scatter-add by fp32 atomics
sums in whatever order the CTAs run, so the low bits may differ between replays).

    python bench/kernels/replay_check.py WORKLOAD [--mode dataflow] [--n 1000] [--tol 1e-3]

WORKLOAD: a kitsune.models name or path/model.py[:factory] (as kitsune.bench takes). The program is compiled
with ``cuda_graph=True``; every call replays the same graph on the same inputs (a KV cache updated in place is
rewritten with the same row, so the outputs must not change); the first call's outputs are the reference.
"""

from __future__ import annotations

import argparse

import torch

import kitsune
import kitsune.bench.harness
from kitsune.bench.harness import flatten, get_source


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--mode", default="dataflow")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--tol", type=float, default=0.0,
                    help="largest ||out - first|| / ||first|| allowed per output (0: bit-identical)")
    a = ap.parse_args()
    src = get_source(a.workload)
    model, inputs = src.build(1.0, torch.bfloat16, "cuda", 0)
    with torch.no_grad():
        cm = kitsune.compile(model, inputs, mode=a.mode, cuda_graph=True)
        ref = [t.clone() for t in flatten(cm(*inputs))]
        bad, worst = 0, 0.0
        for _ in range(a.n - 1):
            out = flatten(cm(*inputs))
            for o, r in zip(out, ref):
                if torch.equal(o, r):
                    continue
                d = (torch.linalg.vector_norm((o.float() - r.float())) / torch.linalg.vector_norm(r.float())).item()
                worst = max(worst, d)
                bad += int(d > a.tol)
        torch.cuda.synchronize()
        cm.check_errors()
    print(f"replay {src.name} {a.mode}: {a.n} replays, {bad} output(s) further than {a.tol:g} from the first "
          f"call's (largest relative difference {worst:.2e}) -> {'ok' if bad == 0 else 'DIFFERENT'}", flush=True)
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
