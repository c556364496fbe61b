"""The tensor-core template: a reduction ``+=`` of a product of two operands that split the tile's two axes
between them becomes ``tl.dot`` (bf16 / fp16 operands from memory stay in their type, fp32 accumulation).

This is matmul and linear (``gemm`` / ``gemv`` stages), a convolution as an implicit GEMM (``conv``: output
channels by one lane axis of output pixels), and a scatter-add as a one-hot product (an ``eq`` operand:
the index tensor compared with the tile's rows). The K loop, and a split stage's share of it with the
combination of the parts, come from ``SplitK``.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from xdsl.ir import Block

from kitsune.codegen.plan import ELEM_BYTES, CodegenError, dtype_key
from kitsune.codegen.triton_gen.emitter import TV, Blk
from kitsune.codegen.triton_gen.index_algebra import ladd, laxes, lfloordiv, lmod, loffset, lscale
from kitsune.codegen.triton_gen.syntax import TL, lit, pow2
from kitsune.dialects.graph import fmt_loc, is_last_dim_concat
from kitsune.dialects.regions import tensor_shape
from kitsune.semantics.comprehension import Access, Affine, BinOp, Num

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.evaluator import Evaluator


SEGMENT_UNROLL_CHUNKS = 8
"""A segmented K loop (``DotTemplate.k_segments``) of at most this many chunks in all is unrolled (bench/kernels/NOTES.md
section 15)."""


class DotTemplate:
    def __init__(self, ev: "Evaluator"):
        self.ev = ev
        self.b = ev.b

    @classmethod
    def factors(cls, e):
        """The factors of a product of reads and numbers (None: not such a product)."""
        match e:
            case BinOp(op="*", lhs=l, rhs=r):
                fl, fr = cls.factors(l), cls.factors(r)
                return None if fl is None or fr is None else fl + fr
            case Access() | Num():
                return [e]
        return None

    @staticmethod
    def dtype_of_access(opp, acc: Access) -> str:
        if acc.tensor in opp.inputs:
            return dtype_key(opp.inputs[acc.tensor].type.get_element_type())
        return "f32"

    def plan(self, opp, s, binding, rvars, scatter, idx, bframe):
        """(A, B, numbers) when statement ``s`` is a dot over the tile frame ``bframe`` (A along its first axis,
        B along its second; items ``("acc", Access)`` or ``("eq", (dim, Indirect))``), else None. A frame of
        three axes is a batched dot: both operands along its first axis (a bmm's batch, DLRM's interaction),
        A along the second, B along the third."""
        if s.op != "+=" or len(bframe) not in (2, 3) or not rvars:
            return None
        if any(self.b.aranges[a] < 16 for a in bframe[-2:]):
            return None
        facs = self.factors(s.rhs)
        if facs is None:
            return None
        accs = [f for f in facs if isinstance(f, Access)]
        items: list = [("acc", a) for a in accs] + [("eq", sc) for sc in scatter]
        if len(items) != 2:
            return None
        rset = set(rvars)

        def axes_of(item) -> frozenset:
            kind, x = item
            if kind == "acc":
                vs = [v for v in x.vars if v not in rset]
                return frozenset().union(*(laxes(binding[v]) for v in vs)) if vs else frozenset()
            d, ix = x
            vs = [v for v in ix.vars if v not in rset]
            ax = laxes(idx[d])
            for v in vs:
                ax |= laxes(binding[v])
            return ax

        def has_r(item) -> bool:
            kind, x = item
            return bool(set(x.vars if kind == "acc" else x[1].vars) & rset)

        a0, a1 = axes_of(items[0]), axes_of(items[1])
        if not (has_r(items[0]) and has_r(items[1])):
            return None
        *bt, m, n = bframe
        if a0 == {m, *bt} and a1 == {n, *bt}:
            return items[0], items[1], [f for f in facs if isinstance(f, Num)]
        if a0 == {n, *bt} and a1 == {m, *bt}:
            return items[1], items[0], [f for f in facs if isinstance(f, Num)]
        return None

    def emit(self, opp, s, binding, rvars, ext, scatter, idx, bframe, depth, E, A, B, nums,
             anchor: bool = False) -> TV:
        """The dot loop of a ``plan``: an fp32 accumulator of the tile frame, BK steps of K per iteration."""
        b, ev = self.b, self.ev
        dts = [self.dtype_of_access(opp, x) for k, x in (A, B) if k == "acc"]
        low = [d for d in dts if d in ("bf16", "f16")]
        cast = low[0] if low and len(low) == len(dts) else None
        BK = min(64 if cast else 32, max(16, pow2(E)))
        if anchor and "BK" in ev.cfg:
            BK = min(ev.cfg["BK"], max(16, pow2(E)))
        acc = b.fresh("acc")
        # the weight-first form (a gemv config's SWAP): acc[n, m] = B A^T, transposed once after the K loop
        swap = bool(anchor and ev.cfg.get("SWAP") and ev.cfg.get("DOT") and len(bframe) == 2)
        aframe = tuple(reversed(bframe)) if swap else tuple(bframe)
        b.em.emit(f"{acc} = tl.zeros([{', '.join(str(b.aranges[a]) for a in aframe)}], tl.float32)", depth)
        split = anchor and ev.stage.split > 1  # this program computes one part of the tile's K (SplitK)
        lane_var = None if split else (self.contiguous_reduction_var(opp, A, rvars, ext)
                                       or self.contiguous_reduction_var(opp, B, rvars, ext))
        if lane_var is not None:
            BK = self.window_chunk(ext[lane_var], BK)
        segments = None if split or lane_var else self.k_segments(opp, A, rvars, E, BK)
        # B's block [K, n] instead of [n, K] transposed: its lanes then run along n (``strided_lanes``)
        b_kn = not swap and lane_var is None and segments is None and self.strided_lanes(opp, B, binding,
                                                                                         bframe[-1])
        r = b.new_axis("r", BK, before=bframe[-1] if b_kn else None)
        if lane_var is not None:
            self._window_major(opp, binding, rvars, ext, idx, bframe, A, B, cast, acc, r, BK, lane_var, depth)
        elif segments is None:
            loop, saved, inner, rl = ev.split_k.loop(E, BK, r, depth, anchor)
            operands, gathered = self._step(opp, binding, rvars, ext, idx, bframe, E, A, B, cast, acc, r, rl, inner,
                                            ev.split_k.masked(E, BK, anchor), swap=swap, b_kn=b_kn)
            if loop and not split:
                prefetch_prologue_loads(b.em.active[depth], b.em.active[inner], acc, operands, gathered)
            if loop:
                b.em.close(depth, saved)
        else:  # one loop per part of a concatenated row operand, each reading only its part
            # short parts are unrolled: MeshGraphNet's edge GEMM (3 parts of 2 chunks) 39.5 -> 34.2 us on the H100
            unroll = sum(-(-(hi - lo) // BK) for lo, hi in segments) <= SEGMENT_UNROLL_CHUNKS
            for lo, hi in segments:
                saved, inner, rl = ev.split_k.segment(lo, -(-hi // BK) * BK, BK, r, depth, unroll)
                self._step(opp, binding, rvars, ext, idx, bframe, E, A, B, cast, acc, r, rl, inner, hi % BK != 0,
                           swap=swap)
                b.em.close(depth, saved)
        out = b.tmp(f"tl.trans({acc})", tuple(bframe), depth) if swap else TV(acc, tuple(bframe), depth, "f")
        if split:
            out = ev.split_k.combine(out, "+=")
        scale = 1.0
        for f in nums:
            scale *= f.value
        if scale != 1.0:
            out = b.tmp(f"{out.code} * {lit(scale)}", out.frame, out.depth)
        return out

    STRIDED_LANES = 4
    """``strided_lanes``' largest element stride along the tile axis: a warp's 32 lanes then span at most 8 sectors
    of 32 bytes (bf16)."""

    def strided_lanes(self, opp, B, binding, n: str) -> bool:
        """Operand B (a dot's [n, K] side) is read from a row-major tensor at a constant stride of 2 ..
        ``STRIDED_LANES`` elements along tile axis ``n`` (a stride-2 convolution's pixels): its block is then
        loaded [K, n]. Triton's loads put the lanes along the dim it can prove contiguous, and along the last
        dim when it can prove none; a [n, K] block then spreads a warp's lanes over K, whose flat index is a
        gather (a 7 x 7 window over 3 channels: runs of 7 elements, then a jump of a row or a channel).
        ResNet's stem alone (``bench/kernels/stem_probe.py``, H100): 245-560 -> 109-200 us over its configs."""
        kind, x = B
        if kind != "acc" or x.tensor not in opp.inputs or not all(isinstance(ix, Affine) for ix in x.indices):
            return False
        t = self.stored_tensor(opp.inputs[x.tensor])
        if t is None or t.order is not None:
            return False
        coef = 0
        for ix, st in zip(x.indices, t.strides()):
            for w, k in ix.terms:
                lin = binding.get(w)
                if lin is None:
                    continue
                for a, c in lin.terms:
                    if n in a.axes:
                        if a.kind != "axis":
                            return False  # (a division or modulo of the axis: no constant stride)
                        coef += k * c * st
        return 2 <= coef <= self.STRIDED_LANES

    def stored_tensor(self, v):
        """The global tensor (``plan.Tensor``) that stage input ``v`` is, or None (a value computed in the
        stage)."""
        name = self.ev.stage.args.get(v) if isinstance(v.owner, Block) else None
        return self.ev.gen.plan.tensors.get(name) if name else None

    def contiguous_reduction_var(self, opp, A, rvars, ext) -> str | None:
        """The reduction variable along which operand A (either side of the dot: a convolution's tile may put
        the channels or the pixels first) is contiguous in memory, when A is read from a tensor
        stored in another order than row-major (``kitsune.codegen.layouts``: a channels-last convolution input)
        and looping over the other reduction variables outside it pays: the channels of ``X[n, c, oh + kh,
        ow + kw]`` (extent >= 16, every other reduction variable a multiple of 8 elements apart: 16-byte
        vectors stay aligned). None: the flat loop over all of them."""
        kind, x = A
        if kind != "acc" or len(rvars) < 2 or x.tensor not in opp.inputs:
            return None
        from kitsune.codegen.layouts import unary_elementwise_source

        t = self.stored_tensor(unary_elementwise_source(opp.inputs[x.tensor]))
        if t is None or t.order is None or not all(isinstance(ix, Affine) for ix in x.indices):
            return None
        coef = {u: sum(k * st for ix, st in zip(x.indices, t.strides()) for w, k in ix.terms if w == u)
                for u in rvars}
        unit = [u for u in rvars if coef[u] == 1 and ext[u] >= 16]
        if len(unit) != 1 or any(coef[u] % 8 for u in rvars if u != unit[0]):
            return None
        return unit[0]

    @staticmethod
    def window_chunk(n: int, BK: int) -> int:
        """A chunk of the contiguous reduction variable (extent ``n``): the largest power of two up to ``BK`` that
        divides ``n`` (no masked chunk), else ``BK`` capped at ``n``'s power of two."""
        c = min(BK, pow2(n))
        while c > 16 and n % c:
            c //= 2
        return c if n % c == 0 else min(BK, pow2(n))

    def _window_major(self, opp, binding, rvars, ext, idx, bframe, A, B, cast, acc, r, BK, lane_var, depth):
        """The K loop of a convolution over a channels-last input: one step per (window position, chunk of BK
        channels); the window position and the chunk's start are scalars of the step, the channels the lanes of
        ``r`` (the input's loads are per-pixel-masked vectors, the weights' a block of a packed row)."""
        b = self.b
        C = ext[lane_var]
        chunks = -(-C // BK)
        others = [u for u in rvars if u != lane_var]
        steps = chunks * math.prod(ext[u] for u in others)
        k = b.fresh("k")
        saved = b.em.open(f"for {k} in range(0, {steps}):", depth)
        step = b.sym(k, 0, steps - 1, depth + 1)
        outer = lfloordiv(step, chunks)
        red = {lane_var: ladd(lscale(lmod(step, chunks), BK), b.axis(r, BK - 1))}
        red.update(self.ev.decompose(outer, others, ext))
        kcond = (red[lane_var], "<", C) if C % BK else None
        self._step(opp, binding, rvars, ext, idx, bframe, C, A, B, cast, acc, r, None, depth + 1, kcond is not None,
                   red=red, kcond=kcond)
        b.em.close(depth, saved)

    @staticmethod
    def k_segments(opp, A, rvars, E: int, BK: int) -> list[tuple[int, int]] | None:
        """The K ranges of the parts of a row operand that is a concatenation along K computed in the stage
        (MeshGraphNet's ``cat(x[src], x[dst], e)``, a skip connection), when every part but the last starts and
        ends at a multiple of ``BK``: a loop per part then loads only that part (else every chunk evaluates all
        parts, masked); the last part's tail is masked as the reduction's end."""
        kind, x = A
        if kind != "acc" or x.tensor not in opp.inputs or len(rvars) != 1 or not x.indices:
            return None
        last = x.indices[-1]
        if not (isinstance(last, Affine) and last.terms == ((rvars[0], 1),) and not last.const):
            return None
        cat = opp.inputs[x.tensor].owner
        if not is_last_dim_concat(cat) or len(cat.operands) < 2 or tensor_shape(cat.results[0].type)[-1] != E:
            return None
        bounds, lo = [], 0
        for o in cat.operands:
            w = tensor_shape(o.type)[-1]
            if lo % BK or w <= 0:
                return None
            bounds.append((lo, lo + w))
            lo += w
        return bounds if lo == E else None

    def _step(self, opp, binding, rvars, ext, idx, bframe, E, A, B, cast, acc, r, rl, inner,
              need_mask: bool, red=None, kcond=None, swap: bool = False, b_kn: bool = False) -> None:
        """One K step of the dot loop (inside the loop's block): both operands' chunks, then the product. The
        reduction variables come from the flat index ``rl`` (``E`` in all), or are given (``red``, with the
        condition ``kcond`` of the chunk's lanes inside the reduction). ``swap``: the product B A^T into an
        accumulator of the transposed frame."""
        b, ev = self.b, self.ev
        *bt, m, n = bframe
        b2 = dict(binding)
        b2.update(red if red is not None else ev.decompose(rl, rvars, ext))
        via_tma: set[str] = set()
        gathered: set[str] = set()

        def operand(item, frame) -> str:
            kind, x = item
            if kind == "acc" and x.tensor in opp.inputs and cast:
                # a tensor-core operand straight from memory keeps its element type (no fp32 round trip);
                # a block of a row-major view loads through a tensor descriptor (TMA) where it qualifies
                v, ix = opp.inputs[x.tensor], ev.index_lins(opp, x, b2)
                tv = ev.tma.load(v, ix, frame, r, rl, E, need_mask, 2) if len(frame) == 2 else None
                if tv is not None:
                    via_tma.add(frame[0])
                else:
                    tv = ev.access(v, ix, 0.0, raw=True)
                    if ev.cfg.get("AHEAD") and self.gathers_along(v, ix, r):
                        gathered.add(tv.code)
            elif kind == "acc":
                tv = ev.read(opp, x, b2, 0.0)
            else:
                d, ix = x
                iv = ev.read(opp, ix.access, b2, 0.0)
                tv = ev.arith.binop("==", iv, b.lin_tv(idx[d]))
            code = b.place(tv, frame) if set(tv.frame) <= set(frame) and b.ordered(tv.frame, frame) else None
            if code is None:
                raise CodegenError(f"{fmt_loc(opp.op)}'{opp.op.name}': dot operand layout")
            if tv.const is not None or len(tv.frame) < len(frame):
                shp = ", ".join(str(b.aranges[a]) for a in frame)
                code = f"tl.broadcast_to({code}, [{shp}])"
            return code, tv

        ca, ta = operand(A, (*bt, m, r))
        cb, tb = operand(B, (*bt, r, n) if b_kn else (*bt, n, r))
        dt = TL[cast] if cast else "tl.float32"
        if need_mask and m not in via_tma:  # (a descriptor's bounds zero-fill past the reduction's end)
            mk = b.mask([kcond if kcond is not None else (rl, "<", E)])
            ca = f"tl.where({b.place(mk, (*bt, m, r)) if mk.frame else mk.code}, {ca}, 0.0)"
        # narrowed before a transpose: an operand computed in fp32 (llama_decode_b8's normalised rows) then goes
        # through shared memory at its own width, and one loaded narrow and widened folds back to the load
        ca = f"({ca}).to({dt})"
        cb = f"({cb}).to({dt})"
        if swap:  # B [n, r] first, A^T [r, m] second
            ca, cb = cb, f"tl.trans({ca})"
        elif not b_kn:  # (a [r, n] block goes in as it is)
            cb = f"tl.permute({cb}, (0, 2, 1))" if bt else f"tl.trans({cb})"
        prec = "" if cast else ', input_precision="ieee"' if not ev.gen.tf32 else ""
        if cast:
            b.em.emit(f"{acc} = _dot_lp({ca}, {cb}, {acc})", inner)
        else:
            b.em.emit(f"{acc} = tl.dot({ca}, {cb}, {acc}{prec})", inner)
        return {ta.code, tb.code}, gathered

    def gathers_along(self, v, ix, r: str) -> bool:
        """Stage input ``v``, row-major, is read at ``ix`` through divisions or moduli of the K axis ``r`` that
        leave runs of under 4 contiguous bytes (a convolution's window flattened into K over an NCHW input:
        ``c = k // 9, kh = k // 3 % 3, kw = k % 3``): its block is a gather of single elements, which Triton does
        not pipeline (``cp.async`` moves 4 bytes at least), so ``prefetch_prologue_loads`` loads it a step ahead
        in registers where the config asks (``ConvConfig.AHEAD``). (A modulus of at least the chunk, a reduction's tail wrapping, leaves whole runs.)"""
        t = self.stored_tensor(v)
        if t is None or t.order is not None:
            return False
        off = loffset(ix, t.strides())
        P = self.b.aranges[r]
        runs = [math.gcd(P, c) for a, _ in off.terms if a.kind in ("div", "mod") and r in a.axes
                for c in [self.period(a)] if c < P]
        return bool(runs) and min(runs) * ELEM_BYTES.get(t.dtype, 4) < 4

    @staticmethod
    def period(a) -> int:
        """Lanes over which a division or modulo atom of an axis runs on unbroken: ``x % c`` and ``x // c``
        change pattern every ``c`` lanes, ``(x // d) % c`` every ``d``."""
        inner = [d for d, _ in a.arg.terms if d.kind == "div"] if a.kind == "mod" and a.arg is not None else []
        return inner[0].c if len(inner) == 1 and len(a.arg.terms) == 1 else a.c


_LOAD = re.compile(r"(v\d+) = (tl\.load\(.*)$")
_ASSIGNED = re.compile(r"^(\w+) = ")
_DOT = re.compile(r"^(acc\d+) = (_dot_lp|tl\.dot)\(")
_IMPURE = re.compile(r"tl\.(load|store|atomic|dot)|_dot_lp|_index_check|_scatter|\(ctr|\berr\b")
_LOOP = re.compile(r"^for (k\d+) in range\((\d+), (\d+), (\d+)\):$")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def _lines(blk: Blk):
    for it in blk.items:
        if isinstance(it, Blk):
            yield from _lines(it)
        else:
            yield it


def prefetch_prologue_loads(outer: Blk, loop: Blk, acc: str, operands: set[str],
                            gathered: set[str] = frozenset()) -> None:
    """A K loop whose step computes a contraction of its own before the anchor's dot (a small contraction as the
    row operand's prologue, form-regions' ``SMALL_K``: DLRM's bottom layer 0 inside layer 1) loads that
    contraction's operands one step ahead, in registers: a load at the top of the step whose address depends on
    the loop counter and on values from before the loop only is issued for the next step (at the last step the
    last chunk again) and taken from the previous one. Triton pipelines only the anchor dot's own operands
    (cp.async; DLRM's layer-0 rows of 13 elements, 26 bytes, are not even 4-byte aligned), so otherwise each
    step waits an L2 round trip before its first dot: 7.6 -> 6.0 us alone on the H100
    (``bench/kernels/prologue_probe.py``, NOTES section 21). ``operands``: the anchor dot's operand values;
    ``gathered``: those of them that are single-element gathers (``DotTemplate.gathers_along``), moved too."""
    m = _LOOP.match(loop.header or "")
    nested = any(_DOT.match(ln) and _DOT.match(ln)[1] != acc for ln in _lines(loop))
    if m is None or not (nested or gathered):
        return
    k, lo, hi, step = m[1], int(m[2]), int(m[3]), int(m[4])
    assigned = [a[1] for ln in _lines(loop) if (a := _ASSIGNED.match(ln))]
    inside = set(assigned) - {k}
    once = {v for v in inside if assigned.count(v) == 1}
    step_only: dict[str, tuple[str, set[str]]] = {}  # pure values of the counter and of earlier values (masks)
    moved = []
    for it in loop.items:
        a = _ASSIGNED.match(it) if isinstance(it, str) else None
        if a is None:
            continue
        v, e = a[1], it[len(a[0]):]
        names = set(_NAME.findall(e))
        if names & (inside - set(step_only) - {v}):
            continue  # it needs a value this step computes
        ld = _LOAD.match(it)
        if ld is not None and v in once and (v not in operands or v in gathered):
            moved.append((it, v, e, names))
        elif ld is None and v in once and not _IMPURE.search(e):
            step_only[v] = (e, names)
    if not moved:
        return
    last = (-(-(hi - lo) // step) - 1) * step + lo
    at = outer.items.index(loop)
    first = {k: f"({lo})"} | {v: f"{v}_first" for v in step_only}
    nxt = {k: f"{k}_next"} | {v: f"{v}_next" for v in step_only}

    def at_step(e: str, names: dict[str, str]) -> str:
        return _NAME.sub(lambda x: names.get(x[0], x[0]), e)

    used = set().union(*(names for *_, names in moved))
    for v, (_, names) in reversed(step_only.items()):  # a helper the moved loads need, and the helpers it needs
        if v in used:
            used |= names
    helpers = [(v, e) for v, (e, _) in step_only.items() if v in used]  # (in order: a helper may use an earlier one)
    outer.items[at:at] = ([f"{v}_first = " + at_step(e, first) for v, e in helpers]
                          + [f"{v}_next = " + at_step(e, first) for _, v, e, _ in moved])
    head = [f"{v} = {v}_next" for _, v, _, _ in moved] + [f"{k}_next = tl.minimum({k} + {step}, {last})"]
    head += [f"{v}_next = " + at_step(e, nxt) for v, e in helpers]
    head += [f"{v}_next = " + at_step(e, nxt) for _, v, e, _ in moved]
    gone = {id(it) for it, *_ in moved}
    loop.items = head + [it for it in loop.items if id(it) not in gone]


__all__ = ["DotTemplate", "prefetch_prologue_loads"]
