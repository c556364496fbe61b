"""kitsune-materialize: producers whose domain is smaller than their consumer's are computed once, as tasks.

Two cases, both found from shapes and tiles (never op names):

**Untiled results.** A task result that the task's tiles cannot cover gets a task of its own.

A task computes its results tile by tile with the tiles of its first result. A
further result of another shape is written tile for tile only when it can be cut
into as many tiles (``kitsune.codegen.plan.matching_tile``); otherwise code
generation would have to compute it *whole* in one program, recomputing every
producer once per consumer index (Llama's query projection, fused with the KV
cache concat, was computed by every one of 576 programs with a chunk of one).

This pass moves each such result, with the ops it depends on (cloned: the ones
the first result still needs stay too), into a new task right after the original
one, reading the same inputs, with its own tile. Producers whose domain is
smaller than their consumer's are thereby materialised once instead of being
recomputed per consumer index. Channels that carried the result now start at the
new task; relations that no longer fit the tiles are weakened.

**Small contractions inside a larger task.** A contraction that is not the task's
anchor (the op its first result comes from through elementwise ops) and whose
result is several times smaller than the task's first result is evaluated by
every tile of the task that reads it (Llama's K/V projection inside the KV-cache
concat: every one of 576 cache tiles recomputed it). It moves, with the ops only
it needs, into a task of its own, and the task reads its result whole (an "all"
channel). GEMM chains on chip are the exception by design: a contraction reading
another contraction's row band (``chain_bytes``) is the task's anchor path. A layout
anchor (a concat) is no such path: Inception's first 1x1 convolution, fused into the
concat of the four branches, was recomputed for every channel of the concat.

**Contractions with no template where they are.** A contraction off the anchor path whose result reaches the
task's results through layout and elementwise ops only (ViT's patch embedding: a convolution flattened,
transposed and joined to the class token), or that a norm reads across its rows (ConvNeXt's channel LayerNorm
after a convolution, through a permute), has no template there: the evaluator computes it one multiply-add at a
time, for a norm once per statistic. From ``viewed_flops`` of work on it moves out into a task of its own, whose
template then runs it.

**Norms transposed into a contraction.** A normalisation that reaches the task's anchor contraction through
a permute of the dim it normalises (MLP-Mixer's token mixing) would have its statistics recomputed by every
tile, for every K chunk: it moves out into a task of its own.

**Reductions re-read per column tile.** A reduction feeding a contraction (a global average pool before a
classifier) is evaluated by every column tile of the contraction: when it reads far more than it produces and
those re-reads add up to megabytes (``recomputed_reduction``), it moves out the same way.

**Scatters.** A scatter-accumulate (``Y[I[j], d] += S[j, d]`` after ``Y = X``:
``index_add``) is pushed from its source by the scatter template, whose grid spans
the source rows, not the result's tiles: it gets a task of its own whose result is
the scatter, read whole by its consumers. A start ``X`` that is not zero stays
behind as an ``add`` in the consumer: ``index_add(X, I, S) = X + index_add(0, I, S)``;
a bf16 / fp16 scatter accumulates in fp32 and the consumer rounds its result, unless the op asks
for atomic adds in its own type (``accumulate = "native"``: ``torch.index_add``, as eager does). An
``in_place`` assignment of slices (``index_copy`` into a buffer's storage,
``kitsune-inplace-updates``) gets a task of its own too, with nothing moved out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce

from kitsune.codegen.plan import matching_tile
from kitsune.dialects import dataflow as df
from kitsune.dialects.regions import grid_of, tensor_shape
from kitsune.dialects.scattered_results import scattered
from kitsune.dialects.sliced_results import slice_offsets


def default_tile(shape, tile_m: int = 128, tile_n: int = 128) -> list[int]:
    """form-regions' tile of a result of this shape (the last two dims, 128 x 128)."""
    if not shape:
        return []
    if len(shape) == 1:
        return [max(1, min(shape[0], tile_m * tile_n))]
    return [1] * (len(shape) - 2) + [max(1, min(shape[-2], tile_m)), max(1, min(shape[-1], tile_n))]


def untiled(task: df.TaskOp) -> list[int]:
    """Indices of the results the task's tiles cannot cover."""
    shapes = [tensor_shape(r.type) for r in task.outs]
    tile = task.tile_sizes()
    grid = grid_of(shapes[0], tile) if shapes else ()
    ntiles = math.prod(grid) if grid else 1
    out = []
    ys = task.yield_op().operands
    for i, s in enumerate(shapes[1:], 1):
        if len(s) == len(tile) and grid_of(s, tile) == grid:
            continue
        if slice_offsets(ys[i], ys[0]) is not None:  # a slice of the domain: stored from the domain's tiles
            continue
        if scattered(ys[i], ys[0]):  # added into by every tile (kitsune-fuse-scatters)
            continue
        if matching_tile(s, ntiles) is None:
            out.append(i)
    return out


def _rebuild(task: df.TaskOp, keep: list[int], name: str, tile) -> df.TaskOp:
    """A copy of ``task`` yielding only the results ``keep`` (dead ops dropped), with ``tile``."""
    old = task.body.blocks.first
    body = Block(arg_types=[a.type for a in old.args])
    vmap = {}
    for a, b in zip(old.args, body.args):
        b.name_hint = a.name_hint
        vmap[a] = b
    y = task.yield_op()
    for o in old.ops:
        if o is y:
            body.add_op(df.YieldOp([vmap[y.operands[i]] for i in keep]))
        else:
            body.add_op(o.clone(value_mapper=vmap))
    region = Region(body)
    region_dce(region)
    attrs = {k: v for k, v in task.attributes.items() if k not in ("template", "config", "schedule")}
    return df.TaskOp(name, task.task_kind, list(task.operands), [task.outs[i].type for i in keep], tile, region, attrs)


def _keeps_rows(task: df.TaskOp, anchor) -> bool:
    """Whether the anchor's operands are read once per tile: a contraction (a GEMM chain), or a concat whose
    tile covers its whole concat dim (NeRF's skip); a concat cut along that dim (Inception's channels, one per
    tile) would recompute an operand's producer for every tile."""
    if anchor.OPDEF.category == "contraction":
        return True
    if anchor.OPDEF.name != "concat":
        return False
    shape = tensor_shape(anchor.results[0].type)
    d = anchor.attrs()["dim"] % len(shape)
    tile = task.tile_sizes()
    return len(tile) == len(shape) and tile[d] >= shape[d]


def small_contraction(task: df.TaskOp, ratio: int = 4):
    """A contraction of ``task`` off its anchor path whose result is ``ratio`` times smaller than result #0."""
    from kitsune.dialects.graph import GraphOp as GOp

    ops = [o for o in task.body.blocks.first.ops if isinstance(o, GOp)]
    if not task.outs:
        return None
    big = math.prod(tensor_shape(task.outs[0].type)) or 1
    on_path = _anchor_path(task)  # the anchor and everything it reads through: a GEMM chain's contractions stay
    for o in ops:
        if o.OPDEF.category != "contraction" or o in on_path:
            continue
        if math.prod(tensor_shape(o.results[0].type)) * ratio <= big:
            return _with_epilogue(o)
    return None


def _anchor_path(task: df.TaskOp) -> set:
    """The ops of ``task`` its result #0 comes from through elementwise ops and the anchor (when the anchor reads
    its operands once per tile: ``_keeps_rows``): a contraction there is the task's own."""
    from kitsune.dialects.graph import GraphOp as GOp
    from kitsune.schedule.select import anchor_of

    anchor, _ = anchor_of(task)
    on_path = set()
    y = task.yield_op()
    stack = [y.operands[0].owner] if y.operands else []
    while stack:
        o = stack.pop()
        if not isinstance(o, GOp) or o in on_path:
            continue
        on_path.add(o)
        if o.OPDEF.category in ("elementwise",) or o is anchor and _keeps_rows(task, o):
            stack += [v.owner for v in o.operands]
    return on_path


def _needs_own_task(task: df.TaskOp, op) -> bool:
    """Whether contraction ``op``, off the anchor path of ``task``, is better off in a task of its own: every use
    of its result reaches the task's results through layout and elementwise ops (nothing re-reads it), one of
    them a layout op other than a slice (slices of a contraction combined elementwise are the sliced gemv's: a
    decode step's gate / up projection, ``select.sliced_contraction``); or a normalisation or reduction reads it that
    does not run in its epilogue (``select.row_epilogue_contraction``: ConvNeXt's LayerNorm over the channels
    of a convolution, through a permute, evaluated the convolution anew for each of its statistics). A
    contraction or gather downstream leaves it where it is (a GEMM chain's, a gathered projection's)."""
    from kitsune.dialects.graph import GraphOp as GOp
    from kitsune.schedule.select import row_epilogue_contraction

    y = task.yield_op()
    stack, seen, viewed, read = [op.results[0]], set(), False, False
    while stack:
        v = stack.pop()
        for u in v.uses:
            o = u.operation
            if o is y or o in seen:
                continue
            seen.add(o)
            if not isinstance(o, GOp) or len(o.results) != 1:
                return False
            cat = o.OPDEF.category
            if cat in ("normalization", "reduction") and _reduces(o):
                if row_epilogue_contraction(o) is op:
                    return False
                read = True
            elif cat == "layout":
                viewed = viewed or o.OPDEF.name != "slice"
            elif cat != "elementwise" and not (cat == "normalization" and not _reduces(o)):
                return False
            stack.append(o.results[0])
    return viewed or read


def _reduces(op) -> bool:
    """Whether ``op``'s comprehension combines values of several positions (a LayerNorm's statistics), unlike an
    inference BatchNorm, a per-channel affine map that a convolution's epilogue runs as it is."""
    from kitsune.schedule.roles import op_program

    got = op_program(op)
    return got is None or any(st.op != "=" for st in got[2].stmts)


def viewed_contraction(task: df.TaskOp, min_flops: float = 16e6):
    """A contraction of ``task`` off its anchor path that has no template where it is (``_needs_own_task``: the
    task's results view it, or a norm reads it across its rows), with at least ``min_flops`` of work: the
    evaluator would compute it one multiply-add at a time (ViT's patch embedding, a 16 x 16 convolution of
    stride 16 flattened, transposed and joined to the class token: 1.1 ms on the H100 at batch 8; ConvNeXt's
    stem and downsampling convolutions under their channel LayerNorms: 101 ms). As a task of its own it gets a
    template, for one write and read of its result."""
    from kitsune.dialects.graph import GraphOp as GOp
    from kitsune.schedule.roles import roles_of

    if not task.outs:
        return None
    on_path = _anchor_path(task)
    for o in task.body.blocks.first.ops:
        if not isinstance(o, GOp) or o.OPDEF.category != "contraction" or o in on_path or len(o.results) != 1:
            continue
        r = roles_of(o)  # its result one sum of products of two factors (a GEMM, a convolution; not an attention)
        if r is None or r.reduce_op != "+=" or len(r.factors) != 2 or len(r.program.stmts) > 2 \
                or 2 * math.prod(r.ext.values()) < min_flops:
            continue
        if _needs_own_task(task, o):
            return _with_epilogue(o)
    return None


def transposed_norm(task: df.TaskOp):
    """A normalisation of ``task`` (not its anchor) that reaches the task's anchor contraction through a permute
    moving its last dim, the dim it normalises (MLP-Mixer's token mixing: LayerNorm over channels, transposed,
    then a linear over tokens). The contraction's tiles then cut across its rows: every tile recomputed the
    statistics of the rows it touches, for every K chunk (55 us on the H100 for Mixer-B/16's 1.2 M values at
    batch 8, its GEMM 9 us). As a task of its own it is computed once."""
    from kitsune.dialects.graph import GraphOp as GOp
    from kitsune.schedule.select import anchor_of

    anchor, _ = anchor_of(task)
    if anchor is None or anchor.OPDEF.category != "contraction":
        return None
    for o in task.body.blocks.first.ops:
        if isinstance(o, GOp) and o is not anchor and o.OPDEF.category == "normalization" and len(o.results) == 1 \
                and _permutes_last_dim_into(o.results[0], anchor):
            return o
    return None


def _permutes_last_dim_into(v, anchor, depth: int = 16) -> bool:
    """Whether ``v`` reaches ``anchor`` through layout and elementwise ops, one of them a permute that moves
    the last dim."""
    from kitsune.dialects.graph import GraphOp as GOp

    if depth == 0:
        return False
    for u in v.uses:
        o = u.operation
        if o is anchor or not isinstance(o, GOp) or len(o.results) != 1:
            continue
        if o.OPDEF.category == "layout" and o.OPDEF.name == "permute":
            perm = list(o.attrs().get("perm", []))
            if perm and perm[-1] % len(perm) != len(perm) - 1 and _reaches(o.results[0], anchor, depth - 1):
                return True
        if o.OPDEF.category in ("layout", "elementwise") and _permutes_last_dim_into(o.results[0], anchor,
                                                                                    depth - 1):
            return True
    return False


def _reaches(v, anchor, depth: int) -> bool:
    """Whether ``v`` flows into ``anchor`` through layout and elementwise ops."""
    from kitsune.dialects.graph import GraphOp as GOp

    if depth == 0:
        return False
    for u in v.uses:
        o = u.operation
        if o is anchor:
            return True
        if isinstance(o, GOp) and o.OPDEF.category in ("layout", "elementwise") and len(o.results) == 1 \
                and _reaches(o.results[0], anchor, depth - 1):
            return True
    return False


def recomputed_reduction(task: df.TaskOp, min_bytes: int = 4 << 20, tile_n: int = 128):
    """A reduction of ``task`` (not its anchor) that reads at least 8 times the bytes it produces, when the
    task's anchor is a contraction whose output columns take several tiles of ``tile_n``: every such tile would
    read the reduction's input again (ResNet-18's global average pool before its classifier: 16 column tiles of
    the fc each summed the whole [32, 512, 7, 7] map, 127 us on the H200). It moves out when those re-reads come
    to ``min_bytes`` or more; a norm's statistics over one decode row (kilobytes) stay where they are."""
    from kitsune.dialects.graph import GraphOp as GOp
    from kitsune.schedule.roles import roles_of
    from kitsune.schedule.select import anchor_of

    anchor, _ = anchor_of(task)
    if anchor is None or anchor.OPDEF.category != "contraction":
        return None
    r = roles_of(anchor)
    if r is None:
        return None
    tiles = -(-math.prod(r.ext[v] for v in r.vars("N")) // tile_n)
    if tiles < 2:
        return None

    from kitsune.cost import value_bytes

    for o in task.body.blocks.first.ops:
        if not isinstance(o, GOp) or o is anchor or o.OPDEF.category != "reduction" or len(o.results) != 1:
            continue
        read = max((value_bytes(v) for v in o.operands), default=0)
        if read >= 8 * value_bytes(o.results[0]) and (tiles - 1) * read >= min_bytes:
            return _with_epilogue(o)
    return None


def _with_epilogue(c):
    """The last op of contraction ``c``'s elementwise epilogue: while its result has one use, an elementwise op of
    the same shape whose other operands broadcast into it (a row scale that ``kitsune-hoist-row-scale`` moved out
    of the row operand, a bias) takes it. Moved together, the epilogue runs where the contraction's tiles are
    (after a split's parts meet) instead of in every tile of the task that reads it."""
    from kitsune.dialects.graph import GraphOp as GOp

    o = c
    while o.results[0].uses.get_length() == 1:
        u = next(iter(o.results[0].uses)).operation
        if not isinstance(u, GOp) or u.OPDEF.category != "elementwise" or len(u.results) != 1 \
                or tensor_shape(u.results[0].type) != tensor_shape(o.results[0].type) \
                or sum(v is o.results[0] for v in u.operands) != 1:
            break
        o = u
    return o


def _viewed(v):
    """The op whose result ``v`` views through single-operand layout ops (slice, reshape, permute ...), with the
    number of such views (0: ``v``'s own producer)."""
    from kitsune.dialects.graph import GraphOp as GOp

    o, n = v.owner, 0
    while isinstance(o, GOp) and o.OPDEF.category == "layout" and len(o.operands) == 1 and n < 64:
        o, n = o.operands[0].owner, n + 1
    return o, n


def contraction_behind_views(task: df.TaskOp):
    """The contraction of ``task`` whose result every one of its (several) results only views (a fused QKV
    projection yielding its q / k / v heads), or None. As a task of its own it gets a template (its result is then the
    task's); the views become a copy task that ``kitsune-fuse-copies`` folds into their readers."""
    from kitsune.dialects.graph import GraphOp as GOp

    y = task.yield_op()
    if len(y.operands) < 2:  # one view: the task's tile follows it, and nothing would be shared
        return None
    got = [_viewed(v) for v in y.operands]
    o = got[0][0]
    if not isinstance(o, GOp) or not any(n for _, n in got) or not all(p is o for p, _ in got):
        return None
    return o if _contraction_epilogue(o) is not None else None


def _contraction_epilogue(o):
    """The contraction whose result ``o`` is, through elementwise ops each of which has one operand of its result's
    shape (the contraction's side; the others broadcast: a bias, a row scale that ``kitsune-hoist-row-scale``
    moved out of the row operand), or None."""
    from kitsune.dialects.graph import GraphOp as GOp

    seen = 0
    while isinstance(o, GOp) and o.OPDEF.category == "elementwise" and seen < 16:
        full = [v.owner for v in o.operands if tensor_shape(v.type) == tensor_shape(o.results[0].type)]
        if len(full) != 1:
            return None
        o, seen = full[0], seen + 1
    return o if isinstance(o, GOp) and o.OPDEF.category == "contraction" else None


def isolate_op(task: df.TaskOp, op, kind: str = "contraction") -> df.TaskOp:
    """Move ``op`` (with the ops it needs, cloned) into a new task before ``task``; ``task`` reads its result
    through an "all" channel. (``op`` may end a contraction's elementwise epilogue: the task is named after the
    contraction.)"""
    old = task.body.blocks.first
    y = task.yield_op()
    # the new task: the whole body, yielding op's result (dead ops are dropped)
    body = Block(arg_types=[a.type for a in old.args])
    vmap = {}
    for a, b in zip(old.args, body.args):
        b.name_hint = a.name_hint
        vmap[a] = b
    for o in old.ops:
        if o is y:
            body.add_op(df.YieldOp([vmap[op.results[0]]]))
        else:
            body.add_op(o.clone(value_mapper=vmap))
    region = Region(body)
    region_dce(region)
    named = _contraction_epilogue(op) if kind == "contraction" else None
    name = f"{(named or op).name.split('.')[1]}_{task.task_name}"
    shape = tensor_shape(op.results[0].type)
    tile = default_tile(shape)
    if kind == "reduction" and tile:  # a norm: whole rows, as form-regions tiles its row groups
        tile[-1] = max(1, shape[-1])
    new = df.TaskOp(name, kind, list(task.operands), [op.results[0].type], tile, region)
    block = task.parent_block()
    block.insert_op_before(new, task)
    ch = df.ChannelOp(new.results[0], "all")
    block.insert_op_before(ch, task)
    # the old task: op's result becomes a new block argument fed by the channel
    arg = old.insert_arg(op.results[0].type, len(old.args))
    op.results[0].replace_all_uses_with(arg)
    task.operands = list(task.operands) + [ch.result]
    inner = task.body
    region_dce(inner)
    return new


def _low_precision(t) -> bool:
    from xdsl.dialects.builtin import BFloat16Type, Float16Type

    return isinstance(t.get_element_type(), (BFloat16Type, Float16Type))


def _accumulates_wider(op) -> bool:
    """Scatter ``op`` of a 16-bit result accumulates in fp32 (not ``accumulate = "native"``)."""
    return _low_precision(op.results[0].type) and op.attrs().get("accumulate") != "native"


def scatter_to_isolate(task: df.TaskOp):
    """A scatter of ``task`` that is not yet a task of its own with a zero start (see the module docstring)."""
    from kitsune.dialects.graph import GraphOp as GOp
    from kitsune.schedule.select import _zero_constant, scatter_form

    y = task.yield_op()
    for o in task.body.blocks.first.ops:
        if not isinstance(o, GOp):
            continue
        if scatter_form(o, assign=True) is not None:  # an in-place store of slices: nothing to prepare
            if not (len(y.operands) == 1 and y.operands[0] is o.results[0]):
                return o
            continue
        form = scatter_form(o)
        if form is None:
            continue
        alone = len(y.operands) == 1 and y.operands[0] is o.results[0] and _zero_constant(form[1]) \
            and not _accumulates_wider(o)
        if not alone:
            return o
    return None


def prepare_scatter(op):
    """``op(X, I, S)`` -> ``X + cast(op(0, I, cast(S)))`` in place (the result takes over op's uses); returns the
    new scatter. A bf16 / fp16 scatter accumulates in fp32 (atomics of many repeated targets in bf16 lose
    most of their bits; the consumer rounds once, as the reference interpreter does) unless the op asks for its
    own type (``accumulate = "native"``: torch.index_add, whose eager form adds atomically in bf16 on the GPU,
    as does Inductor's); a zero start is dropped."""
    from xdsl.dialects.builtin import TensorType, f32

    from kitsune.dialects import graph
    from kitsune.dialects.values import splat_attr
    from kitsune.schedule.select import _zero_constant, scatter_form

    if scatter_form(op, assign=True) is not None:
        return op  # in place: the buffer is the start
    _, start = scatter_form(op)
    t = op.results[0].type
    low = _accumulates_wider(op)
    if _zero_constant(start) and not low:
        return op
    acc_t = TensorType(f32, t.get_shape()) if low else t
    ops = []

    def add(o):
        o.location = op.location
        ops.append(o)
        return o.results[0]

    zero = add(graph.build("constant", [], [acc_t], value=splat_attr(acc_t, 0.0)))
    operands = []
    for v in op.operands:
        if v is start:
            operands.append(zero)
        elif low and v.type == TensorType(t.get_element_type(), v.type.get_shape()):
            operands.append(add(graph.build("cast", [v], [TensorType(f32, v.type.get_shape())])))
        else:
            operands.append(v)
    new = graph.build(op.name.split(".", 1)[1], operands, [acc_t], **op.attrs())
    res = add(new)
    if low:
        res = add(graph.build("cast", [res], [t]))
    if not _zero_constant(start):
        res = add(graph.build("add", [start, res], [t]))
    block = op.parent_block()
    block.insert_ops_before(ops, op)
    op.results[0].replace_all_uses_with(res)
    op.detach()
    op.erase()
    return new


def split_task(task: df.TaskOp) -> df.TaskOp | None:
    """Move the untiled results of ``task`` into a new task; returns it (None if there was nothing to move)."""
    moved = untiled(task)
    if not moved:
        return None
    stay = [i for i in range(len(task.outs)) if i not in moved]
    shape = tensor_shape(task.outs[moved[0]].type)
    new = _rebuild(task, moved, f"{task.task_name}_r{moved[0]}", default_tile(shape))
    kept = _rebuild(task, stay, task.task_name, task.tile_sizes())
    block = task.parent_block()
    block.insert_op_before(kept, task)
    block.insert_op_after(new, kept)
    for j, i in enumerate(stay):
        task.results[i].replace_all_uses_with(kept.results[j])
    for j, i in enumerate(moved):
        task.results[i].replace_all_uses_with(new.results[j])
    task.detach()
    task.erase()
    return new


@dataclass(frozen=True)
class MaterializePass(ModulePass):
    """Compute producers whose domain is smaller than their consumer's once, as tasks of their own."""

    name = "kitsune-materialize"

    ratio: int = 4
    """A contraction off the anchor path moves out when its result is this many times smaller than the task's."""
    reread_bytes: int = 4 << 20
    """A reduction feeding a contraction moves out when the contraction's column tiles would re-read this many
    bytes of its input (``recomputed_reduction``)."""
    viewed_flops: float = 16e6
    """A contraction off the anchor path whose result the task's results only view moves out from this much work
    on (``viewed_contraction``)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from kitsune.passes.choose_schedules import legalise_channels

        # (finder, kind of the new task, how the found op is prepared), in this order: contractions first, so
        # that results read by several tasks are then shared
        rules = ((lambda t: small_contraction(t, self.ratio), "contraction", None),
                 (lambda t: viewed_contraction(t, self.viewed_flops), "contraction", None),
                 (transposed_norm, "reduction", None),
                 (lambda t: recomputed_reduction(t, self.reread_bytes), "contraction", None),
                 (contraction_behind_views, "contraction", None),
                 (scatter_to_isolate, "gather", prepare_scatter))
        for g in [o for o in op.walk() if isinstance(o, df.GraphOp)]:
            changed = True
            while changed:  # a new task with several results may need splitting in turn
                changed = False
                for find, kind, prepare in rules:
                    for t in list(g.tasks()):
                        op_ = find(t)
                        if op_ is not None:
                            isolate_op(t, prepare(op_) if prepare else op_, kind=kind)
                            changed = True
                changed = any([split_task(t) is not None for t in list(g.tasks())]) or changed
                if changed:
                    legalise_channels(g)


__all__ = ["MaterializePass", "split_task", "contraction_behind_views", "viewed_contraction", "transposed_norm", "recomputed_reduction", "scatter_to_isolate", "prepare_scatter", "untiled", "default_tile", "small_contraction", "isolate_op"]
