"""Loads and stores of blocks: ``tl.load`` / ``tl.store`` with the masks of the index and the tile's padding."""

from __future__ import annotations

from kitsune.codegen.plan import is_float
from kitsune.codegen.triton_gen.blocks import Blocks
from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.index_algebra import Lin, laxes, ldepth
from kitsune.codegen.triton_gen.syntax import TL, lit


class Memory:
    def __init__(self, blocks: Blocks):
        self.b = blocks

    def load(self, ptr: str, off: Lin, cs, neutral: float, dt: str, extra: str = "", min_depth: int = 0,
             raw: bool = False) -> TV:
        """``ptr[off]`` where the conditions ``cs`` hold, else ``neutral``; widened to fp32 unless ``raw``.
        ``min_depth``: the loop depth the load may not be hoisted above."""
        b = self.b
        m = own = b.mask(cs)
        lanes = sorted(a for a in laxes(off) if a in b.unclamped)
        if lanes:  # an unclamped lane axis: its index range is the tile's, its padded lanes read nothing
            lm = TV(" & ".join(f"({b.raw(a, b.frame_of(lanes))} < {b.clamp[a]})" for a in lanes),
                    b.frame_of(lanes), 0, "b")
            m = b.mask_mixed([x for x in (m, lm) if x is not None])
        axes = laxes(off) | (frozenset(m.frame) if m else frozenset())
        frame = b.frame_of(axes)
        depth = max(ldepth(off), m.depth if m else 0, min_depth)
        kind = "f" if is_float(dt) else ("b" if dt == "i1" else "i")
        args = f"{ptr} + {b.render(off, frame)}"
        if m is not None:
            other = lit(neutral) if kind == "f" else ("0" if kind == "i" else "False")
            args += f", mask={b.place(m, frame)}, other={other}"
        code = f"tl.load({args}{extra})"
        if kind == "f" and dt != "f32" and not raw:
            code += ".to(tl.float32)"
        tv = b.tmp(code, frame, depth, kind)
        if kind == "f" and own is not None:  # neutral wherever ``cs`` fail: re-masking it by them changes nothing
            b.masked[tv.code] = (own.code, float(neutral))  # (Blocks.where)
        return tv

    def tile_access(self, off: Lin, tv: TV, m: TV | None, lane: bool = True, extra: str | None = None):
        """(frame, rendered offset, value broadcast to the frame, ", mask=..." or "") of writing ``tv`` at
        ``off``, masked by ``m``, the tile's padded lanes and ``extra``."""
        b = self.b
        frame = b.frame_of(laxes(off) | set(tv.frame) | (set(m.frame) if m else set()))
        parts = [b.place(m, frame)] if m is not None else []
        lanes = b.lane_mask(frame) if lane else None
        if lanes:
            parts.append(lanes)
        if extra:
            parts.append(extra)
        val = b.place(tv, frame)
        if frame and set(tv.frame) != set(frame):
            shp = ", ".join(str(b.aranges[a]) for a in frame)
            val = f"tl.broadcast_to({val}, [{shp}])"
        mask = f", mask={' & '.join(parts)}" if parts else ""
        return frame, b.render(off, frame), val, mask

    def store(self, ptr: str, off: Lin, tv: TV, m: TV | None, dt: str, lane: bool = True,
              extra: str | None = None) -> None:
        """tl.store of ``tv`` at ``ptr + off`` (in the tile, depth 1), masked by ``m``, the tile's padded lanes
        and ``extra``."""
        _, rel, val, mask = self.tile_access(off, tv, m, lane, extra)
        self.b.em.emit(f"tl.store({ptr} + {rel}, ({val}).to({TL[dt]}){mask})", 1)


__all__ = ["Memory"]
