"""The kernel shell of one stage: its ``@triton.jit`` function body.

A stage function runs this program's work items (``for it``): for each, the output tile ``t`` (and the part
``ks`` of a split reduction), the tile's index (``TileIndexer``), the waits for popped queue tiles, the values
to store or push (asked of the ``Evaluator`` at the tile's index), the stores and pushes, and the release of
the popped tiles. The function's first lines are the ``tl.arange`` of every axis the body used.

Hook surface for templates that drive the stage function themselves (``templates.scatter``,
``templates.decode_attention``):
``open_work_items``, ``tile_index``, ``body_text``, and the attributes ``b`` (``Blocks``: names, axes, frames,
masks, index rendering, the ``Emitter`` ``b.em``), ``ev`` (``Evaluator``), ``mem`` (``Memory``), ``tile``
(``OutputTile``), ``gen`` (the module generator), ``stage`` and ``cfg``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kitsune.codegen.plan import ELEM_BYTES, Kernel, Stage, ident
from kitsune.codegen.triton_gen.blocks import Blocks
from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.evaluator import Evaluator
from kitsune.codegen.triton_gen.index_algebra import ladd, lconst, loffset, strides
from kitsune.codegen.triton_gen.loop_fusion import FUSE_SIBLING_LOOPS, FUSED_RING_BYTES, fuse_sibling_dot_loops
from kitsune.codegen.triton_gen.memory import Memory
from kitsune.codegen.triton_gen.queues import QueueTraffic
from kitsune.codegen.triton_gen.syntax import pow2
from kitsune.codegen.triton_gen.templates.chain import generate_chain
from kitsune.codegen.triton_gen.templates.decode_attention import generate_decode_attention
from kitsune.codegen.triton_gen.templates.depthwise import generate_depthwise
from kitsune.codegen.triton_gen.templates.flash_attention import clamp_query_rows
from kitsune.codegen.triton_gen.templates.scatter import generate_scatter, scatter_store
from kitsune.codegen.triton_gen.templates.split_k import SplitK
from kitsune.codegen.triton_gen.tiling import OutputTile, TileIndex, TileIndexer
from kitsune.dialects.regions import tensor_shape

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.module import TritonGen


def anchor_statement(stage: Stage):
    """(id(op), statement) of the reduction a gemm / gemv / conv stage's own loop computes (its config's BK and
    split apply to it), or None. (A conv stage's BK applies since session 37: before, its loop took 64 whatever
    the config said.)"""
    if stage.template not in ("gemm", "gemv", "conv"):
        return None
    from kitsune.schedule.roles import roles_of
    from kitsune.schedule.select import anchor_of

    op, _ = anchor_of(stage.op)
    if op is not None and op.OPDEF.category != "contraction" and stage.split == 1:
        from kitsune.schedule.select import sole_contraction

        op = sole_contraction(stage.op)  # a gemv read through slices: its contraction's loop
    r = roles_of(op) if op is not None else None
    return (id(op), r.stmt) if r is not None else None


def work_item_loop(em, st: Stage, parts: int | None = None, ks_note: str = "", parts_major: bool = False,
                   consumers: int = 1):
    """Open program ``pid``'s loop over the work items of stage ``st`` in ``em`` (``StageGen.open_work_items``;
    a warp-specialised Gluon kernel's loader partition walks the same items). With ``parts``, work item ``w`` is
    part ``w % parts`` of tile ``w // parts``, or (``parts_major``) part ``w // tiles`` of tile ``w % tiles``.
    ``consumers`` > 1: the loop of one of that many partitions taking the program's items in turn, the one
    named by the constexpr ``CONSUMER`` (a ping-pong Gluon gemm). Returns what ``em.close(0, ...)`` takes."""
    items, nprog = st.work_items, st.programs
    first, step = ("CONSUMER", f", {consumers}") if consumers > 1 else ("0", "")
    saved = em.open(f"for it in range({first}, {-(-items // nprog)}{step}):", 0)
    if parts is not None:
        # work item w = (tile t, part ks of its reduction)
        em.emit(f"w = pid - {st.lo} + it * {nprog}", 1)
        note = f"  # {ks_note}" if ks_note else ""
        if parts_major:
            em.emit(f"t = w % {items // parts}", 1)
            em.emit(f"ks = w // {items // parts}" + note, 1)
        else:
            em.emit(f"t = w // {parts}", 1)
            em.emit(f"ks = w % {parts}" + note, 1)
        guard = "w"
    else:
        em.emit(f"t = pid - {st.lo} + it * {nprog}", 1)
        guard = "t"
    if items % nprog:
        em.enter(f"if {guard} < {items}:", 1)  # depth 1 = inside the if
    return saved


WIDE_ROW = 64
"""A stored row at least this long (or of whole 16-byte vectors) gets a masked (not clamped) lane axis when padded
(``contiguous_store_dims``)."""


class StageGen:
    def __init__(self, gen: "TritonGen", kernel: Kernel, stage: Stage):
        self.gen = gen
        self.kernel = kernel
        self.stage = stage
        self.template = stage.template
        self.cfg = stage.config
        self.packs: dict[str, tuple[int, int]] = {}  # weights the stage reads packed (TritonGen.packs, once taken)
        self.b = Blocks()
        self.mem = Memory(self.b)
        self.tile = OutputTile()
        self.tiles = TileIndexer(stage, self.b, self.contiguous_store_dims(gen, stage))
        self.split_k = SplitK(stage, self.b, self.mem, self.tile)
        self.ev = Evaluator(gen, stage, self.b, self.mem, self.tile, self.split_k, anchor_statement(stage),
                            threads=32 * kernel.warps)
        self.queues = QueueTraffic(stage, self.b, self.mem, self.tile)

    @property
    def extra_tensors(self) -> set[str]:
        """Non-splat constants the stage reads (parameters of its kernel)."""
        return self.ev.extra_tensors

    def fn_name(self) -> str:
        return ident(f"{self.kernel.name}_{self.stage.name}")

    # ---- hooks
    def open_work_items(self, parts: int | None, ks_note: str = "", parts_major: bool = False, consumers: int = 1):
        """Open this program's loop over its work items (``for it``, depth 0) and, at depth 1, the tile: ``t``,
        and with ``parts`` the work item ``w = (tile t, part ks)`` of a split into ``parts`` (``ks_note``: a
        comment on ``ks``). A grid that does not divide the work items guards the tile with an ``if``, which
        then is depth 1. Returns what ``b.em.close(0, ...)`` takes once the tile's code is emitted."""
        self.await_producers()
        return work_item_loop(self.b.em, self.stage, parts, ks_note, parts_major, consumers)

    def close_work_items(self, saved) -> None:
        """Close the loop ``open_work_items`` opened; a temporal producer's program then counts itself done."""
        self.b.em.close(0, saved)
        st = self.stage
        if st.done is not None:
            self.b.em.emit(f"_stage_done(ctr, {st.done})  # this program of \"{st.name}\" has finished", 0)

    def await_producers(self) -> None:
        """A temporal consumer: before its first work item, wait until every program of each earlier stage whose
        results it reads has finished (one vector of counters, one spin). Code hoisted out of the work-item
        loop goes after this wait (``Emitter``: depth-0 lines land before the open loop, after this line)."""
        st = self.stage
        if not st.waits:
            return
        k = len(st.waits)
        code = self.gen.wait_code(self.kernel, st.name, [name for _, _, name in st.waits])

        def pick(vals):
            expr = str(vals[-1])
            for i in range(k - 2, -1, -1):
                expr = f"tl.where(_wk == {i}, {vals[i]}, {expr})"
            return expr

        em = self.b.em
        who = ", ".join(f'"{name}"' for _, _, name in st.waits)
        em.emit(f"# temporal dependence: wait for every program of {who}", 0)
        em.emit(f"_wk = tl.arange(0, {pow2(k)})", 0)
        em.emit(f"_await_stages(ctr + (_wk * 0 + {pick([c for c, _, _ in st.waits])}), (epoch + 1) * "
                f"(_wk * 0 + {pick([n for _, n, _ in st.waits])}), _wk < {k}, err, cbase + {code}, WATCHDOG)", 0)

    def tile_index(self, T, D) -> TileIndex:
        """The index of tile ``t`` of tiles ``T`` over shape ``D`` (emits its coordinates; see ``TileIndexer``)."""
        return self.tiles.index(T, D)

    def body_text(self) -> list[str]:
        """The stage function's body (its def line comes from TritonGen, which knows the parameters)."""
        st = self.stage
        kind = st.op.attributes.get("kind")
        lines = [f"    # stage \"{st.name}\" ({kind.data if kind else ''}): programs [{st.lo}, {st.hi}), tile "
                 f"{list(st.tile)} of {list(st.shape)}, {st.ntiles} tiles"]
        lines += self.b.axis_lines()
        lines += self.b.em.root.lines(1)
        return lines

    # ---- the stage function
    def generate(self) -> list[str]:
        st = self.stage
        if self.template == "scatter" and self.gen.plan.splits:
            return generate_scatter(self)
        if self.template == "decode_attention":
            return generate_decode_attention(self)
        if self.template == "chain":
            return generate_chain(self)
        if self.template == "depthwise":
            got = generate_depthwise(self)  # (None: not of the template's shape; the evaluator runs the tile)
            if got is not None:
                return got
        T = st.tile
        D = st.shape
        body_saved = self.open_work_items(st.split if st.split > 1 else None)
        out = self.tile_index(T, D)
        if self.template == "attention":  # (a last tile of query rows past the queries repeats the last one)
            out = clamp_query_rows(self, out)
        self.tile.axes = out.axes
        self.tile.idx = tuple(out.idx)
        self.tile.local = out.local
        if self.template == "gemm" and len(D) >= 2:
            self.skip_row_remasks(out.idx, D)
        self.queues.wait_popped()
        # values to store / push
        ev = self.ev
        results = [("whole" if whole else "store", v, buf) for v, buf, whole in st.stores]
        results += [("push", v, q) for v, q in st.pushes]
        evaluated = []
        for kind, v, target in results:
            if kind == "whole":
                shape = tensor_shape(v.type)
                widx = []
                for d, n in enumerate(shape):
                    if n > 1:
                        a = self.b.new_axis("w", pow2(n))
                        widx.append(self.b.axis(a, pow2(n) - 1))
                    else:
                        widx.append(lconst(0))
                tv = ev.result_at(v, tuple(widx))
                evaluated.append((kind, v, target, tv, tuple(widx)))
            else:
                ix = self.tile.idx
                if kind == "store" and target in st.store_scatters:  # every tile adds its rows, atomically
                    scatter_store(self, v, target, ix)
                    continue
                if kind == "store" and target in st.store_offsets:  # a slice of the domain: the tile, shifted
                    ix = tuple(ladd(x, lconst(-o)) for x, o in zip(ix, st.store_offsets[target]))
                elif kind == "store" and (tuple(st.store_tiles.get(target, T)) != tuple(T)
                                        or tuple(tensor_shape(v.type)) != tuple(D)):  # same tile, other shape
                    ix = self.tile_index(st.store_tiles[target], tensor_shape(v.type)).idx
                tv = ev.result_at(v, ix)
                evaluated.append((kind, v, target, tv, ix))
        for kind, v, target, tv, ix in evaluated:
            if kind == "push":
                self.queues.push(target, tv)
            else:
                self.store(target, tv, ix, whole=(kind == "whole"))
        self.split_k.leave()  # every part of a split frees its popped tiles, not only the last
        self.queues.free_popped()
        self.close_work_items(body_saved)
        cfg = self.ev.cfg
        if FUSE_SIBLING_LOOPS and self.template == "gemv" and cfg.get("DOT") and not cfg.get("SWAP"):
            # a tensor-core gemv's accumulators are [16, BN]: two fit where one did; the fused loop's weight
            # chunks must fit the shared-memory ring (the weight-first form's do not: on the H100 its three
            # configs tried, 278-557 KB)
            return fuse_sibling_dot_loops(self.body_text(), self.fusable_loops(cfg))
        if FUSE_SIBLING_LOOPS and self.template == "gemm" and not cfg.get("GLUON"):
            from kitsune.schedule.select import result_slices

            slices = result_slices(self.stage.op)
            if slices > 1:
                # a sliced gemm's K loops, one a slice of the contraction the result reads (``select.
                # sliced_contraction``), in one: its config was chosen with an accumulator and a weight chunk in
                # the ring a slice (``Problem.slices``, ``GemmConfig.resources``); another gemm's loops, which
                # its config did not size for that, stay apart
                return fuse_sibling_dot_loops(self.body_text(), max_loops=slices)
        return self.body_text()

    def fusable_loops(self, cfg: dict) -> int:
        """How many K loops of a tensor-core gemv stage one loop may carry: each brings a [BN, BK] weight chunk to
        every buffer of Triton's ring (``GemvConfig.ring_buffers``), beside the [16, BK] input chunk they share,
        within ``FUSED_RING_BYTES``."""
        from kitsune.schedule.configs import GemvConfig

        g = GemvConfig.from_dict(cfg)
        names = set(self.stage.args.values())
        eb = max((ELEM_BYTES[t.dtype] for n in names if (t := self.gen.plan.tensors.get(n)) is not None
                  and t.role == "parameter"), default=4)
        per_loop, shared = (rows * g.BK * eb * g.ring_buffers() for rows in (g.BN, 16))
        return max(1, (FUSED_RING_BYTES - shared) // max(1, per_loop))

    def skip_row_remasks(self, idx, D) -> None:
        """Where no op of the stage combines rows (``rows_stay_apart``), computed values are not re-masked by the
        tile's own row bounds (the checks of ``idx``'s leading dims against ``D``'s): the evaluator's
        ``row_checks``."""
        if rows_stay_apart(self.stage):
            self.ev.row_checks = frozenset((x.key(), o, c) for x, o, c in self.b.conds(tuple(idx)[:-1], D[:-1]))

    @staticmethod
    def contiguous_store_dims(gen, stage: Stage) -> frozenset:
        """The dims innermost in memory of the results the stage stores tile by tile: of a result stored in
        another order (a channels-last conv result: its channels), else its last dim (a ``conv`` stage's output
        row: ResNet-18's 56-wide rows in 64 lanes were stored 2 bytes at a time behind ``tl.minimum``)."""
        out = set()
        for _, buf, whole in stage.stores:
            t = gen.plan.tensors[buf]
            if whole or len(t.shape) != len(stage.shape) or not t.shape:
                continue
            if t.order:
                out.add(t.order[-1])
            elif stage.template == "conv" or t.shape[-1] >= WIDE_ROW or t.shape[-1] >= 16 and t.shape[-1] % 8 == 0:
                # row-major: its last dim, where rows are wide enough to move in 16-byte vectors (a LayerNorm's
                # 768-wide rows padded to 1024 lanes were loaded and stored 2 bytes at a time behind tl.minimum),
                # or whole 16-byte vectors (ConvNeXt's channel LayerNorm over 56-pixel rows in 64 lanes: 123 us
                # on the H100 for 9.6 MB clamped)
                out.add(len(t.shape) - 1)
        from kitsune.schedule.select import transposed_read_dim

        d = transposed_read_dim(stage.op.body.blocks.first, stage.shape) if stage.stores else None
        if d is not None:  # an input read along dim d (``select.transposed_tile``): its loads run along d, and
            out.add(d)  # its rows of whole 8-byte vectors load and store masked (ConvNeXt's 28-wide rows)
            if stage.shape[-1] % 4 == 0 and stage.shape[-1] >= 8:
                out.add(len(stage.shape) - 1)
        return frozenset(out)

    def store(self, buf: str, tv: TV, ix, whole: bool) -> None:
        """Store ``tv`` at index ``ix`` of the global buffer ``buf`` (``whole``: by the program of tile 0)."""
        t = self.gen.plan.tensors[buf]
        off = loffset(ix, t.strides())
        # a whole result is written by the program of tile 0 only
        self.mem.store(buf, off, tv, self.b.mask(self.b.conds(ix, t.shape)), t.dtype, lane=not whole,
                       extra="(t == 0)" if whole else None)


def rows_stay_apart(stage: Stage) -> bool:
    """Nothing in the stage combines values of different rows of its result: every op is elementwise, a
    constant, the contraction, a gather of whole rows, a slice, a last-dim concatenation, a norm / softmax /
    reduction over the last dim only, or a scatter-add fused as a result (its atomics carry the row mask). A
    value computed for a row past the result's end then reaches nothing but that row."""
    from kitsune.dialects.graph import GraphOp as GOp
    from kitsune.dialects.graph import is_last_dim_concat
    from kitsune.passes.form_regions import last_dim_row_op

    for o in stage.op.body.blocks.first.ops:
        if not isinstance(o, GOp):
            continue
        cat, name = o.OPDEF.category, o.OPDEF.name
        if cat in ("elementwise", "constant", "contraction"):
            continue
        if name in ("index_select", "embedding", "index_add", "index", "slice"):
            continue  # (a slice reads a part of another value: a merged projection's columns, a row range)
        if (name == "concat" and is_last_dim_concat(o)) or last_dim_row_op(o):
            continue
        return False
    return True


__all__ = ["StageGen", "anchor_statement", "work_item_loop", "rows_stay_apart"]
