"""Probe: NeRF's nine layers as one hand-written Gluon kernel (explicit shared memory, TMA, async wgmma), against
the chain template's Triton kernel (issue 15).

Why: the Triton chain kernel (templates/chain.py) keeps activations in registers and loads each weight block
global -> registers -> shared memory right before its wgmma; at 255 registers and one CTA per SM nothing hides
that latency (370-400 TFLOP/s, NOTES section 12). Here the activation tile lives in shared memory (the A
operand of the next layer's wgmma, written by the epilogue), and the weights are one static stream of
[256, 64] chunks (every layer's K chunks, tile after tile) through an S-slot TMA ring that runs S - 1 chunks
ahead of the tensor cores, across layer and tile boundaries: no weight load waits on a data dependence.

    python bench/kernels/gluon_chain_probe.py --aot          # here: sm_90a compile, resources per config
    python bench/kernels/gluon_chain_probe.py --json F       # on the H100: check against eager, time

Host preparation (not timed): weights whose row pitch is not 16-byte aligned (layer 0: K = 63, layer 4: K = 319)
are zero-padded to K = 64 / 320, as TMA requires; the compiler would do this once per call (~200 KB).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)

WIDTH = gl.constexpr(256)
IN = gl.constexpr(63)
OUT = gl.constexpr(4)
BK = gl.constexpr(64)
# the weight stream of one tile: (layer, k chunk); layer 0 reads x (1 chunk), layer 4 reads [h | x] (5 chunks)
_NCH = (1, 4, 4, 4, 5, 4, 4, 4)  # K chunks of each layer


@gluon.constexpr_function
def _locate(c):
    """(layer, k chunk) of stream chunk ``c``."""
    L = 0
    while c >= _NCH[L]:
        c -= _NCH[L]
        L += 1
    return L, c


@gluon.constexpr_function
def chunk_base(L):
    return sum(_NCH[:L])


@gluon.constexpr_function
def nchunks(L):
    return _NCH[L]


@gluon.constexpr_function
def chunk_layer(c):
    return _locate(c)[0]


@gluon.constexpr_function
def chunk_k(c):
    return _locate(c)[1]


@gluon.jit
def _issue(c: gl.constexpr, g, S: gl.constexpr, pred, ring, ready, d0, d1, d2, d3, d4, d5, d6, d7):
    """TMA of stream chunk ``c`` (static) into the ring slot of global chunk number ``g``."""
    slot = g % S
    bar = ready.index(slot)
    buf = ring.index(slot)
    L: gl.constexpr = chunk_layer(c)
    K0: gl.constexpr = chunk_k(c) * 64
    mbarrier.expect(bar, 256 * 64 * 2, pred=pred)
    if L == 0:
        tma.async_copy_global_to_shared(d0, [0, K0], bar, buf, pred=pred)
    elif L == 1:
        tma.async_copy_global_to_shared(d1, [0, K0], bar, buf, pred=pred)
    elif L == 2:
        tma.async_copy_global_to_shared(d2, [0, K0], bar, buf, pred=pred)
    elif L == 3:
        tma.async_copy_global_to_shared(d3, [0, K0], bar, buf, pred=pred)
    elif L == 4:
        tma.async_copy_global_to_shared(d4, [0, K0], bar, buf, pred=pred)
    elif L == 5:
        tma.async_copy_global_to_shared(d5, [0, K0], bar, buf, pred=pred)
    elif L == 6:
        tma.async_copy_global_to_shared(d6, [0, K0], bar, buf, pred=pred)
    else:
        tma.async_copy_global_to_shared(d7, [0, K0], bar, buf, pred=pred)


@gluon.jit
def nerf_chain_kernel(x_ptr, out_ptr, bias_ptr, wout_ptr, bout_ptr, P,
                      d0, d1, d2, d3, d4, d5, d6, d7,
                      S: gl.constexpr, num_warps: gl.constexpr):
    BM: gl.constexpr = 128
    NCHUNK: gl.constexpr = 30
    mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1],
                                                  instr_shape=[16, 256, 16])
    mma_o: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1],
                                                    instr_shape=[16, 16, 16])
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [num_warps, 1], [1, 0])
    chunk_l: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, 64], gl.bfloat16)
    w_l: gl.constexpr = d1.layout
    wo_l: gl.constexpr = gl.NVMMASharedLayout.get_default_for([16, 64], gl.bfloat16)

    ring = gl.allocate_shared_memory(gl.bfloat16, [S, 256, 64], w_l)
    ready = gl.allocate_shared_memory(gl.int64, [S, 1], mbarrier.MBarrierLayout())
    act = gl.allocate_shared_memory(gl.bfloat16, [4, BM, 64], chunk_l)
    x_s = gl.allocate_shared_memory(gl.bfloat16, [BM, 64], chunk_l)
    wo_s = gl.allocate_shared_memory(gl.bfloat16, [4, 16, 64], wo_l)
    for i in gl.static_range(S):
        mbarrier.init(ready.index(i), count=1)

    # the output layer's weights ([4, 256] -> 4 chunks of [16, 64], rows 4.. zero) stay resident
    r16 = gl.arange(0, 16, layout=gl.SliceLayout(1, blk))
    c64 = gl.arange(0, 64, layout=gl.SliceLayout(0, blk))
    for k in gl.static_range(4):
        wv = gl.load(wout_ptr + r16[:, None] * 256 + (k * 64 + c64)[None, :], mask=(r16 < OUT)[:, None], other=0.0)
        wo_s.index(k).store(wv)

    pid = gl.program_id(0)
    nprog = gl.num_programs(0)
    ntiles = gl.cdiv(P, BM)
    # prologue: the first S - 1 chunks of this program's first tile
    first = pid < ntiles
    for c in gl.static_range(S - 1):
        _issue(c, c, S, first, ring, ready, d0, d1, d2, d3, d4, d5, d6, d7)

    it = 0
    for tile in range(pid, ntiles, nprog):
        has_next = tile + nprog < ntiles
        rows = tile * BM + gl.arange(0, BM, layout=gl.SliceLayout(1, blk))
        xv = gl.load(x_ptr + rows[:, None] * IN + c64[None, :], mask=(rows < P)[:, None] & (c64 < IN)[None, :],
                     other=0.0)
        x_s.store(xv)
        fence_async_shared()
        gl.thread_barrier()
        for L in gl.static_range(8):
            acc = gl.zeros([BM, 256], gl.float32, layout=mma)
            for kk in gl.static_range(nchunks(L)):
                g = it * NCHUNK + chunk_base(L) + kk
                mbarrier.wait(ready.index(g % S), (g // S) & 1)
                w = ring.index(g % S).permute((1, 0))
                if L == 0:
                    acc = warpgroup_mma(x_s, w, acc, use_acc=False, is_async=True)
                elif L == 4 and kk == 4:
                    acc = warpgroup_mma(x_s, w, acc, is_async=True)
                else:
                    acc = warpgroup_mma(act.index(kk), w, acc, use_acc=kk > 0, is_async=True)
                acc = warpgroup_mma_wait(num_outstanding=1, deps=(acc, ))
                # chunk g - 1's wgmma is done in this warpgroup; after the barrier in all: its slot is free
                gl.thread_barrier()
                if chunk_base(L) + kk + S - 1 < NCHUNK:
                    _issue(chunk_base(L) + kk + S - 1, g + S - 1, S, True, ring, ready, d0, d1, d2, d3, d4, d5, d6, d7)
                else:
                    _issue(chunk_base(L) + kk + S - 1 - NCHUNK, g + S - 1, S, has_next, ring, ready, d0, d1, d2, d3, d4, d5, d6, d7)
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
            cols = gl.arange(0, 256, layout=gl.SliceLayout(0, mma))
            b = gl.load(bias_ptr + L * 256 + cols).to(gl.float32)
            h = gl.maximum(acc + b[None, :], 0.0).to(gl.bfloat16)
            gl.thread_barrier()  # every warpgroup is done reading act
            # [BM, 256] -> four [BM, 64] column chunks: j = 2 * a + b over [BM, 64, a, b]
            h4 = gl.reshape(gl.permute(gl.reshape(h, [BM, 4, 64]), [0, 2, 1]), [BM, 64, 2, 2])
            hb0, hb1 = gl.split(h4)  # b = 0: j in (0, 2); b = 1: j in (1, 3)
            j0, j2 = gl.split(hb0)
            j1, j3 = gl.split(hb1)
            act.index(0).store(j0)
            act.index(1).store(j1)
            act.index(2).store(j2)
            act.index(3).store(j3)
            fence_async_shared()
            gl.thread_barrier()
        # output layer: [BM, 256] @ [256, 16] (rows 4.. of the weight zero)
        acc_o = gl.zeros([BM, 16], gl.float32, layout=mma_o)
        for k in gl.static_range(4):
            acc_o = warpgroup_mma(act.index(k), wo_s.index(k).permute((1, 0)), acc_o, is_async=True)
        acc_o = warpgroup_mma_wait(num_outstanding=0, deps=(acc_o, ))
        oc = gl.arange(0, 16, layout=gl.SliceLayout(0, mma_o))
        orow = tile * BM + gl.arange(0, BM, layout=gl.SliceLayout(1, mma_o))
        bo = gl.load(bout_ptr + oc, mask=oc < OUT, other=0.0).to(gl.float32)
        o = (acc_o + bo[None, :]).to(gl.bfloat16)
        gl.store(out_ptr + orow[:, None] * OUT + oc[None, :], o, mask=(orow < P)[:, None] & (oc < OUT)[None, :])
        gl.thread_barrier()  # act and x_s are rewritten by the next tile
        it += 1
    for i in gl.static_range(S):
        mbarrier.invalidate(ready.index(i))


def w_layout():
    return gl.NVMMASharedLayout.get_default_for([256, 64], gl.bfloat16)


def aot(configs):
    import contextlib
    import io

    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    from kitsune.codegen.aot import parse_ptxas_log

    rows = []
    for S, warps in configs:
        desc = f"tensordesc<bf16[256, 64],{w_layout()!r}>"
        sig = {"x_ptr": "*bf16", "out_ptr": "*bf16", "bias_ptr": "*bf16", "wout_ptr": "*bf16", "bout_ptr": "*bf16",
               "P": "i32", **{f"d{i}": desc for i in range(8)}, "S": "constexpr",
               "num_warps": "constexpr"}
        attrs = {(i, ): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if t.startswith("*")}
        src = GluonASTSource(nerf_chain_kernel, sig, constexprs={"S": S, "num_warps": warps}, attrs=attrs)
        rec = {"S": S, "warps": warps}
        try:
            buf = io.StringIO()
            knobs.nvidia.dump_ptxas_log = True
            with contextlib.redirect_stdout(buf):
                k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
            ptx = k.asm["ptx"]
            rec.update(parse_ptxas_log(buf.getvalue()), shared=k.metadata.shared,
                       wgmma=ptx.count("wgmma.mma_async"), tma=ptx.count("cp.async.bulk.tensor"))
        except Exception as e:  # noqa: BLE001
            rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
            import traceback
            rec["trace"] = traceback.format_exc()[-1500:] + repr(e.__cause__ or e.__context__)[:1500]
        print(rec, flush=True)
        rows.append(rec)
    return rows


def gpu(configs, json_path):
    import torch
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
    from kitsune.models import get_workload

    model, (x, ) = get_workload("nerf_65k").build(scale=1.0, dtype=torch.bfloat16, device="cuda")
    with torch.no_grad():
        ref = model(x).float()
    P = x.shape[0]
    ws = []
    for i, lin in enumerate(model.layers):
        w = lin.weight.detach()
        K = w.shape[1]
        Kp = (K + 63) // 64 * 64
        wp = torch.zeros(256, Kp, dtype=w.dtype, device=w.device)
        wp[:, :K] = w
        ws.append(wp.contiguous())
    bias = torch.stack([lin.bias.detach() for lin in model.layers]).contiguous()
    wout = model.out.weight.detach().contiguous()
    bout = model.out.bias.detach().contiguous()
    descs = [TensorDescriptor(w, list(w.shape), list(w.stride()), [256, 64], w_layout()) for w in ws]
    out = torch.empty(P, OUT, dtype=torch.bfloat16, device="cuda")
    rows = []
    from triton.testing import do_bench

    def graph(fn):
        fn()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        return g.replay

    ind = torch.compile(model)
    with torch.no_grad():
        ind(x)
        peer = do_bench(graph(lambda: ind(x)), warmup=25, rep=200)
    print({"peer": "inductor+graph", "ms": peer}, flush=True)
    for S, warps in configs:
        rec = {"S": S, "warps": warps}
        grid = (min(torch.cuda.get_device_properties(0).multi_processor_count, triton.cdiv(P, 128)), )

        def run():
            nerf_chain_kernel[grid](x, out, bias, wout, bout, P, *descs, S=S, num_warps=warps)
        try:
            out.zero_()
            run()
            torch.cuda.synchronize()
            err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
            rec["rel_err"] = err
            rec["ms"] = do_bench(graph(run), warmup=25, rep=200)
            rec["x_inductor"] = peer / rec["ms"]
        except Exception as e:  # noqa: BLE001
            rec["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        print(rec, flush=True)
        rows.append(rec)
    if json_path:
        json.dump({"peer_inductor_graph_ms": peer, "rows": rows}, open(json_path, "w"), indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aot", action="store_true")
    ap.add_argument("--configs", nargs="*", default=["3,8", "4,8", "2,8"])
    ap.add_argument("--json")
    a = ap.parse_args()
    configs = [tuple(int(v) for v in c.split(",")) for c in a.configs]
    if a.aot:
        aot(configs)
    else:
        gpu(configs, a.json)


if __name__ == "__main__":
    main()
