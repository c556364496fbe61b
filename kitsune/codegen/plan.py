"""The target-neutral plan of a ``gpu_queue.program``: what both code generators share.

From the gpu_queue IR this module derives, once, everything about a program that
does not depend on the target language:

* the **global tensors**: the function's arguments (inputs and parameters, in
  order), one buffer per kernel result, and non-splat constants; each with a
  Python-identifier name, shape and element type;
* per kernel, its **stages** (program-id range, tile, tile grid, which body
  values go to which global buffer, which are pushed into which queue, which
  queues are popped with which relation) and its **queues**;
* the **queue protocol's numbers** (see ``gpu_queue``): a queue of ``capacity``
  slots holds tile ``j`` in slot ``j % capacity``; per slot a *filled* and a
  *freed* counter (int32, in one counter array per program). With the run number
  ``e`` (the *epoch*), the push of tile ``j`` first waits until
  ``freed[s] >= (e * uses(s) + j // capacity) * readers``, stores the tile and
  release-increments ``filled[s]``; the pop waits (acquire) until
  ``filled[s] >= e * uses(s) + j // capacity + 1``, loads, and after the tile's
  work release-increments ``freed[s]``. ``uses(s)`` is how many tiles of one run
  land in slot ``s``; ``readers`` how many consumer tiles read each producer tile
  (1 for ``tile``, the consumer's column count for ``rows``, all its tiles for
  ``all``). Counters only grow, so nothing is reset between runs or CUDA-graph
  replays;
* the **counter layout**: the folded combines' group counters first (shared by all
  kernels), then per kernel whose stages or queues use counters (a temporal stage's
  done counter, a queue's slots, a split-K tile's arrivals) one *region* that starts
  with the kernel's ticket counter, then the tickets of the other kernels. Counter
  indices in a kernel's stages and queues count from its region's start
  (``Kernel.ticket``), so the kernels of identical layers have the same numbers, hence
  the same code.

``capacity="all"`` gives every queue one slot per tile: the sequential Triton
interpreter, which runs programs one by one in id order, then never waits on a
slot to be freed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, SSAValue

from kitsune.dialects.graph import fmt_loc
from kitsune.dialects.gpu_queue import KernelOp, PopOp, ProgramOp, StageOp, YieldOp
from kitsune.dialects.regions import grid_of, tensor_shape
from kitsune.dialects.scattered_results import scattered
from kitsune.dialects.sliced_results import slice_offsets
from kitsune.dialects.values import constant_value


WHOLE_LIMIT = 1 << 16
COUNTER_LINE = 32  # int32 counters per 128-byte L2 line
WAIT_CODE = 1 << 19
"""Error-flag codes from here up to the index checks' name a temporal wait whose debug watchdog fired."""


class CodegenError(Exception):
    """The program cannot be generated (names the op, its location and what to do)."""


def dtype_key(elem: Attribute) -> str:
    """'f32', 'bf16', 'f16', 'f64', 'i64', 'i32', 'i16', 'i8' or 'i1'."""
    if isinstance(elem, Float32Type):
        return "f32"
    if isinstance(elem, BFloat16Type):
        return "bf16"
    if isinstance(elem, Float16Type):
        return "f16"
    if isinstance(elem, Float64Type):
        return "f64"
    if isinstance(elem, IntegerType):
        return f"i{elem.width.data}"
    raise CodegenError(f"no code generation for element type {elem}")


def is_float(dt: str) -> bool:
    return dt.startswith("f") or dt == "bf16"


ELEM_BYTES = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "i1": 1}


# Names the generated Triton module binds itself (kitsune/codegen/triton_gen: the stage shell, the templates, the
# runtime text, its imports). A model's argument named like one of them (an input called ``t`` or ``pid``) would
# shadow it inside the kernels -- a syntax error, or silently wrong code -- so such a tensor gets another name
# (``reserved_name``); the user's label is unchanged.
_GENERATED_NAMES = frozenset("""
    a acc alpha arrived b bad base base64 cap code ctr epoch epoch_ptr err first gsz hi i io it j jj k ks kt l_run lo
    m m_new m_run mask n nb np nt o o_run off os p pid prof ptr qd readers row rows s sel sm t t_end t_start target
    tg ticket tl torch triton uses v val vt w gdc_wait gdc_launch_dependents cbase
""".split())
_GENERATED_PATTERN = re.compile(r"^(?:(?:v|acc|c|k|j|n|o|p|r|w)\d+(?:_raw)?|k\d+_.*|queue_.*|_.*|[A-Z][A-Z0-9_]*)$")


def reserved_name(s: str) -> bool:
    """Whether identifier ``s`` may clash with a name of the generated module (or Python's own)."""
    import builtins
    import keyword

    return (s in _GENERATED_NAMES or keyword.iskeyword(s) or keyword.issoftkeyword(s) or hasattr(builtins, s)
            or bool(_GENERATED_PATTERN.match(s)))


def ident(s: str) -> str:
    """A Python / C identifier from any label."""
    s = re.sub(r"[^0-9A-Za-z_]", "_", s)
    if not s or s[0].isdigit():
        s = "t_" + s
    return s


@dataclass
class Tensor:
    """A global tensor: a function argument, a kernel result buffer or a constant."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    role: str  # input | parameter | buffer | constant | workspace (fp32, zero between launches)
    label: str = ""
    value: np.ndarray | None = None  # constants
    order: tuple[int, ...] | None = None
    """Storage order (``kitsune.codegen.layouts``): the logical dims from outermost to innermost in memory, e.g.
    ``(0, 2, 3, 1)`` for an ``[n, c, h, w]`` tensor stored channels-last; None: row-major in its own dims."""
    view: tuple[str, int, int, tuple[int, ...]] | None = None
    """A slice of another buffer (``kitsune.codegen.concat_in_place``): (that buffer, dim, offset, its shape); the
    runtime passes ``buffer.narrow(dim, offset, size)``, addresses use the buffer's row-major strides."""

    @property
    def numel(self) -> int:
        return math.prod(self.shape) if self.shape else 1

    @property
    def row_major(self) -> bool:
        """Stored row-major in its own shape: neither reordered nor a view of another buffer."""
        return self.order is None and self.view is None

    def strides(self) -> list[int]:
        """Elements between neighbours along each logical dim."""
        if self.view is not None:
            return row_major_strides(self.view[3])
        if self.order is None:
            return row_major_strides(self.shape)
        phys = row_major_strides([self.shape[d] for d in self.order])
        out = [0] * len(self.shape)
        for pos, d in enumerate(self.order):
            out[d] = phys[pos]
        return out


def row_major_strides(shape: Sequence[int]) -> list[int]:
    """Row-major strides of ``shape`` (in elements)."""
    out, s = [], 1
    for d in reversed(shape):
        out.append(s)
        s *= d
    return out[::-1]


@dataclass
class Queue:
    name: str
    qid: int  # program-wide id (error reports name the queue by it)
    kernel: str
    shape: tuple[int, ...]  # the whole tensor the queue carries
    tile: tuple[int, ...]
    grid: tuple[int, ...]
    dtype: str
    capacity: int
    relation: str  # how the consumer pops: tile | rows | all
    readers: int  # consumer tiles reading each producer tile, per run
    producer: str
    consumer: str
    counter_base: int
    """filled[s] at counter_base + s, freed[s] at counter_base + capacity + s (from its kernel's ticket)."""

    @property
    def ntiles(self) -> int:
        return math.prod(self.grid) if self.grid else 1

    @property
    def tile_elems(self) -> int:
        return math.prod(self.tile) if self.tile else 1

    @property
    def storage(self) -> str:
        return ident(f"queue_{self.kernel}_{self.name}")

    @property
    def storage_elems(self) -> int:
        return self.capacity * self.tile_elems

    def uses(self, slot: int) -> int:
        """Tiles of one run that land in ``slot``."""
        return max(0, -(-(self.ntiles - slot) // self.capacity))


@dataclass
class Stage:
    op: StageOp
    name: str
    lo: int
    hi: int
    tile: tuple[int, ...]
    shape: tuple[int, ...]  # result #0's shape: the tiled iteration space
    grid: tuple[int, ...]
    args: dict[SSAValue, str]  # stage block argument -> global tensor name
    stores: list[tuple[SSAValue, str, bool]]
    """(body value, global buffer, whole): written tile by tile with the stage's tiles, or, for a result whose
    shape the stage's tiles do not divide alike (``whole``), all at once by the program of tile 0."""
    pushes: list[tuple[SSAValue, Queue]]
    pops: list[tuple[PopOp, Queue]]
    store_tiles: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Per stored buffer its tile: the stage's, or for a result of another shape one with as many tiles
    (tile ``t`` of the stage and tile ``t`` of that result are computed by the same program)."""
    template: str = "generic"
    config: dict[str, int] = field(default_factory=dict)
    split: int = 1
    """Programs sharing one tile's reduction (split-K): partial sums meet in ``workspace`` (fp32, one slice per
    part); ``ntiles`` counters from ``split_base`` (from its kernel's ticket) count each tile's arrivals (and for
    the Gluon gemm ``ntiles`` more its published slices: ``templates/gemm_tma.py``, ``combine``)."""
    workspace: str | None = None
    split_base: int = 0
    done: int | None = None
    """A temporal producer (a later stage of its kernel reads its results): the counter (from its kernel's
    ticket) its programs release-increment once each, after all their work items."""
    waits: list[tuple[int, int, str]] = field(default_factory=list)
    """A temporal consumer: per earlier stage of its kernel whose results it reads, (that stage's ``done``
    counter, its programs per run, its name); the stage's programs wait until every one has finished."""
    awaited: set[str] = field(default_factory=set)
    """Global buffers written by an earlier stage of this kernel (read only after the waits, through L2)."""
    fold: tuple[str, int, int] | None = None
    """A combine folded into its partial (``StageOp.fold``): (the partial's name, P, k). It has no programs:
    ``lo, hi`` are ``0, ntiles`` (its function, called with a tile index as ``pid``, runs that tile), and the
    program storing the last of a group's ``P`` partial tiles runs its tiles ``[g k, g k + k)``; the groups'
    arrival counters start at ``fold_base``."""
    fold_base: int = 0
    store_scatters: set[str] = field(default_factory=set)
    """Stored buffers that are scatter-accumulates of the stage's domain rows (``kitsune-fuse-scatters``): each
    tile adds its rows into them with atomics; the runtime zeroes them before the kernel."""
    store_offsets: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """Per stored buffer that is a slice of result #0 (``kitsune.dialects.sliced_results``): where it starts in
    result #0 per dim. Each tile stores the part of it inside the slice, at its index minus these offsets."""

    @property
    def ntiles(self) -> int:
        return math.prod(self.grid) if self.grid else 1

    @property
    def work_items(self) -> int:
        return self.ntiles * self.split

    @property
    def programs(self) -> int:
        return self.hi - self.lo


@dataclass
class Kernel:
    op: KernelOp
    name: str
    grid: int
    warps: int
    stages: list[Stage]
    queues: list[Queue]
    tensors: list[str]  # global tensors the kernel reads or writes, in argument order
    num_stages: int = 3  # software-pipelining depth of the launch (the deepest its stages' configs ask for)
    zero: list[str] = field(default_factory=list)  # buffers set to zero before each launch (scatter results)
    counters: int = 0
    """Size of the kernel's counter region (its ticket's line, its temporal stages' done counters, its queues'
    slots, its split-K tiles' arrivals); 0: the kernel has only a ticket."""
    ticket: int = 0
    """Index of its ticket counter: the start of its region (stage and queue counter indices count from here)."""


@dataclass
class Plan:
    module: ModuleOp
    args: list[str]  # the function's arguments (global tensor names), in order
    outputs: list[str]  # the function's results (global tensor names), in order
    tensors: dict[str, Tensor]
    kernels: list[Kernel]
    queues: list[Queue] = field(default_factory=list)
    counters: int = 0  # int32 counters in all (see the module doc: fold groups, kernel regions, tickets)
    fold_base: int = 0  # the folded combines' group counters (shared by all kernels)
    capacity: str = "ir"
    splits: bool = True
    mutates: list[tuple[int, str]] = field(default_factory=list)
    """(result position, argument tensor) of every buffer mutation (``kitsune.mutates``): after the kernels
    the argument holds that result (nothing to do when the result *is* the argument: an in-place update)."""
    forwarded: dict[str, str] = field(default_factory=dict)
    """Buffers updated in place whose other readers read the update forwarded (``forwarded``,
    ``kitsune-inplace-updates``) -> the kernel that writes the update. No read of such a buffer in another kernel
    sees a row the launch writes: early_loads may issue it before the kernel's wait."""

    def queue_by_id(self, qid: int) -> Queue:
        return self.queues[qid]


def _func(module: ModuleOp) -> func.FuncOp:
    fs = [o for o in module.ops if isinstance(o, func.FuncOp)]
    main = [f for f in fs if f.sym_name.data == "main"]
    if not fs:
        raise CodegenError("the module has no func.func to generate code for")
    return main[0] if main else fs[0]


def _program(f: func.FuncOp) -> ProgramOp:
    ops = list(f.body.blocks.first.ops)
    progs = [o for o in ops if isinstance(o, ProgramOp)]
    others = [o for o in ops if not isinstance(o, (ProgramOp, func.ReturnOp))]
    if len(progs) != 1 or others:
        what = others[0] if others else f
        raise CodegenError(
            f"{fmt_loc(what)}@{f.sym_name.data} must hold exactly one gpu_queue.program and a func.return "
            f"(found {len(progs)} program(s)" + (f" and '{others[0].name}'" if others else "") + "); lower it with "
            "kitsune-opt -p 'kitsune-pipeline' first")
    return progs[0]


def arg_label(f: func.FuncOp, i: int) -> tuple[str, str]:
    """(label, role) of argument ``i`` of ``f``: its ``kitsune.name`` (else ``arg<i>``), and "parameter" for a
    parameter, buffer or constant (uploaded once), else "input" (passed at every call)."""
    attrs = f.arg_attrs.data[i].data if f.arg_attrs else {}
    name = attrs.get("kitsune.name")
    kind = attrs.get("kitsune.kind")
    label = name.data if isinstance(name, StringAttr) else f"arg{i}"
    role = kind.data if isinstance(kind, StringAttr) else "input"
    return label, ("parameter" if role in ("parameter", "buffer", "constant") else "input")


def _arg_order(f: func.FuncOp, i: int) -> tuple[int, ...] | None:
    """A parameter argument's storage order given with it (``kitsune.order = "0,2,3,1"``: ``kitsune.schedule.isolate``
    stores a convolution's input as its program does), else None."""
    return _order_attr(f.arg_attrs.data[i].data if f.arg_attrs else {}, f, f"argument #{i}",
                       f.body.blocks.first.args[i].type)


def _order_attr(attrs, f: func.FuncOp, what: str, t) -> tuple[int, ...] | None:
    order = attrs.get("kitsune.order")
    if not isinstance(order, StringAttr):
        return None
    try:
        dims = tuple(int(d) for d in order.data.split(","))
    except ValueError:
        dims = ()
    if not isinstance(t, TensorType) or sorted(dims) != list(range(len(tensor_shape(t)))):
        raise CodegenError(f"{what} of @{f.sym_name.data}: kitsune.order {order.data!r} is not a permutation of "
                           f"its dims")
    return dims


def _readers(rel: str, q_grid: Sequence[int], cons: StageOp, split: int = 1) -> int:
    """Consumer work items reading each producer tile per run (every part of a split reduction reads it)."""
    cg = cons.grid()
    if rel == "tile":
        n = 1
    elif rel == "rows":
        n = cg[-1] if cg else 1
    else:
        n = math.prod(cg) if cg else 1
    return n * split


def build_plan(module: ModuleOp, capacity: str = "ir", splits: bool = True, layouts: bool = False) -> Plan:
    """The plan of @main's gpu_queue.program. ``capacity``: 'ir' (as lowered) or 'all' (one slot per tile).
    ``splits``: honour split reductions of stage configs (off: every tile is one work item, as the scalar
    reference backend runs them). ``layouts``: storage decisions -- orders of buffers and parameters
    (``kitsune.codegen.layouts``: channels-last convolution inputs, packed weights) and parts of a concatenation
    stored in its slices (``kitsune.codegen.concat_in_place``); off: every tensor row-major and its own."""
    if capacity not in ("ir", "all"):
        raise CodegenError(f"capacity must be 'ir' or 'all', got {capacity!r}")
    f = _func(module)
    prog = _program(f)
    tensors: dict[str, Tensor] = {}
    used: set[str] = set()

    def fresh(label: str, argument: bool = False) -> str:
        base = ident(label)
        if argument and reserved_name(base):
            base = f"arg_{base}"  # a model argument named like the generated code's own names
        n, k = base, 1
        while n in used:
            k += 1
            n = f"{base}_{k}"
        used.add(n)
        return n

    names: dict[SSAValue, str] = {}
    fargs = f.body.blocks.first.args
    arg_names: list[str] = []
    for i, a in enumerate(fargs):
        label, role = arg_label(f, i)
        n = fresh(label, argument=True)
        t = a.type
        if not isinstance(t, TensorType):
            raise CodegenError(f"argument #{i} of @{f.sym_name.data} is not a tensor")
        tensors[n] = Tensor(n, tensor_shape(t), dtype_key(t.get_element_type()), role, label)
        order = _arg_order(f, i)
        if layouts and role == "parameter" and order is not None:  # (an isolated task's operand: as its program)
            tensors[n].order = order
        names[a] = n
        arg_names.append(n)
    # program block args = program operands (function arguments or passthrough)
    pblock = prog.body.blocks.first
    for ba, operand in zip(pblock.args, prog.ins):
        if operand not in names:
            raise CodegenError(f"{fmt_loc(prog)}gpu_queue.program operand is not a function argument")
        names[ba] = names[operand]

    plan = Plan(module, arg_names, [], tensors, [], capacity=capacity)
    plan.splits = splits
    # the folded combines' group counters: one region all kernels share (kernels run one after another and the
    # last arrival of a group resets its counter), so kernels of the same code keep the same code
    groups = [s.num_tiles() // s.fold()[2] for k in prog.kernels() for s in k.stages() if s.fold() is not None]
    if groups:
        plan.counters = -(-max(groups) // COUNTER_LINE) * COUNTER_LINE
    for kop in prog.kernels():
        kernel = _plan_kernel(kop, names, tensors, fresh, plan)
        plan.kernels.append(kernel)
        if kernel.counters:  # its region, on lines of its own
            kernel.ticket = -(-plan.counters // COUNTER_LINE) * COUNTER_LINE
            plan.counters = kernel.ticket + kernel.counters
    for kernel in plan.kernels:
        if not kernel.counters:
            kernel.ticket = plan.counters
            plan.counters += 1
    if plan.counters >= WAIT_CODE:  # a watchdog's error code names a counter (kitsune.codegen.triton_gen.module)
        raise CodegenError(f"the program needs {plan.counters} counters; at most {WAIT_CODE - 1} are supported")
    py = pblock.last_op
    assert isinstance(py, YieldOp)
    pouts = [names[v] for v in py.operands]
    ret = f.body.blocks.first.last_op
    outs = []
    for v in ret.operands:
        if isinstance(v.owner, ProgramOp):
            outs.append(pouts[v.index])
        elif v in names:
            outs.append(names[v])
        else:
            raise CodegenError(f"{fmt_loc(ret)}func.return operand is neither a program result nor an argument")
    plan.outputs = outs
    for i, n in enumerate(outs):  # a result's storage order given with it (an isolated task's, as its program's)
        order = _order_attr(f.res_attrs.data[i].data if f.res_attrs else {}, f, f"result #{i}",
                            f.function_type.outputs.data[i])
        if layouts and order is not None and tensors[n].role == "buffer":
            tensors[n].order = order
    from kitsune.interpreter import mutated_results

    by_label = {t.label: n for n, t in tensors.items() if n in arg_names}
    for i, buf in sorted(mutated_results(f).items()):
        if buf not in by_label:
            raise CodegenError(f"{fmt_loc(ret)}result #{i} of @{f.sym_name.data} updates buffer {buf!r}, which is "
                               f"not an argument of the function")
        plan.mutates.append((i, by_label[buf]))
    if layouts:
        from kitsune.codegen.concat_in_place import elide_concat_copies
        from kitsune.codegen.layouts import choose_storage_orders
        from kitsune.codegen.row_pitch import pad_row_pitches

        choose_storage_orders(plan)
        elide_concat_copies(plan)
        pad_row_pitches(plan)
    return plan


def _plan_kernel(kop: KernelOp, names: dict[SSAValue, str], tensors: dict[str, Tensor], fresh, plan: Plan) -> Kernel:
    kblock = kop.body.blocks.first
    for ba, operand in zip(kblock.args, kop.ins):
        names[ba] = names[operand]
    # kernel results -> fresh buffers; the result of an in-place update is the mutated buffer itself
    ky = kblock.last_op
    assert isinstance(ky, YieldOp)
    in_place: dict[SSAValue, str] = {}  # result #0 of an in-place update's stage -> the buffer it writes
    for s in kop.stages():
        k = in_place_operand(s)
        if k is not None:
            in_place[s.outs[0]] = names[s.ins[k]]
            if _update_op(s).attrs().get("forwarded"):
                plan.forwarded[names[s.ins[k]]] = kop.kernel_name
    result_buffers: dict[SSAValue, list[str]] = {v: [buf] for v, buf in in_place.items()}
    for i, (r, v) in enumerate(zip(kop.outs, ky.operands)):
        if isinstance(v.owner, Block):  # a kernel that passes an input through
            names[r] = names[v]
            continue
        if v in in_place:
            names[r] = in_place[v]
            continue
        n = fresh(f"{kop.kernel_name}_out{i}")
        tensors[n] = Tensor(n, tensor_shape(r.type), dtype_key(r.type.get_element_type()), "buffer",
                            f"{kop.kernel_name} result #{i}")
        names[r] = n
        result_buffers.setdefault(v, []).append(n)
    qops = kop.queues()
    stages = kop.stages()
    # temporal dependences: a stage's operand that is an earlier stage's result lives in a global buffer (the
    # kernel result's, when it is one too) that the producer writes and the consumer reads after its waits
    producers: dict[StageOp, list[StageOp]] = {}
    for s in stages:
        for o in s.ins:
            p = o.owner
            if isinstance(p, StageOp):
                if p not in producers.setdefault(s, []):
                    producers[s].append(p)
                if o not in result_buffers:
                    n = fresh(f"{kop.kernel_name}_{p.stage_name}_out{o.index}")
                    tensors[n] = Tensor(n, tensor_shape(o.type), dtype_key(o.type.get_element_type()), "buffer",
                                        f"{kop.kernel_name} stage {p.stage_name} result #{o.index}")
                    result_buffers[o] = [n]
                names[o] = result_buffers[o][0]
    # the kernel's own counters, counted from its ticket (the first of its region's lines)
    own = COUNTER_LINE
    done_counter: dict[StageOp, int] = {}
    waiting = 0
    for s in stages:
        if s.fold() is not None:  # runs on its partial's programs after the partial's tiles: nothing to wait on
            continue
        waiting += bool(producers.get(s))
        for p in producers.get(s, []):
            if p not in done_counter:
                # one 128-byte line per counter: the programs polling it do not slow the atomics on others
                # (the ticket counters, other stages' counters)
                done_counter[p] = own
                own += COUNTER_LINE
    pushed_by: dict[str, StageOp] = {}
    popped_by: dict[str, tuple[StageOp, str]] = {}
    for s in stages:
        for p in s.pushes():
            pushed_by[p.queue_name] = s
        for p in s.pops():
            popped_by[p.queue_name] = (s, p.rel)
    queues: dict[str, Queue] = {}
    for qn, qop in qops.items():
        if qn not in popped_by:
            continue  # pushed, never popped: nothing waits on it
        cons, rel = popped_by[qn]
        prod = pushed_by[qn]
        grid = qop.grid()
        ntiles = math.prod(grid) if grid else 1
        cap = ntiles if plan.capacity == "all" else min(qop.cap(), ntiles)
        need = {"tile": 1, "rows": grid[-1] if grid else 1, "all": ntiles}[rel]
        if cap < need:
            raise CodegenError(
                f"{fmt_loc(qop)}gpu_queue.queue \"{qn}\" has capacity {qop.cap()} but its consumer stage "
                f"\"{cons.stage_name}\" pops with relation \"{rel}\", which holds {need} tiles at once: the "
                f"kernel would deadlock; give the queue at least {need} slots")
        if tuple(qop.tile_sizes()) != tuple(prod.tile_sizes()) or grid != prod.grid():
            raise CodegenError(
                f"{fmt_loc(qop)}gpu_queue.queue \"{qn}\" has tile {list(qop.tile_sizes())} but its producer stage "
                f"\"{prod.stage_name}\" computes tiles {list(prod.tile_sizes())}; code generation needs them equal")
        q = Queue(qn, len(plan.queues), kop.kernel_name, tensor_shape(qop.tensor_type), tuple(qop.tile_sizes()),
                  tuple(grid), dtype_key(qop.tensor_type.get_element_type()), cap, rel,
                  _readers(rel, grid, cons, cons.split() if plan.splits else 1), prod.stage_name, cons.stage_name,
                  own)
        own += 2 * cap
        plan.queues.append(q)
        queues[qn] = q
    splans: list[Stage] = []
    zero: list[str] = []  # scatter results, added into: zeroed before each launch
    for s in sorted(stages, key=lambda s: s.pid_range()):
        body = s.body.blocks.first
        args = {ba: names[o] for ba, o in zip(body.args, s.ins)}
        sy = body.last_op
        stores = []
        store_tiles: dict[str, tuple[int, ...]] = {}
        ntiles = math.prod(s.grid()) if s.grid() else 1
        store_offsets: dict[str, tuple[int, ...]] = {}
        scatters: set[str] = set()
        for r, v in zip(s.outs, sy.operands):
            sliced = slice_offsets(v, sy.operands[0])
            for buf in result_buffers.get(r, []):
                shp = tensor_shape(r.type)
                if sliced is not None or scattered(v, sy.operands[0]):
                    # written from the domain's tiles: shifted (kitsune.dialects.sliced_results), or each tile
                    # adding its rows (kitsune.dialects.scattered_results)
                    if sliced is not None:
                        store_offsets[buf] = sliced
                    else:
                        scatters.add(buf)
                    store_tiles[buf] = tuple(s.tile_sizes())
                    stores.append((v, buf, False))
                    continue
                tile = store_tile(s, shp)
                whole = tile is None
                store_tiles[buf] = tuple(shp) if whole else tile
                if whole and math.prod(shp) > WHOLE_LIMIT:
                    raise CodegenError(
                        f"{fmt_loc(s)}gpu_queue.stage \"{s.stage_name}\": result {buf} has shape {list(shp)}, "
                        f"which the stage's tiles {list(s.tile_sizes())} do not cover like result #0, and it is too "
                        f"large ({math.prod(shp)} elements > {WHOLE_LIMIT}) to write in one piece; split the stage")
                stores.append((v, buf, whole))
        pushes = [(p.operands[0], queues[p.queue_name]) for p in s.pushes() if p.queue_name in queues]
        pops = [(p, queues[p.queue_name]) for p in s.pops()]
        lo, hi = s.pid_range()
        st = Stage(s, s.stage_name, lo, hi, tuple(s.tile_sizes()), tensor_shape(s.outs[0].type),
                   tuple(s.grid()), args, stores, pushes, pops, store_tiles, s.template(), s.config(),
                   s.split() if plan.splits else 1)
        st.store_offsets = store_offsets
        st.store_scatters = scatters
        zero += sorted(scatters)  # (added into with atomics: zero before the kernel)
        st.done = done_counter.get(s)
        for p in producers.get(s, []):
            st.awaited |= {names[o] for o in s.ins if o.owner is p}
            if s.fold() is None:
                plo, phi = p.pid_range()
                st.waits.append((done_counter[p], phi - plo, p.stage_name))
        if s.fold() is not None:
            st.fold = s.fold()
            st.lo, st.hi = 0, st.ntiles
            st.fold_base = plan.fold_base
        if st.template == "scatter" and plan.splits:
            if st.pushes or any(whole for _, _, whole in st.stores):
                raise CodegenError(f"{fmt_loc(s)}gpu_queue.stage \"{s.stage_name}\": a scatter stage's result "
                                   f"must go to a global buffer (its consumers read it whole)")
            if s.outs[0] not in in_place:  # an in-place store writes into the buffer as it is
                zero += [b for _, b, _ in st.stores]
        elif st.split > 1:
            ws = fresh(f"{kop.kernel_name}_{s.stage_name}_partials")
            # (one slice a part: the Gluon gemm's last part stores none, but a Gluon config whose form does not apply
            # after all, under Triton's interpreter say, is the Triton form of the same split, which stores all)
            tensors[ws] = Tensor(ws, (st.split,) + tuple(st.shape), "f32", "workspace",
                                 f"split-K partial sums of {s.stage_name}")
            st.workspace = ws
            st.split_base = own
            # a tile's arrivals; the Gluon gemm's parts also publish their slices on a second counter a tile
            own += st.ntiles * (2 if st.template == "gemm" and int(st.config.get("GLUON", 0)) else 1)
        splans.append(st)
    order: list[str] = []
    for st in splans:
        for n in list(st.args.values()) + [b for _, b, _ in st.stores] + ([st.workspace] if st.workspace else []):
            if n not in order:
                order.append(n)
    # (kitsune-allocate-sms decides it: the deepest the stages ask for that fits every stage's shared memory)
    depth = kop.attributes.get("num_stages")
    stages_depth = depth.value.data if depth is not None else max([st.config.get("stages", 3) for st in splans] or [3])
    # a region at least as long as the kernel's waiting stages: their watchdog codes count from its ticket too
    counters = max(own, waiting) if own > COUNTER_LINE else 0
    return Kernel(kop, kop.kernel_name, kop.grid_size(), kop.num_warps(), splans, list(queues.values()), order,
                  stages_depth, zero, counters)


def _update_op(stage):
    """The op that yields ``stage``'s result #0, or None."""
    body = stage.body.blocks.first
    return body.last_op.operands[0].owner if body.last_op.operands else None


def in_place_operand(stage) -> int | None:
    """The operand of ``stage`` whose storage its result #0 takes: the buffer of an ``in_place`` update
    (``kitsune-inplace-updates``) that is the stage's first result; None for any other stage."""
    if not isinstance(stage, StageOp):
        return None
    from kitsune.dialects.graph import GraphOp

    body = stage.body.blocks.first
    op = _update_op(stage)
    if not isinstance(op, GraphOp) or not op.attrs().get("in_place"):
        return None
    x = op.operands[0]
    if not isinstance(x.owner, Block) or x.owner is not body:
        raise CodegenError(f"{fmt_loc(op)}{op.name} in_place: its x operand must be an operand of the stage (the "
                           f"buffer it writes into), not a value computed in it")
    return x.index


def store_tile(op, shape: Sequence[int]) -> tuple[int, ...] | None:
    """The tile a result of ``shape`` of a stage or task ``op`` is stored with: ``op``'s own where the grids
    agree, else one with as many tiles (tile ``t`` of it is written by the program of ``op``'s tile ``t``), or
    None (written whole)."""
    tile = tuple(op.tile_sizes())
    if len(tile) == len(shape) and grid_of(shape, tile) == tuple(op.grid()):
        return tile
    return matching_tile(shape, op.num_tiles())


def matching_tile(shape: Sequence[int], ntiles: int) -> tuple[int, ...] | None:
    """A tile of ``shape`` with exactly ``ntiles`` tiles (splitting leading dims), or None."""
    lead = 1
    for k, d in enumerate(shape):
        if lead == ntiles:
            return tuple([1] * k + list(shape[k:]))
        rest = ntiles // lead if ntiles % lead == 0 else 0
        if rest and d % rest == 0 and rest <= d:
            return tuple([1] * k + [d // rest] + list(shape[k + 1:]))
        lead *= d
    return tuple([1] * len(shape)) if lead == ntiles else None


def constant_array(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    return constant_value(attr)


__all__ = ["CodegenError", "Plan", "Kernel", "Stage", "Queue", "Tensor", "build_plan", "dtype_key", "is_float",
           "store_tile", "ident", "ELEM_BYTES", "constant_array"]
