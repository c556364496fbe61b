"""The gemm template's Hopper form (``GemmConfig.GLUON``): a Gluon kernel whose operands reach shared memory by
TMA through a ring of ``stages`` slots and whose products run as asynchronous ``wgmma``.

Triton 3.6 pipelines a ``tl.dot`` loop with one partition that both issues the loads and runs the tensor cores,
and warp-specialises only on Blackwell. On the H100 the Gluon forms of a persistent GEMM reach cuBLAS on the
GPT-3 MLP shapes where the Triton kernel stays 5-13% behind (bench/kernels/NOTES.md section 13:
``gluon_gemm_probe.py``). Two forms:

* ``GLUON = 1`` (pipelined): one partition; a tile's first ``stages - 1`` chunks are issued when the tile starts,
  each later one as the wgmma two steps before it retires (one wgmma in flight);
* ``GLUON = 2`` (warp-specialised): a one-warp loader partition fills the ring for every tile of the program,
  ahead across tile boundaries, waiting only for free slots (``_empty``); the default partition's warps run the
  wgmma, release each slot once the wgmma that read it has retired, and run the epilogue.
* ``GLUON = 3`` (ping-pong): the loader as in 2, and two consumer partitions of one warpgroup each (the default
  one and a worker) that take the program's tiles in turn. Their K loops run one after the other, handed over
  through two ``_turn`` barriers, so one's epilogue runs under the other's K loop: for a short K, where a tile's
  epilogue is a large share of its time and the single consumer of form 2 leaves the tensor cores idle through it.
  Each consumer stores through a result buffer of its own. Tuned only: on the H200 it ran even with form 2 on the LM
  head's and BERT's K = 768 GEMMs (bench/kernels/NOTES.md section 44).

What a tile computes after the product (bias, activation, a residual, the casts: whatever the stage's ops do)
comes from the comprehension evaluator, seeded with the accumulator as the value of the anchor contraction's
reduction at the tile's index, as in the chain template; its Triton text becomes Gluon by ``gluon_text``.

A tile of 96 or 192 columns (Gluon's register tensors are powers of two) is two column parts, each with its W
block, accumulator, wgmma, epilogue section and store: T256's fc2 as 128 tiles of 128 x 192 on 128 SMs where
128 x 128 makes 192 (bench/kernels/NOTES.md section 34). A split of K (``SPLIT``) makes a tile's work items meet
in the stage's fp32 workspace, the last running the epilogue (``combine``). The TMA descriptors come from the host
(kernel parameters: ``host_desc``).

A ``[n, k]`` weight that only this stage reads is uploaded *packed* (``packing``): each [BN, BK] block of it
(a tile's columns at one K step) one contiguous run of bytes, the blocks of a column band one after another along
K, so that a K step's W load is one 16-32 KB run instead of BN rows of 128 bytes ``K * 2`` apart. T256's GEMMs
ran 4% faster so on the H100 (fc1 76.8 -> 73.8 us, fc2 69.0 -> 66.1: bench/kernels/NOTES.md section 36).

Taken for a kernel of this one stage (no queues) whose anchor is ``A[m, k] * W[n, k]`` (or
``W[k, n]``) with ``A`` a 2-D tensor read from memory, ``W`` a 2-D weight, both of one 16-bit type with
16-byte aligned row pitches, and a tile of whole ``BM x BN`` blocks; anything else raises ``CodegenError`` and
the module emits the Triton form of the same config.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from kitsune.codegen.plan import ELEM_BYTES, CodegenError, dtype_key
from kitsune.codegen.row_pitch import row_pitch
from kitsune.codegen.triton_gen.blocks import Blocks
from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.gluon_text import host_descriptor
from kitsune.codegen.triton_gen.index_algebra import ladd, lconst, lscale
from kitsune.codegen.triton_gen.stage import work_item_loop
from kitsune.codegen.triton_gen.syntax import TL
from kitsune.codegen.triton_gen.templates.chain_tma import AXES_MARK
from kitsune.codegen.triton_gen.tiling import TileIndexer
from kitsune.dialects.graph import fmt_loc
from kitsune.dialects.regions import tensor_shape
from kitsune.schedule.configs import GemmConfig

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.stage import StageGen

PARAMS_MARK = "__KITSUNE_PARAMS__"  # the kernel's parameters (known once every stage is generated)
LOADER_REGS = 24  # registers of the loader partition's warp (setmaxnreg)
CONSUMER_REGS = 232  # registers of the ping-pong form's second consumer (setmaxnreg; its 128 x 128 accumulator
# takes 128 of them)
SECOND = "_1"  # suffix of the ping-pong form's second consumer's result buffers
BK_TMA = 64  # 128 bytes of a 16-bit type: one swizzle span


class Packing(NamedTuple):
    """W uploaded packed (``GemmTmaGen.packing``): its tensor, its K steps of ``BK``, the packed matrix's rows."""

    tensor: str
    k_steps: int
    rows: int


class GemmTmaGen:
    def __init__(self, g: "StageGen"):
        self.g, self.st, self.b, self.ev = g, g.stage, g.b, g.ev
        cfg = g.cfg
        self.form = int(cfg.get("GLUON", 0))
        self.S = int(cfg.get("stages", 3))
        self.BM, self.BN, self.BK = int(cfg.get("BM", 128)), int(cfg.get("BN", 128)), int(cfg.get("BK", 64))
        self.BN0, self.BN1 = GemmConfig(BN=self.BN).gluon_widths()  # columns: a power of two (+ a second part)
        self.split = int(g.stage.split)  # parts of K a tile's work items share (``combine``)
        self.skew = int(cfg.get("SKEW", 0))  # K steps the last part takes beyond an even share (``kspan``)
        self.kn = ""  # a line defining a work item's K step count where the parts' extents differ
        self.kofs = ""  # a work item's first K offset (its part's), set once the part's extent is known
        self.warps = int(g.kernel.warps)
        self.fn = g.fn_name()
        self.cbufs: list[tuple[str, str, str]] = []  # (buffer, descriptor, output) of result parts stored by TMA
        self.cbase: dict[str, int] = {}  # output -> n of its buffer ``_cbuf{n}``
        self.cplace: dict[str, str] = {}  # output -> where its buffers are (``result_buffer``)
        self.cown = 0  # bytes of the results' own buffers so far
        self.cprelude: list[str] = []  # their layouts, buffers and descriptors (depth 0)
        self.pack: Packing | None = None  # where W is uploaded packed

    def fail(self, why: str):
        raise CodegenError(f"{fmt_loc(self.st.op)}stage \"{self.st.name}\": Gluon gemm: {why}")

    # ---- what the form takes
    def check(self):
        """The anchor contraction as a chain layer (``weight_layer``: row operand, weight, its layout), checked."""
        from kitsune.schedule.chain import weight_layer
        from kitsune.schedule.select import anchor_of

        st, ev = self.st, self.ev
        if self.form not in (1, 2, 3):
            self.fail(f"GLUON={self.form} (1: pipelined, 2: warp-specialised, 3: ping-pong)")
        if self.form == 3 and (self.BN1 or self.BN > 128 or self.split > 1 or self.warps != 4):
            self.fail(f"ping-pong over {self.BM} x {self.BN} tiles, {self.split} part(s) of K, {self.warps} warps "
                      "(one warpgroup a consumer, a power-of-two tile of at most 128 columns, K unsplit)")
        if st.pushes or st.pops or not st.stores or any(w for _, _, w in st.stores):
            self.fail("queue traffic or a whole-tensor result")
        if st.split > 1 and not st.workspace:
            self.fail("a split without a workspace")
        if self.S < 2 or self.BK != BK_TMA or self.BM not in (64, 128) or self.BN not in (64, 96, 128, 192, 256):
            self.fail(f"a {self.BM} x {self.BN} x {self.BK} tile at {self.S} stages")
        if self.BM // 16 < self.warps:
            self.fail(f"{self.warps} warps for {self.BM} rows (wgmma: 16 rows a warp)")
        T, D = tuple(st.tile), tuple(st.shape)
        if len(D) < 2 or T[-2:] != (self.BM, self.BN) or any(t != 1 for t in T[:-2]) \
                or (len(D) > 2 and D[-2] % self.BM):
            self.fail(f"a tile {list(T)} of {list(D)} (whole {self.BM} x {self.BN} blocks of a matrix, or of each "
                      f"matrix of leading dims whose rows the tile divides)")
        op, _ = anchor_of(st.op)
        lay = weight_layer(op) if op is not None else None
        if lay is None:
            self.fail("the anchor is not a row operand times a 2-D weight")
        if tuple(tensor_shape(op.results[0].type)) != D:
            self.fail("the anchor's result is not the tile's matrix")
        self.a_src = self.row_source(lay.a)
        for v, what in ((self.a_src, "row operand"), (lay.w, "weight")):
            if not ev.is_direct(v) or v in ev.pop_of or st.args[v] in st.awaited:
                self.fail(f"the {what} is not a tensor read from memory")
            nd = len(tensor_shape((lay.a if v is self.a_src else v).type))  # (a row view: the view's rank)
            if nd != 2 and (v is lay.w or nd != len(D)):
                self.fail(f"a {nd}-D {what}")
        dts = {dtype_key(v.type.get_element_type()) for v in (lay.a, lay.w)}
        if dts not in ({"bf16"}, {"f16"}):
            self.fail(f"operands of type {sorted(dts)} (both bf16 or both f16)")
        self.dt = TL[dts.pop()]
        if (lay.K * 2) % 16 or (not lay.w_nk and (lay.N * 2) % 16):
            self.fail("a row pitch that is not 16-byte aligned")
        return lay

    def row_source(self, a):
        """The tensor the row operand ``a`` reads: ``a``, or the stage argument a reshape of it only regroups
        into rows (its last dim kept, ``kitsune-flatten-rows``: an attention's ``[B, L, H * E]`` read as
        ``[B * L, H * E]``), stored row-major, so that one 2-D descriptor of its rows serves."""
        from kitsune.dialects.graph import GraphOp as GOp

        o = a.owner
        if not isinstance(o, GOp) or o.OPDEF.name != "reshape":
            return a
        src = o.operands[0]
        s_in, s_out = tensor_shape(src.type), tensor_shape(a.type)
        if not s_in or s_in[-1] != s_out[-1] or not self.ev.is_direct(src) or src not in self.st.args:
            return a
        t = self.g.gen.plan.tensors.get(self.st.args[src])
        return src if t is not None and not t.order else a

    def packing(self, lay, covered: int) -> Packing | None:
        """Where W may be uploaded packed: a ``[n, k]`` parameter
        that no other stage reads, not a view, reordered or written, that this stage reads only as its weight, and
        whose K steps the work items cover exactly (``covered``: a step past K would read the next block where
        the row-major form reads TMA's zeros). None where not, or with ``KITSUNE_PACK=0`` (``TritonGen``). The
        runtime packs it at upload (``PACKS``, ``packed``): zero-padded to whole [BN, BK] blocks, block (column
        block c, K step j) as rows ``(c KW + j) BN ..`` of a [-1, BK] matrix."""
        plan, st = self.g.gen.plan, self.st
        name = st.args.get(lay.w)
        t = plan.tensors.get(name) if name else None
        KW = -(-lay.K // self.BK)
        if not (self.g.gen.pack_weights and lay.w_nk and t is not None and t.role == "parameter"
                and covered == KW):
            return None
        if t.order or t.view or any(a == name for _, a in plan.mutates) or name in plan.outputs:
            return None
        if sum(1 for n in st.args.values() if n == name) != 1:
            return None
        if any(name in s.args.values() for k in plan.kernels for s in k.stages if s is not st):
            return None
        return Packing(name, KW, -(-lay.N // self.BN) * KW * self.BN)

    def host_desc(self, name: str, tensor: str, shape, block, dt: str) -> str:
        """``gluon_text.host_descriptor`` of the row-major matrix ``tensor`` (its rows at their pitch where it is
        stored in rows of a wider buffer: ``kitsune.codegen.row_pitch``)."""
        return host_descriptor(self.g, name, tensor, shape, [self.pitch(tensor) or shape[1], 1], block, dt)

    def pitch(self, tensor: str) -> int | None:
        """The row pitch of ``tensor`` where it is stored in rows of a wider buffer, else None."""
        t = self.g.gen.plan.tensors.get(tensor)
        return row_pitch(t) if t is not None else None

    # ---- code
    def prelude(self, lay) -> list[str]:
        """Depth-0 lines of the stage function: layouts, descriptors, the ring and its barriers."""
        st, BM, BK, S, dt = self.st, self.BM, self.BK, self.S, self.dt
        ashape = tensor_shape(lay.a.type)
        M, K = math.prod(ashape[:-1]), ashape[-1]  # (leading dims of the row operand: rows of one matrix)
        wshape = [lay.N, lay.K] if lay.w_nk else [lay.K, lay.N]
        # W's block of the tile's columns; where they are no power of two, two blocks (descriptors, ring buffers)
        wblocks = [("", [n, BK] if lay.w_nk else [BK, n]) for n in (self.BN0, ) if n]
        wblocks += [("1", [n, BK] if lay.w_nk else [BK, n]) for n in (self.BN1, ) if n]
        out = [f"_a_l: gl.constexpr = gl.NVMMASharedLayout.get_default_for([{BM}, {BK}], {dt})"]
        out += [f"_w{x}_l: gl.constexpr = gl.NVMMASharedLayout.get_default_for({wb}, {dt})" for x, wb in wblocks]
        adt = dtype_key(lay.a.type.get_element_type())
        out.append(self.host_desc("_da", st.args[self.a_src], [M, K], [BM, BK], adt))
        if self.pack:  # (``packing``: W's blocks as rows of a [rows, BK] matrix)
            out += [host_descriptor(self.g, f"_dw{x}", self.pack.tensor, [self.pack.rows, BK], [BK, 1], wb, adt)
                    for x, wb in wblocks]
        else:
            out += [self.host_desc(f"_dw{x}", st.args[lay.w], wshape, wb, adt) for x, wb in wblocks]
        out.append(f"_abuf = gl.allocate_shared_memory({dt}, [{S}, {BM}, {BK}], _a_l)")
        out += [f"_wbuf{x} = gl.allocate_shared_memory({dt}, [{S}, {wb[0]}, {wb[1]}], _w{x}_l)" for x, wb in wblocks]
        out.append(f"_ready = gl.allocate_shared_memory(gl.int64, [{S}, 1], mbarrier.MBarrierLayout())")
        if self.form >= 2:
            out.append(f"_empty = gl.allocate_shared_memory(gl.int64, [{S}, 1], mbarrier.MBarrierLayout())")
        out.append(f"for _i in gl.static_range({S}):")
        out.append("    mbarrier.init(_ready.index(_i), count=1)")
        if self.form >= 2:
            out.append("    mbarrier.init(_empty.index(_i), count=1)")
        if self.form == 3:  # consumer c may run its K loop once the other has issued its own (``mainloop``)
            out.append("_turn = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())")
            out.append("for _i in gl.static_range(2):")
            out.append("    mbarrier.init(_turn.index(_i), count=1)")
        return out

    def issue(self, lay, g: str, k: str, cm: str, cn: str, pred: str | None, depth: int, wait_empty: bool) -> None:
        """The TMA of ring step ``g`` (K offset ``k``) of the tile at block coordinates (cm, cn)."""
        em, S = self.b.em, self.S
        p = f", pred={pred}" if pred else ""
        s = self.b.fresh("s")
        em.emit(f"{s} = ({g}) % {S}", depth)
        if wait_empty:  # (empty barriers start in phase 0: a parity-1 wait passes at once on the first round)
            em.emit(f"mbarrier.wait(_empty.index({s}), ((({g}) // {S}) & 1) ^ 1)", depth)
        nbytes = (self.BM + self.BN) * self.BK * 2
        em.emit(f"mbarrier.expect(_ready.index({s}), {nbytes}{p})", depth)
        em.emit(f"tma.async_copy_global_to_shared(_da, [{cm} * {self.BM}, {k}], _ready.index({s}), "
                f"_abuf.index({s}){p})", depth)
        for sfx, off in (("", ""), ("1", f" + {self.BN0}")) if self.BN1 else (("", ""), ):
            if self.pack:  # the block of column block cn at K step k / BK, its part from row ``off`` on
                wc = f"[(({cn}) * {self.pack.k_steps} + ({k}) // {self.BK}) * {self.BN}{off}, 0]"
            else:
                wc = f"[{cn} * {self.BN}{off}, {k}]" if lay.w_nk else f"[{k}, {cn} * {self.BN}{off}]"
            em.emit(f"tma.async_copy_global_to_shared(_dw{sfx}, {wc}, _ready.index({s}), _wbuf{sfx}.index({s}){p})",
                    depth)

    def store_tma(self, buf: str, tv: TV, rows: str, cols: str, cm: str, cn: str, off: int = 0,
                  width: int | None = None) -> bool:
        """Store the tile's result ``tv`` (its columns ``off`` .. ``off + width`` of the tile: a part, where the
        tile's width is no power of two) into the row-major matrix ``buf`` by TMA from a shared-memory buffer of
        at most 128 columns (a 256-column tile in two halves; a second part from a buffer of its own, or from the
        A ring's slots after the first part's), asynchronously: the copy runs during the next tile's K loop and is
        waited for only before the buffer is written again. False where it does not apply (the caller stores from registers): a value that
        does not vary along both tile axes, an output whose row pitch is not 16-byte aligned."""
        b, em = self.b, self.b.em
        width = width or self.BN
        t = self.g.gen.plan.tensors[buf]
        if t.dtype not in ("bf16", "f16", "f32") or len(t.shape) < 2 \
                or ((self.pitch(buf) or t.shape[-1]) * ELEM_BYTES[t.dtype]) % 16 \
                or tv.frame != (rows, cols) or tv.const is not None:
            return False
        flat = [math.prod(t.shape[:-1]), t.shape[-1]]  # (leading dims: the rows of one matrix after another)
        half, odt, eb = min(width, 128), TL[t.dtype], ELEM_BYTES[t.dtype]
        n = self.cbase.get(buf)
        if n is None:  # the output's buffer: its first part's width
            n = len(self.cbase)
            place = self.result_buffer(eb, n)
            if place is None:
                return False
            self.cbase[buf] = n
            self.cplace[buf] = place
            self.cprelude += [
                f"_c{n}_l: gl.constexpr = gl.NVMMASharedLayout.get_default_for([{self.BM}, {half}], {odt})",
                f"_cbuf{n} = " + (f"gl.allocate_shared_memory({odt}, [{self.BM}, {half}], _c{n}_l)" if place == "own"
                                  else f"_abuf._reinterpret({odt}, [{self.BM}, {half}], _c{n}_l)  # {place}")]
            if self.form == 3:  # (the second consumer's: ``generate`` passes it in the first's place)
                self.cprelude.append(f"_cbuf{n}{SECOND} = gl.allocate_shared_memory({odt}, [{self.BM}, {half}], "
                                     f"_c{n}_l)")
            view, lay, desc, pend = f"_cbuf{n}", f"_c{n}_l", f"_dc{n}", 0
        else:  # a later part: a buffer of its own, or the A ring's slots after the first part's
            view, lay, desc = f"_cbuf{n}p{off}", f"_c{n}p{off}_l", f"_dc{n}p{off}"
            slot = self.BM * self.BK * 2
            pend = 1
            if self.cplace[buf] == "own":
                where = f"gl.allocate_shared_memory({odt}, [{self.BM}, {half}], {lay})"
            elif (self.BM * off * eb) % slot == 0 and self.BM * (off + width) * eb <= self.S * slot:
                where = f"_abuf.index({self.BM * off * eb // slot})._reinterpret({odt}, [{self.BM}, {half}], {lay})"
            else:  # (no slot boundary after the first part: the same buffer, once its store has read it)
                where, pend = f"_cbuf{n}._reinterpret({odt}, [{self.BM}, {half}], {lay})", 0
            self.cprelude += [
                f"{lay}: gl.constexpr = gl.NVMMASharedLayout.get_default_for([{self.BM}, {half}], {odt})",
                f"{view} = {where}"]
        self.cbufs.append((view, desc, buf))
        self.cprelude.append(self.host_desc(desc, buf, flat, [self.BM, half], t.dtype))
        h = b.fresh("h")
        em.emit(f"{h} = ({tv.code}).to({odt})", 1)
        parts = [h]
        if half != width:
            parts = [f"{h}0", f"{h}1"]
            em.emit(f"{h}0, {h}1 = gl.split(gl.permute(gl.reshape({h}, [{self.BM}, 2, {half}]), [0, 2, 1]))", 1)
        for j, x in enumerate(parts):
            # the copy before has read the buffer (its issuing thread waits; the barrier tells the others); a second
            # part in a buffer of its own lets the first part's store run on (the one store issued since)
            em.emit(f"tma.store_wait(pendings={pend})", 1)
            em.emit("gl.thread_barrier()", 1)
            em.emit(f"{view}.store({x})", 1)
            em.emit("fence_async_shared()", 1)
            em.emit("gl.thread_barrier()  # every thread's part of the tile is in shared memory", 1)
            em.emit(f"tma.async_copy_shared_to_global({desc}, [{cm} * {self.BM}, {cn} * {self.BN} + "
                    f"{off + j * half}], {view})", 1)
        return True

    def result_buffer(self, out_bytes: int, n: int) -> str | None:
        """Where the ``n``-th result's tile waits for its TMA store: ``"own"`` (a buffer of its own, where it fits
        beside the ring: ``GemmConfig.gluon_result_buffer``), the ring's first A slots (the first result, where every
        program has one tile: after its K loop no load is in flight and every wgmma has retired; the store is
        waited for before the kernel ends), or None: stored from registers. Own buffers of several results must
        fit beside the ring together (Llama prefill's down projection stores three results: 256 KB of shared
        memory against the H100's 227 KB, which the kernel then failed to launch with)."""
        cfg = GemmConfig(BM=self.BM, BN=self.BN, BK=self.BK, stages=self.S, GLUON=self.form)
        need = cfg.gluon_result_buffer(out_bytes, taken=self.cown)
        if need:
            self.cown += need
            return "own"
        a_ring = self.S * self.BM * self.BK * 2
        if n == 0 and self.form != 3 and self.st.work_items <= self.st.programs \
                and a_ring >= self.BM * min(self.BN0, 128) * out_bytes:
            return "the ring's first A slots: one tile a program, its K loop done before the store"
        return None

    def coords(self, tix_coords: dict, d: int) -> str:
        return tix_coords.get(d, "0")

    def block_coords(self, tix_coords: dict, D) -> tuple[str, str]:
        """(row block, column block) of the tile in the matrix ``D`` is viewed as: its leading dims' matrices one
        after another (each ``D[-2] // BM`` row blocks: ``check`` requires the tile to divide their rows)."""
        nd = len(D)
        cm = self.coords(tix_coords, nd - 2)
        if nd > 2:
            lead = "0"
            for d in range(nd - 2):
                c = self.coords(tix_coords, d)
                lead = c if lead == "0" else f"({lead}) * {D[d]} + {c}"
            if lead != "0":
                cm = f"(({lead}) * {D[-2] // self.BM} + {cm})"
        return cm, self.coords(tix_coords, nd - 1)

    def combine(self, accs: list[str], cm: str, cn: str, D):
        """The ``split`` work items of a tile meet in the stage's fp32 workspace. Each counts itself in on the
        tile's arrival counter first; the ``split - 1`` that arrive before the last store their accumulators into
        the slice their arrival number names, fence, and count themselves in on the tile's second counter; the
        last stores nothing: it waits on that counter for the others' slices (their programs have arrived, so they
        run: the wait cannot hang), adds them into its own accumulators and goes on with the epilogue, inside the
        returned block, which the caller leaves. Only ``split - 1`` slices are written, while the last may still
        run its K loop (``kspan``). Both counters only grow: the arrivals' round (``arrived // split``) names the
        value the second reaches in it. (On T256's fc1 neither this nor a longer last part shortened the split's
        tail, ~9 us: bench/kernels/NOTES.md section 35.)"""
        em, S = self.b.em, self.split
        M, N = math.prod(D[:-1]), D[-1]  # (the leading dims' matrices one after another)
        numel, ws = M * N, self.st.workspace
        arrive, publish = self.st.split_base, self.st.split_base + self.st.ntiles
        tid = self.g.tile.tid
        em.emit(f"arrived = tl.atomic_add(ctr + {arrive} + {tid}, 1, sem=\"acq_rel\", scope=\"gpu\")", 1)
        saved = em.open(f"if arrived % {S} != {S - 1}:  # not the last of the tile's {S} parts: publish a slice", 1)
        for acc, (o, m) in zip(accs, self.slice_offsets(cm, cn, M, N, 2)):
            em.emit(f"tl.store({ws} + (arrived % {S}) * {numel} + {o}, {acc}, mask={m})", 2)
        em.emit("_fence_gpu()  # this thread's partial sums are performed before the tile's second counter moves", 2)
        em.emit("gl.thread_barrier()", 2)
        em.emit(f"tl.atomic_add(ctr + {publish} + {tid}, 1, sem=\"release\", scope=\"gpu\")", 2)
        em.close(1, saved)
        outer = em.enter(f"if arrived % {S} == {S - 1}:  # the last of the tile's {S} parts", 1)
        em.emit(f"_await_count_gl(ctr + {publish} + {tid}, (arrived // {S} + 1) * {S - 1})  # the others' slices", 1)
        em.emit("_fence_gpu()", 1)
        for acc, (o, m) in zip(accs, self.slice_offsets(cm, cn, M, N, 1)):
            for k in range(S - 1):
                em.emit(f"{acc} = {acc} + tl.load({ws} + {k * numel} + {o}, mask={m}, other=0.0, "
                        f"cache_modifier=\".cg\")", 1)
        return outer

    def slice_offsets(self, cm: str, cn: str, M: int, N: int, depth: int) -> list[tuple[str, str]]:
        """Per column part of the tile (block coordinates ``cm``, ``cn``): the names of its accumulator's offsets in
        a row-major [M, N] slice and of their mask, defined at ``depth`` in the part's wgmma layout."""
        b, out = self.b, []
        for j, (off, width) in enumerate(self.parts()):
            ml, o, m = f"_mma{j or ''}", b.fresh("o"), b.fresh("m")
            b.em.emit(f"{o}r = {cm} * {self.BM} + gl.arange(0, {self.BM}, layout=gl.SliceLayout(1, {ml}))", depth)
            b.em.emit(f"{o}c = {cn} * {self.BN} + {off} + gl.arange(0, {width}, layout=gl.SliceLayout(0, {ml}))",
                      depth)
            b.em.emit(f"{o} = {o}r[:, None] * {N} + {o}c[None, :]", depth)
            b.em.emit(f"{m} = ({o}r[:, None] < {M}) & ({o}c[None, :] < {N})", depth)
            out.append((o, m))
        return out

    def kspan(self, KT: int) -> tuple[int, int]:
        """(K steps of each part but the last, K steps of the last) of a split tile's ``KT``. Where every program
        has one work item, the last part takes ``SKEW`` steps more than an even share, so the others' slices are
        stored while it still runs its K loop; else all take ``ceil(KT / split)`` (the ring's step count of a
        program's earlier items is then ``it`` times it), past K zeros (TMA's fill)."""
        S = self.split
        skew = self.skew if self.st.work_items <= self.st.programs else 0
        if not skew:
            return -(-KT // S), -(-KT // S)
        each = max(1, (KT - skew) // S)
        return each, KT - (S - 1) * each

    def parts(self) -> list[tuple[int, int]]:
        """(column offset, width) of the tile's parts: the whole tile, or a power-of-two part and the rest."""
        return [(0, self.BN0), (self.BN0, self.BN1)] if self.BN1 else [(0, self.BN)]

    def part_index(self, tix, D, cn: str, off: int, width: int):
        """(the column axis, the tile index) of the part of the tile's columns from ``off`` on, ``width`` wide: the
        tile's rows, columns ``cn * BN + off + (0 .. width)``."""
        b = self.b
        ax = b.new_axis("o", width)
        G = -(-D[-1] // self.BN)
        base = lscale(b.sym(cn, 0, G - 1, 1), self.BN) if G > 1 else lconst(0)
        return ax, tuple(tix.idx[:-1]) + (ladd(base, lconst(off), b.axis(ax, width - 1)), )

    def mainloop(self, lay, KT: int | str, cm: str, cn: str) -> list[str]:
        """The tile's K loop (depth 1 onwards) of ``KT`` steps (a count, or the name of a work item's count);
        returns the accumulators' names (one per column part)."""
        b, em, S = self.b, self.b.em, self.S
        accs = [b.fresh("acc") for _ in range(2 if self.BN1 else 1)]
        g0 = b.fresh("g")
        em.emit(f"{g0} = it * {KT}  # ring steps of this program's earlier tiles", 1)
        if self.form == 1:
            for i in range(S - 1):
                self.issue(lay, f"{g0} + {i}", f"{self.kofs}{i * self.BK}", cm, cn, f"{i} < {KT}", 1, False)
        for j, (acc, n) in enumerate(zip(accs, (self.BN0, self.BN1))):
            em.emit(f"{acc} = gl.zeros([{self.BM}, {n}], gl.float32, layout=_mma{j or ''})", 1)
        if self.form == 3:  # this consumer's turn: the other has issued its K loop (consumer 0 goes first)
            em.emit("mbarrier.wait(_turn.index(CONSUMER), ((it // 2) & 1) ^ (1 - CONSUMER))", 1)
        saved = em.open(f"for kt in range(0, {KT}):", 1)
        gv, s = b.fresh("g"), b.fresh("s")
        em.emit(f"{gv} = {g0} + kt", 2)
        em.emit(f"{s} = {gv} % {S}", 2)
        em.emit(f"mbarrier.wait(_ready.index({s}), ({gv} // {S}) & 1)", 2)
        for j, acc in enumerate(accs):
            wop = f"_wbuf{j or ''}.index({s})" + (".permute((1, 0))" if lay.w_nk else "")
            em.emit(f"{acc} = warpgroup_mma(_abuf.index({s}), {wop}, {acc}, use_acc=kt > 0, is_async=True)", 2)
        deps = ", ".join(accs)
        em.emit(f"{deps} = warpgroup_mma_wait(num_outstanding={len(accs)}, deps=({deps}, ))", 2)
        # the wgmma of step kt - 1 has retired in this warpgroup; after the barrier in every one: its slot is free
        if self.form == 1:
            if self.warps > 4:
                em.emit("gl.thread_barrier()", 2)
            self.issue(lay, f"{gv} + {S - 1}", f"{self.kofs}(kt + {S - 1}) * {self.BK}", cm, cn, f"kt + {S - 1} < {KT}",
                       2, False)
        else:
            em.emit("gl.thread_barrier()", 2)
            em.emit(f"mbarrier.arrive(_empty.index(({gv} + {S - 1}) % {S}), pred=kt > 0)", 2)
        em.close(1, saved)
        if self.form == 3:  # the other consumer's K loop may start: its epilogue runs under it
            em.emit("mbarrier.arrive(_turn.index(1 - CONSUMER))", 1)
        em.emit(f"{deps} = warpgroup_mma_wait(num_outstanding=0, deps=({deps}, ))", 1)
        if self.form >= 2:
            em.emit("gl.thread_barrier()", 1)
            last = KT - 1 if isinstance(KT, int) else f"{KT} - 1"
            em.emit(f"mbarrier.arrive(_empty.index(({g0} + {last}) % {S}))", 1)
        return accs

    def loader(self, lay, KT: int | str) -> list[str]:
        """The loader partition's body: the same work items and tile order as the default partition."""
        st = self.st
        saved_b = self.b
        b = Blocks()
        self.b = b
        try:
            saved = work_item_loop(b.em, st, self.split if self.split > 1 else None, parts_major=True)
            if self.kn:
                b.em.emit(self.kn, 1)
            ix = TileIndexer(st, b)
            ix.index(tuple(st.tile), tuple(st.shape))
            cm, cn = self.block_coords(ix.coords, tuple(st.shape))
            g0 = b.fresh("g")
            b.em.emit(f"{g0} = it * {KT}", 1)
            sv = b.em.open(f"for kt in range(0, {KT}):", 1)
            self.issue(lay, f"{g0} + kt", f"{self.kofs}kt * {self.BK}", cm, cn, None, 2, True)
            b.em.close(1, sv)
            b.em.close(0, saved)
            return b.em.root.lines(1)
        finally:
            self.b = saved_b

    def generate(self) -> tuple[list[str], list[tuple[str, str, list[str]]], list[str]]:
        """(the stage function's body, extra Gluon functions (name, parameters after ``pid``, body), the tensors
        read by TMA). The stage function's and the default partition's parameter lists contain
        ``PARAMS_MARK``."""
        g, b, ev, st = self.g, self.b, self.ev, self.st
        lay = self.check()
        KT = -(-lay.K // self.BK)
        covered = KT
        if self.split > 1:  # part ks runs K steps [ks KT, ks KT + KT) (past K: zeros, TMA's fill)
            each, last = self.kspan(KT)
            covered = (self.split - 1) * each + last
            self.kofs = f"ks * {each * self.BK} + "
            KT = each
            if last != each:  # (one work item a program: ``it`` is 0, the ring's step count starts at 0)
                self.kn = f"kn = tl.where(ks == {self.split - 1}, {last}, {each})  # this part's K steps"
                KT = "kn"
        self.pack = self.packing(lay, covered)
        T, D = tuple(st.tile), tuple(st.shape)
        b.em.floor = 0
        body = g.open_work_items(self.split if self.split > 1 else None, "part of K", parts_major=True,
                                 consumers=2 if self.form == 3 else 1)
        if self.kn:
            b.em.emit(self.kn, 1)
        tix = g.tile_index(T, D)
        g.tile.axes, g.tile.idx, g.tile.local = tix.axes, tuple(tix.idx), tix.local
        b.em.floor = 1  # nothing of a tile (bias) is hoisted above the work-item loop: registers
        cm, cn = self.block_coords(g.tiles.coords, D)
        nd = len(D)
        rows, cols = tix.axes.get(nd - 2), tix.axes.get(nd - 1)
        if rows is None or cols is None:
            self.fail("a tile without a row and a column axis")
        accs = self.mainloop(lay, KT, cm, cn)
        em = b.em
        outer = self.combine(accs, cm, cn, D) if self.split > 1 else None
        for v, buf, _ in st.stores:
            if tuple(st.store_tiles.get(buf, T)) != T or tuple(tensor_shape(v.type)) != D:
                self.fail("a result of another shape than the tile's matrix")
        # the epilogue: the evaluator around each accumulator, seeded as the anchor reduction's value at its part
        # of the tile (a section each: the parts' layouts differ, so no value of one reaches the other)
        for acc, (off, width) in zip(accs, self.parts()):
            saved = dict(b.memo)
            em.emit(AXES_MARK, 1)
            pcols = cols
            if len(accs) > 1:
                pcols, ix = self.part_index(tix, D, cn, off, width)
                g.tile.axes, g.tile.idx = {nd - 2: rows, nd - 1: pcols}, ix
                g.tile.local = tuple(tix.local[:-1]) + (b.axis(pcols, width - 1), )
            key = ("t", id(lay.op), lay.red, tuple(x.key() for x in g.tile.idx))
            b.memo[key] = TV(acc, (rows, pcols), 1, "f")
            for v, buf, _ in st.stores:
                ix = g.tile.idx
                tv = ev.result_at(v, ix)
                if not self.store_tma(buf, tv, rows, pcols, cm, cn, off, width):
                    g.store(buf, tv, ix, whole=False)
            b.memo = saved
        if outer is not None:
            em.leave(1, outer)
        g.close_work_items(body)
        if self.cbufs:
            em.emit("tma.store_wait(pendings=0)  # the last tile's results have left shared memory", 0)
        lines = b.em.root.lines(1)
        if any("_dot_lp(" in ln or "tl.dot(" in ln for ln in lines):
            self.fail("the epilogue reads the product at another index than the tile's")
        mma = [f"    _mma{j or ''}: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], "
               f"warps_per_cta=[{self.warps}, 1], instr_shape=[16, {n}, 16])"
               for j, n in enumerate((self.BN0, self.BN1)) if n]
        pre = ["    " + ln for ln in self.prelude(lay) + self.cprelude]
        head = g.body_text()[:1]
        names = [st.args[self.a_src], st.args[lay.w]]
        if self.pack:  # (committed by the module once the Gluon text is made: ``TritonGen._gluon_stage``)
            g.packs[self.pack.tensor] = (self.BN, self.BK)
        if self.form == 1:
            return head + pre + mma + lines, [], names
        ring = "_da, _dw, _abuf, _wbuf, _ready, _empty" + (", _dw1, _wbuf1" if self.BN1 else "")
        outs = "".join(f", {c}, {d}" for c, d, _ in self.cbufs)
        mma_fn, load_fn = f"{self.fn}_mma", f"{self.fn}_load"
        if self.form == 3:  # two consumers of one function, the second with its own result buffers
            outs1 = "".join(f", {c}{SECOND}, {d}" for c, d, _ in self.cbufs)
            args = f"pid, {PARAMS_MARK}, ctr, err, epoch, {ring}, _turn"
            call = [f"    gl.warp_specialize([({mma_fn}, ({args}{outs}, WATCHDOG, 0)),",
                    f"                        ({mma_fn}, ({args}{outs1}, WATCHDOG, 1)),",
                    f"                        ({load_fn}, (pid, {ring}))], [4, 1], [{CONSUMER_REGS}, {LOADER_REGS}])"]
            extra = [(mma_fn, f"{PARAMS_MARK}, ctr, err, epoch, {ring}, _turn{outs}, WATCHDOG: tl.constexpr, "
                              "CONSUMER: tl.constexpr", mma + lines),
                     (load_fn, ring, self.loader(lay, KT))]
            return head + pre + call, extra, names
        call = [f"    gl.warp_specialize([({mma_fn}, (pid, {PARAMS_MARK}, ctr, err, epoch, {ring}{outs}, WATCHDOG)),",
                f"                        ({load_fn}, (pid, {ring}))], [1], [{LOADER_REGS}])"]
        extra = [(mma_fn, f"{PARAMS_MARK}, ctr, err, epoch, {ring}{outs}, WATCHDOG: tl.constexpr", mma + lines),
                 (load_fn, ring, self.loader(lay, KT))]
        return head + pre + call, extra, names


def generate_gemm_tma(g: "StageGen"):
    """(the Gluon stage function body, extra Gluon functions, tensors read by TMA); see ``GemmTmaGen.generate``."""
    return GemmTmaGen(g).generate()


__all__ = ["generate_gemm_tma", "GemmTmaGen", "PARAMS_MARK"]
