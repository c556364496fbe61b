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


def rotating_us(steps, reps: int = 20) -> float:
    """``graph_us`` of a step that calls ``steps`` in turn, one per call: each its own copy of the operands (the
    copies together past the L2, so that every call reads from DRAM)."""
    state = {"i": 0}

    def step():
        steps[state["i"] % len(steps)]()
        state["i"] += 1

    return graph_us(step, reps)


def kernels_alone_us(state, env, kernels) -> dict[str, float]:
    """Each of ``kernels`` (entries of a generated module's ``KERNELS``) timed alone: a CUDA graph of ``graph_us``'s
    calls of (zero the ticket counters and the epoch, launch the kernel) minus the same graph of the resets alone;
    the kernel reads the buffers of ``state`` (a program's, after one full launch) and ``env`` (its tensors)."""
    ctr, err, ep = state["counters"], state["err"], state["epoch"]
    base = graph_us(lambda: (ctr.zero_(), ep.zero_()))
    out = {}
    for k in kernels:
        envk = {**state["buffers"], **env}
        mod = k["fn"].fn.__globals__  # the generated module's runtime helpers
        if k.get("tma"):  # (aligned / padded copies where TMA needs them)
            mod["_tma_prepare"](envk, k["tma"], k.get("tma_pad"))
        # (with the TMA descriptors the host makes for a Gluon kernel: its module's ``_kernel_args``)
        args = mod["_kernel_args"](envk, k) if k.get("descs") else [envk[n] for n in k["tensors"]]

        def step(k=k, args=args):
            ctr.zero_()
            ep.zero_()  # a program's id is its ticket minus epoch x grid: both from zero
            k["fn"][(k["grid"],)](*args, ctr, err, ep, k["ticket"], WATCHDOG=0, num_warps=k["num_warps"],
                                  num_stages=k["num_stages"])

        out[k["name"]] = graph_us(step) - base
    return out
