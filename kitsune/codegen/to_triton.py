"""``-t triton``: a gpu_queue program -> one self-contained Python module of ``@triton.jit`` kernels.

How a stage becomes Triton
--------------------------
A stage's body computes whole tensors in value semantics; its programs compute
its output *tiles*. The generator never builds per-op loops: it asks "what is
value ``v`` at index ``I``?", where ``I`` is a tuple of symbolic index
expressions (``Lin``: affine sums of tile coordinates, ``tl.arange`` axes,
reduction-loop counters, floor-division / modulo terms and loaded index values).
The answer comes from the op table: each graph op's comprehension program
(``kitsune.semantics.optable``) is read statement by statement, so the same text
that drives the reference interpreter and the cost model drives the code:

* ``Y[...] = f(...)``: the left side is solved for its index variables
  (``j + 5`` at ``I`` gives ``j = I - 5`` and the condition ``0 <= j < ext``),
  the right side is evaluated with that binding; several statements writing one
  tensor (concat, slice_scatter, index_add) are folded with ``tl.where``.
* ``Y[...] op= f(...)`` with reduction variables: a loop over the flattened
  reduction space in power-of-two chunks, a new block axis per chunk, the body
  masked to the statement's neutral element outside the domain and reduced
  (``tl.sum`` / ``tl.max`` / ...). A product of two operands that split the
  two tile axes between them becomes ``tl.dot`` (bf16/fp16 operands, fp32
  accumulation): matmul, linear, scatter-add as a one-hot product, and a
  convolution as an implicit GEMM (``conv`` template: output channels by one
  lane axis of output pixels, several tile dims merged into it).
* A window reduction of a few steps (a pool's kh, kw) is unrolled: scalar
  offsets, one load of the tile's shape per step.
* Several trailing tile dims may share one lane axis (``_merged_run``), left
  unclamped: ``28 * (p // 28) + p % 28`` folds back to ``p`` (``_fold_radix``),
  so loads stay contiguous; padded lanes are masked.
* Out-of-range reads give the statement's neutral element (masked loads), which
  is what padding means in the notation. Index checks that interval arithmetic
  proves true are left out.
* ``graph.reshape`` re-linearises the index; splat constants are literals.

Every intermediate stays in registers: a value needed at the same index twice is
computed once (memoised per index), anything that does not depend on a loop
counter is hoisted out of the loop. Elementwise prologues and epilogues
therefore fuse into their contraction for free.

Queues
------
Tiles travel through ring buffers in global memory (see ``kitsune.codegen.plan``
for the counters and the epoch protocol). ``push``: wait until the slot is free
(acquire), store, ``tl.debug_barrier()``, ``tl.atomic_add(filled, 1,
sem="release", scope="gpu")``. ``pop``: ``tl.atomic_add(filled, 0,
sem="acquire", scope="gpu")`` spins until the tile is there, loads bypass L1
(``.cg``), and after the tile's work a release increment of ``freed``. With
``WATCHDOG > 0`` every spin gives up after that many tries and records the
queue in the error flag, which the launcher's ``check`` turns into an exception
naming the queue.

Index checks
------------
Every index loaded from a tensor (a gather's read, a scatter's target) is checked
against the dimension it indexes, in every build (``index_checks=False`` leaves
them out): an index outside sets the error flag to a code naming the op, its
source location and the dimension (``INDEX_CHECKS``), while the access itself
stays masked (a read gives 0, a write is dropped). ``error(code)`` decodes the
flag, ``check(state)`` reads it (synchronising) and raises ``KitsuneIndexError``;
``kitsune.runtime`` reads it without synchronising (see ``Program``).
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from typing import IO, Sequence

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.ir import Block, SSAValue

from kitsune.codegen.plan import CodegenError, Kernel, Plan, Queue, Stage, Tensor, build_plan, dtype_key, ident, is_float
from kitsune.dialects.graph import GraphOp, fmt_loc
from kitsune.dialects.regions import tensor_shape
from kitsune.semantics import optable
from kitsune.semantics.comprehension import Access, Affine, BinOp, Call, Indirect, IVar, Neg, Num, parse

TL = {"f32": "tl.float32", "bf16": "tl.bfloat16", "f16": "tl.float16", "f64": "tl.float64", "i64": "tl.int64",
      "i32": "tl.int32", "i16": "tl.int16", "i8": "tl.int8", "i1": "tl.int1"}
SIG = {"f32": "*fp32", "bf16": "*bf16", "f16": "*fp16", "f64": "*fp64", "i64": "*i64", "i32": "*i32",
       "i16": "*i16", "i8": "*i8", "i1": "*i1"}
TORCH = {"f32": "torch.float32", "bf16": "torch.bfloat16", "f16": "torch.float16", "f64": "torch.float64",
         "i64": "torch.int64", "i32": "torch.int32", "i16": "torch.int16", "i8": "torch.int8", "i1": "torch.bool"}
NEUTRAL = {"=": 0.0, "+=": 0.0, "*=": 1.0, "max=": -math.inf, "min=": math.inf}
NAN = "propagate_nan=tl.PropagateNan.ALL"  # max / min: a NaN wins, as in torch

INDEX_CODE = 1 << 20  # err codes below are queue watchdogs, from here on failed index checks
BLOCK_LIMIT = 8192  # elements of a generic reduction block (tile axes x chunk)


def combine_text(op: str, x: str, y: str) -> str:
    """``x op y`` for an accumulating statement op (max / min let a NaN win, as torch does)."""
    return {"+=": f"{x} + {y}", "*=": f"{x} * {y}", "max=": f"tl.maximum({x}, {y}, {NAN})",
            "min=": f"tl.minimum({x}, {y}, {NAN})"}[op]


def reduce_text(op: str, x: str, ax: int) -> str:
    """``x`` reduced along axis ``ax`` with a statement op."""
    return {"+=": f"tl.sum({x}, axis={ax})", "max=": f"tl.reduce({x}, {ax}, _max_combine)",
            "min=": f"tl.reduce({x}, {ax}, _min_combine)", "*=": f"tl.reduce({x}, {ax}, _mul_combine)"}[op]


def pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


def pow2_floor(n: int) -> int:
    return 1 << (max(1, int(n)).bit_length() - 1)


def lit(x: float) -> str:
    if x == math.inf:
        return 'float("inf")'
    if x == -math.inf:
        return 'float("-inf")'
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return f"{x:.1f}"
    return repr(float(x))


# ------------------------------------------------------------------ index expressions


@dataclass(frozen=True)
class Atom:
    """A non-linear piece of an index: an axis, a scalar, a floor division, a modulo or a loaded value."""

    kind: str  # axis | sym | div | mod | val
    key: str
    lo: int | None
    hi: int | None
    axes: frozenset
    depth: int
    arg: "Lin | None" = None
    c: int = 0


@dataclass(frozen=True)
class Lin:
    terms: tuple  # ((Atom, coeff), ...) sorted by key
    const: int = 0

    def key(self) -> str:
        return "+".join(f"{c}*{a.key}" for a, c in self.terms) + f"+{self.const}"


def lconst(c: int) -> Lin:
    return Lin((), int(c))


def latom(a: Atom, c: int = 1) -> Lin:
    return Lin(((a, c),), 0)


def ladd(*xs: Lin) -> Lin:
    acc: dict[Atom, int] = {}
    const = 0
    for x in xs:
        const += x.const
        for a, c in x.terms:
            acc[a] = acc.get(a, 0) + c
    if any(a.kind == "mod" for a in acc):
        const += _fold_radix(acc)
    return Lin(tuple(sorted(((a, c) for a, c in acc.items() if c), key=lambda t: t[0].key)), const)


def _fold_radix(acc: dict[Atom, int]) -> int:
    """Recombine the digits of a mixed-radix decomposition in place (returns the constant it adds):
    ``k*(x % s) + k*s*(x // s)`` is ``k*x`` and ``k*(x % s) + k*s*((x // s) % e)`` is ``k*(x % (s*e))``.
    An address ``9*c + 3*kh + kw`` of a reduction index split into c, kh, kw folds back to the contiguous
    index (a weight tile of a convolution; the flattened pixel axis ``28*(p // 28) + p % 28`` likewise), so
    that Triton sees contiguous lanes instead of gathers."""
    const = 0
    changed = True
    while changed:
        changed = False
        for a, ca in list(acc.items()):
            if a.kind != "mod" or not ca or a.arg is None:
                continue
            s = a.c
            for b, cb in list(acc.items()):
                if b is a or cb != ca * s:
                    continue
                new = None
                if b.kind == "div" and b.c == s and _split(b.arg, s)[1].key() == a.arg.key():
                    new = lscale(b.arg, ca)
                elif (b.kind == "mod" and b.arg is not None and b.arg.const == 0 and len(b.arg.terms) == 1
                      and b.arg.terms[0][1] == 1):
                    d = b.arg.terms[0][0]
                    if d.kind == "div" and d.c == s and _split(d.arg, s)[1].key() == a.arg.key():
                        new = lscale(lmod(d.arg, s * b.c), ca)
                if new is None:
                    continue
                acc[a] -= ca
                acc[b] -= cb
                for t, k in new.terms:
                    acc[t] = acc.get(t, 0) + k
                const += new.const
                for t in [t for t, k in acc.items() if not k]:
                    del acc[t]
                changed = True
                break
            if changed:
                break
    return const


def lscale(x: Lin, k: int) -> Lin:
    if k == 0:
        return lconst(0)
    return Lin(tuple((a, c * k) for a, c in x.terms), x.const * k)


def lrange(x: Lin) -> tuple[int | None, int | None]:
    lo = hi = x.const
    for a, c in x.terms:
        alo, ahi = (a.lo, a.hi) if c > 0 else (a.hi, a.lo)
        lo = None if lo is None or alo is None else lo + c * alo
        hi = None if hi is None or ahi is None else hi + c * ahi
    return lo, hi


def laxes(x: Lin) -> frozenset:
    out: frozenset = frozenset()
    for a, _ in x.terms:
        out |= a.axes
    return out


def ldepth(x: Lin) -> int:
    return max([a.depth for a, _ in x.terms], default=0)


def _split(x: Lin, c: int) -> tuple[Lin, Lin]:
    """x = c * q + r with q from the terms divisible by c."""
    q = Lin(tuple((a, k // c) for a, k in x.terms if k % c == 0), x.const // c)
    r = Lin(tuple((a, k) for a, k in x.terms if k % c != 0), x.const % c)
    return q, r


def lfloordiv(x: Lin, c: int) -> Lin:
    if c == 1:
        return x
    q, r = _split(x, c)
    lo, hi = lrange(r)
    if lo is not None and hi is not None and 0 <= lo and hi < c:
        return q
    lo, hi = lrange(x)
    a = Atom("div", f"({x.key()})//{c}", None if lo is None else lo // c, None if hi is None else hi // c,
             laxes(x), ldepth(x), x, c)
    return latom(a)


def lmod(x: Lin, c: int) -> Lin:
    if c == 1:
        return lconst(0)
    _, r = _split(x, c)
    lo, hi = lrange(r)
    if lo is not None and hi is not None and 0 <= lo and hi < c:
        return r
    nonneg = lo is not None and lo >= 0
    a = Atom("mod", f"({r.key()})%{c}", 0 if nonneg else -(c - 1), c - 1, laxes(r), ldepth(r), r, c)
    return latom(a)


# ------------------------------------------------------------------ tile values


@dataclass
class TV:
    """A value in registers: ``code`` has exactly the shape of ``frame`` (the axes it varies along)."""

    code: str
    frame: tuple
    depth: int
    kind: str = "f"  # f | i | b
    const: float | None = None


class Blk:
    def __init__(self, header: str | None = None):
        self.header = header
        self.items: list = []
        self.open: Blk | None = None

    def lines(self, indent: int) -> list[str]:
        out = []
        pad = "    " * indent
        if self.header is not None:
            out.append(pad + self.header)
            inner = indent + 1
        else:
            inner = indent
        if self.header is not None and not self.items:
            out.append("    " * inner + "pass")
        for it in self.items:
            if isinstance(it, Blk):
                out += it.lines(inner)
            else:
                out.append("    " * inner + it)
        return out


class Emitter:
    """Code in nested blocks; a line goes to the block of its depth, before any loop still open there."""

    def __init__(self):
        self.root = Blk()
        self.active: list[Blk] = [self.root]

    def emit(self, item, depth: int) -> None:
        b = self.active[depth]
        if b.open is not None:
            b.items.insert(next(i for i, x in enumerate(b.items) if x is b.open), item)
        else:
            b.items.append(item)

    def open(self, header: str, depth: int):
        nb = Blk(header)
        self.emit(nb, depth)
        b = self.active[depth]
        saved = (b.open, self.active[depth + 1:])
        b.open = nb
        self.active = self.active[:depth + 1] + [nb]
        return saved

    def close(self, depth: int, saved) -> None:
        b = self.active[depth]
        b.open = saved[0]
        self.active = self.active[:depth + 1] + list(saved[1])


# ------------------------------------------------------------------ op programs


class OpProgram:
    def __init__(self, op: GraphOp):
        od = op.OPDEF
        shapes = [tensor_shape(o.type) for o in op.operands]
        try:
            inst, bound = optable.instantiate(od, shapes, op.attrs())
        except optable.OpError as e:  # verified IR: cannot happen
            raise CodegenError(f"{fmt_loc(op)}'{op.name}': {e}") from None
        self.op = op
        self.inst = inst
        self.bound = bound
        self.prog = parse(inst.text, inst.params)
        self.inputs = {n: op.operands[p] for n, p in inst.inputs.items() if p < len(op.operands)}
        self.results = {r: i for i, r in enumerate(inst.results)}


# ------------------------------------------------------------------ one stage


class StageGen:
    def __init__(self, gen: "TritonGen", kernel: Kernel, stage: Stage):
        self.gen = gen
        self.kernel = kernel
        self.stage = stage
        self.em = Emitter()
        self.n = 0
        self.memo: dict = {}
        self.progs: dict[int, OpProgram] = {}
        self.aranges: dict[str, int] = {}
        self.order: list[str] = []  # axis order (frames are ordered subsets of it)
        self.pop_of: dict[SSAValue, Queue] = {p.results[0]: q for p, q in stage.pops}
        self.clamp: dict[str, int] = {}  # tile axis -> the tile's extent (lanes past it are padding)
        self.unclamped: set[str] = set()  # padded axes whose lanes run on (masked) instead of repeating the last
        self.masked: dict[str, tuple] = {}  # value -> (mask, neutral) of the tl.where that made it
        self.extra_tensors: set[str] = set()  # non-splat constants the stage reads
        self.template = stage.template
        self.cfg = stage.config
        self.anchor = self._anchor()  # (id(op), statement) the template's loop computes, or None
        self.split_open = None  # the `if last:` block of a split reduction, once its partials are combined
        self.tid = "t"  # the tile's id for counters (grouped orders only where no queue reads tile ids)

    def _anchor(self):
        if self.template not in ("gemm", "gemv"):
            return None
        from kitsune.schedule.roles import roles_of
        from kitsune.schedule.select import anchor_of

        op, _ = anchor_of(self.stage.op)
        if op is not None and op.OPDEF.category != "contraction" and self.stage.split == 1:
            from kitsune.schedule.select import sole_contraction

            op = sole_contraction(self.stage.op)  # a gemv read through slices: its contraction's loop
        r = roles_of(op) if op is not None else None
        return (id(op), r.stmt) if r is not None else None

    # ---- helpers
    def fresh(self, p: str = "v") -> str:
        self.n += 1
        return f"{p}{self.n}"

    def new_axis(self, prefix: str, size: int) -> str:
        name = self.fresh(prefix)
        self.aranges[name] = size
        self.order.append(name)
        return name

    def frame_of(self, axes) -> tuple:
        axes = set(axes)
        return tuple(a for a in self.order if a in axes)

    def place(self, tv: TV, frame: tuple) -> str:
        if tv.const is not None:
            return lit(tv.const) if tv.kind == "f" else str(int(tv.const))
        if tv.frame == frame or not tv.frame:
            return tv.code
        pos = [frame.index(a) for a in tv.frame]
        assert pos == sorted(pos), (tv.frame, frame)
        return tv.code + "[" + ", ".join(":" if a in tv.frame else "None" for a in frame) + "]"

    def tmp(self, code: str, frame: tuple, depth: int, kind: str = "f") -> TV:
        name = self.fresh()
        self.em.emit(f"{name} = {code}", depth)
        return TV(name, frame, depth, kind)

    def render(self, x: Lin, frame: tuple) -> str:
        parts = []
        for a, c in x.terms:
            s = self.render_atom(a, frame)
            parts.append(s if c == 1 else f"{c} * {s}")
        if x.const or not parts:
            parts.append(str(x.const))
        s = " + ".join(parts).replace("+ -", "- ")
        return s if len(parts) == 1 else f"({s})"

    def render_atom(self, a: Atom, frame: tuple) -> str:
        if a.kind == "axis":
            if frame == (a.key,):
                return a.key
            return a.key + "[" + ", ".join(":" if f == a.key else "None" for f in frame) + "]"
        if a.kind == "sym":
            return a.key
        if a.kind == "div":
            return f"({self.render(a.arg, frame)} // {a.c})"
        if a.kind == "mod":
            return f"({self.render(a.arg, frame)} % {a.c})"
        return self.place(a.arg_tv, frame)  # type: ignore[attr-defined]

    def val_atom(self, tv: TV) -> Lin:
        a = Atom("val", tv.code, None, None, frozenset(tv.frame), tv.depth)
        object.__setattr__(a, "arg_tv", tv)
        return latom(a)

    def sym(self, name: str, lo: int, hi: int, depth: int) -> Lin:
        return latom(Atom("sym", name, lo, hi, frozenset(), depth))

    def axis(self, name: str, hi: int) -> Lin:
        return latom(Atom("axis", name, 0, hi, frozenset([name]), 0))

    def conds(self, idx: Sequence[Lin], shape: Sequence[int]) -> list[tuple[Lin, str, int]]:
        out = []
        for x, d in zip(idx, shape):
            lo, hi = lrange(x)
            if lo is None or lo < 0:
                out.append((x, ">=", 0))
            if hi is None or hi >= d:
                out.append((x, "<", d))
        return out

    def mask(self, cs: list[tuple[Lin, str, int]]) -> TV | None:
        if not cs:
            return None
        axes = frozenset().union(*(laxes(x) for x, _, _ in cs))
        frame = self.frame_of(axes)
        depth = max(ldepth(x) for x, _, _ in cs)
        key = ("mask", tuple((x.key(), o, c) for x, o, c in cs))
        if key in self.memo:
            return self.memo[key]
        code = " & ".join(f"({self.render(x, frame)} {o} {c})" for x, o, c in cs)
        tv = self.tmp(code, frame, depth, "b")
        self.memo[key] = tv
        return tv

    def union(self, *tvs: TV) -> tuple:
        axes = set()
        for t in tvs:
            axes |= set(t.frame)
        return self.frame_of(axes)

    def where(self, m: TV | None, a: TV, b: TV | float) -> TV:
        if m is None:
            return a
        if not isinstance(b, TV):
            b = TV("", (), 0, "f", float(b))
        key = (m.code, b.code if b.const is None else b.const)
        if self.masked.get(a.code) == key:  # where(m, where(m, x, n), n) is where(m, x, n)
            return a
        f = self.union(m, a, b)
        tv = self.tmp(f"tl.where({self.place(m, f)}, {self.place(a, f)}, {self.place(b, f)})", f,
                      max(m.depth, a.depth, b.depth), a.kind if a.kind == b.kind else "f")
        self.masked[tv.code] = key
        return tv

    # ---- values
    def access(self, v: SSAValue, idx: tuple[Lin, ...], neutral: float, raw: bool = False) -> TV:
        """v at idx; positions outside v read ``neutral``. ``raw``: a load from memory keeps its element type
        (a tensor-core operand), instead of widening to fp32."""
        shape = tensor_shape(v.type)
        cs = self.conds(idx, shape)
        raw = raw and self._is_direct(v)
        key = ("acc", id(v), tuple(x.key() for x in idx), neutral if cs else None, raw)
        if key in self.memo:
            return self.memo[key]
        if isinstance(v.owner, Block) and v in self.stage.args:
            tv = self.load_global(self.stage.args[v], idx, cs, neutral, raw)
        elif v in self.pop_of:
            tv = self.load_queue(self.pop_of[v], idx, cs, neutral, raw)
        else:
            tv = self.value_at(v, idx)
            if cs:
                tv = self.where(self.mask(cs), tv, neutral)
        self.memo[key] = tv
        return tv

    def strides(self, shape: Sequence[int]) -> list[int]:
        out, s = [], 1
        for d in reversed(shape):
            out.append(s)
            s *= d
        return out[::-1]

    def _load(self, ptr: str, off: Lin, cs, neutral: float, dt: str, extra: str = "", min_depth: int = 0,
              raw: bool = False) -> TV:
        m = self.mask(cs)
        lanes = sorted(a for a in laxes(off) if a in self.unclamped)
        if lanes:  # an unclamped lane axis: its index range is the tile's, its padded lanes read nothing
            lm = TV(" & ".join(f"({self._raw(a, self.frame_of(lanes))} < {self.clamp[a]})" for a in lanes),
                    self.frame_of(lanes), 0, "b")
            m = self._mask_mixed([x for x in (m, lm) if x is not None])
        axes = laxes(off) | (frozenset(m.frame) if m else frozenset())
        frame = self.frame_of(axes)
        depth = max(ldepth(off), m.depth if m else 0, min_depth)
        kind = "f" if is_float(dt) else ("b" if dt == "i1" else "i")
        args = f"{ptr} + {self.render(off, frame)}"
        if m is not None:
            other = lit(neutral) if kind == "f" else ("0" if kind == "i" else "False")
            args += f", mask={self.place(m, frame)}, other={other}"
        code = f"tl.load({args}{extra})"
        if kind == "f" and dt != "f32" and not raw:
            code += ".to(tl.float32)"
        return self.tmp(code, frame, depth, kind)

    def load_global(self, name: str, idx, cs, neutral, raw: bool = False) -> TV:
        t = self.gen.plan.tensors[name]
        off = ladd(*(lscale(x, s) for x, s in zip(idx, self.strides(t.shape))))
        return self._load(name, off, cs, neutral, t.dtype, raw=raw)

    def load_queue(self, q: Queue, idx, cs, neutral, raw: bool = False) -> TV:
        tc = [lfloordiv(x, t) for x, t in zip(idx, q.tile)]
        off = [lmod(x, t) for x, t in zip(idx, q.tile)]
        j = ladd(*(lscale(c, s) for c, s in zip(tc, self.strides(q.grid))))
        slot = lmod(j, q.capacity)
        flat = ladd(lscale(slot, q.tile_elems), *(lscale(o, s) for o, s in zip(off, self.strides(q.tile))))
        # queue data is read only after the tile's waits: never hoist above the tile loop
        return self._load(q.storage, flat, cs, neutral, q.dtype, ', cache_modifier=".cg"', min_depth=1, raw=raw)

    def value_at(self, v: SSAValue, idx: tuple[Lin, ...]) -> TV:
        key = ("val", id(v), tuple(x.key() for x in idx))
        if key in self.memo:
            return self.memo[key]
        op = v.owner
        if not isinstance(op, GraphOp):
            raise CodegenError(f"{fmt_loc(op)}'{getattr(op, 'name', op)}' cannot be generated inside a stage")
        name = op.name.split(".", 1)[1]
        if name == "reshape":
            src = op.operands[0]
            lin = ladd(*(lscale(x, s) for x, s in zip(idx, self.strides(tensor_shape(v.type)))))
            sshape = tensor_shape(src.type)
            sidx = tuple(lmod(lfloordiv(lin, s), d) for s, d in zip(self.strides(sshape), sshape))
            tv = self.value_at(src, sidx) if not (isinstance(src.owner, Block) or src in self.pop_of) \
                else self.access(src, sidx, 0.0)
        elif name == "constant":
            tv = self.constant(op, v, idx)
        else:
            opp = self.progs.get(id(op))
            if opp is None:
                opp = self.progs[id(op)] = OpProgram(op)
            tv = self.tensor(opp, opp.inst.results[v.index], idx)
            rdt = dtype_key(v.type.get_element_type())
            if rdt.startswith("i") and tv.kind == "f" and rdt != "i1":
                tv = self.tmp(f"{self.place(tv, tv.frame)}.to({TL[rdt]})", tv.frame, tv.depth, "i")
            elif name == "cast" and rdt in ("bf16", "f16") and tv.const is None:
                tv = self.tmp(f"{tv.code}.to({TL[rdt]}).to(tl.float32)", tv.frame, tv.depth, "f")
        self.memo[key] = tv
        return tv

    def constant(self, op, v: SSAValue, idx) -> TV:
        attr = op.attributes.get("value") or op.properties.get("value")
        if not isinstance(attr, DenseIntOrFPElementsAttr):
            raise CodegenError(f"{fmt_loc(op)}'graph.constant' without a dense value")
        from kitsune.interpreter import constant_value

        arr = constant_value(attr)
        flat = arr.reshape(-1)
        kind = "f" if arr.dtype.kind == "f" else ("b" if arr.dtype.kind == "b" else "i")
        if flat.size == 0 or np.all(flat == flat[0]):
            val = float(flat[0]) if flat.size else 0.0
            return TV("", (), 0, kind, val)
        name = self.gen.add_constant(arr, dtype_key(v.type.get_element_type()))
        self.extra_tensors.add(name)
        return self.load_global(name, idx, [], 0.0)

    # ---- comprehension programs
    def tensor(self, opp: OpProgram, T: str, idx: tuple[Lin, ...]) -> TV:
        key = ("t", id(opp.op), T, tuple(x.key() for x in idx))
        if key in self.memo:
            return self.memo[key]
        state: TV | None = None
        for i, s in enumerate(opp.prog.stmts):
            if s.lhs.tensor != T:
                continue
            ext = opp.bound.extents[i]
            binding, cs, scatter = self.invert(opp, s, idx, ext)
            neutral = NEUTRAL[s.op]
            rhs_vars = [v for v in s.all_vars if v not in binding]
            if s.op == "=":
                if rhs_vars or scatter:
                    raise CodegenError(f"{fmt_loc(opp.op)}'{opp.op.name}': statement '{s.lhs} = ...' assigns "
                                       f"through an index Kitsune cannot invert; no code generation for it")
                val = self.expr(opp, s.rhs, binding, neutral)
                m = self.mask(cs)
                state = self.where(m, val, state if state is not None else 0.0) if m else val
                continue
            val = self.reduce(opp, s, binding, rhs_vars, ext, scatter, idx,
                              anchor=self.anchor == (id(opp.op), i))
            if state is None:
                m = self.mask(cs)
                state = self.where(m, val, neutral) if m else val
            else:
                comb = self.combine(s.op, state, val)
                m = self.mask(cs)
                state = self.where(m, comb, state) if m else comb
        if state is None:
            raise CodegenError(f"{fmt_loc(opp.op)}'{opp.op.name}': nothing defines '{T}'")
        self.memo[key] = state
        return state

    def combine(self, op: str, a: TV, b: TV) -> TV:
        f = self.union(a, b)
        x, y = self.place(a, f), self.place(b, f)
        return self.tmp(combine_text(op, x, y), f, max(a.depth, b.depth))

    def invert(self, opp: OpProgram, s, idx, ext):
        binding: dict[str, Lin] = {}
        cs: list = []
        scatter: list[tuple[int, Indirect]] = []
        for d, ix in enumerate(s.lhs.indices):
            x = idx[d]
            if isinstance(ix, Indirect):
                scatter.append((d, ix))
                continue
            unit = [v for v, _ in ix.terms if ext.get(v) == 1]
            if unit:  # a variable of extent 1 is 0: h*G + g with G = 1 is h + 0
                for v in unit:
                    if v not in binding:
                        binding[v] = lconst(0)
                ix = Affine(tuple(t for t in ix.terms if t[0] not in unit), ix.const)
            if not ix.terms:
                lo, hi = lrange(x)
                if not (lo == hi == ix.const):
                    cs += [(x, ">=", ix.const), (x, "<", ix.const + 1)]
                continue
            if len(ix.terms) > 1 and self._mixed_radix(ix, ext):
                # h*G + g with g < G: a mixed-radix number; its digits are the variables
                y = ladd(x, lconst(-ix.const))
                terms = sorted(ix.terms, key=lambda t: t[1])
                for n_, (v, c) in enumerate(terms):
                    dv = lfloordiv(y, c)
                    if n_ < len(terms) - 1:
                        dv = lmod(dv, ext[v])
                    if v in binding:
                        diff = ladd(dv, lscale(binding[v], -1))
                        cs += [(diff, ">=", 0), (diff, "<", 1)]
                        continue
                    binding[v] = dv
                    lo, hi = lrange(dv)
                    if lo is None or lo < 0:
                        cs.append((dv, ">=", 0))
                    if hi is None or hi >= ext[v]:
                        cs.append((dv, "<", ext[v]))
                continue
            if len(ix.terms) > 1:
                raise CodegenError(f"{fmt_loc(opp.op)}'{opp.op.name}': the left side '{s.lhs}' has an index with "
                                   f"several variables; no code generation for it")
            (v, a), = ix.terms
            y = ladd(x, lconst(-ix.const))
            if a != 1:
                if a < 0:
                    raise CodegenError(f"{fmt_loc(opp.op)}'{opp.op.name}': negative stride on the left side")
                m = lmod(y, a)
                if m.terms or m.const:
                    cs += [(m, ">=", 0), (m, "<", 1)]
                y = lfloordiv(y, a)
            if v in binding:
                diff = ladd(y, lscale(binding[v], -1))
                cs += [(diff, ">=", 0), (diff, "<", 1)]
                continue
            binding[v] = y
            n = ext[v]
            lo, hi = lrange(y)
            if lo is None or lo < 0:
                cs.append((y, ">=", 0))
            if hi is None or hi >= n:
                cs.append((y, "<", n))
        return binding, cs, scatter

    @staticmethod
    def _mixed_radix(ix: Affine, ext) -> bool:
        terms = sorted(ix.terms, key=lambda t: t[1])
        if terms[0][1] != 1:
            return False
        for (v, c), (_, c2) in zip(terms, terms[1:]):
            if c * ext[v] != c2:
                return False
        return all(c > 0 for _, c in terms)

    def index_lins(self, opp, acc: Access, binding) -> tuple[Lin, ...]:
        out = []
        for ix in acc.indices:
            if isinstance(ix, Indirect):
                tv = self.read(opp, ix.access, binding, 0.0)
                if tv.kind == "f":
                    tv = self.tmp(f"{self.place(tv, tv.frame)}.to(tl.int64)", tv.frame, tv.depth, "i")
                if tv.const is None:  # an index outside its dim sets the error flag (the read is masked)
                    n = self.index_size(opp, acc, len(out))
                    if n is not None:
                        self.gen.emit_index_check(self, opp.op, acc, len(out), n, tv, tv.depth)
                out.append(self.val_atom(tv) if tv.const is None else lconst(int(tv.const)))
            else:
                out.append(ladd(lconst(ix.const), *(lscale(binding[v], c) for v, c in ix.terms)))
        return tuple(out)

    def index_size(self, opp: OpProgram, acc: Access, d: int) -> int | None:
        shape = tensor_shape(opp.inputs[acc.tensor].type) if acc.tensor in opp.inputs else opp.bound.shapes.get(acc.tensor)
        return shape[d] if shape is not None and d < len(shape) and shape[d] >= 0 else None

    def read(self, opp: OpProgram, acc: Access, binding, neutral: float) -> TV:
        idx = self.index_lins(opp, acc, binding)
        if acc.tensor in opp.inputs:
            return self.access(opp.inputs[acc.tensor], idx, neutral)
        shape = opp.bound.shapes[acc.tensor]
        tv = self.tensor(opp, acc.tensor, idx)
        cs = self.conds(idx, shape)
        return self.where(self.mask(cs), tv, neutral) if cs else tv

    def expr(self, opp, e, binding, neutral) -> TV:
        match e:
            case Access():
                return self.read(opp, e, binding, neutral)
            case Num(value=v):
                return TV("", (), 0, "f", float(v))
            case Neg(arg=a):
                x = self.expr(opp, a, binding, neutral)
                if x.const is not None:
                    return TV("", (), 0, x.kind, -x.const)
                return self.tmp(f"-{self.place(x, x.frame)}", x.frame, x.depth, x.kind)
            case BinOp(op=op, lhs=l, rhs=r):
                a, b = self.expr(opp, l, binding, neutral), self.expr(opp, r, binding, neutral)
                return self.binop(op, a, b)
            case Call(fn=fn, args=args):
                vals = [self.expr(opp, x, binding, neutral) for x in args]
                return self.call(fn, vals)
            case IVar(name=v):  # an index variable's value
                return self._lin_tv(binding[v])
        raise CodegenError(f"cannot generate {e}")

    def binop(self, op: str, a: TV, b: TV) -> TV:
        if a.const is not None and b.const is not None and op in "+-*/":
            try:
                v = {"+": a.const + b.const, "-": a.const - b.const, "*": a.const * b.const,
                     "/": a.const / b.const}[op]
                return TV("", (), 0, "f", v)
            except ZeroDivisionError:
                pass
        if op == "**":
            if b.const is not None and float(b.const).is_integer() and 0 <= b.const <= 4:
                n = int(b.const)
                if n == 0:
                    return TV("", (), 0, "f", 1.0)
                x = self.place(a, a.frame)
                return self.tmp(" * ".join([x] * n), a.frame, a.depth)
            if b.const == 0.5:
                return self.call("sqrt", [a])
            f = self.union(a, b)
            return self.tmp(f"tl.exp(tl.log({self.place(a, f)}) * {self.place(b, f)})", f, max(a.depth, b.depth))
        if op == "*" and (a.const == 1.0 or b.const == 1.0):
            return b if a.const == 1.0 else a
        if op in "+-" and b.const == 0.0 and len(op) == 1:
            return a
        f = self.union(a, b)
        x, y = self.place(a, f), self.place(b, f)
        kind = "b" if op in ("==", "!=", "<", "<=", ">", ">=") else ("i" if a.kind == b.kind == "i" and op != "/" else "f")
        if op == "/" and a.kind == "i":
            x = f"{x}.to(tl.float32)"
        return self.tmp(f"{x} {op} {y}", f, max(a.depth, b.depth), kind)

    def call(self, fn: str, vals: list[TV]) -> TV:
        f = self.union(*vals)
        depth = max(v.depth for v in vals)
        xs = [self.place(v, f) for v in vals]
        if fn in ("exp", "log", "sqrt", "rsqrt", "erf", "sigmoid", "tanh", "sin", "cos", "trunc", "floor"):
            x = xs[0] if vals[0].kind == "f" else f"{xs[0]}.to(tl.float32)"
            code = {"exp": f"tl.exp({x})", "log": f"tl.log({x})", "sqrt": f"tl.sqrt({x})",
                    "rsqrt": f"tl.rsqrt({x})", "erf": f"tl.erf({x})", "sigmoid": f"tl.sigmoid({x})",
                    "tanh": f"(2.0 * tl.sigmoid(2.0 * {x}) - 1.0)", "sin": f"tl.sin({x})", "cos": f"tl.cos({x})",
                    "trunc": f"tl.where({x} < 0, tl.ceil({x}), tl.floor({x}))", "floor": f"tl.floor({x})"}[fn]
            if vals[0].const is not None:
                c = float(vals[0].const)
                import math as _m
                fold = {"exp": _m.exp, "log": _m.log, "sqrt": _m.sqrt, "rsqrt": lambda z: 1 / _m.sqrt(z),
                        "erf": _m.erf, "sigmoid": lambda z: 1 / (1 + _m.exp(-z)), "tanh": _m.tanh,
                        "sin": _m.sin, "cos": _m.cos, "trunc": _m.trunc, "floor": _m.floor}
                try:
                    return TV("", (), 0, "f", fold[fn](c))
                except (ValueError, ZeroDivisionError, OverflowError):
                    pass
            return self.tmp(code, f, depth)
        if fn == "abs":
            return self.tmp(f"tl.abs({xs[0]})", f, depth, vals[0].kind)
        if fn in ("max", "min"):
            if all(v.const is not None for v in vals):
                return TV("", (), 0, "f", (max if fn == "max" else min)(vals[0].const, vals[1].const))
            kind = vals[0].kind if vals[0].kind == vals[1].kind else "f"
            nan = f", {NAN}" if kind == "f" else ""  # NaN wins, as in torch
            return self.tmp(f"tl.{'maximum' if fn == 'max' else 'minimum'}({xs[0]}, {xs[1]}{nan})", f, depth, kind)
        if fn == "select":
            c = xs[0] if vals[0].kind == "b" else f"({xs[0]} != 0)"
            kind = vals[1].kind if vals[1].kind == vals[2].kind else "f"
            return self.tmp(f"tl.where({c}, {xs[1]}, {xs[2]})", f, depth, kind)
        raise CodegenError(f"no Triton code for the function {fn}")

    # ---- reductions
    def _factors(self, e):
        match e:
            case BinOp(op="*", lhs=l, rhs=r):
                fl, fr = self._factors(l), self._factors(r)
                return None if fl is None or fr is None else fl + fr
            case Access() | Num():
                return [e]
        return None

    def _dtype_of_access(self, opp, acc: Access) -> str:
        if acc.tensor in opp.inputs:
            return dtype_key(opp.inputs[acc.tensor].type.get_element_type())
        return "f32"

    def reduce(self, opp, s, binding, rvars, ext, scatter, idx, anchor: bool = False) -> TV:
        neutral = NEUTRAL[s.op]
        # the vars the body uses besides the reduction vars decide its tile axes
        used: set[str] = set(v for v in s.all_vars if v not in rvars)
        for _, ix in scatter:
            for v in ix.vars:
                if v not in binding and v not in rvars:
                    rvars.append(v)
        lins = [binding[v] for v in used if v in binding] + [idx[d] for d, _ in scatter]
        baxes = frozenset().union(*(laxes(x) for x in lins)) if lins else frozenset()
        bframe = self.frame_of(baxes)
        # reductions run inside the tile loop (depth >= 1): their bodies may read popped tiles
        depth = max([ldepth(x) for x in lins] + [1])
        E = math.prod(ext[v] for v in rvars) if rvars else 1
        dot = self._dot_plan(opp, s, binding, rvars, scatter, idx, bframe)
        if dot is not None:
            return self._dot(opp, s, binding, rvars, ext, scatter, idx, bframe, depth, E, *dot, anchor=anchor)
        row = self._row_axis(E, bframe) if not scatter and not (anchor and self.stage.split > 1) else None
        if row is not None:
            return self._reduce_row(opp, s, binding, rvars, ext, bframe, row)
        if not scatter and not (anchor and self.stage.split > 1) and self._small_window(opp, s, rvars, E):
            return self._reduce_unrolled(opp, s, binding, rvars, ext, bframe, depth, E)
        S = math.prod(self.aranges[a] for a in bframe) if bframe else 1
        P = min(pow2(E), pow2_floor(max(1, BLOCK_LIMIT // S)))
        if anchor and "BK" in self.cfg:
            P = min(pow2(E), self.cfg["BK"])
        acc = self.fresh("acc")
        shape = "[" + ", ".join(str(self.aranges[a]) for a in bframe) + "]"
        r = self.new_axis("r", P)
        # a loop keeps a block accumulator (tile axes x chunk) and reduces the chunk axis once at the end
        wide = E > P or (anchor and self.stage.split > 1)
        wide = wide and s.op in ("+=", "max=", "min=")
        if wide:
            wshape = "[" + ", ".join(str(self.aranges[a]) for a in bframe + (r,)) + "]"
            self.em.emit(f"{acc} = tl.full({wshape}, {lit(neutral)}, tl.float32)", depth)
        else:
            self.em.emit(f"{acc} = tl.full({shape}, {lit(neutral)}, tl.float32)", depth)
        loop, saved, inner, rl = self._k_loop(E, P, r, depth, anchor)
        b2 = dict(binding)
        b2.update(self._decompose(rl, rvars, ext))
        cs = []
        if self._k_masked(E, P, anchor):
            cs.append((rl, "<", E))
        for d, ix in scatter:
            tv = self.read(opp, ix.access, b2, 0.0)
            n = opp.bound.shapes[s.lhs.tensor][d]
            if tv.const is None and n >= 0:  # a scatter index outside the target sets the flag (write dropped)
                self.gen.emit_index_check(self, opp.op, s.lhs, d, n, tv, tv.depth)
            eq = self.binop("==", tv, self._lin_tv(idx[d]))
            cs_tv = eq
            cs.append(cs_tv)
        body = self.expr(opp, s.rhs, b2, neutral)
        m = self._mask_mixed(cs)
        if m is not None:
            body = self.where(m, body, neutral)
        f2 = bframe + (r,)
        x = self.place(body, f2)
        if r not in body.frame:
            shp = ", ".join(str(self.aranges[a]) if (a in body.frame or a == r) else "1" for a in f2)
            x = f"tl.broadcast_to({x}, [{shp}])"
        ax = len(bframe)
        # wide: fold the chunk into the block accumulator, reduce it once after the loop; else reduce each chunk
        self.em.emit(f"{acc} = {combine_text(s.op, acc, x if wide else reduce_text(s.op, x, ax))}", inner)
        if loop:
            self.em.close(depth, saved)
        out = TV(acc, bframe, depth, "f")
        if wide:
            out = self.tmp(reduce_text(s.op, acc, ax), bframe, depth)
        return self._combine_split(out, s.op) if anchor and self.stage.split > 1 else out

    WINDOW_UNROLL = 32  # a window reduction of at most this many steps is unrolled (scalar offsets)

    def _small_window(self, opp, s, rvars, E: int) -> bool:
        """A reduction over window variables only (a pool's kh, kw) of a few steps."""
        if E > self.WINDOW_UNROLL or not rvars:
            return False
        return self._window_vars(opp.op, opp.prog.stmts.index(s), rvars)

    @staticmethod
    def _window_vars(op, stmt: int, names) -> bool:
        """Every variable of ``names`` has the window role in statement ``stmt`` of ``op``."""
        from kitsune.schedule.roles import roles_of

        r = roles_of(op, stmt)
        return r is not None and all(r.role.get(v) == "window" for v in names)

    def _reduce_unrolled(self, opp, s, binding, rvars, ext, bframe, depth: int, E: int) -> TV:
        """A small window reduction as a statically unrolled loop: the window offsets are compile-time scalars,
        each step one load of the tile's shape (a 3x3 pool: nine shifted loads), no chunk axis."""
        neutral = NEUTRAL[s.op]
        acc = self.fresh("acc")
        shp = ", ".join(str(self.aranges[a]) for a in bframe)
        self.em.emit(f"{acc} = tl.full([{shp}], {lit(neutral)}, tl.float32)", depth)
        for k in range(E):  # unrolled here: each step's offsets are constants, so range analysis drops the
            b2 = dict(binding)  # bound checks a step cannot fail (the centre of a 3x3 window needs none)
            b2.update(self._decompose(lconst(k), rvars, ext))
            body = self.expr(opp, s.rhs, b2, neutral)
            self.em.emit(f"{acc} = {combine_text(s.op, acc, self._block(body, bframe))}", max(depth, body.depth))
        return TV(acc, bframe, depth, "f")

    def _row_axis(self, E: int, bframe: tuple) -> str | None:
        """A tile axis that spans a whole dim of E elements (its grid is 1) and that the reduction's other
        indices do not use: the reduction runs over it instead of a chunk axis of its own ("whole row").
        Values along the row then share the tile's memo: a norm after a GEMM whose tile covers the row reads
        the GEMM's accumulator instead of recomputing it per chunk."""
        for d, a in getattr(self, "out_axes", {}).items():
            if a in bframe or self.clamp.get(a) != E or self.aranges[a] > 2 * E:
                continue
            if self.out_idx[d].key() == self.axis(a, E - 1).key():
                return a
        return None

    def _reduce_row(self, opp, s, binding, rvars, ext, bframe, a) -> TV:
        """A reduction over the whole tile axis ``a`` (see ``_row_axis``): no loop, one tl.sum / tl.max."""
        neutral = NEUTRAL[s.op]
        E = self.clamp[a]
        b2 = dict(binding)
        b2.update(self._decompose(self.axis(a, E - 1), rvars, ext))
        body = self.expr(opp, s.rhs, b2, neutral)
        f2 = self.frame_of(set(bframe) | {a})
        if self.aranges[a] != E:  # padded lanes of the row repeat its last element: they add the neutral
            lane = TV(f"({a}_raw < {E})", (a,), 0, "b")
            body = self.where(lane, body, neutral)
        return self.tmp(reduce_text(s.op, self._block(body, f2), f2.index(a)), bframe, body.depth)

    def _block(self, tv: TV, frame: tuple) -> str:
        """``tv`` as a full block of ``frame``'s shape (a constant filled, a value of fewer axes broadcast)."""
        shp = ", ".join(str(self.aranges[b]) for b in frame)
        if tv.const is not None:
            return f"tl.full([{shp}], {lit(tv.const)}, tl.float32)"
        if set(tv.frame) != set(frame):
            return f"tl.broadcast_to({self.place(tv, frame)}, [{shp}])"
        return self.place(tv, frame)

    def _k_loop(self, E: int, P: int, r: str, depth: int, anchor: bool):
        """The loop over a reduction of E in chunks of P (axis ``r``): (looped, saved block, body depth, index).
        The anchor of a split stage covers only its part ``ks`` of the chunks."""
        split = self.stage.split if anchor else 1
        if E <= P and split == 1:
            return False, None, depth, self.axis(r, P - 1)
        k = self.fresh("k")
        if split > 1:
            if depth != 1:
                raise CodegenError(f"stage \"{self.stage.name}\": a split reduction must be the tile's own "
                                   f"reduction (found one nested at depth {depth}); use SPLIT=1")
            # part ks covers [ks * per, ks * per + per): a constant trip count, the last part masked
            per = -(-(-(-E // P)) // split) * P
            saved = self.em.open(f"for {k} in range(0, {per}, {P}):", depth)
            rl = ladd(lscale(self.sym("ks", 0, split - 1, 1), per), self.sym(k, 0, per - P, depth + 1),
                      self.axis(r, P - 1))
            return True, saved, depth + 1, rl
        saved = self.em.open(f"for {k} in range(0, {E}, {P}):", depth)
        rl = ladd(self.sym(k, 0, -(-E // P) * P - P, depth + 1), self.axis(r, P - 1))
        return True, saved, depth + 1, rl

    def _k_masked(self, E: int, P: int, anchor: bool) -> bool:
        """Whether the reduction index of a loop from ``_k_loop`` can pass E (its last chunk is partial)."""
        split = self.stage.split if anchor else 1
        if split > 1:
            return -(-(-(-E // P)) // split) * P * split != E
        return -(-E // P) * P != E

    def _combine_split(self, acc: TV, op: str) -> TV:
        """Partial sums of the ``SPLIT`` programs of one tile meet in an fp32 workspace of ``SPLIT`` slices: each
        part stores its own slice, fences and counts itself in (a counter per tile, acquire-release); the part
        that arrives last adds the slices up and goes on with the epilogue, the others skip it. (fp32 atomics of
        a tl.dot accumulator gave wrong sums on the H100 with Triton 3.6: bench/kernels/split_probe.py.)"""
        if op != "+=":
            raise CodegenError(f"stage \"{self.stage.name}\": only a sum can be split across programs")
        st = self.stage
        S = st.split
        ws = st.workspace
        numel = math.prod(st.shape)
        off = ladd(*(lscale(x, k) for x, k in zip(self.out_idx, self.strides(st.shape))))
        frame, rel, val, mask = self._tile_access(off, acc, self.mask(self.conds(self.out_idx, st.shape)))
        self.em.emit(f"tl.store({ws} + ks * {numel} + {rel}, {val}{mask})", 1)
        self.em.emit("_fence_gpu()  # this thread's partial sums are performed before the tile's counter moves", 1)
        self.em.emit("tl.debug_barrier()", 1)
        self.em.emit(f"arrived = tl.atomic_add(ctr + {st.split_base} + {self.tid}, 1, sem=\"acq_rel\", "
                     f"scope=\"gpu\")", 1)
        outer = self.em.active[1]
        self.em.open(f"if arrived % {S} == {S - 1}:  # the last of the tile's {S} partial sums", 1)
        self.em.active = self.em.active[:1] + [self.em.active[2]]
        self.split_open = outer
        total = self.fresh("acc")
        other = ", other=0.0" if mask else ""
        self.em.emit("_fence_gpu()", 1)
        loads = [f"tl.load({ws} + {k * numel} + {rel}{mask}{other}, cache_modifier=\".cg\")" for k in range(S)]
        self.em.emit(f"{total} = " + " + ".join(loads), 1)
        return TV(total, frame, 1, "f")

    def _lin_tv(self, x: Lin) -> TV:
        if not x.terms:
            return TV("", (), 0, "i", x.const)
        f = self.frame_of(laxes(x))
        return self.tmp(self.render(x, f), f, ldepth(x), "i")

    def _mask_mixed(self, cs) -> TV | None:
        lins = [c for c in cs if isinstance(c, tuple)]
        tvs = [c for c in cs if isinstance(c, TV)]
        m = self.mask(lins) if lins else None
        for t in tvs:
            if m is None:
                m = t
            else:
                f = self.union(m, t)
                m = self.tmp(f"{self.place(m, f)} & {self.place(t, f)}", f, max(m.depth, t.depth), "b")
        return m

    def _decompose(self, rl: Lin, rvars, ext) -> dict[str, Lin]:
        out = {}
        stride = 1
        for v in reversed(rvars):
            out[v] = lmod(lfloordiv(rl, stride), ext[v]) if len(rvars) > 1 else rl
            stride *= ext[v]
        return out

    def _dot_plan(self, opp, s, binding, rvars, scatter, idx, bframe):
        if s.op != "+=" or len(bframe) != 2 or not rvars:
            return None
        if any(self.aranges[a] < 16 for a in bframe):
            return None
        facs = self._factors(s.rhs)
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
        m, n = bframe
        if a0 == {m} and a1 == {n}:
            return items[0], items[1], [f for f in facs if isinstance(f, Num)]
        if a0 == {n} and a1 == {m}:
            return items[1], items[0], [f for f in facs if isinstance(f, Num)]
        return None

    def _dot(self, opp, s, binding, rvars, ext, scatter, idx, bframe, depth, E, A, B, nums,
             anchor: bool = False) -> TV:
        m, n = bframe
        dts = [self._dtype_of_access(opp, x) for k, x in (A, B) if k == "acc"]
        low = [d for d in dts if d in ("bf16", "f16")]
        cast = low[0] if low and len(low) == len(dts) else None
        BK = min(64 if cast else 32, max(16, pow2(E)))
        if anchor and "BK" in self.cfg:
            BK = min(self.cfg["BK"], max(16, pow2(E)))
        acc = self.fresh("acc")
        self.em.emit(f"{acc} = tl.zeros([{self.aranges[m]}, {self.aranges[n]}], tl.float32)", depth)
        r = self.new_axis("r", BK)
        loop, saved, inner, rl = self._k_loop(E, BK, r, depth, anchor)
        b2 = dict(binding)
        b2.update(self._decompose(rl, rvars, ext))
        need_mask = self._k_masked(E, BK, anchor)

        def operand(item, frame) -> str:
            kind, x = item
            if kind == "acc" and x.tensor in opp.inputs and cast:
                # a tensor-core operand straight from memory keeps its element type (no fp32 round trip)
                tv = self.access(opp.inputs[x.tensor], self.index_lins(opp, x, b2), 0.0, raw=True)
            elif kind == "acc":
                tv = self.read(opp, x, b2, 0.0)
            else:
                d, ix = x
                iv = self.read(opp, ix.access, b2, 0.0)
                tv = self.binop("==", iv, self._lin_tv(idx[d]))
            code = self.place(tv, frame) if set(tv.frame) <= set(frame) and self._ordered(tv.frame, frame) else None
            if code is None:
                raise CodegenError(f"{fmt_loc(opp.op)}'{opp.op.name}': dot operand layout")
            if tv.const is not None or len(tv.frame) < 2:
                shp = ", ".join(str(self.aranges[a]) for a in frame)
                code = f"tl.broadcast_to({code}, [{shp}])"
            return code, tv

        ca, ta = operand(A, (m, r))
        cb, tb = operand(B, (n, r))
        cb = f"tl.trans({cb})"
        dt = TL[cast] if cast else "tl.float32"
        if need_mask:
            mk = self.mask([(rl, "<", E)])
            ca = f"tl.where({self.place(mk, (m, r)) if mk.frame else mk.code}, {ca}, 0.0)"
        ca = f"({ca}).to({dt})"
        cb = f"({cb}).to({dt})"
        prec = "" if cast else ', input_precision="ieee"' if not self.gen.tf32 else ""
        if cast:
            self.em.emit(f"{acc} = _dot_lp({ca}, {cb}, {acc})", inner)
        else:
            self.em.emit(f"{acc} = tl.dot({ca}, {cb}, {acc}{prec})", inner)
        if loop:
            self.em.close(depth, saved)
        out = TV(acc, (m, n), depth, "f")
        if anchor and self.stage.split > 1:
            out = self._combine_split(out, "+=")
        scale = 1.0
        for f in nums:
            scale *= f.value
        if scale != 1.0:
            out = self.tmp(f"{out.code} * {lit(scale)}", out.frame, out.depth)
        return out

    def _ordered(self, sub, frame) -> bool:
        pos = [frame.index(a) for a in sub]
        return pos == sorted(pos)

    # ---- the stage function
    def generate(self) -> list[str]:
        st = self.stage
        if self.template == "scatter" and self.gen.plan.splits:
            from kitsune.codegen.scatter_template import generate_scatter

            return generate_scatter(self)
        T = st.tile
        D = st.shape
        items = st.work_items
        nprog = st.programs
        iters = -(-items // nprog)
        body_saved = self.em.open(f"for it in range(0, {iters}):", 0)
        if st.split > 1:
            # work item w = (tile t, part ks of its reduction)
            self.em.emit(f"w = pid - {st.lo} + it * {nprog}", 1)
            self.em.emit(f"t = w // {st.split}", 1)
            self.em.emit(f"ks = w % {st.split}", 1)
            guard = "w"
        else:
            self.em.emit(f"t = pid - {st.lo} + it * {nprog}", 1)
            guard = "t"
        if items % nprog:
            self.em.open(f"if {guard} < {items}:", 1)
            self.em.active = self.em.active[:1] + [self.em.active[2]]  # depth 1 = inside the if
        idx, self.out_axes = self._tile_index(T, D)
        self.out_idx = tuple(idx)
        self.out_local = self.last_local
        # waits for popped tiles
        for p, q in st.pops:
            self.em.emit(self._pop_call("_pop_wait", q), 1)
        # values to store / push
        results = [("whole" if whole else "store", v, buf) for v, buf, whole in st.stores]
        results += [("push", v, q) for v, q in st.pushes]
        evaluated = []
        for kind, v, target in results:
            if kind == "whole":
                shape = tensor_shape(v.type)
                widx = []
                for d, n in enumerate(shape):
                    if n > 1:
                        a = self.new_axis("w", pow2(n))
                        widx.append(self.axis(a, pow2(n) - 1))
                    else:
                        widx.append(lconst(0))
                tv = self.value_at(v, tuple(widx)) if not self._is_direct(v) else self.access(v, tuple(widx), 0.0)
                evaluated.append((kind, v, target, tv, tuple(widx)))
            else:
                ix = self.out_idx
                if kind == "store" and (tuple(st.store_tiles.get(target, T)) != tuple(T)
                                        or tuple(tensor_shape(v.type)) != tuple(D)):  # same tile, other shape
                    ix, _ = self._tile_index(st.store_tiles[target], tensor_shape(v.type))
                tv = self.value_at(v, ix) if not self._is_direct(v) else self.access(v, ix, 0.0)
                evaluated.append((kind, v, target, tv, ix))
        for kind, v, target, tv, ix in evaluated:
            if kind == "push":
                self._push(target, tv)
            else:
                self._store(target, tv, ix, whole=(kind == "whole"))
        if self.split_open is not None:  # every part of a split frees its popped tiles, not only the last
            outer = self.split_open
            outer.open = None
            self.em.active = self.em.active[:1] + [outer]
        for p, q in st.pops:
            self.em.emit(self._pop_call("_pop_free", q), 1)
        self.em.close(0, body_saved)
        return self._body_text()

    def _tile_index(self, T, D) -> tuple[tuple[Lin, ...], dict[int, str]]:
        """Index of tile ``t`` (tiles T of shape D): coordinates from t, one clamped axis per dim > 1.

        Row-major, except for a gemm stage that exchanges no tiles through queues: there the last two dims
        are walked in groups of ``GROUP_M`` row tiles (consecutive programs share operand tiles in L2). A
        ``gemv`` tensor-core config pads its row axis to the 16 rows an mma needs, a gemm its skinny axes."""
        G = [-(-d // t) for d, t in zip(D, T)]
        ntiles = math.prod(G) if G else 1
        gstr = self.strides(G)
        axes: dict[int, str] = {}
        idx: list[Lin] = []
        grouped = (self.template == "gemm" and len(G) >= 2 and not self.stage.pops and not self.stage.pushes
                   and self.cfg.get("GROUP_M", 1) > 1 and G[-2] > 1 and G[-1] > 1)
        gm_code = {}
        if grouped:
            gm, gn, GM = G[-2], G[-1], self.cfg["GROUP_M"]
            r = "t" if ntiles == gm * gn else f"t % {gm * gn}"
            self.em.emit(f"tg = ({r}) % {GM * gn}", 1)
            self.em.emit(f"first = (({r}) // {GM * gn}) * {GM}", 1)
            self.em.emit(f"gsz = tl.minimum({gm} - first, {GM})", 1)
            gm_code = {len(G) - 2: "first + tg % gsz", len(G) - 1: "tg // gsz"}
        local: list[Lin] = []
        merged = self._merged_run(T, D)
        if merged:
            # one lane axis for several dims (a conv tile's pixels: M for the dot; the rows of an evaluator
            # tile), unclamped (lanes past the tile are masked), so that an address oh * OW + ow folds back to
            # the lane and stays contiguous
            n = math.prod(T[d] for d in merged)
            pa = self.new_axis("p", max(16, pow2(n)) if self.template == "conv" else pow2(n))
            self.clamp[pa] = n
            self.unclamped.add(pa)
            plin = self.axis(pa, n - 1)  # loads through it are masked to the tile's lanes (``_load``)
        for d, (t, g) in enumerate(zip(T, G)):
            if d in merged:
                inner = math.prod(T[e] for e in merged[merged.index(d) + 1:])
                loc = lfloordiv(plin, inner)
                if d != merged[0]:
                    loc = lmod(loc, t)
                axes[d] = pa
            else:
                if t > 1:
                    size = pow2(t)
                    if self.template == "gemv" and self.cfg.get("DOT") and d < len(T) - 1:
                        size = max(16, size)
                    if self.template == "gemm" and d >= len(T) - 2 or self.template == "conv":
                        size = max(16, size)  # tl.dot needs 16 rows and columns: a skinny tile is padded
                    axes[d] = self.new_axis("o", size)
                    self.clamp[axes[d]] = t
                loc = self.axis(axes[d], t - 1) if d in axes else lconst(0)
            if g > 1:
                c = self.fresh("c")
                if d in gm_code:
                    code = gm_code[d]
                else:
                    code = "t" if gstr[d] == 1 else f"t // {gstr[d]}"
                    if gstr[d] * g != ntiles:
                        code = f"({code}) % {g}"
                self.em.emit(f"{c} = {code}", 1)
                cl = lscale(self.sym(c, 0, g - 1, 1), t)
            else:
                cl = lconst(0)
            idx.append(ladd(cl, loc))
            local.append(loc)
        self.last_local = tuple(local)  # the position inside the tile per dim (a queue slot's layout)
        return tuple(idx), axes

    def _merged_run(self, T, D) -> list[int]:
        """The tile dims that become one lane axis, from the first with a tile above one on, every later one
        whole; empty when at most one of them has a tile above one (a single axis already).

        conv: the output dims but the channel one (N role): the pixels, M of the dot. generic / pointwise:
        all dims, when no reduction of the stage runs along a dim of the tile (only window reductions, such as
        a pool's, whose variables index the input next to an output variable): a whole-row reduction needs
        its row as an axis of its own."""
        from kitsune.schedule.roles import roles_of
        from kitsune.schedule.select import anchor_of

        if self.template == "conv":
            op, _ = anchor_of(self.stage.op)
            r = roles_of(op) if op is not None else None
            if r is None or len(r.vars("N")) != 1 or len(r.lhs_vars) != len(T):
                return []
            fdim = r.lhs_vars.index(r.vars("N")[0])
            pix = [d for d in range(len(T)) if d != fdim]
        elif self.template in ("generic", "pointwise") and not self.stage.pops and not self.stage.pushes \
                and self._window_reductions_only():
            pix = list(range(len(T)))
        else:
            return []
        first = next((i for i, d in enumerate(pix) if T[d] > 1), None)
        if first is None:
            return []
        run = pix[first:]
        if any(T[d] != D[d] for d in run[1:]) or sum(T[d] > 1 for d in run) < 2:
            return []
        return run

    def _window_reductions_only(self) -> bool:
        """Every reduction statement of the stage's ops reduces over window variables only."""
        from kitsune.schedule.roles import op_program

        for op in self.stage.op.body.walk():
            got = op_program(op) if isinstance(op, GraphOp) else None
            for i, s_ in enumerate(got[2].stmts if got is not None else ()):
                lhs = set(s_.lhs.vars)
                if s_.op != "=" and not self._window_vars(op, i, [v for v in s_.all_vars if v not in lhs]):
                    return False
        return True

    def _is_direct(self, v: SSAValue) -> bool:
        return (isinstance(v.owner, Block) and v in self.stage.args) or v in self.pop_of

    def _lane(self, frame: tuple) -> str | None:
        parts = []
        for a in frame:
            t = self.clamp.get(a)
            if t is not None and self.aranges[a] != t:  # padded lanes (pow2, or a tl.dot's 16) are masked
                parts.append(f"({self._raw(a, frame)} < {t})")
        return " & ".join(parts) if parts else None

    def _raw(self, a: str, frame: tuple) -> str:
        if frame == (a,):
            return f"{a}_raw"
        return f"{a}_raw[" + ", ".join(":" if f == a else "None" for f in frame) + "]"

    def _tile_access(self, off: Lin, tv: TV, m: TV | None, lane: bool = True, extra: str | None = None):
        """(frame, rendered offset, value broadcast to the frame, ", mask=..." or "") of writing ``tv`` at
        ``off``, masked by ``m``, the tile's padded lanes and ``extra``."""
        frame = self.frame_of(laxes(off) | set(tv.frame) | (set(m.frame) if m else set()))
        parts = [self.place(m, frame)] if m is not None else []
        lanes = self._lane(frame) if lane else None
        if lanes:
            parts.append(lanes)
        if extra:
            parts.append(extra)
        val = self.place(tv, frame)
        if frame and set(tv.frame) != set(frame):
            shp = ", ".join(str(self.aranges[a]) for a in frame)
            val = f"tl.broadcast_to({val}, [{shp}])"
        mask = f", mask={' & '.join(parts)}" if parts else ""
        return frame, self.render(off, frame), val, mask

    def _emit_store(self, ptr: str, off: Lin, tv: TV, m: TV | None, dt: str, lane: bool = True,
                    extra: str | None = None) -> None:
        """tl.store of ``tv`` at ``ptr + off``, masked by ``m``, the tile's padded lanes and ``extra``."""
        _, rel, val, mask = self._tile_access(off, tv, m, lane, extra)
        self.em.emit(f"tl.store({ptr} + {rel}, ({val}).to({TL[dt]}){mask})", 1)

    def _store(self, buf: str, tv: TV, ix, whole: bool) -> None:
        t = self.gen.plan.tensors[buf]
        off = ladd(*(lscale(x, s) for x, s in zip(ix, self.strides(t.shape))))
        # a whole result is written by the program of tile 0 only
        self._emit_store(buf, off, tv, self.mask(self.conds(ix, t.shape)), t.dtype, lane=not whole,
                         extra="(t == 0)" if whole else None)

    def _push(self, q: Queue, tv: TV) -> None:
        tstr = self.strides(q.tile)
        offs = [lscale(self.out_local[d], tstr[d]) for d, t in enumerate(self.stage.tile) if t > 1]
        slot_base = f"(t % {q.capacity}) * {q.tile_elems}" if q.capacity < q.ntiles else f"t * {q.tile_elems}"
        self.em.emit(f"_push_wait(ctr, {q.counter_base}, t, {q.capacity}, {q.ntiles}, {q.readers}, epoch, err, "
                     f"{q.qid}, WATCHDOG)", 1)
        self._emit_store(f"{q.storage} + {slot_base}", ladd(*offs) if offs else lconst(0), tv,
                         self.mask(self.conds(self.out_idx, q.shape)), q.dtype)
        self.em.emit(f"_push_done(ctr, {q.counter_base}, t, {q.capacity})", 1)

    def _pop_call(self, fn: str, q: Queue) -> str:
        # the producer tiles this consumer tile reads: its own (tile), its row band (rows), all (all)
        if q.relation == "tile":
            j0, n = "t", 1
        elif q.relation == "rows":
            cg = self.stage.grid
            lead = cg[:-1]
            j0 = "0"
            if lead and math.prod(lead) > 1:
                j0 = f"(t // {cg[-1]}) * {q.grid[-1]}"
            n = q.grid[-1]
        else:
            j0, n = "0", q.ntiles
        if fn == "_pop_wait":
            return (f"_pop_wait(ctr, {q.counter_base}, {j0}, {n}, {q.capacity}, {q.ntiles}, epoch, err, {q.qid}, "
                    f"WATCHDOG)  # queue \"{q.name}\" ({q.relation}) from stage \"{q.producer}\"")
        return f"_pop_free(ctr, {q.counter_base}, {j0}, {n}, {q.capacity})  # queue \"{q.name}\""

    def _body_text(self) -> list[str]:
        """The stage function's body (its def line comes from TritonGen, which knows the parameters)."""
        st = self.stage
        kind = st.op.attributes.get("kind")
        lines = [f"    # stage \"{st.name}\" ({kind.data if kind else ''}): programs [{st.lo}, {st.hi}), tile "
                 f"{list(st.tile)} of {list(st.shape)}, {st.ntiles} tiles"]
        for a, size in self.aranges.items():
            lines.append(f"    {a}_raw = tl.arange(0, {size})")
            t = self.clamp.get(a, size)
            clamped = t != size and a not in self.unclamped
            lines.append(f"    {a} = tl.minimum({a}_raw, {t - 1})" if clamped else f"    {a} = {a}_raw")
        lines += self.em.root.lines(1)
        return lines

    def fn_name(self) -> str:
        return ident(f"{self.kernel.name}_{self.stage.name}")


# ------------------------------------------------------------------ the module


RUNTIME = '''
class QueueTimeout(RuntimeError):
    """A spin-wait gave up (debug watchdog): the named queue never delivered."""


class KitsuneIndexError(IndexError):
    """An index tensor held a value outside the dimension it indexes (checked unless built with
    index_checks=False; the read gave 0, the write was dropped)."""


@triton.jit
def _index_check(v, n, err, code):
    bad = (v < 0) | (v >= n)
    tl.atomic_max(err + bad.to(tl.int32) * 0, code, mask=bad)


@triton.jit
def _mul_combine(a, b):
    return a * b


_INTERPRETED = tl.constexpr(os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"))


@triton.jit
def _fence_gpu():
    # fence.acq_rel.gpu in every thread (CUDA's __threadfence): a CTA barrier followed by one thread's
    # release does not wait for the other threads' outstanding stores and reductions to be performed
    if not _INTERPRETED:
        tl.inline_asm_elementwise("fence.acq_rel.gpu; mov.u32 $0, 0;", "=r", [], dtype=tl.int32, is_pure=False,
                                  pack=1)


@triton.jit
def _scatter_add(base, off, val, mask):
    # val added at base + off where mask ([rows, cols] blocks), repeated targets accumulating. Triton's CPU
    # interpreter (3.6) has no bf16 / fp16 atomics: there the rows are added one after another (programs run one
    # at a time, so a read-modify-write per row is exact, and a row's targets are distinct columns)
    if _INTERPRETED:
        rows = tl.arange(0, off.shape[0])
        for jj in range(off.shape[0]):
            sel = (rows == jj)[:, None] & mask
            o = tl.sum(tl.where(sel, off, 0), axis=0)
            v = tl.sum(tl.where(sel, val.to(tl.float32), 0.0), axis=0)
            m = tl.max(sel.to(tl.int32), axis=0) > 0
            old = tl.load(base + o, mask=m, other=0.0).to(tl.float32)
            tl.store(base + o, (old + v).to(val.dtype), mask=m)
    else:
        tl.atomic_add(base + off, val, mask=mask, sem="relaxed")


@triton.jit
def _dot_lp(a, b, acc):
    # bf16 / fp16 operands, fp32 accumulation. Triton's CPU interpreter (3.6) gets low-precision dots wrong,
    # so there the operands are widened first (exact: a product of two bf16 values fits in fp32)
    if _INTERPRETED:
        return tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
    else:
        return tl.dot(a, b, acc)


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _min_combine(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _acquire(ptr, target, err, code, WATCHDOG: tl.constexpr):
    v = tl.atomic_add(ptr, 0, sem="acquire", scope="gpu")
    n = 0
    while v < target:
        n += 1
        if WATCHDOG > 0 and n > WATCHDOG:
            tl.atomic_max(err, code + 1)
            v = target
        else:
            v = tl.atomic_add(ptr, 0, sem="acquire", scope="gpu")


@triton.jit
def _pop_wait(ctr, base, j0, n: tl.constexpr, cap: tl.constexpr, nt: tl.constexpr, epoch, err, code,
              WATCHDOG: tl.constexpr):
    # wait until tiles j0 .. j0+n-1 are in their slots (acquire), then let the whole CTA read them
    for x in range(0, n):
        j = j0 + x
        s = j % cap
        uses = (nt - s + cap - 1) // cap
        _acquire(ctr + base + s, epoch * uses + j // cap + 1, err, code, WATCHDOG)
    tl.debug_barrier()


@triton.jit
def _pop_free(ctr, base, j0, n: tl.constexpr, cap: tl.constexpr):
    # every thread is done reading the tiles: give their slots back (release)
    tl.debug_barrier()
    for x in range(0, n):
        s = (j0 + x) % cap
        tl.atomic_add(ctr + base + cap + s, 1, sem="release", scope="gpu")


@triton.jit
def _push_wait(ctr, base, j, cap: tl.constexpr, nt: tl.constexpr, readers: tl.constexpr, epoch, err, code,
               WATCHDOG: tl.constexpr):
    # wait until every reader freed the slot's previous tile
    s = j % cap
    uses = (nt - s + cap - 1) // cap
    _acquire(ctr + base + cap + s, (epoch * uses + j // cap) * readers, err, code, WATCHDOG)
    tl.debug_barrier()


@triton.jit
def _push_done(ctr, base, j, cap: tl.constexpr):
    # all stores of the tile are done (each thread's fence, barrier), then publish it (release)
    _fence_gpu()
    tl.debug_barrier()
    tl.atomic_add(ctr + base + j % cap, 1, sem="release", scope="gpu")
'''

HOST = '''

def _constant(spec):
    shape, dtype, data = spec
    arr = np.load(io.BytesIO(base64.b64decode(data)))
    return torch.from_numpy(arr).reshape(shape).to(dtype)


def allocate(device):
    """Buffers, queue storage, counters, the epoch and the error flag: allocated once, reused by every launch."""
    device = torch.device(device)
    bufs = {}
    for name, (shape, dt, role) in TENSORS.items():
        if role == "buffer":
            bufs[name] = torch.empty(shape, dtype=DTYPES[dt], device=device)
        elif role == "workspace":  # split-K partial sums: one slice per part, written before it is read
            bufs[name] = torch.zeros(shape, dtype=DTYPES[dt], device=device)
        elif role == "constant":
            bufs[name] = _constant((shape, DTYPES[dt], CONSTANTS[name])).to(device)
    for name, (elems, dt) in QUEUE_STORAGE.items():
        bufs[name] = torch.empty(max(elems, 1), dtype=DTYPES[dt], device=device)
    return {"buffers": bufs, "counters": torch.zeros(max(N_COUNTERS, 1), dtype=torch.int32, device=device),
            "epoch": torch.zeros(1, dtype=torch.int32, device=device),
            "err": torch.zeros(1, dtype=torch.int32, device=device), "device": device,
            **({"prof": torch.zeros(1 + 4 * PROFILE_ITEMS, dtype=torch.int64, device=device)} if PROFILE else {})}


def _prof(state, k):
    """The profile buffer and PROF_ASM (keywords) (globaltimer / smid on a GPU, a logical clock in the interpreter)."""
    if not k.get("profile"):
        return {}
    return {"prof": state["prof"], "PROF_ASM": state["device"].type == "cuda"}


def read_profile(state):
    """The last launch's work items: [(kernel, stage, pid, start, end, sm)] (start / end in ns from
    %globaltimer on a GPU, ticks of a logical clock under the interpreter)."""
    rows = state["prof"][1:].view(-1, 4).cpu().tolist()
    out = []
    for kname, base, stages in PROFILE:
        for stage, lo, hi in stages:
            for pid in range(lo, hi):
                t0, t1, sm, _ = rows[base + pid]
                out.append((kname, stage, pid, t0, t1, sm))
    return out


def launch(state, tensors, watchdog=0):
    """Launch every kernel in order on the current stream; returns the outputs (internal buffers)."""
    env = dict(state["buffers"])
    env.update(tensors)
    ctr, err, ep = state["counters"], state["err"], state["epoch"]
    for k in KERNELS:
        pk = _prof(state, k)
        for n in k["zero"]:  # scatter results: the kernel adds into them
            env[n].zero_()
        k["fn"][(k["grid"],)](*[env[n] for n in k["tensors"]], ctr, err, ep, WATCHDOG=int(watchdog),
                              num_warps=k["num_warps"], num_stages=k["num_stages"], **pk)
    ep.add_(1)
    return [env[o] for o in OUTPUTS]


def residency(state, tensors):
    """Per kernel: (name, grid, CTAs that fit on the device at once, registers, shared bytes, spills).

    Compiles (without launching) each kernel for the current device. A kernel with ring queues (fewer
    slots than tiles) needs its whole grid resident; otherwise generate with capacity="all".
    """
    env = dict(state["buffers"])
    env.update(tensors)
    props = torch.cuda.get_device_properties(state["device"])
    out = []
    for k in KERNELS:
        pk = _prof(state, k)
        args = [env[n] for n in k["tensors"]] + [state["counters"], state["err"], state["epoch"]]
        ck = k["fn"].warmup(*args, WATCHDOG=0, num_warps=k["num_warps"], num_stages=k["num_stages"],
                            grid=(k["grid"],), **pk)
        ck._init_handles()
        threads = 32 * k["num_warps"]
        regs = max(1, ck.n_regs) * threads
        smem = ck.metadata.shared
        smem_sm = getattr(props, "shared_memory_per_multiprocessor", 233472)
        by_regs = getattr(props, "regs_per_multiprocessor", 65536) // regs
        by_smem = smem_sm // (smem + 1024) if smem else 32
        by_threads = getattr(props, "max_threads_per_multi_processor", 2048) // threads
        per_sm = max(0, min(by_regs, by_smem, by_threads, 32))
        out.append((k["name"], k["grid"], per_sm * props.multi_processor_count, ck.n_regs, smem, ck.n_spills))
    return out


def error(code):
    """The exception an error flag value stands for (None for 0): KitsuneIndexError (an index check) or
    QueueTimeout (a debug watchdog). Reads nothing: the runtime copies the flag to the host asynchronously."""
    code = int(code)
    if code >= INDEX_CODE:
        where, what = INDEX_CHECKS[code - INDEX_CODE]
        return KitsuneIndexError(f"{where}index out of range: {what}")
    if code:
        name, kernel, cap, ntiles = QUEUES[code - 1]
        return QueueTimeout(f"kernel \\"{kernel}\\": a program gave up waiting on queue \\"{name}\\" "
                            f"({cap} slots, {ntiles} tiles per run); its producer never delivered (deadlock, "
                            f"or the grid is larger than the CTAs that can be resident at once)")
    return None


def check(state):
    """Raise KitsuneIndexError if an index check failed (the flag is reset: later launches run), QueueTimeout
    if a spin-wait's watchdog fired (synchronises: reads the flag)."""
    e = error(state["err"].item())
    if isinstance(e, KitsuneIndexError):
        state["err"].zero_()
    if e is not None:
        raise e
'''


class TritonGen:
    def __init__(self, plan: Plan, tf32: bool = False, profile: bool = False, index_checks: bool = True):
        self.plan = plan
        self.index_checks_on = index_checks  # False: no index checks emitted (to measure what they cost)
        self.tf32 = tf32
        self.profile = profile  # the dispatcher records (start, end, SM) of every work item
        self.constants: dict[str, tuple[np.ndarray, str]] = {}
        self.kernel_extra: dict[str, list[str]] = {}
        self.index_checks: list[tuple[str, str]] = []

    def index_check(self, op, acc: Access, d: int, n: int) -> int:
        """The err code of a check that ``acc``'s index in dim ``d`` lies in [0, n)."""
        what = (f"'{op.name}' uses {acc} with an index outside [0, {n}) in dim {d} (torch raises IndexError "
                "here; Kitsune's read gave 0 / the write was dropped)")
        item = (fmt_loc(op), what)
        if item not in self.index_checks:
            self.index_checks.append(item)
        return INDEX_CODE + self.index_checks.index(item)

    def emit_index_check(self, g, op, acc: Access, d: int, n: int, tv, depth: int) -> None:
        """Emit (in stage ``g``, at ``depth``) the check that the loaded index ``tv`` of ``acc``'s dim ``d`` lies
        in [0, n): a failure sets the error flag (nothing without ``index_checks``)."""
        if self.index_checks_on:
            g.em.emit(f"_index_check({g.place(tv, tv.frame)}, {n}, err, {self.index_check(op, acc, d, n)})", depth)

    def add_constant(self, arr: np.ndarray, dt: str) -> str:
        for n, (a, d) in self.constants.items():
            if d == dt and a.shape == arr.shape and np.array_equal(a, arr):
                return n
        n = f"const{len(self.constants)}"
        self.constants[n] = (arr, dt)
        self.plan.tensors[n] = Tensor(n, tuple(arr.shape), dt, "constant", n, arr)
        return n

    def kernel_params(self, k: Kernel) -> list[str]:
        qs = [q.storage for q in k.queues]
        return list(k.tensors) + self.kernel_extra.get(k.name, []) + qs

    def generate(self) -> str:
        out: list[str] = []
        kern_texts = []
        for k in self.plan.kernels:
            stage_fns = []
            extra: set[str] = set()
            for st in k.stages:
                g = StageGen(self, k, st)
                body = g.generate()
                extra |= g.extra_tensors
                stage_fns.append((st, g.fn_name(), body))
            self.kernel_extra[k.name] = sorted(extra)
            # every stage takes the kernel's parameters, constants found in any stage included
            params = self.kernel_params(k)
            texts = ["\n".join(["@triton.jit", f"def {fn}(pid, {', '.join(params)}, ctr, err, epoch, "
                                               f"WATCHDOG: tl.constexpr):"] + body)
                     for st, fn, body in stage_fns]
            kern_texts.append((k, params, stage_fns, texts))
        out.append(self._header())
        out.append(RUNTIME)
        for k, params, stage_fns, texts in kern_texts:
            out.append(f"\n# {'=' * 70}\n# kernel \"{k.name}\": grid {k.grid}, {k.warps} warps, "
                       f"{len(k.stages)} stage(s), {len(k.queues)} queue(s)")
            for q in k.queues:
                out.append(f"#   queue \"{q.name}\" (id {q.qid}): \"{q.producer}\" -> \"{q.consumer}\", tile "
                           f"{list(q.tile)} x {q.ntiles}, {q.capacity} slots, relation {q.relation}, "
                           f"{q.readers} reader(s) per tile, counters at {q.counter_base}")
            out.append("")
            for t in texts:
                out.append("\n" + t + "\n")
            out.append(self._kernel_fn(k, params, stage_fns))
        out.append(self._tables(kern_texts))
        out.append(HOST)
        return "\n".join(out)

    def _header(self) -> str:
        p = self.plan
        return (f'"""Generated by Kitsune (kitsune-opt -t triton): {len(p.kernels)} kernel(s), {len(p.queues)} '
                f'queue(s).\n\nInterface: allocate(device) -> state; launch(state, {{name: tensor}}, watchdog=0) -> '
                f'outputs;\nerror(code) -> the exception an error flag value stands for; check(state) raises '
                f'KitsuneIndexError\nwhen an index check failed, QueueTimeout when a debug watchdog fired.\n"""\n'
                "import base64\nimport io\nimport os\n\nimport numpy as np\nimport torch\nimport triton\n"
                "import triton.language as tl\n")

    def _kernel_fn(self, k: Kernel, params: list[str], stage_fns) -> str:
        ticket = self.plan.counters + self.plan.kernels.index(k)
        prof = ", prof, PROF_ASM: tl.constexpr" if self.profile else ""
        lines = ["@triton.jit", f"def {ident(k.name)}({', '.join(params)}, ctr, err, epoch_ptr, "
                                f"WATCHDOG: tl.constexpr{prof}):",
                 "    # program ids are handed out in the order CTAs start (a ticket counter, epoch based), so a",
                 "    # program waits only on programs that already run: no deadlock whatever the launch order",
                 "    epoch = tl.load(epoch_ptr)",
                 f"    pid = tl.atomic_add(ctr + {ticket}, 1) - epoch * {k.grid}"]
        if self.profile:  # a work item = this program's stage call: its start, end and SM
            lines += ["    if PROF_ASM:",
                      "        t_start = tl.inline_asm_elementwise(\"mov.u64 $0, %globaltimer;\", \"=l\", [], "
                      "dtype=tl.int64, is_pure=False, pack=1)",
                      "        sm = tl.inline_asm_elementwise(\"mov.u32 $0, %smid;\", \"=r\", [], dtype=tl.int32, "
                      "is_pure=False, pack=1).to(tl.int64)",
                      "    else:  # Triton's interpreter runs no inline asm: a logical clock, the program id as SM",
                      "        t_start = tl.atomic_add(prof, 1).to(tl.int64)",
                      "        sm = pid.to(tl.int64)"]
        for i, (st, fn, _) in enumerate(stage_fns):
            lines.append(f"    {'if' if i == 0 else 'elif'} pid < {st.hi}:")
            lines.append(f"        {fn}(pid, {', '.join(params)}, ctr, err, epoch, WATCHDOG)")
        if self.profile:
            base = sum(kk.grid for kk in self.plan.kernels[:self.plan.kernels.index(k)])
            lines += ["    if PROF_ASM:",
                      "        t_end = tl.inline_asm_elementwise(\"mov.u64 $0, %globaltimer;\", \"=l\", [], "
                      "dtype=tl.int64, is_pure=False, pack=1)",
                      "    else:",
                      "        t_end = tl.atomic_add(prof, 1).to(tl.int64)",
                      f"    row = prof + 1 + 4 * ({base} + pid)",
                      "    tl.store(row, t_start)",
                      "    tl.store(row + 1, t_end)",
                      "    tl.store(row + 2, sm)"]
        return "\n".join(lines) + "\n"

    def _tables(self, kern_texts) -> str:
        p = self.plan
        lines = ["", "DTYPES = {" + ", ".join(f'"{k}": {v}' for k, v in TORCH.items()) + "}"]
        lines.append("TENSORS = {")
        for n, t in p.tensors.items():
            lines.append(f"    {n!r}: ({tuple(t.shape)!r}, {t.dtype!r}, {t.role!r}),")
        lines.append("}")
        lines.append("LABELS = {" + ", ".join(f"{n!r}: {(t.label or n)!r}" for n, t in p.tensors.items()) + "}")
        lines.append(f"ARGS = {p.args!r}")
        lines.append(f"OUTPUTS = {p.outputs!r}")
        lines.append("QUEUES = [" + ", ".join(f"({q.name!r}, {q.kernel!r}, {q.capacity}, {q.ntiles})"
                                             for q in p.queues) + "]")
        lines.append(f"INDEX_CODE = {INDEX_CODE}  # err codes from here on: an index check failed")
        lines.append("INDEX_CHECKS = [" + ", ".join(repr(c) for c in self.index_checks) + "]")
        lines.append("QUEUE_STORAGE = {" + ", ".join(f"{q.storage!r}: ({q.storage_elems}, {q.dtype!r})"
                                                    for q in p.queues) + "}")
        lines.append(f"N_COUNTERS = {p.counters + len(p.kernels)}  # queue counters, then one ticket per kernel")
        prof, base = [], 0
        for k in p.kernels:  # (kernel, first row of the profile buffer, [(stage, first pid, end pid)])
            prof.append((k.name, base, [(st.name, st.lo, st.hi) for st in k.stages]))
            base += k.grid
        lines.append(f"PROFILE = {prof!r}" if self.profile else "PROFILE = []")
        lines.append(f"PROFILE_ITEMS = {base if self.profile else 0}  # work items recorded per launch")
        lines.append("CONSTANTS = {")
        for n, (arr, dt) in self.constants.items():
            b = io.BytesIO()
            np.save(b, np.ascontiguousarray(arr))
            lines.append(f"    {n!r}: {base64.b64encode(b.getvalue()).decode()!r},")
        lines.append("}")
        lines.append("KERNELS = [")
        for k, params, _, _ in kern_texts:
            sig = {}
            for n in params:
                if n in p.tensors:
                    sig[n] = SIG[p.tensors[n].dtype]
                else:
                    q = next(q for q in p.queues if q.storage == n)
                    sig[n] = SIG[q.dtype]
            sig.update({"ctr": "*i32", "err": "*i32", "epoch_ptr": "*i32", "WATCHDOG": "constexpr"})
            cx = {"WATCHDOG": 0}
            if self.profile:
                sig.update({"prof": "*i64", "PROF_ASM": "constexpr"})
                cx["PROF_ASM"] = True
            cxs = "{" + ", ".join(f'"{n}": {v!r}' for n, v in cx.items()) + "}"
            tensors = [n for n in params]
            lines.append(f"    {{\"name\": \"{k.name}\", \"fn\": {ident(k.name)}, \"grid\": {k.grid}, "
                         f"\"num_warps\": {k.warps}, \"num_stages\": {k.num_stages}, \"tensors\": {tensors!r}, "
                         f"\"zero\": {k.zero!r}, "
                         f"\"signature\": {sig!r}, "
                         f"\"constexprs\": {cxs}" + (", \"profile\": True" if self.profile else "") + "},")
        lines.append("]")
        return "\n".join(lines) + "\n"


def generate_triton(module: ModuleOp, capacity: str = "ir", tf32: bool = False, profile: bool = False,
                    index_checks: bool = True) -> str:
    """The Triton module for @main's gpu_queue.program (see the module docstring).

    ``profile=True``: every kernel takes a ``prof`` buffer (allocated by ``allocate``) into which each work
    item records its start, end and SM; ``read_profile(state)`` returns them after a launch.
    ``index_checks=False``: no index checks (an out-of-range index still reads 0 / drops its write, silently);
    for measuring what the checks cost."""
    plan = build_plan(module, capacity)
    return TritonGen(plan, tf32, profile, index_checks).generate()


def emit_triton(module: ModuleOp, output: IO[str]) -> None:
    """kitsune-opt -t triton."""
    output.write(generate_triton(module))


__all__ = ["generate_triton", "emit_triton", "CodegenError"]
