"""Reduction statements (``Y[...] op= f(...)`` with reduction variables): which template computes one.

In order: a product of two operands that split the tile's two axes between them becomes ``tl.dot``
(``templates.dot``); a reduction over a whole tile axis is one ``tl.sum`` / ``tl.max`` without a loop
(``templates.row_reduction``); a small window reduction (a pool's kh, kw) is unrolled
(``templates.window_reduction``); anything else is the generic loop here: the flattened reduction space in
power-of-two chunks, a new block axis per chunk, the body masked to the statement's neutral element outside
the domain and reduced. The loops over the reduction (and the anchor's share of a split stage, with the
combination of the parts) come from ``templates.split_k``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.index_algebra import laxes, ldepth
from kitsune.codegen.triton_gen.syntax import NEUTRAL, combine_text, lit, pow2, pow2_floor, reduce_text
from kitsune.codegen.triton_gen.templates.dot import DotTemplate
from kitsune.codegen.triton_gen.templates.online_softmax import FOLD, MIN_LANES, OnlineSoftmax, sum_of_exponentials
from kitsune.codegen.triton_gen.templates.row_reduction import RowReduction
from kitsune.codegen.triton_gen.templates.window_reduction import WindowReduction

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.evaluator import Evaluator

BLOCK_LIMIT = 8192  # elements of a generic reduction block (tile axes x chunk)
STATISTIC_UNROLL_CHUNKS = 4
"""A tensor-core gemv stage's other reductions of at most this many chunks are unrolled (``Reductions.chunked``)."""
NARROW_TILE_PER_THREAD = 1
"""A generic reduction whose tile has at least this many elements per thread of the CTA reduces each chunk as it
comes (a tile-shaped accumulator) instead of keeping a block accumulator of tile x chunk: DLRM's bags ([16, 64]
tile, chunks of 8 indices, 4 warps) took 118 registers and 4 CTAs per SM with the block accumulator, 56 and
11.6 us instead of 18.9 us with the narrow one (``bench/kernels/room_probe.py``, NOTES section 21)."""


class Reductions:
    def __init__(self, ev: "Evaluator"):
        self.ev = ev
        self.b = ev.b
        self.split_k = ev.split_k
        self.dot = DotTemplate(ev)
        self.row = RowReduction(ev)
        self.window = WindowReduction(ev)
        self.online_softmax = OnlineSoftmax(ev, self)

    def reduce(self, opp, s, binding, rvars, ext, scatter, idx, anchor: bool = False) -> TV:
        """Statement ``s`` of ``opp`` reduced at the tile index ``idx`` (``binding``: its left side's variables;
        ``scatter``: the left side's indirect dims, matched against ``idx``). ``anchor``: the statement is the
        template's own loop (its config's BK, the split of a split stage)."""
        # the vars the body uses besides the reduction vars decide its tile axes
        used: set[str] = set(v for v in s.all_vars if v not in rvars)
        for _, ix in scatter:
            for v in ix.vars:
                if v not in binding and v not in rvars:
                    rvars.append(v)
        lins = [binding[v] for v in used if v in binding] + [idx[d] for d, _ in scatter]
        baxes = frozenset().union(*(laxes(x) for x in lins)) if lins else frozenset()
        bframe = self.b.frame_of(baxes)
        # reductions run inside the tile loop (depth >= 1): their bodies may read popped tiles
        depth = max([ldepth(x) for x in lins] + [1])
        E = math.prod(ext[v] for v in rvars) if rvars else 1
        dot = self.dot.plan(opp, s, binding, rvars, scatter, idx, bframe)
        if dot is not None:
            return self.dot.emit(opp, s, binding, rvars, ext, scatter, idx, bframe, depth, E, *dot, anchor=anchor)
        split = anchor and self.ev.stage.split > 1
        row = self.row.axis_for(E, bframe) if not scatter and not split else None
        if row is not None:
            return self.row.emit(opp, s, binding, rvars, ext, bframe, row)
        if not scatter and not split and self.window.applies(opp, s, rvars, E):
            return self.window.emit(opp, s, binding, rvars, ext, bframe, depth, E)
        return self.chunked(opp, s, binding, rvars, ext, scatter, idx, bframe, depth, E, anchor)

    def online(self, opp, i: int, binding, rvars, ext, scatter, idx, anchor: bool = False):
        """Statement ``i`` of ``opp``, a maximum, together with the sum of exponentials over it that a later
        statement computes, in one pass (``templates.online_softmax``): (maximum, index of the sum's statement,
        sum), or None where that form does not apply (the two then reduce one after the other)."""
        s = opp.prog.stmts[i]
        j = sum_of_exponentials(opp.prog.stmts, i)
        if j is None or scatter or (anchor and self.ev.stage.split > 1):
            return None
        used: set[str] = set(v for v in s.all_vars if v not in rvars)
        lins = [binding[v] for v in used if v in binding]
        bframe = self.b.frame_of(frozenset().union(*(laxes(x) for x in lins)) if lins else frozenset())
        depth = max([ldepth(x) for x in lins] + [1])
        E = math.prod(ext[v] for v in rvars) if rvars else 1
        if self.dot.plan(opp, s, binding, rvars, scatter, idx, bframe) is not None \
                or self.row.axis_for(E, bframe) is not None or self.window.applies(opp, s, rvars, E):
            return None
        P, S = self.chunk(E, bframe, anchor)
        if E <= P or S >= NARROW_TILE_PER_THREAD * self.ev.threads or P < FOLD * MIN_LANES:
            return None  # (one chunk, or a tile that reduces each chunk as it comes: the loop's narrow form)
        mx, total = self.online_softmax.emit(opp, s, binding, rvars, ext, bframe, depth, E, P)
        return mx, j, total

    def chunk(self, E: int, bframe, anchor: bool) -> tuple[int, int]:
        """The generic loop's chunk P over a reduction of E steps and the tile frame's elements S."""
        b, ev = self.b, self.ev
        S = math.prod(b.aranges[a] for a in bframe) if bframe else 1
        P = min(pow2(E), pow2_floor(max(1, BLOCK_LIMIT // S)))
        if anchor and "BK" in ev.cfg:
            P = min(pow2(E), ev.cfg["BK"])
        return P, S

    def chunk_block(self, opp, expr, b2, neutral: float, cs, bframe, r: str) -> str:
        """A reduction body ``expr`` at the chunk's index (``b2``: the binding with the reduction variables
        decomposed from it) as a [bframe, r] block: ``neutral`` where the conditions ``cs`` fail, broadcast along the
        chunk's axis ``r`` where the body does not vary along it."""
        b = self.b
        body = self.ev.expr(opp, expr, b2, neutral)
        m = b.mask_mixed(cs)
        if m is not None:
            body = b.where(m, body, neutral)
        f2 = bframe + (r,)
        x = b.place(body, f2)
        if r not in body.frame:
            shp = ", ".join(str(b.aranges[a]) if (a in body.frame or a == r) else "1" for a in f2)
            x = f"tl.broadcast_to({x}, [{shp}])"
        return x

    def chunked(self, opp, s, binding, rvars, ext, scatter, idx, bframe, depth: int, E: int, anchor: bool) -> TV:
        """The generic reduction: a loop over the E reduction steps in chunks of P along a new axis."""
        b, ev = self.b, self.ev
        neutral = NEUTRAL[s.op]
        P, S = self.chunk(E, bframe, anchor)
        acc = b.fresh("acc")
        shape = "[" + ", ".join(str(b.aranges[a]) for a in bframe) + "]"
        r = b.new_axis("r", P)
        # a loop keeps a block accumulator (tile axes x chunk) and reduces the chunk axis once at the end, unless
        # the tile alone gives every thread of the CTA an element: then the block accumulator would hold P
        # registers per element, and each chunk is reduced as it comes (NARROW_TILE_PER_THREAD)
        split = anchor and ev.stage.split > 1
        wide = E > P or split
        wide = wide and s.op in ("+=", "max=", "min=") and (split or S < NARROW_TILE_PER_THREAD * ev.threads)
        if wide:
            wshape = "[" + ", ".join(str(b.aranges[a]) for a in bframe + (r,)) + "]"
            b.em.emit(f"{acc} = tl.full({wshape}, {lit(neutral)}, tl.float32)", depth)
        else:
            b.em.emit(f"{acc} = tl.full({shape}, {lit(neutral)}, tl.float32)", depth)
        # a row statistic of a tensor-core gemv (the RMS norm's sum of squares of its padded rows, after the K loop):
        # its few chunks unrolled, their loads issued together instead of one L2 round trip each (llama_decode_b8's
        # QKV spent 28% of its stall samples there; bench/kernels/NOTES.md section 30)
        unroll = (not anchor and ev.template == "gemv" and bool(ev.cfg.get("DOT"))
                  and 2 <= -(-E // P) <= STATISTIC_UNROLL_CHUNKS)
        loop, saved, inner, rl = self.split_k.loop(E, P, r, depth, anchor, unroll)
        b2 = dict(binding)
        b2.update(ev.decompose(rl, rvars, ext))
        cs = []
        if self.split_k.masked(E, P, anchor):
            cs.append((rl, "<", E))
        for d, ix in scatter:
            tv = ev.read(opp, ix.access, b2, 0.0)
            n = opp.bound.shapes[s.lhs.tensor][d]
            if tv.const is None and n >= 0:  # a scatter index outside the target sets the flag (write dropped)
                ev.gen.emit_index_check(b, opp.op, s.lhs, d, n, tv, tv.depth)
            cs.append(ev.arith.binop("==", tv, b.lin_tv(idx[d])))
        x = self.chunk_block(opp, s.rhs, b2, neutral, cs, bframe, r)
        ax = len(bframe)
        # wide: fold the chunk into the block accumulator, reduce it once after the loop; else reduce each chunk
        b.em.emit(f"{acc} = {combine_text(s.op, acc, x if wide else reduce_text(s.op, x, ax))}", inner)
        if loop:
            b.em.close(depth, saved)
        out = TV(acc, bframe, depth, "f")
        if wide:
            out = b.tmp(reduce_text(s.op, acc, ax), bframe, depth)
        return self.split_k.combine(out, s.op) if split else out


__all__ = ["Reductions", "BLOCK_LIMIT", "NARROW_TILE_PER_THREAD", "STATISTIC_UNROLL_CHUNKS"]
