"""A/B: the number of flash-decoding parts of a decode attention (``kitsune-split-reduction``'s choice,
``DecodeAttentionConfig.for_sms``: about two work items per SM) measured in the whole program's launch, not alone.

    python bench/kernels/attn_parts_ab.py --workloads llama_decode_b1,llama_decode_b8 --parts 0,5,25,41 [--rounds 3]
                                          [--mode bulk-sync] [--out FILE.json]
    python bench/kernels/attn_parts_ab.py --workloads llama_decode_b8 --parts 0 --stages 2,3,4,5 --warps 4,8

Per workload and parts count (0: the pass's own choice; a count that does not divide the key length becomes the
largest divisor below it, as the pass does) and pipeline depth / warps of the partial's kernel (``--stages``,
``--warps``: the config's, 0 the pass's), one compiled program (its database launch setting), checked against
eager (bf16, rel. err < 2e-2) and timed in CUDA graphs (``graph_us``), the counts alternated ``--rounds`` times,
the order flipping every round. Prints the medians and each count / the pass's choice - 1.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
from dataclasses import replace

import torch
from graphtime import graph_us
from pdl_ab import worst

import kitsune
from kitsune.bench.harness import get_source
from kitsune.schedule import configs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="llama_decode_b1,llama_decode_b8")
    ap.add_argument("--parts", default="0,5,25,41")
    ap.add_argument("--mode", default="bulk-sync")
    ap.add_argument("--stages", default="0")
    ap.add_argument("--warps", default="0")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    counts = [(int(n), int(s), int(w)) for n in a.parts.split(",") for s in a.stages.split(",")
              for w in a.warps.split(",")]
    orig = configs.DecodeAttentionConfig.for_sms.__func__
    rows = []
    for name in a.workloads.split(","):
        model, inputs = get_source(name).build(1.0, torch.bfloat16, "cuda", 0)
        with torch.no_grad():
            ref = model(*inputs)
        ref = ref if isinstance(ref, (list, tuple)) else [ref]
        progs = {}
        for key in counts:
            def for_sms(cls, p, sms, key=key):
                n, s, w = key
                c = orig(cls, p, sms)
                c = c if n == 0 else replace(c, PARTS=n, BN=64 if -(-p.K // n) >= 64 else 32)
                return replace(c, stages=s or c.stages, warps=w or c.warps)

            configs.DecodeAttentionConfig.for_sms = classmethod(for_sms)
            importlib.import_module("kitsune.compile")._lowered.clear()  # (lowerings are cached by graph)
            try:
                fn = kitsune.compile(model, inputs, mode=a.mode, device="cuda", cuda_graph=False, cache=False)
            finally:
                configs.DecodeAttentionConfig.for_sms = classmethod(orig)
            prog = fn.program
            mod, st = prog.module, prog.state
            env = {**prog._tensors, **prog._prepare(inputs)}
            outs = mod.launch(st, env)
            torch.cuda.synchronize()
            progs[key] = (mod, st, env, worst(outs, ref), len(mod.KERNELS), [k["grid"] for k in mod.KERNELS])
        times = {n: [] for n in counts}
        for r in range(a.rounds):
            for n in (counts if r % 2 == 0 else counts[::-1]):
                mod, st, env = progs[n][:3]
                times[n].append(graph_us(lambda: mod.launch(st, env)))
        med = {n: statistics.median(t) for n, t in times.items()}
        base = med[counts[0]]
        for key in counts:
            n, s, w = key
            err, nk, grids = progs[key][3:]
            print(f"{name:18s} parts {n:3d} ({'pass' if n == 0 else 'forced'}) stages {s or '-'} warps {w or '-'} "
                  f"kernels {nk:2d} grids {grids}  {med[key]:8.1f} us {med[key] / base - 1:+6.1%}  err {err:.1e} "
                  f"{'ok' if err < 2e-2 else 'WRONG'}", flush=True)
            rows.append({"workload": name, "parts": n, "stages": s, "warps": w, "us": times[key],
                         "median_us": med[key], "err": err, "grids": grids, "pdl": progs[key][1].get("pdl"),
                         "device": torch.cuda.get_device_name()})
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
