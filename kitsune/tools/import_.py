"""kitsune-import: a PyTorch model (torch.export) -> graph-dialect MLIR + weights.

    kitsune-import model.py[:factory] -o out.mlir --weights out.npz
    kitsune-import --list
    kitsune-import --workload nerf_65k --scale 0.1 [--dtype bf16] -o nerf.mlir --weights nerf.npz
    kitsune-import --workload llama_decode_b8 --device meta -o llama.mlir   # full size, no weights

``model.py`` defines a factory (default name ``make_model``) returning
``(module, example_inputs)`` or ``(module, example_inputs, dynamic_shapes)``.
Without ``-o`` the IR goes to stdout. Files are written only when the import
succeeds; unsupported ops are listed all at once (file:line: error: ...), exit 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

from kitsune.tools.diagnostics import run_with_diagnostics

DTYPES = {"fp32": "float32", "f32": "float32", "float32": "float32", "bf16": "bfloat16", "bfloat16": "bfloat16",
          "fp16": "float16", "f16": "float16", "float16": "float16"}


def load_factory(spec: str):
    path, _, name = spec.partition(":")
    if not os.path.exists(path):
        raise FileNotFoundError(2, "no such file", path)
    mod_name = "_kitsune_import_" + os.path.splitext(os.path.basename(path))[0]
    s = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(s)
    sys.modules[mod_name] = mod
    s.loader.exec_module(mod)
    name = name or "make_model"
    if not hasattr(mod, name):
        raise ValueError(f"{path} has no factory function {name!r} (give it as {path}:NAME)")
    out = getattr(mod, name)()
    if not isinstance(out, tuple) or len(out) not in (2, 3):
        raise ValueError(f"{path}:{name}() must return (module, example_inputs[, dynamic_shapes])")
    return out if len(out) == 3 else (*out, None)


def main(argv: list[str] | None = None) -> int:
    def body() -> int:
        ap = argparse.ArgumentParser(prog="kitsune-import", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
        ap.add_argument("model", nargs="?", help="path/model.py[:factory] (default factory: make_model)")
        ap.add_argument("-o", "--output", help="output .mlir file (default: stdout)")
        ap.add_argument("--weights", help="write the weights (parameters, buffers, constants) to this .npz")
        ap.add_argument("--list", action="store_true", help="list the built-in workloads")
        ap.add_argument("--workload", help="import a built-in workload (see --list)")
        ap.add_argument("--scale", type=float, default=1.0, help="workload scale (default 1.0)")
        ap.add_argument("--dtype", default="fp32", choices=sorted(DTYPES), help="workload dtype (default fp32)")
        ap.add_argument("--device", default="cpu", choices=["cpu", "meta"],
                        help="build the workload on meta: fast full-size import, no weights")
        ap.add_argument("--seed", type=int, default=0, help="workload weight seed")
        ap.add_argument("--no-loc", action="store_true", help="print without op locations")
        args = ap.parse_args(argv)

        if args.list:
            from kitsune.models import WORKLOADS

            for name, w in WORKLOADS.items():
                print(f"{name:18s} {w.description}")
            return 0
        if bool(args.model) == bool(args.workload):
            ap.error("give a model file or --workload NAME (or --list)")

        import warnings

        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        import torch

        from kitsune.frontend.torch_export import (UnsupportedOpsError, import_module,
                                                 module_to_text, op_counts, save_weights)

        if args.workload:
            from kitsune.models import get_workload

            w = get_workload(args.workload)
            model, inputs = w.build(scale=args.scale, dtype=getattr(torch, DTYPES[args.dtype]), device=args.device,
                                    seed=args.seed)
            dyn = None
        else:
            model, inputs, dyn = load_factory(args.model)
        try:
            module, weights = import_module(model, inputs, dyn, with_weights=args.weights is not None)
        except UnsupportedOpsError as e:
            print(f"kitsune-import: error: {e}", file=sys.stderr)
            return 1
        text = module_to_text(module, debuginfo=not args.no_loc)
        if args.weights and args.device == "meta":
            print("kitsune-import: warning: a meta-device model has no weight values; the weights file is empty",
                  file=sys.stderr)
        # everything succeeded: write
        if args.output:
            with open(args.output, "w") as fh:
                fh.write(text)
            counts = op_counts(module)
            print(f"kitsune-import: wrote {args.output}: {sum(counts.values())} graph ops", file=sys.stderr)
        else:
            sys.stdout.write(text)
        if args.weights:
            save_weights(args.weights, weights)
        return 0

    return run_with_diagnostics(body, "kitsune-import")


if __name__ == "__main__":
    sys.exit(main())
