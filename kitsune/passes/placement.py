"""Placement of a dataflow graph's tasks in persistent kernels: spatial, temporal or both (DESIGN.md, gpu_queue).

* **spatial**: the tasks of one *level* share a kernel on disjoint program-id ranges and stream tiles through
  ring queues; a channel with relation "all" is a kernel boundary. It pays only where a consumer tile can start
  before its producer's last tile: a "tile" channel over several tiles, a "rows" channel over several row
  bands (NeRF's and the MLPs' layer chains).
* **temporal**: consecutive tasks share a kernel in topological order; every program takes its work items
  in ticket order, and a consumer stage's programs wait on a counter of the producer stage's finished
  programs before they read its result from global memory (in L2 when small). No kernel boundary, no
  launch gap, no tail: the next stage's programs start while the last producer items drain. This is decode's
  shape (every operator needs the whole previous output: nothing to pipeline).

``placement="auto"`` decides per level from the cost model. Where a consumer can start early, spatial wins when
its estimate (the slowest stage on its share of the SMs, as ``kitsune-allocate-sms`` allocates them, plus
``HANDOFF_S`` per producer tile a program's work items wait on, one after another) is below the temporal one
(each stage on the whole GPU, one after another, plus ``WAIT_S`` per dependent stage). Otherwise the level is
temporal only where that beats kernels of its own (``separate``: each dependence depth on the whole GPU at its
own occupancy, plus the GPU's ``graph_launch_s`` per kernel) with the temporal estimate (the same work, a
``WAIT_S`` per depth instead of a launch) times ``SHARED_SLOWDOWN``, the measured cost of sharing a kernel: stages
whose launches dominate (under a microsecond each on the H100) share one, longer ones get kernels of their own.

A temporal kernel holds only tasks of one launch class (warps, and CTAs per SM by the resource model): a tuned
config's warps are part of its code's speed, and a kernel's occupancy is its hungriest stage's; a task of another
class starts a new kernel.
"""

from __future__ import annotations

import math

from kitsune.dialects import dataflow as df
from kitsune.gpu import GPU

PLACEMENTS = ("auto", "spatial", "temporal", "separate")
"""``separate``: every channel a kernel boundary (bulk-sync's kernels): a candidate of the measured placement
(``kitsune-tune --placement``) for programs where no shared kernel beats separate ones."""

HANDOFF_S = 1.0e-6
"""Cost of one popped tile on the consumer program's path: an acquire round trip to L2 for the filled counter
and a release for the freed one, next to the producer's slot wait and publish (a flag hand-off between SMs
measured ~250 ns one way on the H100; an L2 atomic round trip ~0.5 us)."""

WAIT_S = 1.0e-6
"""Cost of one temporal dependence: the producer's last programs publish (fence + release), the consumer's
acquire sees it."""

SHARED_SLOWDOWN = 1.2
"""A temporal kernel's time against its stages as kernels of their own: measured on the H100 (2026-11-27,
heuristic configs, ``KITSUNE_TUNING_DB=0``, bench/kernels/NOTES.md section 29) the temporal kernel of
llama_decode_b1's O / gate-up / down projections ran 55.0 us against 43.9 for the three kernels of bulk-sync
(1.25x), llama_decode_b8's 61.2 against 52.6 (1.16x), MeshGraphNet's two MLP chains 62.2 against 49.2 (1.26x),
the GPT-3 MLPs' two GEMMs 468.3 / 168.9 against 428.8 / 161.2 (1.09x / 1.05x): one occupancy class and one
code for all its stages, the counters between them, and no weight loads under the kernel before's tail
(programmatic dependent launch lets a kernel of its own issue them)."""


def _channel_producer(o) -> tuple[df.ChannelOp, df.TaskOp] | None:
    ch = o.owner
    if isinstance(ch, df.ChannelOp) and isinstance(ch.source.owner, df.TaskOp):
        return ch, ch.source.owner
    return None


def task_levels(tasks: list[df.TaskOp], queue_tile) -> dict[df.TaskOp, int]:
    """Spatial levels: ``level(t) = max over producers p of level(p) + (1 if the channel p -> t cannot be a queue:
    relation "all", or a result of another tile than the producer's)``."""
    level: dict[df.TaskOp, int] = {}
    for t in tasks:
        lv = 0
        for o in t.ins:
            cp = _channel_producer(o)
            if cp is None:
                continue
            ch, p = cp
            boundary = ch.rel == "all" or list(queue_tile(p, ch.source)) != list(p.tile_sizes())
            lv = max(lv, level[p] + (1 if boundary else 0))
        level[t] = lv
    return level


def in_level_channels(group: list[df.TaskOp]) -> list[tuple[df.ChannelOp, df.TaskOp, df.TaskOp]]:
    """(channel, producer, consumer) of the queue channels between tasks of one level."""
    members = set(group)
    out = []
    for t in group:
        for o in t.ins:
            cp = _channel_producer(o)
            if cp is not None and cp[1] in members and cp[0].rel in ("tile", "rows"):
                out.append((cp[0], cp[1], t))
    return out


def can_pipeline(ch: df.ChannelOp, prod: df.TaskOp) -> bool:
    """Whether a consumer tile of this channel needs fewer than all the producer's tiles."""
    grid = prod.grid()
    if ch.rel == "tile":
        return math.prod(grid) > 1 if grid else False
    if ch.rel == "rows":
        return math.prod(grid[:-1]) > 1 if len(grid) > 1 else False
    return False


def work_items(t: df.TaskOp) -> int:
    from kitsune.passes.allocate_sms import _template_config

    _, cfg = _template_config(t)
    return max(1, t.num_tiles()) * max(1, cfg.get("SPLIT", 1))


def task_warps(t: df.TaskOp, gpu: GPU) -> int:
    from kitsune.passes.allocate_sms import stage_resources

    return stage_resources(t, gpu).warps


def dependence_levels(group: list[df.TaskOp]) -> list[list[df.TaskOp]]:
    """The tasks of ``group`` by dependence depth inside it (tasks of one depth are independent: in a temporal
    kernel their programs run side by side)."""
    members = set(group)
    depth: dict[df.TaskOp, int] = {}
    for t in group:
        d = 0
        for o in t.ins:
            cp = _channel_producer(o)
            if cp is not None and cp[1] in members:
                d = max(d, depth[cp[1]] + 1)
        depth[t] = d
    return [[t for t in group if depth[t] == d] for d in sorted(set(depth.values()))]


def group_ctas(group: list[df.TaskOp], gpu: GPU) -> int:
    """CTAs per SM of a kernel holding ``group`` (the largest resources of its tasks)."""
    from kitsune.passes.allocate_sms import ctas_per_sm, stage_resources

    needs = [stage_resources(t, gpu) for t in group]
    return ctas_per_sm(max(r.warps for r in needs), max(r.smem_bytes for r in needs), gpu,
                       max(r.regs_per_thread for r in needs))


def temporal_estimate(group: list[df.TaskOp], gpu: GPU, ctas: int) -> float:
    """Seconds of ``group`` as one temporal kernel: per dependence depth, its independent tasks' FLOPs and bytes
    on the whole GPU over their summed work items; depths one after another, ``WAIT_S`` per dependent depth."""
    from kitsune.passes.allocate_sms import StageCost, depths_time

    levels = dependence_levels(group)
    depths = [[StageCost(t, gpu, ctas, work_items(t)) for t in lv] for lv in levels]
    return depths_time(depths, gpu, ctas) + WAIT_S * (len(levels) - 1)


def estimates(group: list[df.TaskOp], gpu: GPU) -> tuple[float, float]:
    """(spatial, temporal) seconds of one level's tasks (see the module doc)."""
    from kitsune.passes.allocate_sms import StageCost, allocate

    ctas = group_ctas(group, gpu)
    temporal = temporal_estimate(group, gpu, ctas)
    if len(group) > gpu.sm_count:
        return math.inf, temporal
    costs = [StageCost(t, gpu, ctas, work_items(t)) for t in group]
    popped: dict[df.TaskOp, int] = {}  # producer tiles a consumer's work item waits on (one by one)
    for ch, p, c in in_level_channels(group):
        grid = p.grid()
        popped[c] = popped.get(c, 0) + (1 if ch.rel == "tile" else (grid[-1] if grid else 1))
    alloc = allocate(costs, gpu.sm_count)
    spatial = 0.0
    for t, c, a in zip(group, costs, alloc):
        programs = max(1, min(a * ctas, c.tiles))
        handoff = HANDOFF_S * popped.get(t, 0) * math.ceil(c.tiles / programs)
        spatial = max(spatial, c.time(a) + handoff)
    return spatial, temporal


def separate_estimate(group: list[df.TaskOp], gpu: GPU) -> float:
    """Seconds of ``group`` as bulk-sync kernels: per dependence depth, its tasks side by side on the whole GPU
    at the depth's occupancy (the smallest of its tasks' CTAs per SM alone), plus ``gpu.graph_launch_s`` per
    depth."""
    from kitsune.passes.allocate_sms import StageCost, depths_time

    total = 0.0
    for lv in dependence_levels(group):
        ctas = min(launch_class(t, gpu)[1] for t in lv)
        total += depths_time([[StageCost(t, gpu, ctas, work_items(t)) for t in lv]], gpu, ctas) + gpu.graph_launch_s
    return total


def starts_early(t: df.TaskOp, group: list[df.TaskOp]) -> bool:
    """Whether consumer ``t`` of a level can start before its in-level producers have finished: every one of
    its queue channels lets a tile start on part of the producer's tiles."""
    chans = [(ch, p) for ch, p, c in in_level_channels(group) if c is t]
    return bool(chans) and all(can_pipeline(ch, p) for ch, p in chans)


def level_placement(group: list[df.TaskOp], gpu: GPU) -> str:
    """'spatial', 'temporal' or 'separate' for one level under placement=auto (the module doc)."""
    if any(starts_early(t, group) for t in group):
        spatial, temporal = estimates(group, gpu)
        if spatial < temporal:
            return "spatial"
    # temporal against separate on one estimate of the work: each dependence depth waits on the one before it
    # (the first on the run before the level) where a kernel of its own waits on its launch
    depths = len(dependence_levels(group))
    separate = separate_estimate(group, gpu)
    temporal = separate + depths * (WAIT_S - gpu.graph_launch_s)
    return "temporal" if SHARED_SLOWDOWN * temporal < separate else "separate"


def launch_class(t: df.TaskOp, gpu: GPU) -> tuple[int, int]:
    """(warps, CTAs per SM) of a task alone, from its resource model: tasks of one class share a temporal
    kernel without changing each other's occupancy (a kernel's registers and shared memory are the largest of
    its stages', so one register-hungry stage would cut the CTAs per SM of all: measured on the H100, a
    latency-bound gather at 2 instead of 8 CTAs per SM ran 2.5x slower)."""
    from kitsune.passes.allocate_sms import ctas_per_sm, stage_resources

    r = stage_resources(t, gpu)
    return r.warps, ctas_per_sm(r.warps, r.smem_bytes, gpu, r.regs_per_thread)


def cut_by_launch_class(tasks: list[df.TaskOp], gpu: GPU) -> list[list[df.TaskOp]]:
    """Consecutive runs of tasks of one launch class (the temporal kernels of a sequence of tasks)."""
    out: list[list[df.TaskOp]] = []
    cur: list[df.TaskOp] = []
    cls = None
    for t in tasks:
        c = launch_class(t, gpu)
        if cur and c != cls:
            out.append(cur)
            cur = []
        cur.append(t)
        cls = c
    if cur:
        out.append(cur)
    return out


__all__ = ["PLACEMENTS", "HANDOFF_S", "WAIT_S", "SHARED_SLOWDOWN", "task_levels", "in_level_channels", "can_pipeline",
           "starts_early", "dependence_levels", "temporal_estimate", "separate_estimate", "estimates", "level_placement", "launch_class", "cut_by_launch_class"]
