"""The depthwise template: a window contraction with one input row band an output, its row strips in registers.

For an anchor in depthwise form (``kitsune.schedule.depthwise``: ``P[.., oh, ow] += X[.., oh*s + kh*e - p,
ow + kw - q] * F[.., kh, kw]``, every other reduction variable of extent one; or a strided pool, the window's
max or sum of ``X`` alone), a work item is the stage's tile
of whole output rows (``select.depthwise_tile``). Every lane holds a strip of ``V`` adjacent outputs of a row
(``V`` the widest power of two up to 8 dividing the output row whose input vectors divide the input row:
``schedule.depthwise.strip_width``). For each window row it loads the input row's vectors of ``s * V`` columns
(``s`` the column stride) that the strip's window touches (its own and ``ceil(q / sV)`` on either side: three
at ``V = 8``, ``s = 1``, ``q = 3``), as whole vectors, splits them into registers
(``tl.split``) and adds each tap's product into the ``V`` accumulators; the filter is read once a tap for the
tile's rows. The evaluator's unrolled window (``WindowReduction``) issued one load a tap a pixel instead:
49 two-byte loads a pixel at 7 x 7 (ConvNeXt's stage-1 convolution 73 us on the H100 against 24 for this form,
``bench/kernels/dwconv_probe.py``, NOTES section 38).

The epilogue comes from the evaluator: each of the ``V`` accumulators seeds the anchor's reduction at its
column of the strip (``b.memo``), the stage's results are evaluated there (a bias, a BatchNorm, an activation)
and joined back into ``[rows, strips, V]`` blocks (``tl.join``) for one vector store a lane.

``generate_depthwise`` returns None (before emitting anything) where the stage is not of that shape: the input
not a row-major tensor the stage reads from memory, results of another shape or layout, queues, a split. The
shell then runs the evaluator over the same tile.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from xdsl.ir import Block

from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.index_algebra import ladd, lconst, lscale
from kitsune.codegen.triton_gen.syntax import pow2
from kitsune.dialects.regions import tensor_shape

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.stage import StageGen


class DepthwiseGen:
    def __init__(self, g: "StageGen"):
        self.g = g
        self.b = g.b
        self.ev = g.ev
        self.st = g.stage

    # ---- what the template needs, checked before anything is emitted
    def applies(self) -> bool:
        from kitsune.schedule.depthwise import depthwise_form, strip_width
        from kitsune.schedule.select import anchor_of

        st, ev = self.st, self.ev
        if st.pops or st.pushes or st.store_scatters or st.store_offsets or st.split > 1 or not st.stores:
            return False
        op, _ = anchor_of(st.op)
        form = depthwise_form(op) if op is not None else None
        if form is None or len(op.results) != 1:
            return False
        opp = ev.program(op)
        D, T = tuple(st.shape), tuple(st.tile)
        if tuple(tensor_shape(op.results[0].type)) != D or not self._rows_tile(T, D) or not self._stores_fit(T, D):
            return False
        xv = opp.inputs.get(form.x.tensor)
        if xv is None or not isinstance(xv.owner, Block) or xv not in st.args:
            return False  # (the input computed in the stage, or popped from a queue)
        xt = self.g.gen.plan.tensors[st.args[xv]]
        out = self._output_statement(opp, form)
        if xt.order or not xt.row_major or out is None:
            return False
        self.out_stmt, self.p_access = out
        self.op, self.form, self.opp, self.xv = op, form, opp, xv
        self.V = strip_width(tensor_shape(xv.type)[-1], D[-1], form.col_stride)
        self.SV = form.col_stride * self.V  # input columns a vector
        self.T, self.D = T, D
        return True

    @staticmethod
    def _rows_tile(T, D) -> bool:
        """Tile ``T`` of ``D`` is whole output rows, its leading dims a block of whole trailing dims."""
        rows = [d for d in range(len(D) - 1) if T[d] > 1]
        return len(T) == len(D) and T[-1] == D[-1] and \
            not (rows and any(T[d] != D[d] for d in range(rows[0] + 1, len(D) - 1)))

    def _stores_fit(self, T, D) -> bool:
        """Every result is stored tile by tile, row-major, in the stage's shape."""
        plan = self.g.gen.plan
        for v, buf, whole in self.st.stores:
            t = plan.tensors[buf]
            if whole or tuple(tensor_shape(v.type)) != D or tuple(t.shape) != D or t.order or \
                    tuple(self.st.store_tiles.get(buf, T)) != T:
                return False
        return True

    @staticmethod
    def _output_statement(opp, form):
        """(the statement writing the op's result from the reduction, the reduction's read in it) where the
        reduction statement is not the result itself (``O = P + Bias``; (None, None) where it is), the row and
        the column passing through unchanged; None otherwise."""
        red = opp.prog.stmts[form.stmt]
        result = opp.inst.results[0]
        writers = [i for i, s in enumerate(opp.prog.stmts) if s.lhs.tensor == result]
        if red.lhs.tensor == result:
            return (None, None) if writers == [form.stmt] else None
        if len(writers) != 1 or opp.prog.stmts[writers[0]].op != "=" or \
                [i for i, s in enumerate(opp.prog.stmts) if s.lhs.tensor == red.lhs.tensor] != [form.stmt]:
            return None
        s_out = opp.prog.stmts[writers[0]]
        reads = [a for a in s_out.accesses() if a.tensor == red.lhs.tensor]
        if len(reads) != 1:
            return None
        for k in (-2, -1):
            mine, theirs = s_out.lhs.indices[k], reads[0].indices[k]
            var = mine.plain_var() if hasattr(mine, "plain_var") else None
            if var is None or not hasattr(theirs, "plain_var") or theirs.plain_var() != var:
                return None
        return writers[0], reads[0]

    # ---- emission
    def generate(self) -> list[str]:
        g, b, ev, st = self.g, self.b, self.ev, self.st
        form, opp, V, T, D = self.form, self.opp, self.V, self.T, self.D
        n = len(D)
        body = g.open_work_items(None)
        tix = g.tile_index(T[:-1] + (1,), D[:-1] + (1,))  # the rows; the columns are this template's strips
        rows = tuple(tix.idx[:-1])
        row_frame = b.frame_of(tix.axes.values())
        GW = D[-1] // V
        ga = b.new_axis("g", pow2(GW))
        b.clamp[ga] = GW
        ja = b.new_axis("j", V) if V > 1 else None
        SV = self.SV
        ji = ja if SV == V else b.new_axis("j", SV)  # an input vector's columns (s x V at column stride s)
        pf = row_frame + (ga,)  # a strip's position: [rows, strips]
        ff = pf + ((ja,) if ja else ())  # its V columns: [rows, strips, V]
        fi = pf + ((ji,) if ji else ())  # an input vector: [rows, strips, s x V]
        self.shape = [b.aranges[a] for a in pf]
        strip0 = lscale(b.axis(ga, GW - 1), V)
        vec = ladd(strip0, b.axis(ja, V - 1)) if ja else strip0
        g.tile.axes = {**{d: a for d, a in tix.axes.items() if d < n - 1}, n - 1: ga}
        g.tile.idx = rows + (vec,)
        g.tile.local = tuple(tix.local[:-1]) + (vec,)
        red = opp.prog.stmts[form.stmt]
        red_ext = opp.bound.extents[form.stmt]
        pieces = []  # per strip column o: (output index, the reduction's index)
        for o in range(V):
            idx = rows + (ladd(strip0, lconst(o)),)
            ridx = idx
            if self.p_access is not None:
                s_out = opp.prog.stmts[self.out_stmt]
                bnd, _, _ = ev.invert(opp, s_out, idx, opp.bound.extents[self.out_stmt])
                ridx = ev.index_lins(opp, self.p_access, bnd)
            pieces.append((idx, ridx))
        reduce_vars = [v for v in red.all_vars if v not in set(red.lhs.vars)]
        # the reduction's variables at the strip's first column (the loads below set the column themselves)
        base = dict(ev.invert(opp, red, pieces[0][1], red_ext)[0])
        for v in reduce_vars:
            base[v] = lconst(0)
        accs = [b.fresh("acc") for _ in range(V)]
        shp = ", ".join(str(x) for x in self.shape)
        pool_max = form.reduce == "max="
        neutral = float("-inf") if pool_max else 0.0  # (a max pool's padding)
        for a in accs:
            b.em.emit(f"{a} = tl.full([{shp}], float(\"-inf\"), tl.float32)" if pool_max else
                      f"{a} = tl.zeros([{shp}], tl.float32)", 1)
        lo, hi = form.blocks(V)
        for kh in range(form.krows):
            vals: list[str] = []
            for blk in range(lo, hi + 1):
                bx = dict(base)
                bx[form.krow] = lconst(kh)
                # X's column s * col + kw - q at col = the strip's start, kw = q + blk * s V + (vector lane): the
                # input vector blk after the strip's first input column
                inner = lconst(blk * SV + form.col_pad)
                bx[form.col], bx[form.kcol] = strip0, ladd(inner, b.axis(ji, SV - 1)) if ji else inner
                tv = ev.access(self.xv, ev.index_lins(opp, form.x, bx), neutral)
                vals += self.split(b.block(tv, fi), fi, max(1, tv.depth))
            if form.w is None:  # a pool: the window's max or sum
                for kw in range(form.kcols):
                    for o, a in enumerate(accs):
                        x = vals[form.col_stride * o + kw - form.col_pad - lo * SV]
                        b.em.emit(f"{a} = tl.maximum({a}, {x}, propagate_nan=tl.PropagateNan.ALL)" if pool_max
                                  else f"{a} = {a} + {x}", 1)
                continue
            for kw in range(form.kcols):
                bw = dict(base)
                bw[form.krow], bw[form.kcol] = lconst(kh), lconst(kw)
                wt = ev.read(opp, form.w, bw, 0.0)
                if wt.const == 0.0:
                    continue
                wcode = b.place(wt, b.frame_of(set(wt.frame) | set(pf))) if wt.const is None else str(wt.const)
                for o, a in enumerate(accs):
                    x = vals[form.col_stride * o + kw - form.col_pad - lo * SV]
                    b.em.emit(f"{a} = {a} + {x} * {wcode}", max(1, wt.depth))
        # the epilogue: each accumulator is the reduction at its column of the strip
        outs: dict[str, list[TV]] = {buf: [] for _, buf, _ in st.stores}
        for (idx, ridx), a in zip(pieces, accs):  # (the pieces' indices differ in the column: their values
            # never share a memo entry, while what does not depend on the column, a per-channel parameter, is
            # loaded once for all of them)
            b.memo[("t", id(self.op), red.lhs.tensor, tuple(x.key() for x in ridx))] = TV(a, pf, 1, "f")
            for v, buf, _ in st.stores:
                tv = ev.result_at(v, idx)
                outs[buf].append(TV(b.block(tv, pf), pf, max(1, tv.depth), "f"))
        for _, buf, _ in st.stores:
            tvs = outs[buf]
            depth = max(t.depth for t in tvs)
            joined = b.tmp(self.join([t.code for t in tvs]), ff, depth, "f")
            g.store(buf, joined, rows + (vec,), whole=False)
        g.close_work_items(body)
        return g.body_text()

    def split(self, code: str, frame: tuple, depth: int) -> list[str]:
        """The columns of block ``code`` ([rows, strips, n], ``frame``) as n blocks [rows, strips], in order
        (emitted)."""
        b = self.b
        n = self.SV
        if n == 1:
            return [b.tmp(code, frame, depth).code]
        return self._split(b.tmp(code, frame, depth).code, n, depth)

    def _split(self, name: str, v: int, depth: int) -> list[str]:
        b = self.b
        e, o = b.fresh("e"), b.fresh("e")
        if v == 2:
            b.em.emit(f"{e}, {o} = tl.split({name})", depth)
            return [e, o]
        shp = ", ".join(str(x) for x in self.shape + [v // 2, 2])
        b.em.emit(f"{e}, {o} = tl.split(tl.reshape({name}, [{shp}]))", depth)
        evens, odds = self._split(e, v // 2, depth), self._split(o, v // 2, depth)
        return [x for pair in zip(evens, odds) for x in pair]

    def join(self, vals: list[str]) -> str:
        """``vals`` (V blocks [rows, strips]) as one block [rows, strips, V], in order (``split``'s inverse)."""
        v = len(vals)
        if v == 1:
            return vals[0]
        if v == 2:
            return f"tl.join({vals[0]}, {vals[1]})"
        shp = ", ".join(str(x) for x in self.shape + [v])
        return f"tl.reshape(tl.join({self.join(vals[0::2])}, {self.join(vals[1::2])}), [{shp}])"


def generate_depthwise(g: "StageGen") -> list[str] | None:
    """The stage function body of a depthwise stage, or None where the stage is not of the template's shape
    (nothing emitted: the shell runs the evaluator)."""
    d = DepthwiseGen(g)
    return d.generate() if d.applies() else None


__all__ = ["generate_depthwise", "DepthwiseGen"]
