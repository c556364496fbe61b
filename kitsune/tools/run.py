"""kitsune-run: run a function of an .mlir file through the reference interpreter.

    kitsune-run model.mlir                      # random inputs (seeded)
    kitsune-run model.mlir --inputs in.npz      # inputs by argument name or arg<i>
    kitsune-run model.mlir -p graph-decompose   # run passes first
    kitsune-run model.mlir --save out.npz

Prints each output's shape, dtype and checksums (sum, sum of |x|).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from kitsune.tools.diagnostics import run_with_diagnostics


def random_inputs(f, seed: int = 0, index_high: int = 2, weights: dict | None = None) -> list[np.ndarray]:
    """Seeded random inputs for a func: normal floats, integers in [0, index_high), bools."""
    from xdsl.dialects.builtin import TensorType

    from kitsune.derived_weights import available, resolve
    from kitsune.dialects.values import np_dtype
    from kitsune.interpreter import arg_names

    rng = np.random.default_rng(seed)
    out = []
    for name, t in zip(arg_names(f), f.function_type.inputs.data):
        if weights is not None and available(name, weights):  # (a derived parameter from the weights it names)
            out.append(np.asarray(resolve(name, weights)))
            continue
        if not isinstance(t, TensorType):
            raise ValueError(f"argument {name} is not a tensor")
        shape = [d if d >= 0 else 1 for d in t.get_shape()]
        dt = np_dtype(t.get_element_type())
        if dt.kind == "f":
            out.append(rng.standard_normal(shape).astype(dt))
        elif dt == np.bool_:
            out.append(rng.integers(0, 2, shape).astype(bool))
        else:
            out.append(rng.integers(0, index_high, shape).astype(dt))
    return out


def main(argv: list[str] | None = None) -> int:
    def body() -> int:
        ap = argparse.ArgumentParser(prog="kitsune-run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
        ap.add_argument("file", help="input .mlir file")
        ap.add_argument("--fn", default="main", help="function to run (default: main)")
        ap.add_argument("--inputs", help=".npz file with inputs keyed by argument name (kitsune.name) or arg<i>; "
                                         "arguments it lacks are drawn at random")
        ap.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
        ap.add_argument("--index-high", type=int, default=2,
                        help="random integer inputs are drawn from [0, N) (default 2)")
        ap.add_argument("-p", "--passes", default="", help="pass pipeline to apply first (kitsune-opt syntax)")
        ap.add_argument("--save", help="write the outputs to this .npz file")
        args = ap.parse_args(argv)

        from kitsune.context import parse_module
        from kitsune.interpreter import arg_names, find_function, interpret

        with open(args.file) as fh:
            module = parse_module(fh.read(), args.file)
        if args.passes:
            from xdsl.passes import PassPipeline

            from kitsune.context import make_context
            from kitsune.passes import ALL_PASSES
            from xdsl.universe import Universe

            avail = dict(Universe.get_multiverse().all_passes)
            avail.update(ALL_PASSES)
            PassPipeline.parse_spec(avail, args.passes).apply(make_context(), module)
            module.verify()
        f = find_function(module, args.fn)
        given = dict(np.load(args.inputs)) if args.inputs else {}
        names = arg_names(f)
        for i, n in enumerate(names):
            if f"arg{i}" in given and n not in given:
                given[n] = given[f"arg{i}"]
        inputs = random_inputs(f, args.seed, args.index_high, given)
        outs = interpret(module, inputs, args.fn)
        for i, o in enumerate(outs):
            o = np.asarray(o)
            s = float(np.sum(o, dtype=np.float64))
            a = float(np.sum(np.abs(o), dtype=np.float64))
            print(f"output #{i}: shape {list(o.shape)} dtype {o.dtype} sum {s:.6g} abs-sum {a:.6g}")
        if args.save:
            np.savez(args.save, **{f"out{i}": np.asarray(o) for i, o in enumerate(outs)})
        return 0

    return run_with_diagnostics(body, "kitsune-run")


if __name__ == "__main__":
    sys.exit(main())
