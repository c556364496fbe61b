"""Scratch: does Gluon (Triton 3.6) emit TMA multicast for sm_90 with num_ctas=2? AOT, no GPU."""
import sys, re, traceback
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import tma, mbarrier
from triton.experimental.gluon._runtime import GluonASTSource
import os

OUTDIR = os.environ.get("OUT", "/tmp/multicast_probe")  # where the PTX / TTGIR go
os.makedirs(OUTDIR, exist_ok=True)

BM, BK = 128, 64


@gluon.jit
def tma_bcast_kernel(in_desc, out_desc, BAR_LAYOUT: gl.constexpr):
    smem = gl.allocate_shared_memory(in_desc.dtype, in_desc.block_shape, in_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], BAR_LAYOUT)
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, in_desc.block_type.nbytes)
    tma.async_copy_global_to_shared(in_desc, [0, 0], bar, smem)
    mbarrier.wait(bar, 0)
    mbarrier.invalidate(bar)
    pid = gl.program_id(0)
    tma.async_copy_shared_to_global(out_desc, [pid * 128, 0], smem)
    tma.store_wait(0)


def layout_repr(l):
    return repr(l)


def compile_one(cga, bar_cga, num_ctas=2, out_cga=None):
    lay = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, cga_layout=cga)
    olay = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2,
                                cga_layout=cga if out_cga is None else out_cga)
    sig = {"in_desc": f"tensordesc<bf16[{BM},{BK}],{lay!r}>",
           "out_desc": f"tensordesc<bf16[{BM},{BK}],{olay!r}>",
           "BAR_LAYOUT": "constexpr"}
    src = GluonASTSource(tma_bcast_kernel, sig, {"BAR_LAYOUT": mbarrier.MBarrierLayout(cga_layout=bar_cga)})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_ctas": num_ctas})


def report(tag, ck):
    ptx = ck.asm["ptx"]
    tma_lines = [l.strip() for l in ptx.splitlines() if "cp.async.bulk.tensor" in l]
    print(f"== {tag}: OK")
    for l in tma_lines:
        print("   ", l)
    for kw in ("multicast::cluster", ".reqnctapercluster", ".explicitcluster", "%cluster_ctarank", "barrier.cluster"):
        print(f"    {kw}: {kw in ptx}")
    print("    metadata num_ctas:", ck.metadata.num_ctas, "cluster_dims:", getattr(ck.metadata, "cluster_dims", None))
    return ptx


if __name__ == "__main__":
    cases = [
        ("1 CTA baseline", [], [], 1),
        ("2 CTA, broadcast cga [[0,0]]", [[0, 0]], [[0]], 2),
        ("2 CTA, split M cga [[1,0]]", [[1, 0]], [[0]], 2),
        ("2 CTA, no cga (default)", [], [], 2),
    ]
    for tag, cga, bcga, n in cases:
        try:
            ck = compile_one(cga, bcga, n)
            ptx = report(tag, ck)
            with open(OUTDIR + f"/{re.sub('[^a-z0-9]+','_',tag.lower())}.ptx", "w") as f:
                f.write(ptx)
            with open(OUTDIR + f"/{re.sub('[^a-z0-9]+','_',tag.lower())}.ttgir", "w") as f:
                f.write(ck.asm["ttgir"])
        except Exception as e:
            print(f"== {tag}: FAIL: {type(e).__name__}: {str(e)[-1500:]}")
