"""The output tile of a stage program: which tile ``t`` is, and its index as symbolic expressions.

``TileIndexer.index(T, D)`` turns the work item's tile number ``t`` into tile coordinates (row-major, or
grouped ``GROUP_M`` row tiles for a queue-less gemm) and gives every dim with a tile above one a tile axis
(clamped, padded to a power of two, or to 16 for ``tl.dot``). Several trailing dims may share one unclamped
lane axis (``merged_run``: a conv tile's pixels, the rows of an evaluator tile) whose address folds back to
the lane (``28 * (p // 28) + p % 28`` is ``p``), so loads stay contiguous.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

from kitsune.codegen.plan import Stage
from kitsune.codegen.triton_gen.blocks import Blocks
from kitsune.codegen.triton_gen.index_algebra import Lin, ladd, lconst, lfloordiv, lmod, lscale, strides
from kitsune.codegen.triton_gen.syntax import pow2
from kitsune.codegen.triton_gen.templates.window_reduction import window_vars
from kitsune.dialects.graph import GraphOp


class TileIndex(NamedTuple):
    idx: tuple  # per dim, the index of the tile's elements (a Lin)
    axes: dict  # dim -> the tile axis it varies along
    local: tuple  # per dim, the position inside the tile (a queue slot's layout)


@dataclass
class OutputTile:
    """The tile a stage program computes, shared by the shell, the evaluator and the templates: set once the
    shell has opened the tile (``axes`` alone by the scatter template)."""

    axes: dict = field(default_factory=dict)  # dim -> tile axis
    idx: tuple | None = None  # per dim, the output index (a Lin)
    local: tuple | None = None  # per dim, the position inside the tile
    tid: str = "t"  # the tile's id for counters (grouped orders only where no queue reads tile ids)


class TileIndexer:
    def __init__(self, stage: Stage, blocks: Blocks, contiguous_dims: frozenset = frozenset()):
        self.stage = stage
        self.template = stage.template
        self.cfg = stage.config
        self.b = blocks
        self.coords: dict[int, str] = {}  # dim -> the name of the tile's block coordinate (of the last index)
        self.contiguous_dims = contiguous_dims
        """Dims innermost in memory of a result the stage stores (``StageGen.contiguous_store_dims``): their
        padded lanes run on, masked, instead of repeating the last element, so that the stores along them stay
        contiguous (``tl.minimum`` on the lanes hides that from Triton: inception's 1x1 256 -> 96 stored
        channels-last took 15.9 us with a clamped 128-lane channel axis, H200)."""

    def index(self, T, D) -> TileIndex:
        """Index of tile ``t`` (tiles T of shape D): coordinates from t, one clamped axis per dim > 1.

        Row-major, except for a gemm stage that exchanges no tiles through queues: there the last two dims
        are walked in groups of ``GROUP_M`` row tiles (consecutive programs share operand tiles in L2). A
        ``gemv`` tensor-core config pads its row axis to the 16 rows an mma needs, a gemm its skinny axes."""
        G = [-(-d // t) for d, t in zip(D, T)]
        self.coords = {}
        ntiles = math.prod(G) if G else 1
        gstr = strides(G)
        axes: dict[int, str] = {}
        idx: list[Lin] = []
        gemm = self.template == "gemm" and len(G) >= 2 and len(T) == len(D)
        rows = self.row_dims(D) if gemm else []
        gm = math.prod(G[d] for d in rows)
        grouped = (gemm and not self.stage.pops and not self.stage.pushes and self.cfg.get("GROUP_M", 1) > 1
                   and gm > 1 and G[-1] > 1)
        gm_code = {}
        if grouped:
            gn, GM = G[-1], self.cfg["GROUP_M"]
            r = "t" if ntiles == gm * gn else f"t % {gm * gn}"
            self.b.em.emit(f"tg = ({r}) % {GM * gn}", 1)
            self.b.em.emit(f"first = (({r}) // {GM * gn}) * {GM}", 1)
            self.b.em.emit(f"gsz = tl.minimum({gm} - first, {GM})", 1)
            many = [d for d in rows if G[d] > 1]
            gm_code = {many[0]: "first + tg % gsz", len(G) - 1: "tg // gsz"}
            if len(many) > 1:  # the row blocks of several dims, one after another (row-major)
                self.b.em.emit("rb = first + tg % gsz", 1)
                rstr = strides([G[d] for d in rows])
                gm_code.update({d: f"(rb // {rs}) % {G[d]}" if rs > 1 else f"rb % {G[d]}"
                                for d, rs in zip(rows, rstr) if G[d] > 1})
        local: list[Lin] = []
        merged = self.merged_run(T, D)
        if merged:
            # one lane axis for several dims (a conv tile's pixels: M for the dot; the rows of an evaluator
            # tile), unclamped (lanes past the tile are masked), so that an address oh * OW + ow folds back to
            # the lane and stays contiguous
            n = math.prod(T[d] for d in merged)
            pa = self.b.new_axis("p", max(16, pow2(n)) if self.template == "conv" else pow2(n))
            self.b.clamp[pa] = n
            self.b.unclamped.add(pa)
            plin = self.b.axis(pa, n - 1)  # loads through it are masked to the tile's lanes (``Memory.load``)
        for d, (t, g) in enumerate(zip(T, G)):
            if d in merged:
                inner = math.prod(T[e] for e in merged[merged.index(d) + 1:])
                loc = lfloordiv(plin, inner)
                if d != merged[0]:
                    loc = lmod(loc, t)
                axes[d] = pa
            else:
                if t > 1 or self.template == "decode_attention" and d == 1:  # its dot rows, even for one head
                    size = pow2(t)
                    if self.template == "gemv" and self.cfg.get("DOT") and d < len(T) - 1:
                        size = max(16, size)
                    if self.template in ("gemm", "chain", "attention") and d >= len(T) - 2 or self.template == "conv" \
                            or self.template == "decode_attention" and d == 1:
                        size = max(16, size)  # tl.dot needs 16 rows and columns: a skinny tile is padded
                    axes[d] = self.b.new_axis("o", size)
                    self.b.clamp[axes[d]] = t
                    if d in self.contiguous_dims and size != t:
                        self.b.unclamped.add(axes[d])
                loc = self.b.axis(axes[d], t - 1) if d in axes else lconst(0)
            if g > 1:
                c = self.b.fresh("c")
                if d in gm_code:
                    code = gm_code[d]
                else:
                    code = "t" if gstr[d] == 1 else f"t // {gstr[d]}"
                    if gstr[d] * g != ntiles:
                        code = f"({code}) % {g}"
                self.b.em.emit(f"{c} = {code}", 1)
                self.coords[d] = c
                cl = lscale(self.b.sym(c, 0, g - 1, 1), t)
            else:
                cl = lconst(0)
            idx.append(ladd(cl, loc))
            local.append(loc)
        return TileIndex(tuple(idx), axes, tuple(local))

    def row_dims(self, D) -> list[int]:
        """The dims whose tiles a gemm's grouped order walks as row blocks: the second-to-last, and the leading
        dims before it where every one of them is a row of the anchor's operand times a 2-D weight
        (``chain.weight_layer``: a linear over ``[B, L, K]`` rows), so that the ``GROUP_M`` row blocks walked
        together share each W block across the leading dims too. A language model's head (``[8, 128, 50 257]``
        logits, tiles ``[1, 128, 128]``: one row block a batch entry) walked its tiles row-major and read its 77 MB
        weight from DRAM once a batch entry."""
        from kitsune.dialects.regions import tensor_shape
        from kitsune.schedule.chain import weight_layer
        from kitsune.schedule.select import anchor_of

        nd = len(D)
        if nd > 2:
            op, _ = anchor_of(self.stage.op)
            lay = weight_layer(op) if op is not None else None
            if lay is not None and tuple(tensor_shape(op.results[0].type)) == tuple(D):
                return list(range(nd - 1))
        return [nd - 2]

    def merged_run(self, T, D) -> list[int]:
        """The tile dims that become one lane axis, from the first with a tile above one on, every later one
        whole; empty when at most one of them has a tile above one (a single axis already).

        conv: the output dims but the channel one (N role): the pixels, M of the dot. generic / pointwise:
        all dims, when no reduction of the stage runs along a dim of the tile (only window reductions, such as
        a pool's, whose variables index the input next to an output variable): a whole-row reduction needs
        its row as an axis of its own; nor when the stage adds its tiles into a fused scatter, whose atomics
        Triton vectorises along the columns of [rows, columns] blocks only (a GCN's messages on one
        16384-lane axis went one bf16 atomic a lane: 2.6 ms on the H100 for 70 M of them)."""
        from kitsune.schedule.roles import roles_of
        from kitsune.schedule.select import anchor_of, transposed_read_dim

        if self.template == "conv":
            op, _ = anchor_of(self.stage.op)
            r = roles_of(op) if op is not None else None
            if r is None or len(r.vars("N")) != 1 or len(r.lhs_vars) != len(T):
                return []
            fdim = r.lhs_vars.index(r.vars("N")[0])
            pix = [d for d in range(len(T)) if d != fdim]
        elif self.template in ("generic", "pointwise") and not self.stage.pops and not self.stage.pushes \
                and not self.stage.store_scatters and self.window_reductions_only():
            pix = list(range(len(T)))
            t = transposed_read_dim(self.stage.op.body.blocks.first, D)
            # an input read along dim t, or a result stored with dim t innermost (a channels-last writer's
            # channels): its lanes stay an axis, the dims after it may merge. Merged into one run with the
            # pixels, a channels-last store went one element a sector (a UNet's GroupNorm affine + SiLU over
            # [16 channels, 16 x 16 pixels] tiles: 20.6 us for 4 MB on the H100)
            cuts = [d for d in (t, *self.contiguous_dims) if d is not None and d < len(T) - 1]
            if cuts:
                pix = pix[max(cuts) + 1:]
        else:
            return []
        first = next((i for i, d in enumerate(pix) if T[d] > 1), None)
        if first is None:
            return []
        run = pix[first:]
        if any(T[d] != D[d] for d in run[1:]) or sum(T[d] > 1 for d in run) < 2:
            return []
        return run

    def window_reductions_only(self) -> bool:
        """Every reduction statement of the stage's ops reduces over window variables only."""
        from kitsune.schedule.roles import op_program

        for op in self.stage.op.body.walk():
            got = op_program(op) if isinstance(op, GraphOp) else None
            for i, s_ in enumerate(got[2].stmts if got is not None else ()):
                lhs = set(s_.lhs.vars)
                if s_.op != "=" and not window_vars(op, i, [v for v in s_.all_vars if v not in lhs]):
                    return False
        return True


__all__ = ["TileIndex", "OutputTile", "TileIndexer"]
