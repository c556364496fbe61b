"""Probe: stream-K as a few *separate* pipelined K loops per program (NOTES §10), against data-parallel tiles
(128x128, 128x256, 256x128) and cuBLAS.

    python bench/kernels/streamk_nested_probe.py [--out FILE.json]
    python bench/kernels/streamk_nested_probe.py --aot      # no GPU: sm_90 compile, pipelining check

The two earlier stream-K probes lost to data-parallel tiles because their K loops were not pipelined: a
``while`` over segments around the K loop (§7), then one flat loop whose segment-end branch reads the
accumulator every iteration (§8: a ``wgmma.wait_group`` per iteration). Here a program's share
[start, end) of the TILES x IPT k-iterations touches at most SPAN consecutive tiles; the segments are a
``tl.static_range(SPAN)``, so each K loop is a top-level ``for`` with run-time bounds (empty when the
program's share ends earlier) and nothing but loads and the dot in its body. Between the loops: a whole
tile runs its epilogue; a partial one stores its fp32 sums to slot (tile, program - first program of the
tile), fences and counts itself in (acq_rel); the last of the tile's segments to arrive adds the slots up,
runs the epilogue and resets the counter. No spin-waits (no residency needed).

NPROG = 2 x tiles is split-K 2 through the same kernel (every segment half a tile).

Prediction (per-SM L2 rate ~68 GB/s measured in §8; bytes per k-step (BM + BN) x BK x 2): 256x128 tiles move
0.75x the bytes per flop of 128x128, so on 96 programs ~70 us (fc1), and on 132 programs the tensor cores
bind first: ~60 us + fix-up, against cuBLAS 65-68 us and today's 88 / 77 us (T256 fc1 / fc2).
"""

from __future__ import annotations

import json
import sys

import triton
import triton.language as tl
from streamk_flat_probe import _fixup, _tile_programs, maxseg
from streamk_probe import _epilogue, _tile_of, gemm_dp


@triton.jit
def gemm_skn(a, w, bias, c, part, cnt, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, BM: tl.constexpr,
             BN: tl.constexpr, BK: tl.constexpr, GELU: tl.constexpr, NPROG: tl.constexpr, MAXSEG: tl.constexpr,
             SPAN: tl.constexpr, STAGES: tl.constexpr, TMA: tl.constexpr = False):
    """TMA: ``a`` and ``w`` are host-side tensor descriptors of [BM, BK] and [BN, BK] blocks, else pointers."""
    pid = tl.program_id(0)
    TM: tl.constexpr = M // BM
    TN: tl.constexpr = N // BN
    IPT: tl.constexpr = K // BK
    TOTAL: tl.constexpr = TM * TN * IPT
    start = (pid * TOTAL) // NPROG
    end = ((pid + 1) * TOTAL) // NPROG
    rk = tl.arange(0, BK)
    tile_off = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    t0 = start // IPT
    for s in tl.static_range(SPAN):
        t = t0 + s
        k0 = tl.maximum(start - t * IPT, 0)
        k1 = tl.minimum(end - t * IPT, IPT)
        pm, pn = _tile_of(t, TM, TN, 8)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        if not TMA:
            pa = a + rm[:, None] * K + rk[None, :]
            pw = w + rn[:, None] * K + rk[None, :]
        acc = tl.zeros([BM, BN], tl.float32)
        for kk in tl.range(k0, k1, num_stages=STAGES):
            if TMA:
                x = a.load([pm * BM, kk * BK])
                y = w.load([pn * BN, kk * BK])
            else:
                x = tl.load(pa + kk * BK)
                y = tl.load(pw + kk * BK)
            acc = tl.dot(x, tl.trans(y), acc)
        if k0 < k1:
            p0, p1 = _tile_programs(t, IPT, TOTAL, NPROG)
            if p0 == p1:
                _epilogue(acc, bias, c, pm, pn, N, BM, BN, GELU)
            else:
                tl.store(part + (t * MAXSEG + pid - p0) * (BM * BN) + tile_off, acc, cache_modifier=".cg")
                tl.debug_barrier()  # every thread's partial stores precede the count-in (release)
                _fixup(t, part, cnt, bias, c, tile_off, N, TM, TN, BM, BN, IPT, TOTAL, NPROG, MAXSEG, GELU)


def span(M, N, K, BM, BN, BK, nprog):
    """The most tiles one program's share touches."""
    ipt = K // BK
    total = (M // BM) * (N // BN) * ipt
    return max((((p + 1) * total) // nprog - 1) // ipt - ((p * total) // nprog) // ipt + 1 for p in range(nprog))


SHAPES = [("T256 fc1+gelu", 256, 6144, 12288, True), ("T256 fc2", 256, 12288, 6144, False),
          ("T1024 fc1+gelu", 1024, 6144, 12288, True), ("T1024 fc2", 1024, 12288, 6144, False)]
# (kind, BM, BN, BK, warps, stages, programs: 0 = one per tile, -2 = two per tile (split-K 2), else NPROG
# (None: the SM count))
VARIANTS = [("dp", 128, 128, 64, 8, 4, 0), ("dp", 128, 256, 64, 8, 3, 0), ("dp", 256, 128, 64, 8, 3, 0),
            ("skn", 256, 128, 64, 8, 3, -2), ("skn", 128, 256, 64, 8, 3, -2),
            ("skn", 256, 128, 64, 8, 3, None), ("skn", 256, 128, 64, 8, 4, None), ("skn", 128, 256, 64, 8, 3, None),
            ("skn", 128, 128, 64, 8, 4, None), ("skt", 256, 128, 64, 8, 3, None), ("skt", 256, 128, 64, 8, 4, None),
            ("skt", 128, 256, 64, 8, 3, None), ("skt", 256, 128, 64, 8, 3, -2), ("skt", 128, 128, 64, 8, 4, 0)]


def programs(M, N, BM, BN, spec, nsm):
    tiles = (M // BM) * (N // BN)
    return nsm if spec is None else tiles if spec == 0 else tiles * -spec if spec < 0 else spec


def aot() -> None:
    """Compile every variant for sm_90 here (no GPU): registers, spills, shared memory, wgmma, pipelining."""
    import re

    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kitsune.codegen.aot import cubin_registers

    for name, M, N, K, gelu in SHAPES[:1] + SHAPES[2:3]:
        for kind, BM, BN, BK, warps, stages, spec in VARIANTS:
            if kind == "skt":
                continue  # tensor-descriptor arguments: measured on the device only
            np_ = programs(M, N, BM, BN, spec, 132)
            if kind == "dp":
                fn, sig = gemm_dp, {"a": "*bf16", "w": "*bf16", "bias": "*bf16", "c": "*bf16"}
                cx = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, GELU=gelu)
            else:
                fn = gemm_skn
                sig = {"a": "*bf16", "w": "*bf16", "bias": "*bf16", "c": "*bf16", "part": "*fp32", "cnt": "*i32"}
                cx = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, GELU=gelu, NPROG=np_,
                          MAXSEG=maxseg(M, N, K, BM, BN, BK, np_), SPAN=span(M, N, K, BM, BN, BK, np_), STAGES=stages)
            for k in cx:
                sig[k] = "constexpr"
            attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(sig) - len(cx))}
            src = ASTSource(fn, sig, constexprs={(list(sig).index(k),): v for k, v in cx.items()}, attrs=attrs)
            ck = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages})
            ptx = ck.asm["ptx"]
            regs = cubin_registers(bytes(ck.asm["cubin"]))
            spill = re.findall(r"(\d+) bytes spill stores", ck.asm.get("log", "") or "")
            print(f"{name:15s} {kind:3s} {BM}x{BN} w{warps} s{stages} p{np_} span{cx.get('SPAN', 1)}: regs {regs} "
                  f"smem {ck.metadata.shared} wgmma {'wgmma' in ptx} cp.async "
                  f"{len(re.findall('cp.async.cg|cp.async.ca', ptx))} commit {ptx.count('cp.async.commit_group')} "
                  f"wgmma.wait {ptx.count('wgmma.wait_group')} local {ptx.count('st.local')} {spill}", flush=True)


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
        for kind, BM, BN, BK, warps, stages, spec in VARIANTS:
            c = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
            tiles = (M // BM) * (N // BN)
            np_ = programs(M, N, BM, BN, spec, nsm)
            if kind == "dp":
                def step():
                    gemm_dp[(tiles,)](a, w, bias, c, M, N, K, BM, BN, BK, gelu, num_warps=warps, num_stages=stages)
                label = f"dp {BM}x{BN}x{BK} w{warps} s{stages} t{tiles}"
            else:
                ms = maxseg(M, N, K, BM, BN, BK, np_)
                sp = span(M, N, K, BM, BN, BK, np_)
                part = torch.empty(tiles * ms * BM * BN, device=dev, dtype=torch.float32)
                cnt = torch.zeros(tiles, device=dev, dtype=torch.int32)

                if kind == "skt":
                    from triton.tools.tensor_descriptor import TensorDescriptor
                    ad = TensorDescriptor.from_tensor(a, [BM, BK])
                    wd = TensorDescriptor.from_tensor(w, [BN, BK])

                    def step():
                        gemm_skn[(np_,)](ad, wd, bias, c, part, cnt, M, N, K, BM, BN, BK, gelu, np_, ms, sp, stages,
                                         True, num_warps=warps, num_stages=stages)
                else:
                    def step():
                        gemm_skn[(np_,)](a, w, bias, c, part, cnt, M, N, K, BM, BN, BK, gelu, np_, ms, sp, stages,
                                         num_warps=warps, num_stages=stages)
                label = f"{kind} {BM}x{BN}x{BK} w{warps} s{stages} p{np_} seg{ms} span{sp}"
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
            print(f"  {label:44s} {us:7.1f} us  x cuBLAS {peer / us:5.2f}  {flop / us / 1e6:4.0f} TFLOP/s  "
                  f"err {err:.1e} {'ok' if ok else 'WRONG'}", flush=True)
            rows.append({"shape": name, "variant": label, "us": us, "err": err, "ok": ok})
    if "--out" in sys.argv:
        with open(sys.argv[sys.argv.index("--out") + 1], "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    aot() if "--aot" in sys.argv else main()
