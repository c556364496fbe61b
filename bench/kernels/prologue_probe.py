"""Probe: a small contraction as its consumer GEMM's operand prologue (form-regions' ``small_k``), DLRM's bottom
layers 0 and 1 in one kernel, against the two kernels; and the prologue's loads prefetched one K step ahead.

    python bench/kernels/prologue_probe.py [dlrm_b2048] [--json F]

Compiles the workload in bulk-sync mode twice (``small_k`` 0: separate kernels; as shipped: fused), and a text
variant of the fused kernel whose K loop loads the prologue's operands (loads whose address depends only on the
loop index and on values from before the loop) for the next step before this step's dots (``prefetch_text``):
Triton pipelines only the loads that feed a dot through cp.async, and the layer-0 weight's 13-element rows
(26 bytes) are not 4-byte aligned, so each K step otherwise waits on an L2 round trip before its first dot.
Per variant: each kernel alone (module_probe's method) and the whole launch plan's CUDA-graph replay (do_bench
median with its L2 flush, as the harness), outputs against the separate program.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))

_LOAD = re.compile(r"^(\s+)(v\d+) = (tl\.load\(.*)$")


def prefetch_text(src: str, fn_name: str) -> str:
    """``src`` with the first K loop (``for kN in range(a, b, s):``) of stage function ``fn_name`` loading its
    loop-invariant-address operands one step ahead (registers, rotated at the top of the step)."""
    lines = src.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {fn_name}("))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(("def ", "@")))
    loop = next((i for i in range(start, end) if re.match(r"\s+for k\d+ in range\(", lines[i])), None)
    if loop is None:
        return src
    m = re.match(r"(\s+)for (k\d+) in range\((\S+), (\S+), (\S+)\):", lines[loop])
    ind, kv, lo, hi, step = m[1], m[2], m[3], m[4], m[5]
    body_ind = None
    j = loop + 1
    defined_in_loop: set[str] = set()
    body = []
    while j < end and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > len(ind)):
        body.append(lines[j])
        j += 1
    body_ind = re.match(r"(\s+)", body[0])[1]
    for ln in body:
        mm = re.match(r"\s+(\w+) = ", ln)
        if mm:
            defined_in_loop.add(mm[1])
    # the anchor dot's own operands (a dot into an accumulator from before the loop): Triton pipelines them
    anchor_ops = set()
    for ln in body:
        mm = re.match(r"\s+(acc\d+) = _dot_lp\((.*)\)$", ln)
        if mm and mm[1] not in defined_in_loop - {mm[1]} and mm[1] not in {x for x in defined_in_loop
                                                                           if f"{x} = tl.zeros" in "\n".join(body)}:
            anchor_ops |= set(re.findall(r"\bv\d+\b", mm[2]))
    pre, rot, new_body = [], [], []
    for ln in body:
        mm = _LOAD.match(ln)
        names = set(re.findall(r"\b[a-z_]\w*\b", mm[3])) if mm else set()
        if mm and len(mm[1]) == len(body_ind) and not (names & (defined_in_loop - {kv})) and mm[2] not in anchor_ops:
            v, expr = mm[2], mm[3]
            nxt = re.sub(rf"\b{kv}\b", f"{kv}_next", expr)
            first = re.sub(rf"\b{kv}\b", f"({lo})", expr)
            pre.append(f"{ind}{v}_next = {first}")
            rot.append((v, nxt))
            continue
        new_body.append(ln)
    if not rot:
        return src
    head = [f"{body_ind}{v} = {v}_next" for v, _ in rot]
    head.append(f"{body_ind}{kv}_next = tl.minimum({kv} + {step}, {hi} - {step})")
    head += [f"{body_ind}{v}_next = {nxt}" for v, nxt in rot]
    out = lines[:loop] + pre + [lines[loop]] + head + new_body + lines[j:]
    return "\n".join(out) + "\n"


def main() -> None:
    import torch
    from graphtime import kernels_alone_us
    from triton.testing import do_bench

    import kitsune
    import kitsune.passes.form_regions as fr
    from kitsune.bench.harness import flatten
    from kitsune.compile import clear_cache
    from kitsune.models import get_workload
    from kitsune.runtime.program import load_source
    from kitsune.tools.tune import launch_plan_graph

    ap = argparse.ArgumentParser()
    ap.add_argument("workload", nargs="?", default="dlrm_b2048")
    ap.add_argument("--json")
    a = ap.parse_args()
    model, inputs = get_workload(a.workload).build(scale=1.0, dtype=torch.bfloat16, device="cuda")
    variants = {}
    builder = fr._Former
    small = vars(builder)["small_contraction_only"]  # (the staticmethod object itself)
    with torch.no_grad():
        builder.small_contraction_only = staticmethod(lambda g, k: False)  # as small_k=0
        variants["separate"] = kitsune.compile(model, inputs, mode="bulk-sync", cache=False)
        builder.small_contraction_only = small
        clear_cache()  # the lowering is memoised by the graph's text: lower again with the prologue
        variants["fused"] = kitsune.compile(model, inputs, mode="bulk-sync", cache=False)
        clear_cache()
        variants["fused+prefetch"] = kitsune.compile(model, inputs, mode="bulk-sync", cache=False)
        ref = [o.float().clone() for o in flatten(variants["separate"](*inputs))]
    cm = variants["fused+prefetch"]
    src = cm.program.source
    text = src
    for fn in [ln.split("(")[0][4:] for ln in src.splitlines() if re.match(r"def k\d+_", ln)]:
        body = src.split(f"def {fn}(", 1)[1].split("\ndef ", 1)[0]
        if body.count("_dot_lp(") >= 2 and re.search(r"\n {12}acc\d+ = tl.zeros", body):  # a dot inside the K loop
            text = prefetch_text(text, fn)
            print(f"prefetch in {fn}", flush=True)
    cm.program.module = load_source(text, interpret=False)
    for key in ("branches", "streams", "bump"):
        cm.program.state.pop(key, None)
    cm.program.state["counters"].zero_()
    cm.program.state["epoch"].zero_()
    recs = []
    for name, cm in variants.items():
        prog = cm.program
        with torch.no_grad():
            outs = [o.float() for o in flatten(cm(*inputs))]
        err = max(float((o - r).abs().max()) for o, r in zip(outs, ref))
        mod, st = prog.module, prog.state
        env = {**prog._tensors, **prog._prepare(list(flatten(inputs)))}
        kern = {n: round(us, 2) for n, us in kernels_alone_us(st, env, mod.KERNELS).items()}
        st["counters"].zero_()  # (the kernels alone left their tickets counted from zero)
        st["epoch"].zero_()
        with torch.no_grad():
            g = launch_plan_graph(cm, inputs)
        ms = do_bench(g.replay, warmup=25, rep=300, return_mode="median")
        recs.append({"variant": name, "replay_us": ms * 1e3, "max_err": err, "kernels_alone_us": kern})
        print(f"{name:>15}: replay {ms * 1e3:6.1f} us, max err {err:.3g}; alone: "
              + " ".join(f"{n} {u}" for n, u in kern.items()), flush=True)
    if a.json:
        json.dump({"meta": {"device": torch.cuda.get_device_name(), "torch": torch.__version__}, "records": recs},
                  open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
