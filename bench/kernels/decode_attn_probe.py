"""Probe: flash-decoding for llama_decode (GQA, one query token) with the KV-cache concatenation fused
into the loads, against what Kitsune emitted (a concatenated copy of the cache, then partials that
compute QK^T four times).

    python bench/kernels/decode_attn_probe.py [--out FILE.json]

Inputs as in the workload: qkv [B, 1, (Hq + 2 Hk) E] (the projection's output; q, then k, then v),
cache_k / cache_v [B, Hk, LC, E]; keys = cat(cache, new) along the length (LC + 1).
Variants: per program one (batch, kv head, split) with the G = Hq / Hk query heads of the group as the
rows of a tl.dot (padded to 16); online softmax over blocks of BN keys; the cached rows and the new row
are two masked loads joined by tl.where (the concatenation, never materialised). The partials (o, m, l)
are combined by a second kernel (``two``) or by the last program of each (batch, kv head) under a
counter (``fused``).
Peer: torch.cat + F.scaled_dot_product_attention(enable_gqa=True), graph-timed, and sdpa alone on a
pre-concatenated cache (what an in-place cache update would cost).
"""

from __future__ import annotations

import json
import math
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from graphtime import graph_us


@triton.jit
def attn_part(qkv, ck, cv, po, pm, pl, out, cnt, scale, Hk: tl.constexpr, G: tl.constexpr, GP: tl.constexpr,
              E: tl.constexpr, LC: tl.constexpr, SPLIT: tl.constexpr, BN: tl.constexpr, FUSED: tl.constexpr):
    pid = tl.program_id(0)
    s = pid % SPLIT
    bh = pid // SPLIT
    h = bh % Hk
    b = bh // Hk
    W: tl.constexpr = (Hk * G + 2 * Hk) * E
    L: tl.constexpr = LC + 1
    CH: tl.constexpr = (L + SPLIT - 1) // SPLIT
    lo = s * CH
    hi = tl.minimum(L, lo + CH)
    g = tl.arange(0, GP)
    e = tl.arange(0, E)
    q = tl.load(qkv + b * W + (h * G + g)[:, None] * E + e[None, :], mask=(g < G)[:, None], other=0.0)
    m = tl.full([GP], float("-inf"), tl.float32)
    l = tl.zeros([GP], tl.float32)
    acc = tl.zeros([GP, E], tl.float32)
    kv_base = (b * Hk + h) * LC
    knew = qkv + b * W + Hk * G * E + h * E
    vnew = qkv + b * W + Hk * G * E + Hk * E + h * E
    for n0 in range(lo, hi, BN):
        n = n0 + tl.arange(0, BN)
        cached = n < LC
        fresh = n == LC
        kc = tl.load(ck + (kv_base + n)[:, None] * E + e[None, :], mask=cached[:, None], other=0.0)
        kn = tl.load(knew + e[None, :] + 0 * n[:, None], mask=fresh[:, None], other=0.0)
        k = tl.where(cached[:, None], kc, kn)
        sc = tl.dot(q, tl.trans(k)) * scale
        sc = tl.where((n < hi)[None, :], sc, float("-inf"))
        m_new = tl.maximum(m, tl.max(sc, 1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(sc - m_new[:, None])
        l = l * alpha + tl.sum(p, 1)
        vc = tl.load(cv + (kv_base + n)[:, None] * E + e[None, :], mask=cached[:, None], other=0.0)
        vn = tl.load(vnew + e[None, :] + 0 * n[:, None], mask=fresh[:, None], other=0.0)
        v = tl.where(cached[:, None], vc, vn)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
        m = m_new
    row = (b * Hk * G + h * G + g) * SPLIT + s  # partial (b, head, split)
    gm = g < G
    tl.store(po + row[:, None] * E + e[None, :], acc, mask=gm[:, None])
    tl.store(pm + row, m, mask=gm)
    tl.store(pl + row, l, mask=gm)
    if FUSED:
        tl.debug_barrier()
        done = tl.atomic_add(cnt + bh, 1, sem="acq_rel")
        if done == SPLIT - 1:  # the last partial of this (b, kv head) combines
            tl.atomic_xchg(cnt + bh, 0)
            sp = tl.arange(0, SPLIT)
            rows = (b * Hk * G + h * G + g)[:, None] * SPLIT + sp[None, :]  # [GP, SPLIT]
            ms = tl.load(pm + rows, mask=gm[:, None], other=float("-inf"), cache_modifier=".cg")
            ls = tl.load(pl + rows, mask=gm[:, None], other=0.0, cache_modifier=".cg")
            mx = tl.max(ms, 1)
            wgt = tl.exp(ms - mx[:, None])
            den = tl.sum(wgt * ls, 1)
            num = tl.zeros([GP, E], tl.float32)
            for j in range(SPLIT):
                oj = tl.load(po + ((b * Hk * G + h * G + g) * SPLIT + j)[:, None] * E + e[None, :],
                             mask=gm[:, None], other=0.0, cache_modifier=".cg")
                wj = tl.sum(tl.where(sp[None, :] == j, wgt, 0.0), 1)
                num += wj[:, None] * oj
            o = num / tl.where(gm, den, 1.0)[:, None]
            tl.store(out + (b * Hk * G + h * G + g)[:, None] * E + e[None, :], o.to(tl.bfloat16), mask=gm[:, None])


@triton.jit
def attn_combine(po, pm, pl, out, E: tl.constexpr, SPLIT: tl.constexpr):
    r = tl.program_id(0)  # (b, head)
    sp = tl.arange(0, SPLIT)
    e = tl.arange(0, E)
    ms = tl.load(pm + r * SPLIT + sp)
    ls = tl.load(pl + r * SPLIT + sp)
    mx = tl.max(ms, 0)
    w = tl.exp(ms - mx)
    o = tl.load(po + (r * SPLIT + sp)[:, None] * E + e[None, :])
    num = tl.sum(w[:, None] * o, 0)
    tl.store(out + r * E + e, (num / tl.sum(w * ls, 0)).to(tl.bfloat16))


def main() -> None:
    torch.manual_seed(0)
    dev = "cuda"
    Hq, Hk, E, LC = 32, 8, 64, 1024
    G = Hq // Hk
    rows = []
    for B in (1, 8):
        qkv = torch.randn(B, 1, (Hq + 2 * Hk) * E, device=dev, dtype=torch.bfloat16)
        ck = torch.randn(B, Hk, LC, E, device=dev, dtype=torch.bfloat16)
        cv = torch.randn(B, Hk, LC, E, device=dev, dtype=torch.bfloat16)
        q = qkv[..., : Hq * E].view(B, 1, Hq, E).transpose(1, 2)
        kn = qkv[..., Hq * E: (Hq + Hk) * E].view(B, 1, Hk, E).transpose(1, 2)
        vn = qkv[..., (Hq + Hk) * E:].view(B, 1, Hk, E).transpose(1, 2)

        def torch_step():
            return F.scaled_dot_product_attention(q, torch.cat([ck, kn], 2), torch.cat([cv, vn], 2), enable_gqa=True)

        ref = torch_step().float().reshape(B, Hq, E)
        kc, vc = torch.cat([ck, kn], 2), torch.cat([cv, vn], 2)
        peer = graph_us(torch_step)
        peer_nocat = graph_us(lambda: F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True))
        kv_bytes = 2 * B * Hk * (LC + 1) * E * 2
        print(f"B={B}: torch cat+sdpa {peer:.1f} us, sdpa alone {peer_nocat:.1f} us; KV {kv_bytes / 1e6:.1f} MB "
              f"-> {kv_bytes / 3.0e6:.1f} us at 3 TB/s")
        rows.append({"B": B, "variant": "torch cat+sdpa", "us": peer})
        rows.append({"B": B, "variant": "torch sdpa (no cat)", "us": peer_nocat})
        for split in (2, 4, 8, 16, 32):
            for BN in (32, 64, 128):
                for fused in (False, True):
                    for warps in (4,):
                        po = torch.empty(B * Hq * split * E, device=dev, dtype=torch.float32)
                        pm = torch.empty(B * Hq * split, device=dev, dtype=torch.float32)
                        pl = torch.empty(B * Hq * split, device=dev, dtype=torch.float32)
                        out = torch.empty(B, Hq, E, device=dev, dtype=torch.bfloat16)
                        cnt = torch.zeros(B * Hk, device=dev, dtype=torch.int32)
                        nprog = B * Hk * split

                        def step():
                            attn_part[(nprog,)](qkv, ck, cv, po, pm, pl, out, cnt, 1.0 / math.sqrt(E), Hk, G, 16, E, LC,
                                                split, BN, fused, num_warps=warps, num_stages=2)
                            if not fused:
                                attn_combine[(B * Hq,)](po, pm, pl, out, E, split, num_warps=1)

                        try:
                            step()
                            torch.cuda.synchronize()
                            err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
                            ok = err < 2e-2
                            us = graph_us(step) if ok else float("nan")
                        except Exception as ex:  # noqa: BLE001
                            print(f"  split {split} BN {BN} fused {fused}: {type(ex).__name__}: {str(ex)[:160]}")
                            continue
                        label = f"split {split:2d} BN {BN:3d} {'fused' if fused else 'two  '} w{warps} ({nprog} progs)"
                        print(f"  {label:40s} {us:6.1f} us  x torch {peer / us:5.2f}  "
                              f"{kv_bytes / us / 1e6:5.2f} TB/s  err {err:.1e} {'ok' if ok else 'WRONG'}")
                        rows.append({"B": B, "variant": label, "us": us, "err": err, "ok": ok})
    if "--out" in sys.argv:
        with open(sys.argv[sys.argv.index("--out") + 1], "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
