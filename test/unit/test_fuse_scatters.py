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
    # (the accumulator zeroed before the kernel of the scattering stage, whichever it is: by the runtime, or by
    # the kernel before it, which then takes the buffer as an argument)
    kernels = cm.program.module.KERNELS
    names = [k["name"] for k in kernels]
    scattering = [k["name"] for k in kernels
                  if any("_scatter_add(" in s.split("@triton.jit")[0] for s in src.split(f"def {k['name']}_")[1:])]
    assert len(scattering) == 1
    j = names.index(scattering[0])
    zeroed = [k["name"] for k in kernels if k["zero"]]
    fills = [n for n in names if "    _zero_fill(" in src.split(f"\ndef {n}(")[1].split("\ndef ")[0]]
    assert zeroed + fills == [names[j]] or (not zeroed and fills and names.index(fills[0]) < j), (zeroed, fills)
    with torch.no_grad():
        ref = model(*inputs)
    for o, r in zip(cm(*inputs), ref):
        torch.testing.assert_close(o, r, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- the accumulation type of a 16-bit scatter


def _bf16_scatter(accumulate: str | None) -> str:
    attr = f', accumulate = "{accumulate}"' if accumulate else ""
    return f"""
func.func @main(%h: tensor<40x16xbf16>, %w: tensor<16x16xbf16>, %dst: tensor<40xi64>) -> tensor<9x16xbf16> {{
  %m = graph.linear %h, %w : tensor<40x16xbf16>, tensor<16x16xbf16> -> tensor<40x16xbf16>
  %z = graph.constant dense<0.0> : tensor<9x16xbf16>
  %agg = graph.index_add %z, %dst, %m {{dim = 0{attr}}} : tensor<9x16xbf16>, tensor<40xi64>, tensor<40x16xbf16> -> tensor<9x16xbf16>
  func.return %agg : tensor<9x16xbf16>
}}"""


@pytest.mark.parametrize("accumulate,wide", [(None, True), ("f32", True), ("native", False)])
def test_scatter_accumulation_type(accumulate, wide):
    """A bf16 index_add accumulates in fp32 (the scatter on an fp32 buffer, one rounding after it) unless it asks
    for its own type (``accumulate = "native"``: bf16 atomic adds, as eager's torch.index_add on the GPU); the
    reference interpreter agrees before and after either way."""
    from kitsune.interpreter import interpret

    text = _bf16_scatter(accumulate)
    m = _lower(text, fuse=True)
    scat = [o for o in m.walk() if o.name == "graph.index_add"]
    assert len(scat) == 1
    assert (scat[0].results[0].type.get_element_type().name == "f32") is wide
    assert any(o.name == "graph.cast" for o in m.walk()) is wide
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((40, 16)), rng.standard_normal((16, 16)), rng.integers(0, 9, 40).astype(np.int64)]
    for a, b in zip(interpret(m, args, f64=True), interpret(parse_module(text), args, f64=True)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_index_add_imports_with_its_own_accumulation():
    """torch.index_add is imported whole, accumulating in its own type (eager adds atomically in bf16 on the
    GPU); index_put with accumulate=True (eager: sorted, summed in fp32) keeps the fp32 accumulation."""
    import torch
    from torch import nn

    from kitsune.frontend.torch_export import import_module

    class Both(nn.Module):
        def forward(self, x, i, s):
            a = torch.zeros_like(x).index_add(0, i, s)
            b = torch.zeros_like(x).index_put((i,), s, accumulate=True)
            return a, b

    x = torch.randn(6, 4, dtype=torch.bfloat16)
    m, _ = import_module(Both(), (x, torch.tensor([0, 2, 2, 5]), torch.randn(4, 4, dtype=torch.bfloat16)))
    acc = sorted(o.attrs()["accumulate"] for o in m.walk() if o.name == "graph.index_add")
    assert acc == ["f32", "native"]


def test_bf16_scatter_end_to_end_native():
    """End to end on the CPU: a bf16 model's torch.index_add scatters bf16 rows into a bf16 accumulator (the
    stage adds ``.to(tl.bfloat16)`` values; no fp32 buffer), within bf16 rounding of eager."""
    import torch
    from torch import nn

    import kitsune

    class Msg(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(16, 16)

        def forward(self, h, dst):
            return torch.zeros(9, 16, dtype=h.dtype).index_add(0, dst, torch.relu(self.fc(h)))

    torch.manual_seed(0)
    model = Msg().to(torch.bfloat16)
    h, dst = torch.randn(40, 16, dtype=torch.bfloat16), torch.randint(0, 9, (40,))
    cm = kitsune.compile(model, (h, dst), mode="bulk-sync", device="cpu")
    assert "_scatter_add(" in cm.source and "'*fp32'" not in cm.source.split("KERNELS = [")[1].split("]\n")[0]
    with torch.no_grad():
        ref = model(h, dst).float()
    got = cm(h, dst).float()
    assert float((got - ref).norm() / ref.norm()) < 2e-2
