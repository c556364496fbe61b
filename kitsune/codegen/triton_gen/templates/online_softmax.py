"""Online softmax statistics: a maximum and a sum of exponentials over the same reduction in one pass.

A comprehension ``M[i] max= X; E[i, r] = exp(X - M[i]); S[i] += E[i, r]`` (softmax's statistics; the split of a
long row's softmax, ``graph.softmax_stats``) reduces the same row twice: the maximum first, then the sum, whose
body needs the finished maximum. Where the row is longer than a block (a loop of chunks), that is two passes over
memory: a language model's head read its 50 257 logits a row twice, the second time mostly past the L2
(bench/kernels/NOTES.md section 42). Here both run in one loop of the generic reduction's chunks with a running
maximum per lane and a sum rescaled whenever it grows, one exponential an element (``exp(-|x - m|)``: the term
itself, or the factor that rescales the sum); after the loop the lanes' maxima and sums combine. Lanes that saw
only masked elements keep ``-inf`` and a zero sum (never ``exp(-inf - -inf)``); a NaN anywhere makes both results
NaN, as the two-pass form does.

Chosen from the statements' shape, never an op name: the sum's body, its ``=`` intermediates inlined, is
``exp(x - M[lhs])`` with ``x`` the maximum's own body and the same left side and reduction variables; each of
``M`` and ``S`` has that one statement. Only the block-accumulator form of the loop (``Reductions.chunked``'s
``wide``: more than one chunk, a tile small against the CTA), not a split stage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kitsune.codegen.triton_gen.syntax import reduce_text
from kitsune.semantics.comprehension import Access, BinOp, Call, Neg, Stmt

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.evaluator import Evaluator


def _inline(expr, defs: dict[str, Stmt]):
    """``expr`` with each access of a tensor defined by one ``=`` statement (``defs``) at its own left side's
    indices replaced by that statement's right side."""
    if isinstance(expr, Access):
        d = defs.get(expr.tensor)
        return _inline(d.rhs, defs) if d is not None and d.lhs.indices == expr.indices else expr
    if isinstance(expr, Call):
        return Call(expr.fn, tuple(_inline(a, defs) for a in expr.args))
    if isinstance(expr, BinOp):
        return BinOp(expr.op, _inline(expr.lhs, defs), _inline(expr.rhs, defs))
    if isinstance(expr, Neg):
        return Neg(_inline(expr.arg, defs))
    return expr


def sum_of_exponentials(stmts, i: int) -> int | None:
    """The index of the statement that sums ``exp(x - M)`` over statement ``i``'s maximum ``M[lhs] max= x`` (see
    the module doc), or None."""
    s = stmts[i]
    if s.op != "max=":
        return None
    count: dict[str, int] = {}
    for t in stmts:
        count[t.lhs.tensor] = count.get(t.lhs.tensor, 0) + 1
    if count[s.lhs.tensor] != 1:
        return None
    defs = {t.lhs.tensor: t for t in stmts if t.op == "=" and count[t.lhs.tensor] == 1}
    want = Call("exp", (BinOp("-", s.rhs, Access(s.lhs.tensor, s.lhs.indices)), ))
    for j, t in enumerate(stmts):
        if j <= i or t.op != "+=" or count[t.lhs.tensor] != 1 or t.lhs.indices != s.lhs.indices:
            continue
        if set(t.reduction_vars) != set(s.reduction_vars):
            continue
        if _inline(t.rhs, defs) == want:
            return j
    return None


class OnlineSoftmax:
    def __init__(self, ev: "Evaluator"):
        self.ev = ev
        self.b = ev.b

    def emit(self, opp, s, t, binding, rvars, ext, bframe, depth: int, E: int, P: int, anchor: bool):
        """The maximum of statement ``s`` and the sum of statement ``t`` (``sum_of_exponentials``) in one loop of
        chunks of P along a new axis: (maximum, sum), each over the tile's frame ``bframe``."""
        b, ev = self.b, self.ev
        m_acc, s_acc = b.fresh("acc"), b.fresh("acc")
        r = b.new_axis("r", P)
        f2 = bframe + (r, )
        wshape = "[" + ", ".join(str(b.aranges[a]) for a in f2) + "]"
        b.em.emit(f"{m_acc} = tl.full({wshape}, float(\"-inf\"), tl.float32)", depth)
        b.em.emit(f"{s_acc} = tl.full({wshape}, 0.0, tl.float32)", depth)
        loop, saved, inner, rl = ev.split_k.loop(E, P, r, depth, anchor)
        b2 = dict(binding)
        b2.update(ev.decompose(rl, rvars, ext))
        body = ev.expr(opp, s.rhs, b2, float("-inf"))
        m = b.mask_mixed([(rl, "<", E)] if ev.split_k.masked(E, P, anchor) else [])
        if m is not None:
            body = b.where(m, body, float("-inf"))
        x = b.place(body, f2)
        if r not in body.frame:
            shp = ", ".join(str(b.aranges[a]) if (a in body.frame or a == r) else "1" for a in f2)
            x = f"tl.broadcast_to({x}, [{shp}])"
        # one exponential an element: e = exp(-|x - m|) is exp(x - m) where x does not raise the lane's maximum m,
        # else the factor exp(m - x) that rescales its sum to x (then adding exp(0) = 1); a masked x (-inf) adds
        # nothing, also to a lane that has seen nothing yet (-inf - -inf would be NaN); a NaN reaches both
        xv, d, e = b.fresh("v"), b.fresh("v"), b.fresh("v")
        b.em.emit(f"{xv} = {x}", inner)
        b.em.emit(f"{d} = {xv} - {m_acc}", inner)
        b.em.emit(f"{e} = tl.exp(-tl.abs({d}))", inner)
        b.em.emit(f"{s_acc} = tl.where({xv} == float(\"-inf\"), {s_acc}, "
                  f"tl.where({d} > 0, {s_acc} * {e} + 1.0, {s_acc} + {e}))", inner)
        b.em.emit(f"{m_acc} = tl.maximum({m_acc}, {xv}, propagate_nan=tl.PropagateNan.ALL)", inner)
        if loop:
            b.em.close(depth, saved)
        ax = len(bframe)
        mx = b.tmp(reduce_text("max=", m_acc, ax), bframe, depth)
        mb = f"tl.expand_dims({mx.code}, {ax})"
        total = b.tmp(reduce_text("+=", f"tl.where({m_acc} == float(\"-inf\"), 0.0, {s_acc} * tl.exp({m_acc} - {mb}))",
                                  ax), bframe, depth)
        return mx, total


__all__ = ["OnlineSoftmax", "sum_of_exponentials"]
