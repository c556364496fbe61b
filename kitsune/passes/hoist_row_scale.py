"""kitsune-hoist-row-scale: a factor of a contraction's row operand that is constant along the reduction moves to
its result.

    linear(x * s * g, W)  ->  linear(x * g, W) * s        (s: [..., M, 1], constant along K)

The sum over K is linear, so a factor that does not vary along K (a row's RMSNorm scale ``rsqrt(mean(x^2) +
eps)``, a per-row softmax denominator) multiplies the result as well as the operand. As an operand factor it is
part of the GEMM's prologue, and every program of a K split (and every column tile) computes the whole-row
reduction behind it before its share of the K loop: Llama's decode QKV projection at batch 8 runs 384 programs
that each read the full 8 x 2048 rows for the norm to use 256 columns of them (13.6 us for 12.6 MB of weights,
bench/kernels/NOTES.md section 22). As a result factor it is part of the epilogue, which a split runs once per
tile after its parts meet.

Taken for ``linear`` without a bias and ``matmul`` without a transposed left operand, when the row operand is a
product (``mul`` ops used once) of factors of its element type; the factors whose shape, aligned to the
operand's, has 1 in the last dim move, the others stay (at least one of each).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern

from kitsune.dialects import graph
from kitsune.dialects.graph import GraphOp


def _shape(v) -> list[int]:
    return list(v.type.get_shape())


def product_factors(v, root: bool = True) -> tuple[list, list] | None:
    """(factors, the mul ops) of ``v`` as a product of ``mul`` ops each used once (``v`` itself: once, by the
    contraction), or None when ``v`` is not such a product."""
    op = getattr(v, "op", None)
    if not isinstance(op, GraphOp) or op.OPDEF.name != "mul" or v.uses.get_length() != 1:
        return None if root else ([v], [])
    factors, muls = [], [op]
    for o in op.operands:
        sub = product_factors(o, root=False)
        factors += sub[0]
        muls += sub[1]
    return factors, muls


def row_constant(f, rank: int) -> bool:
    """Factor ``f`` does not vary along the last dim of a rank-``rank`` operand it multiplies."""
    sh = _shape(f)
    return len(sh) <= rank and (not sh or sh[-1] == 1)


class HoistRowScale(RewritePattern):
    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        if not isinstance(op, GraphOp) or op.OPDEF.name not in ("linear", "matmul") or len(op.results) != 1:
            return
        if op.OPDEF.name == "linear" and len(op.operands) != 2:
            return  # (a bias is added after the product: it would be scaled too)
        if op.OPDEF.name == "matmul" and op.attrs()["transpose_a"]:
            return
        a = op.operands[0]
        got = product_factors(a)
        if got is None:
            return
        factors, _ = got
        et = a.type.get_element_type()
        if any(f.type.get_element_type() != et for f in factors):
            return
        rank = len(_shape(a))
        scales = [f for f in factors if row_constant(f, rank)]
        rest = [f for f in factors if not row_constant(f, rank)]
        full = [f for f in rest if _shape(f) == _shape(a)]
        if not scales or not full:
            return
        rest.remove(full[0])
        rest.insert(0, full[0])  # (the product's first factor has the operand's shape: each mul keeps it)
        new_ops = []
        acc = rest[0]
        for f in rest[1:]:
            m = graph.build("mul", [acc, f], [a.type])
            m.location = a.op.location
            new_ops.append(m)
            acc = m.results[0]
        y = op.results[0]
        c = graph.build(op.OPDEF.name, [acc, *op.operands[1:]], [y.type], **op.attrs())
        c.location = op.location
        new_ops.append(c)
        out = c.results[0]
        for s in scales:
            m = graph.build("mul", [out, s], [y.type])
            m.location = op.location
            new_ops.append(m)
            out = m.results[0]
        rewriter.replace(op, new_ops, [out])


@dataclass(frozen=True)
class HoistRowScalePass(ModulePass):
    """Row-constant factors of a contraction's row operand multiply its result instead (see the module)."""

    name = "kitsune-hoist-row-scale"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from xdsl.transforms.dead_code_elimination import region_dce

        PatternRewriteWalker(GreedyRewritePatternApplier([HoistRowScale()]), apply_recursively=False).rewrite_module(op)
        for r in op.regions:
            region_dce(r)


__all__ = ["HoistRowScalePass", "HoistRowScale", "product_factors", "row_constant"]
