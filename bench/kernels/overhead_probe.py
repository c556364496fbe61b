"""What the harness's timing of one CUDA-graph replay costs beyond the kernels in it: ``do_bench`` (L2 flushed before
each call, events around it) of a graph holding one one-element kernel, of a graph of N such kernels, and of the same
N kernels launched back to back inside one graph of 20 replays (``graph_us``).

    python bench/kernels/overhead_probe.py [--kernels 1,6,13]
"""

from __future__ import annotations

import argparse

import torch
from graphtime import graph_us
from triton.testing import do_bench


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default="1,6,13")
    a = ap.parse_args()
    x = torch.zeros(1, device="cuda")
    for n in [int(v) for v in a.kernels.split(",")]:
        def step(n=n):
            for _ in range(n):
                x.add_(1)

        step()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step()
        one = [do_bench(g.replay, warmup=25, rep=100, return_mode="median") * 1e3 for _ in range(3)]
        inner = graph_us(step)
        print(f"{n:3d} tiny kernels: one replay (the harness's timing) {min(one):6.2f} us "
              f"[{', '.join(f'{v:.2f}' for v in one)}]; inside a graph of 20 {inner:6.2f} us", flush=True)


if __name__ == "__main__":
    main()
