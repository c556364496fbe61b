"""Probe: what a Gluon kernel pays for making its TMA descriptors on the device, and whether programmatic
dependent launch hides it.

    python bench/kernels/tma_desc_probe.py --aot        # no GPU: sm_90a compile, the tensormap PTX counted
    python bench/kernels/tma_desc_probe.py --out r.json # H100: per-launch time in a CUDA graph

Why (NOTES section 34): the gemm template's Gluon kernels make every descriptor in the kernel
(``tma.make_tensor_descriptor``: the tensormap built in shared memory, copied to global scratch with a
``.release.gpu`` proxy fence, then acquired), one after another, before the first TMA load. T256's fc2 at
128 x 192 (five descriptors) ran 71.2 us under ncu against 66.0 for the same tile in ``mc_gemm.py``, whose
descriptors come from the host.

The kernel: 128 programs, each makes ``N_DESC`` descriptors of one [M, K] bf16 matrix (different block rows, so
none is merged with another), loads one [BR, 64] block through each (all in flight together, one barrier) and
adds a value of each into an output. (A first version waited for each load in turn: 3.1 / 4.9 / 6.9 / 10.1 us
at 1 / 2 / 3 / 5, load latencies included.)
Variants: ``N_DESC`` 1 .. 5; ``EARLY`` 1: the descriptors are made before ``gdc_wait()`` (launched with PDL, so
under a predecessor's tail); a host-descriptor variant of the same loads for reference. Time: a CUDA graph of 20
launches, ``do_bench`` median, per launch.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait

BLOCK_ROWS = (128, 64, 32, 16, 8)  # block rows of descriptor i (distinct, so that each is its own tensormap)


def nbytes(n: int) -> int:
    """Bytes the first ``n`` descriptors' blocks bring in."""
    return sum(BLOCK_ROWS[:n]) * 64 * 2


@gluon.jit
def _issue(desc, bar, row):
    """One TMA load through ``desc`` into a buffer of its own (all a program's loads in flight together)."""
    buf = gl.allocate_shared_memory(desc.dtype, desc.block_type.shape, desc.layout)
    tma.async_copy_global_to_shared(desc, [row, 0], bar, buf)
    return buf


@gluon.jit
def _use(buf, out_ptr, j: gl.constexpr):
    lay: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    v = buf.load(lay).to(gl.float32)
    gl.atomic_add(out_ptr + j, gl.sum(gl.sum(v, axis=1), axis=0))


@gluon.jit
def _load_all(d0, d1, d2, d3, d4, bar, out_ptr, N_DESC: gl.constexpr, NBYTES: gl.constexpr):
    """A block through each of the first ``N_DESC`` descriptors, all in flight on one barrier; a value of each
    added into ``out_ptr``."""
    row = gl.program_id(0) * 128
    mbarrier.expect(bar, NBYTES)
    b0 = _issue(d0, bar, row)
    if N_DESC >= 2:
        b1 = _issue(d1, bar, row)
    if N_DESC >= 3:
        b2 = _issue(d2, bar, row)
    if N_DESC >= 4:
        b3 = _issue(d3, bar, row)
    if N_DESC >= 5:
        b4 = _issue(d4, bar, row)
    mbarrier.wait(bar, 0)
    _use(b0, out_ptr, 0)
    if N_DESC >= 2:
        _use(b1, out_ptr, 1)
    if N_DESC >= 3:
        _use(b2, out_ptr, 2)
    if N_DESC >= 4:
        _use(b3, out_ptr, 3)
    if N_DESC >= 5:
        _use(b4, out_ptr, 4)


@gluon.jit
def desc_kernel(a_ptr, out_ptr, M, K, N_DESC: gl.constexpr, EARLY: gl.constexpr, PDL: gl.constexpr,
                NBYTES: gl.constexpr):
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    if PDL and EARLY == 0:
        gdc_wait()
    d0 = tma.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[128, 64],
                                    layout=gl.NVMMASharedLayout.get_default_for([128, 64], gl.bfloat16))
    if N_DESC >= 2:
        d1 = tma.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[64, 64],
                                        layout=gl.NVMMASharedLayout.get_default_for([64, 64], gl.bfloat16))
    else:
        d1 = d0  # (not loaded through)
    if N_DESC >= 3:
        d2 = tma.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[32, 64],
                                        layout=gl.NVMMASharedLayout.get_default_for([32, 64], gl.bfloat16))
    else:
        d2 = d0  # (not loaded through)
    if N_DESC >= 4:
        d3 = tma.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[16, 64],
                                        layout=gl.NVMMASharedLayout.get_default_for([16, 64], gl.bfloat16))
    else:
        d3 = d0  # (not loaded through)
    if N_DESC >= 5:
        d4 = tma.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[8, 64],
                                        layout=gl.NVMMASharedLayout.get_default_for([8, 64], gl.bfloat16))
    else:
        d4 = d0  # (not loaded through)
    if PDL and EARLY == 1:
        gdc_wait()
    _load_all(d0, d1, d2, d3, d4, bar, out_ptr, N_DESC, NBYTES)
    if PDL:
        gdc_launch_dependents()


@gluon.jit
def host_kernel(d0, d1, d2, d3, d4, out_ptr, N_DESC: gl.constexpr, NBYTES: gl.constexpr):
    """The same loads through descriptors made on the host (kernel parameters)."""
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    _load_all(d0, d1, d2, d3, d4, bar, out_ptr, N_DESC, NBYTES)


def run_gpu(out_path):
    import torch

    from graphtime import graph_us

    def alloc(size, alignment, stream):
        return torch.empty(size, dtype=torch.int8, device="cuda")

    triton.set_allocator(alloc)
    M, K = 128 * 128, 64
    a = torch.randn(M, K, device="cuda").to(torch.bfloat16)
    out = torch.zeros(8, device="cuda")
    recs = []
    print(f"{'n_desc':>6} {'early':>5} {'pdl':>3} {'us':>7}")
    for pdl in (0, 1):
        for early in ((0, 1) if pdl else (0, )):
            for n in (1, 2, 3, 5):
                kw = {"launch_pdl": True} if pdl else {}

                def step(n=n, early=early, pdl=pdl, kw=kw):
                    desc_kernel[(128, )](a, out, M, K, N_DESC=n, EARLY=early, PDL=pdl, NBYTES=nbytes(n), num_warps=4,
                                         **kw)

                step()
                torch.cuda.synchronize()
                us = graph_us(step)
                recs.append({"n_desc": n, "early": early, "pdl": pdl, "us": round(us, 3)})
                print(f"{n:>6} {early:>5} {pdl:>3} {us:7.2f}")
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    descs = [TensorDescriptor.from_tensor(a, [r, 64], gl.NVMMASharedLayout.get_default_for([r, 64], gl.bfloat16))
             for r in BLOCK_ROWS]
    for n in (1, 2, 3, 5):
        def step(n=n):
            host_kernel[(128, )](*descs, out, N_DESC=n, NBYTES=nbytes(n), num_warps=4)

        step()
        torch.cuda.synchronize()
        us = graph_us(step)
        recs.append({"n_desc": n, "host": 1, "us": round(us, 3)})
        print(f"{n:>6} {'host':>5} {0:>3} {us:7.2f}")
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
            "date": time.strftime("%Y-%m-%d"), "timing": "CUDA graph of 20 launches, do_bench median, per launch"}
    if out_path:
        json.dump({"meta": meta, "records": recs}, open(out_path, "w"), indent=1)


def run_aot():
    import re

    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    for n in (1, 5):
        sig = {"a_ptr": "*bf16", "out_ptr": "*fp32", "M": "i32", "K": "i32", "N_DESC": "constexpr",
               "EARLY": "constexpr", "PDL": "constexpr", "NBYTES": "constexpr"}
        src = GluonASTSource(desc_kernel, sig, {"N_DESC": n, "EARLY": 1, "PDL": 1, "NBYTES": nbytes(n)},
                             {(0, ): [["tt.divisibility", 16]], (1, ): [["tt.divisibility", 16]]})
        ck = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
        ptx = ck.asm["ptx"]
        print(n, "tensormap fences:", len(re.findall(r"tensormap\.cp_fenceproxy", ptx)),
              "TMA loads:", len(re.findall(r"cp\.async\.bulk\.tensor", ptx)),
              "griddepcontrol.wait before the first fence:",
              ptx.find("griddepcontrol.wait") < ptx.find("tensormap.cp_fenceproxy"))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--aot", action="store_true")
    ap.add_argument("--out", default="")
    a = ap.parse_args(argv)
    if a.aot:
        return run_aot()
    return run_gpu(a.out)


if __name__ == "__main__":
    sys.exit(main())
