"""Storage orders of global tensors: channels-last convolution inputs and packed convolution weights.

A convolution's implicit GEMM reduces over ``c * kh * kw``. With the input stored ``[n, c, h, w]`` (torch's
layout) a chunk of that reduction is a gather: along a chunk only ``kw`` is contiguous and the window's masks
change from lane to lane, so every element is a 2-byte load. Stored channels-last (``[n, h, w, c]``), a chunk
of channels of one window position is contiguous and its mask is one per pixel: the conv template then loops
window-major (``DotTemplate``: kh, kw per step, a chunk of channels across the lanes) and the loads are 16-byte
vectors. The weight's chunk must then be contiguous too, which ``[f, c, kh, kw]`` is not (channels 9 apart for
a 3x3): the weight is stored ``[kh, kw, c, f]``. Measured before building (``bench/kernels/conv_layout_probe.py``,
H200, 2026-11-26, inception_b8's shapes): the 3x3 96 -> 128 convolution 17.2 -> 7.2 us, the 5x5 16 -> 32
15.5 -> 4.1 us (cuDNN channels-last 13.4 / 10.2 us, NCHW 21.5 / 16.5).

Only what nobody outside the program sees changes layout, and only where every reader gains:

* a **buffer** (a kernel's intermediate result, not an output of the program) becomes channels-last when it is
  rank 4 with at least 16 channels, a multiple of 8, every stage that reads it is a ``conv`` stage reading it
  (through elementwise ops) as its convolution's input, or in its epilogue at the output positions (a
  residual: channels-last, a load along the tile's channels), and every stage that writes it is a ``conv`` stage
  (whose output tile has the channels on a lane axis: its stores stay contiguous);
* a **parameter** becomes ``[kh, kw, c, f]`` when every stage that reads it is such a conv stage reading it as
  its convolution's weight (groups 1, a window larger than 1 x 1), and that stage's input was made
  channels-last (a 1 x 1 convolution's weight ``[f, c]`` is contiguous along the channels as it is: its input
  may be channels-last with the weight left alone). The runtime uploads it permuted (``ORDERS`` of the generated module); a model's parameters
  passed at every call (``torch.compile`` in training) are inputs, never reordered.

A convolution whose weight cannot be packed keeps its input row-major: strided weight loads cost more than the
gather saves (35 us for the 3x3 in ``conv_probe.py``, bench/kernels/NOTES.md section 6).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.ir import Block, SSAValue

from kitsune.dialects.graph import GraphOp
from kitsune.dialects.regions import tensor_shape

if TYPE_CHECKING:
    from kitsune.codegen.plan import Plan, Stage

CHANNELS_LAST = (0, 2, 3, 1)
"""``[n, c, h, w]`` stored as ``[n, h, w, c]``."""
PACKED_WEIGHT = (2, 3, 1, 0)
"""``[f, c, kh, kw]`` stored as ``[kh, kw, c, f]``: a chunk of channels of one window position is contiguous,
and so is the chunk's row of output channels."""
MIN_CHANNELS = 16
"""Fewer channels than a tensor-core step's K (16) give no vector to load: the row-major form stays."""


def channels_last_shape(shape) -> bool:
    """A tensor of ``shape`` may be stored channels-last: rank 4, at least ``MIN_CHANNELS`` channels and a multiple
    of 8 (16-byte vectors along them), more than one pixel."""
    return len(shape) == 4 and shape[1] >= MIN_CHANNELS and shape[1] % 8 == 0 and shape[2] * shape[3] > 1


def spans_channels(shape, tile) -> bool:
    """A tile of a rank-4 ``shape`` holding at least ``MIN_CHANNELS`` channels (or all of them): a stage of such
    tiles stores a channels-last result in runs of whole sectors."""
    return len(shape) == 4 and len(tile) == 4 and (tile[1] >= MIN_CHANNELS or tile[1] == shape[1])


def elementwise_body(block) -> bool:
    """Every graph op of a task's (or stage's) body ``block`` is an elementwise, layout or constant op."""
    ops = [o for o in block.ops if isinstance(o, GraphOp)]
    return bool(ops) and all(o.OPDEF.category in ("elementwise", "layout", "constant") for o in ops)


def _channels_tiled(st: "Stage", shape) -> bool:
    """An elementwise stage computing ``shape`` whose tile spans the channels (``spans_channels``;
    ``kitsune.schedule.select.conv_input_tile``)."""
    return (st.template in ("generic", "pointwise") and tuple(st.shape) == tuple(shape)
            and spans_channels(shape, st.tile) and elementwise_body(st.op.body.blocks.first))


def windowed_conv_input(op, index: int) -> bool:
    """Operand ``index`` of ``op`` is the input of a convolution with a window of more than one tap (groups 1)
    that could be stored channels-last (``channels_last_shape``): ``kitsune-form-regions`` and
    ``kitsune-fuse-copies`` leave such an input's elementwise or layout producer a task of its own, which stores
    it channels-last (``kitsune.schedule.storage.channels_last_writer``) instead of the convolution recomputing it
    per tap over an NCHW gather."""
    if not isinstance(op, GraphOp) or op.name != "graph.conv2d" or index != 0:
        return False
    w = tensor_shape(op.operands[1].type)
    return (len(w) == 4 and w[2] * w[3] > 1 and op.attrs().get("groups", 1) == 1
            and channels_last_shape(tensor_shape(op.operands[0].type)))


def _conv_of(st: "Stage") -> GraphOp | None:
    """The convolution a ``conv`` stage computes (its one conv2d op)."""
    if st.template != "conv":
        return None
    convs = [o for o in st.op.body.blocks.first.ops if isinstance(o, GraphOp) and o.name == "graph.conv2d"]
    return convs[0] if len(convs) == 1 else None


def _unary_elementwise(op) -> bool:
    return (isinstance(op, GraphOp) and op.OPDEF.category == "elementwise" and len(op.operands) == 1
            and op.results[0].type == op.operands[0].type)


def unary_elementwise_source(v: SSAValue) -> SSAValue:
    """``v`` followed back through one-operand elementwise ops of its own type (a ReLU before a convolution):
    what they read at the same index."""
    while _unary_elementwise(v.owner):
        v = v.owner.operands[0]
    return v


def _input_source(conv: GraphOp) -> SSAValue:
    """The convolution's input followed back through one-operand elementwise ops."""
    return unary_elementwise_source(conv.operands[0])


def _epilogue_use(u, out) -> bool:
    """Use ``u`` is an elementwise op whose result has the convolution's output shape ``out``: the epilogue reads
    the value at the tile's own output positions (a residual)."""
    return (isinstance(u.operation, GraphOp) and u.operation.OPDEF.category == "elementwise"
            and tensor_shape(u.operation.results[0].type) == out)


def _feeds_only_input(arg: SSAValue, conv: GraphOp) -> bool:
    """Every use of ``arg`` is on the one chain of one-operand elementwise ops that ends in the convolution's
    input, or (``arg`` itself) an elementwise op of the epilogue at the output positions (a residual)."""
    out = tensor_shape(conv.results[0].type)
    v = arg
    while True:
        uses = list(v.uses)
        if v is arg:  # the block's input also added to the block's result
            uses = [u for u in uses if not (len(u.operation.operands) > 1 and _epilogue_use(u, out))]
        if len(uses) != 1:
            return False
        op = uses[0].operation
        if op is conv:
            return uses[0].index == 0
        if not _unary_elementwise(op):
            return False
        v = op.results[0]


def _epilogue_only(arg: SSAValue, conv: GraphOp) -> bool:
    """``arg`` has the convolution's result shape and only elementwise ops read it: an operand of the epilogue
    (a residual), read at the tile's own output positions."""
    out = tensor_shape(conv.results[0].type)
    uses = list(arg.uses)
    return bool(uses) and tensor_shape(arg.type) == out and all(_epilogue_use(u, out) for u in uses)


def _reads(st: "Stage") -> dict[str, str]:
    """Tensor name -> how the stage reads it: 'input' (its convolution's input, through elementwise ops),
    'weight' (its convolution's weight, directly), 'epilogue' (elementwise at the output positions: a residual)
    or 'other'."""
    out: dict[str, str] = {}
    conv = _conv_of(st)
    for arg, name in st.args.items():
        role = "other"
        if conv is not None and isinstance(arg.owner, Block):
            if conv.operands[1] is arg and len(list(arg.uses)) == 1:
                role = "weight"
            elif _input_source(conv) is arg and _feeds_only_input(arg, conv):
                role = "input"
            elif _epilogue_only(arg, conv):
                role = "epilogue"
        prev = out.get(name)
        out[name] = role if prev in (None, role) else "other"
    return out


def choose_storage_orders(plan: "Plan") -> None:
    """Set ``Tensor.order`` on the buffers and parameters the rules of the module doc allow."""
    stages = [st for k in plan.kernels for st in k.stages]
    readers: dict[str, list[tuple["Stage", str]]] = {}
    writers: dict[str, list["Stage"]] = {}
    for st in stages:
        for name, role in _reads(st).items():
            readers.setdefault(name, []).append((st, role))
        for _, buf, whole in st.stores:
            writers.setdefault(buf, []).append(st if not whole else None)
    queued = {q.storage for q in plan.queues}
    fixed = set(plan.outputs) | set(plan.args) | {a for _, a in plan.mutates} | queued

    def weight_packable(st: "Stage") -> bool:
        conv = _conv_of(st)
        wname = st.args.get(conv.operands[1]) if conv is not None else None
        t = plan.tensors.get(wname) if wname else None
        if t is None or t.role != "parameter" or len(t.shape) != 4 or t.shape[2] * t.shape[3] == 1:
            return False
        if conv.attrs().get("groups", 1) != 1 or any(a == wname for _, a in plan.mutates):
            return False
        return all(role == "weight" for _, role in readers.get(wname, []))

    def input_ok(st: "Stage") -> bool:
        """A channels-last input gains: a window-major loop over a packed weight, or a 1x1 convolution (its
        weight [f, c] is contiguous along the channels as it is)."""
        conv = _conv_of(st)
        w = tensor_shape(conv.operands[1].type)
        if len(w) == 4 and w[2] * w[3] == 1 and conv.attrs().get("groups", 1) == 1:
            return True
        return weight_packable(st)

    for name, t in plan.tensors.items():
        rs = readers.get(name, [])
        if t.role != "buffer" or name in fixed or not rs or not channels_last_shape(t.shape):
            continue
        ws = writers.get(name, [])
        if not ws or any(w is None for w in ws):
            continue
        if all(w.template == "conv" for w in ws):
            if all(role == "input" and input_ok(st) or role == "epilogue" for st, role in rs):
                t.order = CHANNELS_LAST
        elif len(ws) == 1 and _channels_tiled(ws[0], t.shape):
            if all(role == "input" and input_ok(st) for st, role in rs):
                t.order = CHANNELS_LAST
    for st in stages:
        conv = _conv_of(st)
        if conv is None:
            continue
        iname = st.args.get(_input_source(conv))
        if iname is None or plan.tensors[iname].order != CHANNELS_LAST or not weight_packable(st):
            continue
        plan.tensors[st.args[conv.operands[1]]].order = PACKED_WEIGHT


__all__ = ["CHANNELS_LAST", "PACKED_WEIGHT", "channels_last_shape", "spans_channels", "elementwise_body", "windowed_conv_input", "choose_storage_orders", "unary_elementwise_source"]
