"""kitsune-fuse-copies: tasks that only move data are inlined into the tasks that read them.

A task whose body holds nothing but layout ops (the op table's ``layout`` category:
slice, concat, reshape, permute, expand, pad, ...) and casts computes no value: as a task of
its own it writes its result to DRAM and every consumer reads it back, a round trip
and a kernel (in bulk-sync) for nothing. Such tasks appear when
``kitsune-materialize`` moves the arithmetic out of a task: Llama's KV-cache concat
stayed behind as a copy of the whole cache (33 MB of traffic at batch 8) once the
K/V projection had a task of its own, and so did the query's head split.

Each such task whose results only feed other tasks (through channels; a result that
leaves the graph is stored anyway, so that task stays) is removed: its ops are cloned
at the top of every consuming task's body, which reads the copy's own inputs instead
(graph arguments directly, other tasks' results through an ``all`` channel, weakened
later where it can be finer). The consumer's loads then index the copy's sources
directly (the concat becomes a select between two loads).

A copy read only as the input of multi-tap convolutions stays (``feeds_windowed_convs``): stored channels-last,
it turns the convolutions' gathers into vector loads.

Runs after ``kitsune-materialize`` (which creates such tasks) and before
``kitsune-choose-schedules`` (which picks templates and tiles for the tasks that
remain).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from kitsune.dialects import dataflow as df
from kitsune.dialects.graph import GraphOp as GOp


def is_copy(task: df.TaskOp) -> bool:
    """Every op of the body is a layout op or a cast (no arithmetic, no reduction, no gather): MeshGraphNet's
    ``cat(x, agg.to(bf16))`` before the node MLP, left behind once the scatter has a task of its own, was a
    kernel of its own (5.2 us on the H100) writing the [10000, 256] operand the GEMM read back."""
    ops = [o for o in task.body.blocks.first.ops if not isinstance(o, df.YieldOp)]
    return bool(ops) and all(isinstance(o, GOp) and (o.OPDEF.category == "layout" or o.OPDEF.name == "cast")
                             for o in ops)


def _consumers(task: df.TaskOp) -> list[tuple[df.ChannelOp, df.TaskOp, int]] | None:
    """(channel, consuming task, operand index) for every read of ``task``'s results; None when a result is
    used by anything but a channel feeding tasks (e.g. it leaves the graph)."""
    out = []
    for r in task.results:
        for u in r.uses:
            ch = u.operation
            if not isinstance(ch, df.ChannelOp):
                return None
            for cu in ch.result.uses:
                if not isinstance(cu.operation, df.TaskOp):
                    return None
                out.append((ch, cu.operation, cu.index))
    return out


def _source_for(value: SSAValue, cons: df.TaskOp, operands: list[SSAValue]) -> SSAValue:
    """What ``cons`` reads for ``value`` (an operand of the copy task): a graph argument as it is, a channel's
    producer through an ``all`` channel (always consistent; legalised later), reusing one ``cons`` already
    reads."""
    if not isinstance(value.owner, df.ChannelOp):
        return value
    src = value.owner.source
    for o in operands:
        if isinstance(o.owner, df.ChannelOp) and o.owner.source is src and o.owner.rel == "all":
            return o
    ch = df.ChannelOp(src, "all")
    Rewriter.insert_op(ch, InsertPoint.before(cons))
    return ch.result


def argument_for(block: Block, operands: list[SSAValue], src: SSAValue, like: SSAValue) -> SSAValue:
    """The argument of a task body ``block`` (its task's operands ``operands``, extended in place) that carries
    ``src``: the one that reads it already, else a new one with ``like``'s type and name."""
    if src in operands:
        return block.args[operands.index(src)]
    new_arg = block.insert_arg(like.type, len(block.args))
    new_arg.name_hint = like.name_hint
    operands.append(src)
    return new_arg


def inline_copy(task: df.TaskOp, uses: list[tuple[df.ChannelOp, df.TaskOp, int]]) -> None:
    """Clone ``task``'s ops into each consumer (at the top of its body) and erase ``task`` (the channels that fed
    only it are left unused: ``legalise_channels`` removes them)."""
    src_block = task.body.blocks.first
    yielded = list(src_block.last_op.operands)
    for cons in dict.fromkeys(c for _, c, _ in uses):
        block: Block = cons.body.blocks.first
        mapping: dict[SSAValue, SSAValue] = {}
        operands = list(cons.operands)
        for arg, val in zip(src_block.args, task.operands):
            if arg.uses:
                mapping[arg] = argument_for(block, operands, _source_for(val, cons, operands), arg)
        first = block.first_op
        for o in src_block.ops:
            if isinstance(o, df.YieldOp):
                break
            clone = o.clone(value_mapper=mapping)
            block.insert_op_before(clone, first)
        # the consumer's arguments that carried the copy's results now take the cloned values
        for ch, c, idx in uses:
            if c is not cons:
                continue
            k = list(task.results).index(ch.source)
            block.args[idx].replace_all_uses_with(mapping.get(yielded[k], yielded[k]))
        cons.operands = operands
        region_dce(cons.body)  # the clones of the copy's results this consumer does not read
        cons.drop_unused_args()  # the arguments that carried the copy's results (and now unread inputs)
    for ch in dict.fromkeys(ch for ch, _, _ in uses):
        ch.detach()
        ch.erase()
    task.detach()
    task.erase()  # the channels that only fed it go with legalise_channels' sweep


def feeds_windowed_convs(uses: list[tuple[df.ChannelOp, df.TaskOp, int]]) -> bool:
    """Every consumer reads the copy as the input of a multi-tap convolution (``layouts.windowed_conv_input``: a
    UNet's nearest upsampling before its 3 x 3): the copy stays, stored channels-last, so that the convolution
    loads channel vectors instead of gathering through the copy's reshapes."""
    from kitsune.codegen.layouts import windowed_conv_input

    return all(u.operation is not None and windowed_conv_input(u.operation, u.index)
               for _, cons, idx in uses for u in cons.body.blocks.first.args[idx].uses)


@dataclass(frozen=True)
class FuseCopiesPass(ModulePass):
    """Inline tasks that only move data (layout ops) into the tasks that read them."""

    name = "kitsune-fuse-copies"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from kitsune.passes.choose_schedules import legalise_channels

        for g in [o for o in op.walk() if isinstance(o, df.GraphOp)]:
            changed = False
            for t in list(g.tasks()):
                if not is_copy(t):
                    continue
                uses = _consumers(t)
                if uses and not feeds_windowed_convs(uses):
                    inline_copy(t, uses)
                    changed = True
            if changed:
                legalise_channels(g)


__all__ = ["FuseCopiesPass", "is_copy", "inline_copy", "argument_for"]
