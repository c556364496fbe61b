"""kitsune-project-gathers: a linear over gathered rows projects the rows before they are gathered.

    linear(cat(x[src], x[dst], e), W, b)
      ->  linear(e, W_e, b) + (x W_s^T)[src] + (x W_d^T)[dst]          (W = [W_s | W_d | W_e] by columns)

A graph network's message function (MeshGraphNet's edge MLP, PyG's ``EdgeConv`` / ``MetaLayer``) applies a linear
to the concatenation of its edges' endpoint rows and the edge's own features. Gathered first, the product runs
over every edge (mgn_10k: 60000 rows x K 384); projected first, the endpoint parts run over the nodes (10000
rows), and what is gathered are rows of the (narrower or equal) projection, which ``kitsune-form-regions`` loads
by index in the edge GEMM's epilogue: the edge GEMM's K drops to the edge features' width.

A concatenation part is projected when it is ``index_select(x, idx, dim=0)`` or ``x[idx]`` of a 2-D ``x`` with
fewer rows than the gather picks (else projecting first is no cheaper). The weight's column blocks are *derived
parameters* (``slice(dim=1, 0:128: W)``, ``kitsune.derived_weights``), so ``W`` must be a function argument of
kind ``parameter`` or ``constant``; ``kitsune-merge-siblings`` (after this pass) then merges the projections of
one ``x`` (``x W_s^T``, ``x W_d^T``) into one GEMM. The bias stays with the parts that are not gathered (with the
first projection when every part is). The parts' products are added in the result's element type: the rounding
differs from one K loop by the roundings of the projections (bf16: a few units in the last place of the
result).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, BlockArgument, SSAValue
from xdsl.passes import ModulePass

from kitsune.derived_weights import concat_label, slice_label
from kitsune.dialects import graph
from kitsune.dialects.graph import GraphOp, is_last_dim_concat
from kitsune.passes.weight_args import CONST_KINDS, DerivedArgs, arg_kind, drop_unused_args, weight_functions


def _shape(v: SSAValue) -> list[int]:
    return list(v.type.get_shape())


def _row_gather(o) -> bool:
    """``o`` picks whole rows of a 2-D tensor by one rank-1 index: ``index_select(x, i, dim=0)`` or ``x[i]``
    (``graph.index`` with ``dims = [0]``)."""
    if not isinstance(o, GraphOp) or len(o.operands) != 2 or len(_shape(o.operands[0])) != 2 \
            or len(_shape(o.operands[1])) != 1:
        return False
    if o.OPDEF.name == "index_select":
        return o.attrs()["dim"] % 2 == 0
    return o.OPDEF.name == "index" and list(o.attrs()["dims"]) == [0]


def _projectable(part: SSAValue) -> bool:
    """``part`` gathers rows of a 2-D tensor with fewer rows than it picks (projecting first is cheaper)."""
    o = part.owner
    return _row_gather(o) and len(_shape(part)) == 2 and _shape(o.operands[0])[0] < _shape(part)[0]


def _candidate(f: func.FuncOp, op: GraphOp) -> GraphOp | None:
    """The last-dim concatenation ``op`` (a linear) projects, when the rewrite applies."""
    if op.OPDEF.name != "linear" or len(op.results) != 1:
        return None
    cat = op.operands[0].owner
    if not is_last_dim_concat(cat) or len(_shape(cat.results[0])) != 2 or cat.results[0].uses.get_length() != 1:
        return None
    if any(arg_kind(f, p) is None or arg_kind(f, p)[0] not in CONST_KINDS for p in op.operands[1:]):
        return None
    if not any(_projectable(p) for p in cat.operands):
        return None
    return cat


def _columns(derived: DerivedArgs, w: SSAValue, blocks: list[tuple[int, int]]) -> BlockArgument:
    """Weight ``w``'s columns ``blocks`` ([start, end) each), side by side, as a derived argument."""
    kind, label = arg_kind(derived.f, w)
    labels = [slice_label(1, a, b, label) for a, b in blocks]
    t = TensorType(w.type.get_element_type(), [_shape(w)[0], sum(b - a for a, b in blocks)])
    return derived.get(labels[0] if len(labels) == 1 else concat_label(1, labels), t, kind)


def _project(derived: DerivedArgs, op: GraphOp, cat: GraphOp) -> list[BlockArgument]:
    """Rewrite ``op`` = linear(``cat``, W, b?); returns the weights it read."""
    block: Block = op.parent_block()
    w, bias = op.operands[1], (op.operands[2] if len(op.operands) > 2 else None)
    rt = op.results[0].type
    et = rt.get_element_type()
    n = _shape(w)[0]
    offsets, start = [], 0
    for p in cat.operands:
        offsets.append((start, start + _shape(p)[1]))
        start += _shape(p)[1]
    gathered = [i for i, p in enumerate(cat.operands) if _projectable(p)]
    rest = [i for i in range(len(cat.operands)) if i not in gathered]

    def emit(name, operands, rtype, **attrs):
        new = graph.build(name, operands, [rtype], **attrs)
        new.location = op.location
        block.insert_op_before(new, op)
        return new.results[0]

    terms = []
    if rest:
        parts = [cat.operands[i] for i in rest]
        a = parts[0] if len(parts) == 1 else emit(
            "concat", parts, TensorType(et, [_shape(parts[0])[0], sum(_shape(p)[1] for p in parts)]), dim=1)
        wr = _columns(derived, w, [offsets[i] for i in rest])
        terms.append(emit("linear", [a, wr] + ([bias] if bias is not None else []), rt))
    for j, i in enumerate(gathered):
        sel: GraphOp = cat.operands[i].owner
        x, idx = sel.operands
        wg = _columns(derived, w, [offsets[i]])
        with_bias = bias is not None and not rest and j == 0
        q = emit("linear", [x, wg] + ([bias] if with_bias else []), TensorType(et, [_shape(x)[0], n]))
        terms.append(emit(sel.OPDEF.name, [q, idx], rt, **sel.attrs()))
    total = terms[0]
    for t in terms[1:]:
        total = emit("add", [total, t], rt)
    op.results[0].replace_all_uses_with(total)
    read = [v for v in op.operands[1:] if isinstance(v, BlockArgument)]
    op.detach()
    op.erase()
    sels = {p.owner for p in cat.operands if isinstance(p.owner, GraphOp)}
    cat.detach()
    cat.erase()
    for s in sels:  # gathers nothing else reads
        if _row_gather(s) and not any(r.uses.get_length() for r in s.results):
            s.detach()
            s.erase()
    return read


@dataclass(frozen=True)
class ProjectGathersPass(ModulePass):
    """linear(cat(x[idx], ..)) -> (x W_x^T)[idx] + .. : gathered rows are projected before they are gathered."""

    name = "kitsune-project-gathers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in weight_functions(op):
            derived, read = DerivedArgs(f), []
            for o in list(f.body.blocks.first.ops):
                if isinstance(o, GraphOp) and o.parent is not None:
                    cat = _candidate(f, o)
                    if cat is not None:
                        read += _project(derived, o, cat)
            drop_unused_args(f, read)


__all__ = ["ProjectGathersPass"]
