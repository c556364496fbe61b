"""The ``gpu_queue`` dialect: persistent kernels, SM-partitioned stages and tile queues.

A ``gpu_queue.program`` is the machine mapping of one ``dataflow.graph``: a list of
**kernels** (one launch each, run in order) and a **launch plan**. A kernel is a
persistent grid of ``grid`` programs (CTAs) with ``warps`` warps and ``smem`` bytes
of shared memory each; its program ids are partitioned into **stages**. A stage is
a task of the dataflow graph: a body of graph ops in value semantics computing its
*whole* outputs (as in ``dataflow.task``), its output tile sizes and its
half-open program-id range ``pids [lo, hi)``; program ``p`` computes tiles
``p - lo, p - lo + n, ...`` (``n = hi - lo``, tiles in row-major order). Stages of
one kernel run concurrently on disjoint programs (SMs); they exchange tiles only
through **queues**::

    %r = gpu_queue.program (%x, %w) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
    ^bb0(%gx: tensor<256x64xf32>, %gw: tensor<128x64xf32>):
      %k = gpu_queue.kernel "k0" grid 132 warps 4 smem 0 (%gx, %gw) : (...) -> tensor<256x128xf32> {
      ^bb0(%a: tensor<256x64xf32>, %b: tensor<128x64xf32>):
        gpu_queue.queue "q0" tile [128, 128] capacity 2 : tensor<256x128xf32>
        %s0 = gpu_queue.stage "linear_0" pids [0, 99) tile [128, 128] (%a, %b) : (...) -> tensor<256x128xf32> {
        ^bb0(%sa: tensor<256x64xf32>, %sb: tensor<128x64xf32>):
          %y = graph.linear %sa, %sb : ... -> tensor<256x128xf32>
          gpu_queue.push %y into "q0" : tensor<256x128xf32>
          gpu_queue.yield %y : tensor<256x128xf32>
        }
        %s1 = gpu_queue.stage "relu_1" pids [99, 132) tile [128, 128] () : () -> tensor<256x128xf32> {
          %t = gpu_queue.pop "q0" {relation = "tile"} : tensor<256x128xf32>
          %z = graph.relu %t : tensor<256x128xf32> -> tensor<256x128xf32>
          gpu_queue.yield %z : tensor<256x128xf32>
        }
        gpu_queue.yield %s1 : tensor<256x128xf32>
      }
      gpu_queue.launch_plan ["k0"] buffers []
      gpu_queue.yield %k : tensor<256x128xf32>
    }

**Queues** (``gpu_queue.queue``) are ring buffers of ``capacity`` tiles of the
given tile shape in global memory (they live in L2 when small), one producer
stage (the one that ``push``es) and one consumer stage (the one that ``pop``s).
Protocol (cuSync-style, per-slot counters in global memory): ``push`` of tile
``j`` stores the tile into slot ``j mod capacity`` and then *release*-increments
the slot's ``filled`` counter; ``pop`` *acquire*-spins until ``filled`` reaches
its target, loads, and then increments the slot's ``freed`` counter (which the
producer waits on before reusing the slot). Counters are **epoch based**: the
launcher passes the run number ``e`` and every target is ``e * uses_per_run +
k``, so counters grow monotonically and nothing is reset between runs or CUDA
graph replays. ``pop`` carries the tile relation of the channel it implements:
``tile`` (consumer tile ``i`` waits on producer tile ``i``), ``rows`` (on the
producer's whole row band) or ``all`` (on every tile).

**Temporal dependences**: a stage's operand may also be the result of an *earlier* stage of the same kernel
(lower program ids). The producer writes it to a global buffer and each of its programs, once all its work
items are done, release-increments the stage's counter; the consumer's programs wait (acquire) until every
producer program has counted itself before their first work item, then read the buffer (in L2 when small).
This is temporal placement (``kitsune.passes.placement``): stages one after another in one launch, without a
kernel boundary, and, since a program only ever waits on programs that took their tickets before it, without
needing the grid to be resident.

**Folded stages** (``fold``, ``kitsune.passes.last_arrival``): a split reduction's combine may run on the programs of
its partial (same program ids, no programs of its own): the program that stores the last tile of a group of the
partial's tiles (a counter per group) runs the combine tiles that read that group. Nothing waits.

**No deadlock by construction** (verified): a stage pops only from queues pushed
by a stage whose program ids are all *lower* than its own, stage ranges lie in
the grid and do not overlap, capacities are positive. Results of a kernel are
written to global memory; later kernels read them (``launch_plan`` lists the
kernels in launch order and the buffers they share, ``"k0#1 -> k2, k3"``).

The sequential reference (``GpuQueueFunctions``) runs programs one by one in id
order (stage by stage, each stage's programs in order), with queues as unbounded
per-tile stores: a pop of a tile nobody has pushed yet raises an error naming the
queue, the program id and the tile.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import ClassVar
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, IntegerAttr, StringAttr, TensorType, i64
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException

from kitsune.dialects.graph import fmt_loc, fmt_type
from kitsune.dialects.regions import (
    RELATIONS,
    YieldBase,
    check_isolated_body,
    grid_of,
    parse_operand_list,
    parse_types_arrow,
    print_types_arrow,
    tensor_shape,
)
from kitsune.dialects.values import np_dtype



def _ints(a: DenseArrayBase) -> tuple[int, ...]:
    return tuple(int(x) for x in a.get_values())


def _dense(xs: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(x) for x in xs])


def _parse_int_list(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_integer(False))


def _fmt_ints(xs: Sequence[int]) -> str:
    return "[" + ", ".join(str(x) for x in xs) + "]"


@irdl_op_definition
class YieldOp(YieldBase):
    """gpu_queue.yield: the results of a program, a kernel or a stage."""

    name = "gpu_queue.yield"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator())
    PARENTS_TEXT: ClassVar[str] = "a gpu_queue.program, kernel or stage"

    def parents(self):
        return (ProgramOp, KernelOp, StageOp)


# ------------------------------------------------------------------ queue, push, pop


@irdl_op_definition
class QueueOp(IRDLOperation):
    """gpu_queue.queue: a ring buffer of ``capacity`` tiles of a tensor, in global memory."""

    name = "gpu_queue.queue"
    sym_name = prop_def(StringAttr)
    tile = prop_def(DenseArrayBase)
    capacity = prop_def(IntegerAttr)
    tensor_type = prop_def(TensorType)

    def __init__(self, name: str, tensor_type: Attribute, tile: Sequence[int], capacity: int):
        super().__init__(properties={"sym_name": StringAttr(name), "tile": _dense(tile),
                                     "capacity": IntegerAttr(int(capacity), i64), "tensor_type": tensor_type})

    @property
    def queue_name(self) -> str:
        return self.sym_name.data

    def tile_sizes(self) -> tuple[int, ...]:
        return _ints(self.tile)

    def grid(self) -> tuple[int, ...]:
        return grid_of(tensor_shape(self.tensor_type), self.tile_sizes())

    def num_tiles(self) -> int:
        return math.prod(self.grid())

    def cap(self) -> int:
        return self.capacity.value.data

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.queue_name)
        printer.print_string(f" tile {_fmt_ints(self.tile_sizes())} capacity {self.cap()}")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        printer.print_attribute(self.tensor_type)

    @classmethod
    def parse(cls, parser: Parser) -> QueueOp:
        name = parser.parse_str_literal(" (the queue name)")
        parser.parse_keyword("tile")
        tile = _parse_int_list(parser)
        parser.parse_keyword("capacity")
        cap = parser.parse_integer(True)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        op = cls(name, t, tile, cap)
        if attrs:
            op.attributes.update(attrs.data)
        return op

    def verify_(self) -> None:
        def fail(msg: str):
            raise VerifyException(f"{fmt_loc(self)}'gpu_queue.queue' \"{self.queue_name}\" {msg}")

        if not isinstance(self.parent_op(), KernelOp):
            fail("must be directly inside a gpu_queue.kernel")
        if self.cap() < 1:
            fail(f"capacity must be at least 1 tile, got {self.cap()}")
        shape, tile = tensor_shape(self.tensor_type), self.tile_sizes()
        if len(tile) != len(shape):
            fail(f"tile {_fmt_ints(tile)} has {len(tile)} sizes but {fmt_type(self.tensor_type)} has rank {len(shape)}")
        for i, (t, d) in enumerate(zip(tile, shape)):
            if t < 1 or (d >= 0 and t > d):
                fail(f"tile size {t} of dim {i} must be in [1, {d}]")


def _queue_ref(parser: Parser) -> str:
    return parser.parse_str_literal(" (a queue name)")


@irdl_op_definition
class PushOp(IRDLOperation):
    """gpu_queue.push: store the producer stage's tiles of a value, then release-increment their counters."""

    name = "gpu_queue.push"
    value = operand_def(TensorType)
    queue = prop_def(StringAttr)

    def __init__(self, value: SSAValue, queue: str):
        super().__init__(operands=[value], properties={"queue": StringAttr(queue)})

    @property
    def queue_name(self) -> str:
        return self.queue.data

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_string(" into ")
        printer.print_string_literal(self.queue_name)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)

    @classmethod
    def parse(cls, parser: Parser) -> PushOp:
        start = parser._current_token.span
        v = parser.parse_unresolved_operand()
        parser.parse_keyword("into")
        q = _queue_ref(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        (val,) = parser.resolve_operands([v], [t], start)
        op = cls(val, q)
        if attrs:
            op.attributes.update(attrs.data)
        return op

    def verify_(self) -> None:
        _check_queue_use(self, self.value.type)


@irdl_op_definition
class PopOp(IRDLOperation):
    """gpu_queue.pop: acquire-wait on the producer tiles the stage's tiles need (per relation), then load."""

    name = "gpu_queue.pop"
    result = result_def(TensorType)
    queue = prop_def(StringAttr)
    relation = prop_def(StringAttr)

    def __init__(self, queue: str, relation: str, result_type: Attribute):
        super().__init__(result_types=[result_type],
                         properties={"queue": StringAttr(queue), "relation": StringAttr(relation)})

    @property
    def queue_name(self) -> str:
        return self.queue.data

    @property
    def rel(self) -> str:
        return self.relation.data

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.queue_name)
        printer.print_string(" {relation = ")
        printer.print_string_literal(self.rel)
        printer.print_string("}")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> PopOp:
        q = _queue_ref(parser)
        parser.parse_punctuation("{")
        span = parser._current_token.span
        if parser.parse_identifier(" (relation)") != "relation":
            parser.raise_error("gpu_queue.pop expects {relation = \"tile\" | \"rows\" | \"all\"}", span)
        parser.parse_punctuation("=")
        rel = parser.parse_str_literal(" (the relation)")
        parser.parse_punctuation("}")
        attrs = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        op = cls(q, rel, parser.parse_type())
        if attrs:
            op.attributes.update(attrs.data)
        return op

    def verify_(self) -> None:
        if self.rel not in RELATIONS:
            raise VerifyException(f"{fmt_loc(self)}'gpu_queue.pop' relation must be one of "
                                  f"{', '.join(RELATIONS)}, got '{self.rel}'")
        _check_queue_use(self, self.result.type)


def _enclosing(op: Operation, cls):
    p = op.parent_op()
    while p is not None and not isinstance(p, cls):
        p = p.parent_op()
    return p


def _check_queue_use(op: PushOp | PopOp, t: Attribute) -> None:
    where = f"{fmt_loc(op)}'{op.name}' of queue \"{op.queue_name}\""
    if not isinstance(op.parent_op(), StageOp):
        raise VerifyException(f"{where} must be directly inside a gpu_queue.stage")
    k = _enclosing(op, KernelOp)
    q = k.queues().get(op.queue_name) if k is not None else None
    if q is None:
        raise VerifyException(f"{where}: no such queue in the enclosing gpu_queue.kernel")
    if t != q.tensor_type:
        raise VerifyException(f"{where} has type {fmt_type(t)} but the queue holds {fmt_type(q.tensor_type)}")


# ------------------------------------------------------------------ stage


@irdl_op_definition
class StageOp(IRDLOperation):
    """gpu_queue.stage: a task run by the programs [lo, hi) of its kernel, tile by tile."""

    name = "gpu_queue.stage"
    ins = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    sym_name = prop_def(StringAttr)
    pids = prop_def(DenseArrayBase)
    tile = prop_def(DenseArrayBase)
    body = region_def("single_block")

    def __init__(self, name: str, pids: tuple[int, int], tile: Sequence[int], inputs: Sequence[SSAValue],
                 result_types: Sequence[Attribute], body: Region, attributes: dict[str, Attribute] | None = None):
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)],
                         properties={"sym_name": StringAttr(name), "pids": _dense(pids), "tile": _dense(tile)},
                         regions=[body], attributes=attributes or {})

    @property
    def stage_name(self) -> str:
        return self.sym_name.data

    def pid_range(self) -> tuple[int, int]:
        lo, hi = _ints(self.pids)
        return lo, hi

    def set_pids(self, lo: int, hi: int) -> None:
        self.pids = _dense((lo, hi))

    def tile_sizes(self) -> tuple[int, ...]:
        return _ints(self.tile)

    def grid(self) -> tuple[int, ...]:
        return grid_of(tensor_shape(self.outs[0].type), self.tile_sizes()) if self.outs else ()

    def num_tiles(self) -> int:
        return math.prod(self.grid())

    def template(self) -> str:
        """The schedule template (``kitsune-choose-schedules``; 'generic' when none was chosen)."""
        t = self.attributes.get("template")
        return t.data if isinstance(t, StringAttr) else "generic"

    def config(self) -> dict[str, int]:
        """The template's config (an empty dict for the generic evaluator)."""
        c = self.attributes.get("config")
        if c is None:
            return {}
        return {k: int(v.value.data) for k, v in c.data.items()}

    def split(self) -> int:
        """Programs that share one tile's reduction (a split-K config field), 1 without a split."""
        return max(1, self.config().get("SPLIT", 1))

    def work_items(self) -> int:
        """(tile, reduction part) pairs the stage's programs work through."""
        return self.num_tiles() * self.split()

    def fold(self) -> tuple[str, int, int] | None:
        """A combine folded into its partial (``kitsune.passes.last_arrival``): (the partial stage's name, P, k):
        the partial's tiles come in groups of P consecutive tiles, and the program that stores a group's last
        tile runs this stage's tiles [g k, g k + k). None for a stage with programs of its own."""
        f = self.attributes.get("fold")
        if not isinstance(f, StringAttr):
            return None
        return f.data, self.attributes["fold_parts"].value.data, self.attributes["fold_tiles"].value.data

    def pops(self) -> list[PopOp]:
        return [o for o in self.body.blocks.first.ops if isinstance(o, PopOp)]

    def pushes(self) -> list[PushOp]:
        return [o for o in self.body.blocks.first.ops if isinstance(o, PushOp)]

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.stage_name)
        lo, hi = self.pid_range()
        printer.print_string(f" pids [{lo}, {hi}) tile {_fmt_ints(self.tile_sizes())} (")
        printer.print_list(self.ins, printer.print_ssa_value)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        print_types_arrow(printer, [o.type for o in self.ins], [r.type for r in self.outs])
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> StageOp:
        start = parser._current_token.span
        name = parser.parse_str_literal(" (the stage name)")
        parser.parse_keyword("pids")
        parser.parse_punctuation("[")
        lo = parser.parse_integer(True)
        parser.parse_punctuation(",")
        hi = parser.parse_integer(True)
        parser.parse_punctuation(")")
        parser.parse_keyword("tile")
        tile = _parse_int_list(parser)
        ins = parse_operand_list(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        in_types, out_types = parse_types_arrow(parser)
        if len(in_types) != len(ins):
            parser.raise_error(f"gpu_queue.stage has {len(ins)} operand(s) but {len(in_types)} operand type(s)",
                               start)
        values = parser.resolve_operands(ins, in_types, start)
        body = parser.parse_region()
        return cls(name, (lo, hi), tile, values, out_types, body, attrs.data if attrs else None)

    def verify_(self) -> None:
        def fail(msg: str):
            raise VerifyException(f"{fmt_loc(self)}'gpu_queue.stage' \"{self.stage_name}\" {msg}")

        k = self.parent_op()
        if not isinstance(k, KernelOp):
            fail("must be directly inside a gpu_queue.kernel")
        if not self.outs:
            fail("must have at least one result")
        check_isolated_body(self, self.body, YieldOp, fail)
        lo, hi = self.pid_range()
        fold = self.fold()
        if fold is not None and not any(o.owner.stage_name == fold[0] for o in self.ins
                                        if isinstance(o.owner, StageOp) and o.owner.parent_op() is k):
            fail(f"is folded into stage \"{fold[0]}\", which must be an earlier stage of its kernel whose results "
                 f"it reads")
        if not (0 <= lo < hi <= k.grid_size()):
            fail(f"program ids [{lo}, {hi}) must be a non-empty range inside the grid [0, {k.grid_size()}) "
                 f"of kernel \"{k.kernel_name}\"")
        shape, tile = tensor_shape(self.outs[0].type), self.tile_sizes()
        if len(tile) != len(shape):
            fail(f"tile {_fmt_ints(tile)} has {len(tile)} sizes but result #0 {fmt_type(self.outs[0].type)} "
                 f"has rank {len(shape)}")
        for i, (t, d) in enumerate(zip(tile, shape)):
            if t < 1 or (d >= 0 and t > d):
                fail(f"tile size {t} of dim {i} must be in [1, {d}]")
        for i, o in enumerate(self.ins):
            if isinstance(o.owner, Block) and o.owner is k.body.blocks.first:
                continue
            prod = o.owner
            if isinstance(prod, StageOp) and prod.parent_op() is k:
                plo, phi = prod.pid_range()
                if fold is not None and prod is not self and fold[0] == prod.stage_name:
                    if (plo, phi) != (lo, hi):
                        fail(f"is folded into stage \"{prod.stage_name}\" (it runs on that stage's programs) but "
                             f"has program ids [{lo}, {hi}) instead of its [{plo}, {phi})")
                    if prod.num_tiles() % fold[1] or (prod.num_tiles() // fold[1]) * fold[2] != self.num_tiles():
                        fail(f"is folded into stage \"{prod.stage_name}\" in groups of {fold[1]} of its "
                             f"{prod.num_tiles()} tiles, {fold[2]} tile(s) of this stage each, but has "
                             f"{self.num_tiles()} tiles")
                    continue
                if prod is self or phi > lo:
                    fail(f"operand #{i} is a result of stage \"{prod.stage_name}\" (program ids [{plo}, {phi})), "
                         f"which does not come before this stage's [{lo}, {hi}): a program may wait only on "
                         f"programs of lower ids")
                continue
            fail(f"operand #{i} must be a block argument of the kernel or a result of an earlier stage of it "
                 f"(stages share values only through global memory buffers or queues)")


# ------------------------------------------------------------------ kernel


@irdl_op_definition
class KernelOp(IRDLOperation):
    """gpu_queue.kernel: one launch of a persistent grid whose program ids are partitioned into stages."""

    name = "gpu_queue.kernel"
    ins = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    sym_name = prop_def(StringAttr)
    grid = prop_def(IntegerAttr)
    warps = prop_def(IntegerAttr)
    smem = prop_def(IntegerAttr)
    body = region_def("single_block")

    def __init__(self, name: str, grid: int, warps: int, smem: int, inputs: Sequence[SSAValue],
                 result_types: Sequence[Attribute], body: Region, attributes: dict[str, Attribute] | None = None):
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)],
                         properties={"sym_name": StringAttr(name), "grid": IntegerAttr(int(grid), i64),
                                     "warps": IntegerAttr(int(warps), i64), "smem": IntegerAttr(int(smem), i64)},
                         regions=[body], attributes=attributes or {})

    @property
    def kernel_name(self) -> str:
        return self.sym_name.data

    def grid_size(self) -> int:
        return self.grid.value.data

    def num_warps(self) -> int:
        return self.warps.value.data

    def smem_bytes(self) -> int:
        return self.smem.value.data

    def set_launch(self, grid: int, warps: int, smem: int) -> None:
        self.grid = IntegerAttr(int(grid), i64)
        self.warps = IntegerAttr(int(warps), i64)
        self.smem = IntegerAttr(int(smem), i64)

    def stages(self) -> list[StageOp]:
        return [o for o in self.body.blocks.first.ops if isinstance(o, StageOp)]

    def queues(self) -> dict[str, QueueOp]:
        return {o.queue_name: o for o in self.body.blocks.first.ops if isinstance(o, QueueOp)}

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.kernel_name)
        printer.print_string(f" grid {self.grid_size()} warps {self.num_warps()} smem {self.smem_bytes()} (")
        printer.print_list(self.ins, printer.print_ssa_value)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        print_types_arrow(printer, [o.type for o in self.ins], [r.type for r in self.outs])
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        start = parser._current_token.span
        name = parser.parse_str_literal(" (the kernel name)")
        parser.parse_keyword("grid")
        grid = parser.parse_integer(True)
        parser.parse_keyword("warps")
        warps = parser.parse_integer(True)
        parser.parse_keyword("smem")
        smem = parser.parse_integer(True)
        ins = parse_operand_list(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        in_types, out_types = parse_types_arrow(parser)
        if len(in_types) != len(ins):
            parser.raise_error(f"gpu_queue.kernel has {len(ins)} operand(s) but {len(in_types)} operand type(s)",
                               start)
        values = parser.resolve_operands(ins, in_types, start)
        body = parser.parse_region()
        return cls(name, grid, warps, smem, values, out_types, body, attrs.data if attrs else None)

    def verify_(self) -> None:
        def fail(msg: str):
            raise VerifyException(f"{fmt_loc(self)}'gpu_queue.kernel' \"{self.kernel_name}\" {msg}")

        if not isinstance(self.parent_op(), ProgramOp):
            fail("must be directly inside a gpu_queue.program")
        if self.grid_size() < 1 or self.num_warps() < 1 or self.smem_bytes() < 0:
            fail(f"needs grid >= 1, warps >= 1 and smem >= 0, got grid {self.grid_size()}, "
                 f"warps {self.num_warps()}, smem {self.smem_bytes()}")
        check_isolated_body(self, self.body, YieldOp, fail)
        for o in self.body.blocks.first.ops:
            if not isinstance(o, (StageOp, QueueOp, YieldOp)):
                fail(f"may hold only gpu_queue.queue, gpu_queue.stage and gpu_queue.yield ops, got '{o.name}'")
        stages = self.stages()
        if not stages:
            fail("must have at least one stage")
        names: set[str] = set()
        for s in stages:
            if s.stage_name in names:
                fail(f"has two stages named \"{s.stage_name}\"")
            names.add(s.stage_name)
        ordered = sorted([s for s in stages if s.fold() is None], key=lambda s: s.pid_range())
        for a, b in zip(ordered, ordered[1:]):
            (alo, ahi), (blo, bhi) = a.pid_range(), b.pid_range()
            if blo < ahi:
                fail(f"stages \"{a.stage_name}\" [{alo}, {ahi}) and \"{b.stage_name}\" [{blo}, {bhi}) overlap")
        qnames: set[str] = set()
        for o in self.body.blocks.first.ops:
            if isinstance(o, QueueOp):
                if o.queue_name in qnames:
                    fail(f"has two queues named \"{o.queue_name}\"")
                qnames.add(o.queue_name)
        pushers: dict[str, list[StageOp]] = {q: [] for q in qnames}
        poppers: dict[str, list[StageOp]] = {q: [] for q in qnames}
        for s in stages:
            for p in s.pushes():
                if p.queue_name in pushers and s not in pushers[p.queue_name]:
                    pushers[p.queue_name].append(s)
            for p in s.pops():
                if p.queue_name in poppers and s not in poppers[p.queue_name]:
                    poppers[p.queue_name].append(s)
        for q in sorted(qnames):
            if not pushers[q]:
                cons = poppers[q][0].stage_name if poppers[q] else None
                fail(f"queue \"{q}\" is popped" + (f" by stage \"{cons}\"" if cons else "")
                     + " but no stage pushes it")
            if len(pushers[q]) > 1:
                fail(f"queue \"{q}\" is pushed by {len(pushers[q])} stages; a queue has one producer stage")
            if len(poppers[q]) > 1:
                fail(f"queue \"{q}\" is popped by {len(poppers[q])} stages; a queue has one consumer stage")
            prod = pushers[q][0]
            for cons in poppers[q]:
                plo, phi = prod.pid_range()
                clo, chi = cons.pid_range()
                if cons is prod or phi > clo:
                    fail(f"stage \"{cons.stage_name}\" (program ids [{clo}, {chi})) waits on tiles of queue \"{q}\" "
                         f"pushed by stage \"{prod.stage_name}\" (program ids [{plo}, {phi})): a program may wait "
                         f"only on tiles of lower program ids")
                rel = next(p.rel for p in cons.pops() if p.queue_name == q)
                qo = self.queues()[q]
                msg = _pop_relation_error(rel, qo, cons)
                if msg:
                    fail(f"stage \"{cons.stage_name}\" pops queue \"{q}\" with relation \"{rel}\": {msg}")


def _pop_relation_error(rel: str, q: QueueOp, cons: StageOp) -> str | None:
    qg, cg = q.grid(), cons.grid()
    if rel == "tile" and qg != cg:
        return f"needs the queue's tile grid {_fmt_ints(qg)} to equal the stage's {_fmt_ints(cg)}"
    if rel == "rows" and (not qg or not cg or qg[:-1] != cg[:-1]):
        return f"needs the queue's tile grid {_fmt_ints(qg)} to have the stage's row bands {_fmt_ints(cg)}"
    return None


# ------------------------------------------------------------------ launch plan, program


def buffer_list(prog: ProgramOp) -> list[str]:
    """``"k0#1 -> k2, k3"`` for every kernel result read by later kernels (in launch order)."""
    out = []
    for k in prog.kernels():
        for i, r in enumerate(k.results):
            users = []
            for u in r.uses:
                if isinstance(u.operation, KernelOp) and u.operation.kernel_name not in users:
                    users.append(u.operation.kernel_name)
            if users:
                out.append(f"{k.kernel_name}#{i} -> {', '.join(users)}")
    return out


@irdl_op_definition
class LaunchPlanOp(IRDLOperation):
    """gpu_queue.launch_plan: the kernels in launch order and the global buffers they share."""

    name = "gpu_queue.launch_plan"
    kernels = prop_def(ArrayAttr)
    buffers = prop_def(ArrayAttr)

    def __init__(self, kernels: Sequence[str], buffers: Sequence[str]):
        super().__init__(properties={"kernels": ArrayAttr([StringAttr(k) for k in kernels]),
                                     "buffers": ArrayAttr([StringAttr(b) for b in buffers])})

    def kernel_names(self) -> list[str]:
        return [k.data for k in self.kernels.data]

    def buffer_names(self) -> list[str]:
        return [b.data for b in self.buffers.data]

    def print(self, printer: Printer) -> None:
        printer.print_string(" [")
        printer.print_list(self.kernel_names(), printer.print_string_literal)
        printer.print_string("] buffers [")
        printer.print_list(self.buffer_names(), printer.print_string_literal)
        printer.print_string("]")

    @classmethod
    def parse(cls, parser: Parser) -> LaunchPlanOp:
        ks = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_str_literal)
        parser.parse_keyword("buffers")
        bs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_str_literal)
        return cls(ks, bs)

    def verify_(self) -> None:
        p = self.parent_op()
        where = f"{fmt_loc(self)}'gpu_queue.launch_plan'"
        if not isinstance(p, ProgramOp):
            raise VerifyException(f"{where} must be directly inside a gpu_queue.program")
        want = [k.kernel_name for k in p.kernels()]
        if self.kernel_names() != want:
            raise VerifyException(f"{where} lists kernels [{', '.join(self.kernel_names())}] but the program "
                                  f"launches [{', '.join(want)}] in that order")
        wb = buffer_list(p)
        if self.buffer_names() != wb:
            raise VerifyException(f"{where} lists buffers [{'; '.join(self.buffer_names())}] but the kernels "
                                  f"share [{'; '.join(wb)}]")


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """gpu_queue.program: kernels launched in order (the machine mapping of a dataflow.graph)."""

    name = "gpu_queue.program"
    ins = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    body = region_def("single_block")

    def __init__(self, inputs: Sequence[SSAValue], result_types: Sequence[Attribute], body: Region,
                 attributes: dict[str, Attribute] | None = None):
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)], regions=[body],
                         attributes=attributes or {})

    def kernels(self) -> list[KernelOp]:
        return [o for o in self.body.blocks.first.ops if isinstance(o, KernelOp)]

    def print(self, printer: Printer) -> None:
        printer.print_string(" (")
        printer.print_list(self.ins, printer.print_ssa_value)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        print_types_arrow(printer, [o.type for o in self.ins], [r.type for r in self.outs])
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> ProgramOp:
        start = parser._current_token.span
        ins = parse_operand_list(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        in_types, out_types = parse_types_arrow(parser)
        if len(in_types) != len(ins):
            parser.raise_error(f"gpu_queue.program has {len(ins)} operand(s) but {len(in_types)} operand type(s)",
                               start)
        values = parser.resolve_operands(ins, in_types, start)
        body = parser.parse_region()
        return cls(values, out_types, body, attrs.data if attrs else None)

    def verify_(self) -> None:
        def fail(msg: str):
            raise VerifyException(f"{fmt_loc(self)}'gpu_queue.program' {msg}")

        check_isolated_body(self, self.body, YieldOp, fail)
        names: set[str] = set()
        plans = 0
        for o in self.body.blocks.first.ops:
            if not isinstance(o, (KernelOp, LaunchPlanOp, YieldOp)):
                fail(f"may hold only gpu_queue.kernel, gpu_queue.launch_plan and gpu_queue.yield ops, got '{o.name}'")
            if isinstance(o, KernelOp):
                if o.kernel_name in names:
                    fail(f"has two kernels named \"{o.kernel_name}\"")
                names.add(o.kernel_name)
            plans += isinstance(o, LaunchPlanOp)
        if plans != 1:
            fail(f"must have exactly one gpu_queue.launch_plan, got {plans}")


GpuQueue = Dialect("gpu_queue", [ProgramOp, KernelOp, StageOp, QueueOp, PushOp, PopOp, LaunchPlanOp, YieldOp], [])


# ------------------------------------------------------------------ sequential reference


class QueueError(Exception):
    """A pop of a tile nobody pushed (the GPU would wait forever)."""


def tile_slices(shape: Sequence[int], tile: Sequence[int], idx: Sequence[int]) -> tuple[slice, ...]:
    return tuple(slice(i * t, min((i + 1) * t, d)) for i, t, d in zip(idx, tile, shape))


def _tiles(grid: Sequence[int]) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(g) for g in grid)))


def program_tiles(lo: int, hi: int, ntiles: int) -> list[tuple[int, int]]:
    """(program id, linear tile index) in the order a sequential run visits them."""
    n = hi - lo
    return [(p, t) for p in range(lo, hi) for t in range(p - lo, ntiles, n)]


class _Queue:
    def __init__(self, op: QueueOp):
        self.op = op
        self.tiles: dict[tuple[int, ...], np.ndarray] = {}
        self.pushes = 0
        self.pops = 0


@register_impls
class GpuQueueFunctions(InterpreterFunctions):
    """Sequential reference: kernels in order; in a kernel, programs one by one in id order."""

    def __init__(self):
        super().__init__()
        self._queues: list[dict[str, _Queue]] = []
        self._stage: list[StageOp] = []

    @impl(ProgramOp)
    def run_program(self, interpreter: Interpreter, op: ProgramOp, args: PythonValues) -> PythonValues:
        return tuple(interpreter.run_ssacfg_region(op.body, tuple(args), "gpu_queue.program"))

    @impl(KernelOp)
    def run_kernel(self, interpreter: Interpreter, op: KernelOp, args: PythonValues) -> PythonValues:
        block = op.body.blocks.first
        env: dict[SSAValue, Any] = dict(zip(block.args, args))
        self._queues.append({n: _Queue(q) for n, q in op.queues().items()})
        try:
            for s in sorted(op.stages(), key=lambda s: s.pid_range()):
                self._stage.append(s)
                try:
                    outs = interpreter.run_ssacfg_region(s.body, tuple(env[v] for v in s.ins),
                                                         f"gpu_queue.stage {s.stage_name}")
                finally:
                    self._stage.pop()
                env.update(zip(s.results, outs))
            y = block.last_op
            return tuple(env[v] for v in y.operands)
        finally:
            self._queues.pop()

    @impl(StageOp)
    def run_stage(self, interpreter: Interpreter, op: StageOp, args: PythonValues) -> PythonValues:
        raise QueueError(f"gpu_queue.stage \"{op.stage_name}\" runs only as part of its kernel")

    @impl(QueueOp)
    def run_queue(self, interpreter: Interpreter, op: QueueOp, args: PythonValues) -> PythonValues:
        return ()

    @impl(LaunchPlanOp)
    def run_plan(self, interpreter: Interpreter, op: LaunchPlanOp, args: PythonValues) -> PythonValues:
        return ()

    @impl(PushOp)
    def run_push(self, interpreter: Interpreter, op: PushOp, args: PythonValues) -> PythonValues:
        q = self._queues[-1][op.queue_name]
        s = self._stage[-1]
        lo, hi = s.pid_range()
        a = np.asarray(args[0])
        shape, tile = a.shape, q.op.tile_sizes()
        tiles = _tiles(q.op.grid())
        for _p, t in program_tiles(lo, hi, len(tiles)):
            idx = tiles[t]
            q.tiles[idx] = np.array(a[tile_slices(shape, tile, idx)])
            q.pushes += 1
        return ()

    @impl(PopOp)
    def run_pop(self, interpreter: Interpreter, op: PopOp, args: PythonValues) -> PythonValues:
        q = self._queues[-1][op.queue_name]
        s = self._stage[-1]
        lo, hi = s.pid_range()
        qgrid, qtile = q.op.grid(), q.op.tile_sizes()
        shape = tensor_shape(q.op.tensor_type)
        out = np.zeros(shape, dtype=np_dtype(q.op.tensor_type.get_element_type()))
        have = np.zeros(qgrid, dtype=bool) if qgrid else np.zeros((), dtype=bool)
        ctiles = _tiles(s.grid())
        for p, t in program_tiles(lo, hi, len(ctiles)):
            ci = ctiles[t]
            if op.rel == "tile":
                need = [ci]
            elif op.rel == "rows":
                need = [tuple(ci[:-1]) + (j,) for j in range(qgrid[-1])]
            else:
                need = _tiles(qgrid)
            for idx in need:
                if idx not in q.tiles:
                    raise QueueError(
                        f"gpu_queue.pop of queue \"{op.queue_name}\" by program {p} (stage \"{s.stage_name}\"): "
                        f"tile {list(idx)} has not been pushed ({len(q.tiles)} of {q.op.num_tiles()} tiles pushed); "
                        f"on a GPU this program would wait forever")
                out[tile_slices(shape, qtile, idx)] = q.tiles[idx]
                have[idx] = True
                q.pops += 1
        if not bool(np.all(have)):
            raise QueueError(f"gpu_queue.pop of queue \"{op.queue_name}\" in stage \"{s.stage_name}\": its tiles "
                             f"cover only part of the tensor ({int(np.sum(have))} of {have.size} tiles)")
        return (out,)

    @impl_terminator(YieldOp)
    def run_yield(self, interpreter: Interpreter, op: YieldOp, args: PythonValues
                  ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(tuple(args)), ()


__all__ = ["GpuQueue", "GpuQueueFunctions", "ProgramOp", "KernelOp", "StageOp", "QueueOp", "PushOp", "PopOp",
           "LaunchPlanOp", "YieldOp", "QueueError", "buffer_list", "program_tiles", "tile_slices"]
