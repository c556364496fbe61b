"""`make demo`: the main job on built-in examples.

1. examples/mlp_softmax.mlir through kitsune-opt (graph-decompose, graph-canonicalize),
   printing the IR, and both versions through the reference interpreter.
2. When the importer is present: a built-in workload at small scale imported from
   torch.export, run through the interpreter and compared with torch eager.
3. kitsune.compile on a small GPT-3-style MLP in both schedules: the generated Triton
   runs on the GPU when there is one, else under Triton's CPU interpreter; compared
   with torch eager, with the compile report.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from kitsune.context import make_context, parse_module
from kitsune.interpreter import find_function, interpret
from kitsune.passes.graph_canonicalize import GraphCanonicalizePass
from kitsune.passes.graph_decompose import GraphDecomposePass
from kitsune.tools.run import random_inputs

ROOT = Path(__file__).resolve().parent.parent


def mlir_demo() -> None:
    path = ROOT / "examples" / "mlp_softmax.mlir"
    text = path.read_text()
    module = parse_module(text, str(path))
    print(f"== {path.name}: graph IR as written")
    print(module)
    inputs = random_inputs(find_function(module, "main"), seed=0)
    before = interpret(module, inputs)
    GraphDecomposePass().apply(make_context(), module)
    GraphCanonicalizePass().apply(make_context(), module)
    module.verify()
    print("== after graph-decompose,graph-canonicalize")
    print(module)
    after = interpret(module, inputs)
    out = before[0]
    err = float(np.max(np.abs(after[0] - out)))
    print(f"== interpreter: output shape {list(out.shape)}, row sums (softmax) {np.round(out.sum(1)[:4], 6).tolist()}...")
    print(f"   before vs after the passes: max |diff| = {err:.2e}")
    if err > 1e-5:
        raise SystemExit("demo: the passes changed the result")


def import_demo() -> None:
    try:
        from kitsune.frontend.torch_export import demo as frontend_demo  # type: ignore
    except ImportError:
        return
    frontend_demo()


def compile_demo() -> None:
    import os

    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported
    import kitsune
    from kitsune.models import get_workload

    model, inputs = get_workload("mlp_gpt3_T256").build(0.02, torch.float32, "cpu", seed=0)
    if torch.cuda.is_available():
        model, inputs = model.cuda(), tuple(x.cuda() for x in inputs)
    with torch.no_grad():
        ref = model(*inputs)
    for mode in ("dataflow", "bulk-sync"):
        f = kitsune.compile(model, inputs, mode=mode)
        out = f(*inputs)
        err = float((out - ref).norm() / ref.norm())
        print(f"== kitsune.compile(mlp_gpt3_T256 at scale 0.02, mode={mode!r}) on {f.device}: "
              f"rel. err vs torch eager {err:.1e}")
        if err > 1e-4:
            raise SystemExit("demo: kitsune.compile disagrees with torch")
        if mode == "dataflow":
            print(f.report())


def main() -> int:
    mlir_demo()
    import_demo()
    compile_demo()
    return 0


if __name__ == "__main__":
    sys.exit(main())
