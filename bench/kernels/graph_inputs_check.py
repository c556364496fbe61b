"""GPU check of CUDA-graph calls that read steady inputs in place (kitsune.runtime.graph_slots): a program called
with cuda_graph=True on (a) one input tensor refilled in place, (b) a new tensor per call, (c) two tensors in
turn, (d) outputs kept across calls, each result against the same program launched without a graph.

    python bench/kernels/graph_inputs_check.py [workload ...]   (default: mlp_gpt3_T256 at scale 0.25, dlrm_b2048)
"""

from __future__ import annotations

import sys

import torch

import kitsune
from kitsune.bench.harness import flatten, get_source


def rel(a, b):
    return (torch.linalg.vector_norm(a.float() - b.float()) / torch.linalg.vector_norm(b.float()).clamp_min(1e-30)).item()


def main() -> None:
    names = sys.argv[1:] or ["mlp_gpt3_T256", "dlrm_b2048"]
    bad = 0
    for name in names:
        src = get_source(name)
        model, inputs = src.build(0.25 if "mlp" in name else 1.0, torch.bfloat16, "cuda", 0)
        model.eval()
        ref = kitsune.compile(model, inputs, mode="bulk-sync")
        g = kitsune.compile(model, inputs, mode="bulk-sync", cuda_graph=True)
        fresh = lambda k: src.fresh(inputs, 0.25 if "mlp" in name else 1.0, torch.bfloat16, "cuda", 100 + k)  # noqa: E731
        worst = 0.0
        held = []
        a, b = fresh(0), fresh(1)
        cases = []
        for k in range(6):  # (a) refilled in place
            for x, y in zip(a, fresh(10 + k)):
                x.copy_(y)
            cases.append(a)
        cases += [fresh(20 + k) for k in range(4)]  # (b) new tensors
        cases += [a, b, a, b, a]  # (c) in turn
        for k, c in enumerate(cases):
            want = [o.clone() for o in flatten(ref(*c))]
            got = flatten(g(*c))
            if k % 3 == 0:
                held.append((got, want))  # (d) kept: later calls must not overwrite them
            worst = max([worst] + [rel(x, y) for x, y in zip(got, want)])
        for got, want in held:
            worst = max([worst] + [rel(x, y) for x, y in zip(got, want)])
        ok = worst < 2e-2
        bad += not ok
        slots = g.program._slots if hasattr(g, "program") else None
        print(f"{name:16s} calls {len(cases):3d} worst rel err {worst:.2e} {'ok' if ok else 'WRONG'}"
              + (f" captures {slots.captures}" if slots is not None else ""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
