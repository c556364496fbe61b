"""Probe: skinny products y[M, N] = x[M, K] @ W[N, K]^T at M = 8 (llama_decode_b8's projections), which operand
feeds the tensor cores and which form keeps HBM busy.

    python bench/kernels/skinny_probe.py [--shapes qkv,o,gate_up,down] [--m 8] [--out FILE.json] [--aot]

The gemv template's tensor-core form (``DOT``) pads x to 16 rows and makes it the A operand: acc[16, BN] =
dot(x, trans(W chunk)), which Triton lowers to mma.sync m16n8k16 (wgmma needs 64 rows a warpgroup). Session 25's
ncu of b8's gate / up: one 4-warp CTA an SM, half the stall cycles on the cp.async'd chunks, 0.5-0.9x cuBLAS.
Variants, each with K split over SPLIT programs (fp32 atomics into y):

  xa     x as A (what Kitsune emits): acc [16, BN]
  swap   W as A, x^T as B: acc [BN, 16] = dot(W chunk, trans(x)): wgmma m64n16 with BN >= 64 on 4 warps
  fma    no tensor cores: acc [M, BN, BK] of FMAs, summed over BK once after the loop

Peer: torch (cuBLAS) x @ W^T. Every variant is timed in a CUDA graph of 20 calls that rotate over copies of W
(more than 100 MB in all: no warm-L2 weights), checked against fp32 torch first.
"""

from __future__ import annotations

import json
import sys

import triton
import triton.language as tl

SHAPES = {"qkv": (3072, 2048), "o": (2048, 2048), "gate_up": (16384, 2048), "down": (2048, 8192)}


@triton.jit
def _out(y, acc, rm, rn, M, N, SPLIT: tl.constexpr):
    ptr = y + rm[:, None] * N + rn[None, :]
    if SPLIT == 1:
        tl.store(ptr, acc, mask=rm[:, None] < M)
    else:
        tl.atomic_add(ptr, acc, mask=rm[:, None] < M, sem="relaxed")


@triton.jit
def _skinny_dot(x, w, y, M, N, K, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr, STAGES: tl.constexpr,
                SWAP: tl.constexpr):
    """The padded rows on the tensor cores: x first (acc[16, BN] = x W^T) or, with SWAP, weight first
    (acc[BN, 16] = W x^T, transposed once at the end)."""
    pn = tl.program_id(0)
    pk = tl.program_id(1)
    KS = K // SPLIT
    rm = tl.arange(0, 16)
    rmc = tl.minimum(rm, M - 1)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    if SWAP:
        acc = tl.zeros([BN, 16], tl.float32)
    else:
        acc = tl.zeros([16, BN], tl.float32)
    for k in tl.range(pk * KS, pk * KS + KS, BK, num_stages=STAGES):
        if SWAP:
            b = tl.load(w + rn[:, None] * K + k + rk[None, :])
            a = tl.load(x + rmc[:, None] * K + k + rk[None, :])
            acc = tl.dot(b, tl.trans(a), acc)
        else:
            a = tl.load(x + rmc[:, None] * K + k + rk[None, :])
            b = tl.load(w + rn[:, None] * K + k + rk[None, :])
            acc = tl.dot(a, tl.trans(b), acc)
    if SWAP:
        _out(y, tl.trans(acc), rm, rn, M, N, SPLIT)
    else:
        _out(y, acc, rm, rn, M, N, SPLIT)


@triton.jit
def skinny_xa(x, w, y, M, N, K, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr,
              STAGES: tl.constexpr, MP: tl.constexpr):
    _skinny_dot(x, w, y, M, N, K, BN, BK, SPLIT, STAGES, False)


@triton.jit
def skinny_swap(x, w, y, M, N, K, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr,
                STAGES: tl.constexpr, MP: tl.constexpr):
    _skinny_dot(x, w, y, M, N, K, BN, BK, SPLIT, STAGES, True)


@triton.jit
def skinny_fma(x, w, y, M, N, K, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr,
               STAGES: tl.constexpr, MP: tl.constexpr):
    pn = tl.program_id(0)
    pk = tl.program_id(1)
    KS = K // SPLIT
    rm = tl.arange(0, MP)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([MP, BN, BK], tl.float32)
    for k in range(pk * KS, pk * KS + KS, BK):
        a = tl.load(x + tl.minimum(rm, M - 1)[:, None] * K + k + rk[None, :]).to(tl.float32)
        b = tl.load(w + rn[:, None] * K + k + rk[None, :]).to(tl.float32)
        acc += a[:, None, :] * b[None, :, :]
    _out(y, tl.sum(acc, 2), rm, rn, M, N, SPLIT)


KERNELS = {"xa": skinny_xa, "swap": skinny_swap, "fma": skinny_fma}


def _mma_kind(ptx: str) -> str:
    """The product instruction a kernel's PTX uses."""
    return "wgmma" if "wgmma" in ptx else ("mma.sync" if "mma.sync" in ptx else "fma")


def _mp(M: int) -> int:
    return 1 << max(0, (M - 1).bit_length())


def variants(N: int, K: int):
    """(kind, BN, BK, SPLIT, STAGES, warps)."""
    out = []
    for BN, BK in ((32, 512), (64, 256), (64, 512)):
        for split in (1, 4):
            out.append(("xa", BN, BK, split, 3, 4))
    for BN in (64, 128):
        for BK in (64, 128, 256):
            for split in (1, 2, 4):
                for stages in ((6,) if BK == 64 else (4,) if BK == 128 else (3,)):
                    out.append(("swap", BN, BK, split, stages, 4))
    out.append(("swap", 64, 128, 2, 6, 4))
    out.append(("swap", 128, 128, 2, 4, 8))
    out.append(("swap", 256, 64, 1, 6, 8))
    for BN, BK in ((4, 128), (4, 256), (8, 128)):
        for split in (1, 2):
            out.append(("fma", BN, BK, split, 1, 4))
    return [v for v in out if K % (v[3] * v[2]) == 0 and N % v[1] == 0]


def aot(names, M: int) -> None:
    """sm_90 compile of every variant (no GPU): which mma, registers, spills, shared memory."""
    import contextlib
    import io
    import os

    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    from kitsune.codegen.aot import parse_ptxas_log

    for name in names:
        N, K = SHAPES[name]
        print(name, flush=True)
        for kind, BN, BK, split, stages, warps in variants(N, K):
            sig = {"x": "*bf16", "w": "*bf16", "y": "*fp32", "M": "i32", "N": "i32", "K": "i32",
                   "BN": "constexpr", "BK": "constexpr", "SPLIT": "constexpr", "STAGES": "constexpr", "MP": "constexpr"}
            cx = {"BN": BN, "BK": BK, "SPLIT": split, "STAGES": stages, "MP": _mp(M)}
            aligned = {(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 4, 5)}  # as the JIT specialises them
            src = ASTSource(KERNELS[kind], sig, cx, aligned)
            buf = io.StringIO()
            knobs.nvidia.dump_ptxas_log = True
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                ck = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
            log = parse_ptxas_log(buf.getvalue())
            mma = _mma_kind(ck.asm["ptx"])
            print(f"  {kind} BN{BN} BK{BK} S{split} st{stages} w{warps}: {mma:8s} {log} "
                  f"smem {ck.metadata.shared}", flush=True)


def main() -> None:
    args = sys.argv[1:]
    names = args[args.index("--shapes") + 1].split(",") if "--shapes" in args else list(SHAPES)
    M = int(args[args.index("--m") + 1]) if "--m" in args else 8
    if "--aot" in args:
        return aot(names, M)
    import torch
    from graphtime import graph_us

    torch.manual_seed(0)
    rows = []
    for name in names:
        N, K = SHAPES[name]
        nbytes = N * K * 2
        copies = max(1, -(-120_000_000 // nbytes))
        ws = [torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5 for _ in range(copies)]
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        ref = x.float() @ ws[0].float().T
        cnt = [0]

        def peer():
            w = ws[cnt[0] % copies]
            cnt[0] += 1
            return x @ w.T
        us = graph_us(peer)
        print(f"{name} M={M} N={N} K={K} ({nbytes / 1e6:.1f} MB x {copies}): torch {us:.1f} us "
              f"({nbytes / us / 1e6:.2f} TB/s)", flush=True)
        rows.append({"shape": name, "M": M, "N": N, "K": K, "variant": "torch", "us": us})
        for kind, BN, BK, split, stages, warps in variants(N, K):
            fn = KERNELS[kind]
            y = torch.zeros(M, N, device="cuda", dtype=torch.float32)
            grid = (N // BN, split)
            label = f"{kind} BN{BN} BK{BK} S{split} st{stages} w{warps} p{grid[0] * split}"

            def step(y=y, fn=fn, grid=grid, BN=BN, BK=BK, split=split, stages=stages, warps=warps):
                w = ws[cnt[0] % copies]
                cnt[0] += 1
                return fn[grid](x, w, y, M, N, K, BN, BK, split, stages, _mp(M), num_warps=warps)
            try:
                cnt[0] = 0
                ck = step()
                torch.cuda.synchronize()
                err = ((y - ref).abs().max() / ref.abs().max()).item()
                mma = _mma_kind(ck.asm.get("ptx", ""))
                t = graph_us(step)
            except Exception as e:  # noqa: BLE001
                print(f"  {label}: {type(e).__name__}: {str(e)[:200]}", flush=True)
                continue
            print(f"  {label:38s} {t:6.1f} us  {nbytes / t / 1e6:5.2f} TB/s  x torch {us / t:4.2f}  {mma:8s} "
                  f"regs {ck.n_regs:3d} spill {ck.n_spills}  err {err:.1e}", flush=True)
            rows.append({"shape": name, "M": M, "N": N, "K": K, "variant": label, "us": t,
                         "tbs": nbytes / t / 1e6, "x_torch": us / t, "mma": mma, "regs": ck.n_regs,
                         "spills": ck.n_spills, "err": err})
        del ws
        torch.cuda.empty_cache()
    if "--out" in args:
        with open(args[args.index("--out") + 1], "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "triton": triton.__version__, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
