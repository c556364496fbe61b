"""kitsune-choose-schedules: give every dataflow task a template, a config and hence its tile.

Per task (``kitsune.schedule.select.choose``): the template follows from the roles
of the anchor comprehension's index variables (gemm, gemv, scatter, pointwise,
generic; a generic or pointwise task's tile is cut until its grid fills the GPU); the config comes from the tuning database (``db=true``) or the
heuristic default; the tile follows from the config. Recorded on the task as
attributes::

    dataflow.task "linear_0" contraction (...) tile [128, 256] {template = "gemm",
        config = {BM = 128, BN = 256, BK = 64, GROUP_M = 8, SPLIT = 1, warps = 8, stages = 3},
        schedule = "heuristic: roles M=d0:1024 N=n:6144 K=k:12288"}

A split reduction is a config field (``SPLIT``): the template reduces the
partial sums in the kernel, so no task is replicated. Tasks whose tile changed
keep their channels legal: a pointwise consumer reading a re-tiled producer tile
for tile adopts the producer's tile, and a channel whose relation no longer fits
the two tiles is weakened (tile -> rows -> all).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.passes import ModulePass

from kitsune.dialects import dataflow as df
from kitsune.dialects.regions import grid_of, tensor_shape
from kitsune.gpu import parse_gpu_option
from kitsune.schedule.select import (choose, fill_tile, generic_warps, generic_work, transposed_read_dim,
                                     transposed_tile)

REL_ORDER = ("tile", "rows", "all")

ROW_BAND_LIMIT = 8192
"""Elements (each tile dim rounded up to a power of two, as the evaluator's blocks are) of the largest tile a
generic task takes from a row-band neighbour in a dataflow schedule: 64 per thread of its 4 warps, the
evaluator's block budget (``kitsune.codegen.triton_gen.reductions.BLOCK_LIMIT``). GPT-2's ``c_proj`` + residual +
LayerNorm took its GEMM producer's 128-row band: a [128, 768] tile (1024 fp32 per thread per value) on 2
programs, which kitsune-split-reduction then replicated into 16 partials; their combine alone was 10 MB of PTX,
still in ptxas after 15 minutes (bench/kernels/NOTES.md, "Compile time (issue 11)")."""
WIDENED_TILE_LIMIT = ROW_BAND_LIMIT
"""Elements (padded) up to which a generic task that takes a neighbour's fewer rows widens its columns to match
(``_align_row_bands``): 64 per thread of its 4 warps, the evaluator's block budget. A language-model head's
log_softmax normalisation took [2, 16 384] tiles from 128 x 256 projection tiles: 9.7 KB of spills a thread, 2.2 ms a
program against 0.27 (H200, bench/kernels/NOTES.md section 44); [2, 8192] from 128 x 128 ones, 254 registers."""

ROW_BAND_STEPS = 64
"""With ``ROW_BAND_LIMIT``: a generic task of long reductions takes a neighbour's row bands only where its tile's
element-steps (padded elements x reduction steps per element) stay within ``ROW_BAND_LIMIT x ROW_BAND_STEPS`` or
its own tile's: fewer, longer programs would leave the GPU idle for a queue's sake."""


def _padded_elems(tile) -> int:
    return math.prod(1 << max(0, int(t) - 1).bit_length() for t in tile)


def config_attr(cfg) -> DictionaryAttr:
    return DictionaryAttr({k: IntegerAttr(int(v), i64) for k, v in cfg.as_dict().items()})


def set_tile(task: df.TaskOp, tile) -> None:
    task.tile = DenseArrayBase.from_list(i64, [int(t) for t in tile])


def _channel(src, rel: str, after) -> df.ChannelOp:
    for u in src.uses:
        o = u.operation
        if isinstance(o, df.ChannelOp) and o.rel == rel:
            return o
    ch = df.ChannelOp(src, rel)
    after.parent_block().insert_op_after(ch, after)
    return ch


def legalise_channels(g: df.GraphOp) -> None:
    """Weaken every channel use whose relation no longer fits its producer's and consumer's tiles."""
    for ch in [o for o in g.body.blocks.first.ops if isinstance(o, df.ChannelOp)]:
        prod = ch.source.owner
        if not isinstance(prod, df.TaskOp):
            continue
        for use in list(ch.result.uses):
            cons = use.operation
            if not isinstance(cons, df.TaskOp) or df.relation_error(ch.rel, prod, tensor_shape(ch.result.type),
                                                                     cons) is None:
                continue
            for rel in REL_ORDER[REL_ORDER.index(ch.rel) + 1:]:
                if df.relation_error(rel, prod, tensor_shape(ch.result.type), cons) is None:
                    new = _channel(ch.source, rel, ch)
                    cons.operands = [new.result if i == use.index else o for i, o in enumerate(cons.operands)]
                    break
    for ch in [o for o in g.body.blocks.first.ops if isinstance(o, df.ChannelOp)]:
        if not ch.result.uses:
            ch.detach()
            ch.erase()


def tile_channels_last_writers(g: df.GraphOp) -> None:
    """An elementwise task whose rank-4 result only convolutions read, as their input, takes a tile across
    the channels (``select.conv_input_tile``): its program can then store that result channels-last
    (``kitsune.schedule.storage.channels_last_writer``, ``kitsune.codegen.layouts``) and the convolutions
    load channel vectors window position by window position instead of gathering c * kh * kw."""
    from kitsune.codegen.layouts import channels_last_shape
    from kitsune.schedule.select import conv_input_tile
    from kitsune.schedule.storage import elementwise_task, feeds_conv_inputs

    for t in g.tasks():
        if not elementwise_task(t):
            continue
        shape = tensor_shape(t.outs[0].type)
        if channels_last_shape(shape) and feeds_conv_inputs(t.outs[0]):
            set_tile(t, conv_input_tile(shape))


@dataclass(frozen=True)
class ChooseSchedulesPass(ModulePass):
    """Template, config and tile for every dataflow task (roles of the anchor; tuning database or heuristic)."""

    name = "kitsune-choose-schedules"

    gpu: str = "h100"
    """GPU preset the configs are chosen for (and the tuning database is keyed by)."""
    db: bool = True
    """Look configs up in the tuning database (off: heuristic defaults only)."""
    templates: bool = True
    """Use the templates (off: every task generic, with form-regions' tiles: the old code generator)."""
    remarks: bool = False
    """Print each task's choice to stderr."""
    queues: bool = True
    """Tiles for row-band queues (a dataflow schedule): tasks joined by a row-band channel always get the same
    row tiles. Off (bulk-sync, where every channel is a buffer): a task keeps a tile that fills the GPU."""
    row_band_limit: int = ROW_BAND_LIMIT
    """With ``queues``: the largest tile (elements, dims rounded up to powers of two) a generic task takes to share
    a neighbour's row bands; a larger one keeps its own tile (the channel becomes a kernel boundary)."""
    row_band_steps: int = ROW_BAND_STEPS
    """With ``queues``: the element-steps (tile elements x reduction steps each) a generic task's tile may reach, in
    multiples of ``row_band_limit``, to share a neighbour's row bands (or its own tile's, where more)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        gpu = parse_gpu_option(self.gpu)
        for g in [o for o in op.walk() if isinstance(o, df.GraphOp)]:
            convs = []  # (task, choice) of the convolutions chosen here
            for t in g.tasks():
                if "template" in t.attributes:
                    continue  # chosen already (a re-run, or given by hand)
                c = choose(t, gpu, use_db=self.db) if self.templates else None
                if c is None or c.template in ("generic", "pointwise"):
                    template = c.template if c is not None else "generic"
                    t.attributes["template"] = StringAttr(template)
                    if c is not None and c.note:
                        t.attributes["schedule"] = StringAttr(c.note)
                    cfg = c.config if c is not None else None
                    if c is not None and t.outs:
                        tile = transposed_tile(t, t.tile_sizes()) if template == "pointwise" else t.tile_sizes()
                        set_tile(t, fill_tile(tensor_shape(t.outs[0].type), tile, gpu, *generic_work(t)))
                        cfg = generic_warps(cfg, t.tile_sizes())
                    if cfg is not None and cfg != type(cfg)():  # (a pool's 8 warps, a wide tile's)
                        t.attributes["config"] = config_attr(cfg)
                    continue
                set_tile(t, c.tile)
                if c.template == "conv":
                    convs.append((t, c))
                t.attributes["template"] = StringAttr(c.template)
                t.attributes["config"] = config_attr(c.config)
                t.attributes["schedule"] = StringAttr(f"{c.source}: {c.note}")
                if self.remarks:
                    print(f"kitsune-choose-schedules: task \"{t.task_name}\": {c.template} {c.config.as_dict()} "
                          f"tile {list(c.tile)} ({c.source}; {c.note})", file=sys.stderr)
            tile_channels_last_writers(g)
            if self.db:
                self._conv_layouts(convs, gpu)
            self._follow_tiles(g)
            self._align_row_bands(g, gpu if not self.queues else None, self.row_band_limit, self.row_band_steps)
            self._whole_scatters(g)
            legalise_channels(g)

    @staticmethod
    def _conv_layouts(convs, gpu) -> None:
        """A convolution (``convs``: the (task, choice) pairs chosen in this run) whose input its program will
        store channels-last (its producer and that tensor's other readers are conv tasks:
        ``kitsune.schedule.storage``, known once every task has its template) takes the tuning database's entry
        for that layout (``Problem.layout``): the same shape over an NCHW input is another kernel. Without an
        entry of its own, the lookup falls back to the one keyed without the layout, which the first loop took
        already."""
        from kitsune.schedule import db
        from kitsune.schedule.roles import roles_of
        from kitsune.schedule.select import conv_tile, with_input_layout

        for t, c in convs:
            c = with_input_layout(t, c)
            if not c.problem.layout:
                continue
            cfg = db.lookup(c.problem, gpu)
            if cfg is None or config_attr(cfg) == t.attributes.get("config"):
                continue
            set_tile(t, conv_tile(roles_of(c.anchor), cfg))
            t.attributes["config"] = config_attr(cfg)
            t.attributes["schedule"] = StringAttr(f"database (its input channels-last): {c.note}")

    @staticmethod
    def _align_row_bands(g: df.GraphOp, gpu, limit: int = ROW_BAND_LIMIT, steps_limit: int = ROW_BAND_STEPS) -> None:
        """Tasks joined by a row-band channel get the same leading tile sizes, so that the channel stays a
        row-band queue in a dataflow kernel (different row tiles would weaken it to a kernel boundary): a
        generic task adopts its neighbour's rows, a gemm consumer its gemm producer's BM. With ``gpu`` (no queues:
        bulk-sync), a generic task keeps its own rows when the neighbour's would shrink its grid below two
        programs per SM; without (queues), when they would make its tile larger than ``limit`` elements, its
        element-steps more than ``limit x steps_limit`` (or its own tile's), or leave it one row band (nothing for
        a queue to pipeline)."""
        from kitsune.schedule.configs import config_from
        from kitsune.schedule.roles import roles_of
        from kitsune.schedule.select import anchor_of, gemm_tile

        def cfg_of(t):
            c = t.attributes.get("config")
            return {k: v.value.data for k, v in c.data.items()} if c is not None else None

        def retile_gemm(t, bm) -> bool:
            if cfg_of(t).get("GLUON") and bm < 16 * cfg_of(t).get("warps", 8):
                return False  # (the Gluon form's wgmma gives each warp 16 rows: ``templates/gemm_tma.py``)
            cfg = config_from("gemm", {**cfg_of(t), "BM": bm})
            a, _ = anchor_of(t)
            tile = gemm_tile(roles_of(a), "gemm", cfg) if a is not None else None
            if tile is None or tuple(tile[:-1]) == tuple(t.tile_sizes()[:-1]):
                return False
            set_tile(t, tile)
            t.attributes["config"] = config_attr(cfg)
            return True

        def rows_of(t, lead, shape) -> bool:
            if len(lead) != len(shape) - 1 or tuple(lead) == tuple(t.tile_sizes()[:-1]):
                return False
            if transposed_read_dim(t.body.blocks.first, shape) is not None:
                return False  # (its tile moves a transposed input in whole sectors: ``transposed_tile``)
            old = t.tile_sizes()
            new = [max(1, min(a, d)) for a, d in zip(lead, shape[:-1])] + [old[-1]]
            fewer = math.prod(old[:-1]) // math.prod(new[:-1])
            if fewer > 1 and old[-1] < shape[-1]:
                # fewer rows: as many more columns, up to the whole row (a tile's size is what the grid was cut
                # to; a language-model head's log_softmax normalisation over 50 257 columns took the statistics
                # task's 2 rows at its own 128 columns: 201 216 programs of 256 elements)
                new[-1] = min(old[-1] << (fewer.bit_length() - 1), 1 << (shape[-1] - 1).bit_length())
                while new[-1] > old[-1] and _padded_elems(new) > WIDENED_TILE_LIMIT:
                    new[-1] //= 2  # (not past the registers of a generic program: ``WIDENED_TILE_LIMIT``)
            if gpu is not None and math.prod(grid_of(shape, new)) < min(math.prod(grid_of(shape, old)),
                                                                        2 * gpu.sm_count):
                return False  # without queues, a grid that fills the GPU is worth more than equal row bands
            if gpu is None and _padded_elems(new) > max(limit, _padded_elems(old)):
                return False  # a generic tile beyond the evaluator's registers: no queue is worth that
            steps = generic_work(t)[0] if gpu is None else 1  # (reduction steps per element)
            if gpu is None and _padded_elems(new) * steps > max(limit * steps_limit, _padded_elems(old) * steps):
                return False  # nor one whose programs each loop over far more (a language-model head's softmax
                # statistics over 50 257 columns took its GEMM's 128 rows: 8 programs, 4.1 ms on the H200)
            if gpu is None and math.prod(grid_of(shape, new)[:-1]) <= 1:
                return False  # one row band: a queue could pipeline nothing (llama_decode_b8's attention
                # combine ran 16 programs of [8, 128] at 5.8 us, its own 128 of [1, 128] at 2.2 us)
            set_tile(t, new)
            return True

        for _ in range(4):  # a few sweeps reach a fixpoint on chains
            changed = False
            for ch in [o for o in g.body.blocks.first.ops if isinstance(o, df.ChannelOp) and o.rel == "rows"]:
                prod = ch.source.owner
                if not isinstance(prod, df.TaskOp):
                    continue
                for use in ch.result.uses:
                    cons = use.operation
                    if not isinstance(cons, df.TaskOp) or not cons.outs or not prod.outs:
                        continue
                    pt, ct = prod.tile_sizes(), cons.tile_sizes()
                    if len(pt) != len(ct) or pt[:-1] == ct[:-1]:
                        continue
                    pcfg, ccfg = cfg_of(prod), cfg_of(cons)
                    if ccfg is None:
                        changed |= rows_of(cons, pt[:-1], tensor_shape(cons.outs[0].type))
                    elif pcfg is None:
                        changed |= rows_of(prod, ct[:-1], tensor_shape(prod.outs[0].type))
                    elif cons.attributes.get("template") == StringAttr("gemm") == prod.attributes.get("template"):
                        # (a gemm after another: an attention's BM of 64 queries made Llama prefill's output
                        # projection a 64-row tile its Gluon config does not run, on 8 warps)
                        changed |= retile_gemm(cons, pcfg["BM"])
            if not changed:
                break

    @staticmethod
    def _whole_scatters(g: df.GraphOp) -> None:
        """A scatter task writes anywhere in its result and reads its source rows in its own order: every
        channel into or out of it carries the whole tensor (a kernel boundary in both schedules)."""
        scat = {t for t in g.tasks() if t.attributes.get("template") == StringAttr("scatter")}
        for ch in [o for o in g.body.blocks.first.ops if isinstance(o, df.ChannelOp) and o.rel != "all"]:
            prod = ch.source.owner
            for use in list(ch.result.uses):
                cons = use.operation
                if prod in scat or cons in scat:
                    new = _channel(ch.source, "all", ch)
                    cons.operands = [new.result if i == use.index else o for i, o in enumerate(cons.operands)]

    @staticmethod
    def _follow_tiles(g: df.GraphOp) -> None:
        """A pointwise task reading a templated producer's result of its own shape, tile for tile, takes the
        producer's tile (so the channel stays a tile-for-tile queue)."""
        for t in g.tasks():
            if t.attributes.get("template") != StringAttr("pointwise"):
                continue
            for o in t.ins:
                ch = o.owner
                if not isinstance(ch, df.ChannelOp) or ch.rel != "tile":
                    continue
                prod = ch.source.owner
                if isinstance(prod, df.TaskOp) and "config" in prod.attributes and \
                        tensor_shape(prod.outs[0].type) == tensor_shape(t.outs[0].type):
                    set_tile(t, prod.tile_sizes())
                    break


__all__ = ["ChooseSchedulesPass", "legalise_channels", "config_attr", "tile_channels_last_writers"]
