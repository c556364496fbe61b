"""Test helpers: build small graph-dialect functions in Python, run them, and
random DAGs of graph ops for property-based tests (hypothesis)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float64Type,
    FunctionType,
    ModuleOp,
    TensorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from kitsune.dialects import graph
from kitsune.interpreter import interpret

_NP_TO_ELEM = {
    np.dtype(np.float32): f32,
    np.dtype(np.float64): Float64Type(),
    np.dtype(np.float16): Float16Type(),
    np.dtype(np.int64): i64,
    np.dtype(np.int32): i32,
    np.dtype(np.bool_): i1,
}


def elem_of(dtype) -> Attribute:
    if dtype == "bf16":
        return BFloat16Type()
    return _NP_TO_ELEM[np.dtype(dtype)]


def ttype(shape: Sequence[int], elem: Attribute = f32) -> TensorType:
    return TensorType(elem, [(DYNAMIC_INDEX if d is None or d < 0 else d) for d in shape])


class FuncBuilder:
    """Build ``func.func @main`` with graph ops appended in order."""

    def __init__(self):
        self.block = Block()
        self.arg_types: list[Attribute] = []
        self.ops: list[graph.GraphOp] = []
        self.conc: dict[SSAValue, list[int]] = {}
        """The run-time shape of each value (its type may have '?' dims)."""

    def arg(self, t: TensorType, concrete: Sequence[int] | None = None) -> SSAValue:
        self.arg_types.append(t)
        v = self.block.insert_arg(t, len(self.block.args))
        self.conc[v] = list(concrete) if concrete is not None else list(t.get_shape())
        return v

    def op(self, name: str, *operands: SSAValue, result_types: Sequence[Attribute] | None = None,
           **attrs: Any) -> graph.GraphOp:
        given = result_types
        if result_types is None:
            result_types = graph.infer_result_types(name, [o.type for o in operands], **attrs)
        o = graph.build(name, list(operands), list(result_types), **attrs)
        self.block.add_op(o)
        self.ops.append(o)
        if given is not None and all(d >= 0 for t in given for d in t.get_shape()):
            conc = [list(t.get_shape()) for t in given]
        elif name == "reshape":
            n = int(np.prod(self.conc[operands[0]]))
            (t,) = given
            known = int(np.prod([d for d in t.get_shape() if d >= 0]))
            conc = [[d if d >= 0 else n // known for d in t.get_shape()]]
        else:
            ctypes = [ttype(self.conc[v], v.type.get_element_type()) for v in operands]
            conc = [list(t.get_shape()) for t in graph.infer_result_types(name, ctypes, **attrs)]
        for r, c in zip(o.results, conc):
            self.conc[r] = c
        return o

    def v(self, name: str, *operands: SSAValue, **attrs: Any) -> SSAValue:
        return self.op(name, *operands, **attrs).results[0]

    def const(self, values, t: TensorType) -> SSAValue:
        attr = DenseIntOrFPElementsAttr.from_list(t, list(np.asarray(values).ravel()))
        return self.op("constant", result_types=[t], value=attr).results[0]

    def module(self, results: Sequence[SSAValue]) -> ModuleOp:
        self.block.add_op(func.ReturnOp(*results))
        ft = FunctionType.from_lists(self.arg_types, [r.type for r in results])
        f = func.FuncOp("main", ft, Region(self.block))
        m = ModuleOp([f])
        m.verify()
        return m


def single_op_module(name: str, arg_types: Sequence[TensorType], result_types=None, **attrs) -> ModuleOp:
    fb = FuncBuilder()
    args = [fb.arg(t) for t in arg_types]
    op = fb.op(name, *args, result_types=result_types, **attrs)
    return fb.module(list(op.results))


def module_text(m: ModuleOp) -> str:
    return str(m)


def reparse(m: ModuleOp) -> ModuleOp:
    from kitsune.context import parse_module

    return parse_module(str(m))


def op_names(m: ModuleOp) -> list[str]:
    return [o.name for o in m.walk() if isinstance(o, graph.GraphOp)]


def assert_close(got, want, rtol=1e-5, atol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype == np.bool_ or want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
        return
    scale = max(1.0, float(np.nanmax(np.abs(want[np.isfinite(want)]), initial=0.0)))
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol * scale,
                               equal_nan=True)


# ------------------------------------------------------------- random graphs

UNARY = ["relu", "neg", "abs", "tanh", "sigmoid", "gelu", "silu", "erf"]
BINARY = ["add", "sub", "mul", "maximum", "minimum"]


@st.composite
def random_graphs(draw, max_ops: int = 6, dynamic: bool = False):
    """A random small DAG of graph ops with consistent shapes.

    Returns (module, inputs): a verified module with @main and numpy inputs.
    With ``dynamic``, some dims of the first argument are '?' in its type.
    """
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    fb = FuncBuilder()
    inputs: list[np.ndarray] = []

    def new_arg(shape, dyn=()):
        inputs.append(rng.standard_normal(shape).astype(np.float32))
        return fb.arg(ttype([-1 if i in dyn else d for i, d in enumerate(shape)]), shape)

    dims = st.integers(1, 4)
    rank0 = draw(st.integers(1, 3))
    dyn0 = draw(st.lists(st.integers(0, rank0 - 1), min_size=1, unique=True)) if dynamic else []
    pool: list[SSAValue] = [new_arg([draw(dims) for _ in range(rank0)], dyn0)]

    def shape(v):
        return list(fb.conc[v])

    n_ops = draw(st.integers(1, max_ops))
    for _ in range(n_ops):
        x = draw(st.sampled_from(pool))
        s = shape(x)
        r = len(s)
        kind = draw(st.sampled_from([
            "unary", "binary", "binary_arg", "reduce", "softmax", "norm", "linear", "matmul", "permute",
            "reshape", "concat", "split", "slice", "expand", "linear_pattern",
        ]))
        y = None
        if kind == "unary":
            name = draw(st.sampled_from(UNARY))
            attrs = {"approximate": draw(st.sampled_from(["none", "tanh"]))} if name == "gelu" else {}
            y = fb.v(name, x, **attrs)
        elif kind in ("binary", "binary_arg"):
            name = draw(st.sampled_from(BINARY))
            same = [v for v in pool if shape(v) == s]
            if kind == "binary" and len(same) > 1:
                other = draw(st.sampled_from(same))
            else:
                # a broadcastable new argument: a suffix of s with some dims set to 1
                k = draw(st.integers(0, r))
                oshape = [d if draw(st.booleans()) else 1 for d in s[r - k:]]
                other = new_arg(oshape)
            a, b = (x, other) if draw(st.booleans()) else (other, x)
            y = fb.v(name, a, b)
        elif kind == "reduce":
            name = draw(st.sampled_from(["sum", "mean", "amax", "amin"]))
            dims_ = draw(st.lists(st.integers(0, r - 1), unique=True, max_size=r))
            dims_ = [d - r if draw(st.booleans()) else d for d in dims_]
            keep = draw(st.booleans())
            if not keep and (not dims_ or len(dims_) == r):
                keep = True  # keep rank >= 1 for later ops
            y = fb.v(name, x, dims=dims_, keepdim=keep)
        elif kind == "softmax":
            name = draw(st.sampled_from(["softmax", "log_softmax"]))
            y = fb.v(name, x, dim=draw(st.integers(-r, r - 1)))
        elif kind == "norm":
            name = draw(st.sampled_from(["layer_norm", "rms_norm"]))
            k = draw(st.integers(1, r))
            n_opt = draw(st.integers(0, 2 if name == "layer_norm" else 1))
            extra = [new_arg(s[r - k:]) for _ in range(n_opt)]
            y = fb.v(name, x, *extra, normalized_rank=k, eps=draw(st.sampled_from([1e-5, 1e-3])))
        elif kind in ("linear", "linear_pattern"):
            n = draw(dims)
            w = new_arg([n, s[-1]])
            bias = [new_arg([n])] if draw(st.booleans()) else []
            if kind == "linear" or r < 2:
                y = fb.v("linear", x, w, *bias)
            else:
                # what torch.export gives: permute(w) -> matmul -> add bias
                wt = fb.v("permute", w, perm=[1, 0])
                y = fb.v("matmul", x, wt)
                if bias:
                    y = fb.v("add", *((y, bias[0]) if draw(st.booleans()) else (bias[0], y)))
        elif kind == "matmul" and r >= 2:
            n = draw(dims)
            ta, tb = draw(st.booleans()), draw(st.booleans())
            a = x
            if ta:  # feed a transposed operand, as a permute or as the flag
                perm = list(range(r - 2)) + [r - 1, r - 2]
                a = fb.v("permute", x, perm=perm)
                if draw(st.booleans()):
                    a = fb.v("permute", a, perm=perm)  # back again: permute(permute) folds
                    ta = False
                else:
                    ta = True
            lead = s[:-2][len(s[:-2]) - draw(st.integers(0, r - 2)):] if r > 2 else []
            bshape = lead + ([n, s[-1]] if tb else [s[-1], n])
            b = new_arg(bshape)
            if tb and draw(st.booleans()):
                b = fb.v("permute", new_arg(lead + [s[-1], n]), perm=list(range(len(lead))) + [len(lead) + 1, len(lead)])
            if ta:
                y = fb.v("matmul", a, b, transpose_a=True, transpose_b=tb)
            else:
                y = fb.v("matmul", a, b, transpose_b=tb)
        elif kind == "permute":
            perm = draw(st.permutations(list(range(r))))
            y = fb.v("permute", x, perm=list(perm))
        elif kind == "reshape":
            mode = draw(st.sampled_from(["flatten", "unsqueeze", "merge", "same"]))
            t = list(x.type.get_shape())  # '?' dims stay '?' (at most one after merging)
            if mode == "flatten":
                new = [int(np.prod(s))]
                tnew = [new[0] if all(d >= 0 for d in t) else -1]
            elif mode == "unsqueeze" and r < 4:
                i = draw(st.integers(0, r))
                new, tnew = s[:i] + [1] + s[i:], t[:i] + [1] + t[i:]
            elif mode == "merge" and r >= 2 and sum(d < 0 for d in t) <= 1:
                new = s[:-2] + [s[-2] * s[-1]]
                tnew = t[:-2] + [s[-2] * s[-1] if t[-1] >= 0 and t[-2] >= 0 else -1]
            else:
                new, tnew = list(s), list(t)
            if sum(d < 0 for d in tnew) <= 1:  # a reshape to several '?' dims is ambiguous
                y = fb.op("reshape", x, result_types=[ttype(tnew)]).results[0]
                if draw(st.booleans()) and sum(d < 0 for d in t) <= 1:  # reshape of a reshape
                    y = fb.op("reshape", y, result_types=[x.type]).results[0]
        elif kind == "concat":
            d = draw(st.integers(-r, r - 1))
            same = [v for v in pool if shape(v) == s]
            others = draw(st.lists(st.sampled_from(same), min_size=1, max_size=2))
            y = fb.v("concat", x, *others, dim=d)
        elif kind == "split" and any(dd >= 2 for dd in s):
            d = draw(st.sampled_from([i for i, dd in enumerate(s) if dd >= 2]))
            first = draw(st.integers(1, s[d] - 1))
            op = fb.op("split", x, dim=d, sizes=[first, s[d] - first])
            y = op.results[draw(st.integers(0, 1))]
        elif kind == "slice":
            d = draw(st.integers(0, r - 1))
            start = draw(st.integers(-s[d], s[d] - 1))
            step = draw(st.integers(1, 2))
            end = draw(st.sampled_from([2**62, s[d], -1 if s[d] > 1 else s[d]]))
            # keep a non-empty result
            a0 = start + s[d] if start < 0 else start
            e0 = min(end + s[d] if end < 0 else end, s[d])
            if e0 <= a0:
                start, end = 0, 2**62
            y = fb.v("slice", x, dim=d, start=start, end=end, step=step)
        elif kind == "expand":
            if 1 in s:
                new = [draw(st.integers(1, 3)) if dd == 1 else (dd if draw(st.booleans()) else -1) for dd in s]
            else:
                new = [draw(st.integers(1, 2))] + [-1] * r if r < 4 else list(s)
            y = fb.v("expand", x, shape=new)
        if y is not None:
            pool.append(y)
    # return the last value and, sometimes, another live one
    results = [pool[-1]]
    if len(pool) > 2 and draw(st.booleans()):
        results.append(draw(st.sampled_from(pool[:-1])))
    m = fb.module(results)
    return GraphCase(m, inputs)


class GraphCase(tuple):
    """(module, inputs) whose repr is the MLIR text (readable hypothesis reports)."""

    def __new__(cls, m, inputs):
        return super().__new__(cls, (m, inputs))

    def __repr__(self) -> str:
        m, inputs = self
        return f"\n{m}\ninputs: {[list(a.shape) for a in inputs]}"


def run_main(m: ModuleOp, inputs) -> list[np.ndarray]:
    return [np.asarray(o) for o in interpret(m, inputs)]


BENCH_MODELS = Path(__file__).resolve().parents[2] / "bench" / "models"


def bench_module(name: str):
    """The model file ``bench/models/<name>.py``, imported (its classes and factories)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench_models_{name}", BENCH_MODELS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench_model(spec: str, dtype=None, device: str = "cpu"):
    """(model, inputs) of ``bench/models/<file.py[:factory]>`` as ``python -m kitsune.bench`` builds them (in
    ``dtype`` on ``device``; seed 0)."""
    from kitsune.bench.harness import get_source

    return get_source(str(BENCH_MODELS / spec)).build(1.0, dtype, device, 0)


def bench_model_triton(spec: str, mode: str, gluon: bool | None = None) -> str:
    """The Triton module of a ``bench/models`` model at full size (bf16 on the meta device, no weights), lowered
    for the H100 by ``kitsune-pipeline`` in ``mode`` without the tuning database (heuristic configs)."""
    import torch

    from kitsune.codegen.to_triton import generate_triton
    from kitsune.context import make_context
    from kitsune.frontend.torch_export import import_module
    from kitsune.passes.pipeline import KitsunePipelinePass

    model, inputs = bench_model(spec, torch.bfloat16, "meta")
    module, _ = import_module(model, inputs, None, with_weights=False)
    KitsunePipelinePass(mode=mode, gpu="h100", tuning_db=False).apply(make_context(), module)
    return generate_triton(module, capacity="ir", gluon=gluon)
