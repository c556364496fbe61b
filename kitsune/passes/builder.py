"""A small builder for graph ops inside rewrite patterns: result types inferred
from the op table, the location of the op being rewritten kept."""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from kitsune.dialects import graph


class GraphBuilder:
    def __init__(self, rewriter: PatternRewriter, anchor: Operation):
        self.rewriter = rewriter
        self.anchor = anchor
        self.ops: list[Operation] = []

    def op(self, name: str, *operands: SSAValue, result_type: Attribute | None = None, **attrs: Any) -> SSAValue:
        types = [o.type for o in operands]
        if result_type is None:
            (result_type,) = graph.infer_result_types(name, types, **attrs)
        new = graph.build(name, list(operands), [result_type], **attrs)
        new.location = self.anchor.location
        self.rewriter.insert(new, InsertPoint.before(self.anchor))
        self.ops.append(new)
        return new.results[0]

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        """A rank-0 constant of the element type of ``like``."""
        elem = like.type.get_element_type()
        t = TensorType(elem, [])
        attr = DenseIntOrFPElementsAttr.from_list(t, [value])
        return self.op("constant", result_type=t, value=attr)
