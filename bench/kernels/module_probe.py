"""Probe: each kernel of a compiled Kitsune program timed alone, in a CUDA graph (no launch overhead).

    python bench/kernels/module_probe.py inception_b8 [--mode bulk-sync] [--dump DIR]

Per kernel: a CUDA graph of 20 x (zero the ticket counters, launch the kernel) minus a graph of the 20
counter resets alone, do_bench median / 20. The kernel reads the buffers the full launch left (one launch
runs first). ``--dump DIR`` writes the generated module there.
"""

from __future__ import annotations

import os
import sys

import torch
from graphtime import graph_us, kernels_alone_us  # bench/kernels/graphtime.py (the script's folder is on sys.path)

import kitsune
from kitsune.bench.harness import get_source


def main() -> None:
    spec = sys.argv[1]
    mode = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else "bulk-sync"
    src = get_source(spec)
    model, inputs = src.build(1.0, torch.bfloat16, "cuda", 0)
    fn = kitsune.compile(model, inputs, mode=mode, device="cuda", cuda_graph=False)
    prog = fn.program
    mod = prog.module
    if "--dump" in sys.argv:
        d = sys.argv[sys.argv.index("--dump") + 1]
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"{spec}-{mode}.py"), "w") as fh:
            fh.write(prog.source)
    env = {**prog._tensors, **prog._prepare(inputs)}
    mod.launch(prog.state, env)
    torch.cuda.synchronize()
    st = prog.state
    ctr, ep = st["counters"], st["epoch"]
    ep.zero_()
    base = graph_us(lambda: (ctr.zero_(), ep.zero_()))
    full = graph_us(lambda: (ctr.zero_(), ep.zero_(), mod.launch(st, env)))
    total = 0.0
    print(f"{spec} {mode}: whole launch {full - base:.1f} us (graph, counters reset)")
    for k, us in zip(mod.KERNELS, kernels_alone_us(st, env, mod.KERNELS).values()):
        total += us
        stages = [ln for ln in prog.source.splitlines() if f"def {k['name']}_" in ln]
        print(f"  {k['name']:4s} grid {k['grid']:5d} warps {k['num_warps']}  {us:8.1f} us  "
              f"{', '.join(s.split('(')[0].replace('def ', '') for s in stages)}")
    print(f"  sum {total:.1f} us")


if __name__ == "__main__":
    main()
