"""Loops over a reduction in chunks, and split reductions ("split-K"): a stage whose config splits its
anchor's reduction over ``SPLIT`` programs per tile (work item ``w = (tile t, part ks)``) runs only part
``ks`` of the chunks, and the parts meet in an fp32 workspace (``combine``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kitsune.codegen.plan import CodegenError, Stage
from kitsune.codegen.triton_gen.blocks import Blocks
from kitsune.codegen.triton_gen.emitter import TV, Blk
from kitsune.codegen.triton_gen.index_algebra import ladd, loffset, lscale, strides
from kitsune.codegen.triton_gen.memory import Memory

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.tiling import OutputTile


class SplitK:
    def __init__(self, stage: Stage, blocks: Blocks, memory: Memory, tile: "OutputTile"):
        self.stage = stage
        self.b = blocks
        self.mem = memory
        self.tile = tile
        self.outer: Blk | None = None  # the tile's block around `if last:` once the partial sums are combined

    def loop(self, E: int, P: int, r: str, depth: int, anchor: bool, unroll: bool = False):
        """The loop over a reduction of E in chunks of P (axis ``r``): (looped, saved block, body depth, index).
        The anchor of a split stage covers only its part ``ks`` of the chunks. ``unroll`` (not for a split
        anchor): a ``tl.static_range``, whose chunks' loads the compiler may issue together."""
        b = self.b
        split = self.stage.split if anchor else 1
        if E <= P and split == 1:
            return False, None, depth, b.axis(r, P - 1)
        k = b.fresh("k")
        b.steps[k] = P  # the counter runs over multiples of P
        if split > 1:
            if depth != 1:
                raise CodegenError(f"stage \"{self.stage.name}\": a split reduction must be the tile's own "
                                   f"reduction (found one nested at depth {depth}); use SPLIT=1")
            # part ks covers [ks * per, ks * per + per): a constant trip count, the last part masked
            per = -(-(-(-E // P)) // split) * P
            saved = b.em.open(f"for {k} in range(0, {per}, {P}):", depth)
            rl = ladd(lscale(b.sym("ks", 0, split - 1, 1), per), b.sym(k, 0, per - P, depth + 1), b.axis(r, P - 1))
            return True, saved, depth + 1, rl
        rng = "tl.static_range" if unroll else "range"
        saved = b.em.open(f"for {k} in {rng}(0, {E}, {P}):", depth)
        rl = ladd(b.sym(k, 0, -(-E // P) * P - P, depth + 1), b.axis(r, P - 1))
        return True, saved, depth + 1, rl

    def segment(self, lo: int, hi: int, P: int, r: str, depth: int, unroll: bool = False):
        """A loop over the chunks of P in ``[lo, hi)`` of a reduction (one segment of it, both ends multiples of
        P): (saved block, body depth, index). The index's range is the segment's, so that the evaluator drops the
        statements that write nothing there (a concatenation's other parts). ``unroll``: a ``tl.static_range``
        (straight-line code whose loads the compiler may issue ahead of the dots)."""
        b = self.b
        k = b.fresh("k")
        b.steps[k] = P
        rng = "tl.static_range" if unroll else "range"
        saved = b.em.open(f"for {k} in {rng}({lo}, {hi}, {P}):", depth)
        return saved, depth + 1, ladd(b.sym(k, lo, hi - P, depth + 1), b.axis(r, P - 1))

    def masked(self, E: int, P: int, anchor: bool) -> bool:
        """Whether the reduction index of a loop from ``loop`` can pass E (its last chunk is partial)."""
        split = self.stage.split if anchor else 1
        if split > 1:
            return -(-(-(-E // P)) // split) * P * split != E
        return -(-E // P) * P != E

    def combine(self, acc: TV, op: str) -> TV:
        """Partial sums of the ``SPLIT`` programs of one tile meet in an fp32 workspace of ``SPLIT`` slices: each
        part stores its own slice, fences and counts itself in (a counter per tile, acquire-release); the part
        that arrives last adds the slices up and goes on with the epilogue, the others skip it. (fp32 atomics of
        a tl.dot accumulator gave wrong sums on the H100 with Triton 3.6: bench/kernels/split_probe.py.)"""
        if op != "+=":
            raise CodegenError(f"stage \"{self.stage.name}\": only a sum can be split across programs")
        b = self.b
        st = self.stage
        S = st.split
        ws = st.workspace
        numel = math.prod(st.shape)
        idx = self.tile.idx
        off = loffset(idx, strides(st.shape))
        frame, rel, val, mask = self.mem.tile_access(off, acc, b.mask(b.conds(idx, st.shape)))
        b.em.emit(f"tl.store({ws} + ks * {numel} + {rel}, {val}{mask})", 1)
        b.em.emit("_fence_gpu()  # this thread's partial sums are performed before the tile's counter moves", 1)
        b.em.emit("tl.debug_barrier()", 1)
        b.em.emit(f"arrived = tl.atomic_add(ctr + {st.split_base} + {self.tile.tid}, 1, sem=\"acq_rel\", "
                  f"scope=\"gpu\")", 1)
        self.outer = b.em.enter(f"if arrived % {S} == {S - 1}:  # the last of the tile's {S} partial sums", 1)
        total = b.fresh("acc")
        other = ", other=0.0" if mask else ""
        b.em.emit("_fence_gpu()", 1)
        loads = [f"tl.load({ws} + {k * numel} + {rel}{mask}{other}, cache_modifier=\".cg\")" for k in range(S)]
        b.em.emit(f"{total} = " + " + ".join(loads), 1)
        return TV(total, frame, 1, "f")

    def leave(self) -> None:
        """After the epilogue: back to the tile's block, so that every part (not only the last) runs what follows
        (freeing its popped tiles)."""
        if self.outer is not None:
            self.b.em.leave(1, self.outer)


__all__ = ["SplitK"]
