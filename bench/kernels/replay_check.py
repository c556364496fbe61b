"""N replays of a compiled program's CUDA graph give bit-identical outputs (issue 14's replay test).

    python bench/kernels/replay_check.py WORKLOAD [--mode dataflow] [--n 1000]

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
    a = ap.parse_args()
    src = get_source(a.workload)
    model, inputs = src.build(1.0, torch.bfloat16, "cuda", 0)
    with torch.no_grad():
        cm = kitsune.compile(model, inputs, mode=a.mode, cuda_graph=True)
        ref = [t.clone() for t in flatten(cm(*inputs))]
        bad = 0
        for _ in range(a.n - 1):
            out = flatten(cm(*inputs))
            bad += sum(int(not torch.equal(o, r)) for o, r in zip(out, ref))
        torch.cuda.synchronize()
        cm.check_errors()
    print(f"replay {src.name} {a.mode}: {a.n} replays, {bad} output(s) differing from the first call's "
          f"-> {'ok' if bad == 0 else 'DIFFERENT'}", flush=True)
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
