"""kitsune-inplace-updates: a buffer mutation written into the buffer's own storage.

torch.export records an in-place update of a registered buffer (a KV cache's
``cache.index_copy_(2, pos, k)`` or ``cache[:, :, pos] = k``) functionally: the new
value is an ``index_copy`` of the buffer, returned as a result that carries
``kitsune.mutates = "<buffer>"``; after the call the runtime's copy of the buffer
must hold it. Done literally, that is a copy of the whole buffer per call.

This pass marks such an ``index_copy`` ``in_place`` when

* its ``x`` is the function argument of the buffer the result mutates, and
* that argument is read by nothing else (every other reader would see the old value,
  which the in-place write destroys),

so the result takes the buffer's storage and only the source's slices are written
(the scatter template stores them; the runtime then has nothing to copy back).
The meaning is unchanged (the reference interpreter computes the same value);
``in_place`` says where the result lives and what moves (the op's counts).

Readers of the result (the attention over the cache) read it **forwarded** (``forwarded``
on the update): ``where(arange == I[j], S[j], X)`` over the buffer as it was, the same
selects a functional update becomes. Only the rows the update writes differ between the
buffer before and after it, and the selects take exactly those from the source, so a
reader no longer depends on the write: the write and the readers may run in any order,
and a reader's loads of the buffer may be issued before it waits for the kernels before
it (``kitsune.codegen.triton_gen.early_loads``: a KV cache streams while the step's new
key is computed). Its loads of the rows being written return either value, and the
selects discard both. Without forwarding (more than ``MAX_SELECTS`` indices, dynamic
shapes) readers read the buffer after the write.

A mutation the pass does not mark stays functional: the result is computed whole and
the runtime copies it into the buffer after the call. Such an ``index_copy`` (and one
that is no mutation at all) becomes one select per index, ``where(arange == I[j], S[j],
...)`` along its dim, which the evaluator computes element by element (up to
``MAX_SELECTS`` indices; beyond, code generation says it cannot invert the index).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass

from kitsune.dialects.graph import GraphOp, to_attr
from kitsune.passes.builder import GraphBuilder

IN_PLACE_OPS = ("index_copy",)
MAX_SELECTS = 16


def _arg_name(f: func.FuncOp, a: BlockArgument) -> str | None:
    attrs = f.arg_attrs.data[a.index].data if f.arg_attrs is not None else {}
    kind = attrs.get("kitsune.kind")
    name = attrs.get("kitsune.name")
    if kind is None or kind.data != "buffer" or name is None:
        return None
    return name.data


def in_place_candidates(f: func.FuncOp) -> list[GraphOp]:
    """The update op of every mutated-buffer result of ``f`` that can be written in place."""
    from kitsune.interpreter import mutated_results

    ret = f.body.blocks.first.last_op
    out = []
    for i, buf in mutated_results(f).items():
        op = ret.operands[i].owner
        if not isinstance(op, GraphOp) or op.OPDEF.name not in IN_PLACE_OPS:
            continue
        x = op.operands[0]
        if not isinstance(x, BlockArgument) or x.owner is not f.body.blocks.first or _arg_name(f, x) != buf:
            continue
        if len(list(x.uses)) != 1:
            continue
        out.append(op)
    return out


def index_copy_as_selects(op: GraphOp) -> SSAValue | None:
    """``index_copy(X, I, S)`` along dim d as ``where(arange(n_d) == I[j], S[.., j, ..], ...)`` folded over j (the
    last index wins, as a sequential copy would), inserted before ``op``; None when shapes are dynamic or there
    are more than ``MAX_SELECTS`` indices."""
    x, idx, src = op.operands
    xs, J = list(x.type.get_shape()), idx.type.get_shape()[0]
    if any(n < 0 for n in xs) or J < 0 or J > MAX_SELECTS:
        return None
    d = op.attrs()["dim"] % len(xs)
    r = len(xs)
    b = GraphBuilder(lambda o: op.parent_block().insert_op_before(o, op), op.location)
    at = [1] * r
    at[d] = xs[d]
    it = idx.type.get_element_type()
    ar = TensorType(it, [xs[d]])
    pos = b.op("constant", result_type=ar, value=DenseIntOrFPElementsAttr.from_list(ar, list(range(xs[d]))))
    pos = b.op("reshape", pos, result_type=TensorType(it, at))
    y = x
    for j in range(J):
        ij = b.op("reshape", b.op("slice", idx, dim=0, start=j, end=j + 1), result_type=TensorType(it, [1] * r))
        sj = b.op("slice", src, dim=d, start=j, end=j + 1)
        y = b.op("where", b.op("eq", pos, ij), sj, y)
    return y


def forward_readers(op: GraphOp) -> bool:
    """Every reader of in-place update ``op``'s result but the function's return reads ``index_copy_as_selects``
    over the old buffer instead (see the module doc); True when there was one to rewrite."""
    y = op.results[0]
    if all(isinstance(u.operation, func.ReturnOp) for u in y.uses):
        return False
    fwd = index_copy_as_selects(op)
    if fwd is None:
        return False
    y.replace_uses_with_if(fwd, lambda u: not isinstance(u.operation, func.ReturnOp))
    return True


@dataclass(frozen=True)
class InplaceUpdatesPass(ModulePass):
    """Mark buffer mutations ``in_place`` where the buffer is read by nothing else, their readers reading them
    forwarded; other ``index_copy`` ops become selects (see the module doc)."""

    name = "kitsune-inplace-updates"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                for g in in_place_candidates(f):
                    g.properties["in_place"] = to_attr("bool", True)
                    if forward_readers(g):
                        g.properties["forwarded"] = to_attr("bool", True)
        for g in [o for o in op.walk() if isinstance(o, GraphOp) and o.OPDEF.name == "index_copy"]:
            if g.attrs().get("in_place"):
                continue
            y = index_copy_as_selects(g)
            if y is not None:
                g.results[0].replace_all_uses_with(y)
                g.detach()
                g.erase()


__all__ = ["InplaceUpdatesPass", "in_place_candidates", "forward_readers", "IN_PLACE_OPS"]
