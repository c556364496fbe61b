"""Time a small GPU step without its launch overhead: ``reps`` calls captured in one CUDA graph (warmed up on a
side stream first), ``do_bench`` median of the replay, per call, in microseconds. Shared by the probes."""

from __future__ import annotations

import torch
from triton.testing import do_bench


def graph_us(step, reps: int = 20) -> float:
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        step()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            step()
    return do_bench(g.replay, warmup=20, rep=200) * 1e3 / reps
