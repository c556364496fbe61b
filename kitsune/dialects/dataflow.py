"""The ``dataflow`` dialect: tiled tasks and tile-granular channels between them.

A ``dataflow.graph`` holds a dataflow program: **tasks** (fusion regions) and
**channels** (producer result -> consumer tasks, with the tile dependence
relation). Its operands are the values it consumes from the enclosing function;
its single block's arguments mirror them; ``dataflow.yield`` names its results::

    %r = dataflow.graph (%x, %w) : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
    ^bb0(%gx: tensor<256x64xf32>, %gw: tensor<128x64xf32>):
      %t = dataflow.task "linear_0" contraction (%gx, %gw) tile [128, 128]
          : (tensor<256x64xf32>, tensor<128x64xf32>) -> tensor<256x128xf32> {
      ^bb0(%a: tensor<256x64xf32>, %b: tensor<128x64xf32>):
        %y = graph.linear %a, %b : tensor<256x64xf32>, tensor<128x64xf32> -> tensor<256x128xf32>
        %z = graph.relu %y : tensor<256x128xf32> -> tensor<256x128xf32>
        dataflow.yield %z : tensor<256x128xf32>
      }
      %c = dataflow.channel %t {relation = "tile"} : tensor<256x128xf32>
      dataflow.yield %c : tensor<256x128xf32>
    }

A task's body is graph ops in value semantics computing the task's *whole*
outputs; ``tile`` gives the tile sizes over the dims of its first result, and
so its grid (``ceil(shape / tile)`` program instances). A task reads graph
block arguments or channels, never another task's result directly.

Channel relations (what consumer tile ``i`` needs of the producer):

* ``tile``: producer tile ``i`` only. Needs identical shapes and tiles of the
  producer's first result, the channel and the consumer's first result.
* ``rows``: the producer's whole row band ``i`` (all dims but the last). Needs the
  same leading dims (all but the last) and the same leading tile sizes.
* ``all``: the whole tensor (a barrier). Always consistent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, StringAttr, TensorType, i64
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
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
    operand_def,
    result_def,
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

KINDS = ("contraction", "reduction", "elementwise", "gather", "layout", "partial", "combine")


@irdl_op_definition
class YieldOp(YieldBase):
    """dataflow.yield: the results of a dataflow.graph or a dataflow.task."""

    name = "dataflow.yield"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator())
    PARENTS_TEXT: ClassVar[str] = "a dataflow.graph or dataflow.task"

    def parents(self):
        return (GraphOp, TaskOp)


@irdl_op_definition
class TaskOp(IRDLOperation):
    """dataflow.task: a fusion region computing its outputs tile by tile."""

    name = "dataflow.task"
    ins = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    sym_name = prop_def(StringAttr)
    kind = prop_def(StringAttr)
    tile = prop_def(DenseArrayBase)
    body = region_def("single_block")

    def __init__(self, name: str, kind: str, inputs: Sequence[SSAValue], result_types: Sequence[Attribute],
                 tile: Sequence[int], body: Region, attributes: dict[str, Attribute] | None = None):
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)],
                         properties={"sym_name": StringAttr(name), "kind": StringAttr(kind),
                                     "tile": DenseArrayBase.from_list(i64, [int(t) for t in tile])},
                         regions=[body], attributes=attributes or {})

    # ---- queries
    @property
    def task_name(self) -> str:
        return self.sym_name.data

    @property
    def task_kind(self) -> str:
        return self.kind.data

    def tile_sizes(self) -> tuple[int, ...]:
        return tuple(int(x) for x in self.tile.get_values())

    def grid(self) -> tuple[int, ...]:
        """Tiles per dim of the first result."""
        return grid_of(tensor_shape(self.outs[0].type), self.tile_sizes()) if self.outs else ()

    def num_tiles(self) -> int:
        return math.prod(self.grid())

    def drop_unused_args(self) -> None:
        """Remove the body arguments nothing reads, with their operands."""
        block = self.body.blocks.first
        keep = [i for i, a in enumerate(block.args) if a.uses]
        if len(keep) == len(block.args):
            return
        ops = list(self.operands)
        for i in reversed(range(len(block.args))):
            if i not in keep:
                block.erase_arg(block.args[i])
        self.operands = [ops[i] for i in keep]

    def yield_op(self) -> YieldOp:
        y = self.body.blocks.first.last_op
        assert isinstance(y, YieldOp)
        return y

    # ---- syntax
    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.task_name)
        printer.print_string(f" {self.task_kind} (")
        printer.print_list(self.ins, printer.print_ssa_value)
        printer.print_string(") tile [" + ", ".join(str(t) for t in self.tile_sizes()) + "]")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        print_types_arrow(printer, [o.type for o in self.ins], [r.type for r in self.outs])
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> TaskOp:
        start = parser._current_token.span
        name = parser.parse_str_literal(" (the task name)")
        kind = parser.parse_identifier(" (the task kind)")
        ins = parse_operand_list(parser)
        parser.parse_keyword("tile")
        tile = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_integer(False))
        attributes = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        in_types, out_types = parse_types_arrow(parser)
        if len(in_types) != len(ins):
            parser.raise_error(f"dataflow.task has {len(ins)} operand(s) but {len(in_types)} operand type(s)", start)
        values = parser.resolve_operands(ins, in_types, start)
        body = parser.parse_region()
        op = cls(name, kind, values, out_types, tile, body, attributes.data if attributes else None)
        return op

    # ---- verification
    def verify_(self) -> None:
        where = fmt_loc(self)

        def fail(msg: str):
            raise VerifyException(f"{where}'dataflow.task' \"{self.task_name}\" {msg}")

        if not isinstance(self.parent_op(), GraphOp):
            fail("must be directly inside a dataflow.graph")
        if self.task_kind not in KINDS:
            fail(f"kind must be one of {', '.join(KINDS)}, got '{self.task_kind}'")
        if not self.outs:
            fail("must have at least one result")
        check_isolated_body(self, self.body, YieldOp, fail)
        shape = tensor_shape(self.outs[0].type)
        tile = self.tile_sizes()
        if len(tile) != len(shape):
            fail(f"tile [{', '.join(map(str, tile))}] has {len(tile)} sizes but result #0 "
                 f"{fmt_type(self.outs[0].type)} has rank {len(shape)}")
        for i, (t, d) in enumerate(zip(tile, shape)):
            if t < 1:
                fail(f"tile size {t} of dim {i} must be positive")
            if d >= 0 and t > d:
                fail(f"tile size {t} of dim {i} exceeds the dim size {d} of {fmt_type(self.outs[0].type)}")
        for i, o in enumerate(self.ins):
            owner = o.owner
            if isinstance(owner, Block):
                if owner is not self.parent_block():
                    fail(f"operand #{i} must be a dataflow.graph block argument or a dataflow.channel")
            elif not isinstance(owner, ChannelOp):
                fail(f"operand #{i} comes from '{owner.name}'; tasks read graph arguments or "
                     f"dataflow.channel values only")


@irdl_op_definition
class ChannelOp(IRDLOperation):
    """dataflow.channel: a producer task's result, passed on to consumer tasks at tile granularity."""

    name = "dataflow.channel"
    source = operand_def(TensorType)
    result = result_def(TensorType)
    relation = prop_def(StringAttr)

    def __init__(self, source: SSAValue, relation: str):
        super().__init__(operands=[source], result_types=[source.type],
                         properties={"relation": StringAttr(relation)})

    @property
    def rel(self) -> str:
        return self.relation.data

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.source)
        printer.print_string(" {relation = ")
        printer.print_string_literal(self.rel)
        printer.print_string("}")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ChannelOp:
        start = parser._current_token.span
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation("{")
        key_span = parser._current_token.span
        key = parser.parse_identifier(" (relation)")
        if key != "relation":
            parser.raise_error("dataflow.channel expects {relation = \"tile\" | \"rows\" | \"all\"}", key_span)
        parser.parse_punctuation("=")
        rel = parser.parse_str_literal(" (the relation)")
        parser.parse_punctuation("}")
        attributes = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        (v,) = parser.resolve_operands([src], [t], start)
        op = cls(v, rel)
        if attributes:
            op.attributes.update(attributes.data)
        return op

    def verify_(self) -> None:
        where = fmt_loc(self)

        def fail(msg: str):
            raise VerifyException(f"{where}'dataflow.channel' {msg}")

        if self.rel not in RELATIONS:
            fail(f"relation must be one of {', '.join(RELATIONS)}, got '{self.rel}'")
        if self.result.type != self.source.type:
            fail(f"result type {fmt_type(self.result.type)} must equal the source type {fmt_type(self.source.type)}")
        prod = self.source.owner
        if not isinstance(prod, TaskOp):
            fail("source must be a dataflow.task result")
        for use in self.result.uses:
            user = use.operation
            if isinstance(user, YieldOp):
                continue
            if not isinstance(user, TaskOp):
                fail(f"is used by '{user.name}'; channels feed dataflow.task ops or the graph's dataflow.yield")
            msg = relation_error(self.rel, prod, tensor_shape(self.source.type), user)
            if msg:
                fail(f"relation \"{self.rel}\" from task \"{prod.task_name}\" to task \"{user.task_name}\": {msg}")


def relation_error(rel: str, prod: TaskOp, chan_shape: tuple[int, ...], cons: TaskOp) -> str | None:
    """Why ``rel`` is inconsistent with the shapes and tiles (None if it is consistent)."""
    if rel == "all":
        return None
    pshape, ptile = tensor_shape(prod.outs[0].type), prod.tile_sizes()
    cshape, ctile = tensor_shape(cons.outs[0].type), cons.tile_sizes()

    def f(s):
        return "[" + ", ".join("?" if d < 0 else str(d) for d in s) + "]"

    if rel == "tile":
        if not (pshape == chan_shape == cshape):
            return (f"needs identical shapes, got producer {f(pshape)}, channel {f(chan_shape)}, "
                    f"consumer {f(cshape)}")
        if ptile != ctile:
            return f"needs identical tiles, got producer tile {f(ptile)} and consumer tile {f(ctile)}"
        return None
    # rows
    if not chan_shape or not cshape:
        return "needs tensors of rank >= 1"
    if pshape[:-1] != chan_shape[:-1] or chan_shape[:-1] != cshape[:-1]:
        return (f"needs the same leading dims, got producer {f(pshape)}, channel {f(chan_shape)}, "
                f"consumer {f(cshape)}")
    if ptile[:-1] != ctile[:-1]:
        return f"needs the same leading tile sizes, got producer tile {f(ptile)} and consumer tile {f(ctile)}"
    return None


@irdl_op_definition
class GraphOp(IRDLOperation):
    """dataflow.graph: a dataflow program of tasks and channels."""

    name = "dataflow.graph"
    ins = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    body = region_def("single_block")

    def __init__(self, inputs: Sequence[SSAValue], result_types: Sequence[Attribute], body: Region,
                 attributes: dict[str, Attribute] | None = None):
        super().__init__(operands=[list(inputs)], result_types=[list(result_types)], regions=[body],
                         attributes=attributes or {})

    def tasks(self) -> list[TaskOp]:
        return [o for o in self.body.blocks.first.ops if isinstance(o, TaskOp)]

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
    def parse(cls, parser: Parser) -> GraphOp:
        start = parser._current_token.span
        ins = parse_operand_list(parser)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        in_types, out_types = parse_types_arrow(parser)
        if len(in_types) != len(ins):
            parser.raise_error(f"dataflow.graph has {len(ins)} operand(s) but {len(in_types)} operand type(s)",
                               start)
        values = parser.resolve_operands(ins, in_types, start)
        body = parser.parse_region()
        return cls(values, out_types, body, attributes.data if attributes else None)

    def verify_(self) -> None:
        where = fmt_loc(self)

        def fail(msg: str):
            raise VerifyException(f"{where}'dataflow.graph' {msg}")

        check_isolated_body(self, self.body, YieldOp, fail)
        names: set[str] = set()
        for o in self.body.blocks.first.ops:
            if not isinstance(o, (TaskOp, ChannelOp, YieldOp)):
                fail(f"may hold only dataflow.task, dataflow.channel and dataflow.yield ops, got '{o.name}'")
            if isinstance(o, TaskOp):
                if o.task_name in names:
                    fail(f"has two tasks named \"{o.task_name}\"")
                names.add(o.task_name)


Dataflow = Dialect("dataflow", [GraphOp, TaskOp, ChannelOp, YieldOp], [])


# ------------------------------------------------------------------ interpreter


@register_impls
class DataflowFunctions(InterpreterFunctions):
    """Reference semantics: tasks run in program order, channels pass values through."""

    @impl(GraphOp)
    def run_graph(self, interpreter: Interpreter, op: GraphOp, args: PythonValues) -> PythonValues:
        return tuple(interpreter.run_ssacfg_region(op.body, tuple(args), "dataflow.graph"))

    @impl(TaskOp)
    def run_task(self, interpreter: Interpreter, op: TaskOp, args: PythonValues) -> PythonValues:
        return tuple(interpreter.run_ssacfg_region(op.body, tuple(args), f"dataflow.task {op.task_name}"))

    @impl(ChannelOp)
    def run_channel(self, interpreter: Interpreter, op: ChannelOp, args: PythonValues) -> PythonValues:
        return tuple(args)

    @impl_terminator(YieldOp)
    def run_yield(self, interpreter: Interpreter, op: YieldOp, args: PythonValues
                  ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(tuple(args)), ()


__all__ = ["Dataflow", "DataflowFunctions", "GraphOp", "TaskOp", "ChannelOp", "YieldOp", "RELATIONS", "KINDS",
           "grid_of", "relation_error"]
