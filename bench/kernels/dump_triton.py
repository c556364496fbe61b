"""Dump the generated Triton module of every suite workload (and a few zoo models), one file each: no GPU needed.

Lowering and code generation only (nothing runs): each workload is imported at its full size on the meta
device in bf16 (as ``kitsune.codegen.aot`` does, so the conv / gemm / split-K / merged-axis paths that only
appear at realistic sizes are exercised), lowered with ``kitsune-pipeline{mode=M, gpu=h100}`` in both modes and
generated with ``generate_triton``. Zoo models (``test/models/zoo.py``, tiny real architectures) are imported
on the CPU in fp32.

Its use is a byte-for-byte check that a refactor of the code generator changes nothing::

    python bench/kernels/dump_triton.py /tmp/triton_before          # on the old commit
    python bench/kernels/dump_triton.py /tmp/triton_after           # on the new one
    diff -r /tmp/triton_before /tmp/triton_after

Files: ``<name>.<mode>.py`` (``capacity="ir"``, the default) and ``<name>.<mode>.all-profile.py``
(``capacity="all"``, ``profile=True``, ``tf32=True``: the other generator switches). A workload that fails to
import, lower or generate writes ``<name>.<mode>.error`` with the exception instead (so a change in failures
shows up in the diff too).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
import warnings

MODES = ("bulk-sync", "dataflow")
ZOO_DEFAULT = ("tv_resnet18", "tv_mobilenet_v2", "hf_llama_gqa", "gnn_gcn", "gnn_sage_max")


def _workload_graph(name: str, scale: float):
    import torch

    from kitsune.frontend.torch_export import import_module
    from kitsune.models import get_workload

    model, inputs = get_workload(name).build(scale=scale, dtype=torch.bfloat16, device="meta")
    module, _ = import_module(model, inputs, None, with_weights=False)
    return module


def _zoo_graph(name: str):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path.insert(0, os.path.join(root, "test", "models"))
    from zoo import ZOO  # noqa: E402  (test/models/zoo.py)

    from kitsune.frontend.torch_export import import_module

    model, inputs = ZOO[name]()
    module, _ = import_module(model, inputs, None, with_weights=False)
    return module


def dump(out: str, name: str, graph_fn, modes) -> None:
    from kitsune.codegen.to_triton import generate_triton  # the facade: works on commits before and after triton_gen
    from kitsune.context import make_context
    from kitsune.passes.pipeline import KitsunePipelinePass

    t0 = time.perf_counter()
    try:
        graph = graph_fn()
        print(f"{name}: imported ({time.perf_counter() - t0:.1f} s)", flush=True)
    except Exception:  # noqa: BLE001
        for m in modes:
            _write(out, f"{name}.{m}.error", "import\n" + traceback.format_exc(limit=-3))
        print(f"{name}: import failed", flush=True)
        return
    for m in modes:
        t1 = time.perf_counter()
        try:
            low = graph.clone()
            KitsunePipelinePass(mode=m, gpu="h100").apply(make_context(), low)
            _write(out, f"{name}.{m}.py", generate_triton(low, capacity="ir"))
            _write(out, f"{name}.{m}.all-profile.py", generate_triton(low, capacity="all", tf32=True, profile=True))
            status = "ok"
        except Exception as e:  # noqa: BLE001
            _write(out, f"{name}.{m}.error", f"{type(e).__name__}: {e}\n")
            status = f"failed ({type(e).__name__})"
        print(f"{name} {m}: {status} ({time.perf_counter() - t1:.1f} s)", flush=True)


def _write(out: str, fname: str, text: str) -> None:
    with open(os.path.join(out, fname), "w") as fh:
        fh.write(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="directory to write into (created)")
    ap.add_argument("--workloads", default="all", help="comma list of suite workloads, 'all' or 'none'")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--scale", type=float, default=1.0, help="workload scale (1.0: the spec's sizes)")
    ap.add_argument("--zoo", default=",".join(ZOO_DEFAULT), help="comma list of zoo models, or 'none'")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    os.makedirs(args.out, exist_ok=True)
    from kitsune.models import WORKLOADS

    modes = args.modes.split(",")
    names = [] if args.workloads == "none" else list(WORKLOADS) if args.workloads == "all" \
        else args.workloads.split(",")
    for n in names:
        dump(args.out, n, lambda n=n: _workload_graph(n, args.scale), modes)
    for z in ([] if args.zoo == "none" else args.zoo.split(",")):
        dump(args.out, f"zoo_{z}", lambda z=z: _zoo_graph(z), modes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
