"""Compile one workload and call it a few times, nothing else: the process a profiler (ncu, compute-sanitizer)
wraps to see a program's kernels.

    python bench/kernels/run_program.py [WORKLOAD] [MODE] [CALLS]     (llama_decode_b8 bulk-sync 3)
"""

import sys

import torch

import kitsune
from kitsune.bench.harness import get_source


def main(argv: list[str]) -> None:
    name = argv[0] if argv else "llama_decode_b8"
    mode = argv[1] if len(argv) > 1 else "bulk-sync"
    calls = int(argv[2]) if len(argv) > 2 else 3
    model, inputs = get_source(name).build(1.0, torch.bfloat16, "cuda", 0)
    fn = kitsune.compile(model, inputs, mode=mode, device="cuda", cuda_graph=False)
    for _ in range(calls):
        fn(*inputs)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main(sys.argv[1:])
