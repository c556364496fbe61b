"""kitsune-fuse-scatters: a scatter-accumulate moves into the task that computes its source rows.

``kitsune-materialize`` gives every scatter-accumulate (``index_add`` into zeros) a task of its own, which the
scatter template runs: it reads the source back row block by row block and adds each row into the result with
atomics. When the source is a result of another task whose tiles cover it (MeshGraphNet's edge messages ``m``,
the result of the edge MLP's second GEMM and LayerNorm), that task can add its own tiles instead, in its
epilogue, while they are in registers: the source is never written to memory for the scatter and read back
(2 x 15 MB on mgn_10k), and the scatter's kernel goes (17 us on the H100, bench/kernels/NOTES.md section 24).
Issue 16: "the edge MLP's output is scatter-added into the node accumulator in its epilogue, with atomics".

Moved: a task whose body is, besides casts and one-operand elementwise ops of its source, one zero-started
``index_add`` (``scatter_form``), whose source rows are a block argument fed by a channel from a result of
another task, with that task's domain shape (its result #0's: every tile of the producer holds whole source
rows and columns, ``kitsune.dialects.scattered_results``). The producer gets the scatter (cloned, reading its
own value for the source and the index tensor as a new operand) as one more result; the scatter task and its
channel go, its readers read the new result (an ``all`` channel: a kernel boundary, or a temporal wait, orders
the atomics before them). The code generator stores that result with atomic adds at the index the tile's rows
give (``StageGen``), into a buffer the runtime zeroes before the kernel (``Kernel.zero``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce

from kitsune.dialects import dataflow as df
from kitsune.dialects.graph import GraphOp as GOp
from kitsune.dialects.regions import tensor_shape
from kitsune.dialects.scattered_results import scatter_source
from kitsune.passes.fuse_copies import argument_for


def _lone_scatter(task: df.TaskOp):
    """(the scatter op, the block argument of its source) of a task that is one zero-started scatter of its
    source (through casts / one-operand elementwise ops), else None."""
    body = task.body.blocks.first
    y = body.last_op
    if len(y.operands) != 1 or not isinstance(y.operands[0].owner, GOp):
        return None
    op = y.operands[0].owner
    src = scatter_source(op)
    while src is not None and isinstance(src.owner, GOp) and src.owner.OPDEF.category == "elementwise" \
            and len(src.owner.operands) == 1:  # (a cast to the fp32 accumulator)
        src = src.owner.operands[0]
    if src is None or not isinstance(src.owner, Block):
        return None
    others = [o for o in body.ops if o is not y and o is not op and isinstance(o, GOp)]
    if any(o.OPDEF.name != "constant" and (o.OPDEF.category != "elementwise" or len(o.operands) != 1) for o in others):
        return None
    return op, src


def fuse_scatter(task: df.TaskOp) -> bool:
    """Move ``task`` (a lone scatter) into the producer of its source rows (see the module doc); whether it did."""
    got = _lone_scatter(task)
    if got is None:
        return False
    op, src = got
    chan = task.operands[src.index]
    if not isinstance(chan.owner, df.ChannelOp) or not isinstance(chan.owner.source.owner, df.TaskOp):
        return False
    prod: df.TaskOp = chan.owner.source.owner
    k = list(prod.results).index(chan.owner.source)
    pbody = prod.body.blocks.first
    py = pbody.last_op
    value = py.operands[k]
    if tensor_shape(value.type) != tensor_shape(prod.outs[0].type):
        return False  # the producer's tiles do not cover the source rows as they are
    if any(isinstance(o, GOp) and scatter_source(o) is not None for o in pbody.ops):
        return False  # (one scatter per producer)
    # the scatter's other operands (the index tensor): operands of the producer, reused or added -- each must
    # be defined before the producer (a graph argument, or a channel of an earlier task)
    tbody = task.body.blocks.first
    block = prod.parent_block()
    at = block.get_operation_index(prod)
    for arg, val in zip(tbody.args, task.operands):
        owner = val.owner
        if arg is not src and arg.uses and not isinstance(owner, Block) and owner.parent_block() is block \
                and block.get_operation_index(owner) > at:
            return False
    mapping: dict[SSAValue, SSAValue] = {src: value}
    operands = list(prod.operands)
    for arg, val in zip(tbody.args, task.operands):
        if arg is not src and arg.uses:
            mapping[arg] = argument_for(pbody, operands, val, arg)
    for o in tbody.ops:
        if o is tbody.last_op:
            break
        pbody.insert_op_before(o.clone(value_mapper=mapping), py)
    py.operands = list(py.operands) + [mapping[op.results[0]]]
    attrs = dict(prod.attributes)
    new_prod = df.TaskOp(prod.task_name, prod.task_kind, operands, [r.type for r in prod.outs] + [op.results[0].type],
                         prod.tile_sizes(), prod.detach_region(prod.body), attrs)
    block.insert_op_before(new_prod, prod)
    for i, r in enumerate(prod.results):
        r.replace_all_uses_with(new_prod.results[i])
    task.results[0].replace_all_uses_with(new_prod.results[-1])  # (its channels: legalised after)
    prod.detach()
    prod.erase()
    task.detach()
    task.erase()
    region_dce(new_prod.body)
    return True


@dataclass(frozen=True)
class FuseScattersPass(ModulePass):
    """Scatter-accumulates into the epilogue of the task that computes their source rows."""

    name = "kitsune-fuse-scatters"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from kitsune.passes.choose_schedules import legalise_channels

        for g in [o for o in op.walk() if isinstance(o, df.GraphOp)]:
            changed = False
            for t in list(g.tasks()):
                changed = fuse_scatter(t) or changed
            if changed:
                for t in g.tasks():  # the scatter's readers kept its source and index rows as unread arguments
                    t.drop_unused_args()
                legalise_channels(g)


__all__ = ["FuseScattersPass", "fuse_scatter"]
