"""Probe: stream-K with ONE flat, pipelined loop (NOTES §8), against data-parallel tiles and cuBLAS.

    python bench/kernels/streamk_flat_probe.py [--out FILE.json]
    python bench/kernels/streamk_flat_probe.py --aot          # no GPU: sm_90 compile, pipelining check

The first stream-K probe (``streamk_probe.py``) ran each segment's K loop inside a ``while`` over segments:
run-time bounds, not software-pipelined, 130-150 us. Here each of NPROG persistent programs runs
``for it in tl.range(start, end)`` over its share of the TILES x IPT k-iterations (tile t = it // IPT):
the loads' addresses follow from ``it``, so Triton's pipeliner applies; at a segment's end (the tile's last
k-iteration, or the program's last) a tile covered by one program runs its epilogue; otherwise the segment
stores its fp32 partial to its slot (tile, segment), fences, and counts itself in (acq_rel atomic per tile);
the segment that arrives last adds the slots up, runs the epilogue and resets the counter. No spin-waits.

Why it should pay on mlp_gpt3_T256 (M = 256): the GEMMs are L2-bound, not DRAM-bound, at 128x128 tiles:
L2 reads = M*K*2 * (N/BN) + K*N*2 * (M/BM) = 302 + 302 MB for fc1 (~83 us at 7.3 TB/s; measured 87 us);
256x128 tiles read 453 MB (~62 us) but give only 48 tiles: stream-K spreads them over all SMs.
Peer: F.linear (cuBLAS) without the activation. Every variant is checked against torch before timing.
"""

from __future__ import annotations

import json
import sys

import triton
import triton.language as tl
from streamk_probe import _epilogue, _tile_of, gemm_dp  # the first probe's epilogue, tile order, data-parallel GEMM


@triton.jit
def _tile_programs(t, IPT: tl.constexpr, TOTAL: tl.constexpr, NPROG: tl.constexpr):
    """The first and last program whose share of the k-iterations covers tile t (shares are even splits)."""
    return ((t * IPT + 1) * NPROG - 1) // TOTAL, ((t * IPT + IPT) * NPROG - 1) // TOTAL


@triton.jit
def _fixup(t, part, cnt, bias, c, tile_off, N: tl.constexpr, TM: tl.constexpr, TN: tl.constexpr, BM: tl.constexpr,
           BN: tl.constexpr, IPT: tl.constexpr, TOTAL: tl.constexpr, NPROG: tl.constexpr, MAXSEG: tl.constexpr,
           GELU: tl.constexpr):
    """Count a stored partial of tile t in; the tile's last segment to arrive adds the slots and runs the epilogue."""
    p0, p1 = _tile_programs(t, IPT, TOTAL, NPROG)
    n = tl.atomic_add(cnt + t, 1, sem="acq_rel")
    if n == p1 - p0:
        tot = tl.zeros([BM, BN], tl.float32)
        for s in tl.static_range(MAXSEG):
            if s <= p1 - p0:
                tot += tl.load(part + (t * MAXSEG + s) * (BM * BN) + tile_off, cache_modifier=".cg")
        pm, pn = _tile_of(t, TM, TN, 8)
        _epilogue(tot, bias, c, pm, pn, N, BM, BN, GELU)
        tl.atomic_xchg(cnt + t, 0)


@triton.jit
def gemm_skf(a, w, bias, c, part, cnt, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, BM: tl.constexpr,
             BN: tl.constexpr, BK: tl.constexpr, GELU: tl.constexpr, NPROG: tl.constexpr, MAXSEG: tl.constexpr,
             STAGES: tl.constexpr):
    pid = tl.program_id(0)
    TM: tl.constexpr = M // BM
    TN: tl.constexpr = N // BN
    IPT: tl.constexpr = K // BK
    TOTAL: tl.constexpr = TM * TN * IPT
    start = (pid * TOTAL) // NPROG
    end = ((pid + 1) * TOTAL) // NPROG
    rk = tl.arange(0, BK)
    tile_off = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    acc = tl.zeros([BM, BN], tl.float32)
    # one flat loop (pipelined); only stores inside its segment-end branch -- an atomic or a loop there stops
    # Triton's pipeliner (sm_90 AOT: no cp.async), so the count-in and fix-up follow the loop
    for it in tl.range(start, end, num_stages=STAGES):
        t = it // IPT
        kk = it - t * IPT
        pm, pn = _tile_of(t, TM, TN, 8)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        x = tl.load(a + rm[:, None] * K + kk * BK + rk[None, :])
        y = tl.load(w + rn[:, None] * K + kk * BK + rk[None, :])
        acc = tl.dot(x, tl.trans(y), acc)
        if (kk == IPT - 1) | (it == end - 1):
            p0, p1 = _tile_programs(t, IPT, TOTAL, NPROG)
            if p0 == p1:
                _epilogue(acc, bias, c, pm, pn, N, BM, BN, GELU)
            else:
                tl.store(part + (t * MAXSEG + pid - p0) * (BM * BN) + tile_off, acc, cache_modifier=".cg")
            acc = tl.zeros([BM, BN], tl.float32)
    # a program's partial segments: at most its first tile and its last one
    tl.debug_barrier()  # every thread's partial stores precede the count-in (release)
    t0 = start // IPT
    t1 = (end - 1) // IPT
    q0, q1 = _tile_programs(t0, IPT, TOTAL, NPROG)
    if q0 != q1:
        _fixup(t0, part, cnt, bias, c, tile_off, N, TM, TN, BM, BN, IPT, TOTAL, NPROG, MAXSEG, GELU)
    if t1 != t0:
        r0, r1 = _tile_programs(t1, IPT, TOTAL, NPROG)
        if r0 != r1:
            _fixup(t1, part, cnt, bias, c, tile_off, N, TM, TN, BM, BN, IPT, TOTAL, NPROG, MAXSEG, GELU)


def maxseg(M, N, K, BM, BN, BK, nprog):
    ipt = K // BK
    total = (M // BM) * (N // BN) * ipt
    return max(((t * ipt + ipt) * nprog - 1) // total - ((t * ipt + 1) * nprog - 1) // total + 1
               for t in range(total // ipt))


SHAPES = [("T256 fc1+gelu", 256, 6144, 12288, True), ("T256 fc2", 256, 12288, 6144, False),
          ("T1024 fc1+gelu", 1024, 6144, 12288, True), ("T1024 fc2", 1024, 12288, 6144, False)]
# (kind, BM, BN, BK, warps, stages)
VARIANTS = [("dp", 128, 128, 64, 8, 4), ("dp", 128, 256, 64, 8, 3),
            ("skf", 128, 128, 64, 8, 4), ("skf", 128, 128, 64, 8, 3), ("skf", 128, 128, 64, 4, 3),
            ("skf", 256, 128, 64, 8, 3), ("skf", 256, 128, 64, 8, 2), ("skf", 128, 256, 64, 8, 2)]


def aot() -> None:
    """Compile every variant for sm_90 here (no GPU): registers, spills, shared memory, wgmma, pipelining."""
    import re
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kitsune.codegen.aot import cubin_registers

    for name, M, N, K, gelu in SHAPES[:2]:
        for kind, BM, BN, BK, warps, stages in VARIANTS:
            if kind == "dp":
                fn, sig = gemm_dp, {"a": "*bf16", "w": "*bf16", "bias": "*bf16", "c": "*bf16"}
                cx = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, GELU=gelu)
            else:
                fn = gemm_skf
                sig = {"a": "*bf16", "w": "*bf16", "bias": "*bf16", "c": "*bf16", "part": "*fp32", "cnt": "*i32"}
                cx = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, GELU=gelu, NPROG=132,
                          MAXSEG=maxseg(M, N, K, BM, BN, BK, 132), STAGES=stages)
            for k in cx:
                sig[k] = "constexpr"
            attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(sig) - len(cx))}
            src = ASTSource(fn, sig, constexprs={(list(sig).index(k),): v for k, v in cx.items()}, attrs=attrs)
            ck = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages})
            ptx = ck.asm["ptx"]
            regs = cubin_registers(bytes(ck.asm["cubin"]))
            print(f"{name:15s} {kind:4s} {BM}x{BN}x{BK} w{warps} s{stages}: regs {regs} "
                  f"smem {ck.metadata.shared} wgmma {'wgmma' in ptx} cp.async {len(re.findall('cp.async.cg|cp.async.ca', ptx))} "
                  f"commit {ptx.count('cp.async.commit_group')} wgmma.wait {ptx.count('wgmma.wait_group')}")


def main() -> None:
    import torch
    import torch.nn.functional as F
    from graphtime import graph_us

    torch.manual_seed(0)
    dev = "cuda"
    nsm = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for name, M, N, K, gelu in SHAPES:
        a = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
        w = torch.randn(N, K, device=dev, dtype=torch.bfloat16) / K ** 0.5
        bias = torch.randn(N, device=dev, dtype=torch.bfloat16) * 0.1
        ref = F.linear(a.float(), w.float(), bias.float())
        if gelu:
            ref = F.gelu(ref)
        peer = graph_us(lambda: F.linear(a, w, bias))
        flop = 2 * M * N * K
        print(f"{name}: cuBLAS {peer:.1f} us ({flop / peer / 1e6:.0f} TFLOP/s)", flush=True)
        rows.append({"shape": name, "variant": "cublas", "us": peer})
        for kind, BM, BN, BK, warps, stages in VARIANTS:
            c = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
            tiles = (M // BM) * (N // BN)
            if kind == "dp":
                def step():
                    gemm_dp[(tiles,)](a, w, bias, c, M, N, K, BM, BN, BK, gelu, num_warps=warps, num_stages=stages)
                label = f"dp {BM}x{BN}x{BK} w{warps} s{stages} t{tiles}"
            else:
                ms = maxseg(M, N, K, BM, BN, BK, nsm)
                part = torch.empty(tiles * ms * BM * BN, device=dev, dtype=torch.float32)
                cnt = torch.zeros(tiles, device=dev, dtype=torch.int32)

                def step():
                    gemm_skf[(nsm,)](a, w, bias, c, part, cnt, M, N, K, BM, BN, BK, gelu, nsm, ms, stages,
                                     num_warps=warps, num_stages=stages)
                label = f"skf {BM}x{BN}x{BK} w{warps} s{stages} p{nsm} seg{ms}"
            try:
                step()
                torch.cuda.synchronize()
                err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
                ok = err < 2e-2
                us = graph_us(step) if ok else float("nan")
                c.zero_()
                for _ in range(3):  # repeated runs stay right (counters reset by the last arrivals)
                    step()
                torch.cuda.synchronize()
                err2 = ((c.float() - ref).abs().max() / ref.abs().max()).item()
                ok = ok and err2 < 2e-2
            except Exception as e:  # noqa: BLE001 (a probe: report and go on)
                print(f"  {label}: {type(e).__name__}: {str(e)[:200]}", flush=True)
                continue
            print(f"  {label:40s} {us:7.1f} us  x cuBLAS {peer / us:5.2f}  err {err:.1e} {'ok' if ok else 'WRONG'}",
                  flush=True)
            rows.append({"shape": name, "variant": label, "us": us, "err": err, "ok": ok})
    if "--out" in sys.argv:
        with open(sys.argv[sys.argv.index("--out") + 1], "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    aot() if "--aot" in sys.argv else main()
