"""kitsune-split-long-norms: a norm over rows too long for one tile becomes its statistics, then an elementwise op.

    y = layer_norm(x, w, b)  ->  m, r = layer_norm_stats(x);  y = cast((cast(x) - m) * r * w + b)
    y = rms_norm(x, w)       ->  r = rms_norm_stats(x);       y = cast(cast(x) * r * w)
    y = softmax(x, d)        ->  m, s = softmax_stats(x, d);  y = cast(exp(cast(x) - m) / s)
    y = log_softmax(x, d)    ->  m, s = softmax_stats(x, d);  y = cast(cast(x) - m - log(s))

A norm is one row task: its tile spans the row, which the template reduces and normalises in registers
(``templates.row_reduction``). Past ``max_row`` elements a row no longer fits: GroupNorm's
``[N, G, C / G * H * W]`` rows in a UNet's decoder (49 152 elements, 384 channels of 64 x 64) held 128 values a
thread at 16 warps and spilled 2 KB a thread, 218 us for 25 MB on the H100 (``bench/kernels/NOTES.md`` section
41). Split, the statistics are a task of their own whose tile is one row's statistics (its loop runs over the
row in chunks, ``kitsune.codegen.triton_gen.reductions``), and the normalisation is elementwise: it joins its
readers (GroupNorm's affine and SiLU, stored channels-last for the convolution after them), so the normalised
tensor itself is never written. ``kitsune-form-regions`` keeps a statistics op out of its producer's group and
its readers out of its own (``norm_statistics``).

The statistics are fp32 (the op's own accumulation), the normalisation runs in fp32 and rounds once to the
norm's result type, as the norm did. Rows with a dynamic size stay whole. (A softmax over a vocabulary, 50 257
columns, has rows as long as the UNet's: split the same way; a language-model head's log_softmax, H200,
bench/kernels/NOTES.md section 42.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.rewriter import InsertPoint

from kitsune.dialects import graph
from kitsune.dialects.graph import GraphOp
from kitsune.passes.builder import GraphBuilder

LONG_ROW = 16384
"""Elements of a norm's row past which it is split: the widest row a generic tile holds at 4 warps without
spilling (``kitsune.schedule.select.WIDE_TILE_LANES``: 128 fp32 a thread). Measured on the H100 (UNet, session 37):
rows of 16 384 ran whole at 2.8 TB/s, of 24 576 at 1.4 TB/s, of 49 152 at 0.2 TB/s."""

STATS_OPS = {"layer_norm": "layer_norm_stats", "rms_norm": "rms_norm_stats", "softmax": "softmax_stats",
             "log_softmax": "softmax_stats"}


def row_dims(op: GraphOp) -> list[int]:
    """The dims one row of norm ``op`` spans: its normalized dims, or a softmax's dim."""
    rank = len(op.operands[0].type.get_shape())
    a = op.attrs()
    if "dim" in a:
        return [a["dim"] % rank]
    return list(range(rank - a["normalized_rank"], rank))


def row_length(op: GraphOp) -> int | None:
    """Elements of one row of norm ``op`` (``row_dims``), or None when one of them is dynamic."""
    shape = list(op.operands[0].type.get_shape())
    dims = [shape[d] for d in row_dims(op)]
    return None if any(d < 0 for d in dims) else math.prod(dims)


@dataclass
class SplitLongNorm(RewritePattern):
    max_row: int

    def match_and_rewrite(self, op, rewriter: PatternRewriter):
        if not isinstance(op, GraphOp) or op.OPDEF.name not in STATS_OPS:
            return
        n = row_length(op)
        if n is None or n <= self.max_row:
            return
        name, a = op.OPDEF.name, op.attrs()
        x = op.operands[0]
        shape = list(x.type.get_shape())
        rows = row_dims(op)
        stat = TensorType(f32, [1 if d in rows else n for d, n in enumerate(shape)])
        two = name != "rms_norm"  # (mean and 1/std; maximum and sum of exponentials)
        attrs = dict(dim=a["dim"]) if "dim" in a else dict(normalized_rank=a["normalized_rank"], eps=a["eps"])
        stats = graph.build(STATS_OPS[name], [x], [stat] * (2 if two else 1), **attrs)
        stats.location = op.location
        rewriter.insert_op(stats, InsertPoint.before(op))
        b = GraphBuilder.before(rewriter, op)

        def wide(v):
            return v if v.type.get_element_type() == f32 else b.op("cast", v, result_type=TensorType(
                f32, list(v.type.get_shape())))

        y = wide(x)
        if name == "softmax":
            y = b.op("div", b.op("exp", b.op("sub", y, stats.results[0])), stats.results[1])
        elif name == "log_softmax":
            y = b.op("sub", b.op("sub", y, stats.results[0]), b.op("log", stats.results[1]))
        else:
            if name == "layer_norm":
                y = b.op("sub", y, stats.results[0])
            y = b.op("mul", y, stats.results[-1])
            for w in op.operands[1:]:  # weight, then (layer_norm) bias
                y = b.op("mul" if w is op.operands[1] else "add", y, wide(w))
        out = op.results[0].type
        if out.get_element_type() != f32:
            y = b.op("cast", y, result_type=out)
        rewriter.replace_op(op, [], [y])


@dataclass(frozen=True)
class SplitLongNormsPass(ModulePass):
    """Split layer / RMS norms and softmaxes over rows of more than ``max_row`` elements into statistics +
    elementwise."""

    name = "kitsune-split-long-norms"

    max_row: int = LONG_ROW
    """Longest row a norm keeps whole (its tile spans the row)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(SplitLongNorm(self.max_row), apply_recursively=False).rewrite_module(op)


__all__ = ["SplitLongNormsPass", "SplitLongNorm", "LONG_ROW", "STATS_OPS", "row_dims", "row_length"]
