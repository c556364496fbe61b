"""The comprehension evaluator: what is value ``v`` at the symbolic index ``I``?

A stage's body computes whole tensors in value semantics; the evaluator never builds per-op loops. For a
value and an index (a tuple of ``Lin``) it reads the op's comprehension program (``kitsune.semantics.optable``)
statement by statement: the left side is solved for its index variables (``invert``), the right side is
evaluated with that binding (``expr``: arithmetic, calls, reads of operands), several statements writing
one tensor are folded with ``tl.where``, and a reduction statement goes to ``Reductions`` (which picks a
template: tensor-core dot, whole-row, unrolled window or a chunked loop). Reads of the stage's arguments and
popped queue tiles become masked loads (``Memory``); everything is memoised per index, so a value needed at
the same index twice is computed once.

Public surface used by the templates (``kitsune.codegen.triton_gen.templates``): ``program``, ``access``,
``value_at``, ``is_direct``, ``read``, ``index_lins``, ``expr``, ``decompose``, and the attributes ``b``
(``Blocks``), ``mem`` (``Memory``), ``arith`` (``Arithmetic``: ``binop``, ``call``, ``combine``), ``gen`` (the
module generator: tensors, constants, index checks), ``stage``, ``cfg``, ``template``, ``tile`` (the stage's
output tile) and ``split_k``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Block, SSAValue

from kitsune.codegen.plan import CodegenError, Queue, Stage, dtype_key
from kitsune.codegen.triton_gen.arithmetic import Arithmetic
from kitsune.codegen.triton_gen.blocks import Blocks
from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.index_algebra import Lin, ladd, lconst, lfloordiv, lmod, loffset, lrange, lscale, reshape_index, strides
from kitsune.codegen.triton_gen.memory import Memory
from kitsune.codegen.triton_gen.syntax import NEUTRAL, TL, lit
from kitsune.dialects.graph import GraphOp, fmt_loc
from kitsune.dialects.regions import tensor_shape
from kitsune.dialects.values import constant_value
from kitsune.schedule.select import unit_reshape
from kitsune.semantics import optable
from kitsune.semantics.comprehension import Access, Affine, BinOp, Call, Indirect, IVar, Neg, Num, parse

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.module import TritonGen
    from kitsune.codegen.triton_gen.templates.split_k import SplitK
    from kitsune.codegen.triton_gen.tiling import OutputTile


class OpProgram:
    """A graph op's comprehension program, instantiated for its operand shapes and attributes."""

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


class Evaluator:
    def __init__(self, gen: "TritonGen", stage: Stage, blocks: Blocks, memory: Memory, tile: "OutputTile",
                 split_k: "SplitK", anchor, threads: int = 128):
        from kitsune.codegen.triton_gen.reductions import Reductions
        from kitsune.codegen.triton_gen.templates.tma import TmaOperand

        self.gen = gen
        self.stage = stage
        self.template = stage.template
        self.cfg = stage.config
        self.b = blocks
        self.mem = memory
        self.arith = Arithmetic(blocks)
        self.tile = tile
        self.split_k = split_k
        self.anchor = anchor  # (id(op), statement) the template's loop computes, or None
        self.threads = threads  # of the kernel's CTA: how many accumulator elements each thread holds
        self.progs: dict[int, OpProgram] = {}
        self.pop_of: dict[SSAValue, Queue] = {p.results[0]: q for p, q in stage.pops}
        self.extra_tensors: set[str] = set()  # non-splat constants the stage reads
        self.reductions = Reductions(self)
        self.tma = TmaOperand(self)  # dot operands loaded through tensor descriptors
        # bound checks of the tile's own rows that a computed value need not be re-masked by (``StageGen``:
        # nothing in the stage reduces across rows, so a row past the result only ever reaches that row, whose
        # stores, pushes and atomics are masked): on mgn_10k's edge GEMM the re-masking held 50 registers
        self.row_checks: frozenset = frozenset()

    def program(self, op: GraphOp) -> OpProgram:
        """``op``'s comprehension program (instantiated once per stage)."""
        opp = self.progs.get(id(op))
        if opp is None:
            opp = self.progs[id(op)] = OpProgram(op)
        return opp

    # ---- values
    def access(self, v: SSAValue, idx: tuple[Lin, ...], neutral: float, raw: bool = False) -> TV:
        """v at idx; positions outside v read ``neutral``. ``raw``: a load from memory keeps its element type
        (a tensor-core operand), instead of widening to fp32."""
        shape = tensor_shape(v.type)
        cs = self.b.conds(idx, shape)
        raw = raw and self.is_direct(v)
        key = ("acc", id(v), tuple(x.key() for x in idx), neutral if cs else None, raw)
        if key in self.b.memo:
            return self.b.memo[key]
        hit = self.b.memo.get(key[:-1] + (True,)) if not raw and self.is_direct(v) else None
        if hit is not None and hit.kind == "f" and hit.const is None:
            # loaded already as a tensor-core operand (a chain layer's input, read again as a residual): widened
            tv = self.b.tmp(f"({hit.code}).to(tl.float32)", hit.frame, hit.depth, "f")
            if hit.code in self.b.masked:
                self.b.masked[tv.code] = self.b.masked[hit.code]
            self.b.memo[key] = tv
            return tv
        if isinstance(v.owner, Block) and v in self.stage.args:
            tv = self.load_global(self.stage.args[v], idx, cs, neutral, raw)
        elif v in self.pop_of:
            tv = self.load_queue(self.pop_of[v], idx, cs, neutral, raw)
        else:
            tv = self.value_at(v, idx)
            cs = self.remask(cs)
            if cs:
                tv = self.b.where(self.b.mask(cs), tv, neutral)
        self.b.memo[key] = tv
        return tv

    def remask(self, cs):
        """The bound checks a computed value is re-masked by: ``cs`` without the tile's own row checks."""
        return [c for c in cs if (c[0].key(), c[1], c[2]) not in self.row_checks] if self.row_checks else cs

    def result_at(self, v: SSAValue, idx: tuple[Lin, ...]) -> TV:
        """``v`` at ``idx``: loaded when the stage reads it from memory (``is_direct``), else evaluated."""
        return self.access(v, idx, 0.0) if self.is_direct(v) else self.value_at(v, idx)

    def is_direct(self, v: SSAValue) -> bool:
        """``v`` is read from memory: an argument of the stage (a global tensor) or a popped queue tile."""
        return (isinstance(v.owner, Block) and v in self.stage.args) or v in self.pop_of

    def load_global(self, name: str, idx, cs, neutral, raw: bool = False) -> TV:
        t = self.gen.plan.tensors[name]
        return self.load_offset(name, loffset(idx, t.strides()), cs, neutral, raw)

    def load_offset(self, name: str, off, cs, neutral, raw: bool = False) -> TV:
        """Global tensor ``name`` at the flat offset ``off`` where ``cs`` hold, else ``neutral``."""
        # an earlier stage of this kernel wrote it: read through L2 (never an L1 line older than the wait)
        extra = ', cache_modifier=".cg"' if name in self.stage.awaited else ""
        return self.mem.load(name, off, cs, neutral, self.gen.plan.tensors[name].dtype, extra, raw=raw)

    def load_queue(self, q: Queue, idx, cs, neutral, raw: bool = False) -> TV:
        tc = [lfloordiv(x, t) for x, t in zip(idx, q.tile)]
        off = [lmod(x, t) for x, t in zip(idx, q.tile)]
        j = loffset(tc, strides(q.grid))
        slot = lmod(j, q.capacity)
        flat = ladd(lscale(slot, q.tile_elems), loffset(off, strides(q.tile)))
        # queue data is read only after the tile's waits: never hoist above the tile loop
        return self.mem.load(q.storage, flat, cs, neutral, q.dtype, ', cache_modifier=".cg"', min_depth=1, raw=raw)

    def value_at(self, v: SSAValue, idx: tuple[Lin, ...]) -> TV:
        key = ("val", id(v), tuple(x.key() for x in idx))
        if key in self.b.memo:
            return self.b.memo[key]
        op = v.owner
        if not isinstance(op, GraphOp):
            raise CodegenError(f"{fmt_loc(op)}'{getattr(op, 'name', op)}' cannot be generated inside a stage")
        name = op.name.split(".", 1)[1]
        if name == "reshape":
            src = op.operands[0]
            lin = loffset(idx, strides(tensor_shape(v.type)))
            sshape = tensor_shape(src.type)
            sidx = reshape_index(idx, tuple(sshape), tuple(tensor_shape(v.type)))
            if not isinstance(src.owner, Block) and src not in self.pop_of and unit_reshape(op) and \
                    any(u.operation is op.parent_block().last_op for u in v.uses):
                # a result of the task that is a value of it with unit dims added or dropped only (kitsune-
                # flatten-rows' exit): the index itself, not the digits of its flat offset, which wrap the lanes a
                # tile holds past a dim's end into other rows (the dot template then finds no [rows, K] x
                # [K, columns] form)
                it = iter(x for x, d in zip(idx, tensor_shape(v.type)) if d != 1)
                sidx = tuple(lconst(0) if d == 1 else next(it) for d in sshape)
            if isinstance(src.owner, Block) and src in self.stage.args and \
                    self.gen.plan.tensors[self.stage.args[src]].row_major:
                # a row-major tensor in memory: the reshape's flat index is its offset (DLRM's triangle gathered
                # from the [B, 9, 9] interaction through [B, 81]: no division per element)
                tv = self.load_offset(self.stage.args[src], lin, self.b.conds((lin,), (math.prod(sshape),)), 0.0)
            elif isinstance(src.owner, Block) or src in self.pop_of:
                tv = self.access(src, sidx, 0.0)
            else:
                tv = self.value_at(src, sidx)
        elif name == "constant":
            tv = self.constant(op, v, idx)
        elif name == "attention" and self.template == "attention":  # one pass over the keys, on tensor cores
            from kitsune.codegen.triton_gen.templates.flash_attention import FlashAttention

            tv = FlashAttention(self).value(op, idx)
        else:
            opp = self.program(op)
            tv = self.tensor(opp, opp.inst.results[v.index], idx)
            rdt = dtype_key(v.type.get_element_type())
            if rdt.startswith("i") and tv.kind == "f" and rdt != "i1":
                tv = self.to_int(tv, rdt)
            elif name == "cast" and rdt in ("bf16", "f16") and tv.const is None:
                tv = self.b.tmp(f"{tv.code}.to({TL[rdt]}).to(tl.float32)", tv.frame, tv.depth, "f")
        self.b.memo[key] = tv
        return tv

    def to_int(self, tv: TV, rdt: str) -> TV:
        """A float value converted to the integer type ``rdt`` (truncating, as torch's cast does). A folded
        constant stays a constant: a Python float literal has no ``.to``."""
        if tv.const is not None:
            if math.isfinite(tv.const):
                return TV("", (), 0, "i", int(tv.const))
            return self.b.tmp(f"tl.full([], {lit(tv.const)}, tl.float32).to({TL[rdt]})", (), tv.depth, "i")
        return self.b.tmp(f"{self.b.place(tv, tv.frame)}.to({TL[rdt]})", tv.frame, tv.depth, "i")

    def constant(self, op, v: SSAValue, idx) -> TV:
        attr = op.attributes.get("value") or op.properties.get("value")
        if not isinstance(attr, DenseIntOrFPElementsAttr):
            raise CodegenError(f"{fmt_loc(op)}'graph.constant' without a dense value")
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
        """Tensor ``T`` of ``opp``'s program at ``idx``: its statements, folded in order."""
        key = ("t", id(opp.op), T, tuple(x.key() for x in idx))
        if key in self.b.memo:
            return self.b.memo[key]
        state: TV | None = None
        for i, s in enumerate(opp.prog.stmts):
            if s.lhs.tensor != T:
                continue
            ext = opp.bound.extents[i]
            binding, cs, scatter = self.invert(opp, s, idx, ext)
            if self._never(cs):
                continue  # the statement writes nothing at this index (a concat's other part)
            neutral = NEUTRAL[s.op]
            rhs_vars = [v for v in s.all_vars if v not in binding]
            if s.op == "=":
                if rhs_vars or scatter:
                    raise CodegenError(f"{fmt_loc(opp.op)}'{opp.op.name}': statement '{s.lhs} = ...' assigns "
                                       f"through an index Kitsune cannot invert; no code generation for it")
                val = self.expr(opp, s.rhs, binding, neutral)
                m = self.b.mask(cs if state is not None else self.remask(cs))
                state = self.b.where(m, val, state if state is not None else 0.0) if m else val
                continue
            both = self.reductions.online(opp, i, binding, list(rhs_vars), ext, scatter, idx,
                                          anchor=self.anchor == (id(opp.op), i)) if s.op == "max=" else None
            if both is not None:  # (a sum of exponentials over this maximum, computed with it: its tensor here)
                val, j, total = both
                m = self.b.mask(self.remask(cs))
                self.b.memo[("t", id(opp.op), opp.prog.stmts[j].lhs.tensor, key[3])] = \
                    self.b.where(m, total, 0.0) if m else total
            else:
                val = self.reductions.reduce(opp, s, binding, rhs_vars, ext, scatter, idx,
                                             anchor=self.anchor == (id(opp.op), i))
            if state is None:
                m = self.b.mask(self.remask(cs))
                state = self.b.where(m, val, neutral) if m else val
            else:
                comb = self.arith.combine(s.op, state, val)
                m = self.b.mask(cs)
                state = self.b.where(m, comb, state) if m else comb
        if state is None:
            raise CodegenError(f"{fmt_loc(opp.op)}'{opp.op.name}': nothing defines '{T}'")
        self.b.memo[key] = state
        return state

    @staticmethod
    def _never(cs) -> bool:
        """A condition of ``cs`` is false at every lane (interval arithmetic)."""
        for x, o, c in cs:
            lo, hi = lrange(x)
            if o == "<" and lo is not None and lo >= c or o == ">=" and hi is not None and hi < c:
                return True
        return False

    def invert(self, opp: OpProgram, s, idx, ext):
        """Solve the left side of statement ``s`` at ``idx`` for its index variables: (binding, the conditions
        under which ``idx`` is written, the indirect (scatter) dims)."""
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
        """The index of a read ``acc`` under ``binding`` (indirect dims: the loaded index values)."""
        out = []
        for ix in acc.indices:
            if isinstance(ix, Indirect):
                tv = self.read(opp, ix.access, binding, 0.0)
                if tv.kind == "f":
                    tv = self.to_int(tv, "i64")
                if tv.const is None:  # an index outside its dim sets the error flag (the read is masked)
                    n = self.index_size(opp, acc, len(out))
                    if n is not None:
                        self.gen.emit_index_check(self.b, opp.op, acc, len(out), n, tv, tv.depth)
                out.append(self.b.val_atom(tv) if tv.const is None else lconst(int(tv.const)))
            else:
                out.append(ladd(lconst(ix.const), *(lscale(binding[v], c) for v, c in ix.terms)))
        return tuple(out)

    def index_size(self, opp: OpProgram, acc: Access, d: int) -> int | None:
        shape = tensor_shape(opp.inputs[acc.tensor].type) if acc.tensor in opp.inputs else opp.bound.shapes.get(acc.tensor)
        return shape[d] if shape is not None and d < len(shape) and shape[d] >= 0 else None

    def read(self, opp: OpProgram, acc: Access, binding, neutral: float) -> TV:
        """The read ``acc`` of ``opp``'s program under ``binding`` (an operand, or a tensor of the program)."""
        idx = self.index_lins(opp, acc, binding)
        if acc.tensor in opp.inputs:
            return self.access(opp.inputs[acc.tensor], idx, neutral)
        shape = opp.bound.shapes[acc.tensor]
        tv = self.tensor(opp, acc.tensor, idx)
        cs = self.remask(self.b.conds(idx, shape))
        return self.b.where(self.b.mask(cs), tv, neutral) if cs else tv

    def expr(self, opp, e, binding, neutral) -> TV:
        """Expression ``e`` of ``opp``'s program under ``binding``; reads outside their tensor give ``neutral``."""
        match e:
            case Access():
                return self.read(opp, e, binding, neutral)
            case Num(value=v):
                return TV("", (), 0, "f", float(v))
            case Neg(arg=a):
                x = self.expr(opp, a, binding, neutral)
                if x.const is not None:
                    return TV("", (), 0, x.kind, -x.const)
                return self.b.tmp(f"-{self.b.place(x, x.frame)}", x.frame, x.depth, x.kind)
            case BinOp(op=op, lhs=l, rhs=r):
                if self.right_first(opp, l, r):  # (load order: bench/kernels/NOTES.md section 19)
                    b = self.expr(opp, r, binding, neutral)
                    return self.arith.binop(op, self.expr(opp, l, binding, neutral), b)
                a, b = self.expr(opp, l, binding, neutral), self.expr(opp, r, binding, neutral)
                return self.arith.binop(op, a, b)
            case Call(fn=fn, args=args):
                vals = [self.expr(opp, x, binding, neutral) for x in args]
                return self.arith.call(fn, vals)
            case IVar(name=v):  # an index variable's value
                return self.b.lin_tv(binding[v])
        raise CodegenError(f"cannot generate {e}")

    def plain_read(self, opp, e) -> bool:
        """``e`` is a read of a tensor in memory (an argument of the stage or a popped tile), nothing computed."""
        return isinstance(e, Access) and e.tensor in opp.inputs and self.is_direct(opp.inputs[e.tensor])

    def right_first(self, opp, l, r) -> bool:
        """Whether the right operand of ``l op r`` is evaluated (hence emitted) first:
        in a gemv stage, ``r`` is a plain read (a weight) and ``l`` is not: the load goes out before the other
        operand's arithmetic (the weight before the norm of its input);
        in a contraction stage (gemm, or the evaluator's), ``l`` is a plain read and ``r`` is computed (holds the
        stage's reduction): the load is not issued before the K loop and held through it (a residual)."""
        if self.stage.template == "gemv":
            return self.plain_read(opp, r) and not self.plain_read(opp, l)
        kind = self.stage.op.attributes.get("kind")
        contraction = self.stage.template == "gemm" or (self.stage.template == "generic" and kind is not None
                                                         and kind.data == "contraction")
        return contraction and self.plain_read(opp, l) and not self.plain_read(opp, r) and not isinstance(r, Num)

    def decompose(self, rl: Lin, rvars, ext) -> dict[str, Lin]:
        """The reduction variables ``rvars`` (extents ``ext``) from their flattened index ``rl``, row-major."""
        out = {}
        stride = 1
        for v in reversed(rvars):
            out[v] = lmod(lfloordiv(rl, stride), ext[v]) if len(rvars) > 1 else rl
            stride *= ext[v]
        return out


__all__ = ["OpProgram", "Evaluator"]
