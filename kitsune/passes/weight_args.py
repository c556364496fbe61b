"""Function arguments as weights: the importer's kind / label attributes, and adding or dropping arguments.

Shared by the graph passes that make *derived parameters* (``kitsune.derived_weights``): ``kitsune-merge-siblings``
and ``kitsune-project-gathers``.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, StringAttr, TensorType
from xdsl.ir import BlockArgument, SSAValue

CONST_KINDS = ("parameter", "constant")
"""Argument kinds whose value is fixed across calls (a weight derived from them is computed once)."""


def arg_kind(f: func.FuncOp, v: SSAValue) -> tuple[str, str] | None:
    """(kind, label) of ``v`` when it is an argument of ``f`` with the importer's attributes, else None."""
    if not isinstance(v, BlockArgument) or v.block is not f.body.blocks.first or f.arg_attrs is None:
        return None
    a = f.arg_attrs.data[v.index].data
    kind, name = a.get("kitsune.kind"), a.get("kitsune.name")
    if not isinstance(kind, StringAttr) or not isinstance(name, StringAttr):
        return None
    return kind.data, name.data


def derived_kind(kinds) -> str:
    """The kind of a weight derived from weights of ``kinds``: constant when all are, else parameter."""
    return "constant" if set(kinds) == {"constant"} else "parameter"


def add_arg(f: func.FuncOp, t: TensorType, label: str, kind: str) -> BlockArgument:
    """A new last argument of ``f`` of type ``t``, labelled ``label`` of ``kind``."""
    block = f.body.blocks.first
    arg = block.insert_arg(t, len(block.args))
    attrs = list(f.arg_attrs.data) + [DictionaryAttr({"kitsune.name": StringAttr(label),
                                                      "kitsune.kind": StringAttr(kind)})]
    f.arg_attrs = ArrayAttr(attrs)
    f.function_type = FunctionType.from_lists([a.type for a in block.args], f.function_type.outputs.data)
    return arg


def weight_functions(module):
    """The functions of ``module`` with a body and the importer's argument attributes (kinds and labels)."""
    return [o for o in module.walk() if isinstance(o, func.FuncOp) and o.body.blocks and o.arg_attrs is not None]


class DerivedArgs:
    """The derived-weight arguments of one function, one per label: a recipe asked for twice is one argument."""

    def __init__(self, f: func.FuncOp):
        self.f = f
        self.made: dict[str, BlockArgument] = {}

    def get(self, label: str, t: TensorType, kind: str) -> BlockArgument:
        """The argument labelled ``label`` (type ``t``, ``kind``), added the first time it is asked for."""
        if label not in self.made:
            self.made[label] = add_arg(self.f, t, label, kind)
        return self.made[label]


def drop_unused_args(f: func.FuncOp, candidates: list[BlockArgument]) -> None:
    """Remove those of ``candidates`` that nothing reads any more from ``f``'s signature."""
    block = f.body.blocks.first
    for a in sorted(set(candidates), key=lambda a: -a.index):
        if a.uses.get_length():
            continue
        i = a.index
        block.erase_arg(a)
        f.arg_attrs = ArrayAttr([x for j, x in enumerate(f.arg_attrs.data) if j != i])
    f.function_type = FunctionType.from_lists([a.type for a in block.args], f.function_type.outputs.data)


__all__ = ["CONST_KINDS", "arg_kind", "derived_kind", "add_arg", "weight_functions", "DerivedArgs",
           "drop_unused_args"]
