"""Last-arrival folding: a split reduction's combine runs on the programs of its partial (DESIGN.md, gpu_queue).

``kitsune-split-reduction`` turns an under-filled task into a **partial** task of ``P`` parts and a
**combine** task that folds them. Between them lies a kernel boundary (a launch, its ramp and tail: on
the H100 a 16-program combine of decode attention cost 4.6-5 us a layer for a few microseconds of work).

Folded, the combine is a stage of the partial's kernel with no programs of its own: the partial's tiles
form *groups* (the tiles that differ only in their part), and each program, once a partial tile is
stored, counts itself in on its group's counter (fence, acquire-release); the program that arrives last
runs the combine tiles of that group (``k`` of them, consecutive) and the others go on. This is the
split-K pattern of the gemm template, across two stages.

It is sound only when every combine tile reads partials of one group. ``fold_shape`` proves it by
propagating, for every value of the combine's body, which group each element depends on (``-1``: none,
``-2``: several): elementwise ops merge their operands' groups under broadcasting, reductions merge along
the reduced dims, data movement (permute, reshape, expand, slice, concat, split) moves the group ids with
the reference interpreter's own implementation of the op; any other op, or a tile that reads two groups,
means no fold.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from kitsune.dialects import dataflow as df
from kitsune.dialects.graph import GraphOp
from kitsune.dialects.regions import grid_of, tensor_shape
from kitsune.codegen.plan import store_tile
from kitsune.passes.placement import _channel_producer
from kitsune.semantics import optable

NONE, MIXED = -1, -2
"""Group ids of an element that depends on no partial tile, and on tiles of more than one group."""

MAX_TAIL_TILES = 4
"""At most this many combine tiles per group: the last-arriving program runs them one after another."""

MAX_ELEMENTS = 1 << 22
"""Values larger than this are not analysed (no fold): the analysis holds an int64 array per value."""

MOVES = ("permute", "reshape", "expand", "slice", "concat", "split")
"""Layout ops that only move elements (no fill value): they move group ids as they move data."""

REDUCTIONS = ("sum", "mean", "amax", "amin", "prod")


def _merge(stacked: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The group of elements reduced along ``axes``: their one group, NONE if none has one, else MIXED."""
    big = np.iinfo(np.int64).max
    lo = np.where(stacked == NONE, big, stacked).min(axis=axes)
    hi = np.where(stacked == NONE, NONE, stacked).max(axis=axes)
    out = np.where(lo == big, NONE, np.where(lo == hi, lo, MIXED))
    return np.asarray(out, dtype=np.int64)


def tile_ids(shape: tuple[int, ...], tile: tuple[int, ...]) -> np.ndarray:
    """Per element of ``shape``, the row-major index of its tile."""
    grid = grid_of(shape, tile)
    ids = np.zeros(shape, dtype=np.int64)
    stride = 1
    for d in reversed(range(len(shape))):
        axis = (np.arange(shape[d], dtype=np.int64) // tile[d]) * stride
        ids = ids + axis.reshape([-1 if e == d else 1 for e in range(len(shape))])
        stride *= grid[d]
    return ids


def _group_of_op(op: GraphOp, args: list[np.ndarray]) -> list[np.ndarray] | None:
    od = op.OPDEF
    shapes = [tensor_shape(r.type) for r in op.results]
    if od.category == "elementwise":
        out = shapes[0]
        stacked = np.stack([np.broadcast_to(a, out) for a in args])
        return [_merge(stacked, (0,))]
    if od.name in REDUCTIONS:
        a = args[0]
        attrs = op.attrs()
        dims = attrs.get("dims")
        axes = tuple(range(a.ndim)) if dims is None or len(dims) == 0 else \
            tuple(sorted(d % a.ndim for d in dims))
        red = _merge(a, axes)
        return [red.reshape(shapes[0])]
    if od.name in MOVES:
        outs = optable.run(od, args, op.attrs(), shapes, [np.dtype(np.int64)] * len(shapes))
        return [np.asarray(o, dtype=np.int64) for o in outs]
    if od.name == "constant":
        return [np.full(shapes[0], NONE, dtype=np.int64)]
    return None


def fold_shape(partial: df.TaskOp, combine: df.TaskOp) -> tuple[int, int] | None:
    """``(P, k)`` when ``combine`` can run on the last-arriving programs of ``partial``: the partial's tiles come
    in groups of ``P`` consecutive tiles (its parts: the last dim of its tile grid with more than one tile), and
    combine tiles ``[g k, g k + k)`` read partials of group ``g`` only; else None."""
    grid = partial.grid()
    axes = [d for d, n in enumerate(grid) if n > 1]
    if not axes:
        return None
    parts = grid[axes[-1]]
    groups = partial.num_tiles() // parts
    ntiles = combine.num_tiles()
    if ntiles % groups or ntiles // groups > MAX_TAIL_TILES:
        return None
    k = ntiles // groups
    values = [combine.outs[0]] + list(partial.outs)
    if any(math.prod(tensor_shape(v.type)) > MAX_ELEMENTS for v in values):
        return None
    body = combine.body.blocks.first
    env: dict[SSAValue, np.ndarray] = {}
    for o, a in zip(combine.ins, body.args):
        ch = o.owner
        shape = tensor_shape(a.type)
        if isinstance(ch, df.ChannelOp) and ch.source.owner is partial:
            tile = store_tile(partial, shape)
            if tile is None:
                return None
            env[a] = tile_ids(shape, tile) // parts
        else:
            env[a] = np.full(shape, NONE, dtype=np.int64)
    for op in body.ops:
        if isinstance(op, df.YieldOp):
            break
        if not isinstance(op, GraphOp):
            return None
        outs = _group_of_op(op, [env[o] for o in op.operands])
        if outs is None:
            return None
        env.update(zip(op.results, outs))
    ys = body.last_op.operands
    for r, y in zip(combine.outs, ys):
        shape = tensor_shape(r.type)
        tile = store_tile(combine, shape)
        if tile is None:
            return None
        g = env[y]
        want = tile_ids(shape, tile) // k
        if not np.all((g == NONE) | (g == want)):
            return None
    return parts, k


def widen(partial: df.TaskOp, combine: df.TaskOp, shape: tuple[int, int]) -> tuple[int, int]:
    """``shape`` of a fold whose groups have ``k > 1`` combine tiles, or, where one dim of the combine's tile
    ``k`` times as large makes one tile per group, that (the combine's tile widened): the last arrival then runs
    one tile, its loads issued together, instead of ``k`` one after another. Only a generic combine (the
    evaluator takes any tile) whose channels to its consumers stay consistent with the wider tile."""
    from kitsune.passes.choose_schedules import set_tile

    tpl = combine.attributes.get("template")
    if tpl is not None and getattr(tpl, "data", "generic") != "generic":
        return shape
    uses = [(ch, u.operation) for r in combine.outs for c in r.uses
            if isinstance(ch := c.operation, df.ChannelOp) for u in ch.result.uses]

    def consistent() -> bool:
        return all(not isinstance(cons, df.TaskOp)
                   or df.relation_error(ch.rel, combine, tensor_shape(ch.result.type), cons) is None
                   for ch, cons in uses)

    tile, dims = combine.tile_sizes(), tensor_shape(combine.outs[0].type)
    k = shape[1]
    for d in reversed(range(len(tile))):
        if tile[d] * k > dims[d] or dims[d] % (tile[d] * k):
            continue
        set_tile(combine, tile[:d] + (tile[d] * k,) + tile[d + 1:])
        if consistent() and fold_shape(partial, combine) == (shape[0], 1):
            return shape[0], 1
        set_tile(combine, tile)
    return shape


def producer_tasks(t: df.TaskOp) -> list[df.TaskOp]:
    """The tasks whose results ``t`` reads through channels, each once."""
    return list(dict.fromkeys(cp[1] for o in t.ins if (cp := _channel_producer(o)) is not None))


def fold_combines(placed: list[tuple[list[df.TaskOp], str]]) -> tuple[list[tuple[list[df.TaskOp], str]],
                                                                     dict[df.TaskOp, tuple[df.TaskOp, int, int]]]:
    """Kernels (tasks, placement) with every foldable combine moved into its partial's kernel, and per folded
    combine (its partial, P, k). A combine folds when its partial and it are each alone in a kernel and every
    other task it reads is computed by an earlier kernel than the partial's."""
    kid = {t: i for i, (ks, _) in enumerate(placed) for t in ks}
    folded: dict[df.TaskOp, tuple[df.TaskOp, int, int]] = {}
    for ks, _ in placed:
        if len(ks) != 1 or ks[0].task_kind != "combine":
            continue
        c = ks[0]
        prods = producer_tasks(c)
        partials = [p for p in prods if p.task_kind == "partial"]
        if len(partials) != 1:
            continue
        p = partials[0]
        if placed[kid[p]][0] != [p] or any(kid[q] >= kid[p] for q in prods if q is not p):
            continue
        shape = fold_shape(p, c)
        if shape is not None and shape[1] > 1:
            shape = widen(p, c, shape)
        if shape is not None:
            folded[c] = (p, shape[0], shape[1])
    out: list[tuple[list[df.TaskOp], str]] = []
    for ks, where in placed:
        if len(ks) == 1 and ks[0] in folded:
            continue
        extra = [c for c, (p, _, _) in folded.items() if ks == [p]]
        out.append((ks + extra, "fold" if extra else where))
    return out, folded


__all__ = ["fold_shape", "fold_combines", "widen", "tile_ids", "MAX_TAIL_TILES"]
