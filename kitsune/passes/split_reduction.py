"""kitsune-split-reduction: use a reduction dimension as extra parallelism.

A ``dataflow.task`` whose output has fewer tiles than the GPU has SMs (a batch-1
GEMV, a long row reduction) is split along the reduction dimension of its main
reduction op into ``P`` **partial** tasks and one **combine** task:

* partial ``p`` computes the ops the reduction depends on (its prologue), slices
  the reduced operands to the ``p``-th chunk of the reduction dim and applies the
  reduction to the chunk (``linear`` / ``matmul`` without bias: a K-chunk of the
  contraction; ``sum`` / ``amax`` / ``amin`` / ``prod``: a chunk of the reduced
  dim);
* a ``sum`` / ``amax`` / ``amin`` / ``prod`` becomes **one** partial task instead
  (``split_in_one_task``): its operand is reshaped so that the reduced dim ``K``
  is ``[P, K / P]``, it reduces the ``K / P`` part and keeps ``P`` as a dim of its
  result, whose tiles are one part wide, and the combine reduces that dim. The
  replicated form emits a stage function per partial: 132 of them (a bias
  gradient over 65536 rows) made a kernel that took minutes to compile.
  ``P`` is the largest divisor of ``K`` up to the chosen count; a ``K`` without
  one keeps replicated partials, at most ``MAX_REPLICAS``;
* the combine task folds the partials (``add``, ``maximum``, ``minimum``,
  ``mul``), adds the bias of a ``linear`` and runs the rest of the original
  body (the epilogue). Its results replace the original task's; it keeps the
  original tile, so existing channels stay consistent. Partials reach it
  through channels (``tile`` when the partial has the combine's shape and tile).

**Attention** (flash-decoding): a ``graph.attention`` is split along the key /
value length ``L_kv`` (dim 2 of k and v). Partial ``p`` slices k and v to its
chunk and computes, in graph ops (kv heads expanded for grouped-query attention
by reshape / expand / reshape, as graph-decompose does)::

    S = (q @ k_p^T) * scale;  m_p = amax(S, -1, keepdim);  e = exp(S - m_p)
    l_p = sum(e, -1, keepdim);  o_p = e @ v_p            (unnormalised)

and yields ``(o_p, m_p, l_p)``. The combine folds them with the online-softmax
rescaling ``M = max_p m_p``, ``w_p = exp(m_p - M)``,
``O = (sum_p w_p * o_p) / (sum_p w_p * l_p)`` and runs the epilogue on ``O``.
With the decode_attention template (one query) the partials are **one** task
(``split_attention_in_one_task``): L_kv is reshaped to ``[P, L / P]``, the parts
are a dim of the partial's results (one stage function and three buffers, not
``P`` of each: 32 replicated stage functions made the kernel's code miss the
instruction cache), and the combine reduces that dim.

The split op is the one with the longest reduction among those whose prologue is
private to it (nothing else in the body reads it, so the combine does not need
the unsplit input). ``P = ceil(sms / tiles)``, at most ``K / min_chunk``;
``force=P`` forces the split (at most ``K`` partials) of every task that has a
splittable op.

A ``softmax`` (composite or decomposed) is **not** split: its output is
elementwise over the whole row, so a combine would have to re-read the whole
row and write it back at the original task's few row-band tiles. Splitting only
moves the max / sum passes to the partials while adding a round trip of the
row through DRAM; the under-filled row-band work stays in the combine. Attention
pays because its combine works on the small ``[B, H, L_q, E]`` partial outputs.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from kitsune.dialects import dataflow as df
from kitsune.dialects import graph
from kitsune.dialects.graph import GraphOp as GOp
from kitsune.passes.builder import GraphBuilder
from kitsune.passes.choose_schedules import config_attr
from kitsune.schedule.configs import DecodeAttentionConfig, Problem

from xdsl.passes import ModulePass

COMBINE = {"sum": "add", "amax": "maximum", "amin": "minimum", "prod": "mul", "linear": "add", "matmul": "add"}
FOLD = ("sum", "amax", "amin", "prod")
"""Reductions split as one partial task over a reshaped operand (``split_in_one_task``)."""
MAX_REPLICAS = 16
"""At most this many replicated partial tasks (each is a stage function of its own: 132 of them made a kernel
whose Triton compile took minutes, nerf_65k's bias gradients in training)."""
N_MAIN = {"linear": 2, "matmul": 2, "attention": 3}
"""Number of leading operands that a split op reads chunk-wise or whole (the others go to the combine)."""


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())


def split_dims(op: Operation) -> list[tuple[int, int]] | None:
    """(operand index, dim) pairs to slice to split ``op`` along its reduction dim, or None."""
    if not isinstance(op, GOp):
        return None
    name, a = op.OPDEF.name, op.attrs()
    if name == "linear":
        x = _shape(op.operands[0])
        if len(x) < 1:
            return None
        return [(0, len(x) - 1), (1, 1)]
    if name == "matmul":
        ra, rb = len(_shape(op.operands[0])), len(_shape(op.operands[1]))
        if ra < 2 or rb < 2:
            return None
        return [(0, ra - 2 if a["transpose_a"] else ra - 1), (1, rb - 1 if a["transpose_b"] else rb - 2)]
    if name == "attention":
        if a["causal"] or (len(op.operands) > 3 and len(_shape(op.operands[3])) > 4):
            return None  # a causal flag indexes the key positions: not split (yet); a mask is sliced with them
        q, k, v = (_shape(x) for x in op.operands[:3])
        if (len(q) != 4 or len(k) != 4 or len(v) != 4 or any(d < 0 for d in q + k + v) or k[2] != v[2]
                or k[1] < 1 or q[1] % k[1]):
            return None
        return [(1, 2), (2, 2)]
    if name in ("sum", "amax", "amin", "prod"):
        s = _shape(op.operands[0])
        if not s:
            return None
        dims = sorted({d % len(s) for d in (a["dims"] or range(len(s)))})
        d = max(dims, key=lambda d: s[d])
        return [(0, d)]
    return None


def reduced_size(op: Operation) -> int:
    sd = split_dims(op)
    if not sd:
        return 0
    i, d = sd[0]
    return _shape(op.operands[i])[d]


def backward_slice(op: Operation, block: Block) -> list[Operation]:
    seen: set[Operation] = set()
    stack = [op]
    while stack:
        o = stack.pop()
        for v in o.operands:
            d = v.owner
            if isinstance(d, Operation) and d.parent_block() is block and d not in seen:
                seen.add(d)
                stack.append(d)
    return [o for o in block.ops if o in seen]


def _is_contraction(op: Operation) -> bool:
    return getattr(getattr(op, "OPDEF", None), "category", None) == "contraction"


def private(op: Operation, sl: list[Operation]) -> bool:
    inside = set(sl) | {op}
    return all(u.operation in inside for o in sl for r in o.results for u in r.uses)


@dataclass(frozen=True)
class SplitReductionPass(ModulePass):
    """Split under-filled reduction tasks along their reduction dim into partial tasks plus a combine."""

    name = "kitsune-split-reduction"

    sms: int = 132
    """SM count to fill (the tiles of a task below it make it a candidate)."""
    force: int = 0
    """Split every splittable task into this many partials (0: choose from the SM count)."""
    min_chunk: int = 64
    """Smallest chunk of the reduction dim (of L_kv for attention) a partial gets (when P is chosen)."""
    remarks: bool = False
    """Print each split to stderr."""
    templates: bool = True
    """Attention partials take the decode_attention template (online softmax, query heads of a key/value
    group as the rows of a tl.dot) where it applies; off: the generic evaluator with one head per tile."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for g in [o for o in op.walk() if isinstance(o, df.GraphOp)]:
            for t in g.tasks():
                if t.task_kind in ("partial", "combine"):
                    continue
                if "config" in t.attributes:
                    continue  # a template splits its reduction in the kernel (the config's SPLIT field)
                self.split(t)
            from kitsune.passes.choose_schedules import legalise_channels

            legalise_channels(g)  # partials read their producers with the original relation and their own tile

    def choose(self, t: df.TaskOp) -> tuple[Operation, int] | None:
        block = t.body.blocks.first
        best = None
        for o in block.ops:
            k = reduced_size(o)
            if k < 2:
                continue
            sl = backward_slice(o, block)
            if not private(o, sl) or not _inputs_private(o, sl, block):
                continue
            # the largest reduction; on a tie a contraction (its partial sums carry the work; a norm's reduction
            # of the same row, moved to the epilogue by kitsune-hoist-row-scale, is cheap there)
            if best is None or (k, _is_contraction(o)) > (reduced_size(best), _is_contraction(best)):
                best = o
        if best is None:
            return None
        k = reduced_size(best)
        tiles = t.num_tiles()
        prob = decode_attention_problem(best) if self.templates and best.OPDEF.name == "attention" else None
        if prob is not None:
            return best, (min(self.force, k) if self.force > 0 else DecodeAttentionConfig.for_sms(prob, self.sms).PARTS)
        if self.force > 0:
            p = min(self.force, k)
        else:
            if tiles >= self.sms:
                return None
            p = min(math.ceil(self.sms / tiles), k // max(1, self.min_chunk))
        if p < 2:
            return None
        return best, p

    def split(self, t: df.TaskOp) -> None:
        c = self.choose(t)
        if c is None:
            return
        red, p = c
        if red.OPDEF.name == "attention":
            if not self.split_attention_in_one_task(t, red, p):
                self.split_attention(t, red, p)
            return
        if red.OPDEF.name in FOLD and self.split_in_one_task(t, red, p):
            return
        p = min(p, MAX_REPLICAS)
        block = t.body.blocks.first
        name = red.OPDEF.name
        k = reduced_size(red)
        bounds = [round(i * k / p) for i in range(p + 1)]
        dims = dict(split_dims(red))
        new_ops: list[Operation] = []
        partial_vals = []
        pres_type = red.results[0].type
        ptile = list(t.tile_sizes()) if _shape(red.results[0]) == _shape(t.outs[0]) else _default_tile(
            _shape(red.results[0]), t)
        for i in range(p):
            body, vmap = _body_like(block)
            lo, hi = bounds[i], bounds[i + 1]
            ins = []
            for j in range(N_MAIN.get(name, 1)):
                if j in dims:
                    ins.append(_sliced(red.operands[j], dims[j], lo, hi, body, vmap, {}))
                else:
                    ins.append(_full(red.operands[j], body, vmap))
            pop = graph.build(name, ins, [pres_type], **{k_: v_ for k_, v_ in red.attrs().items()})
            body.add_op(pop)
            body.add_op(df.YieldOp([pop.results[0]]))
            pt = df.TaskOp(f"{t.task_name}_part{i}", "partial", list(t.ins), [pres_type], ptile, Region(body))
            pt.drop_unused_args()
            ch = df.ChannelOp(pt.results[0], "all")
            new_ops += [pt, ch]
            partial_vals.append(ch)
        # combine: the original body with the reduction replaced by the fold of the partials
        body, vmap = _body_like(block, [pres_type] * p)
        parts = list(body.args[len(block.args):])
        for o in block.ops:
            if o is red:
                acc = parts[0]
                for q in parts[1:]:
                    f = graph.build(COMBINE[name], [acc, q], [pres_type])
                    body.add_op(f)
                    acc = f.results[0]
                if name == "linear" and len(red.operands) > 2:
                    b = vmap[red.operands[2]]
                    f = graph.build("add", [acc, b], [pres_type])
                    body.add_op(f)
                    acc = f.results[0]
                vmap[red.results[0]] = acc
                continue
            body.add_op(o.clone(value_mapper=vmap))
        self._replace(t, new_ops, body, [c.result for c in partial_vals],
                      f"{name} split along its reduction dim ({k}) into {p} partials", p)

    def split_in_one_task(self, t: df.TaskOp, red: Operation, p: int) -> bool:
        """A sum / amax / amin / prod split into ``P`` parts as **one** partial task: its reduced operand is
        reshaped so that the split dim ``K`` becomes ``[P, K / P]``, the reduction runs over the ``K / P`` part
        and keeps ``P`` as a dim of its result, whose tiles are one part wide (``P`` x the other tiles work
        items); the combine reduces that dim. ``P`` is the largest divisor of ``K`` up to the chosen count;
        False when ``K`` has none (the caller then makes replicated partials)."""
        x = red.operands[0]
        xs = _shape(x)
        ((_, d),) = split_dims(red)
        k = xs[d]
        p = max((q for q in range(2, p + 1) if k % q == 0), default=0)
        if p < 2:
            return False
        a = red.attrs()
        keep = bool(a["keepdim"])
        rdims = sorted({e % len(xs) for e in (a["dims"] or range(len(xs)))})
        name = red.OPDEF.name
        block = t.body.blocks.first
        body, vmap = _body_like(block)
        b = GraphBuilder.at_end(body)
        et = x.type.get_element_type()
        xr = b.op("reshape", _full(x, body, vmap), result_type=TensorType(et, [*xs[:d], p, k // p, *xs[d + 1:]]))
        part = b.op(name, xr, dims=[e if e < d else e + 1 for e in rdims], keepdim=keep)
        body.add_op(df.YieldOp([part]))
        ppos = d if keep else d - sum(1 for e in rdims if e < d)  # where P stands in the partial result
        ptile = _default_tile(_shape(part), t)
        ptile[ppos] = 1
        pt = df.TaskOp(f"{t.task_name}_part", "partial", list(t.ins), [part.type], ptile, Region(body))
        pt.drop_unused_args()
        ch = df.ChannelOp(pt.results[0], "all")
        cbody, cmap = _body_like(block, [part.type])
        cb = GraphBuilder.at_end(cbody)
        for o in block.ops:
            if o is red:
                folded = cb.op(name, cbody.args[-1], dims=[ppos], keepdim=False)
                if folded.type != red.results[0].type:  # (not expected: the fold restores the reduced shape)
                    return False
                cmap[red.results[0]] = folded
                continue
            cbody.add_op(o.clone(value_mapper=cmap))
        self._replace(t, [pt, ch], cbody, [ch.result],
                      f"{name} split along its reduction dim ({k}) into one partial task of {p} parts", p)
        return True

    def _replace(self, t: df.TaskOp, new_ops: list[Operation], body: Block, partials: list[SSAValue], what: str,
                 p: int) -> None:
        """Make the combine task (``body`` over ``t``'s inputs + the partial results), insert the partials
        (+ channels) and the combine before ``t``, then replace ``t`` by the combine."""
        _dce(body)
        comb = df.TaskOp(f"{t.task_name}_combine", "combine", list(t.ins) + partials,
                         [r.type for r in t.outs], t.tile_sizes(), Region(body), dict(t.attributes))
        comb.drop_unused_args()
        for ch in [o for o in new_ops if isinstance(o, df.ChannelOp)]:
            for rel in df.RELATIONS:
                if df.relation_error(rel, ch.source.owner, _shape(ch.result), comb) is None:
                    ch.relation = StringAttr(rel)
                    break
        gblock = t.parent_block()
        for o in new_ops + [comb]:
            gblock.insert_op_before(o, t)
        for old, new in zip(t.results, comb.results):
            old.replace_all_uses_with(new)
        tiles = t.num_tiles()
        t.detach()
        t.erase()
        if self.remarks:
            print(f"kitsune-split-reduction: task \"{t.task_name}\" has {tiles} tile(s) for {self.sms} SMs: "
                  f"{what} + \"{comb.task_name}\"", file=sys.stderr)

    def split_attention_in_one_task(self, t: df.TaskOp, att: Operation, p: int) -> bool:
        """Flash-decoding as **one** partial task of ``P`` parts (the decode_attention template's form, one
        query): k and v (kv heads expanded) are reshaped so that L_kv becomes ``[P, L / P]``, the query is
        repeated over the parts, and the softmax chain runs per part on 5-D tensors ``[B, Hq, P, 1, ...]``; the
        results are ``o [B, Hq, P, Ev]``, ``m`` and ``l [B, Hq, P, 1]``, whose tiles are one part wide (a work
        item is a group of query heads and a part: one stage function, not ``P``). The combine reduces the
        parts dim: ``M = amax(m)``, ``w = exp(m - M)``, ``O = sum(w o) / sum(w l)``. ``P`` is the largest divisor
        of L_kv up to the chosen count; False (the caller makes replicated partials) without the template, with
        more than one query, or when only ``P = 1`` divides and more parts were asked for."""
        prob = decode_attention_problem(att) if self.templates else None
        if prob is None:
            return False
        block = t.body.blocks.first
        q, k, v = att.operands[:3]
        qs, ks, vs = _shape(q), _shape(k), _shape(v)
        B, Hq, Lq, E = qs
        Hk, L, Ev = ks[1], ks[2], vs[3]
        parts = max(d for d in range(1, min(p, L) + 1) if L % d == 0)
        if parts == 1 and p > 1:
            return False
        C, g = L // parts, Hq // Hk
        scale = att.attrs()["scale"] or 1.0 / math.sqrt(E)
        et = att.results[0].type.get_element_type()
        body, vmap = _body_like(block)
        b = GraphBuilder.at_end(body)
        qi, ki, vi = (_full(x, body, vmap) for x in (q, k, v))
        if g > 1:
            ki, vi = b.expand_heads(ki, g), b.expand_heads(vi, g)
        k5 = b.op("reshape", ki, result_type=TensorType(et, [B, Hq, parts, C, E]))
        v5 = b.op("reshape", vi, result_type=TensorType(et, [B, Hq, parts, C, Ev]))
        q5 = b.op("reshape", qi, result_type=TensorType(et, [B, Hq, 1, 1, E]))
        if parts > 1:
            q5 = b.op("expand", q5, shape=[B, Hq, parts, 1, E])
        s = b.op("mul", b.op("matmul", q5, k5, transpose_b=True), b.scalar(scale, q5))
        if len(att.operands) > 3:  # the additive mask, broadcastable to [B, Hq, 1, L]: [.., parts, 1, C]
            mk = _full(att.operands[3], body, vmap)
            ms = [1] * (4 - len(_shape(mk))) + list(_shape(mk))
            keys = [parts, 1, C] if ms[3] == L else [1, 1, 1]
            s = b.op("add", s, b.op("reshape", mk, result_type=TensorType(et, ms[:2] + keys)))
        o, m, l_ = _softmax_partial(b, s, v5)
        o_t, r_t = TensorType(et, [B, Hq, parts, Ev]), TensorType(et, [B, Hq, parts, 1])
        ys = [b.op("reshape", o, result_type=o_t), b.op("reshape", m, result_type=r_t),
              b.op("reshape", l_, result_type=r_t)]
        body.add_op(df.YieldOp(ys))
        cfg = replace(DecodeAttentionConfig.for_sms(prob, self.sms), PARTS=parts, BN=32 if C <= 32 else 64)
        pt = df.TaskOp(f"{t.task_name}_part", "partial", list(t.ins), [o_t, r_t, r_t], [1, prob.M, 1, Ev],
                       Region(body), {"template": StringAttr("decode_attention"), "config": config_attr(cfg)})
        pt.drop_unused_args()
        chans = [df.ChannelOp(r, "all") for r in pt.results]
        # combine: rescale the parts by their maxima, sum them, divide; then the original epilogue
        cbody, cmap = _body_like(block, [o_t, r_t, r_t])
        os_, ms_, ls_ = cbody.args[len(block.args):]
        cb = GraphBuilder.at_end(cbody)
        for op in block.ops:
            if op is att:
                w = cb.op("exp", cb.op("sub", ms_, cb.op("amax", ms_, dims=[2], keepdim=True)))
                num = cb.op("sum", cb.op("mul", w, os_), dims=[2], keepdim=True)
                den = cb.op("sum", cb.op("mul", w, ls_), dims=[2], keepdim=True)
                cmap[att.results[0]] = cb.op("div", num, den)
                continue
            cbody.add_op(op.clone(value_mapper=cmap))
        self._replace(t, [pt, *chans], cbody, [c.result for c in chans],
                      f"attention split along its key/value length ({L}) into one partial task of {parts} parts", p)
        return True

    def split_attention(self, t: df.TaskOp, att: Operation, p: int) -> None:
        """Flash-decoding: ``p`` partials over chunks of L_kv yielding (o, m, l), an online-softmax combine."""
        block = t.body.blocks.first
        q, k, v = att.operands[:3]
        qs, ks, vs = _shape(q), _shape(k), _shape(v)
        B, Hq, Lq, E = qs
        Hk, L, Ev = ks[1], ks[2], vs[3]
        g = Hq // Hk
        scale = att.attrs()["scale"] or 1.0 / math.sqrt(E)
        et = att.results[0].type.get_element_type()
        o_t = TensorType(et, [B, Hq, Lq, Ev])
        r_t = TensorType(et, [B, Hq, Lq, 1])
        bounds = [round(i * L / p) for i in range(p + 1)]
        ptile = _default_tile((B, Hq, Lq, Ev), t)
        prob = decode_attention_problem(att) if self.templates else None
        attrs = {}
        if prob is not None:
            ptile = [1, prob.M, 1, Ev]  # a group of query heads that share a key/value head, one query
            cfg = replace(DecodeAttentionConfig.for_sms(prob, self.sms), PARTS=p)
            attrs = {"template": StringAttr("decode_attention"), "config": config_attr(cfg)}
        new_ops: list[Operation] = []
        chans: list[df.ChannelOp] = []
        for i in range(p):
            body, vmap = _body_like(block)
            lo, hi = bounds[i], bounds[i + 1]
            b = GraphBuilder.at_end(body)
            qi = _full(q, body, vmap)
            ki = _sliced(k, 2, lo, hi, body, vmap, {})
            vi = _sliced(v, 2, lo, hi, body, vmap, {})
            if g > 1:
                ki, vi = b.expand_heads(ki, g), b.expand_heads(vi, g)
            s = b.op("mul", b.op("matmul", qi, ki, transpose_b=True), b.scalar(scale, qi))
            if len(att.operands) > 3:  # the additive mask, broadcast to [B, Hq, Lq, L]: its chunk of the keys
                mk = att.operands[3]
                ms = _shape(mk)
                mi = _sliced(mk, len(ms) - 1, lo, hi, body, vmap, {}) if ms and ms[-1] == L else _full(mk, body, vmap)
                s = b.op("add", s, mi)
            o, m, l_ = _softmax_partial(b, s, vi)
            body.add_op(df.YieldOp([o, m, l_]))
            pt = df.TaskOp(f"{t.task_name}_part{i}", "partial", list(t.ins), [o_t, r_t, r_t], ptile, Region(body))
            for name, attr in attrs.items():
                pt.attributes[name] = attr
            pt.drop_unused_args()
            cs = [df.ChannelOp(r, "all") for r in pt.results]
            new_ops += [pt, *cs]
            chans += cs
        # combine: online-softmax rescaling of the partials, then the original epilogue
        body, vmap = _body_like(block, [c.result.type for c in chans])
        parts = list(body.args[len(block.args):])
        os_, ms, ls = parts[0::3], parts[1::3], parts[2::3]
        b = GraphBuilder.at_end(body)
        for o in block.ops:
            if o is att:
                mx = ms[0]
                for m in ms[1:]:
                    mx = b.op("maximum", mx, m)
                num = den = None
                for oi, mi, li in zip(os_, ms, ls):
                    w = b.op("exp", b.op("sub", mi, mx))
                    wo, wl = b.op("mul", w, oi), b.op("mul", w, li)
                    num = wo if num is None else b.op("add", num, wo)
                    den = wl if den is None else b.op("add", den, wl)
                vmap[att.results[0]] = b.op("div", num, den)
                continue
            body.add_op(o.clone(value_mapper=vmap))
        self._replace(t, new_ops, body, [c.result for c in chans],
                      f"attention split along its key/value length ({L}) into {p} partials", p)


def _softmax_partial(b: GraphBuilder, s: SSAValue, v: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
    """A flash-decoding partial from its scaled (and masked) scores ``s`` over its keys (the last dim) and its
    values ``v``: ``(o, m, l)`` with ``m`` the max score, ``l`` the sum of ``exp(s - m)`` and ``o`` the
    unnormalised ``exp(s - m) @ v``."""
    last = len(_shape(s)) - 1
    m = b.op("amax", s, dims=[last], keepdim=True)
    e = b.op("exp", b.op("sub", s, m))
    l_ = b.op("sum", e, dims=[last], keepdim=True)
    return b.op("matmul", e, v), m, l_


def decode_attention_problem(att: Operation) -> Problem | None:
    """The decode_attention template's problem for an attention op it applies to, else None: one query (a
    decode step; more queries keep the generic partials, whose tiles cover them), head dims that are powers of
    two in [16, 256], and a group of query heads per key/value head that fits the 16 rows of a tl.dot (a
    larger group is cut into tiles of its largest divisor up to 16)."""
    q, k, v = (_shape(x) for x in att.operands[:3])
    B, Hq, Lq, E = q
    Hk, L, Ev = k[1], k[2], v[3]
    pow2 = all(x >= 16 and x <= 256 and x & (x - 1) == 0 for x in (E, Ev))
    if not pow2 or E != Ev or Lq != 1 or Hk < 1 or Hq % Hk or L < 1:
        return None
    g = Hq // Hk
    rows = max(d for d in range(1, min(g, 16) + 1) if g % d == 0)
    et = att.operands[0].type.get_element_type()
    eb = 4 if isinstance(et, Float32Type) else 2
    return Problem("decode_attention", M=rows, N=max(E, Ev), K=L, batch=B * Lq * (Hq // rows), elem_bytes=eb)


def _inputs_private(op: Operation, sl: list[Operation], block: Block) -> bool:
    """Nothing but ``op`` and its prologue reads the inputs they reduce (else the combine would still
    need the whole input, e.g. a softmax's max: splitting would not pay)."""
    inside = set(sl) | {op}
    n = N_MAIN.get(op.OPDEF.name, 1)
    roots = {v for o in inside for v in (o.operands[:n] if o is op else o.operands) if v.owner is block}
    shared = [v for v in roots if any(u.operation not in inside for u in v.uses)]
    if not shared:
        return True
    # a contraction whose row operand is also read elsewhere (a row scale moved to its epilogue by
    # kitsune-hoist-row-scale reads the whole row): the split still pays when that operand is small next to
    # what the contraction reads in all (the weight)
    size = {v: math.prod(_shape(v)) for v in roots}
    return _is_contraction(op) and 4 * sum(size[v] for v in shared) <= sum(size.values())


def _body_like(block: Block, extra_types=()) -> tuple[Block, dict[SSAValue, SSAValue]]:
    """A new block with ``block``'s arguments (their names too) followed by arguments of ``extra_types``, and the
    map from ``block``'s arguments to the new ones (a partial's or a combine's body)."""
    body = Block(arg_types=[a.type for a in block.args] + list(extra_types))
    for ba, a in zip(body.args, block.args):
        ba.name_hint = a.name_hint
    return body, dict(zip(block.args, body.args))


def _full(v: SSAValue, body: Block, vmap: dict[SSAValue, SSAValue]) -> SSAValue:
    """``v`` computed in the new body (its producers cloned on demand)."""
    if v in vmap:
        return vmap[v]
    o = v.owner
    assert isinstance(o, Operation)
    for x in o.operands:
        _full(x, body, vmap)
    body.add_op(o.clone(value_mapper=vmap))
    return vmap[v]


def _sliced(v: SSAValue, d: int, lo: int, hi: int, body: Block, vmap: dict[SSAValue, SSAValue],
            memo: dict[SSAValue, SSAValue]) -> SSAValue:
    """``v[..., lo:hi (dim d), ...]`` in the new body. The slice moves above elementwise producers, so a
    partial computes its prologue on its chunk only."""
    if v in memo:
        return memo[v]
    o = v.owner
    shape = _shape(v)
    if (isinstance(o, GOp) and o.OPDEF.category == "elementwise" and len(o.results) == 1
            and all(len(_shape(x)) in (0, len(shape)) for x in o.operands)):
        ins = []
        for x in o.operands:
            xs = _shape(x)
            if not xs:
                ins.append(_full(x, body, vmap))
            elif xs[d] == shape[d]:
                ins.append(_sliced(x, d, lo, hi, body, vmap, memo))
            elif xs[d] == 1:
                ins.append(_full(x, body, vmap))
            else:
                break
        else:
            rt = v.type
            new_shape = list(shape)
            new_shape[d] = hi - lo
            new = graph.build(o.OPDEF.name, ins, [TensorType(rt.get_element_type(), new_shape)], **o.attrs())
            body.add_op(new)
            memo[v] = new.results[0]
            return memo[v]
    full = _full(v, body, vmap)
    (rt,) = graph.infer_result_types("slice", [full.type], dim=d, start=lo, end=hi)
    sl = graph.build("slice", [full], [rt], dim=d, start=lo, end=hi)
    body.add_op(sl)
    memo[v] = sl.results[0]
    return memo[v]


def _default_tile(shape: tuple[int, ...], t: df.TaskOp) -> list[int]:
    if not shape:
        return []
    tile = [1] * len(shape)
    tile[-1] = max(1, min(shape[-1], 128)) if shape[-1] > 0 else 128
    if len(shape) >= 2:
        tile[-2] = max(1, min(shape[-2], 128)) if shape[-2] > 0 else 128
    return tile


def _dce(body: Block) -> None:
    changed = True
    while changed:
        changed = False
        for o in reversed(list(body.ops)):
            if isinstance(o, df.YieldOp):
                continue
            if all(not r.uses for r in o.results):
                o.detach()
                o.erase()
                changed = True


