"""Small window reductions (a pool's kh, kw of at most ``WINDOW_UNROLL`` steps), unrolled in the generator:
each step's window offsets are compile-time scalars, so every step is one load of the tile's shape and the
bound checks a step cannot fail drop out (the centre of a 3x3 window needs none)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.index_algebra import laxes, lconst
from kitsune.codegen.triton_gen.syntax import NEUTRAL, combine_text, lit

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.evaluator import Evaluator

WINDOW_UNROLL = 49  # a window reduction of at most this many steps is unrolled (scalar offsets): 7 x 7 (ConvNeXt's
# depthwise convolutions ran 130 us each on the H100 as a loop of two-step chunks, a div and a mod per tap)


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
        each step one load of the tile's shape (a 3x3 pool: nine shifted loads), no chunk axis. A separable one
        (``separable``) loads only the window's column through each lane and takes the row neighbours from the
        other lanes."""
        b, ev = self.b, self.ev
        neutral = NEUTRAL[s.op]
        acc = b.fresh("acc")
        shp = ", ".join(str(b.aranges[a]) for a in bframe)
        b.em.emit(f"{acc} = tl.full([{shp}], {lit(neutral)}, tl.float32)", depth)
        sep = self.separable(opp, s, binding, rvars, ext, bframe)
        for k in range(E):  # unrolled here: each step's offsets are constants, so range analysis drops the
            b2 = dict(binding)  # bound checks a step cannot fail (the centre of a 3x3 window needs none)
            b2.update(ev.decompose(lconst(k), rvars, ext))
            if sep is not None and b2[sep[0]].const != sep[1]:
                continue  # (a separable window: only the lanes' own column is loaded)
            body = ev.expr(opp, s.rhs, b2, neutral)
            b.em.emit(f"{acc} = {combine_text(s.op, acc, b.block(body, bframe))}", max(depth, body.depth))
        if sep is None:
            return TV(acc, bframe, depth, "f")
        kw, kw0, e, axis, w = sep
        vert = acc
        acc = b.fresh("acc")
        b.em.emit(f"{acc} = {vert}", depth)
        lanes = b.raw(axis, bframe)
        pos = bframe.index(axis)
        size = b.aranges[axis]
        wv = b.place(b.lin_tv(w), bframe)
        for j in range(ext[kw]):
            d = (j - kw0) * e
            if d == 0:
                continue
            idx = f"tl.broadcast_to(tl.minimum(tl.maximum({lanes} + {d}, 0), {size - 1}), [{shp}])"
            ok = f"(({wv}) + {d} >= 0) & (({wv}) + {d} < {sep_width(opp.op)})"
            got = f"tl.where({ok}, tl.gather({vert}, {idx}, {pos}), {lit(neutral)})"
            b.em.emit(f"{acc} = {combine_text(s.op, acc, got)}", depth)
        return TV(acc, bframe, depth, "f")

    def separable(self, opp, s, binding, rvars, ext, bframe):
        """(kw, kw0, e, lane axis, w) when the window reduction can take its row neighbours from other lanes:
        ``Y[.., ow] op= X[.., ow + kw * e - kw0 * e]`` (stride 1 along the row, padding centred on window column
        ``kw0``), the statement a plain read of ``X`` with ``op`` max, min or sum, and the stage's tile holding
        whole rows, each along one lane axis with unit steps (``w``: the row position of the lanes). The
        window's other variables are then one load per step at the lanes' own columns (3 for a 3x3 pool instead
        of 9), and each other column is a ``tl.gather`` of that sum along the axis, masked where it leaves the
        row (3.8 us against 7.9 for inception_b8's pool on the H200, ``bench/kernels/pool_probe.py``)."""
        from kitsune.semantics.comprehension import Access, Affine

        st = self.ev.stage
        if s.op not in ("max=", "min=", "+=") or not isinstance(s.rhs, Access) or len(rvars) < 2:
            return None
        lhs_last = s.lhs.indices[-1]
        last = s.rhs.indices[-1] if s.rhs.indices else None
        if not isinstance(last, Affine) or not isinstance(lhs_last, Affine) or lhs_last.plain_var() is None:
            return None
        ow = lhs_last.plain_var()
        terms = dict(last.terms)
        if terms.get(ow) != 1 or len(terms) != 2:
            return None
        kw = next(v for v in terms if v != ow)
        e = terms[kw]
        if kw not in rvars or e <= 0 or last.const > 0 or (-last.const) % e or -last.const // e >= ext[kw]:
            return None
        if any(kw in ix.vars for ix in s.rhs.indices[:-1] if isinstance(ix, Affine)):
            return None
        from kitsune.dialects.regions import tensor_shape

        src = opp.inputs.get(s.rhs.tensor)
        if src is None or tensor_shape(src.type)[-1] != sep_width(opp.op):
            return None  # every column a window reads is some lane's own (rows as long in and out)
        if not st.tile or st.tile[-1] != st.shape[-1] or st.shape[-1] != sep_width(opp.op):
            return None  # the tile must hold whole rows
        if opp.op.results[0] not in st.op.body.blocks.first.last_op.operands:
            return None  # (a pool the stage computes as its own result, at the tile's own index)
        w = binding.get(ow)
        axes = sorted(laxes(w)) if w is not None else []
        if len(axes) != 1 or axes[0] not in bframe or not _unit_lanes(w, axes[0]):
            return None
        return kw, -last.const // e, e, axes[0], w


def sep_width(op) -> int:
    """The row length of the window reduction's result."""
    from kitsune.dialects.regions import tensor_shape

    return tensor_shape(op.results[0].type)[-1]


def _unit_lanes(w, axis: str) -> bool:
    """``w`` steps by one from lane to lane of ``axis``: the lanes themselves plus scalars, or their remainder
    modulo the row length (whole rows merged into one lane axis)."""
    for a, c in w.terms:
        if a.kind == "axis":
            if a.key != axis or c != 1:
                return False
        elif a.kind == "mod":
            if a.arg is None or not _unit_lanes(a.arg, axis):
                return False
        elif a.axes:
            return False
    return True


__all__ = ["WindowReduction", "window_vars", "WINDOW_UNROLL"]
