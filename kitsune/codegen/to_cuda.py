"""The ``-t cuda`` code generator: one self-contained CUDA C++ file per gpu_queue program.

Input: a module lowered by ``kitsune-pipeline`` (``mode=dataflow`` or ``mode=bulk-sync``).
Everything target-neutral (global tensors, stages, queues, counter layout, the
epoch protocol) comes from ``kitsune.codegen.plan``; this module only writes C++.

What the file holds, top to bottom:

* helpers: loads / stores converting between the storage type and float (f32,
  bf16, f16, f64, i64 / i32 / i16 / i8, i1), the queue primitives
  (``ld.acquire.gpu`` spin with a watchdog, ``red.release.gpu`` increments);
* ``struct Params``: one device pointer per global tensor and queue storage,
  the counters, the epoch, the error flag and the watchdog;
* ``__device__`` arrays for non-splat constants;
* per stage, one scalar **value function** per body value (and per temporary
  tensor of an op's comprehension program): ``float v(const Params&, i0, i1, ...)``
  computes one element by evaluating the op's tensor-comprehension statements at
  that index (elementwise: substitution; reductions: ``for`` loops from the
  neutral element; reads outside a tensor: the statement's neutral; indirect
  indices: a load of the index tensor; an indirect index on the left: a loop over
  the scatter variables with an equality test; several statements writing one
  tensor: each in order, a later one overwriting or accumulating where it writes).
  Intermediate values are recomputed (no shared memory); loop-invariant operands
  of a reduction are hoisted out of its loop;
* per stage, a ``__device__`` function running the stage's tiles for one
  program id (pops, pushes, stores) and per kernel a ``__global__`` function
  dispatching ``blockIdx.x`` to the stage whose program-id range holds it;
* ``extern "C" int kitsune_launch(void** tensors, int* counters, int* epoch,
  int* err, long long watchdog, cudaStream_t stream)``: the tensors are device
  pointers in the order of the ``// KITSUNE_TENSORS:`` line.

Queue protocol (see ``plan``): the push of tile ``j`` into a queue of capacity
``c`` waits (acquire) until ``freed[j % c] >= (e * uses + j / c) * readers``,
stores the tile into slot ``j % c``, and after ``__syncthreads`` thread 0 does
``__threadfence`` and a release increment of ``filled[j % c]``; the pop of tile
``j`` acquire-spins until ``filled[j % c] >= e * uses + j / c + 1`` and, after
the consumer tile's work, release-increments ``freed[j % c]``. Queue slots are
read with ``__ldcg`` (L2, never a stale L1 line). A watchdog (``watchdog``
spins, 0 = off) sets ``err[0] = max(err[0], qid + 1)`` and stops waiting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import IO

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

from kitsune.codegen.plan import WAIT_CODE, CodegenError, Kernel, Plan, Queue, Stage, build_plan, dtype_key, ident
from kitsune.dialects.graph import GraphOp, fmt_loc
from kitsune.dialects.gpu_queue import PopOp, PushOp, YieldOp
from kitsune.dialects.regions import grid_of, tensor_shape
from kitsune.dialects.values import constant_value
from kitsune.semantics import comprehension as tc
from kitsune.semantics import optable

CTYPE = {"f32": "float", "bf16": "__nv_bfloat16", "f16": "__half", "f64": "double", "i64": "long long",
         "i32": "int", "i16": "short", "i8": "signed char", "i1": "bool"}

_NEUTRAL = {"=": "0.0f", "+=": "0.0f", "*=": "1.0f", "max=": "-INFINITY", "min=": "INFINITY"}
_NEUTRAL_INT = {"=": "0LL", "+=": "0LL", "*=": "1LL", "max=": "LLONG_MIN", "min=": "LLONG_MAX"}

_PRELUDE = r"""#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <limits.h>

// ---------------------------------------------------------------- storage <-> compute conversions
template <typename T> __device__ __forceinline__ float kt_to_f(T v) { return (float)v; }
template <> __device__ __forceinline__ float kt_to_f<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <> __device__ __forceinline__ float kt_to_f<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float kt_to_f<bool>(bool v) { return v ? 1.0f : 0.0f; }
template <typename T> __device__ __forceinline__ long long kt_to_i(T v) { return (long long)kt_to_f(v); }
template <> __device__ __forceinline__ long long kt_to_i<long long>(long long v) { return v; }
template <> __device__ __forceinline__ long long kt_to_i<int>(int v) { return v; }
template <> __device__ __forceinline__ long long kt_to_i<short>(short v) { return v; }
template <> __device__ __forceinline__ long long kt_to_i<signed char>(signed char v) { return v; }
template <> __device__ __forceinline__ long long kt_to_i<bool>(bool v) { return v ? 1 : 0; }

template <typename T, typename V> __device__ __forceinline__ void kt_st(T* p, V v) {
  if constexpr (std::is_same<T, __nv_bfloat16>::value) *p = __float2bfloat16((float)v);
  else if constexpr (std::is_same<T, __half>::value) *p = __float2half((float)v);
  else if constexpr (std::is_same<T, bool>::value) *p = (v != 0);
  else *p = (T)v;
}

// Queue slots are read through L2 (ld.global.cg): never a stale L1 line of a reused slot.
template <typename T> __device__ __forceinline__ T kt_ldq(const T* p) { return __ldcg(p); }
template <> __device__ __forceinline__ bool kt_ldq<bool>(const bool* p) { return *(const volatile bool*)p; }

__device__ __forceinline__ float kt_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// ---------------------------------------------------------------- queue primitives (PTX memory model)
__device__ __forceinline__ int kt_ld_acquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ int kt_ld_relaxed(const int* p) {
  int v;
  asm volatile("ld.relaxed.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void kt_red_release(int* p, int v) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
// Acquire-spin until *p >= target. Watchdog (spins, 0 = off): err[0] = max(err[0], qid + 1), stop waiting;
// a waiter also gives up once another one has set err[0].
__device__ __noinline__ void kt_wait_geq(const int* p, int target, int qid, int* err, long long watchdog) {
  long long spins = 0;
  while (kt_ld_acquire(p) < target) {
    if (watchdog > 0) {
      if (++spins >= watchdog) { atomicMax(err, qid + 1); return; }
      if ((spins & 1023) == 0 && kt_ld_relaxed(err) != 0) return;
    }
    __nanosleep(32);
  }
}
"""


def _flit(v: float, f32: bool = False) -> str:
    """A C float literal; ``f32``: the shortest text that round-trips the float32 value (1e-05, not 9.99e-06)."""
    if f32 and math.isfinite(v):
        v = float(str(np.float32(v)))
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "(-INFINITY)"
    r = repr(float(v))
    if "e" not in r and "." not in r:
        r += ".0"
    return f"{r}f" if not r.startswith("-") else f"({r}f)"


def _ravel(idx: list[str], shape: tuple[int, ...]) -> str:
    """Row-major linear offset of an index into ``shape``."""
    if not shape:
        return "0"
    expr = idx[0]
    for i, d in zip(idx[1:], shape[1:]):
        expr = f"({expr}) * {d}LL + {i}"
    return expr


def _affine_code(ix: tc.Affine) -> str:
    parts = []
    for v, c in ix.terms:
        parts.append(v if c == 1 else f"{c}LL * {v}")
    if ix.const or not parts:
        parts.append(f"{ix.const}LL")
    return " + ".join(parts).replace("+ -", "- ")


def _expr_vars(e: tc.Expr) -> set[str]:
    out: set[str] = set()
    for a in tc._accesses(e):
        out.update(a.vars)
    return out


def _has_access(e: tc.Expr) -> bool:
    return any(True for _ in tc._accesses(e))


@dataclass
class TInfo:
    """A tensor the value functions can read: its function, shape and whether it is integer-valued."""

    fn: str
    shape: tuple[int, ...]
    is_int: bool
    const: str | None = None  # a splat constant: the literal


def _check_static(shape: tuple[int, ...], what) -> tuple[int, ...]:
    if any(d < 0 for d in shape):
        raise CodegenError(f"{what}: dynamic dimensions ({list(shape)}) are not supported by -t cuda; "
                           "specialize the batch size first")
    return shape


class _Gen:
    def __init__(self, plan: Plan):
        self.plan = plan
        self.lines: list[str] = []  # device functions
        self.consts: list[str] = []
        self.global_fns: dict[str, TInfo] = {}  # global tensor / queue storage -> loader
        # buffers an earlier stage of the same kernel writes (temporal dependences): read through L2
        self.awaited = {n for k in plan.kernels for st in k.stages for n in st.awaited}
        self.waits: list[tuple[str, str, str]] = []
        self.nconst = 0
        self.field = {n: f"g_{n}" for n in plan.tensors}
        for q in plan.queues:
            self.field[q.storage] = f"g_{q.storage}"

    def wait_index(self, kernel: str, stage: str, producer: str) -> int:
        """The index of a temporal wait (its watchdog sets err to WAIT_CODE + index)."""
        key = (kernel, stage, producer)
        if key not in self.waits:
            self.waits.append(key)
        return self.waits.index(key)

    # ------------------------------------------------------------ loaders

    def global_loader(self, name: str) -> TInfo:
        if name in self.global_fns:
            return self.global_fns[name]
        t = self.plan.tensors[name]
        shape = _check_static(t.shape, f"tensor {name}")
        is_int = not (t.dtype.startswith("f") or t.dtype == "bf16") and t.dtype != "i1"
        rt = "long long" if is_int else "float"
        conv = "kt_to_i" if is_int else "kt_to_f"
        idx = [f"i{d}" for d in range(len(shape))]
        fn = f"ld_{name}"
        sig = ", ".join(["const Params& P"] + [f"long long {i}" for i in idx])
        self.lines += [f"// global tensor {name} ({t.role}{', ' + t.label if t.label and t.label != name else ''}) "
                       f"{list(shape)} {t.dtype}",
                       f"__device__ __forceinline__ {rt} {fn}({sig}) {{ return {conv}("
                       + (f"kt_ldq(P.{self.field[name]} + {_ravel(idx, shape)})" if name in self.awaited
                          else f"P.{self.field[name]}[{_ravel(idx, shape)}]") + "); }",
                       ""]
        info = TInfo(fn, shape, is_int)
        self.global_fns[name] = info
        return info

    def queue_loader(self, q: Queue) -> TInfo:
        key = "queue:" + q.storage
        if key in self.global_fns:
            return self.global_fns[key]
        shape = _check_static(q.shape, f"queue {q.name}")
        is_int = not (q.dtype.startswith("f") or q.dtype == "bf16") and q.dtype != "i1"
        rt = "long long" if is_int else "float"
        conv = "kt_to_i" if is_int else "kt_to_f"
        r = len(shape)
        idx = [f"i{d}" for d in range(r)]
        fn = f"ldq_{q.storage}"
        sig = ", ".join(["const Params& P"] + [f"long long {i}" for i in idx])
        tile_idx = [f"i{d} / {q.tile[d]}LL" for d in range(r)]
        local = [f"i{d} % {q.tile[d]}LL" for d in range(r)]
        body = [f"// queue \"{q.name}\" (kernel {q.kernel}, id {q.qid}): {list(shape)} {q.dtype} in tiles "
                f"{list(q.tile)}, grid {list(q.grid)}, {q.capacity} slot(s); element -> slot (tile % capacity)",
                f"__device__ __forceinline__ {rt} {fn}({sig}) {{",
                f"  const long long j = {_ravel(tile_idx, q.grid)};",
                f"  const long long off = (j % {q.capacity}LL) * {q.tile_elems}LL + {_ravel(local, q.tile)};",
                f"  return {conv}(kt_ldq(P.{self.field[q.storage]} + off));",
                "}", ""]
        self.lines += body
        info = TInfo(fn, shape, is_int)
        self.global_fns[key] = info
        return info

    def constant(self, op: GraphOp, prefix: str) -> TInfo:
        t = op.results[0].type
        shape = _check_static(tensor_shape(t), f"{fmt_loc(op)}graph.constant")
        arr = np.asarray(constant_value(op.properties["value"]))
        dt = dtype_key(t.get_element_type())
        is_int = not (dt.startswith("f") or dt == "bf16") and dt != "i1"
        flat = arr.reshape(-1)
        if flat.size == 0 or bool(np.all(flat == flat[0])) or (not is_int and bool(np.all(np.isnan(flat)))):
            v = flat[0] if flat.size else 0
            lit = f"{int(v)}LL" if is_int else _flit(float(v), f32=True)
            return TInfo("", shape, is_int, const=lit)
        name = f"kt_const{self.nconst}"
        self.nconst += 1
        if is_int:
            vals = ", ".join(f"{int(x)}LL" for x in flat)
            self.consts.append(f"// {fmt_loc(op)}graph.constant {list(shape)} {dt}")
            self.consts.append(f"__device__ const long long {name}[{flat.size}] = {{{vals}}};")
        else:
            vals = ", ".join(_flit(float(x), f32=True) for x in flat)
            self.consts.append(f"// {fmt_loc(op)}graph.constant {list(shape)} {dt}")
            self.consts.append(f"__device__ const float {name}[{flat.size}] = {{{vals}}};")
        rt = "long long" if is_int else "float"
        idx = [f"i{d}" for d in range(len(shape))]
        fn = f"{prefix}_const{self.nconst - 1}"
        sig = ", ".join(["const Params& P"] + [f"long long {i}" for i in idx])
        self.lines += [f"__device__ __forceinline__ {rt} {fn}({sig}) {{ return {name}[{_ravel(idx, shape)}]; }}", ""]
        return TInfo(fn, shape, is_int)


class _StageGen:
    """Value functions of one stage's body."""

    def __init__(self, gen: _Gen, kernel: Kernel, stage: Stage, prefix: str):
        self.gen = gen
        self.kernel = kernel
        self.stage = stage
        self.prefix = prefix
        self.values: dict[SSAValue, TInfo] = {}
        self.nfn = 0
        pops = {p: q for p, q in stage.pops}
        block = stage.op.body.blocks.first
        for ba in block.args:
            if ba in stage.args:
                self.values[ba] = gen.global_loader(stage.args[ba])
        for op in block.ops:
            if isinstance(op, PopOp):
                if op not in pops:
                    raise CodegenError(f"{fmt_loc(op)}gpu_queue.pop of queue \"{op.queue_name}\": no plan for it")
                self.values[op.result] = gen.queue_loader(pops[op])
            elif isinstance(op, (PushOp, YieldOp)):
                continue
            elif isinstance(op, GraphOp):
                self.graph_op(op)
            else:
                raise CodegenError(f"{fmt_loc(op)}'{op.name}' inside gpu_queue.stage \"{stage.name}\" has no CUDA "
                                   "code generation (only graph ops, push and pop)")

    def fresh(self, what: str) -> str:
        self.nfn += 1
        return f"{self.prefix}_{self.nfn}_{what}"

    # ------------------------------------------------------------ ops

    def graph_op(self, op: GraphOp) -> None:
        od = op.OPDEF
        where = f"{fmt_loc(op)}'{op.name}'"
        for r in op.results:
            if not isinstance(r.type, TensorType):
                raise CodegenError(f"{where}: result is not a tensor")
            dt = dtype_key(r.type.get_element_type())
            _check_static(tensor_shape(r.type), where)
        if od.name == "constant":
            self.values[op.results[0]] = self.gen.constant(op, self.prefix)
            return
        ins = []
        for o in op.operands:
            if o not in self.values:
                raise CodegenError(f"{where}: operand is not defined inside the stage (stages read only their "
                                   "block arguments and popped queues)")
            ins.append(self.values[o])
        if od.name == "reshape":
            self.reshape(op, ins[0])
            return
        if od.semantics is None:
            raise CodegenError(f"{where} has no tensor-comprehension meaning; no CUDA code generation for it")
        try:
            inst, bound = optable.instantiate(od, [i.shape for i in ins], op.attrs())
            prog = tc.parse(inst.text, inst.params)
        except (optable.OpError, tc.TCError) as e:
            raise CodegenError(f"{where}: {e}") from None
        tensors: dict[str, TInfo] = {}
        for name, pos in inst.inputs.items():
            if pos < len(ins):
                tensors[name] = ins[pos]
        res_int = {}
        for name, r in zip(inst.results, op.results):
            dt = dtype_key(r.type.get_element_type())
            res_int[name] = not (dt.startswith("f") or dt == "bf16") and dt != "i1"
        defined = prog.defined()
        for k, s in enumerate(prog.stmts):
            for a in s.accesses():
                later = [j for j in range(k, len(prog.stmts)) if prog.stmts[j].lhs.tensor == a.tensor]
                if a.tensor in defined and later:
                    raise CodegenError(f"{where}: statement '{s.lhs} {s.op} ...' reads {a.tensor}, which a later "
                                       f"statement writes; the CUDA generator evaluates tensors only when complete")
        for name in defined:
            stmts = [(s, bound.extents[k]) for k, s in enumerate(prog.stmts) if s.lhs.tensor == name]
            shape = tuple(bound.shapes[name])
            is_int = res_int.get(name, False)
            fn = self.fresh(f"{op.name.split('.')[1]}_{name}")
            self.value_fn(fn, name, shape, is_int, stmts, tensors, f"{where} tensor {name}",
                          f"{op.name} {name}: " + "; ".join(f"{s.lhs} {s.op} ..." for s, _ in stmts))
            tensors[name] = TInfo(fn, shape, is_int)
        for name, r in zip(inst.results, op.results):
            self.values[r] = tensors[name]

    def reshape(self, op: GraphOp, src: TInfo) -> None:
        out = tuple(tensor_shape(op.results[0].type))
        if math.prod(out) != math.prod(src.shape):
            raise CodegenError(f"{fmt_loc(op)}'graph.reshape' from {list(src.shape)} to {list(out)} changes the size")
        rt = "long long" if src.is_int else "float"
        idx = [f"i{d}" for d in range(len(out))]
        fn = self.fresh("reshape")
        sig = ", ".join(["const Params& P"] + [f"long long {i}" for i in idx])
        lines = [f"// {fmt_loc(op)}graph.reshape {list(src.shape)} -> {list(out)} (row-major view)",
                 f"__device__ __forceinline__ {rt} {fn}({sig}) {{"]
        if src.const is not None:
            lines.append(f"  return {src.const};")
        else:
            lines.append(f"  long long lin = {_ravel(idx, out)};")
            args = []
            for d in reversed(range(len(src.shape))):
                lines.append(f"  const long long j{d} = lin % {src.shape[d]}LL; lin /= {src.shape[d]}LL;")
                args.append(f"j{d}")
            lines.append("  (void)lin;")
            lines.append(f"  return {src.fn}({', '.join(['P'] + list(reversed(args)))});")
        lines += ["}", ""]
        self.gen.lines += lines
        self.values[op.results[0]] = TInfo(fn, out, src.is_int)

    # ------------------------------------------------------------ comprehension -> scalar code

    def value_fn(self, fn: str, name: str, shape, is_int: bool, stmts, tensors: dict[str, TInfo], where: str,
                 comment: str) -> None:
        rt = "long long" if is_int else "float"
        idx = [f"i{d}" for d in range(len(shape))]
        sig = ", ".join(["const Params& P"] + [f"long long {i}" for i in idx])
        body: list[str] = []
        first_op = stmts[0][0].op
        init = (_NEUTRAL_INT if is_int else _NEUTRAL)[first_op]
        body.append(f"  {rt} acc = {init};")
        loops = False
        for k, (s, ext) in enumerate(stmts):
            lines, has_loop = self.stmt_code(s, ext, shape, is_int, tensors, where)
            loops |= has_loop
            body.append(f"  // {s.lhs} {s.op} ...")
            body += ["  " + ln for ln in lines]
        body.append("  return acc;")
        attr = "__noinline__" if loops else "__forceinline__"
        self.gen.lines += [f"// {comment}", f"__device__ {attr} {rt} {fn}({sig}) {{"] + body + ["}", ""]

    def stmt_code(self, s: tc.Stmt, ext: dict[str, int], shape, is_int: bool, tensors, where: str
                  ) -> tuple[list[str], bool]:
        self._cur_ext = ext  # index-variable extents for the static bounds checks of access()
        out: list[str] = ["{"]
        depth = 1
        ind = lambda: "  " * depth  # noqa: E731
        solved: set[str] = set()
        used_dims: set[int] = set()
        lhs_vars = list(s.lhs.vars)
        has_loop = False
        vid = {v: f"v_{v}" for v in s.all_vars}  # C names of index variables

        def acode(ix: tc.Affine) -> str:
            return _affine_code(tc.Affine(tuple((vid[v], c) for v, c in ix.terms), ix.const))

        while True:
            progress = False
            for d, ix in enumerate(s.lhs.indices):
                if d in used_dims or not isinstance(ix, tc.Affine):
                    continue
                unknown = [(v, c) for v, c in ix.terms if v not in solved]
                if len(unknown) != 1:
                    continue
                v, c = unknown[0]
                rest = tc.Affine(tuple((w, cw) for w, cw in ix.terms if w != v), ix.const)
                num = f"i{d}" if not rest.terms and rest.const == 0 else f"i{d} - ({acode(rest)})"
                conds = []
                if c == 1:
                    out.append(f"{ind()}const long long {vid[v]} = {num}; (void){vid[v]};")
                else:
                    out.append(f"{ind()}const long long n_{v} = {num};")
                    out.append(f"{ind()}const long long {vid[v]} = n_{v} / {c}LL; (void){vid[v]};")
                    conds.append(f"n_{v} % {c}LL == 0")
                # range of the solved var: provable when i_d covers exactly [0, ext) through this dim
                provable = c == 1 and not rest.terms and rest.const == 0 and ext[v] >= shape[d]
                if not provable:
                    conds.append(f"{vid[v]} >= 0 && {vid[v]} < {ext[v]}LL")
                if conds:
                    out.append(f"{ind()}if ({' && '.join(conds)}) {{")
                    depth += 1
                solved.add(v)
                used_dims.add(d)
                progress = True
            if all(v in solved for v in lhs_vars):
                break
            if not progress:
                # loop over one unsolved variable: one of a multi-variable dim (largest coefficient) or a scatter var
                cand = None
                for d, ix in enumerate(s.lhs.indices):
                    if d in used_dims or not isinstance(ix, tc.Affine):
                        continue
                    unknown = [(v, c) for v, c in ix.terms if v not in solved]
                    if len(unknown) > 1:
                        cand = max(unknown, key=lambda vc: abs(vc[1]))[0]
                        break
                if cand is None:
                    cand = next(v for v in lhs_vars if v not in solved)
                out.append(f"{ind()}for (long long {vid[cand]} = 0; {vid[cand]} < {ext[cand]}LL; ++{vid[cand]}) {{")
                depth += 1
                solved.add(cand)
                has_loop = True
        # the remaining lhs dims: equality tests (constants, scatter indices, dims of looped vars)
        for d, ix in enumerate(s.lhs.indices):
            if d in used_dims:
                continue
            if isinstance(ix, tc.Affine):
                if not ix.terms and ix.const == 0 and shape[d] == 1:
                    continue
                code = acode(ix)
            else:
                code = self.index_code(ix, s, tensors, vid, where)
            out.append(f"{ind()}if (({code}) == i{d}) {{")
            depth += 1
        # hoist loop-invariant operands of a reduction
        red = list(s.reduction_vars)
        hoisted: dict[tc.Expr, str] = {}
        if red:
            pre: list[str] = []
            self._hoist(s.rhs, set(red), hoisted, pre, s, tensors, vid, where)
            out += [ind() + ln for ln in pre]
            for v in red:
                out.append(f"{ind()}for (long long {vid[v]} = 0; {vid[v]} < {ext[v]}LL; ++{vid[v]}) {{")
                depth += 1
            has_loop = True
        code, cint = self.expr(s.rhs, s, tensors, vid, where, hoisted)
        if is_int and not cint:
            code = f"(long long)({code})"
        elif not is_int and cint:
            code = f"(float)({code})"
        if s.op == "=":
            out.append(f"{ind()}acc = {code};")
        elif s.op == "+=":
            out.append(f"{ind()}acc += {code};")
        elif s.op == "*=":
            out.append(f"{ind()}acc *= {code};")
        elif s.op in ("max=", "min="):
            f = ("max" if s.op == "max=" else "min") if is_int else ("fmaxf" if s.op == "max=" else "fminf")
            out.append(f"{ind()}acc = {f}(acc, {code});")
        else:
            raise CodegenError(f"{where}: unknown assignment '{s.op}'")
        while depth > 0:
            depth -= 1
            out.append(f"{'  ' * depth}}}")
        return out, has_loop

    def _hoist(self, e: tc.Expr, red: set[str], hoisted: dict, pre: list[str], s, tensors, vid, where) -> None:
        if isinstance(e, tc.Num):
            return
        if _has_access(e) and not (_expr_vars(e) & red):
            if e not in hoisted:
                code, is_int = self.expr(e, s, tensors, vid, where, hoisted)
                h = f"h{len(hoisted)}"
                pre.append(f"const {'long long' if is_int else 'float'} {h} = {code};")
                hoisted[e] = (h, is_int)
            return
        match e:
            case tc.Call(args=args):
                for a in args:
                    self._hoist(a, red, hoisted, pre, s, tensors, vid, where)
            case tc.BinOp(lhs=l, rhs=r):
                self._hoist(l, red, hoisted, pre, s, tensors, vid, where)
                self._hoist(r, red, hoisted, pre, s, tensors, vid, where)
            case tc.Neg(arg=a):
                self._hoist(a, red, hoisted, pre, s, tensors, vid, where)

    def index_code(self, ix: tc.Indirect, s, tensors, vid, where) -> str:
        code, is_int = self.access(ix.access, s, tensors, vid, where, "0LL", {})
        return code if is_int else f"(long long)({code})"

    def access(self, a: tc.Access, s: tc.Stmt, tensors: dict[str, TInfo], vid, where, neutral: str,
               hoisted) -> tuple[str, bool]:
        t = tensors.get(a.tensor)
        if t is None:
            raise CodegenError(f"{where}: tensor {a.tensor} is read but not defined")
        if t.const is not None:
            return t.const, t.is_int
        if len(a.indices) != len(t.shape):
            raise CodegenError(f"{where}: '{a}' has {len(a.indices)} indices, {a.tensor} has rank {len(t.shape)}")
        codes, conds = [], []
        for d, ix in enumerate(a.indices):
            size = t.shape[d]
            if isinstance(ix, tc.Affine):
                code = _affine_code(tc.Affine(tuple((vid[v], c) for v, c in ix.terms), ix.const))
                lo = ix.const + sum(c * (self._ext(s, v) - 1) for v, c in ix.terms if c < 0)
                hi = ix.const + sum(c * (self._ext(s, v) - 1) for v, c in ix.terms if c > 0)
                if not (lo >= 0 and hi < size):
                    conds.append(f"(unsigned long long)({code}) < {size}ULL")
            else:
                code = self.index_code(ix, s, tensors, vid, where)
                conds.append(f"(unsigned long long)({code}) < {size}ULL")
            codes.append(code)
        call = f"{t.fn}({', '.join(['P'] + codes)})"
        if conds:
            nv = neutral
            if t.is_int and neutral in _NEUTRAL.values():
                nv = {"0.0f": "0LL", "1.0f": "1LL", "-INFINITY": "LLONG_MIN", "INFINITY": "LLONG_MAX"}[neutral]
            return f"({' && '.join(conds)} ? {call} : {nv})", t.is_int
        return call, t.is_int

    def _ext(self, s: tc.Stmt, v: str) -> int:
        return self._cur_ext[v]  # the extents of the statement being generated

    def expr(self, e: tc.Expr, s: tc.Stmt, tensors, vid, where, hoisted) -> tuple[str, bool]:
        if e in hoisted:
            return hoisted[e]
        neutral = _NEUTRAL[s.op]
        match e:
            case tc.Access():
                return self.access(e, s, tensors, vid, where, neutral, hoisted)
            case tc.Num(value=v):
                return _flit(v), False
            case tc.IVar(name=n):  # an index variable's value
                return f"({vid[n]})", True
            case tc.Neg(arg=a):
                c, i = self.expr(a, s, tensors, vid, where, hoisted)
                return f"(-{c})", i
            case tc.BinOp(op=op, lhs=l, rhs=r):
                lc, li = self.expr(l, s, tensors, vid, where, hoisted)
                rc, ri = self.expr(r, s, tensors, vid, where, hoisted)
                if op in ("+", "-", "*") and li and ri:
                    return f"({lc} {op} {rc})", True
                if op in ("==", "!=", "<", "<=", ">", ">="):
                    if li != ri:
                        lc, rc = (f"(float)({lc})" if li else lc), (f"(float)({rc})" if ri else rc)
                    return f"(({lc} {op} {rc}) ? 1.0f : 0.0f)", False
                lc = f"(float)({lc})" if li else lc
                rc = f"(float)({rc})" if ri else rc
                if op == "**":
                    return f"powf({lc}, {rc})", False
                if op in ("+", "-", "*", "/"):
                    return f"({lc} {op} {rc})", False
                raise CodegenError(f"{where}: no CUDA code for operator '{op}'")
            case tc.Call(fn=fn, args=args):
                cs = [self.expr(a, s, tensors, vid, where, hoisted) for a in args]
                if fn in ("max", "min") and all(i for _, i in cs):
                    return f"{fn}({cs[0][0]}, {cs[1][0]})", True
                if fn == "select":
                    (cc, ci), (ac, ai), (bc, bi) = cs
                    if ai and bi:
                        return f"(({cc}) != 0 ? {ac} : {bc})", True
                    ac = f"(float)({ac})" if ai else ac
                    bc = f"(float)({bc})" if bi else bc
                    return f"(({cc}) != 0 ? {ac} : {bc})", False
                fl = [f"(float)({c})" if i else c for c, i in cs]
                cfn = {"exp": "expf", "log": "logf", "sqrt": "sqrtf", "rsqrt": "rsqrtf", "tanh": "tanhf",
                       "erf": "erff", "sigmoid": "kt_sigmoid", "abs": "fabsf", "max": "fmaxf",
                       "min": "fminf", "sin": "sinf", "cos": "cosf", "trunc": "truncf", "floor": "floorf"}.get(fn)
                if cfn is None:
                    raise CodegenError(f"{where}: no CUDA code for function '{fn}'")
                return f"{cfn}({', '.join(fl)})", False
        raise CodegenError(f"{where}: no CUDA code for expression {e!r}")


# ---------------------------------------------------------------- stage and kernel functions


def _unravel_lines(var: str, grid: tuple[int, ...], names: list[str], indent: str) -> list[str]:
    """c_d of a row-major linear index ``var`` over ``grid``."""
    if not grid:
        return []
    out = [f"{indent}long long rem_{var} = {var};"]
    for d in reversed(range(len(grid))):
        out.append(f"{indent}const long long {names[d]} = rem_{var} % {grid[d]}LL; rem_{var} /= {grid[d]}LL;")
    out.append(f"{indent}(void)rem_{var};")
    return out


def _counter(kernel: Kernel, q: Queue, which: str, slot: str) -> str:
    """A slot counter of queue ``q`` of ``kernel`` (the plan counts them from the kernel's ticket)."""
    base = kernel.ticket + q.counter_base + (0 if which == "filled" else q.capacity)
    return f"P.counters + {base} + ({slot})"


def _uses(q: Queue, slot: str) -> str:
    return f"(({q.ntiles}LL - ({slot}) + {q.capacity - 1}LL) / {q.capacity}LL)"


def _stage_fn(gen: _Gen, kernel: Kernel, st: Stage, fname: str, sg: _StageGen) -> list[str]:
    r = len(st.grid)
    L: list[str] = []
    L.append(f"// stage \"{st.name}\" of kernel \"{kernel.name}\": programs [{st.lo}, {st.hi}), tile {list(st.tile)}, "
             f"grid {list(st.grid)} ({st.ntiles} tiles)")
    for p, q in st.pops:
        L.append(f"//   pops queue \"{q.name}\" (id {q.qid}, from \"{q.producer}\") relation \"{q.relation}\", "
                 f"capacity {q.capacity}, {q.readers} reader(s) per tile")
    for v, q in st.pushes:
        L.append(f"//   pushes queue \"{q.name}\" (id {q.qid}, to \"{q.consumer}\"), capacity {q.capacity}")
    for v, buf, whole in st.stores:
        L.append(f"//   stores {buf}" + (" (whole, by the program of tile 0)" if whole else " (tile by tile)"))
    L.append(f"__device__ __noinline__ void {fname}(const Params& P, int pid, int e) {{")
    if st.waits:  # temporal dependences: every program of each producer stage has finished
        L.append("  if (threadIdx.x == 0) {")
        for i, (c, n, name) in enumerate(st.waits):
            L.append(f"    kt_wait_geq(P.counters + {kernel.ticket + c}, (int)(((long long)e + 1) * {n}LL), "
                     f"{WAIT_CODE - 1 + gen.wait_index(kernel.name, st.name, name)}, P.err, P.watchdog);  "
                     f"// stage \"{name}\"")
        L.append("  }")
        L.append("  __syncthreads();")
    L.append(f"  for (long long t = pid - {st.lo}; t < {st.ntiles}LL; t += {st.programs}) {{  // this program's tiles")
    cn = [f"c{d}" for d in range(r)]
    L += _unravel_lines("t", st.grid, cn, "    ")
    # ---- pops: wait on the producer tiles this tile needs
    for p, q in st.pops:
        L.append(f"    // pop \"{q.name}\" ({q.relation}): acquire-wait on filled[slot] >= e * uses(slot) + j / cap + 1")
        L.append("    if (threadIdx.x == 0) {")
        L += _pop_tiles(q, st, cn, "      ", lambda ind: [
            f"{ind}const long long s = j % {q.capacity}LL;",
            f"{ind}kt_wait_geq({_counter(kernel, q, 'filled', 's')}, "
            f"(int)((long long)e * {_uses(q, 's')} + j / {q.capacity}LL + 1), {q.qid}, P.err, P.watchdog);"])
        L.append("    }")
    if st.pops:
        L.append("    __syncthreads();")
    # ---- pushes: wait until the slot is freed
    for v, q in st.pushes:
        L.append(f"    // push \"{q.name}\" tile t: wait until slot t % {q.capacity} is freed "
                 f"(freed >= (e * uses + t / cap) * {q.readers})")
        L.append("    if (threadIdx.x == 0) {")
        L.append(f"      const long long s = t % {q.capacity}LL;")
        L.append(f"      kt_wait_geq({_counter(kernel, q, 'freed', 's')}, (int)(((long long)e * {_uses(q, 's')} + "
                 f"t / {q.capacity}LL) * {q.readers}LL), {q.qid}, P.err, P.watchdog);")
        L.append("    }")
    if st.pushes:
        L.append("    __syncthreads();")
    # ---- per-tile outputs, grouped by (value, tile). A stored result of another shape has its own tile
    # (plan.store_tiles) with as many tiles as the stage: tile t of it is computed by this program too.
    dests: dict[tuple[SSAValue, tuple[int, ...]], list[tuple[str, object]]] = {}
    store_tiles = getattr(st, "store_tiles", {}) or {}
    for v, buf, whole in st.stores:
        if not whole:
            dests.setdefault((v, tuple(store_tiles.get(buf, st.tile))), []).append(("buf", buf))
    for v, q in st.pushes:
        dests.setdefault((v, tuple(q.tile)), []).append(("queue", q))
    for (v, tile), ds in dests.items():
        info = sg.values[v]
        shape = info.shape
        rr = len(shape)
        if len(tile) != rr:
            raise CodegenError(f"{fmt_loc(st.op)}gpu_queue.stage \"{st.name}\": tile {list(tile)} does not fit a "
                               f"value of shape {list(shape)}")
        grid = grid_of(shape, tile)
        telems = math.prod(tile) if tile else 1
        if tuple(tile) == tuple(st.tile) and tuple(grid) == tuple(st.grid):
            cv = cn
        else:  # the result's own tile grid: unravel t over it
            cv = [f"c{len(dests)}_{d}" for d in range(rr)]
            L.append(f"    // {', '.join(str(d) for k, d in ds)}: tile {list(tile)}, grid {list(grid)}")
            L += ["    {"] + _unravel_lines("t", grid, cv, "      ")
        L.append(f"    // tile t of {', '.join(d if k == 'buf' else 'queue ' + d.name for k, d in ds)}")
        L.append(f"    for (long long x = threadIdx.x; x < {telems}LL; x += blockDim.x) {{")
        ln = [f"l{d}" for d in range(rr)]
        L += _unravel_lines("x", tile, ln, "      ")
        gi = [f"g{d}" for d in range(rr)]
        for d in range(rr):
            L.append(f"      const long long g{d} = {cv[d]} * {tile[d]}LL + l{d};")
        if rr:
            L.append("      if (" + " || ".join(f"g{d} >= {shape[d]}LL" for d in range(rr)) + ") continue;")
        rt = "long long" if info.is_int else "float"
        val = info.const if info.const is not None else f"{info.fn}({', '.join(['P'] + gi)})"
        L.append(f"      const {rt} val = {val};")
        for kind, d in ds:
            if kind == "buf":
                L.append(f"      kt_st(P.{gen.field[d]} + {_ravel(gi, shape)}, val);")
            else:
                L.append(f"      kt_st(P.{gen.field[d.storage]} + (t % {d.capacity}LL) * {d.tile_elems}LL + "
                         f"{_ravel(ln, d.tile)}, val);")
        L.append("    }")
        if cv is not cn:
            L.append("    }")
    for v, q in st.pushes:
        L.append(f"    // publish tile t of queue \"{q.name}\": release-increment filled[t % {q.capacity}]")
        L.append("    __syncthreads();")
        L.append(f"    if (threadIdx.x == 0) {{ __threadfence(); kt_red_release({_counter(kernel, q, 'filled', f't % {q.capacity}LL')}, 1); }}")
    # ---- whole stores
    for v, buf, whole in st.stores:
        if not whole:
            continue
        info = sg.values[v]
        shape = info.shape
        n = math.prod(shape) if shape else 1
        L.append(f"    // {buf} {list(shape)}: written whole by the program of tile 0")
        L.append("    if (t == 0) {")
        L.append(f"      for (long long x = threadIdx.x; x < {n}LL; x += blockDim.x) {{")
        wi = [f"w{d}" for d in range(len(shape))]
        L += _unravel_lines("x", shape, wi, "        ")
        rt = "long long" if info.is_int else "float"
        val = info.const if info.const is not None else f"{info.fn}({', '.join(['P'] + wi)})"
        L.append(f"        const {rt} val = {val};")
        L.append(f"        kt_st(P.{gen.field[buf]} + x, val);")
        L.append("      }")
        L.append("    }")
    # ---- free the popped tiles
    if st.pops:
        L.append("    __syncthreads();")
        L.append("    if (threadIdx.x == 0) {")
        for p, q in st.pops:
            L.append(f"      // free the tiles of \"{q.name}\" this tile read")
            L += _pop_tiles(q, st, cn, "      ", lambda ind: [
                f"{ind}kt_red_release({_counter(kernel, q, 'freed', f'j % {q.capacity}LL')}, 1);"])
        L.append("    }")
    elif not st.pushes:
        L.append("    __syncthreads();")
    L.append("  }")
    if st.done is not None:  # a temporal producer: this program has finished
        L.append("  __syncthreads();")
        L.append(f"  if (threadIdx.x == 0) {{ __threadfence(); kt_red_release(P.counters + {kernel.ticket + st.done}, 1); }}")
    L.append("}")
    L.append("")
    return L


def _pop_tiles(q: Queue, st: Stage, cn: list[str], ind: str, body) -> list[str]:
    """Loop over the queue tiles ``j`` consumer tile (cn) needs under the queue's relation."""
    out = []
    if q.relation == "tile":
        out.append(f"{ind}{{ const long long j = t;")
        out += body(ind + "  ")
        out.append(f"{ind}}}")
    elif q.relation == "rows":
        qg = q.grid
        band = _ravel(cn[:-1] + ["0"], qg) if len(qg) > 1 else "0"
        out.append(f"{ind}for (long long jj = 0; jj < {qg[-1]}LL; ++jj) {{ const long long j = {band} + jj;")
        out += body(ind + "  ")
        out.append(f"{ind}}}")
    else:
        out.append(f"{ind}for (long long j = 0; j < {q.ntiles}LL; ++j) {{")
        out += body(ind + "  ")
        out.append(f"{ind}}}")
    return out


def _fold_tail(st: Stage, fst: Stage, fn: str) -> list[str]:
    """After a partial's tiles: per tile, count in on its group's counter (the stores performed first: barrier,
    fence); the last arrival of a group resets its counter and runs the folded combine's tiles of the group."""
    _, parts, k = fst.fold
    return [f"    // \"{fst.name}\" folded: the program storing the last of a group's {parts} tiles runs the "
            f"group's {k} tile(s)",
            f"    for (long long t = pid - {st.lo}; t < {st.ntiles}LL; t += {st.programs}) {{",
            "      __shared__ int kt_last;",
            "      __syncthreads();",
            "      if (threadIdx.x == 0) {",
            "        __threadfence();",
            f"        int* c = P.counters + {fst.fold_base} + t / {parts}LL;",
            f"        kt_last = atomicAdd(c, 1) == {parts - 1};",
            "        if (kt_last) { __threadfence(); *c = 0; }",
            "      }",
            "      __syncthreads();",
            f"      if (kt_last) for (int j = 0; j < {k}; ++j) {fn}(P, (int)(t / {parts}LL * {k} + j), e);",
            "    }"]


def generate_cuda(module: ModuleOp, capacity: str = "ir") -> str:
    """The CUDA C++ text of @main's gpu_queue.program (raises CodegenError)."""
    plan = build_plan(module, capacity, splits=False)  # the scalar reference runs each tile whole
    gen = _Gen(plan)
    stage_fns: list[list[str]] = []
    kernels_code: list[str] = []
    for ki, k in enumerate(plan.kernels):
        names = []
        for si, st in enumerate(k.stages):
            prefix = f"{k.name}_s{si}"
            sg = _StageGen(gen, k, st, ident(prefix))
            fname = ident(f"stage_{k.name}_{st.name}")
            stage_fns.append(_stage_fn(gen, k, st, fname, sg))
            names.append((st, fname))
        kname = ident(f"kitsune_{k.name}")
        threads = 32 * k.warps
        kl = [f"// kernel \"{k.name}\": grid {k.grid} x {threads} threads; stages "
              + ", ".join(f"\"{st.name}\" [{st.lo}, {st.hi})" for st, _ in names),
              f"__global__ void __launch_bounds__({threads}) {kname}(Params P) {{",
              "  const int pid = blockIdx.x;",
              "  const int e = *(const volatile int*)P.epoch;  // run number (epoch of the queue counters)",
              "  (void)e;"]
        for st, fname in names:
            if st.fold is not None:
                continue  # run by its partial's programs (below)
            tails = [(fst, fn) for fst, fn in names if fst.fold is not None and fst.fold[0] == st.name]
            if not tails:
                kl.append(f"  if (pid >= {st.lo} && pid < {st.hi}) {{ {fname}(P, pid, e); return; }}")
                continue
            kl.append(f"  if (pid >= {st.lo} && pid < {st.hi}) {{")
            kl.append(f"    {fname}(P, pid, e);")
            for fst, fn in tails:
                kl += _fold_tail(st, fst, fn)
            kl.append("    return;")
            kl.append("  }")
        kl += ["}", ""]
        kernels_code.append("\n".join(kl))
    order = list(plan.args) + [n for n in plan.tensors if n not in plan.args] + [q.storage for q in plan.queues]
    ctypes = {n: CTYPE[t.dtype] for n, t in plan.tensors.items()}
    ctypes.update({q.storage: CTYPE[q.dtype] for q in plan.queues})
    out: list[str] = []
    out.append("// Generated by kitsune -t cuda: one gpu_queue program (persistent kernels, SM-partitioned stages,")
    out.append("// tile queues in global memory with epoch-based acquire/release counters).")
    out.append("// KITSUNE_TENSORS: " + ",".join(order))
    for n in order:
        if n in plan.tensors:
            t = plan.tensors[n]
            out.append(f"// KITSUNE_TENSOR {n} {t.role} {t.dtype} {'x'.join(map(str, t.shape)) or 'scalar'}"
                       + (f" ({t.label})" if t.label and t.label != n else ""))
        else:
            q = next(q for q in plan.queues if q.storage == n)
            out.append(f"// KITSUNE_TENSOR {n} queue {q.dtype} {q.storage_elems}")
    out.append("// KITSUNE_OUTPUTS: " + ",".join(plan.outputs))
    out.append(f"// KITSUNE_COUNTERS: {plan.counters}")
    ticket = {k.name: k.ticket for k in plan.kernels}  # a kernel's queue counters count from its ticket
    for q in plan.queues:
        base = ticket[q.kernel] + q.counter_base
        out.append(f"// KITSUNE_QUEUE {q.qid} {q.kernel}/{q.name}: {q.producer} -> {q.consumer} relation {q.relation} "
                   f"tile {list(q.tile)} grid {list(q.grid)} capacity {q.capacity} readers {q.readers} "
                   f"counters filled@{base} freed@{base + q.capacity}")
    out.append("// KITSUNE_KERNELS: " + ", ".join(f"{k.name} grid {k.grid} threads {32 * k.warps}" for k in plan.kernels))
    out.append("#include <type_traits>")
    out.append(_PRELUDE)
    out.append("// ---------------------------------------------------------------- parameters")
    out.append("struct Params {")
    for n in order:
        out.append(f"  {ctypes[n]}* {gen.field[n]};")
    out.append("  int* counters;      // filled / freed counters of every queue")
    out.append("  const int* epoch;   // run number")
    out.append("  int* err;           // err[0] = max(qid + 1) of a queue wait the watchdog stopped")
    out.append("  long long watchdog; // spins before a wait gives up (0 = never)")
    out.append("};")
    out.append("")
    if gen.consts:
        out.append("// ---------------------------------------------------------------- constants")
        out += gen.consts
        out.append("")
    out.append("// ---------------------------------------------------------------- value functions")
    out += gen.lines
    out.append("// ---------------------------------------------------------------- stages")
    for sf in stage_fns:
        out += sf
    out.append("// ---------------------------------------------------------------- kernels")
    out += kernels_code
    out.append("// ---------------------------------------------------------------- host launcher")
    out.append(f"extern \"C\" int kitsune_num_tensors(void) {{ return {len(order)}; }}")
    out.append(f"extern \"C\" int kitsune_num_counters(void) {{ return {plan.counters}; }}")
    out.append("extern \"C\" int kitsune_launch(void** tensors, int* counters, int* epoch, int* err, "
               "long long watchdog, cudaStream_t stream) {")
    out.append("  Params P;")
    for i, n in enumerate(order):
        out.append(f"  P.{gen.field[n]} = ({ctypes[n]}*)tensors[{i}];  // {n}")
    out.append("  P.counters = counters;")
    out.append("  P.epoch = epoch;")
    out.append("  P.err = err;")
    out.append("  P.watchdog = watchdog;")
    out.append("  cudaError_t rc;")
    for k in plan.kernels:
        out.append(f"  {ident_k(k)}<<<{k.grid}, {32 * k.warps}, 0, stream>>>(P);")
        out.append("  rc = cudaGetLastError();")
        out.append("  if (rc != cudaSuccess) return (int)rc;")
    out.append("  return (int)cudaGetLastError();")
    out.append("}")
    return "\n".join(out) + "\n"


def ident_k(k: Kernel) -> str:
    return ident(f"kitsune_{k.name}")


def emit_cuda(module: ModuleOp, output_stream: IO[str]) -> None:
    """``kitsune-opt -t cuda``: write the CUDA C++ text of the module's program."""
    output_stream.write(generate_cuda(module))


__all__ = ["generate_cuda", "emit_cuda", "CodegenError"]
