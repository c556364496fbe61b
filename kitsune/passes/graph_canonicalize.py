"""graph-canonicalize: local simplifications of graph IR.

* ``permute`` that swaps the last two dims feeding a ``matmul`` folds into its
  ``transpose_a`` / ``transpose_b`` flag;
* ``matmul{transpose_b}`` of a 2-d weight followed by ``add`` of a rank-1 bias
  becomes ``linear`` (what torch.export's ``t`` + ``addmm`` means);
* ``reshape(reshape(x))`` -> ``reshape(x)``; a reshape / expand / cast /
  identity permute / full slice to the same type -> ``x``;
* ``permute(permute(x))`` -> one ``permute``;
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


@dataclass(frozen=True)
class GraphCanonicalizePass(ModulePass):
    """Local simplifications: fold transposes into matmul, matmul+bias -> linear, merge
    reshapes / permutes, drop identity reshape / expand / cast / permute / slice, dead code."""

    name = "graph-canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([
                FoldTransposeIntoMatmul(), MatmulBiasToLinear(), DropIdentity(), MergeReshapes(), ComposePermutes(),
            ])
        ).rewrite_module(op)
        for r in op.regions:
            region_dce(r)
