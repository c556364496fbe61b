"""GPU A/B: chain tasks on and off (kitsune-form-regions ``chains``), and two-layer chains (``chain_min_layers``
-1), bulk-sync, per workload; checked against eager, timed as the harness times Kitsune (launch plan in a CUDA
graph, do_bench median), all in one process.

    python bench/kernels/chain_ab.py [--workloads mgn_10k,nerf_65k] [--two-layer] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))


def patched_chains(chains: bool, **opts):
    """kitsune-form-regions with ``chains`` on or off (and ``opts``) for the compiles inside the ``with``."""
    import contextlib

    import kitsune.passes.form_regions as fr

    orig = fr.FormRegionsPass

    class Patched(orig):  # the pipeline imports FormRegionsPass from the module when it builds its passes
        def __init__(self, **kw):
            super().__init__(**{"chains": chains, **opts, **kw})

    @contextlib.contextmanager
    def ctx():
        fr.FormRegionsPass = Patched
        try:
            yield
        finally:
            fr.FormRegionsPass = orig

    return ctx()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="mgn_10k,nerf_65k")
    ap.add_argument("--two-layer", action="store_true", help="also chains of two layers (chain_min_layers=-1)")
    ap.add_argument("--json")
    a = ap.parse_args()
    import torch
    from chain_gpu import measure
    from kitsune.bench.harness import flatten
    from kitsune.models import get_workload

    rows = []
    for w in a.workloads.split(","):
        model, inputs = get_workload(w).build(scale=1.0, dtype=torch.bfloat16, device="cuda")
        with torch.no_grad():
            ref = flatten(model(*inputs))
        for chains in (True, False, True):
            with patched_chains(chains):
                rows.append(measure(model, inputs, ref, workload=w, chains=chains))
        if a.two_layer:
            with patched_chains(True, chain_min_layers=-1):
                rows.append(measure(model, inputs, ref, workload=w, chains="two-layer"))
    if a.json:
        json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
