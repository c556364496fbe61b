"""A small builder for graph ops inside passes: result types inferred from the op
table. ``GraphBuilder.before(rewriter, op)`` inserts before the op being rewritten
(keeping its location); ``GraphBuilder.at_end(block)`` appends to a block."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from kitsune.dialects import graph


class GraphBuilder:
    def __init__(self, insert: Callable[[Operation], Any], location: Attribute | None = None):
        self._insert = insert
        self.location = location
        self.ops: list[Operation] = []

    @classmethod
    def before(cls, rewriter: PatternRewriter, anchor: Operation) -> GraphBuilder:
        return cls(lambda op: rewriter.insert(op, InsertPoint.before(anchor)), anchor.location)

    @classmethod
    def at_end(cls, block: Block) -> GraphBuilder:
        return cls(block.add_op)

    def op(self, name: str, *operands: SSAValue, result_type: Attribute | None = None, **attrs: Any) -> SSAValue:
        types = [o.type for o in operands]
        if result_type is None:
            (result_type,) = graph.infer_result_types(name, types, **attrs)
        new = graph.build(name, list(operands), [result_type], **attrs)
        if self.location is not None:
            new.location = self.location
        self._insert(new)
        self.ops.append(new)
        return new.results[0]

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        """A rank-0 constant of the element type of ``like``."""
        elem = like.type.get_element_type()
        t = TensorType(elem, [])
        attr = DenseIntOrFPElementsAttr.from_list(t, [value])
        return self.op("constant", result_type=t, value=attr)

    def expand_heads(self, x: SSAValue, g: int) -> SSAValue:
        """[B, H, L, E] -> [B, H * g, L, E], each head repeated g times (grouped-query attention)."""
        s = list(x.type.get_shape())
        et = x.type.get_element_type()
        r5 = self.op("reshape", x, result_type=TensorType(et, [s[0], s[1], 1, s[2], s[3]]))
        e5 = self.op("expand", r5, shape=[s[0], s[1], g, s[2], s[3]])
        return self.op("reshape", e5, result_type=TensorType(et, [s[0], s[1] * g, s[2], s[3]]))
