"""Online softmax statistics: a maximum and a sum of exponentials over the same reduction in one pass.

A comprehension ``M[i] max= X; E[i, r] = exp(X - M[i]); S[i] += E[i, r]`` (softmax's statistics; the split of a
long row's softmax, ``graph.softmax_stats``) reduces the same row twice: the maximum first, then the sum, whose
body needs the finished maximum. Where the row is longer than a block (a loop of chunks), that is two passes over
memory: a language model's head read its 50 257 logits a row twice, the second time mostly past the L2
(bench/kernels/NOTES.md section 42). Here both run in one loop over the row: each step loads ``FOLD`` sub-chunks
and folds them into block accumulators a quarter of the step wide -- the lanes' new maximum, their sums rescaled to
it once a step, one exponential an element (section 44) --; after the loop the lanes' maxima and sums combine. Lanes
that saw only masked elements keep ``-inf`` and a zero sum (never ``exp(-inf - -inf)``); a NaN anywhere makes both
results NaN, as the two-pass form does.

Chosen from the statements' shape, never an op name: the sum's body, its ``=`` intermediates inlined, is
``exp(x - M[lhs])`` with ``x`` the maximum's own body and the same left side and reduction variables; each of
``M`` and ``S`` has that one statement. Only where the generic loop would keep block accumulators
(``Reductions.chunked``'s ``wide``: more than one chunk, a tile small against the CTA), not a split stage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kitsune.codegen.triton_gen.index_algebra import ladd, lconst
from kitsune.codegen.triton_gen.syntax import reduce_text
from kitsune.semantics.comprehension import Access, BinOp, Call, Neg, Stmt

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.evaluator import Evaluator
    from kitsune.codegen.triton_gen.reductions import Reductions

FOLD = 4
"""Sub-chunks a step of the loop loads and folds into its block accumulators (``OnlineSoftmax.emit``)."""
MIN_LANES = 16
"""The accumulators are at least this many lanes wide (a chunk of fewer than ``FOLD * MIN_LANES``: two passes)."""


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
    def __init__(self, ev: "Evaluator", reductions: "Reductions"):
        self.ev = ev
        self.b = ev.b
        self.reductions = reductions  # (its ``chunk_block``: a body at the chunk's index)

    def emit(self, opp, s, binding, rvars, ext, bframe, depth: int, E: int, P: int):
        """The maximum of statement ``s`` and the sum of exponentials over it (``sum_of_exponentials``) in one loop
        whose step loads ``FOLD`` sub-chunks of ``W = P / FOLD`` lanes (their loads issued together, ``P`` elements
        in flight) and folds them into block accumulators of W lanes: the lanes' new maximum over the sub-chunks,
        the sum rescaled to it once a step, then one exponential an element; after the loop the lanes combine.
        Returns (maximum, sum), each over the tile's frame ``bframe``. Against the form before (a running maximum
        and sum for each of P lanes, one exponential an element, ``exp(-|x - m|)``): a quarter of the accumulator
        registers, twice the bytes in flight a CTA at the same registers, about half the operations an element; a
        language model's head's statistics over 50 257 columns 56.6 -> 54.3 us on the H200 (bench/kernels/NOTES.md
        section 44). A lane that has seen only -inf keeps maximum -inf and sum 0 (its exponents are taken against
        0); a NaN reaches both (the maximum propagates it, exp(NaN) the sum)."""
        b, em = self.b, self.b.em
        W = P // FOLD
        m_acc, s_acc = b.fresh("acc"), b.fresh("acc")
        r = b.new_axis("r", W)
        f2 = bframe + (r, )
        wshape = "[" + ", ".join(str(b.aranges[a]) for a in f2) + "]"
        em.emit(f"{m_acc} = tl.full({wshape}, float(\"-inf\"), tl.float32)", depth)
        em.emit(f"{s_acc} = tl.full({wshape}, 0.0, tl.float32)", depth)
        k = b.fresh("k")
        b.steps[k] = P  # the counter runs over multiples of P
        saved = em.open(f"for {k} in range(0, {E}, {P}):", depth)
        inner = depth + 1
        masked = -(-E // P) * P != E
        base = b.sym(k, 0, -(-E // P) * P - P, inner)
        xs = []
        for j in range(FOLD):
            rl = ladd(base, lconst(j * W), b.axis(r, W - 1))
            xv = b.fresh("v")
            em.emit(f"{xv} = {self.chunk(opp, s, binding, rvars, ext, bframe, r, rl, masked, E)}", inner)
            xs.append(xv)
        cm, m_new, m_base = b.fresh("v"), b.fresh("m_new"), b.fresh("v")
        fold = xs[0]
        for xv in xs[1:]:
            fold = f"tl.maximum({fold}, {xv}, propagate_nan=tl.PropagateNan.ALL)"
        em.emit(f"{cm} = {fold}", inner)
        em.emit(f"{m_new} = tl.maximum({m_acc}, {cm}, propagate_nan=tl.PropagateNan.ALL)", inner)
        em.emit(f"{m_base} = tl.where({m_new} == float(\"-inf\"), 0.0, {m_new})", inner)
        terms = " + ".join(f"tl.exp({xv} - {m_base})" for xv in xs)
        em.emit(f"{s_acc} = {s_acc} * tl.exp({m_acc} - {m_base}) + {terms}", inner)
        em.emit(f"{m_acc} = {m_new}", inner)
        em.close(depth, saved)
        return self.combine(m_acc, s_acc, bframe, depth)

    def chunk(self, opp, s, binding, rvars, ext, bframe, r: str, rl, masked: bool, E: int) -> str:
        """The maximum's body at the reduction index ``rl`` (lanes of axis ``r``), -inf past the reduction's end
        where ``masked``, as a [bframe, r] block."""
        b2 = dict(binding)
        b2.update(self.ev.decompose(rl, rvars, ext))
        cs = [(rl, "<", E)] if masked else []
        return self.reductions.chunk_block(opp, s.rhs, b2, float("-inf"), cs, bframe, r)

    def combine(self, m_acc: str, s_acc: str, bframe, depth: int):
        """(maximum, sum) over the lanes of the block accumulators."""
        b = self.b
        ax = len(bframe)
        mx = b.tmp(reduce_text("max=", m_acc, ax), bframe, depth)
        mb = f"tl.expand_dims({mx.code}, {ax})"
        total = b.tmp(reduce_text("+=", f"tl.where({m_acc} == float(\"-inf\"), 0.0, {s_acc} * tl.exp({m_acc} - {mb}))",
                                  ax), bframe, depth)
        return mx, total


__all__ = ["OnlineSoftmax", "sum_of_exponentials", "FOLD", "MIN_LANES"]
