"""Run one workload's program a few times (no timing), e.g. under ncu or compute-sanitizer, with kitsune-form-regions
options of one's choosing.

    python bench/kernels/run_once.py mgn_10k [--mode bulk-sync] [--chain-min-layers -1] [--iters 3]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--mode", default="bulk-sync")
    ap.add_argument("--chain-min-layers", type=int)
    ap.add_argument("--iters", type=int, default=3)
    a = ap.parse_args()
    import torch

    import kitsune
    from chain_ab import patched_chains
    from kitsune.models import get_workload

    model, inputs = get_workload(a.workload).build(scale=1.0, dtype=torch.bfloat16, device="cuda")
    ctx = patched_chains(True, chain_min_layers=a.chain_min_layers) if a.chain_min_layers is not None \
        else contextlib.nullcontext()
    with ctx, torch.no_grad():
        fn = kitsune.compile(model, inputs, mode=a.mode, cache=False)
        for _ in range(a.iters):
            fn(*inputs)
        torch.cuda.synchronize()
    print("done", a.workload, a.mode)


if __name__ == "__main__":
    main()
