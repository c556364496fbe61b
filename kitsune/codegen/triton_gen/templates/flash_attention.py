"""The attention template (prefill): ``graph.attention`` of a block of queries by one pass over the keys.

``softmax(q k^T * scale + mask) v`` for a tile of ``BM`` query rows of one (batch, query head) and the whole
head dim: the keys are walked in blocks of ``BN`` with the online-softmax recurrence of flash attention

    s = q k_blk^T * scale (+ mask);  m' = max(m, max_j s);  a = exp(m - m');  p = exp(s - m')
    l = a l + sum_j p;  o = a o + p v_blk

both products on the tensor cores (``tl.dot``), fp32 statistics and accumulator; the result is ``o / l`` (0 for a
query whose keys are all masked, as torch's safe softmax). Grouped-query attention reads key/value head
``h // G``; ``causal`` masks key ``j > i`` and stops the key loop after the tile's last query.

The exponentials are taken in base 2 (the scores scaled by ``scale * log2 e`` in one multiply), and the keys are
walked in two loops (``_Step.loop``): the blocks no query of the tile may miss -- for a causal tile those wholly
before its first query, otherwise every whole block -- with no mask at all, then the blocks that need one (a causal
tile's diagonal; the last keys, as one block moved back to end at the last key). On the H200 the two together took
Llama's 1024-token causal attention from 34.8 to 21.6 us (SDPA 22.9; bench/kernels/NOTES.md section 43).

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
        BN = min(BN, max(16, pow2(S + 1) // 2))  # (no wider than the keys: 70 keys take blocks of 64)
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
        if b.aranges[ea] != E:  # a head dim of no power of two: q's and k's padded lanes load nothing (masked: lanes
            # clamped to the last one made Triton load k an element at a time, head dim 80 on the H200 70 us against
            # SDPA's 32, bench/kernels/NOTES.md section 44); k's are zero (``_Step.loop``), so the scores add nothing
            # for them; v's make output columns that are never stored
            b.unclamped.add(ea)
        hkv = lfloordiv(hi, G) if G > 1 else hi
        qv = ev.result_at(q, (bi, hi, ii, b.axis(ea, E - 1)))
        qd = b.fresh("qd")
        em.emit(f"{qd} = {self.block(qv, ra, ea, dt)}", 1)
        m_run, l_run, o_run = b.fresh("m_run"), b.fresh("l_run"), b.fresh("o_run")
        em.emit(f"{m_run} = tl.full([{rows}], float(\"-inf\"), tl.float32)", 1)
        em.emit(f"{l_run} = tl.zeros([{rows}], tl.float32)", 1)
        em.emit(f"{o_run} = tl.zeros([{rows}, {cols}], tl.float32)", 1)
        qrow = b.lin_tv(ii)  # the tile's query indices, [rows]
        # the exponentials in base 2: scores scaled by scale * log2(e) in one multiply (an additive mask by
        # log2(e)), exp2 of the differences -- the same softmax, one multiply an element fewer (bert512 on the
        # H200: 21.9 -> 19.6 us, bench/kernels/attn_prefill_probe.py)
        qk_scale = float(scale) * LOG2E
        st = _Step(self, op, (bi, hi, hkv, ii, fi), (ra, fa, ea), qd, qrow, mask, (m_run, l_run, o_run), qk_scale, BN,
                   (dot, dt, prec))
        if st.causal:
            rows_lin = ii
            if len(ii.terms) == 1 and hasattr(ii.terms[0][0], "unclamped"):  # (clamp_query_rows)
                rows_lin = ii.terms[0][0].unclamped
            base = Lin(tuple((a, c) for a, c in rows_lin.terms if a.kind != "axis"), rows_lin.const)
            first = b.fresh("q0")
            em.emit(f"{first} = {b.render(base, ())}", 1)
            # the key blocks wholly before the tile's first query need no mask; the blocks from there to the tile's
            # last query cross its diagonal and are masked; keys after it contribute nothing (llama1024c on the
            # H200: every block masked 28.9 us, split 22.1). Both bounds are tensors, which Triton pipelines and
            # its CPU interpreter does not take: there every block runs masked
            band, last = b.fresh("kband"), b.fresh("kend")
            em.emit(f"{band} = {first} // {BN} * {BN}", 1)
            em.emit(f"{last} = tl.minimum({first} + {rows}, {S})", 1)
            st.loop(f"0, 0 if _INTERPRETED else {band}", masked=False)
            st.loop(f"0 if _INTERPRETED else {band}, {S} if _INTERPRETED else {last}", masked=True)
        elif S % BN == 0:
            st.loop(f"0, {S}", masked=False)
        elif S < BN:  # fewer than 16 keys: one block, its lanes past the last key masked
            st.loop(f"0, {S}", masked=True)
        else:  # the whole blocks unmasked, then the last keys as a block that ends at the last key
            full = S // BN * BN
            st.loop(f"0, {full}", masked=False)
            st.loop(f"{full}, {S}", masked=True)
        out = b.fresh("att")
        em.emit(f"{out} = tl.where(({l_run} > 0.0)[:, None], {o_run} / tl.maximum({l_run}, 1e-30)[:, None], 0.0)", 1)
        return TV(out, (ra, fa), 1, "f")

    def block(self, tv: TV, a0: str, a1: str, dt: str) -> str:
        """``tv`` as a full [a0, a1] block of type ``dt``, transposed where the axes were made in the other order:
        converted first, so that a tensor-core operand loaded as bf16 and widened is narrowed again before the
        transpose (the two conversions then fold, and the transpose stays a view of the operand in shared memory;
        transposed as fp32 it went shared memory -> registers -> shared memory, BERT-512's attention 24.3 us)."""
        f = self.b.frame_of({a0, a1})
        x = f"({self.b.block(tv, f)}).to({dt})"
        return x if f == (a0, a1) else f"tl.trans({x})"

    def _one_axis(self, op, x: Lin, what: str) -> str:
        ax = [a for a in laxes(x)]
        if len(ax) != 1:
            raise CodegenError(f"{fmt_loc(op)}'{op.name}': the attention template needs the {what} on one tile "
                               f"axis (got {len(ax)})")
        return ax[0]


LOG2E = 1.4426950408889634


class _Step:
    """One loop over blocks of keys: the scores of the tile's queries against a block, the online-softmax update of
    the running maximum, sum and output. ``masked``: the block may hold keys a query may not see -- before the
    loop's start (the last block moved back to end at the last key), or after the query (causal) -- and those
    scores are -inf."""

    def __init__(self, fa, op, idx, axes, qd, qrow, mask, run, qk_scale, BN, dot):
        self.fa, self.op = fa, op
        self.bi, self.hi, self.hkv, self.ii, self.fi = idx  # batch, query head, key / value head, rows, lanes
        self.ra, self.fa_ax, self.ea = axes  # the tile's query-row and head-dim axes, the q / k head-dim axis
        self.qd, self.qrow, self.mask = qd, qrow, mask
        self.m_run, self.l_run, self.o_run = run
        self.qk_scale, self.BN = qk_scale, BN
        self.dot, self.dt, self.prec = dot  # the product's function, operand type, precision argument
        self.S = tensor_shape(op.operands[1].type)[2]
        self.E = tensor_shape(op.operands[0].type)[3]
        self.rows = fa.b.aranges[self.ra]
        self.na = fa.b.new_axis("n", BN)
        fa.b.clamp[self.na] = BN
        self.causal = bool(op.attrs().get("causal"))

    def loop(self, bounds: str, masked: bool) -> None:
        fa, b, ev = self.fa, self.fa.b, self.fa.ev
        em, BN, S, na, rows, ra = b.em, self.BN, self.S, self.na, self.rows, self.ra
        n0 = b.fresh("n0")
        loop = em.open(f"for {n0} in range({bounds}, {BN}):", 1)
        d2 = 2
        # a masked block past S - BN moves back to end at the last key (its keys before n0 are masked): every key
        # index stays inside [0, S), so the loads need no bounds and the layout ops' divisions fold
        # (decode_attention's rule); with fewer keys than a block, the lanes past them load nothing
        nb = n0
        if masked and S % BN and S > BN:
            nb = b.fresh("nb")
            em.emit(f"{nb} = tl.minimum({n0}, {S - BN})", d2)
        n = ladd(b.sym(nb, 0, max(0, S - BN), d2), b.axis(na, BN - 1))
        kv = ev.result_at(self.op.operands[1], (self.bi, self.hkv, n, b.axis(self.ea, self.E - 1)))
        vv = ev.result_at(self.op.operands[2], (self.bi, self.hkv, n, self.fi))
        kt, vt, qk, s, p = (b.fresh(x) for x in ("kt", "vt", "qk", "s", "p"))
        em.emit(f"{kt} = {fa.block(kv, self.ea, na, self.dt)}", d2)
        if b.aranges[self.ea] != self.E and not ev.is_direct(self.op.operands[1]):
            # a k computed from what its masked loads gave (1 / 0, a rotary embedding's terms) is zeroed there: q's
            # padded lanes need not be (a q computed, x * 0.5 + 1, has ones there)
            em.emit(f"{kt} = tl.where({b.raw(self.ea, (self.ea, na))} < {self.E}, {kt}, 0.0)", d2)
        em.emit(f"{vt} = {fa.block(vv, na, self.fa_ax, self.dt)}", d2)
        em.emit(f"{qk} = {self.dot}({self.qd}, {kt}, tl.zeros([{rows}, {BN}], tl.float32){self.prec})", d2)
        m_new, alpha = b.fresh("m_new"), b.fresh("alpha")
        plain = not masked and self.mask is None and self.qk_scale > 0
        if plain:  # every score finite: the maximum of the raw products, scaled once, one fused multiply-add each
            em.emit(f"{m_new} = tl.maximum({self.m_run}, tl.max({qk}, 1) * {self.qk_scale!r})", d2)
            em.emit(f"{p} = tl.math.exp2({qk} * {self.qk_scale!r} - {m_new}[:, None])", d2)
        else:
            em.emit(f"{s} = {qk} * {self.qk_scale!r}", d2)
            if self.mask is not None:  # the additive mask at (query rows, keys), broadcast right-aligned
                ms = tensor_shape(self.mask.type)
                full = (self.bi, self.hi, self.ii, n)
                mix = tuple(lconst(0) if ms[d] == 1 else full[len(full) - len(ms) + d] for d in range(len(ms)))
                mv = ev.result_at(self.mask, mix)
                em.emit(f"{s} = {s} + {fa.block(mv, ra, na, 'tl.float32')} * {LOG2E!r}", d2)
            if masked:
                keys = b.place(b.lin_tv(n), (na,))
                oks = [f"({keys} >= {n0})[None, :]"] if nb != n0 else []  # (a block moved back)
                oks += [f"({keys} < {S})[None, :]"] if S < BN else []
                oks += [f"({keys}[None, :] <= {b.place(self.qrow, (ra,))}[:, None])"] if self.causal else []
                ok = " & ".join(oks)
                em.emit(f"{s} = tl.where({ok}, {s}, float(\"-inf\"))", d2)
            em.emit(f"{m_new} = tl.maximum({self.m_run}, tl.max({s}, 1))", d2)
            # (a row with no key yet keeps m = -inf: its exponents are taken against 0 and come out 0)
            em.emit(f"{m_new} = tl.where({m_new} == float(\"-inf\"), 0.0, {m_new})", d2)
            em.emit(f"{p} = tl.math.exp2({s} - {m_new}[:, None])", d2)
        em.emit(f"{alpha} = tl.math.exp2({self.m_run} - {m_new})", d2)
        em.emit(f"{self.l_run} = {self.l_run} * {alpha} + tl.sum({p}, 1)", d2)
        em.emit(f"{self.o_run} = {self.dot}({p}.to({self.dt}), {vt}, {self.o_run} * {alpha}[:, None]{self.prec})",
                d2)
        em.emit(f"{self.m_run} = {m_new}", d2)
        em.close(1, loop)


def clamp_query_rows(g, tix):
    """The attention stage's tile index with its query rows (the result's dim of the queries) clamped to the
    last query: ``tl.minimum(row, L - 1)``, a value known to lie in ``[0, L)``. A last tile of rows that runs past
    the queries (70 queries in tiles of 64) then repeats the last query instead of reaching into the next
    (batch, head), so the layout ops between the attention and the stored result (the heads' transpose and
    merge) fold to plain indices, and the padded rows store the last row's value again."""
    from kitsune.codegen.triton_gen.index_algebra import Atom, latom, lrange
    from kitsune.codegen.triton_gen.tiling import TileIndex
    from kitsune.schedule.select import tile_query_dim

    b = g.b
    D = tuple(g.stage.shape)
    d = tile_query_dim(g.stage.tile)
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
