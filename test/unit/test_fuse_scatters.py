"""kitsune-fuse-scatters (a scatter-accumulate into the epilogue of the task computing its source rows) and
fuse-copies taking casts (a concatenation with a cast read as K segments)."""

from __future__ import annotations

import numpy as np
import pytest

from kitsune.context import make_context, parse_module

_EDGES = """
func.func @main(%h: tensor<40x16xf32>, %w: tensor<16x16xf32>, %e: tensor<40x16xf32>, %dst: tensor<40xi64>,
                %x: tensor<9x16xf32>, %w2: tensor<8x32xf32>) -> (tensor<40x16xf32>, tensor<9x8xf32>) {
  %m = graph.linear %h, %w : tensor<40x16xf32>, tensor<16x16xf32> -> tensor<40x16xf32>
  %r = graph.relu %m : tensor<40x16xf32> -> tensor<40x16xf32>
  %out = graph.add %e, %r : tensor<40x16xf32>, tensor<40x16xf32> -> tensor<40x16xf32>
  %z = graph.constant dense<0.0> : tensor<9x16xf32>
  %agg = graph.index_add %z, %dst, %r {dim = 0} : tensor<9x16xf32>, tensor<40xi64>, tensor<40x16xf32> -> tensor<9x16xf32>
  %c = graph.concat %x, %agg {dim = 1} : tensor<9x16xf32>, tensor<9x16xf32> -> tensor<9x32xf32>
  %n = graph.linear %c, %w2 : tensor<9x32xf32>, tensor<8x32xf32> -> tensor<9x8xf32>
  func.return %out, %n : tensor<40x16xf32>, tensor<9x8xf32>
}
"""

_PASSES = ("graph-canonicalize", "kitsune-form-regions", "kitsune-materialize", "kitsune-fuse-copies")


def _lower(text, fuse: bool):
    from kitsune.passes import ALL_PASSES

    m = parse_module(text)
    for name in _PASSES + (("kitsune-fuse-scatters",) if fuse else ()):
        ALL_PASSES[name]()().apply(make_context(), m)
    m.verify()
    return m


def _inputs(seed):
    rng = np.random.default_rng(seed)
    dst = rng.integers(0, 9, 40)
    dst[dst == 4] = 5  # a node no edge reaches (an empty segment); repeats everywhere else
    return [rng.standard_normal((40, 16)), rng.standard_normal((16, 16)), rng.standard_normal((40, 16)),
            dst.astype(np.int64), rng.standard_normal((9, 16)), rng.standard_normal((8, 32))]


def test_scatter_joins_the_producer_of_its_rows():
    """The index_add moves into the task of the linear that computes its rows: one task fewer, the producer's
    last result is the scatter, the relu'd rows no longer leave it; the reference interpreter agrees before and
    after, with repeated and missing indices."""
    from kitsune.dialects import dataflow as df
    from kitsune.interpreter import interpret

    before = _lower(_EDGES, fuse=False)
    after = _lower(_EDGES, fuse=True)
    tb = [o for o in before.walk() if isinstance(o, df.TaskOp)]
    ta = [o for o in after.walk() if isinstance(o, df.TaskOp)]
    assert len(ta) == len(tb) - 1
    prod = next(t for t in ta if any(o.name == "graph.linear" for o in t.body.walk())
                and any(o.name == "graph.index_add" for o in t.body.walk()))
    assert prod.outs[-1].type.get_shape() == (9, 16) and prod.outs[0].type.get_shape() == (40, 16)
    assert not any(o.name == "graph.index_add" for t in ta if t is not prod for o in t.body.walk())
    ref = parse_module(_EDGES)
    for seed in range(3):
        args = _inputs(seed)
        for a, b in zip(interpret(after, args, f64=True), interpret(ref, args, f64=True)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_cast_and_concat_task_is_inlined():
    """cat(x, cast(agg)) before a GEMM is a copy: inlined into the GEMM, whose operand it becomes."""
    from kitsune.passes.fuse_copies import is_copy
    from kitsune.dialects import dataflow as df

    text = """
func.func @main(%x: tensor<9x16xbf16>, %a: tensor<9x16xf32>, %w: tensor<8x32xbf16>) -> tensor<9x8xbf16> {
  %c16 = graph.cast %a : tensor<9x16xf32> -> tensor<9x16xbf16>
  %c = graph.concat %x, %c16 {dim = 1} : tensor<9x16xbf16>, tensor<9x16xbf16> -> tensor<9x32xbf16>
  %n = graph.linear %c, %w : tensor<9x32xbf16>, tensor<8x32xbf16> -> tensor<9x8xbf16>
  func.return %n : tensor<9x8xbf16>
}"""
    m = _lower(text, fuse=True)
    tasks = [o for o in m.walk() if isinstance(o, df.TaskOp)]
    assert len(tasks) == 1 and not is_copy(tasks[0])
    assert {o.name for o in tasks[0].body.walk()} >= {"graph.cast", "graph.concat", "graph.linear"}


@pytest.mark.parametrize("mode", ["bulk-sync", "dataflow"])
def test_fused_scatter_end_to_end(mode):
    """A MeshGraphNet step on the CPU (Triton's interpreter): the edge MLP's second GEMM adds its rows into the
    node accumulator itself (``_scatter_add`` in its stage, the accumulator zeroed before its kernel), the
    messages are not stored, no kernel of its own scatters; outputs match eager."""
    import torch

    import kitsune
    from kitsune.models import get_workload

    model, inputs = get_workload("mgn_10k").build(scale=0.02, dtype=torch.float32, device="cpu")
    cm = kitsune.compile(model, inputs, mode=mode, device="cpu")
    src = cm.source
    stages = src.split("# stage ")[1:]
    scat = [s for s in stages if "_scatter_add(" in s.split("@triton.jit")[0]]
    assert len(scat) == 1 and "(contraction)" in scat[0].split("\n")[0], [s.split("\n")[0] for s in stages]
    assert not any("(gather)" in s.split("\n")[0] for s in stages)
    # (the accumulator zeroed before the kernel of the scattering stage, whichever it is)
    kernels = cm.program.module.KERNELS
    scattering = [k["name"] for k in kernels
                  if any("_scatter_add(" in s.split("@triton.jit")[0] for s in src.split(f"def {k['name']}_")[1:])]
    assert [k["name"] for k in kernels if k["zero"]] == scattering and len(scattering) == 1
    with torch.no_grad():
        ref = model(*inputs)
    for o, r in zip(cm(*inputs), ref):
        torch.testing.assert_close(o, r, rtol=1e-4, atol=1e-4)
