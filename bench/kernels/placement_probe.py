"""What ``placement=auto`` chooses for each suite workload at full size (CPU only: lowering, no codegen).

    python bench/kernels/placement_probe.py [--workloads all|a,b] [--mode dataflow|bulk-sync]

Per workload: the dataflow program's kernels, each with its placement attribute and its stages (``-``: a
kernel of bulk-sync's kind), to compare the cost model's choice with the placement measured fastest
(``kitsune-tune --placement``) without a GPU. ``KITSUNE_TUNING_DB=0``: with heuristic configs.
"""

from __future__ import annotations

import argparse
import sys
import warnings


def kernels_of(module) -> list[tuple[str, str, list[str]]]:
    from kitsune.dialects import gpu_queue as gq

    out = []
    for k in [o for o in module.walk() if isinstance(o, gq.KernelOp)]:
        pl = k.attributes.get("placement")
        stages = [s.sym_name.data if hasattr(s, "sym_name") else s.name for s in k.walk() if isinstance(s, gq.StageOp)]
        out.append((k.sym_name.data if hasattr(k, "sym_name") else "?", pl.data if pl is not None else "-", stages))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="all")
    ap.add_argument("--mode", default="dataflow", help="dataflow (placement=auto) or bulk-sync")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    import torch

    from kitsune.context import make_context
    from kitsune.frontend.torch_export import import_module
    from kitsune.models import WORKLOADS, get_workload
    from kitsune.passes.pipeline import KitsunePipelinePass

    names = list(WORKLOADS) if args.workloads == "all" else args.workloads.split(",")
    for n in names:
        model, inputs = get_workload(n).build(scale=1.0, dtype=torch.bfloat16, device="meta")
        module, _ = import_module(model, inputs, None, with_weights=False)
        KitsunePipelinePass(mode=args.mode, gpu="h100", placement="auto").apply(make_context(), module)
        ks = kernels_of(module)
        print(f"{n}: {len(ks)} kernel(s)")
        for name, pl, stages in ks:
            print(f"   {name:<5} {pl:<10} {', '.join(stages)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
