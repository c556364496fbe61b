"""convert-dataflow-to-gpu-queue: dataflow graphs -> gpu_queue programs (kernels, stages, queues).

Every ``dataflow.task`` becomes a ``gpu_queue.stage`` (same body, same tile); the
schedule decides which stages share a kernel:

* ``mode=bulk-sync``: every channel goes through a global-memory buffer and is a kernel
  boundary (the vertical-fusion baseline); independent tasks of one dependence level and
  one schedule class (``schedule_class``) share a kernel as side-by-side stages, so
  DLRM's eight embedding bags or a split attention's partials are one launch, not eight.
* ``mode=dataflow``, placement (``placement``, default ``auto``; ``kitsune.passes.placement`` decides per level
  from the cost model): **temporal** levels' tasks run one after another in one kernel per launch class, a
  consumer stage reading its producer stage's result from memory after waiting on its counter (the kernel
  carries ``placement = "temporal"``); **spatial** levels as follows.
* ``mode=dataflow``, ``fold=true``: a split reduction's combine that reads one group of its partial's tiles per
  tile becomes a stage of the partial's kernel run by the program that stores a group's last tile (a counter per
  group; ``kitsune.passes.last_arrival``).
* ``mode=dataflow``, spatial: each task gets a *level*: ``level(t) = max over producers p of
  level(p) + (1 if the channel p -> t has relation "all" else 0)``. Tasks of one
  level form one persistent kernel (independent tasks -- DLRM's bags, Inception's
  branches -- become concurrent stages); "tile" / "rows" channels between tasks of
  one kernel become queues (producer pushes, consumer pops with the channel's
  relation), all other channels (relation "all", or crossing kernels) are kernel
  results read by later kernels: the kernel boundary is the barrier. Stages keep
  the graph's topological order, so producers always get lower program ids. A
  level with more tasks than the GPU has SMs (``gpu``) is cut into consecutive
  kernels in that order.

Provisional launch configuration: stage ``i`` gets program ids ``[i, i+1)``, the
grid is the number of stages; ``kitsune-allocate-sms`` sizes them. Queue capacity:
``min(tiles, max(4, 2 x tiles per row band))`` (double-buffered row bands).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from kitsune.dialects import dataflow as df
from kitsune.dialects import gpu_queue as gq
from kitsune.gpu import parse_gpu_option
from kitsune.passes.last_arrival import fold_combines
from kitsune.passes.placement import PLACEMENTS, cut_by_launch_class, level_placement, task_levels

MODES = ("dataflow", "bulk-sync")


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())


def queue_tile(prod: df.TaskOp, value: SSAValue) -> list[int]:
    """The tile of a queue carrying ``value`` (a result of ``prod``): the producer's tile, last dim clipped."""
    shape, ptile = _shape(value), list(prod.tile_sizes())
    if not shape:
        return []
    if len(ptile) != len(shape):
        return [1] * (len(shape) - 1) + [shape[-1]]
    return ptile[:-1] + [min(ptile[-1], shape[-1])]


def schedule_class(t: df.TaskOp) -> tuple:
    """Tasks of one class may share a bulk-sync kernel: the evaluator's (generic, pointwise, scatter, split
    partials: registers only, 4 warps), or one template with one config (same warps and shared memory)."""
    tpl = t.attributes.get("template")
    name = tpl.data if tpl is not None else "generic"
    if name in ("generic", "pointwise", "scatter"):
        return ("evaluator",)
    cfg = t.attributes.get("config")
    return (name, str(cfg))


def side_by_side(tasks: list[df.TaskOp], max_stages: int) -> list[list[df.TaskOp]]:
    """Bulk-sync kernels: a task's level is one more than its deepest producer's (every channel is a kernel
    boundary); tasks of one level and schedule class share a kernel as independent stages (DLRM's embedding
    bags, split attention's partials), in the graph's order."""
    level: dict[df.TaskOp, int] = {}
    for t in tasks:
        lv = 0
        for o in t.ins:
            ch = o.owner
            if isinstance(ch, df.ChannelOp) and ch.source.owner in level:  # (producers outside ``tasks``: none)
                lv = max(lv, level[ch.source.owner] + 1)
        level[t] = lv
    out: list[list[df.TaskOp]] = []
    for lv in sorted(set(level.values())):
        groups: dict[tuple, list[df.TaskOp]] = {}
        for t in tasks:
            if level[t] == lv:
                groups.setdefault(schedule_class(t), []).append(t)
        for group in sorted(groups.values(), key=lambda ts: tasks.index(ts[0])):
            for i in range(0, len(group), max_stages):
                out.append(group[i:i + max_stages])
    return out


def kernel_of_tasks(g: df.GraphOp, mode: str, max_stages: int, placement: str = "spatial",
                    gpu=None, fold: bool = False) -> tuple[list[tuple[list[df.TaskOp], str]], dict]:
    """The kernels (lists of tasks in topological order, each with its placement: 'bulk-sync', 'spatial',
    'temporal' or 'fold') of a dataflow graph, and the folded combines (``last_arrival.fold_combines``): with
    ``fold``, in dataflow mode, a split reduction's combine runs on the last-arriving programs of its partial
    where that is sound (``kitsune.passes.last_arrival``)."""
    tasks = g.tasks()
    if mode == "bulk-sync":
        return [(ks, "bulk-sync") for ks in side_by_side(tasks, max_stages)], {}
    placed = placed_kernels(tasks, max_stages, placement, gpu)
    return fold_combines(placed) if fold else (placed, {})


def placed_kernels(tasks: list[df.TaskOp], max_stages: int, placement: str, gpu) -> list[tuple[list[df.TaskOp], str]]:
    """Dataflow mode's kernels before folding (see ``kernel_of_tasks``)."""
    if placement == "separate":
        return [(ks, "bulk-sync") for ks in side_by_side(tasks, max_stages)]
    level = task_levels(tasks, queue_tile)
    levels = [[t for t in tasks if level[t] == lv] for lv in sorted(set(level.values()))]
    out: list[tuple[list[df.TaskOp], str]] = []
    run: list[df.TaskOp] = []  # consecutive temporal tasks, in topological order

    def flush():
        for ks in cut_by_launch_class(run, gpu):
            # a run of one task under auto: nothing shares its kernel, so it is a kernel of its own
            out.append((ks, "bulk-sync" if placement == "auto" and len(ks) == 1 else "temporal"))
        run.clear()

    for group in levels:
        where = placement if placement != "auto" else level_placement(group, gpu)
        if where == "temporal":
            run.extend(group)
            continue
        flush()
        if where == "separate":
            out.extend((ks, "bulk-sync") for ks in side_by_side(group, max_stages))
            continue
        for i in range(0, len(group), max_stages):
            out.append((group[i:i + max_stages], "spatial"))
    flush()
    return out


@dataclass(frozen=True)
class ConvertDataflowToGpuQueuePass(ModulePass):
    """Map dataflow graphs to gpu_queue programs (bulk-sync kernels or persistent dataflow kernels)."""

    name = "convert-dataflow-to-gpu-queue"

    mode: str = "dataflow"
    """dataflow (persistent kernels, queues) or bulk-sync (kernel boundaries at every channel)."""
    gpu: str = "h100"
    """GPU (its SM count bounds the stages of one spatial kernel; the cost model of placement=auto)."""
    placement: str = "auto"
    """dataflow mode: auto (per level, from the cost model), spatial (levels, queues), temporal (consecutive
    tasks in one kernel, counters between stages) or separate (bulk-sync's kernels); see kitsune.passes.placement."""
    fold: bool = False
    """dataflow mode: run a split reduction's combine on the last-arriving programs of its partial, in the
    partial's kernel, where that is sound (``kitsune.passes.last_arrival``). Off by default: measured on the H100
    (bench/kernels/NOTES.md section 20), decode attention's folded combine made its kernel 13.1 us against 4.2 +
    4.8 us for the partial and combine kernels: the fence and acquire-release atomic of every partial tile and
    the group's serial tail cost more than a kernel boundary in a CUDA graph."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.mode not in MODES:
            raise DiagnosticException(f"convert-dataflow-to-gpu-queue: mode must be one of {', '.join(MODES)}, "
                                      f"got '{self.mode}'")
        if self.placement not in PLACEMENTS:
            raise DiagnosticException(f"convert-dataflow-to-gpu-queue: placement must be one of "
                                      f"{', '.join(PLACEMENTS)}, got '{self.placement}'")
        gpu = parse_gpu_option(self.gpu)
        for g in [o for o in op.walk() if isinstance(o, df.GraphOp)]:
            convert_graph(g, self.mode, gpu.sm_count, self.placement, gpu, self.fold)


def convert_graph(g: df.GraphOp, mode: str, max_stages: int, placement: str = "spatial", gpu=None,
                  fold: bool = False) -> gq.ProgramOp:
    gblock = g.body.blocks.first
    placed, folded = kernel_of_tasks(g, mode, max_stages, placement, gpu, fold)
    kernels = [ks for ks, _ in placed]
    temporal = {i for i, (_, where) in enumerate(placed) if where == "temporal"}
    fold_kernels = {i for i, (_, where) in enumerate(placed) if where == "fold"}
    kid = {t: i for i, ks in enumerate(kernels) for t in ks}
    pblock = Block(arg_types=[a.type for a in gblock.args])
    for a, b in zip(gblock.args, pblock.args):
        b.name_hint = a.name_hint
    # program-level value of each graph value (block args, task results)
    pval: dict[SSAValue, SSAValue] = dict(zip(gblock.args, pblock.args))

    def root(v: SSAValue) -> SSAValue:
        return v.owner.source if isinstance(v.owner, df.ChannelOp) else v

    # which task results must leave their kernel (read by another kernel or yielded)
    escapes: set[SSAValue] = set()
    queued: dict[tuple[df.ChannelOp, df.TaskOp], str] = {}
    nq = 0
    for ks in kernels:
        for t in ks:
            for o in t.ins:
                ch = o.owner
                if not isinstance(ch, df.ChannelOp):
                    continue
                p = ch.source.owner
                if kid[p] == kid[t] and kid[t] not in temporal | fold_kernels and ch.rel in ("tile", "rows") \
                        and (ch, t) not in queued:
                    queued[(ch, t)] = f"q{nq}"
                    nq += 1
                elif kid[p] != kid[t]:
                    escapes.add(ch.source)
    for v in gblock.last_op.operands:
        if isinstance(v.owner, df.ChannelOp) or isinstance(v.owner, df.TaskOp):
            escapes.add(root(v))

    pops: list[Operation] = []
    for ki, ks in enumerate(kernels):
        kname = f"k{ki}"
        # kernel operands: program values read by its stages from outside the kernel
        kins: list[SSAValue] = []
        for t in ks:
            for o in t.ins:
                ch = o.owner
                if isinstance(ch, df.ChannelOp) and (ch, t) in queued:
                    continue
                v = root(o)
                if isinstance(v.owner, df.TaskOp) and kid.get(v.owner) == ki:
                    continue  # a temporal dependence: the stage reads an earlier stage's result
                if v not in kins:
                    kins.append(v)
        kblock = Block(arg_types=[v.type for v in kins])
        kval = dict(zip(kins, kblock.args))
        queues: list[gq.QueueOp] = []
        stages: list[gq.StageOp] = []
        pushes: dict[df.TaskOp, list[tuple[int, str]]] = {}
        for (ch, t), qn in queued.items():
            if kid[t] != ki:
                continue
            p = ch.source.owner
            k = ch.source.index
            qt = queue_tile(p, ch.source)
            grid = df.grid_of(_shape(ch.source), qt)
            ntiles = 1
            for x in grid:
                ntiles *= x
            band = grid[-1] if grid else 1
            queues.append(gq.QueueOp(qn, ch.source.type, qt, min(ntiles, max(4, 2 * band))))
            pushes.setdefault(p, []).append((k, qn))
        queues.sort(key=lambda q: int(q.queue_name[1:]))
        kyields: list[SSAValue] = []
        sval: dict[SSAValue, SSAValue] = {}  # task result -> the result of its stage in this kernel
        for si, t in enumerate(ks):
            tblock = t.body.blocks.first
            sins: list[SSAValue] = []
            body = Block()
            vmap: dict[SSAValue, SSAValue] = {}
            for o, ba in zip(t.ins, tblock.args):
                ch = o.owner
                if isinstance(ch, df.ChannelOp) and (ch, t) in queued:
                    pop = gq.PopOp(queued[(ch, t)], ch.rel, o.type)
                    body.add_op(pop)
                    vmap[ba] = pop.result
                else:
                    arg = body.insert_arg(ba.type, len(body.args))
                    arg.name_hint = ba.name_hint
                    vmap[ba] = arg
                    sins.append(sval[root(o)] if root(o) in sval else kval[root(o)])
            # args come first in the block; pops were added as ops already
            for o in tblock.ops:
                if isinstance(o, df.YieldOp):
                    yvals = [vmap[v] for v in o.operands]
                    for k, qn in pushes.get(t, []):
                        body.add_op(gq.PushOp(yvals[k], qn))
                    body.add_op(gq.YieldOp(yvals))
                else:
                    body.add_op(o.clone(value_mapper=vmap))
            sattrs = {"kind": t.kind}
            for a in ("template", "config"):
                if a in t.attributes:
                    sattrs[a] = t.attributes[a]
            if t in folded:  # runs on the last-arriving programs of its partial's groups
                p, parts, k = folded[t]
                sattrs.update(fold=StringAttr(p.task_name), fold_parts=IntegerAttr(parts, i64),
                              fold_tiles=IntegerAttr(k, i64))
            pi = ks.index(folded[t][0]) if t in folded else si  # a folded combine: its partial's programs
            st = gq.StageOp(t.task_name, (pi, pi + 1), t.tile_sizes(), sins, [r.type for r in t.outs], Region(body),
                            sattrs)
            stages.append(st)
            sval.update(zip(t.results, st.results))
            for r, sr in zip(t.results, st.results):
                if r in escapes:
                    kyields.append(sr)
        for q in queues:
            kblock.add_op(q)
        for s in stages:
            kblock.add_op(s)
        kblock.add_op(gq.YieldOp(kyields))
        grid = len([s for s in stages if s.fold() is None])  # (a folded stage has no programs of its own)
        kop = gq.KernelOp(kname, grid, 4, 0, [pval[v] for v in kins], [v.type for v in kyields], Region(kblock),
                          {"placement": StringAttr("temporal")} if ki in temporal else None)
        pblock.add_op(kop)
        # map task results that escape to the kernel's results
        res = iter(kop.results)
        for t in ks:
            for r in t.results:
                if r in escapes:
                    pval[r] = next(res)
    pyields = [pval[root(v)] for v in gblock.last_op.operands]
    prog_kernels = [o for o in pblock.ops if isinstance(o, gq.KernelOp)]
    plan = gq.LaunchPlanOp([k.kernel_name for k in prog_kernels], [])
    pblock.add_op(plan)
    pblock.add_op(gq.YieldOp(pyields))
    prog = gq.ProgramOp(list(g.ins), [r.type for r in g.outs], Region(pblock))
    plan.buffers = gq.LaunchPlanOp([], gq.buffer_list(prog)).buffers
    g.parent_block().insert_op_before(prog, g)
    for a, b in zip(g.results, prog.results):
        a.replace_all_uses_with(b)
    g.detach()
    g.erase()
    del pops
    return prog
