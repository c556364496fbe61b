"""Probe: hand-written Triton kernels of the shapes the gemm / gemv templates will emit, timed next to
cuBLAS (torch) on the suite's shapes, to choose the template structure and default configs before
writing the generator.  GPU only; one table per family.

    python3 bench/kernels/probe.py [--only gemm|gemv] [--quick] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math
import sys

import torch
import triton
import triton.language as tl
from triton.testing import do_bench


# ---------------------------------------------------------------- gemm (y = act(x @ w.T + b))

@triton.jit
def _gelu(x):
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))


@triton.jit
def _tile_of(t, num_m, num_n, GROUP_M: tl.constexpr):
    group = GROUP_M * num_n
    first = (t // group) * GROUP_M
    gsz = tl.minimum(num_m - first, GROUP_M)
    pm = first + (t % group) % gsz
    pn = (t % group) // gsz
    return pm, pn


@triton.jit
def _epilogue(acc, bias, y, ws, cnt, pm, pn, M, N, BM: tl.constexpr, BN: tl.constexpr, ACT: tl.constexpr,
              SPLIT: tl.constexpr, ntile):
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if SPLIT > 1:
        wsp = ws + rm[:, None] * N + rn[None, :]
        tl.atomic_add(wsp, acc, mask=mask, sem="relaxed")
        tl.debug_barrier()
        c = tl.atomic_add(cnt + ntile, 1, sem="acq_rel", scope="gpu")
        if c % SPLIT == SPLIT - 1:
            acc = tl.load(wsp, mask=mask, other=0.0, cache_modifier=".cg")
            tl.store(wsp, tl.zeros([BM, BN], tl.float32), mask=mask)
            acc = acc + tl.load(bias + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
            if ACT == 1:
                acc = _gelu(acc)
            if ACT == 2:
                acc = tl.maximum(acc, 0.0)
            tl.store(y + rm[:, None] * N + rn[None, :], acc.to(y.dtype.element_ty), mask=mask)
    else:
        acc = acc + tl.load(bias + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
        if ACT == 1:
            acc = _gelu(acc)
        if ACT == 2:
            acc = tl.maximum(acc, 0.0)
        tl.store(y + rm[:, None] * N + rn[None, :], acc.to(y.dtype.element_ty), mask=mask)


@triton.jit
def gemm_ptr(x, w, bias, y, ws, cnt, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
             GROUP_M: tl.constexpr, SPLIT: tl.constexpr, ACT: tl.constexpr, NPROG: tl.constexpr):
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    ntiles = num_m * num_n * SPLIT
    kper = tl.cdiv(tl.cdiv(K, BK), SPLIT) * BK
    for w_ in range(tl.program_id(0), ntiles, NPROG):
        t = w_ // SPLIT
        s = w_ % SPLIT
        pm, pn = _tile_of(t, num_m, num_n, GROUP_M)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rm = tl.where(rm < M, rm, 0)
        rn = tl.where(rn < N, rn, 0)
        rk = tl.arange(0, BK)
        k0 = s * kper
        k1 = tl.minimum(k0 + kper, K)
        acc = tl.zeros([BM, BN], tl.float32)
        for k in range(k0, k1, BK):
            a = tl.load(x + rm[:, None] * K + (k + rk)[None, :], mask=(k + rk)[None, :] < k1, other=0.0)
            b = tl.load(w + rn[None, :] * K + (k + rk)[:, None], mask=(k + rk)[:, None] < k1, other=0.0)
            acc = tl.dot(a, b, acc)
        _epilogue(acc, bias, y, ws, cnt, pm, pn, M, N, BM, BN, ACT, SPLIT, t)


@triton.jit
def gemm_tma(x, w, bias, y, ws, cnt, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
             GROUP_M: tl.constexpr, SPLIT: tl.constexpr, ACT: tl.constexpr, NPROG: tl.constexpr):
    xd = tl.make_tensor_descriptor(x, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    wd = tl.make_tensor_descriptor(w, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    ntiles = num_m * num_n * SPLIT
    ksteps = tl.cdiv(tl.cdiv(K, BK), SPLIT)
    for w_ in tl.range(tl.program_id(0), ntiles, NPROG, flatten=SPLIT == 1):
        t = w_ // SPLIT
        s = w_ % SPLIT
        pm, pn = _tile_of(t, num_m, num_n, GROUP_M)
        acc = tl.zeros([BM, BN], tl.float32)
        for ki in range(0, ksteps):
            k = (s * ksteps + ki) * BK
            a = xd.load([pm * BM, k])
            b = wd.load([pn * BN, k])
            acc = tl.dot(a, b.T, acc)
        _epilogue(acc, bias, y, ws, cnt, pm, pn, M, N, BM, BN, ACT, SPLIT, t)


# ---------------------------------------------------------------- gemv (M <= 16)

@triton.jit
def gemv(x, w, bias, y, ws, cnt, M: tl.constexpr, N, K, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr,
         HAS_BIAS: tl.constexpr):
    pn = tl.program_id(0)
    s = tl.program_id(1)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    nmask = rn < N
    rnc = tl.where(nmask, rn, 0)
    kper = tl.cdiv(tl.cdiv(K, BK), SPLIT) * BK
    k0 = s * kper
    k1 = tl.minimum(k0 + kper, K)
    for m in tl.static_range(M):
        acc = tl.zeros([BN, BK], tl.float32)
        for k in range(k0, k1, BK):
            kk = k + rk
            wv = tl.load(w + rnc[:, None] * K + kk[None, :], mask=kk[None, :] < k1, other=0.0)
            xv = tl.load(x + m * K + kk, mask=kk < k1, other=0.0)
            acc += wv.to(tl.float32) * xv.to(tl.float32)[None, :]
        r = tl.sum(acc, axis=1)
        if SPLIT > 1:
            tl.atomic_add(ws + m * N + rn, r, mask=nmask, sem="relaxed")
        else:
            if HAS_BIAS:
                r += tl.load(bias + rn, mask=nmask, other=0.0).to(tl.float32)
            tl.store(y + m * N + rn, r.to(y.dtype.element_ty), mask=nmask)
    if SPLIT > 1:
        tl.debug_barrier()
        c = tl.atomic_add(cnt + pn, 1, sem="acq_rel", scope="gpu")
        if c % SPLIT == SPLIT - 1:
            for m in tl.static_range(M):
                r = tl.load(ws + m * N + rn, mask=nmask, other=0.0, cache_modifier=".cg")
                tl.store(ws + m * N + rn, tl.zeros([BN], tl.float32), mask=nmask)
                if HAS_BIAS:
                    r += tl.load(bias + rn, mask=nmask, other=0.0).to(tl.float32)
                tl.store(y + m * N + rn, r.to(y.dtype.element_ty), mask=nmask)


@triton.jit
def gemv_dot(x, w, bias, y, ws, cnt, M: tl.constexpr, N, K, BN: tl.constexpr, BK: tl.constexpr,
             SPLIT: tl.constexpr, HAS_BIAS: tl.constexpr):
    # M padded to 16 rows: mma.sync with the weight tile as B
    pn = tl.program_id(0)
    s = tl.program_id(1)
    rm = tl.arange(0, 16)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    nmask = rn < N
    rnc = tl.where(nmask, rn, 0)
    kper = tl.cdiv(tl.cdiv(K, BK), SPLIT) * BK
    k0 = s * kper
    k1 = tl.minimum(k0 + kper, K)
    acc = tl.zeros([16, BN], tl.float32)
    for k in range(k0, k1, BK):
        kk = k + rk
        wv = tl.load(w + rnc[None, :] * K + kk[:, None], mask=kk[:, None] < k1, other=0.0)
        xv = tl.load(x + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < k1), other=0.0)
        acc = tl.dot(xv, wv, acc)
    mask = (rm[:, None] < M) & nmask[None, :]
    if SPLIT > 1:
        tl.atomic_add(ws + rm[:, None] * N + rn[None, :], acc, mask=mask, sem="relaxed")
        tl.debug_barrier()
        c = tl.atomic_add(cnt + pn, 1, sem="acq_rel", scope="gpu")
        if c % SPLIT == SPLIT - 1:
            acc = tl.load(ws + rm[:, None] * N + rn[None, :], mask=mask, other=0.0, cache_modifier=".cg")
            tl.store(ws + rm[:, None] * N + rn[None, :], tl.zeros([16, BN], tl.float32), mask=mask)
            if HAS_BIAS:
                acc += tl.load(bias + rn, mask=nmask, other=0.0).to(tl.float32)[None, :]
            tl.store(y + rm[:, None] * N + rn[None, :], acc.to(y.dtype.element_ty), mask=mask)
    else:
        if HAS_BIAS:
            acc += tl.load(bias + rn, mask=nmask, other=0.0).to(tl.float32)[None, :]
        tl.store(y + rm[:, None] * N + rn[None, :], acc.to(y.dtype.element_ty), mask=mask)


# ---------------------------------------------------------------- harness

def rel(a, b):
    return float((a.float() - b.float()).norm() / b.float().norm().clamp_min(1e-30))


def rotating(make, nbytes_each, min_total=256 << 20):
    n = max(1, min(16, math.ceil(min_total / max(nbytes_each, 1))))
    return [make() for _ in range(n)]


def bench_rot(fn, sets):
    i = [0]

    def call():
        fn(*sets[i[0] % len(sets)])
        i[0] += 1
    return do_bench(call, warmup=25, rep=100, return_mode="median")


def run_gemm(quick, rows):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = [("T1024.fc1", 1024, 6144, 12288, 1), ("T1024.fc2", 1024, 12288, 6144, 0),
              ("T256.fc1", 256, 6144, 12288, 1), ("T256.fc2", 256, 12288, 6144, 0),
              ("nerf", 65536, 256, 256, 2), ("dlrm.bot", 2048, 512, 13, 2), ("mgn.edge", 60000, 128, 384, 2)]
    cfgs = [  # (kind, BM, BN, BK, warps, stages, GROUP_M, SPLIT, persistent)
        ("ptr", 128, 128, 64, 8, 3, 8, 1, False), ("ptr", 128, 256, 64, 8, 3, 8, 1, False),
        ("ptr", 128, 256, 64, 8, 4, 8, 1, False), ("ptr", 128, 128, 64, 4, 4, 8, 1, False),
        ("ptr", 64, 128, 64, 4, 4, 8, 1, False),
        ("tma", 128, 128, 64, 8, 3, 8, 1, False), ("tma", 128, 256, 64, 8, 3, 8, 1, False),
        ("tma", 128, 256, 64, 8, 4, 8, 1, False), ("tma", 128, 128, 64, 4, 4, 8, 1, False),
        ("tma", 128, 256, 64, 8, 3, 8, 1, True), ("tma", 128, 128, 64, 8, 4, 8, 1, True),
        ("ptr", 128, 128, 64, 8, 4, 8, 2, False), ("tma", 128, 128, 64, 8, 4, 8, 2, False),
        ("tma", 128, 256, 64, 8, 3, 8, 3, False), ("ptr", 128, 128, 64, 8, 4, 8, 3, False),
    ]
    if quick:
        cfgs = cfgs[:3] + cfgs[5:8]
    for name, M, N, K, act in shapes:
        dev = "cuda"
        per = (M * K + N * K) * 2
        sets = rotating(lambda: (torch.randn(M, K, device=dev, dtype=torch.bfloat16),
                                 torch.randn(N, K, device=dev, dtype=torch.bfloat16) / math.sqrt(K),
                                 torch.randn(N, device=dev, dtype=torch.bfloat16)), per)
        x, w, b = sets[0]
        pre = torch.nn.functional.linear(x, w, b).float()
        ref = {0: pre, 1: torch.nn.functional.gelu(pre), 2: torch.relu(pre)}[act]
        t_cublas = bench_rot(lambda x, w, b: torch.nn.functional.linear(x, w, b), sets)
        flops = 2 * M * N * K
        rows.append(dict(family="gemm", shape=name, M=M, N=N, K=K, variant="cublas(linear, no act)", ms=t_cublas,
                         tflops=flops / t_cublas * 1e-9, ratio=1.0, err=0.0))
        y = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
        ws = torch.zeros(M, N, device=dev, dtype=torch.float32)
        cnt = torch.zeros(1 << 16, device=dev, dtype=torch.int32)
        for kind, BM, BN, BK, warps, stages, G, S, pers in cfgs:
            if K < BK * S:
                continue
            if BN > N or (kind == "tma" and K % 8):
                continue
            ntiles = triton.cdiv(M, BM) * triton.cdiv(N, BN) * S
            nprog = min(ntiles, sms) if pers else ntiles
            fn = gemm_tma if kind == "tma" else gemm_ptr
            label = f"{kind} {BM}x{BN}x{BK} w{warps} s{stages} split{S}{' pers' if pers else ''}"

            def call(x, w, b):
                fn[(nprog,)](x, w, b, y, ws, cnt, M, N, K, BM=BM, BN=BN, BK=BK, GROUP_M=G, SPLIT=S, ACT=act,
                             NPROG=nprog, num_warps=warps, num_stages=stages)
            try:
                y.fill_(float("nan"))
                call(x, w, b)
                torch.cuda.synchronize()
                err = rel(y, ref)
                ms = bench_rot(call, sets)
                call(x, w, b)
                torch.cuda.synchronize()
                err = max(err, rel(y, ref))
            except Exception as e:  # noqa: BLE001
                rows.append(dict(family="gemm", shape=name, variant=label, error=str(e).splitlines()[0][:120]))
                continue
            rows.append(dict(family="gemm", shape=name, M=M, N=N, K=K, variant=label, ms=ms,
                             tflops=flops / ms * 1e-9, ratio=t_cublas / ms, err=err))
        del sets


def run_gemv(quick, rows):
    shapes = [("qkv", 3072, 2048), ("o", 2048, 2048), ("gate_up", 16384, 2048), ("down", 2048, 8192)]
    cfgs = [(k, bn, bk, s, w) for k in ("fma", "dot") for bn in (16, 32, 64) for bk in (128, 256, 512)
            for s in (1, 2, 4) for w in (4,)]
    if quick:
        cfgs = [c for c in cfgs if c[2] == 256]
    for M in (1, 8):
        for name, N, K in shapes:
            dev = "cuda"
            per = N * K * 2
            sets = rotating(lambda: (torch.randn(M, K, device=dev, dtype=torch.bfloat16),
                                     torch.randn(N, K, device=dev, dtype=torch.bfloat16) / math.sqrt(K),
                                     torch.randn(N, device=dev, dtype=torch.bfloat16)), per)
            x, w, b = sets[0]
            ref = torch.nn.functional.linear(x, w, b).float()
            nbytes = N * K * 2 + M * K * 2 + M * N * 2
            t_cublas = bench_rot(lambda x, w, b: torch.nn.functional.linear(x, w, b), sets)
            rows.append(dict(family="gemv", shape=f"M{M}.{name}", M=M, N=N, K=K, variant="cublas(linear)",
                             ms=t_cublas, gbs=nbytes / t_cublas * 1e-6, ratio=1.0, err=0.0))
            y = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
            ws = torch.zeros(M, N, device=dev, dtype=torch.float32)
            cnt = torch.zeros(1 << 16, device=dev, dtype=torch.int32)
            best = None
            for kind, BN, BK, S, warps in cfgs:
                if K < BK * S:
                    continue
                fn = gemv_dot if kind == "dot" else gemv
                grid = (triton.cdiv(N, BN), S)
                label = f"{kind} BN{BN} BK{BK} split{S} w{warps}"

                def call(x, w, b):
                    fn[grid](x, w, b, y, ws, cnt, M, N, K, BN=BN, BK=BK, SPLIT=S, HAS_BIAS=True, num_warps=warps)
                try:
                    y.fill_(float("nan"))
                    call(x, w, b)
                    torch.cuda.synchronize()
                    err = rel(y, ref)
                    ms = bench_rot(call, sets)
                    call(x, w, b)
                    torch.cuda.synchronize()
                    err = max(err, rel(y, ref))
                except Exception as e:  # noqa: BLE001
                    rows.append(dict(family="gemv", shape=f"M{M}.{name}", variant=label,
                                     error=str(e).splitlines()[0][:120]))
                    continue
                r = dict(family="gemv", shape=f"M{M}.{name}", M=M, N=N, K=K, variant=label, ms=ms,
                         gbs=nbytes / ms * 1e-6, ratio=t_cublas / ms, err=err)
                rows.append(r)
            del sets


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default="")
    a = ap.parse_args()

    def alloc(size, alignment, stream):
        return torch.empty(size, device="cuda", dtype=torch.int8)
    triton.set_allocator(alloc)
    torch.manual_seed(0)
    rows: list[dict] = []
    try:
        if a.only in ("", "gemm"):
            run_gemm(a.quick, rows)
        if a.only in ("", "gemv"):
            run_gemv(a.quick, rows)
    finally:
        if a.json:
            with open(a.json, "w") as f:
                json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                               triton=triton.__version__, rows=rows), f, indent=1)
        # short table: per shape the peer and the 3 best variants
        by: dict[str, list] = {}
        for r in rows:
            by.setdefault((r["family"], r["shape"]), []).append(r)
        for (fam, shp), rs in by.items():
            ok = [r for r in rs if "ms" in r and r.get("err", 1) < 2e-2]
            bad = [r for r in rs if "error" in r or r.get("err", 0) >= 2e-2]
            ok.sort(key=lambda r: r["ms"])
            peer = next((r for r in rs if r["variant"].startswith("cublas")), None)
            print(f"{fam} {shp}: cublas {peer['ms'] * 1e3:.1f} us" if peer else f"{fam} {shp}")
            for r in [r for r in ok if not r["variant"].startswith("cublas")][:3]:
                perf = f"{r['tflops']:.0f} TF/s" if fam == "gemm" else f"{r['gbs']:.0f} GB/s"
                print(f"   {r['variant']:<36} {r['ms'] * 1e3:8.1f} us  {perf}  x{r['ratio']:.2f} err {r['err']:.1e}")
            for r in bad[:2]:
                print(f"   BAD {r['variant']}: {r.get('error', r.get('err'))}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
