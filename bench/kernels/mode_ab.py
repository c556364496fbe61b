"""A/B: dataflow against bulk-sync of the same workloads, timed alternately in one process (the harness times each
mode once, one after the other, so a few percent between two equal programs is run-to-run spread).

    python bench/kernels/mode_ab.py [--workloads dlrm_b2048,mgn_10k,inception_b8] [--rounds 6] [--json OUT]

Per workload, both modes compiled (the dataflow one with its packaged placement), checked against eager (bf16,
rel. err < 2e-2), then their launch plans' CUDA graphs timed with do_bench alternately, ``--rounds`` times, the order
flipping every round; prints each mode's median and spread, whether the two generated modules are identical, and
dataflow / bulk-sync.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

import torch
from triton.testing import do_bench

import kitsune
from kitsune.bench.harness import flatten, rel_errors
from kitsune.models import get_workload
from kitsune.tools.tune import launch_plan_graph

MODES = ("bulk-sync", "dataflow")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="dlrm_b2048,mgn_10k,inception_b8")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    out = []
    for w in a.workloads.split(","):
        model, inputs = get_workload(w).build(scale=1.0, dtype=torch.bfloat16, device="cuda")
        with torch.no_grad():
            ref = flatten(model(*inputs))
        progs, graphs = {}, {}
        for m in MODES:
            cm = kitsune.compile(model, inputs, mode=m)
            err = max(rel_errors(flatten(cm(*inputs)), ref))
            if err > 2e-2:
                print(f"{w} {m}: wrong (rel. err {err:.2e})", flush=True)
                return 1
            progs[m], graphs[m] = cm, launch_plan_graph(cm, inputs)
        times = {m: [] for m in MODES}
        for r in range(a.rounds):
            for m in (MODES if r % 2 == 0 else MODES[::-1]):
                times[m].append(do_bench(graphs[m].replay, warmup=25, rep=200, return_mode="median") * 1e3)
        rec = {"workload": w, "placement": progs["dataflow"].placement,
               "same_code": progs["dataflow"].source == progs["bulk-sync"].source,
               **{f"{m}_us": times[m] for m in MODES}}
        med = {m: statistics.median(times[m]) for m in MODES}
        rec["dataflow_over_bulk_sync"] = med["dataflow"] / med["bulk-sync"]
        out.append(rec)
        print(f"{w}: placement {rec['placement']}, same code {rec['same_code']}; "
              + "; ".join(f"{m} {med[m]:.1f} us (range {min(times[m]):.1f}-{max(times[m]):.1f})" for m in MODES)
              + f"; dataflow / bulk-sync {rec['dataflow_over_bulk_sync']:.3f}", flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(dict(device=torch.cuda.get_device_name(), rows=out), fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
