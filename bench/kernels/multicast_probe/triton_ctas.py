"""Scratch: plain Triton tl.dot GEMM with TMA descriptors and num_ctas=2, AOT sm_90; check PTX for multicast/cluster."""
import sys
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import os

OUTDIR = os.environ.get("OUT", "/tmp/multicast_probe")  # where the PTX / TTGIR go
os.makedirs(OUTDIR, exist_ok=True)


@triton.jit
def gemm_host_desc(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([k, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.bfloat16))


@triton.jit
def gemm_dev_desc(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BM, BN])
    gemm_host_desc(a_desc, b_desc, c_desc, K, BM, BN, BK)  # (the same tile loop, descriptors made on the device)


def check(tag, fn, sig, consts, num_ctas, BM, BN, BK=64):
    consts = dict(consts, BM=BM, BN=BN, BK=BK)
    sig = dict(sig, BM="constexpr", BN="constexpr", BK="constexpr")
    attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if str(t).startswith("*")}
    try:
        ck = triton.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": 4, "num_ctas": num_ctas, "num_stages": 3})
    except Exception as e:
        print(f"== {tag}: FAIL {type(e).__name__}: {str(e)[-800:]}")
        return
    ptx = ck.asm["ptx"]
    loads = sorted({l.strip().split(" [")[0] for l in ptx.splitlines() if "cp.async.bulk.tensor" in l})
    print(f"== {tag}: OK  shared={ck.metadata.shared}  num_ctas={ck.metadata.num_ctas}")
    print("    wgmma:", "wgmma.mma_async" in ptx, " multicast::cluster:", "multicast::cluster" in ptx,
          " .reqnctapercluster:", ".reqnctapercluster" in ptx, " .explicitcluster:", ".explicitcluster" in ptx,
          " barrier.cluster:", "barrier.cluster" in ptx, " mapa:", "mapa" in ptx)
    for l in loads:
        print("     ", l)
    import re
    open(OUTDIR + f"/{re.sub('[^a-z0-9]+', '_', tag.lower())}.ptx", "w").write(ptx)
    open(OUTDIR + f"/{re.sub('[^a-z0-9]+', '_', tag.lower())}.ttgir", "w").write(ck.asm["ttgir"])


if __name__ == "__main__":
    hsig = {"a_desc": "tensordesc<bf16[128, 64]>", "b_desc": "tensordesc<bf16[64, 128]>",
            "c_desc": "tensordesc<bf16[128, 128]>", "K": "i32"}
    for n in (1, 2):
        check(f"triton host desc 128x128 num_ctas={n}", gemm_host_desc, hsig, {}, n, 128, 128)
    hsig2 = dict(hsig, b_desc="tensordesc<bf16[64, 256]>", c_desc="tensordesc<bf16[128, 256]>")
    check("triton host desc 128x256 num_ctas=2", gemm_host_desc, hsig2, {}, 2, 128, 256)
    hsig3 = dict(hsig, a_desc="tensordesc<bf16[256, 64]>", c_desc="tensordesc<bf16[256, 128]>")
    check("triton host desc 256x128 num_ctas=2", gemm_host_desc, hsig3, {}, 2, 256, 128)
    dsig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32"}
    for n in (1, 2):
        check(f"triton device desc 128x128 num_ctas={n}", gemm_dev_desc, dsig, {}, n, 128, 128)
