"""Probe: which split-K reduction of tl.dot partial sums is correct on the GPU (and how fast).

Variants of C = A @ B^T (bf16, fp32 partials) with K split over SPLIT programs per tile:
  atomic      fp32 atomics of the dot accumulator into a zeroed workspace, fence, barrier, an acq_rel counter
              per tile; the last program reads the sum, zeroes the workspace, stores C (what Kitsune emits)
  atomic_flat the same, the accumulator reshaped to 1-D before the atomics (another register layout)
  atomic_2k   atomics only; a second kernel reads the workspace and stores C (no counter)
  slices      each part stores its partial to its own fp32 slice; the last program (counter) sums them
"""

from __future__ import annotations

import sys

import torch
import triton
import triton.language as tl
from triton.testing import do_bench


@triton.jit
def _fence():
    tl.inline_asm_elementwise("fence.acq_rel.gpu; mov.u32 $0, 0;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def split_dot(a, b, c, ws, cnt, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, BM: tl.constexpr,
              BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr, VARIANT: tl.constexpr):
    w = tl.program_id(0)
    t = w // SPLIT
    ks = w % SPLIT
    gn = N // BN
    pm = t // gn
    pn = t % gn
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    per = K // SPLIT
    acc = tl.zeros([BM, BN], tl.float32)
    for k in range(0, per, BK):
        x = tl.load(a + rm[:, None] * K + (ks * per + k + rk)[None, :])
        y = tl.load(b + rn[:, None] * K + (ks * per + k + rk)[None, :])
        acc = tl.dot(x, tl.trans(y), acc)
    off = rm[:, None] * N + rn[None, :]
    if VARIANT == 0 or VARIANT == 2:
        tl.atomic_add(ws + off, acc, sem="relaxed")
    elif VARIANT == 1:
        tl.atomic_add(tl.reshape(ws + off, [BM * BN]), tl.reshape(acc, [BM * BN]), sem="relaxed")
    else:
        tl.store(ws + ks * M * N + off, acc)
    if VARIANT != 2:
        _fence()
        tl.debug_barrier()
        arrived = tl.atomic_add(cnt + t, 1, sem="acq_rel", scope="gpu")
        if arrived % SPLIT == SPLIT - 1:
            _fence()
            if VARIANT == 3:
                tot = tl.zeros([BM, BN], tl.float32)
                for s in range(0, SPLIT):
                    tot += tl.load(ws + s * M * N + off, cache_modifier=".cg")
            else:
                tot = tl.load(ws + off, cache_modifier=".cg")
                tl.store(ws + off, tl.zeros([BM, BN], tl.float32))
            tl.store(c + off, tot.to(tl.bfloat16))


@triton.jit
def finish(c, ws, M: tl.constexpr, N: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(ws + i)
    tl.store(ws + i, tl.zeros([BLOCK], tl.float32))
    tl.store(c + i, v.to(tl.bfloat16))


def main():
    rows = []
    for (M, N, K) in ((256, 6144, 12288), (2048, 256, 512)):
        for BM, BN, warps in ((128, 128, 8), (64, 64, 4)):
            for SPLIT in (2, 4):
                for VARIANT, name in enumerate(("atomic", "atomic_flat", "atomic_2k", "slices")):
                    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
                    b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5
                    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
                    ws = torch.zeros((SPLIT if VARIANT == 3 else 1) * M * N, device="cuda", dtype=torch.float32)
                    cnt = torch.zeros(M * N // (BM * BN), device="cuda", dtype=torch.int32)
                    grid = (M // BM * (N // BN) * SPLIT,)

                    def call():
                        split_dot[grid](a, b, c, ws, cnt, M, N, K, BM, BN, 64, SPLIT, VARIANT, num_warps=warps,
                                        num_stages=3)
                        if VARIANT == 2:
                            finish[(M * N // 1024,)](c, ws, M, N, 1024)
                    errs = []
                    for rep in range(3):
                        a.copy_(torch.randn_like(a))
                        c.fill_(float("nan"))
                        call()
                        ref = (a.float() @ b.float().T)
                        errs.append(float((c.float() - ref).norm() / ref.norm()))
                    ms = do_bench(call, warmup=10, rep=50, return_mode="median")
                    rows.append((M, N, K, BM, BN, warps, SPLIT, name, max(errs), ms))
                    print(f"{M}x{N}x{K} tile {BM}x{BN} w{warps} split {SPLIT} {name:<12} err {max(errs):.2e} "
                          f"{ms * 1e3:8.1f} us", flush=True)
    bad = [r for r in rows if not r[8] < 2e-2]
    print(f"{len(bad)} wrong of {len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
