"""graph-canonicalize: local simplifications of graph IR.

* ``permute`` that swaps the last two dims feeding a ``matmul`` folds into its
  ``transpose_a`` / ``transpose_b`` flag;
* ``matmul{transpose_b}`` of a 2-d weight followed by ``add`` of a rank-1 bias
  becomes ``linear`` (what torch.export's ``t`` + ``addmm`` means);
* ``reshape(reshape(x))`` -> ``reshape(x)``; a reshape / expand / cast /
  identity permute / full slice to the same type -> ``x``;
* ``permute(permute(x))`` -> one ``permute``;
* reshapes that only regroup the leading dims (the last dim kept: what ``x.view(-1, x.size(-1))`` around a
  2-d ``addmm`` does, e.g. transformers' GPT-2 ``Conv1D``) move out of the way of the ops between them, so
  that those ops run on the unflattened shape and the two reshapes meet and cancel: a *flatten* (fewer dims)
  sinks below a ``matmul`` it feeds as the left operand and below elementwise ops whose other operands
  broadcast along the last dim only (a bias, a scalar); an *unflatten* (more dims) rises above such
  elementwise ops and above a 2-d ``matmul`` whose rows it splits. Without it a task's result is a reshape,
  no template sees the contraction behind it, and the evaluator runs the GEMM;
* a one-operand elementwise op of a ``concat`` distributes over its parts (``relu(cat(a, b))`` ->
  ``cat(relu(a), relu(b))``: the parts' producers take it as an epilogue, the concat becomes a copy);
* dead pure ops are removed.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.dead_code_elimination import region_dce

from kitsune.dialects import graph
from kitsune.dialects.graph import GraphOp


def _is(v, name: str) -> GraphOp | None:
    op = getattr(v, "op", None)
    if isinstance(op, GraphOp) and op.OPDEF.name == name:
        return op
    return None


def _swaps_last_two(perm) -> bool:
    n = len(perm)
    return n >= 2 and list(perm) == list(range(n - 2)) + [n - 1, n - 2]


class FoldTransposeIntoMatmul(RewritePattern):
    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        if not isinstance(op, GraphOp) or op.OPDEF.name != "matmul":
            return
        a = op.attrs()
        ta, tb = a["transpose_a"], a["transpose_b"]
        lhs, rhs = op.operands
        changed = False
        if (p := _is(lhs, "permute")) and _swaps_last_two(p.attrs()["perm"]):
            lhs, ta, changed = p.operands[0], not ta, True
        if (p := _is(rhs, "permute")) and _swaps_last_two(p.attrs()["perm"]):
            rhs, tb, changed = p.operands[0], not tb, True
        if not changed:
            return
        new = graph.build("matmul", [lhs, rhs], [op.results[0].type], transpose_a=ta, transpose_b=tb)
        new.location = op.location
        rewriter.replace(op, new)


class MatmulBiasToLinear(RewritePattern):
    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        if not isinstance(op, GraphOp) or op.OPDEF.name != "add":
            return
        for mm_v, bias in (op.operands, op.operands[::-1]):
            mm = _is(mm_v, "matmul")
            if mm is None or mm.results[0].uses.get_length() != 1:
                continue
            a = mm.attrs()
            w = mm.operands[1]
            if a["transpose_a"] or not a["transpose_b"] or len(w.type.get_shape()) != 2:
                continue
            n = w.type.get_shape()[0]
            bshape = list(bias.type.get_shape())
            if bshape != [n] or bias.type.get_element_type() != w.type.get_element_type():
                continue
            if op.results[0].type != mm.results[0].type:
                continue
            new = graph.build("linear", [mm.operands[0], w, bias], [op.results[0].type])
            new.location = mm.location
            rewriter.replace(op, new)
            rewriter.erase(mm)
            return


class DropIdentity(RewritePattern):
    """x -> x ops: same-type reshape / expand / cast / slice, identity permute."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        if not isinstance(op, GraphOp) or len(op.operands) != 1 or len(op.results) != 1:
            return
        name = op.OPDEF.name
        x = op.operands[0]
        if x.type != op.results[0].type:
            return
        if name in ("reshape", "expand", "cast", "slice") or (
            name == "permute" and list(op.attrs()["perm"]) == list(range(len(x.type.get_shape())))
        ):
            if any(d < 0 for d in x.type.get_shape()) and name == "slice":
                return
            rewriter.replace(op, [], [x])


class MergeReshapes(RewritePattern):
    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        if not isinstance(op, GraphOp) or op.OPDEF.name != "reshape":
            return
        inner = _is(op.operands[0], "reshape")
        if inner is None:
            return
        new = graph.build("reshape", [inner.operands[0]], [op.results[0].type])
        new.location = op.location
        rewriter.replace(op, new)


class ComposePermutes(RewritePattern):
    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        if not isinstance(op, GraphOp) or op.OPDEF.name != "permute":
            return
        inner = _is(op.operands[0], "permute")
        if inner is None:
            return
        p_out, p_in = op.attrs()["perm"], inner.attrs()["perm"]
        perm = [p_in[i] for i in p_out]
        new = graph.build("permute", [inner.operands[0]], [op.results[0].type], perm=perm)
        new.location = op.location
        rewriter.replace(op, new)


def _shape(v) -> list[int]:
    return list(v.type.get_shape())


def _regroup_kind(op) -> str | None:
    """'flatten' / 'unflatten' for a static reshape that keeps the last dim and regroups the leading dims into
    fewer / more dims, else None."""
    if not isinstance(op, GraphOp) or op.OPDEF.name != "reshape":
        return None
    s, t = _shape(op.operands[0]), _shape(op.results[0])
    if not s or not t or s[-1] != t[-1] or any(d < 0 for d in s + t) or len(s) == len(t):
        return None
    return "flatten" if len(t) < len(s) else "unflatten"


def _lastdim_broadcast(v, last: int) -> bool:
    """``v`` broadcasts against any shape ending in ``last`` the same way (a scalar, a [1] or [last] vector)."""
    sh = _shape(v)
    return len(sh) == 0 or (len(sh) == 1 and sh[0] in (1, last))


def _movable_elementwise(op, through) -> bool:
    """``op`` is a one-result elementwise op whose operand ``through`` has the result's shape and whose other
    operands broadcast along the last dim only."""
    if not isinstance(op, GraphOp) or op.OPDEF.category != "elementwise" or len(op.results) != 1:
        return False
    out = _shape(op.results[0])
    if _shape(through) != out or not out:
        return False
    return all(o is through or _lastdim_broadcast(o, out[-1]) for o in op.operands) and \
        sum(1 for o in op.operands if o is through) == 1


def _with_shape(t, shape):
    from xdsl.dialects.builtin import TensorType

    return TensorType(t.get_element_type(), shape)


class SinkFlattenThroughElementwise(RewritePattern):
    """``e(flatten(y), b)`` -> ``flatten(e(y, b))`` (b a bias or scalar)."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        for x in getattr(op, "operands", ()):
            r = getattr(x, "op", None)
            if _regroup_kind(r) != "flatten" or not _movable_elementwise(op, x):
                continue
            y = r.operands[0]
            new = graph.build(op.OPDEF.name, [y if o is x else o for o in op.operands],
                              [_with_shape(op.results[0].type, _shape(y))], **op.attrs())
            new.location = op.location
            back = graph.build("reshape", [new.results[0]], [op.results[0].type])
            back.location = op.location
            rewriter.replace(op, [new, back], [back.results[0]])
            return


class SinkFlattenThroughMatmul(RewritePattern):
    """``matmul(flatten(x), w)`` with a 2-d ``w`` -> ``flatten(matmul(x, w))`` (a batched-broadcast matmul)."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        if not isinstance(op, GraphOp) or op.OPDEF.name != "matmul" or op.attrs()["transpose_a"]:
            return
        lhs, w = op.operands
        r = getattr(lhs, "op", None)
        if _regroup_kind(r) != "flatten" or len(_shape(w)) != 2 or len(_shape(lhs)) != 2:
            return
        x = r.operands[0]
        out = _shape(x)[:-1] + [_shape(op.results[0])[-1]]
        new = graph.build("matmul", [x, w], [_with_shape(op.results[0].type, out)], **op.attrs())
        new.location = op.location
        back = graph.build("reshape", [new.results[0]], [op.results[0].type])
        back.location = op.location
        rewriter.replace(op, [new, back], [back.results[0]])


class RaiseUnflatten(RewritePattern):
    """``unflatten(e(x, b))`` -> ``e(unflatten(x), b)`` (b a bias or scalar; ``e`` used only there), and
    ``unflatten(matmul(x, w))`` of a 2-d matmul used only there -> ``matmul(unflatten(x), w)``."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        if _regroup_kind(op) != "unflatten":
            return
        v = op.operands[0]
        e = getattr(v, "op", None)
        if not isinstance(e, GraphOp) or v.uses.get_length() != 1:
            return
        t = _shape(op.results[0])
        if e.OPDEF.name == "matmul":
            x, w = e.operands
            if e.attrs()["transpose_a"] or len(_shape(x)) != 2 or len(_shape(w)) != 2:
                return
            ux = graph.build("reshape", [x], [_with_shape(x.type, t[:-1] + [_shape(x)[-1]])])
            new = graph.build("matmul", [ux.results[0], w], [op.results[0].type], **e.attrs())
        else:
            xs = [o for o in e.operands if _shape(o) == _shape(v)]
            if len(xs) != 1 or not _movable_elementwise(e, xs[0]):
                return
            x = xs[0]
            ux = graph.build("reshape", [x], [_with_shape(x.type, t)])
            new = graph.build(e.OPDEF.name, [ux.results[0] if o is x else o for o in e.operands],
                              [op.results[0].type], **e.attrs())
        ux.location = op.location
        new.location = e.location
        rewriter.replace(op, [ux, new], [new.results[0]])
        rewriter.erase(e)


class DistributeUnaryOverConcat(RewritePattern):
    """``e(concat(x1, .., xn))`` -> ``concat(e(x1), .., e(xn))`` for a one-operand elementwise ``e`` (a ReLU after
    an Inception block's concatenation), the concat used only there: each part's producer then takes ``e`` as
    its epilogue, and the concatenation is a copy, which code generation can elide (the producers store into
    the result's slices: ``kitsune.codegen.concat_in_place``)."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        if not isinstance(op, GraphOp) or op.OPDEF.category != "elementwise" or len(op.operands) != 1:
            return
        cat = _is(op.operands[0], "concat")
        if cat is None or op.operands[0].uses.get_length() != 1 or _shape(op.results[0]) != _shape(cat.results[0]):
            return
        elem = op.results[0].type.get_element_type()
        from xdsl.dialects.builtin import TensorType

        parts = []
        for x in cat.operands:
            p = graph.build(op.OPDEF.name, [x], [TensorType(elem, _shape(x))], **op.attrs())
            p.location = op.location
            parts.append(p)
        new = graph.build("concat", [p.results[0] for p in parts], [op.results[0].type], **cat.attrs())
        new.location = cat.location
        rewriter.replace(op, [*parts, new], [new.results[0]])
        rewriter.erase(cat)


@dataclass(frozen=True)
class GraphCanonicalizePass(ModulePass):
    """Local simplifications: fold transposes into matmul, matmul+bias -> linear, merge
    reshapes / permutes, drop identity reshape / expand / cast / permute / slice, dead code."""

    name = "graph-canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([
                FoldTransposeIntoMatmul(), MatmulBiasToLinear(), DropIdentity(), MergeReshapes(), ComposePermutes(),
                SinkFlattenThroughElementwise(), SinkFlattenThroughMatmul(), RaiseUnflatten(),
                DistributeUnaryOverConcat(),
            ])
        ).rewrite_module(op)
        for r in op.regions:
            region_dce(r)
