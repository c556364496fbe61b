"""kitsune-allocate-sms: size the program-id range (SMs) of every stage of every gpu_queue kernel.

Per stage, from its body (graph ops) and the GPU description:

* **launch needs**: a stage with a contraction stages ``(tile_m + tile_n) x 64``
  operand tiles, 3-deep, in shared memory and runs 8 warps for tiles of at least
  128 x 128 (else 4); other stages use registers only (4 warps, no shared
  memory). The kernel's launch uses the largest warps / shared memory of its
  stages; CTAs per SM = min(max CTAs, threads / (warps x 32), registers /
  (warps x 32 x 128), shared memory / smem).
* **time on s SMs**: the cost model (``kitsune.cost``) on a GPU cut to ``s`` SMs
  (peak FLOP/s, DRAM and L2 bandwidth scaled by ``s / sm_count``: concurrent
  stages share the memory system in proportion to their SMs), with the stage's
  tile count as the grid, no launch overhead; SMs beyond ``ceil(tiles / ctas)``
  are useless and do not count.
* **allocation** (min-max): every stage starts with one SM; repeatedly the slowest
  stage gets the fewest extra SMs that make it faster, until the SMs run out or
  the slowest stage cannot get faster. Times are non-increasing in ``s``, so this
  greedy minimises the slowest stage. More stages than SMs is an error (the
  conversion pass cuts kernels so that this does not happen).
* **program ids**: stage ``i`` (in order, so producers stay below consumers) gets
  ``min(s_i x ctas, tiles_i)`` programs, contiguous; the grid is their sum (never
  more than the CTAs resident at once). Stages side by side in a kernel without
  queues (bulk-sync), or a lone stage of another template than gemm / gemv,
  get one program per work item instead: nothing waits, so nothing needs to be
  resident, and the hardware balances the stages.

Annotates each stage with ``sms``, ``est_us`` and ``bound``, each kernel with
``est_us`` (its slowest stage) and ``ctas_per_sm``; ``report=true`` prints a table
to stderr.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, StringAttr, f64, i64
from xdsl.utils.exceptions import DiagnosticException

from kitsune import cost
from kitsune.dialects import gpu_queue as gq
from kitsune.dialects.graph import GraphOp as GOp
from kitsune.dialects.graph import elem_bytes, fmt_loc
from kitsune.gpu import GPU, parse_gpu_option
from kitsune.schedule import occupancy
from kitsune.schedule.configs import CONFIGS, Problem, config_from
from kitsune.schedule.occupancy import Resources
from xdsl.passes import ModulePass

REGS_PER_THREAD = 128
BK = 64
PIPE = 3


def _template_config(st) -> tuple[str, dict[str, int]]:
    """(template, config) of a ``gpu_queue.stage`` or a ``dataflow.task`` (their attributes)."""
    t = st.attributes.get("template")
    c = st.attributes.get("config")
    cfg = {k: int(v.value.data) for k, v in c.data.items()} if c is not None else {}
    return (t.data if isinstance(t, StringAttr) else "generic"), cfg


def stage_resources(st: gq.StageOp, gpu: GPU) -> Resources:
    """Warps, registers per thread and shared memory of one stage (or ``dataflow.task``), before the first
    compile: the template's resource model when ``kitsune-choose-schedules`` gave the stage a config, else a
    model of the generic evaluator (a contraction stages ``(tile_m + tile_n) x 64`` operand tiles, 3-deep;
    8 warps for tiles of at least 128 x 128)."""
    ops = [o for o in st.body.blocks.first.ops if isinstance(o, GOp)]
    contr = [o for o in ops if o.OPDEF.category == "contraction"]
    eb = max([elem_bytes(o.operands[0].type) for o in contr] or [2])
    template, cfg = _template_config(st)
    if cfg and template in CONFIGS:
        c = config_from(template, cfg)
        p = Problem(template, elem_bytes=eb)
        if template == "chain":  # its shared memory and registers grow with the layers' width
            from kitsune.schedule.chain import CHAIN_MAX_WIDTH, chain_form
            from kitsune.schedule.select import chain_problem

            form = chain_form(st.body.blocks.first, CHAIN_MAX_WIDTH, results=list(st.body.blocks.first.last_op.operands))
            p = chain_problem(form, eb) if form is not None else p
        return c.resources(p)
    if not contr:
        return Resources(4, REGS_PER_THREAD, 0)
    tile = st.tile_sizes()
    tn = tile[-1] if tile else 1
    tm = tile[-2] if len(tile) >= 2 else 1
    smem = min((tm + tn) * BK * eb * PIPE, gpu.smem_per_cta_bytes)
    warps = 8 if tm * tn >= 128 * 128 else 4
    return Resources(warps, REGS_PER_THREAD, smem)


PIPELINED_TEMPLATES = ("gemm", "gemv", "conv")
"""Templates whose shared memory is their operand tiles times the pipelining depth (``stages``)."""


def pipeline_depth(stages: list[gq.StageOp], needs: list[Resources], gpu: GPU) -> tuple[int, list[int]]:
    """(the kernel's software-pipelining depth, each stage's shared memory at that depth). Triton pipelines
    every loop of a kernel to one depth (``num_stages``): the deepest its stages' configs ask for, lowered
    until each stage's pipelined operands fit one CTA's shared memory (a 128 x 256 gemm tuned for 3 stages
    beside a 128 x 128 one tuned for 5 would ask for 240 KB at 5). ``needs``: the stages' ``stage_resources``."""
    want, caps, smems = [], [], []
    for st, r in zip(stages, needs):
        template, cfg = _template_config(st)
        n = cfg.get("stages", PIPE)
        want.append(n)
        if template in PIPELINED_TEMPLATES and n and r.smem_bytes:
            caps.append(max(1, gpu.smem_per_cta_bytes * n // r.smem_bytes))
            smems.append((r.smem_bytes, n))
        else:
            smems.append((r.smem_bytes, 0))
    depth = min([max(want or [PIPE])] + caps)
    return depth, [b * depth // n if n else b for b, n in smems]


def stage_needs(st: gq.StageOp, gpu: GPU) -> tuple[int, int]:
    """(warps, shared-memory bytes) of one stage."""
    r = stage_resources(st, gpu)
    return r.warps, r.smem_bytes


def ctas_per_sm(warps: int, smem: int, gpu: GPU, regs: int = REGS_PER_THREAD) -> int:
    """CTAs per SM of a kernel (the one occupancy function, at least 1)."""
    return max(1, occupancy.ctas_per_sm(Resources(warps, regs, smem), gpu))


def scaled_gpu(gpu: GPU, s: int) -> GPU:
    f = s / gpu.sm_count
    return replace(gpu, sm_count=s, dram_bw=gpu.dram_bw * f, l2_bw=gpu.l2_bw * f,
                   tc_bf16_flops=gpu.tc_bf16_flops * f, tc_tf32_flops=gpu.tc_tf32_flops * f,
                   tc_fp8_flops=gpu.tc_fp8_flops * f, fp32_flops=gpu.fp32_flops * f,
                   fp16_flops=gpu.fp16_flops * f, fp64_flops=gpu.fp64_flops * f)


class StageCost:
    """Time of one stage as a function of its SM count (memoised)."""

    def __init__(self, st: gq.StageOp, gpu: GPU, ctas: int, work_items: int | None = None):
        """``st``: a stage, or a ``dataflow.task`` with its ``work_items`` given."""
        ops = [o for o in st.body.blocks.first.ops if isinstance(o, GOp)]
        items = st.work_items() if work_items is None else work_items
        e = cost.estimate_task(ops, gpu, tiles=items, ctas_per_sm=ctas, launch=False)
        self.fl, self.bytes = e.flops_by_class, e.bytes
        self.tiles = items
        self.ctas = ctas
        self.useful = max(1, math.ceil(self.tiles / ctas))
        self.gpu = gpu
        self._memo: dict[int, cost.Estimate] = {}

    def est(self, s: int) -> cost.Estimate:
        s = max(1, min(s, self.useful))
        if s not in self._memo:
            self._memo[s] = cost._kernel(self.fl, self.bytes, scaled_gpu(self.gpu, s), self.tiles, self.ctas, False)
        return self._memo[s]

    def time(self, s: int) -> float:
        return self.est(s).time_s


def allocate(costs: list[StageCost], sms: int) -> list[int]:
    """SMs per stage minimising the slowest stage (each >= 1, total <= sms)."""
    n = len(costs)
    if n > sms:
        raise ValueError(f"{n} stages but only {sms} SMs")
    alloc = [1] * n
    free = sms - n
    while free > 0:
        i = max(range(n), key=lambda j: (costs[j].time(alloc[j]), -j))
        cur = costs[i].time(alloc[i])
        step = None
        for extra in range(1, min(free, costs[i].useful - alloc[i]) + 1):
            if costs[i].time(alloc[i] + extra) < cur * (1 - 1e-9):
                step = extra
                break
        if step is None:
            break
        alloc[i] += step
        free -= step
    return alloc


@dataclass(frozen=True)
class AllocateSMsPass(ModulePass):
    """Assign program-id ranges (SMs) to the stages of each gpu_queue kernel, balancing the pipeline."""

    name = "kitsune-allocate-sms"

    gpu: str = "h100"
    """GPU preset (and FIELD=VALUE overrides, e.g. 'h100,sm_count=66')."""
    report: bool = False
    """Print the allocation per kernel to stderr."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        gpu = parse_gpu_option(self.gpu)
        for prog in [o for o in op.walk() if isinstance(o, gq.ProgramOp)]:
            lines = []
            for k in prog.kernels():
                lines += allocate_kernel(k, gpu)
            if self.report:
                sys.stderr.write(f"kitsune-allocate-sms ({gpu.name}, {gpu.sm_count} SMs):\n" + "\n".join(lines)
                                 + "\n")


def allocate_kernel(k: gq.KernelOp, gpu: GPU) -> list[str]:
    stages = k.stages()
    if len(stages) > gpu.sm_count and k.attributes.get("placement") != StringAttr("temporal"):
        raise DiagnosticException(
            f"{fmt_loc(k)}'gpu_queue.kernel' \"{k.kernel_name}\" has {len(stages)} concurrent stages but "
            f"{gpu.name} has only {gpu.sm_count} SMs (each stage needs at least one); split the kernel "
            f"(convert-dataflow-to-gpu-queue does so for the GPU it is given)")
    needs = [stage_resources(s, gpu) for s in stages]
    depth, smems = pipeline_depth(stages, needs, gpu)
    warps = max(r.warps for r in needs)
    smem = max(smems)
    regs = max(r.regs_per_thread for r in needs)
    ctas = ctas_per_sm(warps, smem, gpu, regs)
    folded = [s for s in stages if s.fold() is not None]  # run on their partials' programs: none of their own
    stages = [s for s in stages if s.fold() is None]
    costs = [StageCost(s, gpu, ctas) for s in stages]
    if k.attributes.get("placement") == StringAttr("temporal"):
        return allocate_temporal(k, stages, costs, gpu, warps, smem, ctas, depth)
    alloc = allocate(costs, gpu.sm_count)
    lo = 0
    lines = []
    worst = 0.0
    # stages that exchange no tiles (bulk-sync) need no residency: a program per work item, and the hardware
    # hands SMs to whichever stage's CTAs are left (a static split trusted the cost model; a persistent loop
    # of few programs hid less latency). A lone gemm / gemv stage keeps its persistent grid (tuned so).
    # A lone TMA chain likewise: its weight ring runs on across a program's tiles.
    free = not k.queues() and (len(stages) > 1 or not persistent_template(stages[0]))
    for s, c, a in zip(stages, costs, alloc):
        n = c.tiles if free else max(1, min(a * ctas, c.tiles))
        s.set_pids(lo, lo + n)
        e = annotate(s, a, c.est(a))
        worst = max(worst, e.time_s)
        lines.append(f"  {k.kernel_name} stage \"{s.stage_name}\": {a} SMs, programs [{lo}, {lo + n}) for "
                     f"{c.tiles} tiles, {e.time_s * 1e6:.2f} us ({e.bound})")
        lo += n
    for s in folded:  # the last-arriving program of each group runs the group's tiles after its own
        p = next(q for q in stages if q.stage_name == s.fold()[0])
        s.set_pids(*p.pid_range())
        c = StageCost(s, gpu, ctas)
        e = annotate(s, 1, c.est(1))
        worst += e.time_s / max(1, c.tiles) * s.fold()[2]
        lines.append(f"  {k.kernel_name} stage \"{s.stage_name}\": folded into \"{p.stage_name}\" (groups of "
                     f"{s.fold()[1]} of its tiles, {s.fold()[2]} tile(s) each), {e.time_s * 1e6:.2f} us alone")
    launch(k, lo, warps, smem, ctas, worst, depth)
    head = (f" kernel \"{k.kernel_name}\": {len(stages)} stage(s), {sum(alloc)} of {gpu.sm_count} SMs, grid {lo}, "
            f"{warps} warps, {smem} B smem, {ctas} CTA/SM, est {worst * 1e6:.2f} us")
    return [head] + lines


def launch(k: gq.KernelOp, grid: int, warps: int, smem: int, ctas: int, est_s: float, depth: int) -> None:
    """Record a kernel's launch (grid, warps, shared memory), CTAs per SM, estimate and pipelining depth
    (``num_stages``) as its attributes."""
    k.set_launch(grid, warps, smem)
    k.attributes["ctas_per_sm"] = IntegerAttr(ctas, i64)
    k.attributes["est_us"] = FloatAttr(round(est_s * 1e6, 3), f64)
    k.attributes["num_stages"] = IntegerAttr(depth, i64)


def annotate(s: gq.StageOp, sms: int, e: cost.Estimate) -> cost.Estimate:
    """Record a stage's SMs, estimate and bound as its attributes; returns ``e``."""
    s.attributes["sms"] = IntegerAttr(sms, i64)
    s.attributes["est_us"] = FloatAttr(round(e.time_s * 1e6, 3), f64)
    s.attributes["bound"] = StringAttr(e.bound)
    return e


def depths_time(depths: list[list[StageCost]], gpu: GPU, ctas: int) -> float:
    """Seconds of a temporal kernel: the stages of one dependence depth run side by side, their FLOPs and bytes
    sharing the whole GPU over their summed work items; depths follow one another."""
    total = 0.0
    for costs in depths:
        fl: dict[str, int] = {}
        for c in costs:
            for key, f in c.fl.items():
                fl[key] = fl.get(key, 0) + f
        total += cost._kernel(fl, sum(c.bytes for c in costs), gpu, sum(c.tiles for c in costs), ctas,
                              False).time_s
    return total


def persistent_template(s: gq.StageOp) -> bool:
    """A stage whose programs loop over their work items (a grid of at most the resident CTAs): gemm and gemv
    (tuned so; a config with ``PER_ITEM`` not), and the chain template's TMA form (its weight ring streams
    on across a program's tiles)."""
    if s.template() in ("gemv", "gemm"):
        return not s.config().get("PER_ITEM", 0)
    return s.template() == "chain" and s.config().get("TMA", 0) == 1


def allocate_temporal(k: gq.KernelOp, stages: list[gq.StageOp], costs: list[StageCost], gpu: GPU, warps: int,
                      smem: int, ctas: int, num_stages: int) -> list[str]:
    """A temporal kernel: every stage gets a persistent grid over the SMs that make it faster (a stage alone),
    one program-id range after another in the stages' (topological) order; its time is the sum over dependence
    depths of the depth's stages sharing the GPU."""
    lo, lines = 0, []
    depth: dict[gq.StageOp, int] = {}
    producers = {o.owner for s in stages for o in s.ins if isinstance(o.owner, gq.StageOp)}
    for s, c in zip(stages, costs):
        depth[s] = max([depth[o.owner] + 1 for o in s.ins if o.owner in depth] or [0])
        a = allocate([c], gpu.sm_count)[0]
        # a stage that waits or signals is persistent: a program waits once and signals once, whatever number
        # of work items it runs (measured: 2048 one-item programs of a small GEMM paid 4.6x the item's time in
        # waits and fences); others as in a bulk-sync kernel (a program per work item, gemm / gemv persistent)
        persistent = s in producers or depth[s] > 0 or persistent_template(s)
        n = max(1, min(a * ctas, c.tiles)) if persistent else c.tiles
        s.set_pids(lo, lo + n)
        e = annotate(s, a, c.est(a))
        lines.append(f"  {k.kernel_name} stage \"{s.stage_name}\": programs [{lo}, {lo + n}) for {c.tiles} "
                     f"tiles (up to {a} SMs), {e.time_s * 1e6:.2f} us ({e.bound})")
        lo += n
    total = depths_time([[c for s, c in zip(stages, costs) if depth[s] == d] for d in sorted(set(depth.values()))],
                        gpu, ctas)
    launch(k, lo, warps, smem, ctas, total, num_stages)
    head = (f" kernel \"{k.kernel_name}\" (temporal): {len(stages)} stage(s) in order, grid {lo}, {warps} warps, "
            f"{smem} B smem, {ctas} CTA/SM, est {total * 1e6:.2f} us")
    return [head] + lines
