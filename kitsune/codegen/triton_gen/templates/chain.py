"""The chain template: a tile of rows runs through every layer of a GEMM chain (``kitsune.schedule.chain``).

A work item is ``BM`` rows. Layer by layer, each output column segment ``j`` (``SEG`` wide) is

    acc_j = sum_i  A_i @ W[piece i, segment j]      (tl.dot, fp32 accumulation)

where the ``A_i`` are the column pieces of the layer's row operand. A piece that comes from the previous
layer is a register block: the previous layer's segment after its epilogue (bias, activation: whatever the
task's ops compute, evaluated by the comprehension evaluator from the accumulator), converted to the weight's
element type right after that segment is done, so only the narrow copy stays live. A piece from memory (layer
0's input, a skip connection's concatenated input) is loaded (or computed: a gather prologue) by the
evaluator next to its first dot. Weights stream from L2 in ``[piece, segment]`` blocks; with ``PREFETCH``
each block's load is issued one dot ahead of its use, so the load overlaps the tensor cores (1: within an
output segment, 2: also across segments and layers).

The evaluator supplies all arithmetic: the template seeds its memo with the accumulator of each layer's
reduction statement at the segment's index, and asks it for the values around (bias adds, activations,
concatenations, the final epilogue, even a norm when the last layer is one segment wide). Intermediates
never leave the SM: DRAM traffic is the chain's input, its output and the weights once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kitsune.codegen.plan import CodegenError, dtype_key
from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.index_algebra import ladd, lconst
from kitsune.codegen.triton_gen.syntax import TL, pow2
from kitsune.codegen.triton_gen.templates.scatter import scatter_store
from kitsune.schedule.chain import CHAIN_MAX_WIDTH
from kitsune.dialects.graph import GraphOp, fmt_loc
from kitsune.dialects.regions import tensor_shape

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.stage import StageGen


MEM_PIECE = 128
"""The widest piece of a chain layer's operand from memory in the register form (``ChainGen.new_pieces``): at most
32 registers a thread at 64 rows on 4 warps, kept across the layer's segments instead of loaded again for each.
mgn_10k's edge chain on the H100 at SEG 64: 54.9 us with its input in 64-column pieces loaded per segment, 53.5 so
(SEG 128, one segment: 50.0-50.3 either way; bench/kernels/NOTES.md section 26)."""


class _Piece:
    """A column range [off, off + width) of a value along one block axis (``axis``, padded to a power of two;
    its lanes past ``width`` repeat the last column). ``layer``: the chain layer whose result it comes from
    (its segment), or None (from memory)."""

    def __init__(self, off: int, width: int, axis: str, layer: int | None):
        self.off, self.width, self.axis, self.layer = off, width, axis, layer


class ChainGen:
    def __init__(self, g: "StageGen", seg: int | None = None):
        from kitsune.schedule.chain import chain_form

        self.g = g
        self.st = g.stage
        self.b, self.ev = g.b, g.ev
        self.seg = seg or int(g.cfg.get("SEG", 128))  # (the TMA form: one segment per layer)
        self.prefetch = int(g.cfg.get("PREFETCH", 0))
        st = self.st
        if st.pushes or st.split > 1:
            raise CodegenError(f"{fmt_loc(st.op)}stage \"{st.name}\": the chain template stores its tiles (no "
                               f"queue pushes, no split)")
        self.form = chain_form(st.op.body.blocks.first, self.seg, results=[v for v, _, _ in st.stores])
        if self.form is None:
            raise CodegenError(f"{fmt_loc(st.op)}stage \"{st.name}\": not a chain of weight GEMMs")
        self.pieces: dict = {}  # value -> [_Piece]
        self.blocks: list = []  # weight blocks in dot order: (layer, segment piece, A piece)
        self.tile_piece: _Piece | None = None  # the last layer's one segment, along the tile's column axis
        self.loaded: dict[int, str] = {}  # weight block number -> its variable

    # ---- column pieces of a value
    def new_pieces(self, width: int, layer: int | None, off: int = 0) -> list[_Piece]:
        """Column pieces of a value: a layer's result in SEG-wide segments; a value from memory (``layer`` None) in
        pieces of up to ``MEM_PIECE`` columns whatever SEG, each loaded once a layer and kept for every output
        segment (and the epilogue) instead of loaded again per segment."""
        out = []
        step = self.seg if layer is not None else max(self.seg, MEM_PIECE)
        for o in range(0, width, step):
            w = min(step, width - o)
            ax = self.b.new_axis("c", max(16, pow2(w)))
            self.b.clamp[ax] = w
            out.append(_Piece(off + o, w, ax, layer))
        return out

    def pieces_of(self, v) -> list[_Piece]:
        """The column pieces of ``v``: the segments of the chain layer it is computed from, the concatenated
        pieces of a last-dim concat, else new pieces of at most SEG columns (a value from memory)."""
        got = self.pieces.get(v)
        if got is not None:
            return got
        from kitsune.schedule.chain import segment_preserving

        op = v.owner
        width = tensor_shape(v.type)[-1]
        out = None
        if isinstance(op, GraphOp) and op in self.members and segment_preserving(op):
            if op.OPDEF.name == "concat":
                out, off = [], 0
                for x in op.operands:
                    out += [_Piece(off + p.off, p.width, p.axis, p.layer) for p in self.pieces_of(x)]
                    off += tensor_shape(x.type)[-1]
            else:
                full = [x for x in op.operands if tensor_shape(x.type) and tensor_shape(x.type)[-1] == width]
                full.sort(key=lambda x: 0 if self.from_chain(x) else 1)
                if full:
                    out = self.pieces_of(full[0])
        if out is None and self.tile_piece is not None and width == self.tile_piece.width:
            # (a row-wise epilogue of a one-segment last layer reads it along this axis)
            out = [_Piece(0, width, self.tile_piece.axis, self.tile_piece.layer if v in self.layer_of else None)]
        if out is None:
            out = self.new_pieces(width, None)
        self.pieces[v] = out
        return out

    def from_chain(self, v) -> bool:
        """``v`` is computed from a layer of the chain."""
        stack, seen = [v], set()
        while stack:
            x = stack.pop()
            if x in self.layer_of:
                return True
            o = x.owner
            if isinstance(o, GraphOp) and o in self.members and id(x) not in seen:
                seen.add(id(x))
                stack += list(o.operands)
        return False

    # ---- code
    def index(self, p: _Piece) -> tuple:
        return self.lead + (ladd(lconst(p.off), self.b.axis(p.axis, p.width - 1)),)

    def operand(self, v, p: _Piece, dt: str) -> str:
        """Piece ``p`` of the row operand ``v`` as a [BM, piece] block of the dot's type."""
        b, ev = self.b, self.ev
        ix = self.index(p)
        tv = ev.access(v, ix, 0.0, raw=True) if ev.is_direct(v) else ev.value_at(v, ix)
        frame = (self.row_axis, p.axis)
        return b.tmp(f"({b.block(tv, frame)}).to({dt})", frame, 1).code

    def weight_load(self, n: int) -> str:
        """Weight block ``n`` as a [piece, segment] block (a load; masked past the layer's K and N)."""
        l, sp, ap = self.blocks[n]
        lay = self.form.layers[l]
        name = self.st.args[lay.w]
        kp, npad = self.b.aranges[ap.axis], self.b.aranges[sp.axis]
        kr = f"({ap.off} + tl.arange(0, {kp}))[:, None]"
        nr = f"({sp.off} + tl.arange(0, {npad}))[None, :]"
        off = f"{nr} * {lay.K} + {kr}" if lay.w_nk else f"{kr} * {lay.N} + {nr}"
        m = []
        if ap.width < kp:
            m.append(f"(tl.arange(0, {kp})[:, None] < {ap.width})")
        if sp.width < npad:
            m.append(f"(tl.arange(0, {npad})[None, :] < {sp.width})")
        mask = f", mask={' & '.join(m)}, other=0.0" if m else ""
        var = self.b.fresh("w")
        self.b.em.emit(f"{var} = tl.load({name} + {off}{mask})", 1)
        return var

    def weight(self, n: int) -> str:
        """The variable of weight block ``n``; with PREFETCH, block n + 1's load is issued now (1: when it
        belongs to the same output segment, 2: always, across segments and layers)."""
        if n not in self.loaded:
            self.loaded[n] = self.weight_load(n)
        ahead = n + 1 < len(self.blocks) and n + 1 not in self.loaded
        if ahead and self.prefetch == 1:
            ahead = self.blocks[n + 1][:2] == self.blocks[n][:2]
        if ahead and self.prefetch:
            self.loaded[n + 1] = self.weight_load(n + 1)
        return self.loaded.pop(n)

    def fail(self, why: str):
        raise CodegenError(f"{fmt_loc(self.st.op)}stage \"{self.st.name}\": the chain template {why}")

    def open_tile(self):
        """Open the work-item loop and index the tile (whole rows); returns (T, D, the loop, the tile index)."""
        g, st = self.g, self.st
        T, D = tuple(st.tile), tuple(st.shape)
        if len(T) < 2 or any(t != 1 for t in T[:-2]) or T[-1] != D[-1]:
            self.fail(f"needs tiles [1.., BM, {D[-1] if D else '?'}] (whole rows), got {list(T)}")
        self.members = set(o for o in st.op.body.blocks.first.ops if isinstance(o, GraphOp))
        self.layer_of = {lay.op.results[0]: i for i, lay in enumerate(self.form.layers)}
        body = g.open_work_items(None)
        tix = g.tile_index(T, D)
        g.tile.axes, g.tile.idx, g.tile.local = tix.axes, tuple(tix.idx), tix.local
        g.skip_row_remasks(tix.idx, D)  # (as the gemm template)
        self.row_axis = tix.axes.get(len(T) - 2)
        if self.row_axis is None:
            self.fail("needs a row axis")
        self.lead = tuple(tix.idx[:-1])
        return T, D, body, tix

    def generate(self) -> list[str]:
        g, b, ev, st = self.g, self.b, self.ev, self.st
        form = self.form
        T, D, body, tix = self.open_tile()
        b.em.floor = 1  # nothing of a tile (bias, weights) is hoisted above the work-item loop: registers
        wdt = {dtype_key(l.w.type.get_element_type()) for l in form.layers}
        low = wdt <= {"bf16"} or wdt <= {"f16"}
        dt = TL[wdt.pop()] if low else "tl.float32"
        dot = "_dot_lp" if low else "tl.dot"
        prec = "" if low or g.gen.tf32 else ', input_precision="ieee"'
        # every layer's segments and the pieces of its row operand, then the weight blocks in dot order
        segs = []
        last = form.layers[-1]
        col = tix.axes.get(len(T) - 1)
        # the last layer in one segment along the tile's columns: when it is at most SEG wide, or when a row-wise op
        # (a norm) follows it (its whole row in one accumulator; the earlier layers keep their SEG-wide segments)
        one = last.N <= self.seg or (form.row_epilogue and last.N <= CHAIN_MAX_WIDTH)
        self.tile_piece = _Piece(0, last.N, col, len(form.layers) - 1) \
            if col is not None and one and last.N > 1 else None
        for i, lay in enumerate(form.layers):
            segs.append([self.tile_piece] if lay is last and self.tile_piece is not None else self.new_pieces(lay.N, i))
            self.pieces[lay.op.results[0]] = segs[-1]
        aps = []
        for i, lay in enumerate(form.layers):
            ps = self.pieces_of(lay.a)
            if sum(p.width for p in ps) != lay.K or [p.off for p in ps] != sorted(p.off for p in ps):
                raise CodegenError(f"{fmt_loc(lay.op)}'{lay.op.name}': the chain template cannot cut its row "
                                   f"operand into column pieces")
            aps.append(ps)
            for sp in segs[i]:
                for ap in ps:
                    self.blocks.append((i, sp, ap))
        held: dict[str, str] = {}  # piece axis -> its register block (from the previous layer)
        n = 0
        for i, lay in enumerate(form.layers):
            rbm = b.aranges[self.row_axis]
            for sp in segs[i]:
                acc = b.fresh("acc")
                b.em.emit(f"{acc} = tl.zeros([{rbm}, {b.aranges[sp.axis]}], tl.float32)", 1)
                for ap in aps[i]:
                    if ap.layer is None:
                        # from memory: loaded next to its first dot and kept for the layer's other segments and the
                        # epilogue (a residual), when at most MEM_PIECE wide; a wider piece is loaded again for each
                        # segment (short-lived registers)
                        saved = dict(b.memo)
                        a = self.operand(lay.a, ap, dt)
                        if len(segs[i]) > 1 and ap.width > MEM_PIECE:
                            b.memo = saved
                    else:
                        a = held[ap.axis]
                    w = self.weight(n)
                    b.em.emit(f"{acc} = {dot}({a}, {w}, {acc}{prec})", 1)
                    n += 1
                # the reduction at this segment is the accumulator; the evaluator computes what follows
                key = ("t", id(lay.op), lay.red, tuple(x.key() for x in self.index(sp)))
                b.memo[key] = TV(acc, (self.row_axis, sp.axis), 1, "f")
                if i + 1 < len(form.layers):
                    for ap in aps[i + 1]:
                        if ap.axis == sp.axis and ap.layer is not None:
                            held[ap.axis] = self.operand(form.layers[i + 1].a, ap, dt)
        # the results: each column piece of each stored value
        b.em.floor = 0
        for v, buf, whole in st.stores:
            if whole:
                raise CodegenError(f"{fmt_loc(st.op)}stage \"{st.name}\": the chain template stores whole rows")
            if buf in st.store_scatters:  # each tile adds its rows of the source, atomically
                from kitsune.dialects.scattered_results import scatter_source

                for p in self.pieces_of(scatter_source(v.owner)):
                    scatter_store(g, v, buf, self.index(p))
                continue
            for p in self.pieces_of(v):
                ix = self.index(p)
                g.store(buf, ev.result_at(v, ix), ix, whole=False)
        g.close_work_items(body)
        return g.body_text()


def generate_chain(g: "StageGen") -> list[str]:
    """The stage function body of a chain stage (``g``: the stage's shell)."""
    return ChainGen(g).generate()


__all__ = ["generate_chain", "ChainGen"]
