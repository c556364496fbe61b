"""kitsune-merge-siblings: contractions that read the same input with parameter weights become one.

    conv2d(x, W1, b1), conv2d(x, W2, b2), conv2d(x, W3, b3)
      ->  y = conv2d(x, W, b);  y[:, :n1], y[:, n1:n1+n2], y[:, n1+n2:]      (W = concat(W1, W2, W3) along dim 0)

An Inception block's three 1x1 convolutions of its input (and the projections of a transformer layer written as
separate ``q_proj`` / ``k_proj`` / ``v_proj`` or ``gate_proj`` / ``up_proj`` linears) each read the whole input
and each run as a kernel of their own, too narrow to fill the GPU (inception_b8: 112 programs each, 3.2 - 4.2 us
apiece for 3.2 MB of input read three times; one 256 -> 176 convolution: 4.6 us, bench/kernels/NOTES.md section
23). Merged, the input is read once and the grid is one. The slices stay as ops: ``kitsune-form-regions`` keeps
them in the merged contraction's task as results written from its tiles (``kitsune.dialects.sliced_results``),
each with its own epilogue and storage layout, so no copy is made.

The concatenated weights are a *derived parameter*: a new argument of the function labelled with its recipe
(``kitsune.derived_weights``), computed once when the weights are loaded; the original weights, if nothing else
uses them, leave the function. Merged are ``conv2d`` (``groups = 1``, the same stride / padding / dilation and
window) and ``linear``, whose weights (and biases: all or none) are function arguments of kind ``parameter`` or
``constant`` -- never ``input`` (training's weights change every step, the concatenation would be a copy per
call) -- of one element type, at least two per input.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, BlockArgument
from xdsl.passes import ModulePass

from kitsune.derived_weights import concat_label
from kitsune.dialects import graph
from kitsune.dialects.graph import GraphOp
from kitsune.passes.weight_args import (CONST_KINDS, DerivedArgs, arg_kind, derived_kind, drop_unused_args,
                                         weight_functions)

MERGEABLE = {"conv2d": 1, "linear": -1}
"""Op -> the dim of its result along which the siblings' outputs are concatenated (weights: always dim 0)."""


def _key(f: func.FuncOp, op: GraphOp):
    """What siblings must share to merge (None: ``op`` never merges)."""
    name = op.OPDEF.name
    if name not in MERGEABLE or len(op.results) != 1:
        return None
    attrs = op.attrs()
    if name == "conv2d" and attrs.get("groups", 1) != 1:
        return None
    params = op.operands[1:]
    kinds = [arg_kind(f, p) for p in params]
    if any(k is None or k[0] not in CONST_KINDS for k in kinds):
        return None
    w = params[0].type
    if any(p.type.get_element_type() != w.get_element_type() for p in params):
        return None
    return (name, tuple(sorted((k, str(v)) for k, v in attrs.items())), tuple(w.get_shape()[1:]), len(params),
            str(op.results[0].type.get_element_type()))


def _merge(f: func.FuncOp, ops: list[GraphOp], derived: DerivedArgs) -> list[BlockArgument]:
    """Replace sibling ``ops`` (one key) by one op and slices; returns the arguments they read."""
    name = ops[0].OPDEF.name
    first = min(ops, key=lambda o: o.parent_block().get_operation_index(o))
    x = first.operands[0]
    read = [p for o in ops for p in o.operands[1:]]
    merged_params = []
    for j in range(len(ops[0].operands) - 1):
        parts = [o.operands[1 + j] for o in ops]
        labels = [arg_kind(f, p)[1] for p in parts]
        kinds = {arg_kind(f, p)[0] for p in parts}
        shape = list(parts[0].type.get_shape())
        shape[0] = sum(p.type.get_shape()[0] for p in parts)
        t = TensorType(parts[0].type.get_element_type(), shape)
        merged_params.append(derived.get(concat_label(0, labels), t, derived_kind(kinds)))
    out_dim = MERGEABLE[name]
    rt = ops[0].results[0].type
    rank = len(rt.get_shape())
    d = out_dim % rank
    oshape = list(rt.get_shape())
    oshape[d] = sum(o.results[0].type.get_shape()[d] for o in ops)
    new = graph.build(name, [x] + merged_params, [TensorType(rt.get_element_type(), oshape)], **ops[0].attrs())
    new.location = first.location
    block = first.parent_block()
    block.insert_op_before(new, first)
    start = 0
    for o in ops:
        n = o.results[0].type.get_shape()[d]
        sl = graph.build("slice", [new.results[0]], [o.results[0].type], dim=d, start=start, end=start + n)
        sl.location = o.location
        block.insert_op_before(sl, first)
        o.results[0].replace_all_uses_with(sl.results[0])
        start += n
    for o in ops:
        o.detach()
        o.erase()
    return [p for p in read if isinstance(p, BlockArgument)]


@dataclass(frozen=True)
class MergeSiblingsPass(ModulePass):
    """Contractions of one input with parameter weights -> one contraction over the concatenated weights + slices."""

    name = "kitsune-merge-siblings"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in weight_functions(op):
            block: Block = f.body.blocks.first
            derived = DerivedArgs(f)
            read: list[BlockArgument] = []
            values = list(block.args) + [r for o in block.ops for r in o.results]
            for x in values:
                groups: dict[tuple, list[GraphOp]] = {}
                for u in list(x.uses):
                    o = u.operation
                    if isinstance(o, GraphOp) and u.index == 0 and o.parent_block() is block:
                        k = _key(f, o)
                        if k is not None and o not in groups.setdefault(k, []):
                            groups[k].append(o)
                for sib in groups.values():
                    if len(sib) >= 2:  # (in program order: the slices and the label follow the source)
                        sib.sort(key=block.get_operation_index)
                        read += _merge(f, sib, derived)
            drop_unused_args(f, read)


__all__ = ["MergeSiblingsPass", "MERGEABLE"]
