"""Probe: does a kernel that prefetches the *next* kernel's weights into L2 at the end of each of its programs
shorten a chain of decode GEMVs? (loads before waits without programmatic dependent launch)

    python bench/kernels/prefetch_next_probe.py [--rounds 5] [--out FILE.json]

Runs at commit 0e2b444 only (the prefetch functions it calls were generated there; measured slower and removed
after: NOTES section 18, ``prefetch-next-h100-2026-11-24.json``).

Kitsune's own llama_decode_b1 bulk-sync kernels (generated here, full size, with their prefetch functions,
kitsune/codegen/triton_gen/prefetch.py): O projection (k3), gate/up (k4), down (k5), QKV (k0), wrapped so that
each program runs its stage and then (PF=1) the prefetch function of the next kernel's programs
``pid, pid + grid, ...``. Two layers' weights alternate (246 MB per pair, no L2 reuse); 8 layers per CUDA graph;
PF 0 and 1 alternately, ``--rounds`` times; the results are checked equal (a prefetch changes nothing).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile

import torch
from graphtime import graph_us

LINES = '''
@triton.jit(noinline=True)
def _prefetch_l2(start, nbytes, CHUNK: tl.constexpr):
    # per 128-byte line: prefetch.global.L2 (one instruction per thread and line, no bulk copy engine)
    a0 = start.to(tl.int64, bitcast=True)
    a = a0 & -128
    i = tl.arange(0, 1024) * 128
    m = i < nbytes + (a0 - a)
    tl.inline_asm_elementwise("{ .reg .pred p; setp.ne.b32 p, $2, 0; @p prefetch.global.L2 [$1]; }\\n mov.u32 $0, 0;",
                              "=r,l,r", [a + i, m.to(tl.int32)], dtype=tl.int32, is_pure=False, pack=1)
'''

WRAP = '''
@triton.jit
def w3(k2_out0, o_weight, x, k3_out0, k3_out1, k4_out0, mlp_norm_weight, gate_up_weight, ctr, err, PF: tl.constexpr):
    pid = tl.program_id(0)
    k3_linear_2(pid, k2_out0, o_weight, x, k3_out0, k3_out1, ctr, err, 0, 0)
    if PF:
        k4_linear_3_prefetch(pid, k3_out0, k3_out1, mlp_norm_weight, gate_up_weight, k4_out0, ctr, err, 0, 0)


@triton.jit
def w4(k3_out0, k3_out1, mlp_norm_weight, gate_up_weight, k4_out0, down_weight, k5_out0, ctr, err, PF: tl.constexpr):
    pid = tl.program_id(0)
    k4_linear_3(pid, k3_out0, k3_out1, mlp_norm_weight, gate_up_weight, k4_out0, ctr, err, 0, 0)
    if PF:
        k5_linear_4_prefetch(pid, k4_out0, down_weight, k3_out1, k5_out0, ctr, err, 0, 0)


@triton.jit
def w5(k4_out0, down_weight, k3_out1, k5_out0, attn_norm_weight, qkv_weight, cache_k, cache_v, k0_out0, ctr, err,
       PF: tl.constexpr):
    pid = tl.program_id(0)
    k5_linear_4(pid, k4_out0, down_weight, k3_out1, k5_out0, ctr, err, 0, 0)
    if PF:
        k0_linear_linear_0_prefetch(pid, k5_out0, attn_norm_weight, qkv_weight, cache_k, cache_v, k0_out0, ctr, err,
                                    0, 0)
        if pid < 128:
            k0_linear_linear_0_prefetch(pid + 256, k5_out0, attn_norm_weight, qkv_weight, cache_k, cache_v, k0_out0,
                                        ctr, err, 0, 0)


@triton.jit
def w0(x, attn_norm_weight, qkv_weight, cache_k, cache_v, k0_out0, k2_out0, o_weight, k3_out0, k3_out1, ctr, err,
       PF: tl.constexpr):
    pid = tl.program_id(0)
    k0_linear_linear_0(pid, x, attn_norm_weight, qkv_weight, cache_k, cache_v, k0_out0, ctr, err, 0, 0)
    if PF:
        if pid < 256:
            k3_linear_2_prefetch(pid, k2_out0, o_weight, x, k3_out0, k3_out1, ctr, err, 0, 0)
'''


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    from kitsune.codegen.aot import export_workload, generate, load_module_source, lower

    src = generate(lower(export_workload("llama_decode_b1"), "bulk-sync"))
    tmp = tempfile.mkdtemp()
    mods = {"bulk": load_module_source(src + WRAP, tmp, "prefetch_next_probe_bulk"),
            "lines": load_module_source(src + LINES + WRAP, tmp, "prefetch_next_probe_lines")}
    mod = mods["bulk"]
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(0)

    def make(name):
        shape, dt, _ = mod.TENSORS[name]
        return (torch.randn(shape, device=dev, dtype=mod.DTYPES[dt], generator=g) * 0.05).contiguous()

    weights = ["attn_norm_weight", "qkv_weight", "o_weight", "mlp_norm_weight", "gate_up_weight", "down_weight",
               "cache_k", "cache_v"]
    layers = [{n: make(n) for n in weights} for _ in range(2)]
    acts = {n: make(n) for n in ("x", "k0_out0", "k2_out0", "k3_out0", "k3_out1", "k4_out0", "k5_out0")}
    ctr = torch.zeros(64, dtype=torch.int32, device=dev)
    err = torch.zeros(1, dtype=torch.int32, device=dev)

    def step(v):
        mod = mods["bulk" if v == 0 else v]
        pf = int(v != 0)
        for i in range(a.layers):
            w, nxt = layers[i % 2], layers[(i + 1) % 2]
            A = acts
            mod.w3[(256,)](A["k2_out0"], w["o_weight"], A["x"], A["k3_out0"], A["k3_out1"], A["k4_out0"],
                           w["mlp_norm_weight"], w["gate_up_weight"], ctr, err, PF=pf, num_warps=4, num_stages=3)
            mod.w4[(256,)](A["k3_out0"], A["k3_out1"], w["mlp_norm_weight"], w["gate_up_weight"], A["k4_out0"],
                           w["down_weight"], A["k5_out0"], ctr, err, PF=pf, num_warps=4, num_stages=3)
            mod.w5[(256,)](A["k4_out0"], w["down_weight"], A["k3_out1"], A["k5_out0"], nxt["attn_norm_weight"],
                           nxt["qkv_weight"], nxt["cache_k"], nxt["cache_v"], A["k0_out0"], ctr, err, PF=pf,
                           num_warps=4, num_stages=3)
            mod.w0[(384,)](A["k5_out0"], nxt["attn_norm_weight"], nxt["qkv_weight"], nxt["cache_k"], nxt["cache_v"],
                           A["k0_out0"], A["k2_out0"], nxt["o_weight"], A["k3_out0"], A["k3_out1"], ctr, err, PF=pf,
                           num_warps=4, num_stages=3)

    variants = (0, "bulk", "lines")
    outs = {}
    for v in variants:
        acts["x"].copy_(layers[0]["attn_norm_weight"].view(1, 1, -1))
        step(v)
        torch.cuda.synchronize()
        outs[v] = (acts["k0_out0"].clone(), acts["k5_out0"].clone())
    same = all(torch.equal(x, y) for v in variants for x, y in zip(outs[0], outs[v]))
    times = {v: [] for v in variants}
    for r in range(a.rounds):
        for v in (variants if r % 2 == 0 else variants[::-1]):
            times[v].append(graph_us(lambda: step(v), reps=2) / a.layers)
    med = {v: statistics.median(t) for v, t in times.items()}
    print("per layer (O, gate/up, down, QKV; 121 MB of weights): " + ", ".join(
        f"{v or 'none'} {med[v]:.2f} us ({med[v] / med[0] - 1:+.1%}, {121e6 / med[v] / 1e6:.2f} TB/s)" for v in variants)
        + f"; results {'identical' if same else 'DIFFER'}")
    if a.out:
        with open(a.out, "w") as fh:
            json.dump({"us_per_layer": {str(k): v for k, v in times.items()}, "median": {str(k): v for k, v in med.items()},
                       "identical": same, "device": torch.cuda.get_device_name()}, fh, indent=1)


if __name__ == "__main__":
    main()
