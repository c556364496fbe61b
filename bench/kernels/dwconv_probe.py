"""How fast can Triton run ConvNeXt's depthwise 7 x 7 convolutions over NCHW, and in which form?

Issue 11, ConvNeXt-T at 0.74x Inductor (NOTES section 37): its depthwise convolutions
``Y[n, c, h, w] = b[c] + sum_{kh, kw} X[n, c, h + kh - 3, w + kw - 3] W[c, kh, kw]`` took 84 / 51 / 20 / 28 us at
its four stages ([16, C, S, S], C x S = 96 x 56, 192 x 28, 384 x 14, 768 x 7), 667 us of its 1.9 ms. The
compiler's kernel evaluates the window with 49 shifted loads a pixel, its tile one whole channel image.

Forms timed here, each checked against ``F.conv2d`` first:

* ``gen``: the compiler's own kernel, from a generated module (``--generated``: ``.whl/cnx_gen.py``).
* ``rows``: the same 49 shifted loads a pixel, the tile ``BR`` image rows (of any channels) x the row.
* ``strip``: every lane holds V adjacent pixels of a row (V the largest power of two <= 8 dividing W, so that
  each V-vector is aligned); per window row it loads its own V-vector and ceil(3 / V) on either side, splits them
  into registers (``tl.split``) and forms the V outputs from them: at V = 8 three vector loads and 49 FMAs a
  pixel group instead of 49 scalar loads a pixel.
* ``cudnn``: ``F.conv2d(groups=C)`` over NCHW and over channels-last (what Inductor calls).

Timing: CUDA-graph replays rotating over copies of the input past the L2 (``graphtime.rotating_us``).

    python bench/kernels/dwconv_probe.py [--generated .whl/cnx_gen.py] [--json OUT]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graphtime import rotating_us  # noqa: E402

N = 16
STAGES = [(96, 56), (192, 28), (384, 14), (768, 7)]
GEN = {56: "k2", 28: "k18", 14: "k34", 7: "k80"}  # the generated module's dwconv kernels, by stage


@triton.jit
def dw_rows(X, Wt, B, Y, R, C: tl.constexpr, H: tl.constexpr, W: tl.constexpr, K: tl.constexpr,
            BR: tl.constexpr, BW: tl.constexpr):
    P: tl.constexpr = K // 2
    r = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    col = tl.arange(0, BW)[None, :]
    h = r % H
    c = (r // H) % C
    ok = r < R
    acc = tl.zeros([BR, BW], tl.float32)
    for kh in tl.static_range(K):
        hm = ok & (h + (kh - P) >= 0) & (h + (kh - P) < H)
        for kw in tl.static_range(K):
            m = hm & (col + (kw - P) >= 0) & (col + (kw - P) < W)
            x = tl.load(X + (r + (kh - P)) * W + col + (kw - P), mask=m, other=0.0).to(tl.float32)
            acc += x * tl.load(Wt + c * (K * K) + (kh * K + kw)).to(tl.float32)
    acc += tl.load(B + c).to(tl.float32)
    tl.store(Y + r * W + col, acc.to(tl.bfloat16), mask=ok & (col < W))


STRIP_SRC = '''
import triton
import triton.language as tl


@triton.jit
def dw_strip(X, Wt, B, Y, R, C: tl.constexpr, H: tl.constexpr, W: tl.constexpr, K: tl.constexpr,
             BR: tl.constexpr, G: tl.constexpr):
    GW: tl.constexpr = W // V
    r3 = tl.program_id(0) * BR + tl.arange(0, BR)[:, None, None]
    g3 = tl.arange(0, G)[None, :, None]
    j3 = tl.arange(0, V)[None, None, :]
    r2 = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    h3 = r3 % H
    c2 = (r2 // H) % C
    ok3 = (r3 < R) & (g3 < GW)
    BODY
    tl.store(Y + r3 * W + g3 * V + j3, out.to(tl.bfloat16), mask=ok3)
'''


def _split(lines: list, name: str, v: int, fresh) -> list[str]:
    """Lines splitting ``name`` ([BR, G, v], v a power of two) into its v elements ([BR, G] each), in order."""
    if v == 1:
        out = fresh()
        lines.append(f"{out} = tl.reshape({name}, [BR, G])")
        return [out]
    if v == 2:
        a, b = fresh(), fresh()
        lines.append(f"{a}, {b} = tl.split({name})")
        return [a, b]
    ev, od = fresh(), fresh()
    lines.append(f"{ev}, {od} = tl.split(tl.reshape({name}, [BR, G, {v // 2}, 2]))")
    e, o = _split(lines, ev, v // 2, fresh), _split(lines, od, v // 2, fresh)
    return [x for pair in zip(e, o) for x in pair]


def _join(vals: list[str]) -> str:
    """The expression joining ``vals`` ([BR, G] each) into [BR, G, len(vals)], in order (``_split``'s inverse)."""
    v = len(vals)
    if v == 1:
        return f"tl.reshape({vals[0]}, [BR, G, 1])"
    if v == 2:
        return f"tl.join({vals[0]}, {vals[1]})"
    ev, od = _join(vals[0::2]), _join(vals[1::2])
    return f"tl.reshape(tl.join({ev}, {od}), [BR, G, {v}])"


def strip_source(K: int, V: int = 8) -> str:
    """The strip kernel for a K x K window over strips of V pixels, unrolled here: per window row the strip's
    own V-vector and ``nb`` on either side, split into registers (Python names), V x K FMAs."""
    P = K // 2
    nb = -(-P // V)
    n = [0]

    def fresh():
        n[0] += 1
        return f"e{n[0]}"

    lines = [f"acc{o} = tl.zeros([BR, G], tl.float32)" for o in range(V)]
    for kh in range(K):
        d = kh - P
        lines.append(f"hm = ok3 & (h3 + {d} >= 0) & (h3 + {d} < H)")
        lines.append(f"base = X + (r3 + {d}) * W + g3 * V + j3")
        vals = []
        for blk in range(-nb, nb + 1):
            m = "hm" if blk == 0 else (f"hm & (g3 >= {-blk})" if blk < 0 else f"hm & (g3 + {blk} < GW)")
            lines.append(f"xb = tl.load(base + {blk * V}, mask={m}, other=0.0)")
            vals += _split(lines, "xb", V, fresh)
        for kw in range(K):
            lines.append(f"wk = tl.load(Wt + c2 * {K * K} + {kh * K + kw}).to(tl.float32)")
            for o in range(V):
                t = o + kw - P + nb * V
                lines.append(f"acc{o} += {vals[t]}.to(tl.float32) * wk")
    lines.append("bias = tl.load(B + c2).to(tl.float32)")
    for o in range(V):
        lines.append(f"acc{o} = acc{o} + bias")
    lines.append("out = " + _join([f"acc{o}" for o in range(V)]))
    src = STRIP_SRC.replace("    BODY", "\n".join("    " + ln for ln in lines))
    return src.replace("GW: tl.constexpr = W // V", f"V: tl.constexpr = {V}\n    GW: tl.constexpr = W // V")


def load_module(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--generated")
    ap.add_argument("--json")
    ap.add_argument("--stages", default="0,1,2,3")
    args = ap.parse_args()
    torch.manual_seed(0)
    dev = "cuda"
    K = 7
    tmp = tempfile.mkdtemp()
    strips = {}
    for v in (1, 2, 4, 8):
        src = os.path.join(tmp, f"dw_strip_v{v}.py")
        with open(src, "w") as f:
            f.write(strip_source(K, v))
        strips[v] = load_module(src, f"dw_strip_v{v}").dw_strip
    gen = load_module(args.generated, "cnx_gen") if args.generated else None
    rows = []
    for si in (int(s) for s in args.stages.split(",")):
        C, S = STAGES[si]
        nbytes = N * C * S * S * 2
        copies = max(2, -(-80_000_000 // nbytes))
        sets = [(torch.randn(N, C, S, S, device=dev, dtype=torch.bfloat16),
                 torch.randn(C, 1, K, K, device=dev, dtype=torch.bfloat16) / 7,
                 torch.randn(C, device=dev, dtype=torch.bfloat16)) for _ in range(copies)]
        y = torch.empty(N, C, S, S, device=dev, dtype=torch.bfloat16)
        x0, w0, b0 = sets[0]
        ref = F.conv2d(x0.float(), w0.float(), b0.float(), padding=K // 2, groups=C)
        R = N * C * S
        floor_us = 2 * nbytes / 3.0e6
        res = {}

        def record(name, make, check=True):
            try:
                make(x0, w0, b0)()
                torch.cuda.synchronize()
            except Exception as e:  # (out of resources, compile error)
                print(f"  skip {name}: {type(e).__name__}: {str(e)[:200]}", flush=True)
                return
            err = float((y.float() - ref).norm() / ref.norm()) if check else 0.0
            us = rotating_us([make(*s) for s in sets])
            res[name] = us
            rows.append({"stage": si, "C": C, "S": S, "variant": name, "us": us, "err": err,
                         "floor_us": floor_us})
            print(f"  {name:34s} {us:8.2f} us  err {err:.1e}", flush=True)

        print(f"stage {si}: [{N}, {C}, {S}, {S}], {nbytes / 1e6:.1f} MB in, floor {floor_us:.1f} us", flush=True)
        record("cudnn NCHW", lambda x, w, b: (lambda: F.conv2d(x, w, b, padding=K // 2, groups=C)), check=False)
        xcl = [s[0].to(memory_format=torch.channels_last) for s in sets]
        cl_sets = [(xcl[i], sets[i][1], sets[i][2]) for i in range(copies)]
        us = rotating_us([(lambda x=x, w=w, b=b: F.conv2d(x, w, b, padding=K // 2, groups=C)) for x, w, b in cl_sets])
        rows.append({"stage": si, "C": C, "S": S, "variant": "cudnn channels-last", "us": us, "floor_us": floor_us})
        print(f"  {'cudnn channels-last':34s} {us:8.2f} us", flush=True)
        if gen is not None:
            kn = getattr(gen, GEN[S])
            dev_i = torch.zeros(64, dtype=torch.int32, device=dev)
            grid = N * C

            def make_gen(x, w, b, kn=kn, grid=grid):
                return lambda: kn[(grid,)](x, w, b, y, dev_i, dev_i, dev_i, 0, WATCHDOG=0, num_warps=4)
            record("gen (whole image a program)", make_gen)
        for br in (1, 2, 4, 8, 16, 32):
            bw = triton.next_power_of_2(S)
            for warps in (4, 8):
                if br * bw < 32 * warps or br * bw > 4096:
                    continue
                grid = triton.cdiv(R, br)

                def make_rows(x, w, b, br=br, bw=bw, warps=warps, grid=grid):
                    return lambda: dw_rows[(grid,)](x, w, b, y, R, C, S, S, K, br, bw, num_warps=warps)
                record(f"rows BR{br} w{warps}", make_rows)
        vmax = 8
        while S % vmax:
            vmax //= 2
        for v in sorted({vmax, min(vmax, 4)}):
            g = triton.next_power_of_2(-(-S // v))
            for br in (2, 4, 8, 16, 32, 64):
                for warps in (2, 4, 8):
                    if br * g < 32 * warps or br * g > 32 * warps * 2:
                        continue
                    grid = triton.cdiv(R, br)

                    def make_strip(x, w, b, br=br, g=g, warps=warps, grid=grid, v=v):
                        return lambda: strips[v][(grid,)](x, w, b, y, R, C, S, S, K, br, g, num_warps=warps)
                    record(f"strip V{v} BR{br} G{g} w{warps}", make_strip)
        best = min((v for k, v in res.items() if not k.startswith("cudnn")), default=None)
        if best:
            print(f"  best Kitsune-form {best:.2f} us; cudnn NCHW {res.get('cudnn NCHW', 0):.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "triton": triton.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
