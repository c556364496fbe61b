"""Which tensors a program will store channels-last, read off the dataflow graph before its kernels exist.

``kitsune.codegen.layouts`` decides the storage orders on the kernels' stages (at code generation, after the
schedules): a buffer written and read only by convolution stages is stored ``[n, h, w, c]``. The same rule on the
tasks (their ``template`` attributes and the channels between them) tells the schedule layer what a convolution
will read: the tuning database keys a convolution by its input's layout (``Problem.layout``: the same shape over
an NCHW and a channels-last input are different kernels, 24.9 against 7.4 us for inception's 3x3 on the H100,
bench/kernels/NOTES.md section 28), and ``kitsune-tune`` isolates a task with its program's layouts
(``isolate.task_module``).
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import SSAValue

from kitsune.codegen.layouts import channels_last_shape, elementwise_body, spans_channels, unary_elementwise_source
from kitsune.dialects import dataflow as df
from kitsune.dialects.regions import tensor_shape


def is_conv_task(op) -> bool:
    """``op`` is a task that ``kitsune-choose-schedules`` gave the conv template."""
    return isinstance(op, df.TaskOp) and op.attributes.get("template") == StringAttr("conv")


def readers(r: SSAValue) -> list:
    """The operations reading value ``r``, through the channels that carry it."""
    return [w for u in r.uses for w in (readers(u.operation.results[0]) if isinstance(u.operation, df.ChannelOp)
                                        else [u.operation])]


def carried(v: SSAValue) -> SSAValue:
    """What task operand ``v`` reads: the task result a channel carries, else ``v`` itself."""
    return v.owner.source if isinstance(v.owner, df.ChannelOp) else v


def feeds_conv_inputs(r: SSAValue) -> bool:
    """Task result ``r`` is read by conv tasks only, each reading it as its convolution's input (through
    one-operand elementwise ops)."""
    rs = readers(r)
    if not rs or not all(is_conv_task(o) for o in rs):
        return False
    for t in rs:
        args = [a for a, v in zip(t.body.blocks.first.args, t.ins) if carried(v) is r]
        convs = [o for o in t.body.blocks.first.ops if getattr(o, "name", "") == "graph.conv2d"]
        if not args or not convs or any(unary_elementwise_source(c.operands[0]) not in args for c in convs):
            return False
    return True


def elementwise_task(op) -> bool:
    """``op`` is a task of one result whose body is elementwise and layout ops only (a UNet's GroupNorm affine +
    SiLU, its nearest upsampling), whatever kind the pass that made it gave it."""
    return isinstance(op, df.TaskOp) and len(op.outs) == 1 and elementwise_body(op.body.blocks.first)


def channels_last_writer(op) -> bool:
    """``op`` is an elementwise (or layout) task whose tile spans the channels of its rank-4 result
    (``layouts.spans_channels``): stored channels-last, its stores stay runs of whole sectors
    (``select.conv_input_tile``)."""
    return elementwise_task(op) and spans_channels(tensor_shape(op.outs[0].type), op.tile_sizes())


def stored_channels_last(r: SSAValue) -> bool:
    """Task result ``r`` is a tensor its program stores channels-last: written by a conv task or an elementwise task
    whose tile spans the channels (``channels_last_writer``), rank 4 with at least 16 channels (a multiple of 8)
    and more than one pixel, read by conv tasks only (an elementwise writer's: as their convolutions' input)."""
    rs = readers(r)
    if not channels_last_shape(tensor_shape(r.type)) or not rs or not all(is_conv_task(o) for o in rs):
        return False
    return is_conv_task(r.owner) or channels_last_writer(r.owner) and feeds_conv_inputs(r)


def operand_stored_channels_last(task: df.TaskOp, i: int) -> bool:
    """Operand ``i`` of conv task ``task`` is a tensor its program stores channels-last."""
    return is_conv_task(task) and stored_channels_last(carried(task.ins[i]))


def conv_input_channels_last(task: df.TaskOp, conv) -> bool:
    """The input of convolution ``conv`` (a ``graph.conv2d`` of conv task ``task``, its operand 0 followed back
    through one-operand elementwise ops to an argument of the task's body) is stored channels-last."""
    src = unary_elementwise_source(conv.operands[0])
    args = list(task.body.blocks.first.args)
    return src in args and operand_stored_channels_last(task, args.index(src))


__all__ = ["is_conv_task", "readers", "carried", "feeds_conv_inputs", "elementwise_task", "channels_last_writer", "stored_channels_last", "operand_stored_channels_last",
           "conv_input_channels_last"]
