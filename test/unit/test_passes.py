"""graph-decompose and graph-canonicalize: results before == after, patterns fire.

Handwritten cases for every composite and every canonicalization pattern, and
property-based tests over random small graphs (see graphgen.random_graphs).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from graphgen import FuncBuilder, assert_close, op_names, random_graphs, reparse, run_main, ttype
from kitsune.context import make_context
from kitsune.passes.graph_canonicalize import GraphCanonicalizePass
from kitsune.passes.graph_decompose import COMPOSITES, GraphDecomposePass

R = np.random.default_rng(3)


def rn(*shape):
    return R.standard_normal(shape).astype(np.float32)


def apply(p, m):
    m2 = m.clone()
    p.apply(make_context(), m2)
    m2.verify()
    reparse(m2)  # the result prints and parses back
    return m2


def check_same(m, inputs, p, rtol=1e-5, atol=1e-5):
    before = run_main(m, inputs)
    m2 = apply(p, m)
    after = run_main(m2, inputs)
    assert len(before) == len(after)
    for a, b in zip(after, before):
        assert a.dtype == b.dtype
        assert_close(a, b, rtol=rtol, atol=atol)
    return m2


def one(name, shapes, n_results=1, **attrs):
    """A module with one op applied to fresh args of the given shapes; and random inputs."""
    fb = FuncBuilder()
    args = [fb.arg(ttype(s)) for s in shapes]
    op = fb.op(name, *args, **attrs)
    return fb.module(list(op.results)), [rn(*s) for s in shapes]


def pos_inputs(inputs, which):
    for i in which:
        inputs[i] = np.abs(inputs[i]) + 0.5
    return inputs


# ------------------------------------------------------------- decompose

DECOMPOSE = [
    ("softmax", [[3, 5]], {}),
    ("softmax", [[2, 3, 4]], {"dim": 0}),
    ("softmax", [[2, 3, 4]], {"dim": -2}),
    ("log_softmax", [[3, 5]], {}),
    ("log_softmax", [[2, 3, 4]], {"dim": 1}),
    ("layer_norm", [[3, 8]], {}),
    ("layer_norm", [[3, 8], [8]], {"eps": 1e-3}),
    ("layer_norm", [[2, 3, 4], [3, 4], [3, 4]], {"normalized_rank": 2}),
    ("rms_norm", [[3, 8]], {}),
    ("rms_norm", [[2, 3, 4], [3, 4]], {"normalized_rank": 2, "eps": 1e-2}),
    ("batch_norm", [[2, 3, 4, 4], [3], [3]], {}),
    ("batch_norm", [[2, 3, 4], [3], [3], [3]], {"eps": 1e-3}),
    ("batch_norm", [[2, 3], [3], [3], [3], [3]], {}),
    ("gelu", [[3, 5]], {}),
    ("gelu", [[3, 5]], {"approximate": "tanh"}),
    ("silu", [[2, 3, 4]], {}),
    ("linear", [[3, 4], [5, 4]], {}),
    ("linear", [[2, 3, 4], [5, 4], [5]], {}),
    ("mean", [[2, 3, 4]], {}),
    ("mean", [[2, 3, 4]], {"dims": [0, -1], "keepdim": True}),
    ("mean", [[2, 3, 4]], {"dims": [1]}),
    ("attention", [[2, 2, 3, 4], [2, 2, 5, 4], [2, 2, 5, 6]], {}),
    ("attention", [[1, 4, 3, 4], [1, 2, 5, 4], [1, 2, 5, 4]], {"scale": 0.3}),
]


def test_decompose_cases_cover_every_composite():
    assert {c[0] for c in DECOMPOSE} == set(COMPOSITES)


@pytest.mark.parametrize("name, shapes, attrs", DECOMPOSE,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(DECOMPOSE)])
def test_decompose(name, shapes, attrs):
    m, inputs = one(name, shapes, **attrs)
    if name == "batch_norm":
        pos_inputs(inputs, [2])
    m2 = check_same(m, inputs, GraphDecomposePass())
    names = op_names(m2)
    assert f"graph.{name}" not in names
    assert not any(n.removeprefix("graph.") in COMPOSITES for n in names), names


def test_decompose_only_selected_ops():
    fb = FuncBuilder()
    x = fb.arg(ttype([3, 5]))
    y = fb.v("gelu", fb.v("softmax", x))
    z = fb.v("silu", y)
    m = fb.module([z])
    inputs = [rn(3, 5)]
    m2 = check_same(m, inputs, GraphDecomposePass(ops=("softmax", "silu")))
    names = op_names(m2)
    assert "graph.gelu" in names and "graph.softmax" not in names and "graph.silu" not in names


def test_decompose_unknown_op():
    m, _ = one("relu", [[3]])
    with pytest.raises(ValueError, match="graph-decompose: unknown op\\(s\\) relu; choose from softmax"):
        GraphDecomposePass(ops=("relu",)).apply(make_context(), m)


def test_decompose_dynamic_shapes():
    fb = FuncBuilder()
    x = fb.arg(ttype([-1, 8]))
    w = fb.arg(ttype([8]))
    s = fb.v("softmax", x)
    ln = fb.v("layer_norm", s, w)
    mn = fb.v("mean", ln, dims=[1])
    m = fb.module([mn])
    inputs = [rn(5, 8), rn(8)]
    m2 = check_same(m, inputs, GraphDecomposePass())
    names = op_names(m2)
    assert "graph.softmax" not in names  # softmax needs no sizes
    assert "graph.layer_norm" in names  # kept: the result is dynamic


def test_decompose_keeps_composites_with_dynamic_reduced_size():
    m, _ = one("mean", [[3, 4]], dims=[1])
    fb = FuncBuilder()
    x = fb.arg(ttype([3, -1]))
    y = fb.v("mean", x, dims=[1])
    m = fb.module([y])
    m2 = check_same(m, [rn(3, 4)], GraphDecomposePass())
    assert "graph.mean" in op_names(m2)


# ----------------------------------------------------------- canonicalize


def canon(m, inputs):
    return op_names(check_same(m, inputs, GraphCanonicalizePass()))


@pytest.mark.parametrize("side", ["lhs", "rhs", "both"])
def test_fold_transpose_into_matmul(side):
    fb = FuncBuilder()
    a = fb.arg(ttype([2, 4, 3] if side != "rhs" else [2, 3, 4]))
    b = fb.arg(ttype([5, 4] if side != "lhs" else [4, 5]))
    if side in ("lhs", "both"):
        a = fb.v("permute", a, perm=[0, 2, 1])
    if side in ("rhs", "both"):
        b = fb.v("permute", b, perm=[1, 0])
    y = fb.v("matmul", a, b)
    m = fb.module([y])
    inputs = [rn(*a_.type.get_shape()) for a_ in fb.block.args]
    m2 = apply(GraphCanonicalizePass(), m)
    names = canon(m, inputs)
    assert names == ["graph.matmul"]
    (mm,) = [o for o in m2.walk() if o.name == "graph.matmul"]
    assert mm.attrs() == {"transpose_a": side != "rhs", "transpose_b": side != "lhs"}


def test_fold_transpose_flips_existing_flag():
    fb = FuncBuilder()
    a = fb.arg(ttype([3, 4]))
    b = fb.arg(ttype([4, 5]))
    y = fb.v("matmul", a, fb.v("permute", b, perm=[1, 0]), transpose_b=True)
    m = fb.module([y])
    m2 = apply(GraphCanonicalizePass(), m)
    assert canon(m, [rn(3, 4), rn(4, 5)]) == ["graph.matmul"]
    (mm,) = [o for o in m2.walk() if o.name == "graph.matmul"]
    assert mm.attrs()["transpose_b"] is False


def test_no_fold_for_other_permutations():
    fb = FuncBuilder()
    a = fb.arg(ttype([3, 2, 4]))
    b = fb.arg(ttype([2, 4, 5]))
    y = fb.v("matmul", fb.v("permute", a, perm=[1, 0, 2]), b)
    m = fb.module([y])
    assert canon(m, [rn(3, 2, 4), rn(2, 4, 5)]) == ["graph.permute", "graph.matmul"]


@pytest.mark.parametrize("bias_first", [False, True])
@pytest.mark.parametrize("xshape", [[3, 4], [2, 3, 4]])
def test_matmul_bias_to_linear(bias_first, xshape):
    fb = FuncBuilder()
    x = fb.arg(ttype(xshape))
    w = fb.arg(ttype([5, 4]))
    b = fb.arg(ttype([5]))
    mm = fb.v("matmul", x, fb.v("permute", w, perm=[1, 0]))  # torch.export's t + addmm
    y = fb.v("add", *((b, mm) if bias_first else (mm, b)))
    m = fb.module([y])
    assert canon(m, [rn(*xshape), rn(5, 4), rn(5)]) == ["graph.linear"]


def test_matmul_bias_not_linear_when_matmul_used_twice():
    fb = FuncBuilder()
    x, w, b = fb.arg(ttype([3, 4])), fb.arg(ttype([5, 4])), fb.arg(ttype([5]))
    mm = fb.v("matmul", x, w, transpose_b=True)
    y = fb.v("add", mm, b)
    m = fb.module([y, mm])
    assert canon(m, [rn(3, 4), rn(5, 4), rn(5)]) == ["graph.matmul", "graph.add"]


@pytest.mark.parametrize("bshape", [[1, 5], [3, 5], [1]])
def test_matmul_bias_not_linear_for_other_bias_shapes(bshape):
    fb = FuncBuilder()
    x, w, b = fb.arg(ttype([3, 4])), fb.arg(ttype([5, 4])), fb.arg(ttype(bshape))
    y = fb.v("add", fb.v("matmul", x, w, transpose_b=True), b)
    m = fb.module([y])
    assert canon(m, [rn(3, 4), rn(5, 4), rn(*bshape)]) == ["graph.matmul", "graph.add"]


def test_matmul_bias_not_linear_without_transpose_b():
    fb = FuncBuilder()
    x, w, b = fb.arg(ttype([3, 4])), fb.arg(ttype([4, 5])), fb.arg(ttype([5]))
    y = fb.v("add", fb.v("matmul", x, w), b)
    m = fb.module([y])
    assert canon(m, [rn(3, 4), rn(4, 5), rn(5)]) == ["graph.matmul", "graph.add"]


@pytest.mark.parametrize("kind", ["reshape", "expand", "cast", "slice", "permute"])
def test_drop_identity(kind):
    fb = FuncBuilder()
    x = fb.arg(ttype([3, 4]))
    if kind == "reshape":
        y = fb.op("reshape", x, result_types=[ttype([3, 4])]).results[0]
    elif kind == "expand":
        y = fb.v("expand", x, shape=[-1, 4])
    elif kind == "cast":
        y = fb.op("cast", x, result_types=[ttype([3, 4])]).results[0]
    elif kind == "slice":
        y = fb.v("slice", x, dim=1, start=0, end=4)
    else:
        y = fb.v("permute", x, perm=[0, 1])
    z = fb.v("relu", y)
    m = fb.module([z])
    assert canon(m, [rn(3, 4)]) == ["graph.relu"]


def test_no_drop_for_non_identity():
    fb = FuncBuilder()
    x = fb.arg(ttype([3, 3]))
    y = fb.v("permute", x, perm=[1, 0])  # same type, not identity
    z = fb.v("slice", fb.v("relu", y), dim=0, start=1)
    m = fb.module([z])
    assert canon(m, [rn(3, 3)]) == ["graph.permute", "graph.relu", "graph.slice"]


def test_merge_reshapes():
    fb = FuncBuilder()
    x = fb.arg(ttype([2, 3, 4]))
    y = fb.op("reshape", x, result_types=[ttype([6, 4])]).results[0]
    y = fb.op("reshape", y, result_types=[ttype([24])]).results[0]
    y = fb.op("reshape", y, result_types=[ttype([4, 6])]).results[0]
    m = fb.module([y])
    assert canon(m, [rn(2, 3, 4)]) == ["graph.reshape"]


def test_merge_reshapes_back_to_identity():
    fb = FuncBuilder()
    x = fb.arg(ttype([2, 3, 4]))
    y = fb.op("reshape", x, result_types=[ttype([6, 4])]).results[0]
    y = fb.op("reshape", y, result_types=[ttype([2, 3, 4])]).results[0]
    m = fb.module([fb.v("exp", y)])
    assert canon(m, [rn(2, 3, 4)]) == ["graph.exp"]


def test_compose_permutes():
    fb = FuncBuilder()
    x = fb.arg(ttype([2, 3, 4]))
    y = fb.v("permute", x, perm=[2, 0, 1])
    y = fb.v("permute", y, perm=[0, 2, 1])
    m = fb.module([y])
    m2 = apply(GraphCanonicalizePass(), m)
    assert canon(m, [rn(2, 3, 4)]) == ["graph.permute"]
    (p,) = [o for o in m2.walk() if o.name == "graph.permute"]
    assert list(p.attrs()["perm"]) == [2, 1, 0]


def test_compose_permutes_to_identity():
    fb = FuncBuilder()
    x = fb.arg(ttype([2, 3, 4]))
    y = fb.v("permute", fb.v("permute", x, perm=[1, 2, 0]), perm=[2, 0, 1])
    m = fb.module([fb.v("neg", y)])
    assert canon(m, [rn(2, 3, 4)]) == ["graph.neg"]


def test_dead_code_removed():
    fb = FuncBuilder()
    x = fb.arg(ttype([3]))
    fb.v("exp", fb.v("relu", x))  # unused
    m = fb.module([fb.v("neg", x)])
    assert canon(m, [rn(3)]) == ["graph.neg"]


def _rs(fb, x, shape):
    return fb.op("reshape", x, result_types=[ttype(shape)]).results[0]


def _conv1d(fb, x, w, b, out_shape):
    """transformers' Conv1D: x.view(-1, K) @ w + b, viewed back (x's leading dims regrouped, last kept)."""
    k = x.type.get_shape()[-1]
    rows = int(np.prod(x.type.get_shape()[:-1]))
    f = _rs(fb, x, [rows, k]) if len(x.type.get_shape()) != 2 else x
    return _rs(fb, fb.v("add", fb.v("matmul", f, w), b), out_shape)


def test_conv1d_reshapes_cancel():
    """flatten -> matmul -> + bias -> unflatten: the matmul runs on the 3-d input, no reshape is left."""
    fb = FuncBuilder()
    x, w, b = fb.arg(ttype([2, 3, 4])), fb.arg(ttype([4, 5])), fb.arg(ttype([5]))
    y = fb.v("gelu", _conv1d(fb, x, w, b, [2, 3, 5]))
    m = fb.module([y])
    assert canon(m, [rn(2, 3, 4), rn(4, 5), rn(5)]) == ["graph.matmul", "graph.add", "graph.gelu"]


def test_unflatten_rises_to_the_matmul():
    """The lhs reshape merges the last dims (12x64 -> 768, attention heads): it stays, but the unflatten after
    the bias rises to the matmul's input, so the matmul and the bias run in the 3-d shape."""
    fb = FuncBuilder()
    x, w, b, r = fb.arg(ttype([2, 3, 2, 2])), fb.arg(ttype([4, 5])), fb.arg(ttype([5])), fb.arg(ttype([2, 3, 5]))
    y = fb.v("add", _conv1d(fb, _rs(fb, x, [6, 4]), w, b, [2, 3, 5]), r)
    m = fb.module([y])
    assert canon(m, [rn(2, 3, 2, 2), rn(4, 5), rn(5), rn(2, 3, 5)]) == \
        ["graph.reshape", "graph.matmul", "graph.add", "graph.add"]
    m2 = apply(GraphCanonicalizePass(), m)
    (mm,) = [o for o in m2.walk() if o.name == "graph.matmul"]
    assert list(mm.results[0].type.get_shape()) == [2, 3, 5]


def test_reshapes_that_stay():
    """No move: an elementwise op whose other operand is not a bias, a regrouping that changes the last dim,
    an unflatten of a matmul that has other uses, a same-rank regrouping."""
    fb = FuncBuilder()
    x, z, w = fb.arg(ttype([2, 3, 4])), fb.arg(ttype([6, 4])), fb.arg(ttype([4, 5]))
    s = fb.v("add", _rs(fb, x, [6, 4]), z)
    mm = fb.v("matmul", z, w)
    u = _rs(fb, mm, [2, 3, 5])
    g = fb.v("neg", _rs(fb, x, [3, 2, 4]))
    e = fb.v("exp", _rs(fb, x, [2, 12]))
    m = fb.module([s, u, mm, g, e])
    assert canon(m, [rn(2, 3, 4), rn(6, 4), rn(4, 5)]) == \
        ["graph.reshape", "graph.add", "graph.matmul", "graph.reshape", "graph.reshape", "graph.neg",
         "graph.reshape", "graph.exp"]


@pytest.mark.parametrize("op", ["relu", "neg", "sigmoid"])
def test_unary_distributes_over_concat(op):
    """``e(concat(a, b, c))`` -> ``concat(e(a), e(b), e(c))`` (each part's producer then takes ``e``); a concat
    with another use stays."""
    fb = FuncBuilder()
    a, b, c = fb.arg(ttype([2, 3, 4])), fb.arg(ttype([2, 1, 4])), fb.arg(ttype([2, 5, 4]))
    y = fb.v(op, fb.v("concat", a, b, c, dim=1))
    m = fb.module([y])
    inputs = [rn(2, 3, 4), rn(2, 1, 4), rn(2, 5, 4)]
    assert canon(m, inputs) == [f"graph.{op}"] * 3 + ["graph.concat"]
    fb = FuncBuilder()
    a, b = fb.arg(ttype([2, 3])), fb.arg(ttype([2, 5]))
    cat = fb.v("concat", a, b, dim=1)
    m = fb.module([fb.v(op, cat), cat])
    assert canon(m, [rn(2, 3), rn(2, 5)]) == ["graph.concat", f"graph.{op}"]


def test_canonicalize_after_decompose_linear_round_trip():
    """decompose turns linear into matmul{transpose_b} + add; canonicalize turns it back."""
    m, inputs = one("linear", [[3, 4], [5, 4], [5]])
    m2 = check_same(m, inputs, GraphDecomposePass())
    assert op_names(m2) == ["graph.matmul", "graph.add"]
    assert op_names(check_same(m2, inputs, GraphCanonicalizePass())) == ["graph.linear"]


# ------------------------------------------------------------ properties

PROP = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROP
@given(random_graphs())
def test_property_decompose_preserves_results(case):
    m, inputs = case
    m2 = check_same(m, inputs, GraphDecomposePass())
    left = [o for o in m2.walk() if o.name.removeprefix("graph.") in COMPOSITES]
    # only a linear of a rank-1 input stays (matmul needs rank >= 2)
    assert all(o.name == "graph.linear" and len(o.operands[0].type.get_shape()) == 1 for o in left), left


@PROP
@given(random_graphs())
def test_property_canonicalize_preserves_results(case):
    m, inputs = case
    m2 = check_same(m, inputs, GraphCanonicalizePass())
    # a fixed point: canonicalizing again changes nothing
    assert str(apply(GraphCanonicalizePass(), m2)) == str(m2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_property_pipeline_preserves_results(case):
    m, inputs = case
    before = run_main(m, inputs)
    m2 = apply(GraphCanonicalizePass(), apply(GraphDecomposePass(), apply(GraphCanonicalizePass(), m)))
    for a, b in zip(run_main(m2, inputs), before):
        assert_close(a, b)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs(dynamic=True))
def test_property_dynamic_shapes(case):
    """Graphs whose first argument has '?' dims: both passes keep the results."""
    m, inputs = case
    assert "?" in str(m)
    check_same(m, inputs, GraphDecomposePass())
    check_same(m, inputs, GraphCanonicalizePass())


# ---------------------------------------------------------------- kitsune-hoist-row-scale

_HOIST = """
func.func @main(%x: tensor<2x8x64xf32>, %g: tensor<64xf32>, %w: tensor<32x64xf32>, %v: tensor<64x16xf32>)
    -> (tensor<2x8x32xf32>, tensor<2x8x16xf32>) {
  %p = graph.pow %x {exponent = 2.0} : tensor<2x8x64xf32> -> tensor<2x8x64xf32>
  %m = graph.mean %p {dims = [2], keepdim = true} : tensor<2x8x64xf32> -> tensor<2x8x1xf32>
  %c = graph.constant dense<1.0e-05> : tensor<f32>
  %e = graph.add %m, %c : tensor<2x8x1xf32>, tensor<f32> -> tensor<2x8x1xf32>
  %s = graph.rsqrt %e : tensor<2x8x1xf32> -> tensor<2x8x1xf32>
  %n = graph.mul %x, %s : tensor<2x8x64xf32>, tensor<2x8x1xf32> -> tensor<2x8x64xf32>
  %a = graph.mul %g, %n : tensor<64xf32>, tensor<2x8x64xf32> -> tensor<2x8x64xf32>
  %y = graph.linear %a, %w : tensor<2x8x64xf32>, tensor<32x64xf32> -> tensor<2x8x32xf32>
  %n2 = graph.mul %s, %x : tensor<2x8x1xf32>, tensor<2x8x64xf32> -> tensor<2x8x64xf32>
  %z = graph.matmul %n2, %v : tensor<2x8x64xf32>, tensor<64x16xf32> -> tensor<2x8x16xf32>
  func.return %y, %z : tensor<2x8x32xf32>, tensor<2x8x16xf32>
}
"""


def test_hoist_row_scale_keeps_meaning():
    """Both contractions (a linear whose product has the operand-shaped factor second, a matmul) take the row
    scale on their results; the reference interpreter gives the same outputs before and after."""
    from kitsune.context import parse_module
    from kitsune.interpreter import interpret
    from kitsune.passes.hoist_row_scale import HoistRowScalePass

    m = parse_module(_HOIST)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(tuple(a.type.get_shape())) for a in m.body.block.first_op.body.block.args]
    ref = interpret(m, args, f64=True)
    out = m.clone()
    HoistRowScalePass().apply(make_context(), out)
    out.verify()
    text = str(out)
    for c in ("graph.linear", "graph.matmul"):
        line = next(ln for ln in text.splitlines() if c in ln)
        res = line.split("=")[0].strip()
        assert f"graph.mul {res}, %s" in text, (c, text)  # the scale multiplies the contraction's result
    assert "graph.mul %x, %s" not in text and "graph.mul %s, %x" not in text
    got = interpret(parse_module(text), args, f64=True)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_decode_projection_norm_runs_after_the_split():
    """Llama's decode QKV projection at batch 8 (a K split over 8 programs per tile): with the RMSNorm scale on
    the product, the parts load only their share of x and the program that combines a tile computes the norm
    once; the projection's views stay a copy folded into the attention (no kernel of their own), and the
    post-attention norm's mean is no kernel of its own either."""
    import torch

    from kitsune.codegen.triton_gen import generate_triton
    from kitsune.frontend.torch_export import import_module
    from kitsune.models import get_workload
    from kitsune.passes.pipeline import KitsunePipelinePass

    model, inputs = get_workload("llama_decode_b8").build(scale=1.0, dtype=torch.bfloat16, device="meta")
    m, _ = import_module(model, inputs, None, with_weights=False)
    KitsunePipelinePass(mode="bulk-sync", gpu="h100", tuning_db=False).apply(make_context(), m)
    src = generate_triton(m, capacity="ir", gluon=False)
    qkv = src[src.index("def k0_"):src.index("@triton.jit", src.index("def k0_"))]
    assert "arrived" in qkv, "the QKV projection is no longer split: the test needs another shape"
    before, after = qkv.split("arrived", 1)
    assert "tl.rsqrt(" not in before and "tl.rsqrt(" in after
    assert src.count("# kernel \"") == 6 and "mean" not in "".join(ln for ln in src.splitlines() if "# stage" in ln)


_LONG_NORMS = """
func.func @main(%x: tensor<2x3x64xbf16>, %w: tensor<64xbf16>, %b: tensor<64xbf16>, %u: tensor<2x4x4x4xf32>,
    %v: tensor<4x4x4xf32>, %s: tensor<2x3x16xf32>) -> (tensor<2x3x64xbf16>, tensor<2x4x4x4xf32>, tensor<2x3x16xf32>) {
  %y = graph.layer_norm %x, %w, %b {eps = 1.0e-03} : tensor<2x3x64xbf16>, tensor<64xbf16>, tensor<64xbf16> -> tensor<2x3x64xbf16>
  %r = graph.rms_norm %u, %v {normalized_rank = 3} : tensor<2x4x4x4xf32>, tensor<4x4x4xf32> -> tensor<2x4x4x4xf32>
  %z = graph.layer_norm %s : tensor<2x3x16xf32> -> tensor<2x3x16xf32>
  func.return %y, %r, %z : tensor<2x3x64xbf16>, tensor<2x4x4x4xf32>, tensor<2x3x16xf32>
}"""


def _split_long(text: str, seed: int, scale: float, shift: float = 0.0):
    """``text`` after kitsune-split-long-norms (``max_row`` 32): (its printed IR, the reference interpreter's
    results on seeded random inputs before the pass, and after it)."""
    from kitsune.context import parse_module
    from kitsune.interpreter import interpret
    from kitsune.passes.split_long_norms import SplitLongNormsPass

    m = parse_module(text)
    rng = np.random.default_rng(seed)
    args = [(rng.standard_normal(tuple(a.type.get_shape())) * scale + shift).astype(np.float32)
            for a in m.body.block.first_op.body.block.args]
    ref = interpret(m, args)
    out = m.clone()
    SplitLongNormsPass(max_row=32).apply(make_context(), out)
    out.verify()
    return str(out), ref, interpret(parse_module(str(out)), args)


def test_split_long_norms_keeps_meaning():
    """Norms over rows of more than ``max_row`` elements (32 here: a bf16 layer norm with weight and bias over 64,
    an RMS norm over three dims of 64) become their fp32 statistics and an elementwise normalisation rounded once
    to the norm's type; the norm over rows of 16 stays whole. The reference interpreter agrees before and after
    (bf16 results to their rounding, fp32 ones exactly)."""
    text, ref, got = _split_long(_LONG_NORMS, 0, 2.0, 0.5)
    stats = [ln for ln in text.splitlines() if "_stats" in ln]
    assert len(stats) == 2, text
    assert "graph.layer_norm_stats %x" in stats[0] and "(tensor<2x3x1xf32>, tensor<2x3x1xf32>)" in stats[0], stats
    assert "graph.rms_norm_stats %u" in stats[1] and "normalized_rank = 3" in stats[1], stats
    assert "-> tensor<2x1x1x1xf32>" in stats[1], stats
    assert text.count("graph.layer_norm %") == 1 and "graph.layer_norm %s" in text  # (rows of 16 stay whole)
    assert "graph.rms_norm %" not in text
    assert re.search(r"graph\.cast %\S+ : tensor<2x3x64xf32> -> tensor<2x3x64xbf16>", text), text
    np.testing.assert_allclose(np.asarray(got[0], np.float32), np.asarray(ref[0], np.float32), rtol=1e-2, atol=1e-2)
    for a, b in zip(got[1:], ref[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


_LONG_SOFTMAX = """
func.func @main(%x: tensor<3x64xbf16>, %u: tensor<2x40x3xf32>, %s: tensor<4x16xf32>)
    -> (tensor<3x64xbf16>, tensor<2x40x3xf32>, tensor<4x16xf32>) {
  %y = graph.softmax %x {dim = -1} : tensor<3x64xbf16> -> tensor<3x64xbf16>
  %z = graph.log_softmax %u {dim = 1} : tensor<2x40x3xf32> -> tensor<2x40x3xf32>
  %k = graph.softmax %s {dim = 1} : tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %y, %z, %k : tensor<3x64xbf16>, tensor<2x40x3xf32>, tensor<4x16xf32>
}"""


def test_split_long_softmaxes_keeps_meaning():
    """Softmaxes over rows of more than ``max_row`` elements (32 here: a bf16 softmax over 64 columns, an f32
    log_softmax along the middle dim of 40) become their fp32 maximum and sum of exponentials
    (``graph.softmax_stats``, that dim 1) and elementwise ops; the softmax over 16 stays whole. The reference
    interpreter agrees before and after."""
    text, ref, got = _split_long(_LONG_SOFTMAX, 1, 3.0)
    stats = [ln for ln in text.splitlines() if "softmax_stats" in ln]
    assert len(stats) == 2, text
    assert "graph.softmax_stats %x" in stats[0] and "(tensor<3x1xf32>, tensor<3x1xf32>)" in stats[0], stats
    assert "graph.softmax_stats %u {dim = 1}" in stats[1] and "tensor<2x1x3xf32>" in stats[1], stats
    assert "graph.softmax %s" in text and "graph.log_softmax" not in text and text.count("graph.softmax %") == 1
    assert "graph.exp" in text and "graph.log" in text
    np.testing.assert_allclose(np.asarray(got[0], np.float32), np.asarray(ref[0], np.float32), rtol=1e-2, atol=1e-3)
    for a, b in zip(got[1:], ref[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
