"""A roofline cost model over graph ops, driven by the op table's counts.

Every number comes from ``kitsune.semantics.optable``: FLOPs and the fewest
elements each operand must be read / each result written (a gather reads only
the gathered rows). The model:

* **math class** of an op: contractions (matmul, linear, conv2d, attention) in
  bf16 / f16 run on tensor cores (``gpu.tc_bf16_flops``), fp8 at
  ``tc_fp8_flops``, fp32 at the CUDA-core rate ``fp32_flops`` (or
  ``tc_tf32_flops`` with ``tf32=True``); every other category (elementwise,
  reduction, normalization, gather, layout) at ``fp32_flops`` (the math is
  done in fp32 after widening); f64 at ``fp64_flops``.
* **one kernel** (an op alone, or a fused group = a task):
  ``compute_s = sum_class flops_class / peak_class / eff``,
  ``memory_s = bytes / min(dram_bw, active_sms * sm_dram_bw)``,
  ``time_s = max(compute_s, memory_s) + launch_overhead_s``.
  Without a tile count the kernel is assumed to fill the GPU (``eff = 1``, all
  SMs stream). With ``tiles`` (CTAs of the kernel) and ``ctas_per_sm``:
  ``slots = sm_count * ctas_per_sm``, ``waves = ceil(tiles / slots)``,
  ``eff = tiles / (waves * slots)`` (wave quantization and under-filled grids),
  ``active_sms = min(sm_count, ceil(tiles / ctas_per_sm))``.
  ``bound`` is 'compute' or 'memory' (the larger term), or 'launch' when the
  launch overhead exceeds both.
* **a task's bytes** are only what crosses its boundary: each value from
  outside the group read once (the op-level fewest read, summed over the
  group's uses and capped at the value's size) and each result used outside
  the group written once; values produced and consumed inside stay on chip.
  ``graph.reshape`` is a view: it moves nothing and is looked through.
* **roofline floor** of a function: ``max(compute floor, bytes floor)`` with
  ``bytes floor = fewest bytes / dram_bw``; fewest bytes = every function
  argument (weights included) read once -- only the elements its users read
  when that is less (gathered embedding rows, slices) -- plus non-splat
  constants, plus every returned value written once (an argument returned
  unchanged moves nothing). Compute floor = max over math classes of
  ``flops_class / peak_class`` (CUDA cores and tensor cores overlap, so it is a
  lower bound); with bf16 contractions dominating this is total FLOPs / tensor
  peak, the figure in WORKLOADS.md.

The per-op total in :func:`report` (sum of per-op times) is the one-kernel-
per-op, bulk-synchronous estimate: a ceiling to compare with the floor.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    TensorType,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from kitsune.gpu import GPU, get_gpu

# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class Estimate:
    """Time of one kernel (op or task), or of a function's roofline floor."""

    flops: int
    bytes: int
    compute_s: float
    memory_s: float
    time_s: float
    bound: str  # compute | memory | launch
    launch_s: float = 0.0
    waves: int | None = None
    efficiency: float = 1.0
    flops_by_class: dict[str, int] = field(default_factory=dict, compare=False)

    @property
    def us(self) -> float:
        return self.time_s * 1e6


# ------------------------------------------------------------------ helpers


def _is_graph(op: Operation) -> bool:
    return hasattr(op, "OPDEF") and hasattr(op, "counts")


def _is_view(op: Operation) -> bool:
    return _is_graph(op) and op.OPDEF.name == "reshape"


def _is_constant(op: Operation) -> bool:
    return (_is_graph(op) and op.OPDEF.name == "constant") or op.name == "arith.constant"


def _elem(t: Attribute) -> Attribute:
    return t.get_element_type() if isinstance(t, TensorType) else t


def value_bytes(v: SSAValue) -> int:
    """Bytes of a (static-shaped) tensor value; dynamic dims count as 1."""
    from kitsune.dialects.graph import elem_bytes

    t = v.type
    if not isinstance(t, TensorType):
        return 0
    n = 1
    for d in t.get_shape():
        n *= max(d, 1)
    return n * elem_bytes(t)


def _is_fp8(e: Attribute) -> bool:
    return type(e).__name__.startswith("Float8")


def math_class(op: Operation, tf32: bool = False) -> str:
    """The GPU math class an op's FLOPs run at (a key of ``GPU.peak``): the first float operand decides."""
    et = None
    for o in op.operands:
        e = _elem(o.type)
        if isinstance(e, (BFloat16Type, Float16Type, Float32Type, Float64Type)) or _is_fp8(e):
            et = e
            break
    if isinstance(et, Float64Type):
        return "fp64"
    if _is_graph(op) and op.OPDEF.category == "contraction":
        if isinstance(et, (BFloat16Type, Float16Type)):
            return "tc_bf16"
        if et is not None and _is_fp8(et):
            return "tc_fp8"
        return "tc_tf32" if tf32 else "fp32"
    return "fp32"


def operand_read_bytes(op: Operation) -> list[int]:
    """Per operand: the fewest bytes the op must read of it (gathers: only the gathered rows)."""
    from kitsune.dialects.graph import elem_bytes
    from kitsune.semantics import optable

    if not _is_graph(op):
        return [value_bytes(o) for o in op.operands]
    od = op.OPDEF
    if od.layout:
        return [0 for _ in op.operands]  # reshape: a view; constant: no operands
    _, reads, _ = optable.moved_elems(od, op.operand_shapes(), op.attrs())
    return [n * elem_bytes(o.type) for n, o in zip(reads, op.operands)]


def _kernel(flops_by_class: dict[str, int], nbytes: int, gpu: GPU, tiles: int | None, ctas_per_sm: int,
            launch: bool) -> Estimate:
    eff, waves, bw = 1.0, None, gpu.dram_bw
    if tiles is not None:
        tiles = max(int(tiles), 1)
        slots = gpu.sm_count * max(ctas_per_sm, 1)
        waves = math.ceil(tiles / slots)
        eff = tiles / (waves * slots)
        active = min(gpu.sm_count, math.ceil(tiles / max(ctas_per_sm, 1)))
        bw = min(gpu.dram_bw, active * gpu.sm_dram_bw)
    compute = sum(f / gpu.peak(k) for k, f in flops_by_class.items()) / eff
    memory = nbytes / bw
    launch_s = gpu.launch_overhead_s if launch else 0.0
    body = max(compute, memory)
    bound = "launch" if launch_s > body else ("compute" if compute >= memory else "memory")
    return Estimate(sum(flops_by_class.values()), nbytes, compute, memory, body + launch_s, bound, launch_s, waves,
                    eff, dict(flops_by_class))


# ------------------------------------------------------------------ API


def estimate_op(op: Operation, gpu: GPU | str = "h100", *, tiles: int | None = None, ctas_per_sm: int = 1,
                tf32: bool = False, launch: bool = True) -> Estimate:
    """One graph op as its own kernel: FLOPs and fewest bytes from ``op.counts()``."""
    gpu = get_gpu(gpu)
    if not _is_graph(op):
        raise TypeError(f"estimate_op needs a graph op, got '{op.name}'")
    c = op.counts()
    return _kernel({math_class(op, tf32): c.flops} if c.flops else {}, c.bytes, gpu, tiles, ctas_per_sm, launch)


def _root(v: SSAValue, group: set[Operation]) -> SSAValue:
    """Look through reshapes (views) inside the group."""
    while isinstance(v.owner, Operation) and v.owner in group and _is_view(v.owner):
        v = v.owner.operands[0]
    return v


def _escapes(v: SSAValue, group: set[Operation]) -> bool:
    for use in v.uses:
        user = use.operation
        if user not in group:
            return True
        if _is_view(user) and _escapes(user.results[0], group):
            return True
    return False


def task_bytes(ops: Iterable[Operation]) -> tuple[int, int]:
    """(bytes read, bytes written) of a group of ops fused into one kernel."""
    ops = list(ops)
    group = {op for op in ops if not _is_constant(op)}
    reads: dict[SSAValue, int] = {}
    written = 0
    for op in ops:
        if op not in group or _is_view(op):
            continue
        per = operand_read_bytes(op)
        for o, b in zip(op.operands, per):
            v = _root(o, group)
            owner = v.owner
            if isinstance(owner, Operation) and owner in group:
                continue  # produced inside the group: stays on chip
            reads[v] = reads.get(v, 0) + b
        for r in op.results:
            if _escapes(r, group):
                written += written_bytes(r)
    read = sum(min(b, value_bytes(v)) for v, b in reads.items())
    return read, written


def written_bytes(v: SSAValue) -> int:
    """Bytes that storing value ``v`` writes: all of it, but for an in-place update only the source's slices."""
    op = v.owner
    if _is_graph(op) and op.attrs().get("in_place"):
        return op.counts().bytes_written
    return value_bytes(v)


def estimate_task(ops: Sequence[Operation], gpu: GPU | str = "h100", tiles: int | None = None, *,
                  ctas_per_sm: int = 1, tf32: bool = False, launch: bool = True) -> Estimate:
    """A group of graph ops fused into one kernel (see the module doc for the formulas)."""
    gpu = get_gpu(gpu)
    fl: dict[str, int] = {}
    for op in ops:
        if _is_graph(op):
            f = op.counts().flops
            if f:
                k = math_class(op, tf32)
                fl[k] = fl.get(k, 0) + f
    r, w = task_bytes(ops)
    return _kernel(fl, r + w, gpu, tiles, ctas_per_sm, launch)


def _func_body_ops(func_op: Operation) -> list[Operation]:
    return [op for op in func_op.walk() if op is not func_op]


def _read_through(v: SSAValue) -> int:
    """The fewest bytes of ``v`` its users must read (views looked through), capped at its size."""
    full = value_bytes(v)
    total = 0
    for use in v.uses:
        user = use.operation
        if _is_view(user):
            total += _read_through(user.results[0])
        elif _is_graph(user) and use.index == 0 and user.attrs().get("in_place"):
            total += _read_through(user.results[0])  # x is the result's storage: its readers read x
        elif _is_graph(user):
            total += operand_read_bytes(user)[use.index]
        elif user.name in ("func.return", "func.Return"):
            continue  # returned unchanged: no movement for the read
        elif user.name in ("dataflow.graph", "dataflow.task") and user.regions and user.regions[0].blocks:
            # look through to the block argument that mirrors this operand
            total += _read_through(user.regions[0].blocks.first.args[use.index])
        elif user.name == "dataflow.channel":
            total += _read_through(user.results[0])
        elif user.name == "dataflow.yield":
            continue
        else:
            return full  # unknown user (a task, a call): assume it reads everything
        if total >= full:
            return full
    return min(total, full)


def fewest_bytes(func_op: Operation) -> int:
    """Fewest bytes a function must move: inputs read once (gathers: the gathered rows), outputs written once."""
    total = 0
    block = func_op.regions[0].blocks.first if func_op.regions and func_op.regions[0].blocks else None
    if block is not None:
        for a in block.args:
            total += _read_through(a)
    seen: set[SSAValue] = set()
    for op in _func_body_ops(func_op):
        if _is_constant(op):
            val = op.properties.get("value") or op.attributes.get("value")
            splat = isinstance(val, DenseIntOrFPElementsAttr) and val.is_splat()
            if not splat:
                total += sum(min(_read_through(r), value_bytes(r)) for r in op.results)
        elif op.name == "func.return" and op.parent_op() is func_op:
            for v in op.operands:
                if v in seen or isinstance(v, BlockArgument):
                    continue
                seen.add(v)
                total += written_bytes(v)
    return total


def roofline_floor(func_op: Operation, gpu: GPU | str = "h100", *, tf32: bool = False) -> Estimate:
    """The physical floor of a whole function: max(compute floor, fewest bytes / dram_bw)."""
    gpu = get_gpu(gpu)
    fl: dict[str, int] = {}
    for op in _func_body_ops(func_op):
        if _is_graph(op):
            f = op.counts().flops
            if f:
                k = math_class(op, tf32)
                fl[k] = fl.get(k, 0) + f
    nbytes = fewest_bytes(func_op)
    compute = max((f / gpu.peak(k) for k, f in fl.items()), default=0.0)
    memory = nbytes / gpu.dram_bw
    bound = "compute" if compute >= memory else "memory"
    return Estimate(sum(fl.values()), nbytes, compute, memory, max(compute, memory), bound, flops_by_class=fl)


# ------------------------------------------------------------------ report


def _label(op: Operation) -> str:
    names = [r.name_hint for r in op.results if r.name_hint]
    return ("%" + names[0] + " = " if names else "") + op.name


def _fmt_bytes(b: float) -> str:
    return f"{b / 1e6:.3f}"


def _task_key(op: Operation):
    a = op.attributes.get("kitsune.task")
    if a is None:
        return None
    return getattr(a, "data", None) if not hasattr(a, "value") else a.value.data


def estimates(func_op: Operation, gpu: GPU | str = "h100", *, tf32: bool = False
              ) -> list[tuple[str, list[Operation], Estimate]]:
    """Per kernel of a bulk-synchronous schedule: one per graph op (reshapes and constants are free), one per
    ``dataflow.task`` (its body fused with :func:`estimate_task`, its tile count for the wave term; the row's op
    list is ``[task]``), or one per ``kitsune.task`` attribute value for ops that carry one."""
    gpu = get_gpu(gpu)
    out: list[tuple[str, list[Operation], Estimate]] = []
    tasks: dict[object, list[Operation]] = {}
    for op in _func_body_ops(func_op):
        if op.name == "dataflow.task":
            # one kernel (or stage) per dataflow task: its body fused, tiled as the task says
            body = [o for o in op.walk() if o is not op and _is_graph(o)]
            tiles = op.num_tiles() if hasattr(op, "num_tiles") else None
            label = f"task {op.sym_name.data} ({op.task_kind})" if hasattr(op, "task_kind") else op.name
            out.append((label, [op], estimate_task(body, gpu, tiles, tf32=tf32)))
            continue
        if not _is_graph(op) or (op.parent_op() is not None and op.parent_op().name == "dataflow.task"):
            continue
        key = _task_key(op)
        if key is not None:
            if key not in tasks:
                tasks[key] = []
                out.append((f"task {key}", tasks[key], None))  # type: ignore[arg-type]
            tasks[key].append(op)
            continue
        if op.OPDEF.layout:
            continue
        out.append((_label(op), [op], estimate_op(op, gpu, tf32=tf32)))
    return [(n, ops, e if e is not None else estimate_task(ops, gpu, tf32=tf32)) for n, ops, e in out]


def report(func_op: Operation, gpu: GPU | str = "h100", *, tf32: bool = False) -> str:
    """A readable table: per op (or task) the estimate, then totals and the roofline floor."""
    gpu = get_gpu(gpu)
    rows = estimates(func_op, gpu, tf32=tf32)
    name = func_op.properties.get("sym_name") or func_op.attributes.get("sym_name")
    fname = f"@{name.data}" if name is not None else func_op.name
    lines = [f"kitsune-estimate {fname} on {gpu.describe()}"]
    hdr = f"{'#':>3}  {'op / task':<34} {'GFLOP':>10} {'MB':>10} {'comp_us':>9} {'mem_us':>9} {'est_us':>9}  bound"
    lines += [hdr, "-" * len(hdr)]
    tf = tb = tt = 0.0
    for i, (label, _ops, e) in enumerate(rows):
        lines.append(f"{i:>3}  {label[:34]:<34} {e.flops / 1e9:>10.4f} {_fmt_bytes(e.bytes):>10} "
                     f"{e.compute_s * 1e6:>9.2f} {e.memory_s * 1e6:>9.2f} {e.time_s * 1e6:>9.2f}  {e.bound}")
        tf += e.flops
        tb += e.bytes
        tt += e.time_s
    lines.append("-" * len(hdr))
    lines.append(f"{'':>3}  {'total (one kernel each)':<34} {tf / 1e9:>10.4f} {_fmt_bytes(tb):>10} "
                 f"{'':>9} {'':>9} {tt * 1e6:>9.2f}  {len(rows)} kernels")
    fl = roofline_floor(func_op, gpu, tf32=tf32)
    lines.append(f"{'':>3}  {'roofline floor':<34} {fl.flops / 1e9:>10.4f} {_fmt_bytes(fl.bytes):>10} "
                 f"{fl.compute_s * 1e6:>9.2f} {fl.memory_s * 1e6:>9.2f} {fl.time_s * 1e6:>9.2f}  {fl.bound}")
    if tt > 0:
        lines.append(f"     floor / estimate = {fl.time_s / tt:.1%}")
    return "\n".join(lines) + "\n"
