"""Tensor-core operands through TMA (Hopper's tensor memory accelerator): a block of a 2-D row-major view of a
global tensor, loaded with a device-side tensor descriptor instead of a pointer block.

A dot operand qualifies when its index, in the tensor's row-major layout, is ``row * D + col`` with the lanes of
one operand axis on ``col`` (coefficient 1, the tensor's last dimension) and the lanes of the other on ``row``
(coefficient 1 after dividing by ``D``), everything else scalars (tile coordinates, the K loop counter, a split
part): then ``desc.load([row0, col0])`` is that block. What the pointer form masks, the descriptor's bounds
zero-fill: columns at or past the reduction's end (``shape[1] = min(D, col0 + E)``), rows past the view's last;
rows that run into a next batch only fill padded tile lanes, which nothing stores (so the reduction axis may be
on ``row`` only when no chunk passes its end). Not taken: gathered or decomposed indices (a convolution's
window), values a temporal stage waits for (generic-proxy writes of another program, read by the async
proxy), fp32 operands, rows or column offsets that are not 16-byte aligned, blocks over TMA's 256 per dim.

The descriptor is made once per program (depth 0, before the work-item loop); the runtime gives Triton an
allocator for its 128-byte descriptor scratch and copies a tensor whose base is not 16-byte aligned
(``_tma_prepare`` in the module's host code). Off unless ``KITSUNE_TMA=1`` (``TritonGen.tma``): measured on the
H100 (bench/kernels/NOTES.md section 10) it gave a one-tile-per-program 128x128 GEMM +15% (T1024), but
Kitsune's emitted, tuned kernels nothing (T1024 0.483 vs 0.488 ms) and nerf_65k 7% less.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.index_algebra import Lin, ladd, ldepth, loffset, lrange, lscale, strides
from kitsune.dialects.regions import tensor_shape

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.evaluator import Evaluator

MAX_BOX = 256  # TMA: elements per box dimension
ALIGN = 16  # bytes: descriptor base, row pitch, the inner coordinate of a load


def _split_axis(x: Lin, axis: str) -> tuple[int, Lin]:
    """(coefficient of the lanes of ``axis`` in ``x``, the rest of ``x``)."""
    c = sum(k for a, k in x.terms if a.kind == "axis" and a.key == axis)
    rest = Lin(tuple((a, k) for a, k in x.terms if not (a.kind == "axis" and a.key == axis)), x.const)
    return c, rest


def _scalars_only(x: Lin) -> bool:
    return all(a.kind == "sym" for a, _ in x.terms)


class TmaOperand:
    """Decides whether a dot operand loads through a tensor descriptor, and emits the descriptor and the load."""

    def __init__(self, ev: "Evaluator"):
        self.ev = ev
        self.b = ev.b
        self.tensors: set[str] = set()  # global tensors this stage reads through descriptors

    def load(self, v, idx: tuple[Lin, ...], frame: tuple[str, str], r: str, rl: Lin | None, E: int, masked_k: bool,
             elem_bytes: int) -> TV | None:
        """The block of operand ``v`` at ``idx`` in ``frame`` (tile axis, reduction axis ``r``; ``rl`` the
        reduction index, E its extent) through TMA, or None when it does not qualify (the caller loads
        pointers)."""
        ev, b = self.ev, self.b
        if not ev.gen.tma or v not in ev.stage.args or not ev.is_direct(v):
            return None
        name = ev.stage.args[v]
        if name in ev.stage.awaited or not ev.gen.plan.tensors[name].row_major or rl is None:
            return None  # (a descriptor here is of the row-major view; ``rl`` None: not one flat reduction index)
        shape = tuple(tensor_shape(v.type))
        if len(shape) < 2 or len(idx) != len(shape) or any(d <= 0 for d in shape):
            return None
        D = shape[-1]
        if (D * elem_bytes) % ALIGN:
            return None
        inner_idx = idx[-1]
        row = loffset(idx[:-1], [s // D for s in strides(shape)[:-1]])
        t_axis = frame[0]
        # which operand axis runs along the tensor's last dimension
        ci_r, col_r = _split_axis(inner_idx, r)
        ci_t, col_t = _split_axis(inner_idx, t_axis)
        if ci_r == 1 and ci_t == 0:
            inner, outer, col = r, t_axis, col_r
        elif ci_t == 1 and ci_r == 0:
            inner, outer, col = t_axis, r, col_t
            if masked_k:
                return None  # past the reduction's end the rows would be real data, not zeros
        else:
            return None
        co, row0 = _split_axis(row, outer)
        if co != 1 or _split_axis(row0, inner)[0] or not _scalars_only(row0) or not _scalars_only(col):
            return None
        if any(lrange(x)[0] is None or lrange(x)[0] < 0 for x in (row0, col)):
            return None
        step = ALIGN // elem_bytes
        if col.const % step or any((k * b.steps.get(a.key, 1)) % step for a, k in col.terms):
            return None
        box = (b.aranges[outer], b.aranges[inner])
        if any(n > MAX_BOX for n in box) or box[1] * elem_bytes < ALIGN:
            return None
        rows = math.prod(shape[:-1])
        cols = D
        if inner == r:
            # columns past the reduction's end read zeros (the pointer form's mask): the last dim is the
            # reduction index plus a constant
            off = ladd(inner_idx, lscale(rl, -1))
            if off.terms:
                return None
            cols = min(D, off.const + E)
        key = ("tma", name, rows, cols, box)
        desc = b.memo.get(key)
        if desc is None:
            desc = b.tmp(f"tl.make_tensor_descriptor({name}, shape=[{rows}, {cols}], strides=[{D}, 1], "
                         f"block_shape=[{box[0]}, {box[1]}])", (), 0, "d")
            b.memo[key] = desc
        self.tensors.add(name)
        depth = max(ldepth(row0), ldepth(col))
        blk = b.tmp(f"{desc.code}.load([{b.render(row0, ())}, {b.render(col, ())}])", (outer, inner), depth, "f")
        if inner == r:
            return blk
        return b.tmp(f"tl.trans({blk.code})", (t_axis, r), depth, "f")


__all__ = ["TmaOperand"]
