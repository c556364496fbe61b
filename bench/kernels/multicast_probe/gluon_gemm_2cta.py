"""Scratch: Gluon wgmma GEMM, 2-CTA cluster (num_ctas=2), cluster tile 256x128: A split over M, B broadcast.
AOT sm_90, check whether it compiles and whether the broadcast B load becomes a TMA multicast."""
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import tma, mbarrier, warpgroup_mma, warpgroup_mma_wait, fence_async_shared
from triton.experimental.gluon._runtime import GluonASTSource
import os

OUTDIR = os.environ.get("OUT", "/tmp/multicast_probe")  # where the PTX / TTGIR go
os.makedirs(OUTDIR, exist_ok=True)


@gluon.jit
def gemm2cta(a_desc, b_desc, c_desc, K, ACC_LAYOUT: gl.constexpr, BAR_LAYOUT: gl.constexpr):
    BM: gl.constexpr = a_desc.block_shape[0]   # cluster-level M (256 = 2 x 128)
    BK: gl.constexpr = a_desc.block_shape[1]
    BN: gl.constexpr = b_desc.block_shape[1]
    pid_m = gl.program_id(0)   # = cluster id (the launcher multiplies grid x by num_ctas)
    pid_n = gl.program_id(1)
    a_s = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_shape, a_desc.layout)
    b_s = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_shape, b_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], BAR_LAYOUT)
    mbarrier.init(bar, count=1)
    acc = gl.zeros([BM, BN], gl.float32, ACC_LAYOUT)
    phase = 0
    for k in range(0, K, BK):
        # per-CTA bytes: half of A + all of B
        mbarrier.expect(bar, a_desc.block_type.nbytes // 2 + b_desc.block_type.nbytes)
        tma.async_copy_global_to_shared(a_desc, [pid_m * BM, k], bar, a_s)
        tma.async_copy_global_to_shared(b_desc, [k, pid_n * BN], bar, b_s)
        mbarrier.wait(bar, phase)
        phase ^= 1
        acc = warpgroup_mma(a_s, b_s, acc)
    mbarrier.invalidate(bar)
    c_s = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_shape, c_desc.layout)
    c_s.store(acc.to(c_desc.dtype))
    fence_async_shared()
    tma.async_copy_shared_to_global(c_desc, [pid_m * BM, pid_n * BN], c_s)
    tma.store_wait(0)


def main():
    split_m, bcast = [[1, 0]], [[0, 0]]
    a_l = gl.NVMMASharedLayout(128, 16, 2, cga_layout=split_m)
    b_l = gl.NVMMASharedLayout(128, 16, 2, cga_layout=bcast)
    c_l = gl.NVMMASharedLayout(128, 16, 2, cga_layout=split_m)
    acc_l = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 128, 16],
                                      cga_layout=split_m)
    sig = {"a_desc": f"tensordesc<bf16[256,64],{a_l!r}>", "b_desc": f"tensordesc<bf16[64,128],{b_l!r}>",
           "c_desc": f"tensordesc<bf16[256,128],{c_l!r}>", "K": "i32",
           "ACC_LAYOUT": "constexpr", "BAR_LAYOUT": "constexpr"}
    src = GluonASTSource(gemm2cta, sig, {"ACC_LAYOUT": acc_l, "BAR_LAYOUT": mbarrier.MBarrierLayout(cga_layout=[[0]])})
    ck = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_ctas": 2})
    ptx = ck.asm["ptx"]
    open(OUTDIR + "/gluon_gemm_2cta.ptx", "w").write(ptx)
    print("compiled OK; shared =", ck.metadata.shared, "num_ctas =", ck.metadata.num_ctas)
    for kw in ("wgmma.mma_async", "multicast::cluster", ".reqnctapercluster", ".explicitcluster", "%cluster_ctarank"):
        print(f"  {kw}: {kw in ptx}")
    for l in ptx.splitlines():
        if "cp.async.bulk.tensor" in l or "expect_tx" in l:
            print("   ", l.strip())


if __name__ == "__main__":
    main()
