"""The attention template (prefill): ``graph.attention`` of a block of queries by one pass over the keys.

``softmax(q k^T * scale + mask) v`` for a tile of ``BM`` query rows of one (batch, query head) and the whole
head dim: the keys are walked in blocks of ``BN`` with the online-softmax recurrence of flash attention

    s = q k_blk^T * scale (+ mask);  m' = max(m, max_j s);  a = exp(m - m');  p = exp(s - m')
    l = a l + sum_j p;  o = a o + p v_blk

both products on the tensor cores (``tl.dot``), fp32 statistics and accumulator; the result is ``o / l`` (0 for a
query whose keys are all masked, as torch's safe softmax). Grouped-query attention reads key/value head
``h // G``; ``causal`` masks key ``j > i`` and stops the key loop after the tile's last query.

The generic evaluator computed each statement of the attention's comprehension on its own at every output
element: three passes over the keys, the scores recomputed per output column, scalar loops of one step (a BERT
layer's attention, 8 x 12 x 512 queries of 64: seconds; bench/kernels/NOTES.md section 24).

This is an *op-level* template: ``Evaluator.value_at`` hands it the attention op and the index it is wanted at
(the tile's query rows and head-dim lanes, whatever layout ops -- the heads' transpose and merge -- lie between
it and the stored result), and every load (q, k, v, the mask, through the layout ops before them: the merged
QKV projection's slices) comes from the comprehension evaluator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kitsune.codegen.plan import CodegenError, dtype_key
from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.index_algebra import Lin, ladd, laxes, lconst, ldepth, lfloordiv
from kitsune.codegen.triton_gen.syntax import TL, pow2
from kitsune.dialects.graph import fmt_loc
from kitsune.dialects.regions import tensor_shape

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.evaluator import Evaluator


class FlashAttention:
    def __init__(self, ev: "Evaluator"):
        self.ev = ev
        self.b = ev.b

    def value(self, op, idx: tuple[Lin, ...]) -> TV:
        """``op`` (graph.attention) at ``idx`` = (batch, query head, query rows, head-dim lanes)."""
        b, ev = self.b, self.ev
        bi, hi, ii, fi = idx
        ra = self._one_axis(op, ii, "query rows")
        fa = self._one_axis(op, fi, "head-dim lanes")
        if laxes(bi) or laxes(hi):
            raise CodegenError(f"{fmt_loc(op)}'{op.name}': the attention template computes one (batch, head) per "
                               f"tile")
        q, k, v = op.operands[:3]
        mask = op.operands[3] if len(op.operands) > 3 else None
        E = tensor_shape(q.type)[3]
        S = tensor_shape(k.type)[2]
        params = ev.program(op).inst.params  # (the op table's: scale 0 is 1 / sqrt(E), G query heads per kv head)
        G, scale = params["G"], params["scale"]
        BN = int(ev.cfg.get("BN", 64))
        BN = min(BN, max(16, pow2(S)))
        et = dtype_key(q.type.get_element_type())
        low = et in ("bf16", "f16")
        dt = TL[et] if low else "tl.float32"
        prec = "" if low or ev.gen.tf32 else ', input_precision="ieee"'
        dot = "_dot_lp" if low else "tl.dot"
        em = b.em
        rows, cols = b.aranges[ra], b.aranges[fa]
        if b.frame_of({ra, fa}) != (ra, fa) or rows < 16 or cols < 16:
            raise CodegenError(f"{fmt_loc(op)}'{op.name}': the attention template needs the query rows before the "
                               f"head dim in the tile, each at least 16 lanes (got {rows} x {cols})")
        ea = b.new_axis("e", max(16, pow2(E)))
        b.clamp[ea] = E
        hkv = lfloordiv(hi, G) if G > 1 else hi
        qv = ev.result_at(q, (bi, hi, ii, b.axis(ea, E - 1)))
        qd = b.fresh("qd")
        em.emit(f"{qd} = ({self._block(qv, ra, ea)}).to({dt})", 1)
        m_run, l_run, o_run = b.fresh("m_run"), b.fresh("l_run"), b.fresh("o_run")
        em.emit(f"{m_run} = tl.full([{rows}], float(\"-inf\"), tl.float32)", 1)
        em.emit(f"{l_run} = tl.zeros([{rows}], tl.float32)", 1)
        em.emit(f"{o_run} = tl.zeros([{rows}, {cols}], tl.float32)", 1)
        qrow = b.lin_tv(ii)  # the tile's query indices, [rows]
        causal = bool(op.attrs().get("causal"))
        n0 = b.fresh("n0")
        if causal:  # keys after the tile's last query contribute nothing
            rows_lin = ii
            if len(ii.terms) == 1 and hasattr(ii.terms[0][0], "unclamped"):  # (clamp_query_rows)
                rows_lin = ii.terms[0][0].unclamped
            base = Lin(tuple((a, c) for a, c in rows_lin.terms if a.kind != "axis"), rows_lin.const)
            last = b.fresh("kend")
            em.emit(f"{last} = tl.minimum({b.render(base, ())} + {rows}, {S})", 1)
        # causal: the loop ends at the tile's last query, a bound Triton pipelines (the loads of the next key block
        # issued during this one's products; a loop of every block with a branch inside ran serially: Llama
        # prefill's causal attention 31.5 us on the H100 for 4.3 GFLOP); Triton's CPU interpreter takes no
        # tensor bound, and there the blocks past it run masked (keys past a row's query add nothing)
        stop = f"{S} if _INTERPRETED else {last}" if causal else f"{S}"
        loop = em.open(f"for {n0} in range(0, {stop}, {BN}):", 1)
        d2 = 2
        na = b.new_axis("n", BN)
        b.clamp[na] = BN
        # the last block moves back to end at the last key (its keys before n0 are masked): every key index stays
        # inside [0, S), so the loads need no bounds and the layout ops' divisions fold (decode_attention's rule)
        nb = b.fresh("nb")
        if S >= BN:
            em.emit(f"{nb} = tl.minimum({n0}, {S - BN})" if S % BN else f"{nb} = {n0}", d2)
            n = ladd(b.sym(nb, 0, S - BN, d2), b.axis(na, BN - 1))
        else:
            em.emit(f"{nb} = 0", d2)
            n = ladd(b.sym(nb, 0, 0, d2), b.axis(na, BN - 1))
        kv = ev.result_at(k, (bi, hkv, n, b.axis(ea, E - 1)))
        vv = ev.result_at(v, (bi, hkv, n, fi))
        kt, vt, s, p = (b.fresh(x) for x in ("kt", "vt", "s", "p"))
        em.emit(f"{kt} = ({self._block(kv, ea, na)}).to({dt})", d2)
        em.emit(f"{vt} = ({self._block(vv, na, fa)}).to({dt})", d2)
        em.emit(f"{s} = {dot}({qd}, {kt}, tl.zeros([{rows}, {BN}], tl.float32){prec}) * {scale!r}", d2)
        if mask is not None:  # the additive mask at (query rows, keys), broadcast right-aligned
            ms = tensor_shape(mask.type)
            full = (bi, hi, ii, n)
            mix = tuple(lconst(0) if ms[d] == 1 else full[len(full) - len(ms) + d] for d in range(len(ms)))
            mv = ev.result_at(mask, mix)
            em.emit(f"{s} = {s} + ({self._block(mv, ra, na)}).to(tl.float32)", d2)
        keys = b.lin_tv(n)
        ok = f"({b.place(keys, (na,))} >= {n0})[None, :]" if S >= BN else f"({b.place(keys, (na,))} < {S})[None, :]"
        if causal:
            ok += f" & ({b.place(keys, (na,))}[None, :] <= {b.place(qrow, (ra,))}[:, None])"
        em.emit(f"{s} = tl.where({ok}, {s}, float(\"-inf\"))", d2)
        # (a row with no key yet keeps m = -inf: its exponents are taken against 0 and come out 0)
        m_new, alpha = b.fresh("m_new"), b.fresh("alpha")
        em.emit(f"{m_new} = tl.maximum({m_run}, tl.max({s}, 1))", d2)
        em.emit(f"{m_new} = tl.where({m_new} == float(\"-inf\"), 0.0, {m_new})", d2)
        em.emit(f"{alpha} = tl.exp({m_run} - {m_new})", d2)
        em.emit(f"{p} = tl.exp({s} - {m_new}[:, None])", d2)
        em.emit(f"{l_run} = {l_run} * {alpha} + tl.sum({p}, 1)", d2)
        em.emit(f"{o_run} = {dot}({p}.to({dt}), {vt}, {o_run} * {alpha}[:, None]{prec})", d2)
        em.emit(f"{m_run} = {m_new}", d2)
        em.close(1, loop)
        out = b.fresh("att")
        em.emit(f"{out} = tl.where(({l_run} > 0.0)[:, None], {o_run} / tl.maximum({l_run}, 1e-30)[:, None], 0.0)", 1)
        return TV(out, (ra, fa), 1, "f")

    def _block(self, tv: TV, a0: str, a1: str) -> str:
        """``tv`` as a full [a0, a1] block (transposed where the axes were made in the other order)."""
        f = self.b.frame_of({a0, a1})
        return self.b.block(tv, f) if f == (a0, a1) else f"tl.trans({self.b.block(tv, f)})"

    def _one_axis(self, op, x: Lin, what: str) -> str:
        ax = [a for a in laxes(x)]
        if len(ax) != 1:
            raise CodegenError(f"{fmt_loc(op)}'{op.name}': the attention template needs the {what} on one tile "
                               f"axis (got {len(ax)})")
        return ax[0]


def clamp_query_rows(g, tix):
    """The attention stage's tile index with its query rows (the result's second-to-last dim) clamped to the
    last query: ``tl.minimum(row, L - 1)``, a value known to lie in ``[0, L)``. A last tile of rows that runs past
    the queries (70 queries in tiles of 64) then repeats the last query instead of reaching into the next
    (batch, head), so the layout ops between the attention and the stored result (the heads' transpose and
    merge) fold to plain indices, and the padded rows store the last row's value again."""
    from kitsune.codegen.triton_gen.index_algebra import Atom, latom, lrange
    from kitsune.codegen.triton_gen.tiling import TileIndex

    b = g.b
    D = tuple(g.stage.shape)
    d = len(D) - 2
    x = tix.idx[d]
    lo, hi = lrange(x)
    if hi is not None and hi < D[d]:
        return tix
    f = b.frame_of(laxes(x))
    tv = b.tmp(f"tl.minimum({b.render(x, f)}, {D[d] - 1})", f, max(1, ldepth(x)), "i")
    a = Atom("val", tv.code, 0, D[d] - 1, frozenset(f), tv.depth)
    object.__setattr__(a, "arg_tv", tv)
    object.__setattr__(a, "unclamped", x)  # (the causal loop's bound: the tile's first row)
    idx = list(tix.idx)
    idx[d] = latom(a)
    return TileIndex(tuple(idx), tix.axes, tix.local)


__all__ = ["FlashAttention", "clamp_query_rows"]
