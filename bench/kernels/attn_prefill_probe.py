"""Prefill attention: the template's generated kernel against hand-written forms and SDPA, on the shapes of
``bench/models/attention_shapes.py``: what the template's structure costs before it is changed.

The hand-written kernel (``attn``) differs from the template's in what the probe asks (constexpr switches):
- ``SPLIT``: a causal tile walks the key blocks wholly before its first query unmasked, and only the blocks that
  cross its diagonal under the mask (the template masks every block);
- ``EXP2``: the scale and log2(e) folded into one multiply and the exponentials taken as ``exp2`` (the template:
  ``exp(s * scale - m)``);
- ``KNAT``: K loaded as [keys, head dim] rows (16-byte vectors along the head dim) and transposed for the dot (the
  template loads it as [head dim, keys]); V is always loaded as [keys, head dim].
Each form runs BM queries of one (batch, head) on ``warps`` warps, blocks of BN keys, ``stages`` pipelining.

    python bench/kernels/attn_prefill_probe.py [--shapes llama1024c,gpt2_256c,...] [--out F.json]

Times: CUDA-graph replays of 20 calls (``graph_us``), every form checked against SDPA first (bf16, rel. err <
2e-2). Prints, per shape, SDPA, the template (kitsune.compile of the shape's module, its own default or tuned
config) and the best hand-written forms.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os

import torch
import triton
import triton.language as tl
from graphtime import graph_us

DEFAULT = "llama1024c,gpt2_256c,bert512,long2048c"
SHAPES = {  # batch, heads, tokens, head dim, causal (attention_shapes.py's)
    "llama1024c": (1, 32, 1024, 64, True), "gpt2_256c": (8, 12, 256, 64, True), "bert512": (8, 12, 512, 64, False),
    "long2048c": (2, 16, 2048, 128, True), "d128_512": (8, 16, 512, 128, False), "short128": (32, 12, 128, 64, False),
    "d80_512c": (4, 32, 512, 80, True),  # (the hand-written forms take head dims of a power of two only)
    "d256_1024c": (1, 8, 1024, 256, True),
}


@triton.jit
def _block(q, m_i, l_i, acc, k_base, v_base, lo, hi, qk_scale, offs_m, offs_n, offs_d, N_CTX: tl.constexpr,
           HEAD: tl.constexpr, BN: tl.constexpr, MASKED: tl.constexpr, EXP2: tl.constexpr, KNAT: tl.constexpr,
           STAGES: tl.constexpr):
    for start_n in tl.range(lo, hi, BN, num_stages=STAGES):
        keys = start_n + offs_n
        if KNAT:
            k = tl.trans(tl.load(k_base + keys[:, None] * HEAD + offs_d[None, :]))
        else:
            k = tl.load(k_base + keys[None, :] * HEAD + offs_d[:, None])
        qk = tl.dot(q, k)
        if MASKED:
            qk = tl.where(keys[None, :] <= offs_m[:, None], qk, float("-inf"))
        if EXP2:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
            alpha = tl.math.exp2(m_i - m_ij)
        else:
            s = qk * qk_scale
            m_ij = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp(s - m_ij[:, None])
            alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + keys[:, None] * HEAD + offs_d[None, :])
        acc = tl.dot(p.to(tl.bfloat16), v, acc * alpha[:, None])
        m_i = m_ij
    return m_i, l_i, acc


@triton.jit
def attn(Q, K, V, O, sm_scale, H: tl.constexpr, G: tl.constexpr, N_CTX: tl.constexpr, HEAD: tl.constexpr,
         BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr, SPLIT: tl.constexpr, EXP2: tl.constexpr,
         KNAT: tl.constexpr, STAGES: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    kvh = b * (H // G) + h // G
    q_base = Q + bh.to(tl.int64) * N_CTX * HEAD
    k_base = K + kvh.to(tl.int64) * N_CTX * HEAD
    v_base = V + kvh.to(tl.int64) * N_CTX * HEAD
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, HEAD)
    q = tl.load(q_base + offs_m[:, None] * HEAD + offs_d[None, :])
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, HEAD], tl.float32)
    qk_scale = sm_scale * 1.44269504 if EXP2 else sm_scale
    if CAUSAL:
        end = tl.minimum((start_m + 1) * BM, N_CTX)
        if SPLIT:
            band = (start_m * BM) // BN * BN
            m_i, l_i, acc = _block(q, m_i, l_i, acc, k_base, v_base, 0, band, qk_scale, offs_m, offs_n, offs_d,
                                   N_CTX, HEAD, BN, False, EXP2, KNAT, STAGES)
            m_i, l_i, acc = _block(q, m_i, l_i, acc, k_base, v_base, band, end, qk_scale, offs_m, offs_n, offs_d,
                                   N_CTX, HEAD, BN, True, EXP2, KNAT, STAGES)
        else:
            m_i, l_i, acc = _block(q, m_i, l_i, acc, k_base, v_base, 0, end, qk_scale, offs_m, offs_n, offs_d,
                                   N_CTX, HEAD, BN, True, EXP2, KNAT, STAGES)
    else:
        m_i, l_i, acc = _block(q, m_i, l_i, acc, k_base, v_base, 0, N_CTX, qk_scale, offs_m, offs_n, offs_d,
                               N_CTX, HEAD, BN, False, EXP2, KNAT, STAGES)
    out = acc / l_i[:, None]
    tl.store(O + bh.to(tl.int64) * N_CTX * HEAD + offs_m[:, None] * HEAD + offs_d[None, :], out.to(tl.bfloat16))


def template_us(name: str, q, k, v):
    """The template's program for the shape (attention_shapes.py's factory), timed as the forms are."""
    import kitsune

    path = os.path.join(os.path.dirname(__file__), "..", "models", "attention_shapes.py")
    spec = importlib.util.spec_from_file_location("attention_shapes", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model, _ = getattr(mod, name)()
    fn = kitsune.compile(model, (q, k, v), mode="bulk-sync", device="cuda", cuda_graph=False)
    prog = fn.program
    env = {**prog._tensors, **prog._prepare((q, k, v))}
    out = prog.launch(env)[0]
    torch.cuda.synchronize()
    return graph_us(lambda: prog.launch(env)), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=DEFAULT)
    ap.add_argument("--forms", default="all", help="'all', 'base' (the template's old switches only) or 'none' (SDPA "
                    "and the template alone)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    rows = []
    for name in a.shapes.split(","):
        B, H, T, D, causal = SHAPES[name]
        g = torch.Generator(device="cuda").manual_seed(0)
        q, k, v = (torch.randn(B, H, T, D, device="cuda", generator=g, dtype=torch.bfloat16) for _ in range(3))
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        sdpa = graph_us(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
        flops = 4.0 * B * H * T * T * D * (0.5 if causal else 1.0)
        res = {"sdpa": sdpa}
        try:
            tus, tout = template_us(name, q, k, v)
            err = ((tout.float() - ref.float()).norm() / ref.float().norm()).item()
            res["template"] = tus if err < 2e-2 else float("nan")
        except Exception as e:  # noqa: BLE001
            print(f"{name}: template failed: {type(e).__name__}: {str(e)[:200]}")
        o = torch.empty_like(q)
        forms = []
        for bm, bn, w in ((64, 64, 4), (64, 128, 4), (128, 64, 8), (128, 128, 8)):
            for st in (2, 3):
                for split, e2, knat in ((0, 0, 0), (1, 1, 0), (1, 1, 1)):
                    if a.forms == "none" or a.forms == "base" and (split, e2, knat) != (0, 0, 0):
                        continue
                    forms.append((bm, bn, w, st, split, e2, knat))
        for f in forms:
            bm, bn, w, st, split, e2, knat = f
            if T % bm or T % bn:
                continue
            grid = (T // bm, B * H)

            def call():
                attn[grid](q, k, v, o, D ** -0.5, H, 1, T, D, bm, bn, causal, split, e2, knat, st, num_warps=w,
                           num_stages=st)
            try:
                call()
                torch.cuda.synchronize()
                err = ((o.float() - ref.float()).norm() / ref.float().norm()).item()
                if err > 2e-2:
                    print(f"{name} {f}: wrong ({err:.2e})")
                    continue
                res[str(f)] = graph_us(call)
            except Exception as e:  # noqa: BLE001
                print(f"{name} {f}: failed {type(e).__name__}: {str(e)[:150]}")
        best = sorted(((v, k) for k, v in res.items() if k.startswith("(")))[:6]
        base = [(v, k) for k, v in res.items() if k.startswith("(") and k.endswith("0, 0, 0)")]
        base = base or [(float("nan"), "")]
        line = (f"{name:10s} {flops / 1e9:6.2f} GF  sdpa {sdpa:7.2f} us ({flops / sdpa / 1e6:5.0f} TF/s)  template "
                f"{res.get('template', float('nan')):7.2f}  best unsplit-exp-transposedK "
                f"{min(base)[0]:7.2f} {min(base)[1]}")
        print(line, flush=True)
        for v_, k_ in best:
            print(f"    {v_:7.2f} us  {flops / v_ / 1e6:5.0f} TF/s  {k_}  (BM, BN, warps, stages, SPLIT, EXP2, KNAT)")
        rows.append({"shape": name, "B": B, "H": H, "T": T, "D": D, "causal": causal, "us": res,
                     "device": torch.cuda.get_device_name()})
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
