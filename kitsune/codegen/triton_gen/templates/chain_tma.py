"""The chain template's Hopper form (``ChainConfig.TMA = 1``): a Gluon kernel with explicit shared memory.

The register form (``templates/chain.py``) keeps every intermediate in registers and loads each weight block
global -> registers -> shared memory right before its ``tl.dot``; at 255 registers and one CTA per SM nothing
hides that latency. Here, per tile of ``BM`` rows:

* each layer's row operand lives in shared memory as 64-column chunks (``[BM, 64]``, NVMMA-swizzled): the
  previous layer's result (written by its epilogue) or a piece read from memory, once per tile (the chain's
  input, reused by a skip connection): by TMA where it is a plain row-major tensor with a 16-byte aligned
  pitch (the next tile's, issued as soon as the last layer reading it is done), else computed by the
  evaluator (a gather, an unaligned input) at the start of the tile;
* each layer is one accumulator ``[BM, N]`` (N <= 256, padded to a power of two): ``warpgroup_mma`` over the
  operand's chunks, asynchronous, one in flight;
* the weights are one static stream of ``[N, 64]`` chunks (every layer's K chunks in order, tile after tile)
  through a ring of ``RING`` shared-memory slots filled by TMA, ``RING - 1`` chunks ahead of the tensor
  cores, across layer and tile boundaries: no weight load waits on a data dependence;
* the epilogue (bias, activation, concatenation: whatever the task computes) comes from the comprehension
  evaluator, as in the register form; its text is Triton's, made Gluon by ``gluon_text`` (constructors get an
  inferred layout).

Only for a kernel of this one stage, on a GPU (Triton's interpreter runs no Gluon), with weights ``[N, K]``
(``nn.Linear``'s layout) of a 16-bit type. A weight whose row pitch is not 16-byte aligned is read from a
padded copy the host makes before the launch (``KERNELS[..]["tma_pad"]``). Anything else raises
``CodegenError`` and the module falls back to the register form.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kitsune.codegen.plan import CodegenError, dtype_key
from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.gluon_text import host_descriptor
from kitsune.codegen.triton_gen.syntax import TL, pow2
from kitsune.codegen.triton_gen.templates.chain import ChainGen, _Piece
from kitsune.dialects.graph import GraphOp, fmt_loc
from kitsune.dialects.regions import tensor_shape

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.stage import StageGen

KC = 64  # columns of one operand chunk (128 bytes of bf16: one swizzle span)
AXES_MARK = "#@axes"  # replaced by the axis definitions (gluon_text): each section gets its own aranges


class _Chunk:
    """One K chunk of a layer: its operand (shared-memory buffer and chunk index) and the weight columns."""

    def __init__(self, layer: int, buf: str, j: int, k0: int):
        self.layer, self.buf, self.j, self.k0 = layer, buf, j, k0


class _TmaOperand:
    """A piece from memory loaded by TMA, ``chunks`` boxes of 64 columns: ``tensor`` [rows, C] from column
    ``col`` into ``buf``; the next tile's is issued once layer ``last`` (the last to read it) is done."""

    def __init__(self, tensor: str, shape: tuple, col: int, buf: str, last: int, chunks: int = 1):
        self.tensor, self.shape, self.col, self.buf, self.last = tensor, shape, col, buf, last
        self.chunks = chunks


class ChainTmaGen(ChainGen):
    def __init__(self, g: "StageGen"):
        from kitsune.schedule.chain import CHAIN_MAX_WIDTH

        super().__init__(g, seg=CHAIN_MAX_WIDTH)  # one accumulator per layer
        self.S = int(g.cfg.get("RING", 4))
        if self.S < 2:
            self.fail(f"needs a ring of at least 2 weight slots (RING), got {self.S}")
        self.warps = int(self.g.kernel.warps)
        self.pads: dict[str, int] = {}  # weight -> padded row pitch (elements) the host copies it to

    def fail(self, why: str):
        raise CodegenError(f"{fmt_loc(self.st.op)}stage \"{self.st.name}\": TMA chain: {why}")

    def new_pieces(self, width: int, layer: int | None, off: int = 0) -> list[_Piece]:
        # a layer's result is one piece (one accumulator, at most 256 columns, padded to whole 64-column chunks);
        # a value from memory is loaded chunk by chunk: pieces of at most 64 columns
        if layer is not None and width > 256:
            self.fail(f"a layer of {width} outputs (at most 256)")
        step = 256 if layer is not None else KC
        out = []
        for o in range(0, width, step):
            w = min(step, width - o)
            ax = self.b.new_axis("c", max(KC, pow2(w)))
            self.b.clamp[ax] = w
            out.append(_Piece(off + o, w, ax, layer))
        return out

    def source(self, v, p: _Piece) -> tuple:
        """What piece ``p`` of operand ``v`` reads: (the value, its column offset) through concatenations, so that
        a skip connection's piece shares the buffer of the same value's piece in an earlier layer."""
        off = p.off
        while isinstance(v.owner, GraphOp) and v.owner in self.members and v.owner.OPDEF.name == "concat":
            start = 0
            for x in v.owner.operands:
                w = tensor_shape(x.type)[-1]
                if start <= off < start + w:
                    v, off = x, off - start
                    break
                start += w
            else:
                break
        return v, off

    def tma_operand(self, v, off: int, p: _Piece, T, D) -> str | None:
        """The tensor a piece from memory can be loaded from by TMA (a tile ahead), or None: ``v`` is a global
        tensor [rows, C] of the weights' type read directly, the tile is [BM, all columns] over those rows, the
        row pitch and the piece's column offset are 16-byte aligned, and the piece's last chunk ends where the
        piece does (64 wide) or at the tensor's last column (TMA's zero fill)."""
        st, ev = self.st, self.ev
        if not (ev.is_direct(v) and v in st.args) or v in ev.pop_of or len(T) != 2:
            return None
        shape = tuple(tensor_shape(v.type))
        name = st.args[v]
        if name in st.awaited or len(shape) != 2 or shape[0] != D[0]:
            return None
        if dtype_key(v.type.get_element_type()) != self.dkey:
            return None
        if (shape[1] * self.eb) % 16 or (off * self.eb) % 16:
            return None
        if p.width != KC and off + p.width != shape[1]:
            return None
        return name

    # ---- code pieces
    def chunks_of(self, p: _Piece) -> int:
        return self.b.aranges[p.axis] // KC

    def store_chunks(self, buf: str, val: str, p: _Piece) -> None:
        """Store the [BM, pad] register block ``val`` into the chunks of shared-memory buffer ``buf``."""
        em, bm, n = self.b.em, self.b.aranges[self.row_axis], self.chunks_of(p)
        if n == 1:
            em.emit(f"{buf}.index(0).store({val})", 1)
            return
        if n not in (2, 4):
            self.fail(f"an operand of {n} chunks")
        h = self.b.fresh("h")
        if n == 2:
            em.emit(f"{h}0, {h}1 = gl.split(gl.permute(gl.reshape({val}, [{bm}, 2, {KC}]), [0, 2, 1]))", 1)
            parts = [f"{h}0", f"{h}1"]
        else:  # j = 2 * a + b over [BM, 64, a, b]
            em.emit(f"{h}b0, {h}b1 = gl.split(gl.reshape(gl.permute(gl.reshape({val}, [{bm}, 4, {KC}]), "
                    f"[0, 2, 1]), [{bm}, {KC}, 2, 2]))", 1)
            em.emit(f"{h}0, {h}2 = gl.split({h}b0)", 1)
            em.emit(f"{h}1, {h}3 = gl.split({h}b1)", 1)
            parts = [f"{h}{j}" for j in range(4)]
        for j, x in enumerate(parts):
            em.emit(f"{buf}.index({j}).store({x})", 1)

    def operand_block(self, v, p: _Piece, dt: str) -> str:
        """Piece ``p`` of ``v`` as a [BM, pad] block of the dot's type, zero past the piece's width."""
        b = self.b
        a = self.operand(v, p, dt)
        if b.aranges[p.axis] == p.width:
            return a
        return b.tmp(f"tl.where({b.raw(p.axis, (self.row_axis, p.axis))} < {p.width}, {a}, 0.0)",
                     (self.row_axis, p.axis), 1).code

    def issue_operands(self, loads, row: str, pred: str, depth: int) -> None:
        """The TMA of a tile's operands from memory (``loads``: (barrier, _TmaOperand), rows from ``row``)."""
        em = self.b.em
        nbytes = self.b.aranges[self.row_axis] * KC * self.eb
        for k, x in loads:  # (one barrier a piece: its boxes of 64 columns together)
            em.emit(f"mbarrier.expect(_mbar.index({k}), {nbytes * x.chunks}, pred={pred})", depth)
            for j in range(x.chunks):
                em.emit(f"tma.async_copy_global_to_shared(_d{x.buf}, [{row}, {x.col + KC * j}], _mbar.index({k}), "
                        f"{x.buf}.index({j}), pred={pred})", depth)

    def slot(self, s: str, n: int) -> str:
        """Ring slot ``s`` as the [n, 64] view a layer of n (padded) outputs uses."""
        return f"_ring.index({s})" + (f".slice(0, {n}, 0)" if n != self.nmax else "")

    def issue(self, c: int, g_expr: str, pred: str, depth: int) -> None:
        """The TMA of stream chunk ``c`` into the ring slot of global chunk ``g_expr``."""
        ch = self.stream[c]
        n = self.npad[ch.layer]
        em = self.b.em
        s = self.b.fresh("s")
        em.emit(f"{s} = ({g_expr}) % {self.S}", depth)
        em.emit(f"mbarrier.expect(_ready.index({s}), {n * KC * self.eb}, pred={pred})", depth)
        em.emit(f"tma.async_copy_global_to_shared(_w{ch.layer}, [0, {ch.k0}], _ready.index({s}), {self.slot(s, n)}, "
                f"pred={pred})", depth)

    def generate(self) -> list[str]:
        g, b, ev, st = self.g, self.b, self.ev, self.st
        form = self.form
        wdt = {dtype_key(l.w.type.get_element_type()) for l in form.layers}
        if not (wdt <= {"bf16"} or wdt <= {"f16"}):
            self.fail(f"weights of type {sorted(wdt)} (bf16 or f16 only)")
        dkey = wdt.pop()
        self.dkey = dkey
        dt = TL[dkey]
        self.eb = 2
        for lay in form.layers:
            if not lay.w_nk:
                self.fail(f"{fmt_loc(lay.op)}a weight indexed [k, n] (the TMA form streams [n, k] weights)")
            if lay.N > 256:
                self.fail(f"{fmt_loc(lay.op)}a layer of {lay.N} outputs (at most 256)")
        b.em.floor = 0
        T, D, body, tix = self.open_tile()
        bm = b.aranges[self.row_axis]
        if bm not in (64, 128):
            self.fail(f"tiles of {bm} rows (64 or 128)")
        if bm // 16 < self.warps:
            self.fail(f"{self.warps} warps for {bm} rows (wgmma: 16 rows a warp)")
        last = form.layers[-1]
        col = tix.axes.get(len(T) - 1)
        # each layer's result is one piece; the last one's along the tile's column axis
        self.npad = []
        for i, lay in enumerate(form.layers):
            if lay is last and col is not None:
                p = _Piece(0, lay.N, col, i)
                self.tile_piece = p
            else:
                p = self.new_pieces(lay.N, i)[0]
            self.pieces[lay.op.results[0]] = [p]
            self.npad.append(b.aranges[p.axis])
        if self.npad[-1] < 16 or self.npad[-1] > 256:
            self.fail(f"a last layer padded to {self.npad[-1]} columns")
        self.nmax = max(self.npad)
        # the row operand of every layer as pieces, each in a buffer of 64-column chunks
        bufs: dict = {}  # (id(source value), column, width) -> buffer; layer results share "_act"
        mem_loads = []  # (value, piece, buffer) loaded (computed) at the start of a tile
        tma_loads: dict[str, _TmaOperand] = {}  # buffer -> the piece TMA loads into it
        self.stream: list[_Chunk] = []
        act_chunks = 0
        for i, lay in enumerate(form.layers):
            ps = self.pieces_of(lay.a)
            if sum(p.width for p in ps) != lay.K or [p.off for p in ps] != sorted(p.off for p in ps):
                self.fail(f"{fmt_loc(lay.op)}the row operand cannot be cut into column pieces")
            for p in ps:
                if p.layer is not None:
                    if p.layer != i - 1:
                        self.fail(f"{fmt_loc(lay.op)}an operand from a layer before the previous one")
                    buf = "_act"
                    act_chunks = max(act_chunks, self.chunks_of(p))
                else:
                    sv, soff = self.source(lay.a, p)
                    key = (id(sv), soff, p.width)
                    if key not in bufs:
                        bufs[key] = f"_m{len(bufs)}"
                        name = self.tma_operand(sv, soff, p, T, D)
                        if name is not None:
                            tma_loads[bufs[key]] = _TmaOperand(name, tensor_shape(sv.type), soff, bufs[key], i,
                                                               self.chunks_of(p))
                        else:
                            mem_loads.append((lay.a, p, bufs[key]))
                    buf = bufs[key]
                    if buf in tma_loads:
                        tma_loads[buf].last = i
                for j in range(self.chunks_of(p)):
                    self.stream.append(_Chunk(i, buf, j, p.off + KC * j))
        NCH = len(self.stream)
        if self.S - 1 > NCH:
            self.S = NCH + 1
        # resources at depth 0 (before the work-item loop): layouts, descriptors, shared memory, barriers
        em = b.em
        pre = []
        for i, n in enumerate(self.npad):
            pre.append(f"_mma{i}: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta="
                       f"[{self.warps}, 1], instr_shape=[16, {n}, 16])")
        for pad in sorted({b.aranges[p.axis] for _, p, _ in mem_loads}):
            # 8 elements (16 bytes) a thread along a row, 64 columns a warp: a wider operand repeats in each
            # thread's registers every 64 columns, so its 64-column chunks split apart in registers (store_chunks;
            # with 128 columns a warp, gl.split had one element a thread to split along and did not compile)
            tc = min(8, pad // 8)
            pre.append(f"_blk{pad}: gl.constexpr = gl.BlockedLayout([1, 8], [{32 // tc}, {tc}], [{self.warps}, 1], "
                       f"[1, 0])")
        pre.append(f"_chunk_l: gl.constexpr = gl.NVMMASharedLayout.get_default_for([{bm}, {KC}], {dt})")
        pre.append(f"_ring_l: gl.constexpr = gl.NVMMASharedLayout.get_default_for([{self.nmax}, {KC}], {dt})")
        for i, lay in enumerate(form.layers):
            name = st.args[lay.w]
            pitch = lay.K
            if (lay.K * self.eb) % 16:
                pitch = -(-lay.K * self.eb // 16) * 16 // self.eb
                self.pads[name] = pitch
            n = self.npad[i]
            pre.append(host_descriptor(self.g, f"_w{i}", name, [lay.N, lay.K], [pitch, 1], [n, KC], dkey))
        pre.append(f"_ring = gl.allocate_shared_memory({dt}, [{self.S}, {self.nmax}, {KC}], _ring_l)")
        pre.append(f"_ready = gl.allocate_shared_memory(gl.int64, [{self.S}, 1], mbarrier.MBarrierLayout())")
        if act_chunks:
            pre.append(f"_act = gl.allocate_shared_memory({dt}, [{act_chunks}, {bm}, {KC}], _chunk_l)")
        for v, p, buf in mem_loads:
            pre.append(f"{buf} = gl.allocate_shared_memory({dt}, [{self.chunks_of(p)}, {bm}, {KC}], _chunk_l)")
        for s in range(self.S):
            pre.append(f"mbarrier.init(_ready.index({s}), count=1)")
        operands = list(enumerate(tma_loads.values()))  # (its barrier, the piece)
        for k, x in operands:
            (r, cols) = x.shape
            pre.append(f"{x.buf} = gl.allocate_shared_memory({dt}, [{x.chunks}, {bm}, {KC}], _chunk_l)")
            pre.append(host_descriptor(self.g, f"_d{x.buf}", x.tensor, [r, cols], [cols, 1], [bm, KC], dkey))
        if operands:
            pre.append(f"_mbar = gl.allocate_shared_memory(gl.int64, [{len(operands)}, 1], mbarrier.MBarrierLayout())")
            pre += [f"mbarrier.init(_mbar.index({k}), count=1)" for k, _ in operands]
        for line in pre:
            em.emit(line, 0)
        # the first tile's first S - 1 chunks, and its operands from memory
        first = f"(pid - {st.lo}) < {st.work_items}"
        for c in range(self.S - 1):
            self.issue(c, str(c), first, 0)
        self.issue_operands(operands, f"(pid - {st.lo}) * {bm}", first, 0)
        b.em.floor = 1  # nothing of a tile (bias, weights) is hoisted above the work-item loop: registers
        nprog = st.programs
        em.emit(f"_more = t + {nprog} < {st.work_items}  # this program has a next tile", 1)
        for k, _ in operands:  # this tile's operands by TMA (issued during the tile before)
            em.emit(f"mbarrier.wait(_mbar.index({k}), it & 1)", 1)
        # the tile's pieces from memory
        if mem_loads:
            em.emit(AXES_MARK, 1)
            for v, p, buf in mem_loads:
                saved = dict(b.memo)
                val = self.operand_block(v, p, dt)
                b.memo = saved
                # nothing else fixes the layout of a value that only goes to shared memory: a coalesced one
                pad = b.aranges[p.axis]
                val = b.tmp(f"gl.set_auto_layout({val}, _blk{pad})", (self.row_axis, p.axis), 1).code
                self.store_chunks(buf, val, p)
        em.emit("fence_async_shared()", 1)
        em.emit("gl.thread_barrier()", 1)
        c = 0
        for i, lay in enumerate(form.layers):
            n = self.npad[i]
            acc = b.fresh("acc")
            em.emit(f"{acc} = gl.zeros([{bm}, {n}], gl.float32, layout=_mma{i})", 1)
            first_chunk = True
            while c < NCH and self.stream[c].layer == i:
                ch = self.stream[c]
                gv = b.fresh("g")
                em.emit(f"{gv} = it * {NCH} + {c}", 1)
                em.emit(f"mbarrier.wait(_ready.index({gv} % {self.S}), ({gv} // {self.S}) & 1)", 1)
                em.emit(f"{acc} = warpgroup_mma({ch.buf}.index({ch.j}), {self.slot(f'{gv} % {self.S}', n)}"
                        f".permute((1, 0)), {acc}, "
                        f"use_acc={not first_chunk}, is_async=True)", 1)
                em.emit(f"{acc} = warpgroup_mma_wait(num_outstanding=1, deps=({acc}, ))", 1)
                # the chunk before is done in this warpgroup; after the barrier in all: its slot is free
                em.emit("gl.thread_barrier()", 1)
                nxt = c + self.S - 1
                if nxt < NCH:
                    self.issue(nxt, f"{gv} + {self.S - 1}", "True", 1)
                else:
                    self.issue(nxt - NCH, f"{gv} + {self.S - 1}", "_more", 1)
                first_chunk = False
                c += 1
            em.emit(f"{acc} = warpgroup_mma_wait(num_outstanding=0, deps=({acc}, ))", 1)
            done = [(k, x) for k, x in operands if x.last == i]
            if done:  # their last reader is done in every warpgroup: the next tile's operands now
                em.emit("gl.thread_barrier()", 1)
                self.issue_operands(done, f"(t + {nprog}) * {bm}", "_more", 1)
            sp = self.pieces[lay.op.results[0]][0]
            key = ("t", id(lay.op), lay.red, tuple(x.key() for x in self.index(sp)))
            b.memo[key] = TV(acc, (self.row_axis, sp.axis), 1, "f")
            if i + 1 < len(form.layers):
                nxt_lay = form.layers[i + 1]
                saved = dict(b.memo)  # values of one section never reach another (their layouts differ)
                em.emit(AXES_MARK, 1)
                vals = [(p, self.operand_block(nxt_lay.a, p, dt)) for p in self.pieces_of(nxt_lay.a)
                        if p.layer == i]
                em.emit("gl.thread_barrier()  # every warpgroup is done reading _act", 1)
                for p, val in vals:
                    self.store_chunks("_act", val, p)
                em.emit("fence_async_shared()", 1)
                em.emit("gl.thread_barrier()", 1)
                b.memo = saved
        # the results
        em.emit(AXES_MARK, 1)
        for v, buf, whole in st.stores:
            if whole:
                self.fail("a whole-row store")
            for p in self.pieces_of(v):
                ix = self.index(p)
                g.store(buf, ev.result_at(v, ix), ix, whole=False)
        em.emit("gl.thread_barrier()  # the tile's buffers are rewritten by the next tile", 1)
        g.close_work_items(body)
        # the stage function's body without the axis lines (each section defines those it uses: gluon_text)
        return g.body_text()[:1] + b.em.root.lines(1)


def generate_chain_tma(g: "StageGen") -> tuple[list[str], dict[str, int], list[str]]:
    """(the Gluon stage function body, weights to pad {name: row pitch}, weights read by TMA)."""
    gen = ChainTmaGen(g)
    body = gen.generate()
    names = [g.stage.args[l.w] for l in gen.form.layers]
    return body, gen.pads, names


__all__ = ["generate_chain_tma", "ChainTmaGen", "AXES_MARK"]
