"""graph-decompose: composite graph ops -> primitive graph ops.

softmax / log_softmax -> amax, sub, exp, sum, div (log); layer_norm / rms_norm /
batch_norm -> reductions and elementwise ops; gelu / silu -> erf or tanh, sigmoid,
mul; linear -> matmul (transpose_b) + add; mean -> sum * 1/n; attention ->
matmul, softmax (decomposed too), matmul, with key/value heads expanded for
grouped-query attention. ``ops`` picks which composites to decompose (default
all); ``kitsune-opt -p 'graph-decompose{ops=softmax,gelu}'``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.transforms.dead_code_elimination import region_dce

from kitsune.dialects.graph import GraphOp
from kitsune.passes.builder import GraphBuilder

COMPOSITES = ("softmax", "log_softmax", "layer_norm", "rms_norm", "batch_norm", "gelu", "silu", "linear", "mean",
              "attention")


def _decompose(op: GraphOp, b: GraphBuilder):
    name, a = op.OPDEF.name, op.attrs()
    x = op.operands[0]
    shape = list(x.type.get_shape())
    rank = len(shape)
    if name in ("softmax", "log_softmax"):
        d = a["dim"] % rank
        m = b.op("amax", x, dims=[d], keepdim=True)
        s = b.op("sub", x, m)
        e = b.op("exp", s)
        z = b.op("sum", e, dims=[d], keepdim=True)
        if name == "softmax":
            return b.op("div", e, z)
        return b.op("sub", s, b.op("log", z))
    if name == "mean":
        dims = a["dims"] or tuple(range(rank))
        dims = [d % rank for d in dims]
        if any(shape[d] < 0 for d in dims):
            return None  # dynamic reduced size: keep the composite
        n = math.prod(shape[d] for d in dims)
        if n == 0:
            return None  # empty reduction: keep the composite
        s = b.op("sum", x, dims=dims, keepdim=a["keepdim"])
        return b.op("mul", s, b.scalar(1.0 / n, s))
    if name in ("layer_norm", "rms_norm"):
        k = a["normalized_rank"]
        dims = list(range(rank - k, rank))
        if any(shape[d] < 0 for d in dims):
            return None
        n = math.prod(shape[d] for d in dims)
        inv = b.scalar(1.0 / n, x)
        if name == "layer_norm":
            mu = b.op("mul", b.op("sum", x, dims=dims, keepdim=True), inv)
            xc = b.op("sub", x, mu)
            var = b.op("mul", b.op("sum", b.op("mul", xc, xc), dims=dims, keepdim=True), inv)
        else:
            xc = x
            var = b.op("mul", b.op("sum", b.op("mul", x, x), dims=dims, keepdim=True), inv)
        r = b.op("rsqrt", b.op("add", var, b.scalar(a["eps"], var)))
        y = b.op("mul", xc, r)
        if len(op.operands) > 1:
            y = b.op("mul", y, op.operands[1])
        if len(op.operands) > 2:
            y = b.op("add", y, op.operands[2])
        return y
    if name == "batch_norm":
        c = shape[1]
        cshape = [1, c] + [1] * (rank - 2)

        def chan(v):
            return b.op("reshape", v, result_type=TensorType(v.type.get_element_type(), cshape))

        mean, var = chan(op.operands[1]), chan(op.operands[2])
        r = b.op("rsqrt", b.op("add", var, b.scalar(a["eps"], var)))
        y = b.op("mul", b.op("sub", x, mean), r)
        if len(op.operands) > 3:
            y = b.op("mul", y, chan(op.operands[3]))
        if len(op.operands) > 4:
            y = b.op("add", y, chan(op.operands[4]))
        return y
    if name == "gelu":
        if a["approximate"] == "tanh":
            x3 = b.op("mul", b.op("mul", x, x), x)
            inner = b.op("mul", b.op("add", x, b.op("mul", x3, b.scalar(0.044715, x))),
                         b.scalar(0.7978845608028654, x))
            t = b.op("add", b.op("tanh", inner), b.scalar(1.0, x))
        else:
            t = b.op("add", b.op("erf", b.op("mul", x, b.scalar(0.7071067811865476, x))), b.scalar(1.0, x))
        return b.op("mul", b.op("mul", x, t), b.scalar(0.5, x))
    if name == "silu":
        return b.op("mul", x, b.op("sigmoid", x))
    if name == "linear":
        y = b.op("matmul", x, op.operands[1], transpose_b=True) if rank >= 2 else None
        if y is None:
            return None
        if len(op.operands) > 2:
            y = b.op("add", y, op.operands[2])
        return y
    if name == "attention":
        if len(op.operands) > 3 or a["causal"]:
            return None  # masked / causal attention stays whole
        q, k, v = op.operands
        qs, ks = list(q.type.get_shape()), list(k.type.get_shape())
        g = qs[1] // ks[1]
        if g > 1:
            k, v = b.expand_heads(k, g), b.expand_heads(v, g)
        scale = a["scale"] if a["scale"] != 0.0 else 1.0 / math.sqrt(qs[3])
        s = b.op("mul", b.op("matmul", q, k, transpose_b=True), b.scalar(scale, q))
        m = b.op("amax", s, dims=[3], keepdim=True)
        e = b.op("exp", b.op("sub", s, m))
        p = b.op("div", e, b.op("sum", e, dims=[3], keepdim=True))
        return b.op("matmul", p, v)
    return None


@dataclass
class DecomposeComposite(RewritePattern):
    ops: tuple[str, ...]

    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        if not isinstance(op, GraphOp) or op.OPDEF.name not in self.ops:
            return
        if any(d < 0 for r in op.results for d in r.type.get_shape()) and op.OPDEF.name != "softmax":
            return  # dynamic shapes: keep the composite (its sizes are needed)
        b = GraphBuilder.before(rewriter, op)
        new = _decompose(op, b)
        if new is None:
            for o in reversed(b.ops):
                rewriter.erase(o)
            return
        rewriter.replace_all_uses_with(op.results[0], new)
        rewriter.erase(op)


@dataclass(frozen=True)
class GraphDecomposePass(ModulePass):
    """Decompose composite graph ops (softmax, norms, gelu, silu, linear, mean, attention) into primitives."""

    name = "graph-decompose"

    ops: tuple[str, ...] = field(default=COMPOSITES)
    """Which composites to decompose (default: all of them)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        unknown = [o for o in self.ops if o not in COMPOSITES]
        if unknown:
            raise ValueError(f"graph-decompose: unknown op(s) {', '.join(unknown)}; "
                             f"choose from {', '.join(COMPOSITES)}")
        PatternRewriteWalker(DecomposeComposite(tuple(self.ops))).rewrite_module(op)
        for r in op.regions:
            region_dce(r)
