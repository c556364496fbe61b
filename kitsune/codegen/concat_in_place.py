"""Concatenations written in place: a stage that only copies buffers into slices of its result is dropped, and
each part's producer stores straight into its slice.

An Inception block ends in ``relu(cat(y1, y2, y3, y4))``; ``graph-canonicalize`` moves the ReLU into the parts
(their producers' epilogues), which leaves the concatenation a stage that reads every part back and writes it
again: a kernel and a round trip of the whole result (inception_b8: 4.4 us of 37 on the H200). Here each part's
buffer becomes a *view* of the result, the slice ``[offset, offset + size)`` along the concatenated dim
(``Tensor.view``): its producer's stores use the result's strides, the runtime allocates the part as
``result.narrow(dim, offset, size)`` and re-derives it where a call passes the result's storage in, and the
copy is gone.

The stage goes only where nothing can tell: its body is one ``concat`` of its own arguments, each argument a
buffer (not a queue, an input or a program result) that exactly one stage writes with its tiles and nothing
but this stage reads, row-major, each part once; and the result is row-major and read by no stage (it leaves the
program: nothing would wait on the stage that is no longer there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.ir import Block

from kitsune.dialects.graph import GraphOp
from kitsune.dialects.regions import tensor_shape

if TYPE_CHECKING:
    from kitsune.codegen.plan import Plan, Stage


def _copy_concat(st: "Stage") -> GraphOp | None:
    """The concat that is the stage's whole body, of its own arguments, stored whole to one buffer."""
    ops = [o for o in st.op.body.blocks.first.ops if isinstance(o, GraphOp)]
    if len(ops) != 1 or ops[0].name != "graph.concat" or len(st.stores) != 1 or st.pushes or st.pops:
        return None
    cat = ops[0]
    y = st.op.body.blocks.first.last_op
    if list(y.operands) != [cat.results[0]] or st.stores[0][2] or st.split > 1:
        return None
    args = list(cat.operands)
    if len(set(args)) != len(args) or not all(isinstance(a.owner, Block) and a in st.args for a in args):
        return None
    return cat


def elide_concat_copies(plan: "Plan") -> None:
    """Drop every stage the module doc allows, its parts becoming views of its result (and a kernel left empty)."""
    stages = [st for k in plan.kernels for st in k.stages]
    reads: dict[str, int] = {}
    writes: dict[str, list] = {}
    for st in stages:
        for name in set(st.args.values()):
            reads[name] = reads.get(name, 0) + 1
        for _, buf, whole in st.stores:
            writes.setdefault(buf, []).append(whole)
        for _, q in st.pushes:
            writes.setdefault(q.storage, []).append(True)
    fixed = set(plan.args) | {a for _, a in plan.mutates}
    for k in plan.kernels:
        for st in list(k.stages):
            cat = _copy_concat(st)
            if cat is None:
                continue
            out = st.stores[0][1]
            ot = plan.tensors[out]
            if ot.order is not None or ot.view is not None or reads.get(out) or out in fixed:
                continue
            parts = [st.args[a] for a in cat.operands]
            ok = all(plan.tensors[p].role == "buffer" and p not in plan.outputs and p not in fixed
                     and plan.tensors[p].order is None and plan.tensors[p].view is None
                     and reads.get(p) == 1 and writes.get(p) == [False] for p in parts)
            if not ok:
                continue
            dim = cat.attrs()["dim"] % len(ot.shape)
            offset = 0
            for p, a in zip(parts, cat.operands):
                plan.tensors[p].view = (out, dim, offset, tuple(ot.shape))
                offset += tensor_shape(a.type)[dim]
            k.stages.remove(st)
            live = [s.hi for s in k.stages if s.fold is None]
            if live:  # the programs past the remaining stages' would run nothing
                k.grid = min(k.grid, max(live))
    plan.kernels[:] = [k for k in plan.kernels if k.stages]


__all__ = ["elide_concat_copies"]
