"""Probe: the gemv structure for Llama decode's gate/up projection (M = 1), what reaches HBM bandwidth.

    python bench/kernels/gemv_probe.py [--out FILE.json]

y[n] = silu(x . Wg[n]) * (x . Wu[n]), W = [Wg; Wu] of [2 * N, K] bf16 (N = 8192, K = 2048: 67 MB), x the
RMS-normed row (given here). Kitsune emits (bulk-sync, llama_decode_b1) one program per BN columns with two
K loops one after the other (gate, then up), FMA blocks [BN, BK], no software pipelining (sm_90 AOT: no
cp.async in a loop without tl.dot): 27.9 us = 2.4 TB/s. Variants:
  seq    two loops (what Kitsune emits)
  fused  one loop, the gate and up blocks loaded in the same iteration (twice the bytes in flight)
  pre    fused + the next iteration's blocks loaded before this one's FMAs (register double buffering)
  whole  no loop: the program's [BN, K] blocks loaded at once (BN small)
Peer: torch (cuBLAS gemv) of x @ W^T + the silu * up, both in one CUDA graph. Checked against fp32 torch.
"""

from __future__ import annotations

import json
import sys

import triton
import triton.language as tl


@triton.jit
def gemv_seq(x, w, y, N: tl.constexpr, K: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    rn = pid * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BN, BK], tl.float32)
    for k in range(0, K, BK):
        xv = tl.load(x + k + rk).to(tl.float32)
        acc += xv[None, :] * tl.load(w + rn[:, None] * K + k + rk[None, :]).to(tl.float32)
    g = tl.sum(acc, 1)
    acc2 = tl.zeros([BN, BK], tl.float32)
    for k in range(0, K, BK):
        xv = tl.load(x + k + rk).to(tl.float32)
        acc2 += xv[None, :] * tl.load(w + (N + rn[:, None]) * K + k + rk[None, :]).to(tl.float32)
    u = tl.sum(acc2, 1)
    tl.store(y + rn, (g * tl.sigmoid(g) * u).to(tl.bfloat16))


@triton.jit
def gemv_fused(x, w, y, N: tl.constexpr, K: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    rn = pid * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BN, BK], tl.float32)
    acc2 = tl.zeros([BN, BK], tl.float32)
    for k in range(0, K, BK):
        xv = tl.load(x + k + rk).to(tl.float32)
        wg = tl.load(w + rn[:, None] * K + k + rk[None, :])
        wu = tl.load(w + (N + rn[:, None]) * K + k + rk[None, :])
        acc += xv[None, :] * wg.to(tl.float32)
        acc2 += xv[None, :] * wu.to(tl.float32)
    g = tl.sum(acc, 1)
    u = tl.sum(acc2, 1)
    tl.store(y + rn, (g * tl.sigmoid(g) * u).to(tl.bfloat16))


@triton.jit
def gemv_pre(x, w, y, N: tl.constexpr, K: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    rn = pid * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BN, BK], tl.float32)
    acc2 = tl.zeros([BN, BK], tl.float32)
    wg = tl.load(w + rn[:, None] * K + rk[None, :])
    wu = tl.load(w + (N + rn[:, None]) * K + rk[None, :])
    for k in range(0, K, BK):
        xv = tl.load(x + k + rk).to(tl.float32)
        kn = (k + BK) % K  # the last iteration reloads block 0 (in bounds, unused)
        wg2 = tl.load(w + rn[:, None] * K + kn + rk[None, :])
        wu2 = tl.load(w + (N + rn[:, None]) * K + kn + rk[None, :])
        acc += xv[None, :] * wg.to(tl.float32)
        acc2 += xv[None, :] * wu.to(tl.float32)
        wg = wg2
        wu = wu2
    g = tl.sum(acc, 1)
    u = tl.sum(acc2, 1)
    tl.store(y + rn, (g * tl.sigmoid(g) * u).to(tl.bfloat16))


@triton.jit
def gemv_whole(x, w, y, N: tl.constexpr, K: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    rn = pid * BN + tl.arange(0, BN)
    rk = tl.arange(0, K)
    xv = tl.load(x + rk).to(tl.float32)
    wg = tl.load(w + rn[:, None] * K + rk[None, :])
    wu = tl.load(w + (N + rn[:, None]) * K + rk[None, :])
    g = tl.sum(xv[None, :] * wg.to(tl.float32), 1)
    u = tl.sum(xv[None, :] * wu.to(tl.float32), 1)
    tl.store(y + rn, (g * tl.sigmoid(g) * u).to(tl.bfloat16))


KERNELS = {"seq": gemv_seq, "fused": gemv_fused, "pre": gemv_pre, "whole": gemv_whole}
# (kind, BN, BK, warps)
VARIANTS = [("seq", 32, 256, 4), ("seq", 16, 256, 4), ("seq", 16, 512, 4), ("seq", 8, 512, 4),
            ("fused", 32, 256, 4), ("fused", 16, 256, 4), ("fused", 16, 512, 4), ("fused", 8, 512, 4),
            ("fused", 8, 1024, 4), ("fused", 16, 512, 8),
            ("pre", 16, 256, 4), ("pre", 8, 512, 4), ("pre", 16, 512, 8), ("pre", 32, 256, 8),
            ("whole", 4, 0, 4), ("whole", 8, 0, 8), ("whole", 4, 0, 8)]


def main() -> None:
    import torch
    from graphtime import graph_us

    torch.manual_seed(0)
    N, K = 8192, 2048
    x = torch.randn(K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(2 * N, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5
    gu = w.float() @ x.float()
    ref = torch.nn.functional.silu(gu[:N]) * gu[N:]
    nbytes = w.numel() * 2

    def peer():
        h = w @ x
        return torch.nn.functional.silu(h[:N]) * h[N:]
    us = graph_us(peer)
    print(f"gate_up N={N} K={K} ({nbytes / 1e6:.0f} MB): torch {us:.1f} us ({nbytes / us / 1e6:.2f} TB/s)", flush=True)
    rows = [{"variant": "torch", "us": us}]
    for kind, BN, BK, warps in VARIANTS:
        y = torch.empty(N, device="cuda", dtype=torch.bfloat16)
        fn = KERNELS[kind]

        def step():
            fn[(N // BN,)](x, w, y, N, K, BN, BK, num_warps=warps)
        label = f"{kind} BN{BN} BK{BK or K} w{warps} p{N // BN}"
        try:
            step()
            torch.cuda.synchronize()
            err = ((y.float() - ref).abs().max() / ref.abs().max()).item()
            t = graph_us(step)
        except Exception as e:  # noqa: BLE001
            print(f"  {label}: {type(e).__name__}: {str(e)[:160]}", flush=True)
            continue
        print(f"  {label:28s} {t:6.1f} us  {nbytes / t / 1e6:5.2f} TB/s  x torch {us / t:4.2f}  err {err:.1e}", flush=True)
        rows.append({"variant": label, "us": t, "tbs": nbytes / t / 1e6, "err": err})
    if "--out" in sys.argv:
        with open(sys.argv[sys.argv.index("--out") + 1], "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
