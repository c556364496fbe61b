"""The dataflow dialect and its passes preserve meaning: interpreter(graph) == interpreter(dataflow)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func

from kitsune.context import make_context, parse_module
from kitsune.dialects import dataflow as df
from kitsune.interpreter import interpret
from kitsune.passes.form_regions import FormRegionsPass
from kitsune.passes.split_reduction import SplitReductionPass

pytestmark = pytest.mark.filterwarnings("ignore:.*LeafSpec.*:FutureWarning")

MLP = """
func.func @main(%x: tensor<64x32xf32>, %w1: tensor<128x32xf32>, %b1: tensor<128xf32>, %w2: tensor<32x128xf32>, %b2: tensor<32xf32>) -> tensor<64x32xf32> {
  %h = graph.linear %x, %w1, %b1 : tensor<64x32xf32>, tensor<128x32xf32>, tensor<128xf32> -> tensor<64x128xf32>
  %g = graph.gelu %h : tensor<64x128xf32> -> tensor<64x128xf32>
  %y = graph.linear %g, %w2, %b2 : tensor<64x128xf32>, tensor<32x128xf32>, tensor<32xf32> -> tensor<64x32xf32>
  func.return %y : tensor<64x32xf32>
}
"""

SOFTMAX = """
func.func @main(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %m = graph.amax %x {dims = [1], keepdim = true} : tensor<16x64xf32> -> tensor<16x1xf32>
  %s = graph.sub %x, %m : tensor<16x64xf32>, tensor<16x1xf32> -> tensor<16x64xf32>
  %e = graph.exp %s : tensor<16x64xf32> -> tensor<16x64xf32>
  %z = graph.sum %e {dims = [1], keepdim = true} : tensor<16x64xf32> -> tensor<16x1xf32>
  %y = graph.div %e, %z : tensor<16x64xf32>, tensor<16x1xf32> -> tensor<16x64xf32>
  func.return %y : tensor<16x64xf32>
}
"""

NORM_LINEAR = """
func.func @main(%x: tensor<8x64xf32>, %g: tensor<64xf32>, %w: tensor<96x64xf32>) -> tensor<8x96xf32> {
  %n = graph.rms_norm %x, %g : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %y = graph.linear %n, %w : tensor<8x64xf32>, tensor<96x64xf32> -> tensor<8x96xf32>
  func.return %y : tensor<8x96xf32>
}
"""

BRANCHES = """
func.func @main(%x: tensor<32x16xf32>, %wa: tensor<24x16xf32>, %wb: tensor<24x16xf32>) -> tensor<32x24xf32> {
  %a = graph.linear %x, %wa : tensor<32x16xf32>, tensor<24x16xf32> -> tensor<32x24xf32>
  %ra = graph.relu %a : tensor<32x24xf32> -> tensor<32x24xf32>
  %b = graph.linear %x, %wb : tensor<32x16xf32>, tensor<24x16xf32> -> tensor<32x24xf32>
  %sb = graph.sigmoid %b : tensor<32x24xf32> -> tensor<32x24xf32>
  %y = graph.mul %ra, %sb : tensor<32x24xf32>, tensor<32x24xf32> -> tensor<32x24xf32>
  func.return %y : tensor<32x24xf32>
}
"""

GEMV = """
func.func @main(%x: tensor<1x512xf32>, %w: tensor<64x512xf32>, %b: tensor<64xf32>) -> tensor<1x64xf32> {
  %h = graph.linear %x, %w, %b : tensor<1x512xf32>, tensor<64x512xf32>, tensor<64xf32> -> tensor<1x64xf32>
  %y = graph.silu %h : tensor<1x64xf32> -> tensor<1x64xf32>
  func.return %y : tensor<1x64xf32>
}
"""

LONG_SUM = """
func.func @main(%x: tensor<4x1000xf32>) -> (tensor<4x1xf32>, tensor<4xf32>) {
  %e = graph.exp %x : tensor<4x1000xf32> -> tensor<4x1000xf32>
  %s = graph.sum %e {dims = [1], keepdim = true} : tensor<4x1000xf32> -> tensor<4x1xf32>
  %l = graph.log %s : tensor<4x1xf32> -> tensor<4x1xf32>
  %m = graph.amax %x {dims = [1]} : tensor<4x1000xf32> -> tensor<4xf32>
  func.return %l, %m : tensor<4x1xf32>, tensor<4xf32>
}
"""

MATMUL_T = """
func.func @main(%a: tensor<300x2xf32>, %b: tensor<3x300xf32>) -> tensor<2x3xf32> {
  %c = graph.matmul %a, %b {transpose_a = true, transpose_b = true} : tensor<300x2xf32>, tensor<3x300xf32> -> tensor<2x3xf32>
  %k = graph.constant dense<2.0> : tensor<f32>
  %y = graph.mul %c, %k : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""

MLP_LONG = """
func.func @main(%x: tensor<4x8xf32>, %w1: tensor<16x8xf32>, %w2: tensor<16x16xf32>, %w3: tensor<4x16xf32>) -> (tensor<4x4xf32>, tensor<4x16xf32>) {
  %a = graph.linear %x, %w1 : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %ra = graph.relu %a : tensor<4x16xf32> -> tensor<4x16xf32>
  %b = graph.linear %ra, %w2 : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  %rb = graph.relu %b : tensor<4x16xf32> -> tensor<4x16xf32>
  %c = graph.linear %rb, %w3 : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x4xf32>
  %sm = graph.softmax %c : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %sm, %ra : tensor<4x4xf32>, tensor<4x16xf32>
}
"""



def _attention(hq: int, hk: int, lq: int, lkv: int, e: int = 16, ev: int = 16, scale: float = 0.0,
               epilogue: bool = True) -> str:
    """Decode-style attention q [1, hq, lq, e], k [1, hk, lkv, e], v [1, hk, lkv, ev] (+ permute/reshape)."""
    q, k, v = f"tensor<1x{hq}x{lq}x{e}xf32>", f"tensor<1x{hk}x{lkv}x{e}xf32>", f"tensor<1x{hk}x{lkv}x{ev}xf32>"
    a = f"tensor<1x{hq}x{lq}x{ev}xf32>"
    sc = f" {{scale = {scale}}}" if scale else ""
    lines = [f"  %a = graph.attention %q, %k, %v{sc} : {q}, {k}, {v} -> {a}"]
    ret, rt = "%a", a
    if epilogue:
        pt, rt = f"tensor<1x{lq}x{hq}x{ev}xf32>", f"tensor<1x{lq}x{hq * ev}xf32>"
        lines += [f"  %p = graph.permute %a {{perm = [0, 2, 1, 3]}} : {a} -> {pt}",
                  f"  %y = graph.reshape %p : {pt} -> {rt}"]
        ret = "%y"
    return "\n".join([f"func.func @main(%q: {q}, %k: {k}, %v: {v}) -> {rt} {{", *lines,
                      f"  func.return {ret} : {rt}", "}"])


ATT_GQA = _attention(8, 2, 1, 40)
ATT_MHA = _attention(2, 2, 2, 37, ev=8, scale=0.3, epilogue=False)

GRAPHS = {"mlp": MLP, "softmax": SOFTMAX, "norm_linear": NORM_LINEAR, "branches": BRANCHES, "gemv": GEMV,
          "long_sum": LONG_SUM, "matmul_t": MATMUL_T, "mlp_long": MLP_LONG, "attention_gqa": ATT_GQA,
          "attention_mha": ATT_MHA}


def _inputs(module, seed=0):
    rng = np.random.default_rng(seed)
    f = next(o for o in module.walk() if isinstance(o, func.FuncOp) and o.sym_name.data == "main")
    return [rng.standard_normal(tuple(t.get_shape())).astype(np.float32) for t in f.function_type.inputs.data]


def _assert_close(got, ref, rtol, atol, what=""):
    assert len(got) == len(ref)
    for i, (r, g) in enumerate(zip(ref, got)):
        scale = max(1.0, float(np.max(np.abs(r)))) if np.size(r) else 1.0
        np.testing.assert_allclose(g, r, rtol=rtol, atol=atol * scale, err_msg=f"{what}result #{i}")


def _check_same(text_or_module, passes, *, rtol=1e-4, atol=1e-5):
    """interpreter(module) == interpreter(module after ``passes``), both evaluated in float64.

    In float64 a pass that re-associates a reduction (split-K, split attention) or another BLAS kernel /
    thread count changes results by ~1e-15 relative, so the comparison tests meaning alone: the float32
    evaluations these tests used to compare differ by up to 10% of the tolerance (split attention) and the
    float32 reference itself is up to 9% of it off the exact result. On a mismatch the reference is evaluated
    again: if it does not reproduce itself, the interpreter's environment is at fault, not the pass."""
    module = parse_module(text_or_module) if isinstance(text_or_module, str) else text_or_module
    inputs = _inputs(module)
    ref = interpret(module, inputs, f64=True)
    out = module.clone()
    for p in passes:
        p.apply(make_context(), out)
    out.verify()
    assert any(isinstance(o, df.GraphOp) for o in out.walk())
    # the text round trips
    again = parse_module(str(out))
    got = interpret(again, inputs, f64=True)
    try:
        _assert_close(got, ref, rtol, atol)
    except AssertionError as e:
        ref2 = interpret(module, inputs, f64=True)
        same = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(ref, ref2))
        why = "a pass changed the meaning" if same else "the interpreter does not reproduce its own result"
        raise AssertionError(f"after {[type(p).__name__ for p in passes]} the results differ; the unchanged module "
                             f"evaluated again gives {'the same' if same else 'DIFFERENT'} results: {why}\n{e}") from None
    return out


def _tasks(module):
    return [o for o in module.walk() if isinstance(o, df.TaskOp)]


def test_f64_interpretation_and_check_same_diagnosis():
    """interpret(f64=True) evaluates f32 graphs in float64 (gelu's erf included); _check_same says whether a
    mismatch is the pass's doing (the reference reproduces itself) -- here a "pass" that skips the gelu."""
    m = parse_module(MLP)
    ins = _inputs(m)
    (r32,), (r64,) = interpret(m, ins), interpret(m, ins, f64=True)
    assert r32.dtype == np.float32 and r64.dtype == np.float64
    x, w1, b1, w2, b2 = (a.astype(np.float64) for a in ins)
    h = x @ w1.T + b1
    import math

    g = 0.5 * h * (1 + np.vectorize(math.erf)(h * float(np.float32(0.7071067811865476))))  # a float32 literal
    np.testing.assert_allclose(r64, g @ w2.T + b2, rtol=1e-12, atol=1e-12)
    assert 1e-9 < np.max(np.abs(r32 - r64)) < 1e-3  # float32 rounding, gone in float64

    class SkipGelu:  # a wrong "pass": the second linear reads the gelu's input
        def apply(self, ctx, module):
            gelu = next(o for o in module.walk() if o.name == "graph.gelu")
            lin2 = [o for o in module.walk() if o.name == "graph.linear"][1]
            lin2.operands = [gelu.operands[0], *lin2.operands[1:]]

    with pytest.raises(AssertionError, match="a pass changed the meaning"):
        _check_same(MLP, [SkipGelu(), FormRegionsPass()])


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_form_regions_preserves_meaning(name):
    _check_same(GRAPHS[name], [FormRegionsPass()])


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("opts", [dict(chain_bytes=1 << 20), dict(epilogue=False), dict(prologue=False, row_max=1),
                                  dict(tile_m=4, tile_n=8)])
def test_form_regions_options_preserve_meaning(name, opts):
    _check_same(GRAPHS[name], [FormRegionsPass(**opts)])


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("force", [0, 2, 3])
def test_split_reduction_preserves_meaning(name, force):
    _check_same(GRAPHS[name], [FormRegionsPass(), SplitReductionPass(force=force)])


def test_regions_formed():
    m = _check_same(MLP, [FormRegionsPass()])
    ts = _tasks(m)
    assert [t.task_kind for t in ts] == ["contraction", "contraction"]
    assert [o.name for o in ts[0].body.blocks.first.ops] == ["graph.linear", "graph.gelu", "dataflow.yield"]
    m = _check_same(MLP, [FormRegionsPass(chain_bytes=1 << 20)])
    assert len(_tasks(m)) == 1
    m = _check_same(SOFTMAX, [FormRegionsPass()])
    (t,) = _tasks(m)
    assert t.task_kind == "reduction" and t.tile_sizes() == (16, 64)
    m = _check_same(NORM_LINEAR, [FormRegionsPass()])
    assert len(_tasks(m)) == 1
    m = _check_same(NORM_LINEAR, [FormRegionsPass(prologue=False)])
    assert len(_tasks(m)) == 2
    m = _check_same(BRANCHES, [FormRegionsPass()])
    assert len(_tasks(m)) == 2  # the two GEMMs stay separate (concurrent); the mul joins one of them
    chans = [o for o in m.walk() if isinstance(o, df.ChannelOp)]
    assert any(c.rel == "tile" for c in chans)


EDGE_LINEAR = """
func.func @main(%x: tensor<12x8xf32>, %src: tensor<40xi64>, %dst: tensor<40xi64>, %e: tensor<40x8xf32>, %w: tensor<16x24xf32>, %b: tensor<16xf32>) -> tensor<40x16xf32> {
  %xs = graph.index_select %x, %src {dim = 0} : tensor<12x8xf32>, tensor<40xi64> -> tensor<40x8xf32>
  %xd = graph.index_select %x, %dst {dim = 0} : tensor<12x8xf32>, tensor<40xi64> -> tensor<40x8xf32>
  %c = graph.concat %xs, %xd, %e {dim = 1} : tensor<40x8xf32>, tensor<40x8xf32>, tensor<40x8xf32> -> tensor<40x24xf32>
  %h = graph.linear %c, %w, %b : tensor<40x24xf32>, tensor<16x24xf32>, tensor<16xf32> -> tensor<40x16xf32>
  %y = graph.relu %h : tensor<40x16xf32> -> tensor<40x16xf32>
  func.return %y : tensor<40x16xf32>
}
"""


@pytest.mark.parametrize("opts", [{}, dict(tile_m=8, tile_n=4), dict(prologue=False)])
def test_gather_prologue(opts):
    """MeshGraphNet's edge input: two row gathers and their concat with ``e`` join the GEMM that reads them as
    its row operand (one task; the gathered rows are never a task result), unless prologues are off; the
    meaning is kept for random indices with repeats (40 picks of 12 rows)."""
    module = parse_module(EDGE_LINEAR)
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((12, 8)), rng.integers(0, 12, 40), rng.integers(0, 12, 40),
              rng.standard_normal((40, 8)), rng.standard_normal((16, 24)), rng.standard_normal(16)]
    ref = interpret(module, inputs, f64=True)
    out = module.clone()
    FormRegionsPass(**opts).apply(make_context(), out)
    out.verify()
    ts = _tasks(out)
    if opts.get("prologue", True):
        assert len(ts) == 1
        assert [o.name for o in ts[0].body.blocks.first.ops].count("graph.index_select") == 2
    else:
        assert len(ts) == 3 and ts[-1].task_kind == "contraction"
    got = interpret(parse_module(str(out)), inputs, f64=True)
    _assert_close(got, ref, 1e-12, 1e-12)


def test_split_reduction_splits_gemv():
    m = _check_same(GEMV, [FormRegionsPass(), SplitReductionPass()])
    kinds = [t.task_kind for t in _tasks(m)]
    assert kinds.count("partial") >= 2 and kinds.count("combine") == 1
    m = _check_same(GEMV, [FormRegionsPass(), SplitReductionPass(force=4)])
    assert [t.task_kind for t in _tasks(m)].count("partial") == 4
    m = _check_same(LONG_SUM, [FormRegionsPass(), SplitReductionPass(force=5)])
    parts = [t for t in _tasks(m) if t.task_kind == "partial"]
    # a sum / amax is split as ONE partial task whose result keeps the 5 parts as a dim (no replicated code)
    assert len(parts) == 2 and {tuple(t.outs[0].type.get_shape()) for t in parts} == {(4, 5, 1), (4, 5)}


COLUMN_SUMS = """
func.func @main(%x: tensor<4096x4xf32>, %y: tensor<2x8x1021xf32>) -> (tensor<4xf32>, tensor<1x4xf32>, tensor<2xf32>, tensor<f32>) {
  %c = graph.sum %x {dims = [0]} : tensor<4096x4xf32> -> tensor<4xf32>
  %e = graph.exp %x : tensor<4096x4xf32> -> tensor<4096x4xf32>
  %p = graph.amin %e {dims = [0], keepdim = true} : tensor<4096x4xf32> -> tensor<1x4xf32>
  %q = graph.sum %y {dims = [1, 2]} : tensor<2x8x1021xf32> -> tensor<2xf32>
  %a = graph.amax %y : tensor<2x8x1021xf32> -> tensor<f32>
  func.return %c, %p, %q, %a : tensor<4xf32>, tensor<1x4xf32>, tensor<2xf32>, tensor<f32>
}
"""


@pytest.mark.parametrize("force", [0, 6, 40])
def test_split_reduction_as_one_partial_task(force):
    """Column sums (a bias gradient), keepdim, several reduced dims, a reduction over all dims: split as one
    partial task over a reshaped operand (P = the largest divisor of K up to the chosen count), meaning
    preserved; 1021 (prime) has no divisor: replicated partials, at most MAX_REPLICAS of them."""
    from kitsune.passes.split_reduction import MAX_REPLICAS

    m = _check_same(COLUMN_SUMS, [FormRegionsPass(), SplitReductionPass(force=force)])
    parts = [t for t in _tasks(m) if t.task_kind == "partial"]
    one = [t for t in parts if t.task_name.endswith("_part")]
    replicated = [t for t in parts if not t.task_name.endswith("_part")]
    assert len(one) == 2, [t.task_name for t in parts]  # the two reductions over 4096 rows
    p_want = min(force, 4096) if force else min(132, 4096 // 64)  # (min_chunk 64)
    p = max(q for q in range(2, p_want + 1) if 4096 % q == 0)
    assert {tuple(t.outs[0].type.get_shape()) for t in one} == {(p, 4), (p, 1, 4)}
    assert all(t.tile_sizes()[0] == 1 for t in one)  # a tile is one part wide: P x the others work items
    assert 2 <= len(replicated) <= 2 * MAX_REPLICAS  # the two reductions over the prime 1021


ATTENTIONS = {"gqa": ATT_GQA, "mha": ATT_MHA, "gqa_uneven": _attention(8, 2, 1, 37, scale=0.7),
              "gqa_prefill": _attention(4, 1, 3, 23, e=8, ev=4, epilogue=False)}


@pytest.mark.parametrize("name", sorted(ATTENTIONS))
@pytest.mark.parametrize("p", [2, 3, 5])
def test_split_attention_online_softmax(name, p):
    """Flash-decoding split along L_kv: interpreter(graph) == interpreter(partials + online-softmax combine)
    (a partial task per chunk: the form without the decode_attention template)."""
    m = _check_same(ATTENTIONS[name], [FormRegionsPass(), SplitReductionPass(force=p, templates=False)],
                    rtol=1e-5, atol=1e-6)
    ts = _tasks(m)
    parts = [t for t in ts if t.task_kind == "partial"]
    (comb,) = [t for t in ts if t.task_kind == "combine"]
    assert len(parts) == p and all(len(t.outs) == 3 for t in parts)
    # the chunks of L_kv cover it exactly
    lens = [next(o for o in t.body.blocks.first.ops if o.name == "graph.slice").results[0].type.get_shape()[2]
            for t in parts]
    lkv = next(o for o in parse_module(ATTENTIONS[name]).walk() if o.name == "graph.attention").operands[1]
    assert sum(lens) == lkv.type.get_shape()[2]
    names = [o.name for o in comb.body.blocks.first.ops]
    assert names.count("graph.maximum") == p - 1 and names.count("graph.exp") == p and "graph.div" in names
    for t in parts:
        pn = [o.name for o in t.body.blocks.first.ops]
        assert {"graph.amax", "graph.exp", "graph.sum"} <= set(pn) and "graph.attention" not in pn


@pytest.mark.parametrize("name", sorted(ATTENTIONS))
@pytest.mark.parametrize("p", [2, 3, 5])
def test_split_attention_in_one_task(name, p):
    """With the decode_attention template, one query: ONE partial task whose results carry the parts as dim 2
    (P = the largest divisor of L_kv up to p), the combine reduces that dim; meaning preserved. A prime key
    length (37) keeps a partial per chunk; several queries (prefill, MHA's two) keep the generic partials."""
    src = ATTENTIONS[name]
    att = next(o for o in parse_module(src).walk() if o.name == "graph.attention")
    (B, Hq, Lq, _), L, Ev = att.operands[0].type.get_shape(), att.operands[1].type.get_shape()[2], \
        att.operands[2].type.get_shape()[3]
    m = _check_same(src, [FormRegionsPass(), SplitReductionPass(force=p)], rtol=1e-5, atol=1e-6)
    parts = [t for t in _tasks(m) if t.task_kind == "partial"]
    P = max(d for d in range(1, p + 1) if L % d == 0)
    if Lq > 1 or P == 1:
        assert len(parts) == p and all(t.task_name[-1].isdigit() for t in parts)
        return
    (pt,) = parts
    assert pt.task_name.endswith("_part") and pt.attributes["template"].data == "decode_attention"
    assert [tuple(o.type.get_shape()) for o in pt.outs] == [(B, Hq, P, Ev), (B, Hq, P, 1), (B, Hq, P, 1)]
    assert pt.num_tiles() == B * P * Hq // pt.tile_sizes()[1]
    (comb,) = [t for t in _tasks(m) if t.task_kind == "combine"]
    red = [o for o in comb.body.blocks.first.ops if o.name in ("graph.amax", "graph.sum")]
    assert len(red) == 3 and all(list(o.attrs()["dims"]) == [2] for o in red)


def test_split_attention_choice_of_p():
    # 40 keys, 1 output tile: P = min(132 / 1, 40 // min_chunk)
    # (the generic partials; the decode_attention template chooses its own P, below)
    for chunk, want in ((64, 0), (16, 2), (8, 5), (1, 40)):
        m = _check_same(ATT_GQA, [FormRegionsPass(), SplitReductionPass(min_chunk=chunk, templates=False)],
                        rtol=1e-5, atol=1e-6)
        assert [t.task_kind for t in _tasks(m)].count("partial") == want
    # enough tiles already: no split unless forced
    m = _check_same(ATT_GQA, [FormRegionsPass(), SplitReductionPass(sms=1, min_chunk=1, templates=False)])
    assert not any(t.task_kind == "partial" for t in _tasks(m))


def test_split_attention_decode_template_choice():
    """Where the decode_attention template applies (one query, head dims of 16..256), the partials take it,
    with a tile of the query heads that share a key/value head, and P = about two work items per SM in chunks
    of at least 32 keys (DecodeAttentionConfig.for_sms; the largest divisor of the key length up to it: one
    partial task of P parts); it is the only split of the task, forced or not."""
    from kitsune.passes.split_reduction import decode_attention_problem
    from kitsune.schedule.configs import DecodeAttentionConfig

    text = ATT_GQA
    for sms, force in ((132, 0), (1, 0), (132, 3)):
        m = _check_same(text, [FormRegionsPass(), SplitReductionPass(sms=sms, force=force)], rtol=1e-5, atol=1e-6)
        att = next(o for o in parse_module(text).walk() if o.name == "graph.attention")
        prob = decode_attention_problem(att)
        assert prob is not None
        (part,) = [t for t in _tasks(m) if t.task_kind == "partial"]  # one task of P parts
        want = force or DecodeAttentionConfig.for_sms(prob, sms).PARTS
        keys = att.operands[1].type.get_shape()[2]
        P = max(d for d in range(1, want + 1) if keys % d == 0)
        assert part.outs[0].type.get_shape()[2] == P and part.attributes["config"].data["PARTS"].value.data == P
        assert part.attributes["template"].data == "decode_attention"
        assert part.tile_sizes()[1] == prob.M and part.tile_sizes()[2] == 1


@pytest.mark.parametrize("opts", [dict(force=2), dict(force=3), dict(force=5), dict(min_chunk=4)])
def test_split_attention_llama(opts):
    """The llama decode layer (scale 0.02; 4 query heads on 1 kv head, 21 keys), attention split too."""
    pytest.importorskip("torch")
    try:
        from kitsune.frontend import import_module
    except ImportError:
        pytest.skip("importer missing")
    from kitsune.models import get_workload

    model, inputs = get_workload("llama_decode_b1").build(scale=0.02)
    module, weights = import_module(model, inputs)
    args = _workload_args(module, inputs, weights)
    ref = interpret(module, args, f64=True)
    out = module.clone()
    for p in (FormRegionsPass(), SplitReductionPass(**opts, templates=False)):  # the generic partials
        p.apply(make_context(), out)
    out.verify()
    parts = [t for t in _tasks(out) if t.task_kind == "partial" and t.task_name.startswith("attention")]
    assert len(parts) == opts.get("force", 5)
    got = interpret(parse_module(str(out)), args, f64=True)
    _assert_close(got, ref, 1e-5, 1e-6)


def test_interpreter_runs_dataflow_text():
    import pathlib

    text = (pathlib.Path(__file__).parents[1] / "lit" / "dataflow" / "roundtrip.mlir").read_text()
    m = parse_module(text)
    rng = np.random.default_rng(1)
    x, w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in ((256, 64), (128, 64), (64, 128)))
    (y,) = interpret(m, [x, w1, w2], fn="mlp")
    h = x @ w1.T
    from math import erf

    g = 0.5 * h * (1 + np.vectorize(erf)(h / np.sqrt(2)))
    np.testing.assert_allclose(y, g @ w2.T, rtol=1e-4, atol=1e-4)


def test_verifier_rejects_inconsistent_relation():
    m = parse_module(MLP)
    FormRegionsPass().apply(make_context(), m)
    ch = next(o for o in m.walk() if isinstance(o, df.ChannelOp) and o.rel == "rows")
    ch.relation = __import__("xdsl.dialects.builtin", fromlist=["StringAttr"]).StringAttr("tile")
    with pytest.raises(Exception, match="needs identical"):
        m.verify()


# ------------------------------------------------------------ random graphs

try:
    from hypothesis import given, settings, strategies as st
except ImportError:  # pragma: no cover
    given = None


def _random_graph(ops: list[tuple[str, int, int]], m: int, n: int) -> str:
    """A random chain/DAG over [m, n] tensors from (op, operand a, operand b) choices."""
    t = f"tensor<{m}x{n}xf32>"
    tw = f"tensor<{n}x{n}xf32>"
    r = f"tensor<{m}x1xf32>"
    lines = [f"func.func @main(%v0: {t}, %w: {tw}) -> {t} {{"]
    vals = ["%v0"]
    for i, (op, a, b) in enumerate(ops):
        x, y = vals[a % len(vals)], vals[b % len(vals)]
        out = f"%v{i + 1}"
        if op == "linear":
            lines.append(f"  {out} = graph.linear {x}, %w : {t}, {tw} -> {t}")
        elif op in ("add", "mul", "sub"):
            lines.append(f"  {out} = graph.{op} {x}, {y} : {t}, {t} -> {t}")
        elif op in ("relu", "tanh", "sigmoid"):
            lines.append(f"  {out} = graph.{op} {x} : {t} -> {t}")
        elif op == "softmax":
            lines.append(f"  {out} = graph.softmax {x} : {t} -> {t}")
        elif op == "rownorm":
            lines.append(f"  %s{i} = graph.sum {x} {{dims = [1], keepdim = true}} : {t} -> {r}")
            lines.append(f"  {out} = graph.sub {x}, %s{i} : {t}, {r} -> {t}")
        elif op == "rms":
            lines.append(f"  {out} = graph.rms_norm {x} : {t} -> {t}")
        vals.append(out)
    # return the sum of all sinks so that nothing is dead
    used = {v for line in lines[1:] for v in line.split("=", 1)[1].replace(",", " ").split() if v.startswith("%v")}
    sinks = [v for v in vals if v not in used]
    acc = sinks[0]
    for j, s in enumerate(sinks[1:]):
        lines.append(f"  %acc{j} = graph.add {acc}, {s} : {t}, {t} -> {t}")
        acc = f"%acc{j}"
    lines.append(f"  func.return {acc} : {t}")
    lines.append("}")
    return "\n".join(lines)


if given is not None:
    OPS = ["linear", "add", "mul", "sub", "relu", "tanh", "sigmoid", "softmax", "rownorm", "rms"]

    @settings(max_examples=40, deadline=None)
    @given(ops=st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 20), st.integers(0, 20)), min_size=1,
                        max_size=9),
           m=st.sampled_from([1, 3, 8]), n=st.sampled_from([4, 16]),
           chain=st.booleans(), force=st.sampled_from([0, 2, 3]), tile=st.sampled_from([(128, 128), (2, 4)]))
    def test_random_graphs(ops, m, n, chain, force, tile):
        text = _random_graph(ops, m, n)
        _check_same(text, [FormRegionsPass(chain_bytes=(1 << 20) if chain else 0, tile_m=tile[0], tile_n=tile[1]),
                           SplitReductionPass(force=force)], rtol=1e-3, atol=1e-4)


# ------------------------------------------------------------ workloads

WORKLOADS = ["mlp_gpt3_T1024", "mlp_gpt3_T256", "llama_decode_b1", "llama_decode_b8", "dlrm_b2048", "nerf_65k",
             "mgn_10k", "inception_b8"]


@pytest.mark.parametrize("name", WORKLOADS)
def test_workloads(name):
    torch = pytest.importorskip("torch")
    try:
        from kitsune.frontend import import_module
    except ImportError:
        pytest.skip("importer missing")
    from kitsune.models import get_workload

    model, inputs = get_workload(name).build(scale=0.02)
    try:
        module, weights = import_module(model, inputs)
    except Exception as e:  # noqa: BLE001 - the importer is developed separately
        pytest.skip(f"importer failed: {type(e).__name__}: {e}")
    names = None
    ref_mod = module
    args = _workload_args(ref_mod, inputs, weights)
    ref = interpret(ref_mod, args, f64=True)
    for passes in ([FormRegionsPass(remarks=False)], [FormRegionsPass(chain_bytes=1 << 16), SplitReductionPass()]):
        out = module.clone()
        for p in passes:
            p.apply(make_context(), out)
        out.verify()
        assert _tasks(out)
        got = interpret(out, args, f64=True)
        for r, g in zip(ref, got):
            if np.asarray(r).dtype.kind == "f":
                np.testing.assert_allclose(g, r, rtol=2e-3, atol=2e-3)
            else:
                np.testing.assert_array_equal(g, r)
    del names, torch


def _workload_args(module, inputs, weights):
    from kitsune.frontend.torch_export import arguments

    return arguments(module, weights, *inputs)


# ---------------------------------------------------------------- materialize, choose-schedules

KV_CONCAT = """func.func @main(%x: tensor<2x32xf32>, %w: tensor<48x32xf32>, %cache: tensor<2x2x40x8xf32>)
    -> (tensor<2x2x41x8xf32>, tensor<2x4x1x8xf32>) {
  %p = graph.linear %x, %w : tensor<2x32xf32>, tensor<48x32xf32> -> tensor<2x48xf32>
  %q, %k = graph.split %p {dim = 1, sizes = [32, 16]} : tensor<2x48xf32> -> (tensor<2x32xf32>, tensor<2x16xf32>)
  %k4 = graph.reshape %k : tensor<2x16xf32> -> tensor<2x2x1x8xf32>
  %kc = graph.concat %cache, %k4 {dim = 2} : tensor<2x2x40x8xf32>, tensor<2x2x1x8xf32> -> tensor<2x2x41x8xf32>
  %q4 = graph.reshape %q : tensor<2x32xf32> -> tensor<2x4x1x8xf32>
  func.return %kc, %q4 : tensor<2x2x41x8xf32>, tensor<2x4x1x8xf32>
}"""


def test_materialize_moves_small_contractions_and_untiled_results():
    """The projection inside the cache concat and the query result the concat's tiles cannot cover become
    tasks of their own; meaning is preserved."""
    from kitsune.passes.materialize import MaterializePass, small_contraction, untiled

    before = _check_same(KV_CONCAT, [FormRegionsPass(tile_m=4, tile_n=8)])
    assert any(small_contraction(t) is not None or untiled(t) for t in _tasks(before))
    out = _check_same(KV_CONCAT, [FormRegionsPass(tile_m=4, tile_n=8), MaterializePass()])
    ts = _tasks(out)
    assert not any(small_contraction(t) is not None or untiled(t) for t in ts)
    contr = [t for t in ts if any(o.name == "graph.linear" for o in t.body.blocks.first.ops)]
    assert len(contr) == 1, "the projection is computed once, by one task"
    assert len(ts) >= 3


POOL_FC = """func.func @main(%x: tensor<4x64x7x7xf32>, %w: tensor<NxCxf32>, %b: tensor<Nxf32>) -> tensor<4xNxf32> {
  %s = graph.mean %x {dims = [2, 3]} : tensor<4x64x7x7xf32> -> tensor<4x64xf32>
  %y = graph.linear %s, %w, %b : tensor<4x64xf32>, tensor<NxCxf32>, tensor<Nxf32> -> tensor<4xNxf32>
  func.return %y : tensor<4xNxf32>
}"""


@pytest.mark.parametrize("n, moves", [(1000, True), (100, False)])
def test_materialize_moves_a_reduction_every_column_tile_would_reread(n, moves):
    """A global average pool before a classifier: with 8 column tiles of 128 the pool's input would be read 7
    more times (``min_bytes`` lowered to this graph's scale): it becomes a task of its own; with one column tile
    it stays. Meaning is preserved."""
    from kitsune.passes.materialize import MaterializePass

    text = POOL_FC.replace("xNxf32", f"x{n}xf32").replace("<NxCxf32>", f"<{n}x64xf32>").replace("<Nxf32>", f"<{n}xf32>")
    # (the default threshold is megabytes: this graph is small)
    out = _check_same(text, [FormRegionsPass(), MaterializePass(reread_bytes=4096)])
    ts = _tasks(out)
    pooled = [t for t in ts if any(o.name in ("graph.mean", "graph.sum") for o in t.body.blocks.first.ops)]
    fc = [t for t in ts if any(o.name == "graph.linear" for o in t.body.blocks.first.ops)]
    assert len(fc) == 1
    assert (pooled[0] is not fc[0]) == moves, [t.task_name for t in ts]


KV_DECODE = """func.func @main(%x: tensor<2x32xf32>, %w: tensor<64x32xf32>, %cache: tensor<2x2x40x8xf32>)
    -> (tensor<2x32xf32>RET_TYPE) {
  %p = graph.linear %x, %w : tensor<2x32xf32>, tensor<64x32xf32> -> tensor<2x64xf32>
  %q, %k, %v = graph.split %p {dim = 1, sizes = [32, 16, 16]} : tensor<2x64xf32> -> (tensor<2x32xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  %q4 = graph.reshape %q : tensor<2x32xf32> -> tensor<2x4x1x8xf32>
  %k4 = graph.reshape %k : tensor<2x16xf32> -> tensor<2x2x1x8xf32>
  %v4 = graph.reshape %v : tensor<2x16xf32> -> tensor<2x2x1x8xf32>
  %kc = graph.concat %cache, %k4 {dim = 2} : tensor<2x2x40x8xf32>, tensor<2x2x1x8xf32> -> tensor<2x2x41x8xf32>
  %vc = graph.concat %cache, %v4 {dim = 2} : tensor<2x2x40x8xf32>, tensor<2x2x1x8xf32> -> tensor<2x2x41x8xf32>
  %a = graph.attention %q4, %kc, %vc : tensor<2x4x1x8xf32>, tensor<2x2x41x8xf32>, tensor<2x2x41x8xf32> -> tensor<2x4x1x8xf32>
  %y = graph.reshape %a : tensor<2x4x1x8xf32> -> tensor<2x32xf32>
  func.return %yRET : tensor<2x32xf32>RET_TYPE
}"""


@pytest.mark.parametrize("returned", [False, True])
def test_fuse_copies_inlines_layout_only_tasks(returned):
    """After materialize, the KV-cache concat is a task of layout ops only (a copy of the cache): fuse-copies
    inlines it into the attention task, which then reads the cache and the projection directly. When the
    function also returns the concatenated cache, the copy is stored anyway: its task stays. Meaning is
    preserved either way."""
    from kitsune.passes.fuse_copies import FuseCopiesPass, is_copy
    from kitsune.passes.materialize import MaterializePass

    text = KV_DECODE.replace("RET_TYPE", ", tensor<2x2x41x8xf32>" if returned else "")
    text = text.replace("%yRET", "%y, %kc" if returned else "%y")
    before = _check_same(text, [FormRegionsPass(), MaterializePass()])
    copies = [t for t in _tasks(before) if is_copy(t)]
    assert copies and any(o.name == "graph.concat" for t in copies for o in t.body.blocks.first.ops)
    out = _check_same(text, [FormRegionsPass(), MaterializePass(), FuseCopiesPass()])
    ts = _tasks(out)
    att = [t for t in ts if any(o.name == "graph.attention" for o in t.body.blocks.first.ops)]
    assert len(att) == 1
    fused = any(o.name == "graph.concat" for o in att[0].body.blocks.first.ops)
    assert fused != returned
    assert len(ts) == len(_tasks(before)) - (0 if returned else len(copies))
    assert bool([t for t in ts if is_copy(t)]) == returned


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_materialize_and_choose_schedules_preserve_meaning(name):
    from kitsune.passes.choose_schedules import ChooseSchedulesPass
    from kitsune.passes.materialize import MaterializePass

    out = _check_same(GRAPHS[name], [FormRegionsPass(), MaterializePass(), ChooseSchedulesPass(db=False)])
    for t in _tasks(out):
        assert "template" in t.attributes
