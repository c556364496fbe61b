"""kitsune-flatten-rows: row-local regions around a linear over ragged leading dims run on 2-D rows.

A linear over ``x[..., K]`` with several leading dims is tiled as boxes of the result: a tile holds rows of one
matrix of the leading dims, never rows of two. Where the last leading dim is not a multiple of the 64-row tiles
(ViT-B/16's 197 tokens: 128 + 69 rows a matrix, 23% of the lanes idle; ConvNeXt's ``[16, 56, 56, C]`` pixels:
tiles of one 56-pixel row) the GEMMs run mostly empty tiles, and the Gluon TMA form, which needs the tile to
divide each matrix's rows, is out of reach.

This pass finds the region of *row-local* ops around such a linear, ops that treat every row (the last dim) on
its own: linears, elementwise ops whose other operands broadcast along the last dim only (a bias, a scalar),
slices and splits of the last dim (a gated projection's halves), and norms / softmaxes over the last dim; all of the region's values share the leading dims ``L``. It rewrites the
region on ``[prod(L), n]`` rows; values entering it are reshaped to rows and values leaving it (to attention,
to a concat over tokens, to the function's results) are reshaped back. ``graph-canonicalize`` does the opposite
for reshapes that only regroup leading dims, so the pass runs after it; both keep the meaning, which the
reference interpreter checks.

Only regions seeded by a linear with at least ``min_rows`` rows whose last leading dim is not a multiple of
``row_multiple`` are rewritten: leading dims that tile evenly (BERT's 512 tokens, GPT-2's 256) are left as they
are, as is a decode step's single token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce

from kitsune.dialects import graph
from kitsune.dialects.graph import GraphOp as GOp

ROW_NORMS = ("layer_norm", "rms_norm", "softmax", "log_softmax")


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())


def _broadcast_row(v: SSAValue) -> bool:
    """An operand that broadcasts along the last dim only: a scalar, a row vector ``[n]`` or ``[1, .., 1, n]``."""
    s = _shape(v)
    return all(d == 1 for d in s[:-1])


def _row_local(op, lead: tuple[int, ...]) -> bool:
    """``op`` treats every row of its leading dims ``lead`` on its own (see the module doc)."""
    if not isinstance(op, GOp) or not op.results:
        return False
    out = _shape(op.results[0])
    if any(_shape(r)[:-1] != lead for r in op.results) or len(out) < 2:
        return False
    name, cat = op.OPDEF.name, op.OPDEF.category
    a = op.attrs()
    if name in ("slice", "split"):  # columns of each row (a gated projection's halves)
        return a["dim"] % len(out) == len(out) - 1 and _shape(op.operands[0])[:-1] == lead
    if len(op.results) != 1:
        return False
    if name == "linear":
        return _shape(op.operands[0])[:-1] == lead and len(_shape(op.operands[1])) == 2
    if name in ("layer_norm", "rms_norm"):
        return a.get("normalized_rank", 1) == 1 and _shape(op.operands[0]) == out \
            and all(len(_shape(v)) == 1 for v in op.operands[1:])
    if name in ("softmax", "log_softmax"):
        return a["dim"] % len(out) == len(out) - 1
    if cat == "elementwise":
        return all(_shape(v) == out or _broadcast_row(v) for v in op.operands)
    return False


def _full(v: SSAValue, lead: tuple[int, ...]) -> bool:
    s = _shape(v)
    return len(s) == len(lead) + 1 and s[:-1] == lead


def region_of(seed, lead: tuple[int, ...]) -> list:
    """The row-local ops connected to ``seed`` through values of leading dims ``lead``, in block order."""
    block = seed.parent_block()
    members, stack = {seed}, [seed]
    while stack:
        op = stack.pop()
        near = [v.owner for v in op.operands if _full(v, lead)]  # the producers of its rows
        near += [u.operation for r in op.results for u in r.uses]  # the readers of its rows
        for o in near:
            if o in members or not isinstance(o, GOp) or o.parent_block() is not block or not _row_local(o, lead):
                continue
            members.add(o)
            stack.append(o)
    return [o for o in block.ops if o in members]


def _seeds(block: Block, min_rows: int, row_multiple: int) -> list:
    out = []
    for op in block.ops:
        if not isinstance(op, GOp) or op.OPDEF.name != "linear" or len(op.results) != 1:
            continue
        s = _shape(op.operands[0])
        lead = s[:-1]
        if len(lead) >= 2 and math.prod(lead) >= min_rows and lead[-1] % row_multiple and _row_local(op, lead):
            out.append(op)
    return out


def flatten_region(ops: list, lead: tuple[int, ...]) -> None:
    """Rewrite ``ops`` (a region of ``region_of``) on ``[prod(lead), n]`` rows, reshaping at its edges."""
    rows = math.prod(lead)
    members = set(ops)
    block = ops[0].parent_block()
    mapped: dict[SSAValue, SSAValue] = {}
    entered: dict[SSAValue, SSAValue] = {}

    def flat_type(v):
        return TensorType(v.type.get_element_type(), [rows, _shape(v)[-1]])

    def add_before(new, at):
        new.location = at.location
        block.insert_op_before(new, at)
        return new.results[0]

    for op in ops:
        operands = []
        for v in op.operands:
            if v in mapped:
                operands.append(mapped[v])
            elif _full(v, lead):
                if v not in entered:
                    entered[v] = add_before(graph.build("reshape", [v], [flat_type(v)]), op)
                operands.append(entered[v])
            elif len(_shape(v)) > 1 and _broadcast_row(v):  # [1, .., 1, n] -> [n]
                t = TensorType(v.type.get_element_type(), [_shape(v)[-1]])
                operands.append(add_before(graph.build("reshape", [v], [t]), op))
            else:
                operands.append(v)
        a = op.attrs()
        if op.OPDEF.name in ("slice", "split"):
            a = {**a, "dim": 1}
        new = graph.build(op.OPDEF.name, operands, [flat_type(r) for r in op.results], **a)
        new.location = op.location
        block.insert_op_before(new, op)
        mapped.update(zip(op.results, new.results))
    # values leaving the region: reshaped back for their readers outside it
    for op in ops:
        for old in op.results:
            outside = [u for u in old.uses if u.operation not in members]
            if outside:
                back = graph.build("reshape", [mapped[old]], [old.type])
                back.location = op.location
                block.insert_op_after(back, mapped[old].owner)
                for u in outside:
                    u.operation.operands[u.index] = back.results[0]
    for op in reversed(ops):
        op.detach()
        op.erase()


@dataclass(frozen=True)
class FlattenRowsPass(ModulePass):
    """Row-local regions around a linear over ragged leading dims, rewritten on 2-D rows."""

    name = "kitsune-flatten-rows"

    min_rows: int = 128
    """A seed linear has at least this many rows."""
    row_multiple: int = 64
    """... and a last leading dim that is not a multiple of this (the tiles' rows)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            for block in f.body.blocks:
                done = set()
                for seed in _seeds(block, self.min_rows, self.row_multiple):
                    if seed in done or seed.parent is None:
                        continue
                    lead = _shape(seed.operands[0])[:-1]
                    region = region_of(seed, lead)
                    done.update(region)
                    flatten_region(region, lead)
            region_dce(f.body)


__all__ = ["FlattenRowsPass", "flatten_region", "region_of"]
