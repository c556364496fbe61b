"""Whole-row reductions: a reduction over a tile axis that spans a whole dim runs over that axis (one
``tl.sum`` / ``tl.max``, no loop), so values along the row share the tile's memo (a norm after a GEMM whose
tile covers the row reads the GEMM's accumulator instead of recomputing it per chunk)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.syntax import NEUTRAL, reduce_text

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.evaluator import Evaluator


class RowReduction:
    def __init__(self, ev: "Evaluator"):
        self.ev = ev
        self.b = ev.b

    def axis_for(self, E: int, bframe: tuple) -> str | None:
        """A tile axis that spans a whole dim of E elements (its grid is 1) and that the reduction's other
        indices do not use: the reduction runs over it instead of a chunk axis of its own ("whole row").
        Values along the row then share the tile's memo: a norm after a GEMM whose tile covers the row reads
        the GEMM's accumulator instead of recomputing it per chunk."""
        b, tile = self.b, self.ev.tile
        for d, a in tile.axes.items():
            if a in bframe or b.clamp.get(a) != E or b.aranges[a] > 2 * E:
                continue
            if tile.idx[d].key() == b.axis(a, E - 1).key():
                return a
        return None

    def emit(self, opp, s, binding, rvars, ext, bframe, a) -> TV:
        """A reduction over the whole tile axis ``a`` (see ``axis_for``): no loop, one tl.sum / tl.max."""
        b, ev = self.b, self.ev
        neutral = NEUTRAL[s.op]
        E = b.clamp[a]
        b2 = dict(binding)
        b2.update(ev.decompose(b.axis(a, E - 1), rvars, ext))
        body = ev.expr(opp, s.rhs, b2, neutral)
        f2 = b.frame_of(set(bframe) | {a})
        if b.aranges[a] != E:  # padded lanes of the row repeat its last element: they add the neutral
            lane = TV(f"({a}_raw < {E})", (a,), 0, "b")
            body = b.where(lane, body, neutral)
        return b.tmp(reduce_text(s.op, b.block(body, f2), f2.index(a)), bframe, body.depth)


__all__ = ["RowReduction"]
