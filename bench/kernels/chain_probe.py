"""Probe: a GEMM chain as one Triton kernel (issue 15), NeRF's 8+1 layers.

A CTA takes BM rows and runs every layer; the activation stays in registers as
segments of SEG columns (the A operand of the next layer's tl.dot), the weights
stream from L2 in [SEG, SEG] blocks. Variants: BM / warps / SEG / weight-block
prefetch (the next block's load issued before the current dot).

CPU:  python bench/kernels/chain_probe.py --aot         (sm_90 compile: regs, spills)
GPU:  python bench/kernels/chain_probe.py [--json F]    (check vs eager, time, peers)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))


def pow2(n: int) -> int:
    p = 16
    while p < n:
        p *= 2
    return p


def nerf_spec(width=256, fin=63, fout=4, depth=8, skip=4):
    layers = []
    for i in range(depth):
        if i == 0:
            ins = [("x", 0, fin)]
        elif i == skip:
            ins = [("h", 0, width), ("x", width, fin)]
        else:
            ins = [("h", 0, width)]
        K = sum(w for _, _, w in ins)
        layers.append(dict(K=K, N=width, ins=ins, act="relu"))
    layers.append(dict(K=width, N=fout, ins=[("h", 0, width)], act=None))
    return dict(fin=fin, layers=layers)


def chain_source(spec, BM=128, SEG=128, prefetch=False, num_warps=8, name="chain"):
    fin = spec["fin"]
    FP = pow2(fin)
    L = spec["layers"]
    args = ["x_ptr"] + [f"w{l}, b{l}" for l in range(len(L))] + ["out_ptr", "P"]
    lines = [f"@triton.jit",
             f"def {name}({', '.join(args)}, BM: tl.constexpr):",
             "    rows = tl.program_id(0) * BM + tl.arange(0, BM)",
             "    rmask = rows < P",
             f"    cx = tl.arange(0, {FP})",
             f"    x = tl.load(x_ptr + rows[:, None] * {fin} + cx[None, :], "
             f"mask=rmask[:, None] & (cx[None, :] < {fin}), other=0.0)"]
    # weight blocks in execution order: (layer, out_seg, in_piece)
    blocks = []
    segs_prev = None
    plan = []
    for l, lay in enumerate(L):
        N, K = lay["N"], lay["K"]
        nseg = [(o, min(SEG, N - o)) for o in range(0, N, SEG)]
        pieces = []  # (var, W column offset, padded width, real width)
        for src, off, w in lay["ins"]:
            if src == "x":
                pieces.append(("x", off, FP, w))
            else:
                for j, (o, sw) in enumerate(segs_prev):
                    pieces.append((f"h{l-1}_{j}", off + o, pow2(sw), sw))
        for j, (o, sw) in enumerate(nseg):
            for p in pieces:
                blocks.append((l, j, o, sw, p))
        plan.append((l, lay, nseg, pieces))
        segs_prev = nseg

    def load_block(t):
        l, j, o, sw, (var, koff, kp, kr) = blocks[t]
        K = L[l]["K"]
        npad = pow2(sw)
        m = []
        if kr < kp:
            m.append(f"(tl.arange(0, {kp})[:, None] < {kr})")
        if sw < npad:
            m.append(f"(tl.arange(0, {npad})[None, :] < {sw})")
        mask = f", mask={' & '.join(m)}, other=0.0" if m else ""
        return (f"tl.load(w{l} + ({o} + tl.arange(0, {npad}))[None, :] * {K} + "
                f"({koff} + tl.arange(0, {kp}))[:, None]{mask})")

    t = 0
    if prefetch:
        lines.append(f"    wn = {load_block(0)}")
    for l, lay, nseg, pieces in plan:
        for j, (o, sw) in enumerate(nseg):
            npad = pow2(sw)
            acc = None
            for p in pieces:
                if prefetch:
                    lines.append(f"    wc = wn")
                    if t + 1 < len(blocks):
                        lines.append(f"    wn = {load_block(t + 1)}")
                    wexpr = "wc"
                else:
                    wexpr = load_block(t)
                if acc is None:
                    lines.append(f"    acc = tl.dot({p[0]}, {wexpr})")
                    acc = "acc"
                else:
                    lines.append(f"    acc = tl.dot({p[0]}, {wexpr}, acc)")
                t += 1
            bm = f", mask=tl.arange(0, {npad}) < {sw}, other=0.0" if sw < npad else ""
            lines.append(f"    acc += tl.load(b{l} + {o} + tl.arange(0, {npad}){bm}).to(tl.float32)[None, :]")
            if lay["act"] == "relu":
                lines.append("    acc = tl.maximum(acc, 0.0)")
            if l + 1 < len(L):
                lines.append(f"    h{l}_{j} = acc.to(tl.bfloat16)")
            else:
                cm = f"(tl.arange(0, {npad})[None, :] < {sw})"
                lines.append(f"    tl.store(out_ptr + rows[:, None] * {lay['N']} + {o} + tl.arange(0, {npad})[None, :], "
                             f"acc.to(tl.bfloat16), mask=rmask[:, None] & {cm})")
    sig = {"x_ptr": "*bf16", "out_ptr": "*bf16", "P": "i32"}
    for l in range(len(L)):
        sig[f"w{l}"] = "*bf16"
        sig[f"b{l}"] = "*bf16"
    head = "import triton\nimport triton.language as tl\n\n"
    body = "\n".join(lines) + "\n"
    tail = (f"\nKERNELS = [dict(name={name!r}, fn={name}, num_warps={num_warps}, "
            f"signature={sig!r}, constexprs={{'BM': {BM}}})]\n")
    return head + body + tail


VARIANTS = [
    # (BM, SEG, prefetch, warps)
    (128, 128, False, 8),
    (128, 128, True, 8),
    (128, 64, False, 8),
    (128, 64, True, 8),
    (64, 64, False, 4),
]


def aot(args):
    from kitsune.codegen.aot import compile_module_source
    spec = nerf_spec()
    for v in VARIANTS:
        src = chain_source(spec, BM=v[0], SEG=v[1], prefetch=v[2], num_warps=v[3])
        recs = compile_module_source(src)
        r = recs[0]
        print(v, {k: r.get(k) for k in ("registers", "shared", "spill_stores", "spill_loads", "wgmma", "ctas_per_sm", "error", "compile_s") if k in r})


def gpu(args):
    import importlib.util
    import torch
    import triton
    from kitsune.models.nerf import NeRFMLP, NeRFConfig, example_inputs
    torch.manual_seed(0)
    cfg = NeRFConfig()
    gen = torch.Generator().manual_seed(0)
    model = NeRFMLP(cfg)
    model.init_weights(gen)
    model = model.to("cuda", torch.bfloat16).eval()
    x = example_inputs(cfg, gen)[0].to("cuda", torch.bfloat16)
    with torch.no_grad():
        ref = model(x).float()
    ws = []
    for lin in list(model.layers) + [model.out]:
        ws += [lin.weight.detach().contiguous(), lin.bias.detach().contiguous()]
    out = torch.empty((cfg.points, cfg.out_features), device="cuda", dtype=torch.bfloat16)
    rows = []
    spec = nerf_spec()
    tmp = tempfile.mkdtemp()
    for i, v in enumerate(VARIANTS):
        BM, SEG, pf, nw = v
        src = chain_source(spec, BM=BM, SEG=SEG, prefetch=pf, num_warps=nw, name=f"chain{i}")
        path = os.path.join(tmp, f"chain{i}.py")
        open(path, "w").write(src)
        spec_ = importlib.util.spec_from_file_location(f"chain{i}", path)
        mod = importlib.util.module_from_spec(spec_)
        spec_.loader.exec_module(mod)
        fn = mod.KERNELS[0]["fn"]
        grid = (triton.cdiv(cfg.points, BM),)
        try:
            call = lambda: fn[grid](x, *ws, out, cfg.points, BM=BM, num_warps=nw)
            call()
            torch.cuda.synchronize()
            err = ((out.float() - ref).norm() / ref.norm()).item()
            ms = triton.testing.do_bench(call, warmup=50, rep=300)
            k = fn.cache[0] if hasattr(fn, "cache") else None
            nregs = None
            try:
                ck = list(fn.device_caches[0][0].values())[-1]
                nregs = (ck.n_regs, ck.n_spills, ck.metadata.shared)
            except Exception:
                pass
            rows.append(dict(variant=v, ms=ms, rel_err=err, regs=nregs))
        except Exception as e:  # noqa: BLE001
            rows.append(dict(variant=v, error=str(e)[:300]))
        print(rows[-1], flush=True)
    # peers
    with torch.no_grad():
        eager = lambda: model(x)
        rows.append(dict(variant="eager", ms=triton.testing.do_bench(eager, warmup=50, rep=300)))
        comp = torch.compile(model)
        comp(x); comp(x)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                comp(x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            comp(x)
        rows.append(dict(variant="inductor+graph", ms=triton.testing.do_bench(g.replay, warmup=50, rep=300)))
    for r in rows:
        print(r)
    if args.json:
        json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), open(args.json, "w"), indent=1, default=str)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--aot", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--print", action="store_true")
    a = ap.parse_args()
    if a.print:
        print(chain_source(nerf_spec(), prefetch=True))
    elif a.aot:
        aot(a)
    else:
        gpu(a)
