"""Small window reductions (a pool's kh, kw of at most ``WINDOW_UNROLL`` steps), unrolled in the generator:
each step's window offsets are compile-time scalars, so every step is one load of the tile's shape and the
bound checks a step cannot fail drop out (the centre of a 3x3 window needs none)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.index_algebra import lconst
from kitsune.codegen.triton_gen.syntax import NEUTRAL, combine_text, lit

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.evaluator import Evaluator

WINDOW_UNROLL = 32  # a window reduction of at most this many steps is unrolled (scalar offsets)


def window_vars(op, stmt: int, names) -> bool:
    """Every variable of ``names`` has the window role in statement ``stmt`` of ``op``."""
    from kitsune.schedule.roles import roles_of

    r = roles_of(op, stmt)
    return r is not None and all(r.role.get(v) == "window" for v in names)


class WindowReduction:
    def __init__(self, ev: "Evaluator"):
        self.ev = ev
        self.b = ev.b

    def applies(self, opp, s, rvars, E: int) -> bool:
        """A reduction over window variables only (a pool's kh, kw) of a few steps."""
        if E > WINDOW_UNROLL or not rvars:
            return False
        return window_vars(opp.op, opp.prog.stmts.index(s), rvars)

    def emit(self, opp, s, binding, rvars, ext, bframe, depth: int, E: int) -> TV:
        """A small window reduction as a statically unrolled loop: the window offsets are compile-time scalars,
        each step one load of the tile's shape (a 3x3 pool: nine shifted loads), no chunk axis."""
        b, ev = self.b, self.ev
        neutral = NEUTRAL[s.op]
        acc = b.fresh("acc")
        shp = ", ".join(str(b.aranges[a]) for a in bframe)
        b.em.emit(f"{acc} = tl.full([{shp}], {lit(neutral)}, tl.float32)", depth)
        for k in range(E):  # unrolled here: each step's offsets are constants, so range analysis drops the
            b2 = dict(binding)  # bound checks a step cannot fail (the centre of a 3x3 window needs none)
            b2.update(ev.decompose(lconst(k), rvars, ext))
            body = ev.expr(opp, s.rhs, b2, neutral)
            b.em.emit(f"{acc} = {combine_text(s.op, acc, b.block(body, bframe))}", max(depth, body.depth))
        return TV(acc, bframe, depth, "f")


__all__ = ["WindowReduction", "window_vars", "WINDOW_UNROLL"]
