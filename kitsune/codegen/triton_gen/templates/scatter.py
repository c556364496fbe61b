"""The scatter template: a scatter-accumulate pushed from its source rows with atomics.

For an anchor ``Y[.., I[j], .., d] += f(j, d)`` that starts from zero (``index_add``
into zeros; ``kitsune-materialize`` moves a non-zero start into the consumer), a
work item ``w = (t, ks)`` takes the result's column tile ``t`` (the scatter dims
whole) and the source rows ``[ks * BJ, ks * BJ + BJ)``: it evaluates ``f`` there with
the comprehension evaluator (loads of the source, any fused prologue), reads the
target rows ``I[j]`` and adds the block into the result with ``tl.atomic_add``
(relaxed: only the sum matters, and the kernel boundary orders it before its
readers). The runtime zeroes the result's buffer before the kernel starts
(``Kernel.zero``). Repeated indices accumulate, as in eager; an index outside
the result is skipped and sets the error flag (unless generated with
``index_checks=False``).

An ``in_place`` assignment ``Y[.., I[j], ..] = f(j, ..)`` (``index_copy`` into a
buffer's own storage, ``scatter_form(assign=True)``) takes the same loop with a
masked ``tl.store`` instead of the atomic add, and nothing zeroed: the result's
buffer is the mutated buffer itself (``kitsune.codegen.plan``).

The loop structure, tiling and atomics live here; all arithmetic comes from the
evaluator. It drives the stage function through the shell's hook surface only
(``StageGen.open_work_items`` / ``tile_index`` / ``body_text``, ``g.b``, ``g.ev``,
``g.tile``; see ``kitsune.codegen.triton_gen.stage``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kitsune.codegen.plan import CodegenError
from kitsune.codegen.triton_gen.index_algebra import ladd, laxes, lconst, lscale, strides
from kitsune.codegen.triton_gen.syntax import TL, lit
from kitsune.dialects.graph import fmt_loc
from kitsune.dialects.regions import tensor_shape

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.stage import StageGen


def generate_scatter(g: "StageGen") -> list[str]:
    """The stage function body of a scatter stage (``g``: the stage's shell)."""
    from kitsune.schedule.select import anchor_of, scatter_form
    from kitsune.semantics.comprehension import Indirect

    st = g.stage
    b, ev = g.b, g.ev
    op, _ = anchor_of(st.op)
    assign = scatter_form(op, assign=True) if op is not None else None
    form = assign or (scatter_form(op) if op is not None else None)
    if form is None or st.pops or st.pushes or len(st.stores) != 1:
        raise CodegenError(f"{fmt_loc(st.op)}stage \"{st.name}\": the scatter template needs a stage whose only "
                           f"result is a scatter-accumulate stored to a global buffer")
    r, _ = form
    opp = ev.program(op)
    s = opp.prog.stmts[r.stmt]
    ext = opp.bound.extents[r.stmt]
    BJ, S = int(g.cfg["BJ"]), st.split
    jvars = list(dict.fromkeys(v for ix in s.lhs.indices if isinstance(ix, Indirect) for v in ix.vars))
    J = math.prod(ext[v] for v in jvars)
    if -(-J // BJ) != S:
        raise CodegenError(f"{fmt_loc(st.op)}stage \"{st.name}\": SPLIT = {S} does not cover {J} source rows in "
                           f"blocks of BJ = {BJ}")
    body = g.open_work_items(S, f"source rows [ks * {BJ}, ks * {BJ} + {BJ})")
    # the result's column tile: the scatter dims collapse (any row may be hit)
    rj = b.new_axis("j", BJ)  # first: blocks are [BJ, BD], source rows by columns
    scat = [isinstance(ix, Indirect) for ix in s.lhs.indices]
    T = tuple(1 if sc else t for t, sc in zip(st.tile, scat))
    D = tuple(1 if sc else d for d, sc in zip(st.shape, scat))
    tix = g.tile_index(T, D)
    idx = tix.idx
    g.tile.axes = tix.axes
    binding = {ix.terms[0][0]: idx[k] for k, ix in enumerate(s.lhs.indices) if not scat[k]}
    jl = ladd(lscale(b.sym("ks", 0, S - 1, 1), BJ), b.axis(rj, BJ - 1))
    binding.update(ev.decompose(jl, jvars, ext))
    conds: list = [(jl, "<", J)] if S * BJ != J else []
    val = ev.expr(opp, s.rhs, binding, 0.0)
    # the target: plain dims from the tile, scattered dims from the index tensor
    buf = st.stores[0][1]
    t = g.gen.plan.tensors[buf]
    off, tconds = _target(g, opp, s, binding, {k: idx[k] for k in range(len(scat)) if not scat[k]}, t.shape)
    m = b.mask_mixed(conds + tconds)
    frame = b.frame_of({rj} | set(val.frame) | set(m.frame) | laxes(off))
    if frame[0] != rj or len(frame) > 2:
        raise CodegenError(f"{fmt_loc(st.op)}stage \"{st.name}\": scatter block {frame} is not [rows, columns]")
    pad = "[:, None]" if len(frame) == 1 else ""
    v, o, mk = (x + pad for x in _blocks(b, val, off, m, frame, t.dtype))
    if assign:  # in place: the slices overwrite the buffer (a repeated index keeps one of its slices)
        b.em.emit(f"tl.store({buf} + {o}, {v}, mask={mk})", 1)
    else:
        b.em.emit(f"_scatter_add({buf}, {o}, {v}, {mk})", 1)
    g.close_work_items(body)
    return g.body_text()


def _target(g: "StageGen", opp, s, binding, plain: dict, shape) -> tuple:
    """(flat offset, conditions) of scatter statement ``s``'s left side in a result of ``shape``: dim ``k`` at
    ``plain[k]`` where given, else at the value its index tensor reads under ``binding`` (checked: an index
    outside the result is skipped and sets the error flag)."""
    from kitsune.semantics.comprehension import Indirect

    b, ev = g.b, g.ev
    tstrides = strides(shape)
    terms, conds = [], []
    for k, lix in enumerate(s.lhs.indices):
        if not isinstance(lix, Indirect):
            terms.append(lscale(plain[k], tstrides[k]))
            conds += b.conds((plain[k],), (shape[k],))
            continue
        iv = ev.read(opp, lix.access, binding, 0.0)
        n = shape[k]
        g.gen.emit_index_check(b, opp.op, s.lhs, k, n, iv, max(1, iv.depth))
        conds += [ev.arith.binop(">=", iv, b.lin_tv(lconst(0))), ev.arith.binop("<", iv, b.lin_tv(lconst(n)))]
        terms.append(lscale(b.val_atom(iv), tstrides[k]))
    return ladd(*terms), conds


def _blocks(b, val, off, m, frame, dtype: str) -> tuple[str, str, str]:
    """(values, offsets, mask) of a scatter as full blocks of ``frame`` (the values in ``dtype``)."""
    shp = ", ".join(str(b.aranges[a]) for a in frame)
    lanes = b.lane_mask(frame)
    mk = b.place(m, frame) + (f" & {lanes}" if lanes else "")
    v = f"tl.broadcast_to(({b.place(val, frame) if val.const is None else lit(val.const)}), [{shp}]).to({TL[dtype]})"
    return v, f"tl.broadcast_to({b.render(off, frame)}, [{shp}])", f"tl.broadcast_to({mk}, [{shp}])"


def scatter_store(g: "StageGen", v, buf: str, ix) -> None:
    """A stage result ``v`` that is a zero-started scatter-accumulate of its domain rows
    (``kitsune.dialects.scattered_results``, ``kitsune-fuse-scatters``): the tile at ``ix`` evaluates the source
    there (the values its other results already hold: the evaluator's memo) and adds each of its rows into
    ``buf`` at the row the index tensor gives, with atomics; an index outside the result is skipped and sets the
    error flag. Nothing is returned: the store is emitted."""
    from kitsune.schedule.select import scatter_form
    from kitsune.semantics.comprehension import Access, Indirect

    b, ev = g.b, g.ev
    op = v.owner
    r, _ = scatter_form(op)
    opp = ev.program(op)
    s = opp.prog.stmts[r.stmt]
    if not isinstance(s.rhs, Access):
        raise CodegenError(f"{fmt_loc(op)}'{op.name}': a fused scatter reads its source as it is")
    # the source is read at the tile's own index: its variables are the tile's coordinates
    binding = {ix_.terms[0][0]: x for ix_, x in zip(s.rhs.indices, ix)}
    src = opp.inputs[s.rhs.tensor]
    conds: list = list(b.conds(tuple(ix), tensor_shape(src.type)))
    val = ev.expr(opp, s.rhs, binding, 0.0)
    t = g.gen.plan.tensors[buf]
    plain = {k: binding[lix.terms[0][0]] for k, lix in enumerate(s.lhs.indices) if not isinstance(lix, Indirect)}
    off, tconds = _target(g, opp, s, binding, plain, t.shape)
    m = b.mask_mixed(conds + tconds)
    frame = b.frame_of(set(val.frame) | set(m.frame) | laxes(off))
    vv, o, mm = _blocks(b, val, off, m, frame, t.dtype)
    if len(frame) != 2:  # (_scatter_add takes [rows, columns] blocks: the interpreter adds one row at a time)
        n = math.prod(b.aranges[a] for a in frame)
        vv, o, mm = (f"tl.reshape({x}, [{n}, 1])" for x in (vv, o, mm))
    b.em.emit(f"_scatter_add({buf}, {o}, {vv}, {mm})", max(1, val.depth))


__all__ = ["generate_scatter", "scatter_store"]
