"""kitsune-form-regions: graph functions -> dataflow graphs of fused, tiled tasks.

Region formation in the spirit of FusionStitching. Graph ops are visited in
program order; each starts a group and then tries to join the groups of its
producers:

* **epilogue**: an elementwise / layout op joins the group producing an operand
  it reads tile-for-tile (bias, activation, residual after a GEMM; chains of
  elementwise ops);
* **row chain**: a row-wise reduction or normalisation (reduces trailing dims;
  softmax, norms, sums) joins its producer's group when the producer's group can
  be tiled by whole row bands: a memory-only group, a row group with the same
  rows, or a contraction whose output rows are at most ``row_max`` wide (the
  GEMM tile then spans the row). Elementwise ops reading the row statistics
  (``x - max``, ``x * rsqrt(var)``) join too;
* **weight-GEMM chain** (``chains``): a weight GEMM (a row operand times a weight argument) reading
  another weight GEMM group's result, at most 256 columns wide and read by it alone, joins that group when
  there are ``chain_min_rows`` rows and the chain reaches ``chain_min_layers`` GEMMs: one chain task, which the chain template runs with the intermediates
  on chip (shared memory in its TMA form, registers in its register form; NeRF's MLP);
* **GEMM chain** (``chain_bytes`` > 0, the generic evaluator's older form): a contraction reading a contraction
  group's result as its row operand joins it when that intermediate's row band
  (``tile_m`` rows x width x element size) fits in ``chain_bytes`` of on-chip
  memory and nothing else reads it (NeRF's MLP, the GPT MLP at small widths);
* **prologue** (after the forward sweep): a memory-only group read by exactly one
  other group joins it; a row group (a norm) read only by one contraction as its
  row operand joins it when the cost model says recomputing it per column tile
  is cheaper than the round trip of its output through DRAM (``prologue``); so does
  a group of row gathers (``index_select``, ``embedding``, with concats and elementwise
  ops: MeshGraphNet's ``cat(x[src], x[dst], e)``), whose rows are then loaded by index (always when its reader
  reads it element for element, as an epilogue operand: each element is loaded once), and
  a contraction of at most ``small_k`` reduction steps with its epilogue (DLRM's bottom layer
  0 of 13 features), whose dot then runs inside each K step of its consumer's.

Merges never create a cycle between groups, so independent groups stay separate
tasks (they can run concurrently). Each group becomes a ``dataflow.task``:
inputs = the values it reads from outside (constants are cloned in), results =
values read outside (the largest first; the tile describes it). Tile sizes:
``tile_m x tile_n`` over the last two dims for contractions and elementwise
tasks, row bands ``tile_m x width`` for row groups. Channels carry the relation
implied by how the consumer reads the value (elementwise -> ``tile``, row-wise
reductions and the row operand of a contraction -> ``rows``, anything else ->
``all``), weakened until consistent with both tasks' tiles.

``remarks=true`` prints why each task was formed to stderr; ``costs=true``
attaches the cost model's estimate (``est_flops``, ``est_bytes``, ``est_us``).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, TensorType, f64, i64
from xdsl.ir import Block, Operation, Region, SSAValue

from kitsune.dialects import dataflow as df
from kitsune.dialects.graph import GraphOp as GOp
from kitsune.dialects.graph import elem_bytes, is_last_dim_concat
from kitsune.dialects.sliced_results import sliced_domain
from kitsune.passes.split_long_norms import STATS_OPS

from xdsl.passes import ModulePass

REL_ORDER = {"all": 0, "rows": 1, "tile": 2}
SMALL_K = 16
"""Default of ``small_k``: the longest reduction of a contraction that joins the contraction reading it as a
prologue (recomputed per column tile of its consumer, one dot step inside each of the consumer's K steps). DLRM's
bottom layer 0 (13 features) inside layer 1 on the H100: the launch 56.3 -> 52.3 us (51.4 with the prologue's
loads a step ahead), bench/kernels/prologue_probe.py, NOTES section 21."""

# ------------------------------------------------------------------ op classes


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape()) if isinstance(v.type, TensorType) else ()


def _numel(s: Sequence[int]) -> int:
    return math.prod(max(d, 1) for d in s)


def last_dim_row_op(op: GOp) -> bool:
    """A norm / softmax / reduction over the last dim of its first operand alone (each row on its own, no other
    dim mixed in)."""
    name, a = op.OPDEF.name, op.attrs()
    rank = len(_shape(op.operands[0])) if op.operands else 0
    if name in ("layer_norm", "rms_norm"):
        return a["normalized_rank"] == 1 and rank >= 1
    if name in ("softmax", "log_softmax"):
        return rank >= 1 and a["dim"] % rank == rank - 1
    return (op.OPDEF.category == "reduction" and "dims" in a and rank >= 2
            and sorted(d % rank for d in (a["dims"] or ())) == [rank - 1])


def row_wise(op: GOp) -> bool:
    """Reduces (only) trailing dims of its first operand: row reductions, softmax, layer/rms norm."""
    od = op.OPDEF
    a = op.attrs()
    rank = len(_shape(op.operands[0]))
    if rank == 0:
        return False
    if od.category == "reduction" and "dims" in a:
        dims = sorted({d % rank for d in (a["dims"] or range(rank))})
        return dims == list(range(rank - len(dims), rank)) and len(dims) < rank
    if od.name in ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward", "softmax_stats"):
        return a["dim"] % rank == rank - 1 and rank >= 2
    if od.name in ("layer_norm", "rms_norm", "layer_norm_backward", "layer_norm_stats", "rms_norm_stats"):
        return a["normalized_rank"] < rank
    return False


def op_class(op: Operation) -> str:
    """const | ew | row | layout | contraction | gather | other."""
    if not isinstance(op, GOp):
        return "other"
    cat = op.OPDEF.category
    if cat == "constant":
        return "const"
    if op.OPDEF.keeps_index:
        return "ew"
    if cat == "layout":
        return "layout"
    if cat in ("contraction", "gather"):
        return cat
    if row_wise(op):
        return "row"
    return "other"


def access_relation(op: Operation, idx: int) -> str:
    """How ``op`` reads its operand ``idx``, as a tile relation to its (first) result."""
    if not isinstance(op, GOp) or not op.results:
        return "all"
    cls = op_class(op)
    ins, out = _shape(op.operands[idx]), _shape(op.results[0])
    if cls == "ew":
        if ins == out:
            return "tile"
        if len(ins) == len(out) and ins[:-1] == out[:-1] and ins and ins[-1] == 1:
            return "rows"
        return "all"
    if cls == "row":
        if idx == 0 and ins[:-1] == out[:-1]:
            return "rows"
        return "all"
    if cls == "contraction":
        name, a = op.OPDEF.name, op.attrs()
        if name == "linear" and idx == 0:
            return "rows"
        if name == "matmul" and idx == 0 and not a["transpose_a"] and len(ins) == len(out):
            return "rows"
        return "all"
    return "all"


def _reads_rows(op: Operation, idx: int) -> bool:
    """``op`` reads operand ``idx`` by row bands of its result: ``access_relation`` "rows", or a concatenation
    along the last dim (each row of the result holds the operand's row)."""
    if access_relation(op, idx) == "rows":
        return True
    return is_last_dim_concat(op) and _shape(op.operands[idx])[:-1] == _shape(op.results[0])[:-1]


def _row_operand(op: Operation, idx: int) -> bool:
    """Operand ``idx`` of ``op`` is the row operand of a contraction (read straight, not through a concat)."""
    return op_class(op) == "contraction" and access_relation(op, idx) == "rows"


def _regroups_rows(op: Operation) -> bool:
    """A reshape that regroups the leading dims, the last dim kept (``[B, L, N] <-> [B * L, N]``:
    ``graph_canonicalize._regroup_kind``), other than by adding or dropping unit dims."""
    from kitsune.passes.graph_canonicalize import _regroup_kind

    if _regroup_kind(op) is None:
        return False
    ins, out = _shape(op.operands[0]), _shape(op.results[0])
    return [d for d in ins[:-1] if d != 1] != [d for d in out[:-1] if d != 1]


def _permuted_row_dim(ops: Sequence[Operation], res: SSAValue) -> int | None:
    """The dim of ``res`` that the last dim of a row op among ``ops`` (a norm over its trailing dim) becomes
    through the permutes and same-shape elementwise ops that lead from the op's result to ``res`` (ConvNeXt's
    LayerNorm over channels: permute to channels-last, norm, permute back), or None. A tile with that dim whole
    computes each row's statistics once; the default tile of the result's last two dims would cut the rows and
    recompute them per element."""
    rows = [o for o in ops if isinstance(o, GOp) and row_wise(o) and last_dim_row_op(o) and len(o.results) == 1]
    if len(rows) != 1:
        return None
    v = rows[0].results[0]
    d = len(_shape(v)) - 1
    members = set(ops)
    for _ in range(16):
        if v is res:
            return d
        uses = [u.operation for u in v.uses if u.operation in members]
        if len(uses) != 1 or not isinstance(uses[0], GOp) or len(uses[0].results) != 1:
            return None
        o = uses[0]
        if o.OPDEF.name == "permute":
            perm = [p % len(_shape(v)) for p in o.attrs()["perm"]]
            d = perm.index(d)
        elif op_class(o) != "ew" or _shape(o.results[0]) != _shape(v):
            return None
        v = o.results[0]
    return None


def _est(ops: Sequence[Operation], tiles: int | None = None, launch: bool = True):
    """The cost model's estimate of ``ops`` as one kernel (a local roofline if kitsune.cost is missing)."""
    try:
        from kitsune.cost import estimate_task

        return estimate_task(list(ops), "h100", tiles=tiles, launch=launch)
    except ImportError:  # pragma: no cover - fallback while the cost model is absent
        flops = sum(o.counts().flops for o in ops if isinstance(o, GOp))
        nbytes = sum(o.counts().bytes for o in ops if isinstance(o, GOp))

        class _E:
            pass

        e = _E()
        e.flops, e.bytes = flops, nbytes
        e.compute_s, e.memory_s = flops / 400e12, nbytes / 3.0e12
        e.time_s = max(e.compute_s, e.memory_s) + (4e-6 if launch else 0.0)
        return e


def sm_count(gpu: str = "h100") -> int:
    try:
        from kitsune.gpu import get_gpu

        return get_gpu(gpu).sm_count
    except ImportError:  # pragma: no cover
        return 132


# ------------------------------------------------------------------ groups


class _Group:
    def __init__(self, gid: int, op: Operation):
        self.id = gid
        self.ops: list[Operation] = [op]
        cls = op_class(op)
        self.anchor = cls in ("contraction", "gather", "other")
        self.rows = cls == "row"
        self.rowdims = _shape(op.operands[0])[:-1] if cls == "row" else None
        self.statistics = norm_statistics(op)
        self.why: list[str] = [f"{op.name.split('.')[1]} ({cls_desc(cls)})"]


def norm_statistics(op: Operation) -> bool:
    """``op`` computes a norm's statistics alone (``kitsune-split-long-norms``: rows too long for one tile). Its
    group is that op only: joined to its producer's, the producer's result would be computed row by row; joined
    by its readers (the normalisation), the task's tile would span the long rows again."""
    return isinstance(op, GOp) and op.OPDEF.name in STATS_OPS.values()


@dataclass
class _Rows:
    rows: bool
    rowdims: tuple[int, ...] | None


def cls_desc(cls: str) -> str:
    return {"ew": "elementwise", "row": "row-wise reduction", "layout": "layout", "contraction": "contraction anchor",
            "gather": "gather anchor", "other": "anchor", "const": "constant"}[cls]


@dataclass(frozen=True)
class FormRegionsPass(ModulePass):
    """Group graph ops into fused, tiled dataflow tasks (cost-model-driven region formation)."""

    name = "kitsune-form-regions"

    tile_m: int = 128
    """Rows of an output tile (and of a row band)."""
    tile_n: int = 128
    """Columns of an output tile of a contraction / elementwise task."""
    row_max: int = 256
    """Widest contraction output a row-wise reduction may be fused into (the GEMM tile then spans the row: at
    most the gemm template's widest BN, 256). Wider, the norm is a task of its own: a BERT layer's output
    projection + LayerNorm over rows of 768 fused ran on the evaluator's scalar K loop, 2.0 ms against 27 us
    for its attention (H100, bench/kernels/NOTES.md section 24)."""
    chain_bytes: int = 0
    """On-chip bytes for a GEMM-chain intermediate row band (0: never fuse contraction chains)."""
    chains: bool = True
    """Fuse chains of weight GEMMs into one chain task (``kitsune.schedule.chain``: the chain template keeps each
    intermediate, at most 256 columns of bf16, on chip; the weights stream from L2)."""
    chain_min_rows: int = -1
    """Rows a GEMM chain needs before it becomes one chain task (fewer rows: too few tiles to fill the GPU, and
    separate GEMMs split the columns as well); -1: 32 rows per SM of ``gpu`` (4224 on the H100)."""
    chain_min_layers: int = -1
    """Weight GEMMs a chain task needs; -1: 2 where the chain is memory-bound (``ChainConfig.memory_bound``) and its
    layers at most ``CHAIN_SEG`` wide (the register form, one program per tile of 64 rows, saves each
    intermediate's round trip), else 3. Measured on the H100: NeRF's nine in one chain
    0.200 ms against 0.388 as separate GEMMs (bench/kernels/chain_ab.py); MeshGraphNet's two-layer MLPs, K 384
    then, as chains 0.162 against 0.158 in a persistent register form and 0.165-0.167 against 0.151-0.153 in the
    TMA form (bench/kernels/NOTES.md section 13); its edge MLP after ``kitsune-project-gathers`` (K 128, the
    endpoints gathered in the first layer's epilogue, the scatter in the last's) as one kernel by hand 45 us
    against 56 for the two (section 26)."""
    gpu: str = "h100"
    """GPU preset (with optional FIELD=VALUE overrides), for the chain's row threshold."""
    prologue: bool = True
    """Fuse norms into a consuming contraction as a prologue when the cost model says so."""
    small_k: int = SMALL_K
    """A contraction of at most this many reduction steps joins the contraction reading it as its row operand
    as a prologue, when the cost model says so (0: never)."""
    epilogue: bool = True
    """Fuse memory-intensive ops into their producer (off: one task per op, for comparison)."""
    remarks: bool = False
    """Print why each task was formed to stderr."""
    costs: bool = False
    """Attach cost-model estimates (est_flops, est_bytes, est_us) to each task."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and f.body.blocks:
                ops = list(f.body.blocks.first.ops)
                if any(isinstance(o, df.GraphOp) for o in ops):
                    continue
                if not any(isinstance(o, GOp) for o in ops):
                    continue
                if not all(isinstance(o, GOp) for o in ops[:-1]) or not isinstance(ops[-1], func.ReturnOp):
                    continue
                # dead graph ops (pure) would form tasks with no result: drop them first
                from xdsl.transforms.dead_code_elimination import region_dce

                region_dce(f.body)
                _Former(self, f).run()


class _Former:
    def __init__(self, p: FormRegionsPass, f: func.FuncOp):
        self.p = p
        self.f = f
        self.block = f.body.blocks.first
        self.ret = self.block.last_op
        self.ops = [o for o in self.block.ops if isinstance(o, GOp)]
        self.index = {o: i for i, o in enumerate(self.ops)}
        self.group_of: dict[Operation, _Group] = {}
        self.groups: dict[int, _Group] = {}

    # ---- group graph
    def succ(self, g: _Group) -> set[int]:
        out = set()
        for o in g.ops:
            for r in o.results:
                for u in r.uses:
                    h = self.group_of.get(u.operation)
                    if h is not None and h is not g:
                        out.add(h.id)
        return out

    def acyclic(self, ids: set[int]) -> bool:
        """Merging the groups ``ids`` keeps the group graph acyclic."""
        stack = [s for i in ids for s in self.succ(self.groups[i]) if s not in ids]
        seen = set(stack)
        while stack:
            g = self.groups[stack.pop()]
            for s in self.succ(g):
                if s in ids:
                    return False
                if s not in seen:
                    seen.add(s)
                    stack.append(s)
        return True

    def merge(self, ids: Sequence[int], why: str, rows_of: _Group | None = None) -> _Group:
        ids = sorted(set(ids), key=lambda i: min(self.index[o] for o in self.groups[i].ops))
        keep = self.groups[ids[0]]
        for i in ids[1:]:
            g = self.groups.pop(i)
            keep.ops += g.ops
            keep.anchor |= g.anchor
            keep.statistics |= g.statistics
            if g.rows and not keep.rows:
                keep.rows, keep.rowdims = True, g.rowdims
            keep.why += g.why
            for o in g.ops:
                self.group_of[o] = keep
        if rows_of is not None:  # a prologue: the consumer's tiling stays
            keep.rows, keep.rowdims = rows_of.rows, rows_of.rowdims
        keep.ops.sort(key=lambda o: self.index[o])
        keep.why.append(why)
        return keep

    def contraction_out(self, g: _Group) -> SSAValue | None:
        for o in g.ops:
            if op_class(o) == "contraction":
                return o.results[0]
        return None

    def compatible(self, ids: set[int]) -> bool:
        """Groups that may become one: row groups agree on their rows, and a contraction joining a
        row group is narrow enough for its tile to span the row."""
        gs = [self.groups[i] for i in ids]
        rowdims = {g.rowdims for g in gs if g.rows}
        if len(rowdims) > 1:
            return False
        if rowdims:
            for g in gs:
                c = self.contraction_out(g)
                if not g.rows and c is not None and _shape(c) and _shape(c)[-1] > self.p.row_max:
                    return False
        return True

    # ---- legality of op joining group g through operand value v
    def can_join(self, g: _Group, op: GOp, v: SSAValue, rel: str) -> str | None:
        cls = op_class(op)
        if g.statistics or norm_statistics(op):
            return None  # (a task of its own: ``norm_statistics``)
        if cls == "ew" and any(norm_statistics(u.operation) for u in v.uses):
            return None  # (the normalisation of split statistics reads the rows where they are: joined to their
            # producer, its widening cast made a second, fp32 result of a vocabulary's logits)
        out = _shape(op.results[0]) if op.results else ()
        if cls == "ew":
            if rel == "tile":
                if g.rows and out[:-1] != g.rowdims:
                    return None
                return "epilogue" if g.anchor else "elementwise chain"
            if rel == "rows" and g.rows and out[:-1] == g.rowdims:
                return "reads row statistics"
            return None
        if cls == "layout":
            if self.merges_columns(g, op):
                return None  # the template's tile is the contraction's own: the consumer reads through the layout
            if g.anchor and _regroups_rows(op):
                return None  # (its leading dims regrouped, ``kitsune-flatten-rows``: the anchor's template tiles
                # its own result; the consumer reads the rows through the reshape)
            if self.hides_queries(g, op, v):
                return None  # (the attention template tiles the queries of its result; the reader reads through it:
                # nn.MultiheadAttention's [L, B, H, E] -> [L * B, H * E])
            if g.rows and op.OPDEF.name == "reshape" and out and out[-1] != _shape(v)[-1]:
                return None  # a reshape that cuts a row norm's rows (GroupNorm's [N, G, C / G * H * W] rows back
                # to [N, C, H, W]): tiled by the result, each tile would recompute its whole row's statistics;
                # the norm keeps its rows, the reader reads through the reshape
            return "layout epilogue"
        if cls == "row" and rel == "rows":
            rd = _shape(op.operands[0])[:-1]
            if g.rows:
                return "row chain" if rd == g.rowdims else None
            c = self.contraction_out(g)
            if c is None and not g.anchor:
                return "row reduction of a memory-only group"
            if c is not None and _shape(v)[-1] <= self.p.row_max:
                return f"row reduction in the contraction epilogue (row {_shape(v)[-1]} <= row_max {self.p.row_max})"
            if g.anchor and c is None and _shape(v)[-1] <= self.p.row_max:
                return "row reduction in the gather epilogue"
            return None
        if cls == "contraction" and self.p.chains and rel == "rows":
            why = self.weight_chain(g, op, v)
            if why:
                return why
        if cls == "contraction" and self.p.chain_bytes > 0 and rel == "rows":
            c = self.contraction_out(g)
            if c is None or g.rows:
                return None
            if any(self.group_of.get(u.operation) not in (g, None) and u.operation is not op for u in v.uses):
                return None
            if any(u.operation is self.ret for u in v.uses):
                return None
            band = min(self.p.tile_m, max(_shape(v)[0], 1)) * max(_shape(v)[-1], 1) * elem_bytes(v.type)
            if band <= self.p.chain_bytes:
                return f"GEMM chain (intermediate row band {band} B <= chain_bytes {self.p.chain_bytes})"
        return None

    @staticmethod
    def hides_queries(g: _Group, op: GOp, v: SSAValue) -> bool:
        """Layout op ``op`` would merge the queries of ``g``'s prefill attention with another dim of its result
        (``select.attention_step``): as an epilogue it would leave the task without the attention template."""
        from kitsune.schedule.select import attention_dims, attention_step

        att = next((o for o in g.ops if isinstance(o, GOp) and o.OPDEF.name == "attention"), None)
        if att is None or _shape(att.operands[0])[2] <= 1:
            return False  # (one query: decode's own template, split-reduction's)
        dims = attention_dims(att, v, g.ops)
        return dims is not None and attention_step(dims, op, v) is None

    @staticmethod
    def merges_columns(g: _Group, op: GOp) -> bool:
        """Layout op ``op`` would make the columns of ``g``'s sole two-factor contraction part of a wider last
        dim (``[B, 9, 9] -> [B, 81]``, DLRM's interaction) or move them off the last dim: as an epilogue it would
        leave the task without a template (the gemm tile is the contraction's own result), so it is read by
        the consumer instead."""
        from kitsune.schedule.roles import is_contraction, roles_of

        ins, out = _shape(op.operands[0]), _shape(op.results[0])
        if not ins or not out:
            return False
        if op.OPDEF.name == "permute":
            perm = list(op.attrs()["perm"])
            if perm[-1] % len(ins) == len(ins) - 1:
                return False  # the last dim stays last (heads moved: [B, T, H, D] -> [B, H, T, D])
        elif op.OPDEF.name != "reshape" or out[-1] <= ins[-1]:
            return False  # (a reshape that splits the last dim, a head split, stays an epilogue)
        contr = [o for o in g.ops if op_class(o) == "contraction"]
        if not g.anchor or len(contr) != 1:
            return False
        r = roles_of(contr[0])
        return r is not None and is_contraction(r)

    def weight_chain(self, g: _Group, op: GOp, v: SSAValue) -> str | None:
        """Contraction ``op`` reading ``v`` (group ``g``'s result) as its row operand continues a chain of weight
        GEMMs: both are weight layers, ``v`` is read by ``op`` alone and is narrow enough to stay on chip (at most
        256 columns of bf16), and there are rows enough."""
        from kitsune.schedule.chain import CHAIN_MAX_WIDTH, weight_layer

        if g.rows or weight_layer(op) is None:
            return None
        contr = [o for o in g.ops if op_class(o) == "contraction"]
        if not contr or any(weight_layer(o) is None for o in contr):
            return None
        from kitsune.gpu import parse_gpu_option

        gpu = parse_gpu_option(self.p.gpu)
        shape = _shape(v)
        min_layers = self.p.chain_min_layers
        if min_layers < 0:
            min_layers = 2 if self.memory_bound_chain(contr + [op], shape, gpu) else 3
        if len(contr) + 1 + self.layers_ahead(op) < min_layers:
            return None
        min_rows = self.p.chain_min_rows
        if min_rows < 0:
            min_rows = 32 * gpu.sm_count
        if len(shape) < 2 or _numel(shape[:-1]) < min_rows:
            return None
        # the part of v in registers: the group's last contraction (a concatenated input is read from memory)
        last = max(contr, key=lambda o: self.index[o]).results[0]
        width = _shape(last)[-1] * elem_bytes(last.type) // 2  # (fp32 counts twice: registers)
        if width > CHAIN_MAX_WIDTH or _shape(last)[:-1] != shape[:-1]:
            return None
        if any(self.group_of.get(u.operation) not in (g, None) and u.operation is not op for u in v.uses):
            return None
        if any(u.operation is self.ret for u in v.uses):
            return None
        return f"weight-GEMM chain (intermediate {_shape(last)[-1]} wide: registers)"

    @staticmethod
    def memory_bound_chain(layers: list, shape, gpu) -> bool:
        """Weight GEMMs ``layers`` on the rows of ``shape`` move more bytes than their products take time
        (``ChainConfig.memory_bound``): as one chain they save each intermediate's round trip through DRAM."""
        from kitsune.schedule.chain import CHAIN_SEG, weight_layer
        from kitsune.schedule.configs import ChainConfig, Problem

        ls = [weight_layer(o) for o in layers]
        if len(shape) < 2 or any(l is None for l in ls) or any(l.N > CHAIN_SEG for l in ls):
            return False  # (the register form keeps a norm's row in one segment of at most CHAIN_SEG)
        eb = max(elem_bytes(l.w.type) for l in ls)
        p = Problem("chain", M=_numel(shape[:-1]), N=ls[-1].N, K=max(l.K for l in ls), elem_bytes=eb,
                    out_elems=sum(l.K * l.N for l in ls), mem_cols=ls[0].K)
        return ChainConfig.memory_bound(p, gpu)

    def layers_ahead(self, op: GOp) -> int:
        """Weight GEMMs that could continue a chain after ``op``: each reads the previous one's result (through
        elementwise ops and last-dim concats, each value read once) as its row operand."""
        from kitsune.schedule.chain import segment_preserving, weight_layer

        n, v, seen = 0, op.results[0], 0
        while seen < 256:
            seen += 1
            uses = list(v.uses)
            if len(uses) != 1 or not isinstance(uses[0].operation, GOp):
                return n
            u = uses[0].operation
            if op_class(u) == "contraction":
                lay = weight_layer(u)
                if lay is None or lay.a is not v:
                    return n
                n += 1
            elif not segment_preserving(u):
                return n
            v = u.results[0]
        return n

    # ---- the sweep
    def run(self) -> None:
        nid = 0
        for op in self.ops:
            if op_class(op) == "const" and not any(u.operation is self.ret for u in op.results[0].uses):
                continue
            g = _Group(nid, op)
            self.groups[nid] = g
            self.group_of[op] = g
            nid += 1
            if not self.p.epilogue or op_class(op) == "const":
                continue
            cands: dict[int, str] = {}
            for i, v in enumerate(op.operands):
                h = self.group_of.get(v.owner) if isinstance(v.owner, Operation) else None
                if h is None or h is g:
                    continue
                why = self.can_join(h, op, v, access_relation(op, i))
                if why and h.id not in cands:
                    cands[h.id] = why
            if not cands:
                continue
            ids = set(cands) | {g.id}
            n_anchors = sum(1 for i in cands if self.groups[i].anchor)
            if op_class(op) == "layout" and n_anchors >= 2:
                # a concatenation of several computed results (DLRM's stack of the bottom MLP and the bags): it
                # stays a memory-only group, the prologue of its reader (``prologues``), which reads every part
                # where its producer wrote it
                g.why.append("joins none of its producers (several anchors)")
                continue
            if n_anchors <= 1 and self.compatible(ids) and self.acyclic(ids):
                self.merge(list(ids), f"{op.name.split('.')[1]}: " + "; ".join(sorted(set(cands.values()))))
                continue
            for hid, why in cands.items():  # one producer at a time
                if self.acyclic({hid, g.id}):
                    self.merge([hid, g.id], f"{op.name.split('.')[1]}: {why}")
                    break
        if self.p.epilogue:
            self.prologues()
        self.build()

    def users(self, g: _Group) -> tuple[set[int], bool]:
        """Groups reading g's values, and whether the function returns one of them."""
        ids, ret = set(), False
        for o in g.ops:
            for r in o.results:
                for u in r.uses:
                    if u.operation is self.ret:
                        ret = True
                    h = self.group_of.get(u.operation)
                    if h is not None and h is not g:
                        ids.add(h.id)
        return ids, ret

    def prologues(self) -> None:
        changed = True
        while changed:
            changed = False
            for g in sorted(self.groups.values(), key=lambda g: -min(self.index[o] for o in g.ops)):
                ids, ret = self.users(g)
                if ret or len(ids) != 1 or g.statistics:
                    continue
                (cid,) = ids
                c = self.groups[cid]
                fusable = self.p.prologue and self.contraction_out(c) is not None
                if not g.anchor and not g.rows and self.windowed_conv_input(g, c):
                    why = None  # (its own task: ``windowed_conv_input``)
                    g.why.append("stays out of the convolution that reads it through a window")
                elif not g.anchor and not g.rows:
                    why = "memory-only prologue"
                elif g.anchor and self.row_gathers_only(g) and self.read_tile_for_tile(g, c):
                    why = "row gathers read tile for tile (loaded by index where the consumer reads them)"
                elif g.anchor and fusable and self.row_gathers_only(g):
                    why = self.contraction_prologue(g, c, "gather", _reads_rows)
                elif g.anchor and fusable and self.small_contraction_only(g, self.p.small_k) and \
                        sum(op_class(o) == "contraction" for o in c.ops) == 1:  # one level: no prologue in c yet
                    why = self.contraction_prologue(g, c, "small-K contraction", _row_operand)
                elif g.rows and not g.anchor and fusable:
                    why = self.contraction_prologue(g, c, "norm", lambda op, i: access_relation(op, i) == "rows")
                else:
                    why = None
                if why and self.acyclic({g.id, cid}):
                    self.merge([cid, g.id], why, rows_of=_Rows(c.rows, c.rowdims))
                    changed = True
                    break

    def windowed_conv_input(self, g: _Group, c: _Group) -> bool:
        """A value of ``g`` is the input of a convolution of ``c`` with a window of more than one tap, with
        enough channels to be stored channels-last (``kitsune.codegen.layouts.windowed_conv_input``). Fused, the
        convolution would recompute ``g`` for every tap and output-channel block, and read its source through an
        NCHW gather (a UNet's GroupNorm affine + SiLU before each 3 x 3: the K loop evaluated the sigmoid per
        gathered element, 176-620 us per convolution on the H100); apart, ``g`` is written once, channels-last,
        and the convolution's window-major loop loads channel vectors."""
        from kitsune.codegen.layouts import windowed_conv_input

        return any(self.group_of.get(u.operation) is c and windowed_conv_input(u.operation, u.index)
                   for o in g.ops for r in o.results for u in r.uses)

    @staticmethod
    def row_gathers_only(g: _Group) -> bool:
        """Every anchor of ``g`` is a plain row gather (``index_select``, ``embedding``: whole rows picked by an
        index, nothing summed or scattered); the rest is elementwise / layout."""
        from kitsune.schedule.roles import roles_of

        for o in g.ops:
            cls = op_class(o)
            if cls in ("ew", "layout", "const"):
                continue
            if cls != "gather":
                return False
            r = roles_of(o)
            if r is None or r.reduce_op not in (None, "=") or r.has("scatter") or r.has("R"):
                return False
        return True

    def read_tile_for_tile(self, g: _Group, c: _Group) -> bool:
        """Group ``c`` reads every value of ``g`` it reads element for element (``access_relation`` "tile"): fused,
        each gathered element is loaded once, by the tile that uses it, instead of written and read back (the
        projected endpoint rows of a graph network's message, ``kitsune-project-gathers``)."""
        return self.reads_all(g, c, lambda op, i: access_relation(op, i) == "tile")

    def reads_all(self, g: _Group, c: _Group, reads) -> bool:
        """Every read of one of ``g``'s values by an op of group ``c`` is one ``reads(op, operand index)``
        accepts."""
        return all(reads(u.operation, u.index) for o in g.ops for r in o.results for u in r.uses
                   if self.group_of.get(u.operation) is c)

    @staticmethod
    def small_contraction_only(g: _Group, small_k: int) -> bool:
        """``g`` is one contraction whose reduction fits one dot step (at most ``small_k`` steps: DLRM's 13 dense
        features), with elementwise / layout ops around it: cheap enough to recompute inside its consumer's
        operand loads. Its result is wider than a chain's intermediate (``CHAIN_MAX_WIDTH``): a narrower one is
        the chain rule's to fuse or not (its row and layer thresholds), in registers instead of recomputed."""
        from kitsune.schedule.chain import CHAIN_MAX_WIDTH
        from kitsune.schedule.roles import roles_of

        anchors = [o for o in g.ops if op_class(o) not in ("ew", "layout", "const")]
        if len(anchors) != 1 or op_class(anchors[0]) != "contraction":
            return False
        r = roles_of(anchors[0])
        return (r is not None and not r.has("gather") and not r.has("scatter") and 0 < r.extent("K") <= small_k
                and r.extent("N") > CHAIN_MAX_WIDTH)

    def contraction_prologue(self, g: _Group, c: _Group, what: str, reads) -> str | None:
        """Fuse group g (a norm, or row gathers: MeshGraphNet's ``cat(x[src], x[dst], e)``) into the contraction
        group c when c reads each of g's values in a way ``reads(op, operand index)`` accepts (as its row
        operand) and recomputing g per column tile of c beats the DRAM round trip of g's results."""
        if not self.reads_all(g, c, reads):
            return None
        cout = self.contraction_out(c)
        n = _shape(cout)[-1] if cout is not None and _shape(cout) else 1
        col_tiles = max(1, math.ceil(max(n, 1) / self.p.tile_n))
        sep = _est(g.ops).time_s + _est(c.ops).time_s
        redo = _est(g.ops, launch=False).time_s * (col_tiles - 1)
        fused = _est(g.ops + c.ops).time_s + redo
        if fused < sep:
            return (f"{what} prologue (cost model: fused {fused * 1e6:.2f} us incl. recompute over {col_tiles} "
                    f"column tiles < separate {sep * 1e6:.2f} us)")
        return None

    # ---- building the dataflow graph
    def tile_for(self, shape: tuple[int, ...], rows: bool) -> list[int]:
        def cap(d, t):
            return t if d < 0 else max(1, min(d, t))

        r = len(shape)
        if r == 0:
            return []
        if r == 1:
            return [cap(shape[0], shape[0] if rows and shape[0] > 0 else self.p.tile_m * self.p.tile_n)]
        tile = [1] * (r - 2) + [cap(shape[-2], self.p.tile_m)]
        tile.append(cap(shape[-1], shape[-1] if rows and shape[-1] > 0 else self.p.tile_n))
        return tile

    def kind(self, g: _Group) -> str:
        classes = {op_class(o) for o in g.ops}
        if "contraction" in classes:
            return "contraction"
        if "gather" in classes:
            return "gather"
        if "row" in classes or "other" in classes:
            return "reduction"
        if "ew" in classes or "const" in classes:
            return "elementwise"
        return "layout"

    def order(self) -> list[_Group]:
        gs = sorted(self.groups.values(), key=lambda g: min(self.index[o] for o in g.ops))
        indeg = {g.id: 0 for g in gs}
        for g in gs:
            for s in self.succ(g):
                indeg[s] += 1
        ready = [g for g in gs if indeg[g.id] == 0]
        out = []
        while ready:
            ready.sort(key=lambda g: min(self.index[o] for o in g.ops))
            g = ready.pop(0)
            out.append(g)
            for s in self.succ(g):
                indeg[s] -= 1
                if indeg[s] == 0:
                    ready.append(self.groups[s])
        assert len(out) == len(gs), "cycle between groups"
        return out

    def build(self) -> None:
        groups = self.order()
        fargs = list(self.block.args)
        used_args = [a for a in fargs if any(u.operation in self.group_of for u in a.uses)]
        gblock = Block(arg_types=[a.type for a in used_args])
        for a, ga in zip(used_args, gblock.args):
            ga.name_hint = a.name_hint
        outer: dict[SSAValue, SSAValue] = dict(zip(used_args, gblock.args))  # func value -> value in the graph
        task_of: dict[SSAValue, tuple[df.TaskOp, int]] = {}
        channels: dict[tuple[SSAValue, str], SSAValue] = {}
        names: dict[str, int] = {}
        graph_ops: list[Operation] = []
        tasks: list[tuple[df.TaskOp, _Group]] = []
        sliced_results: set[SSAValue] = set()

        def channel(v: SSAValue, rel: str) -> SSAValue:
            key = (v, rel)
            if key not in channels:
                t, i = task_of[v]
                ch = df.ChannelOp(t.results[i], rel)
                graph_ops.append(ch)
                channels[key] = ch.result
            return channels[key]

        for g in groups:
            members = set(g.ops)
            # results: values used outside the group
            res = [r for o in g.ops for r in o.results
                   if any(u.operation not in members for u in r.uses)]
            res.sort(key=lambda r: (-_numel(_shape(r)), -self.index[r.owner]))
            # results that are all slices of one value of the group (a merged convolution's branches): that value
            # comes first, the domain the task's tiles cover (written only where something outside reads it)
            sliced = [o.operands[0] for o in g.ops if o.name == "graph.slice" and o.operands[0].owner in members]
            dom = sliced_domain(res, list(dict.fromkeys(sliced))) if len(res) > 1 and sliced else None
            if dom is not None:
                res.insert(0, dom)
                sliced_results.update(res[1:])
            # inputs: values from outside (constants are cloned in)
            consts: list[Operation] = []
            ins: list[SSAValue] = []
            for o in g.ops:
                for v in o.operands:
                    d = v.owner
                    if isinstance(d, Operation) and d in members:
                        continue
                    if isinstance(d, Operation) and op_class(d) == "const" and d not in self.group_of:
                        if d not in consts:
                            consts.append(d)
                        continue
                    if v not in ins:
                        ins.append(v)
            kind = self.kind(g)
            tile = self.tile_for(_shape(res[0]), g.rows)
            rd = _permuted_row_dim(g.ops, res[0])
            if rd is not None and rd != len(tile) - 1:  # whole rows where a permute put them (a LayerNorm over
                # NCHW channels)
                tile = [1] * len(tile)
                shp = _shape(res[0])
                tile[rd] = shp[rd]
                if rd != len(shp) - 1:  # (at most tile_m x tile_n elements where the rows allow)
                    tile[-1] = max(1, min(shp[-1], self.p.tile_n, self.p.tile_m * self.p.tile_n // max(1, shp[rd])))
            body = Block(arg_types=[v.type for v in ins])
            for v, ba in zip(ins, body.args):
                ba.name_hint = v.name_hint
            vmap: dict[SSAValue, SSAValue] = dict(zip(ins, body.args))
            for c in sorted(consts, key=lambda o: self.index[o]):
                body.add_op(c.clone(value_mapper=vmap))
            for o in g.ops:
                body.add_op(o.clone(value_mapper=vmap))
            body.add_op(df.YieldOp([vmap[r] for r in res]))
            base = next((o for cls in ("contraction", "gather", "other", "row") for o in g.ops if op_class(o) == cls),
                        g.ops[0])
            bname = base.name.split(".")[1]
            name = f"{bname}_{len(tasks)}"
            names[bname] = names.get(bname, 0) + 1
            # operands: graph args or channels (relation from the consumer's reads)
            operands = []
            for v in ins:
                if v in outer:
                    operands.append(outer[v])
                    continue
                operands.append(v)  # placeholder: channel resolved below, once the task (and its tile) exists
            attrs = {}
            if self.p.costs:
                e = _est(g.ops, tiles=math.prod(df.grid_of(_shape(res[0]), tile)) if tile else 1)
                attrs = {"est_flops": IntegerAttr(int(e.flops), i64), "est_bytes": IntegerAttr(int(e.bytes), i64),
                         "est_us": FloatAttr(round(e.time_s * 1e6, 3), f64)}
            task = df.TaskOp(name, kind, [outer.get(v, v) for v in ins], [r.type for r in res], tile,
                             Region(body), attrs)
            # resolve channels
            new_operands = list(task.operands)
            for i, v in enumerate(ins):
                if v in outer:
                    continue
                rel = "tile"
                for u in v.uses:
                    if u.operation in members:
                        r2 = access_relation(u.operation, u.index)
                        if REL_ORDER[r2] < REL_ORDER[rel]:
                            rel = r2
                prod, k = task_of[v]
                for cand in ("tile", "rows", "all"):
                    if REL_ORDER[cand] > REL_ORDER[rel] or (v in sliced_results and cand != "all"):
                        continue  # (a slice of its task's domain: its tiles are the domain's, read it whole)
                    if df.relation_error(cand, prod, _shape(v), task) is None:
                        rel = cand
                        break
                new_operands[i] = channel(v, rel)
            task.operands = new_operands
            graph_ops.append(task)
            tasks.append((task, g))
            for i, r in enumerate(res):
                task_of[r] = (task, i)
            if self.p.remarks:
                grid = df.grid_of(_shape(res[0]), tile)
                e = _est(g.ops, tiles=math.prod(grid) if grid else 1)
                print(f"kitsune-form-regions: task \"{name}\" ({kind}, {len(g.ops)} op(s), tile [{', '.join(map(str, tile))}], "
                      f"grid [{', '.join(map(str, grid))}], est {e.time_s * 1e6:.2f} us): " + "; ".join(g.why),
                      file=sys.stderr)
        # graph results
        rets = list(self.ret.operands)
        yields = []
        for v in rets:
            if v in task_of:
                yields.append(channel(v, "all"))
            elif v in outer:
                yields.append(outer[v])
            else:  # a function argument not otherwise used
                a = v
                gblock.insert_arg(a.type, len(gblock.args))
                used_args.append(a)
                outer[a] = gblock.args[-1]
                yields.append(outer[a])
        for o in graph_ops:
            gblock.add_op(o)
        gblock.add_op(df.YieldOp(yields))
        graph = df.GraphOp(used_args, [v.type for v in rets], Region(gblock))
        self.block.insert_op_before(graph, self.ret)
        self.ret.operands = list(graph.results)
        for o in reversed(self.ops):
            for r in o.results:
                assert all(u.operation in self.index for u in r.uses), "use outside the function body"
            o.detach()
        for o in self.ops:
            o.erase(safe_erase=False)


@dataclass(frozen=True)
class ConvertGraphToDataflowPass(FormRegionsPass):
    """Graph functions -> dataflow graphs with one task per graph op (no fusion; the unfused baseline)."""

    name = "convert-graph-to-dataflow"

    epilogue: bool = False
    """Fuse memory-intensive ops into their producer (default off here: one task per op)."""
