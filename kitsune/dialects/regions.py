"""Pieces shared by the region-holding dialects (``dataflow``, ``gpu_queue``).

Their ops (graph / task, program / kernel / stage) all hold one isolated block
whose arguments mirror the op's operands and end in the dialect's ``yield``; they
print their types as ``(T, ...) -> T`` and tile grids the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from kitsune.dialects.graph import fmt_loc, fmt_type

RELATIONS = ("tile", "rows", "all")
"""Tile dependence relations of a channel / a queue pop."""


def tensor_shape(t: Attribute) -> tuple[int, ...]:
    """The shape of a tensor type as stored (dynamic dims negative); () for other types."""
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


def grid_of(shape: Sequence[int], tile: Sequence[int]) -> tuple[int, ...]:
    """Number of tiles per dim (dynamic dims count as one tile)."""
    return tuple(1 if d < 0 else max(1, math.ceil(d / t)) for d, t in zip(shape, tile))


def parse_types_arrow(parser: Parser) -> tuple[list[Attribute], list[Attribute]]:
    """``(T, ...) -> T`` or ``(T, ...) -> (T, ...)``."""
    ins = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
    parser.parse_punctuation("->")
    if parser.parse_optional_punctuation("(") is not None:
        outs = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        parser.parse_punctuation(")")
    else:
        outs = [parser.parse_type()]
    return ins, outs


def print_types_arrow(printer: Printer, ins: Sequence[Attribute], outs: Sequence[Attribute]) -> None:
    printer.print_string("(")
    printer.print_list(ins, printer.print_attribute)
    printer.print_string(") -> ")
    if len(outs) == 1:
        printer.print_attribute(outs[0])
    else:
        printer.print_string("(")
        printer.print_list(outs, printer.print_attribute)
        printer.print_string(")")


def parse_operand_list(parser: Parser):
    return parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)


def check_isolated_body(op: Operation, region: Region, yield_cls: type[Operation], fail) -> None:
    """One block whose arguments mirror ``op``'s operands, ending in ``yield_cls`` whose values
    match ``op``'s results, and isolated from above (the body reads only its block arguments)."""
    if len(region.blocks) != 1:
        fail(f"must have a body of exactly one block, got {len(region.blocks)}")
    block = region.blocks.first
    argt = [a.type for a in block.args]
    opt = [o.type for o in op.operands]
    if argt != opt:
        fail(f"block arguments ({', '.join(map(fmt_type, argt))}) must mirror the operands "
             f"({', '.join(map(fmt_type, opt))})")
    last = block.last_op
    if not isinstance(last, yield_cls):
        fail(f"body must end with a {yield_cls.name}")
    yt = [o.type for o in last.operands]
    rt = [r.type for r in op.results]
    if yt != rt:
        fail(f"yields ({', '.join(map(fmt_type, yt))}) but has results ({', '.join(map(fmt_type, rt))})")
    for inner in region.walk():
        for o in inner.operands:
            owner = o.owner
            if isinstance(owner, Block):
                po = owner.parent_op()
                ok = po is not None and op.is_ancestor(po)
            else:
                ok = owner is not op and op.is_ancestor(owner)
            if not ok:
                fail(f"body op '{inner.name}' uses a value defined outside the {op.name.split('.')[1]}; "
                     f"pass it as an operand")


class YieldBase(IRDLOperation):
    """``NAME %a, %b : T, T``: the terminator of a region op. Subclasses declare
    ``name``, ``values = var_operand_def(...)``, the terminator trait and ``PARENTS``
    (the op classes it may end, and how the error names them)."""

    PARENTS_TEXT: ClassVar[str] = ""

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[list(values)])

    def parents(self) -> tuple[type[Operation], ...]:
        raise NotImplementedError

    def print(self, printer: Printer) -> None:
        if self.operands:
            printer.print_string(" ")
            printer.print_list(self.operands, printer.print_ssa_value)
            printer.print_string(" : ")
            printer.print_list((v.type for v in self.operands), printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser):
        start = parser._current_token.span
        ops = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand) or []
        types = []
        if ops:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != len(ops):
            parser.raise_error(f"{cls.name} has {len(ops)} value(s) but {len(types)} type(s)", start)
        return cls(parser.resolve_operands(ops, types, start))

    def verify_(self) -> None:
        if not isinstance(self.parent_op(), self.parents()):
            raise VerifyException(f"{fmt_loc(self)}'{self.name}' must be inside {self.PARENTS_TEXT}")
