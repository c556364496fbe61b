"""torch.export -> graph dialect.

    module, weights = import_module(model, example_inputs, dynamic_shapes=None)
    module, weights = import_exported(torch.export.export(model, example_inputs))

The result is a ``builtin.module`` holding ``func.func @main`` in the graph
dialect, and a dict ``torch name -> numpy array`` of the weights (saved by the
CLI as an ``.npz`` side file, never embedded in the IR).

Decompositions
--------------
The exported program is lowered with ``torch.export.default_decompositions()``
(core ATen) *minus* the ops the graph dialect has natively, which are better
kept whole for fusion and for the cost model (``KEPT_OPS``):
``scaled_dot_product_attention`` (-> ``graph.attention``, GQA via
``enable_gqa``), ``linear`` (-> ``graph.linear``), ``layer_norm``
(-> ``graph.layer_norm``), ``rms_norm``, ``gelu``, ``silu`` and ``matmul``
(-> ``graph.matmul``, batched / broadcast). Everything else arrives as core
ATen and is mapped op by op (``HANDLERS``); an ATen op needing several graph
ops emits several (e.g. ``addmm`` -> ``linear`` when its second matrix is a
transposed weight, else ``matmul`` + ``add``; ``select`` -> ``slice`` +
``reshape``; ``any.dim`` -> ``ne``/``cast``/``amax``/``gt``). Ops that only
produce values for other ops statically (``arange`` offsets of
``_embedding_bag``) are folded; dead ops are removed at the end.

Arguments
---------
Parameters, buffers and lifted constants become ``@main`` arguments, in the
graph signature's order, then the user inputs. Each argument carries
``{kitsune.name = "<torch name>", kitsune.kind = "parameter" | "buffer" |
"constant" | "input"}``; user inputs are named by their placeholder names.
Results carry ``kitsune.name`` (the output node's name). bf16 weights are
stored as float32 arrays holding bf16 values (numpy has no bf16); the
interpreter rounds them on entry. Scalars become rank-0 ``graph.constant``
operands of the other operand's element type. ``full`` / ``zeros`` /
``arange`` with static arguments become (splat) constants.

Locations
---------
Every op carries ``loc("file.py":line:col)``: the innermost frame of the FX
node's ``stack_trace`` (the user's source line). Print with
``module_to_text`` (debug info on) to keep them in the text.

Dynamic shapes
--------------
Symbolic dims (``torch.export.Dim``) become ``?`` in tensor types; ``view``
/ ``reshape`` take their result type from the FX metadata.

Unsupported ops
---------------
Every unsupported op in the graph is collected and reported at once by
:class:`UnsupportedOpsError` (aten op + overload + reason + source line).
"""

from __future__ import annotations

import linecache
import math
import operator
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Block, Region, SSAValue

from kitsune.dialects import graph
from kitsune.dialects.values import splat_attr

aten = torch.ops.aten

__all__ = [
    "KitsuneImportError",
    "UnsupportedOpsError",
    "ExportError",
    "export",
    "import_module",
    "import_exported",
    "import_graph",
    "ArgSpec",
    "OutputPlan",
    "decomposition_table",
    "module_to_text",
    "save_weights",
    "arguments",
    "op_counts",
    "rel_err",
    "demo",
    "KEPT_OPS",
    "HANDLERS",
]


# ------------------------------------------------------------------ errors


class KitsuneImportError(Exception):
    """The model cannot be imported (base class of the importer's errors)."""


@dataclass
class Unsupported:
    op: str  # e.g. "aten.cumsum.default"
    reason: str
    loc: str  # "file.py:12" or ""
    source: str = ""  # the source line's text

    def __str__(self) -> str:
        where = f"{self.loc}: " if self.loc else ""
        src = f"\n    {self.source}" if self.source else ""
        return f"{where}error: unsupported op {self.op}: {self.reason}{src}"


class UnsupportedOpsError(KitsuneImportError):
    """Lists every unsupported op of the graph (op, overload, user source line)."""

    def __init__(self, items: list[Unsupported]):
        self.items = items
        # each distinct op (and reason) once, at its first location, with how often it occurs
        groups: dict[tuple[str, str], list[Unsupported]] = {}
        for it in items:
            groups.setdefault((it.op, it.reason), []).append(it)
        n = len(groups)
        lines = [f"{n} unsupported op{'s' if n != 1 else ''} in the exported graph:"]
        for its in groups.values():
            more = len({i.loc for i in its}) - 1
            lines.append(str(its[0]) + (f"\n    (and {more} more place{'s' if more != 1 else ''})" if more > 0 else ""))
        super().__init__("\n".join(lines))


class _Skip(Exception):
    """A handler's 'this instance is unsupported' (with a reason)."""


# ------------------------------------------------------------- decompositions

KEPT_OPS = [
    aten.scaled_dot_product_attention.default,
    aten.linear.default,
    aten.layer_norm.default,
    aten.gelu.default,
    aten.silu.default,
    aten.matmul.default,
    aten.index_add.default,  # (decomposed it is an index_put, whose eager form accumulates differently)
]
if hasattr(aten, "rms_norm"):
    KEPT_OPS.append(aten.rms_norm.default)
# training graphs (aot_autograd's backward): the derivative ops the op table declares whole
# (kitsune/semantics/grad_ops.py) or maps onto its scatter (embedding_dense_backward -> index_add)
KEPT_OPS += [
    aten.threshold_backward.default,
    aten.gelu_backward.default,
    aten.sigmoid_backward.default,
    aten.tanh_backward.default,
    aten.silu_backward.default,
    aten._softmax_backward_data.default,
    aten._log_softmax_backward_data.default,
    aten.native_layer_norm_backward.default,
    aten.embedding_dense_backward.default,
    aten.max_pool2d_with_indices_backward.default,
]


def decomposition_table() -> dict:
    """Core-ATen decompositions minus the ops the graph dialect keeps whole."""
    try:
        tbl = torch.export.default_decompositions()
    except AttributeError:  # pragma: no cover - older torch
        from torch._decomp import core_aten_decompositions

        tbl = core_aten_decompositions()
    for op in KEPT_OPS:
        tbl.pop(op, None)
    return tbl


# ------------------------------------------------------------------ types

_ELEM = {
    torch.float32: Float32Type,
    torch.float16: Float16Type,
    torch.bfloat16: BFloat16Type,
    torch.float64: Float64Type,
}
_INT = {torch.int64: 64, torch.int32: 32, torch.int16: 16, torch.int8: 8, torch.bool: 1}


def elem_type(dt: torch.dtype):
    if dt in _ELEM:
        return _ELEM[dt]()
    if dt in _INT:
        return IntegerType(_INT[dt])
    raise _Skip(f"element type {dt} is not supported")


def _dim(d) -> int:
    if isinstance(d, int):
        return d
    try:
        v = d.node.maybe_as_int()
        if v is not None:
            return int(v)
    except Exception:  # noqa: BLE001
        pass
    return DYNAMIC_INDEX


def tensor_type(val) -> TensorType:
    return TensorType(elem_type(val.dtype), [_dim(d) for d in val.shape])


def _shape(v: SSAValue) -> list[int]:
    return list(v.type.get_shape())


def _is_float(t) -> bool:
    return isinstance(t, (Float32Type, Float16Type, BFloat16Type, Float64Type))


# ------------------------------------------------------------------ locations

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def _location(node: torch.fx.Node) -> tuple[str, int, int, str] | None:
    st = node.meta.get("stack_trace")
    if not st:
        return None
    frames = _FRAME.findall(st)
    if not frames:
        return None
    frames = [f for f in frames if not f[0].startswith("<")] or frames  # <eval_with_key>: FX-generated code
    user = [f for f in frames if not f[0].startswith(_TORCH_DIR)]
    file, line = (user or frames)[-1]
    line = int(line)
    text = linecache.getline(file, line)
    col = len(text) - len(text.lstrip()) + 1 if text.strip() else 1
    return file, line, col, text.strip()


# ------------------------------------------------------------------ importer


@dataclass
class _Sym:
    """A symbolic int (sym_size of a dynamic dim)."""

    node: Any


@dataclass
class ArgSpec:
    """What a placeholder of the imported FX graph is: its kind (parameter | buffer | constant | input, or
    value: a non-tensor argument with a known ``value``, or static: a tensor whose ``value`` (numpy) is known at
    import time -- no argument, a constant where an op reads it, its value where a handler needs it static),
    the torch name it carries (``kitsune.name``) and, for weights, the tensor (None: no value)."""

    kind: str
    name: str
    value: Any = None


@dataclass
class _StaticArr:
    """A tensor value known at import time (an op's helper result that depends only on static arguments)."""

    value: np.ndarray


@dataclass
class OutputPlan:
    """How the FX graph's flattened outputs come from the imported function (``import_graph(plan=True)``):
    per output ``("result", k)`` (the function's result k; several outputs may share one),
    ``("input", i)`` (placeholder i itself, e.g. a saved parameter), ``("static", array)`` (a value known at
    import time: an ``arange``, the helper results of an embedding bag with static offsets) or
    ``("none",)``."""

    items: list[tuple]


class _Importer:
    def __init__(self, graph: torch.fx.Graph, specs: dict[str, ArgSpec], with_weights: bool = True,
                 bad_outputs: Sequence[Unsupported] = (), torch_weights: bool = False):
        self.graph = graph
        self.specs = specs  # placeholder name -> ArgSpec; a placeholder not in it is a user input
        self.with_weights = with_weights
        self.torch_weights = torch_weights  # weights as the model's own tensors (detached), not numpy copies
        self.bad_outputs = list(bad_outputs)
        self.env: dict[torch.fx.Node, Any] = {}
        self.static: dict[torch.fx.Node, np.ndarray] = {}  # statically known int tensors (arange)
        self.block = Block()
        self.unsupported: list[Unsupported] = []
        self.loc = FileLineColLoc(StringAttr("<torch.export>"), IntAttr(0), IntAttr(0))
        self.node: torch.fx.Node | None = None
        self._consts: dict[tuple, SSAValue] = {}
        self.plan: OutputPlan | None = None
        self.mutates: list[str | None] = []  # per graph output: the buffer it updates (import_graph)

    # ---- emission

    def emit(self, name: str, operands: Sequence[SSAValue], rt=None, **attrs) -> SSAValue | list[SSAValue]:
        operands = list(operands)
        if rt is None:
            try:
                rts = graph.infer_result_types(name, [o.type for o in operands], **attrs)
            except Exception as e:  # noqa: BLE001
                raise _Skip(f"graph.{name}: {e}") from None
        else:
            rts = rt if isinstance(rt, list) else [rt]
        op = graph.build(name, operands, rts, **attrs)
        op.location = self.loc
        try:  # the importer never emits IR its own verifier rejects: say which op, here
            op.verify_()
        except Exception as e:  # noqa: BLE001
            msg = str(e).split("'graph.", 1)[-1]
            raise _Skip(f"graph.{msg}" if not msg.startswith("graph.") else msg) from None
        self.block.add_op(op)
        if graph.OPS[name].results == "variadic":
            return list(op.results)
        return op.results[0]

    def const(self, value, elem, shape: Sequence[int] = ()) -> SSAValue:
        """A constant: a scalar (splat over shape) or an array of shape."""
        t = TensorType(elem, list(shape))
        if isinstance(value, np.ndarray):
            vals = value.reshape(-1).tolist()
            key = None
        else:
            vals = [value]
            key = (repr(value), str(t))
        if key is not None and key in self._consts:
            return self._consts[key]
        if _is_float(elem):
            vals = [float(v) for v in vals]
        elif isinstance(elem, IntegerType) and elem.width.data == 1:
            vals = [1 if v else 0 for v in vals]
        else:
            vals = [int(v) for v in vals]
        # a splat keeps its one element (a [100000, 64] zero start is 2 bytes, not 12.8 MB)
        attr = splat_attr(t, vals[0]) if key is not None else DenseIntOrFPElementsAttr.from_list(t, vals)
        op = graph.build("constant", [], [t], value=attr)
        op.location = self.loc
        self.block.add_op(op)
        if key is not None:
            self._consts[key] = op.results[0]
        return op.results[0]

    def cast(self, v: SSAValue, elem) -> SSAValue:
        if v.type.get_element_type() == elem:
            return v
        return self.emit("cast", [v], TensorType(elem, _shape(v)))

    def reshape(self, v: SSAValue, shape: Sequence[int]) -> SSAValue:
        shape = list(shape)
        # fold reshape chains (select -> view -> embedding_bag gives three)
        while isinstance(v.owner, graph.GRAPH_OPS["reshape"]) and sum(d < 0 for d in shape) <= 1:
            v = v.owner.operands[0]
        if _shape(v) == shape:
            return v
        return self.emit("reshape", [v], TensorType(v.type.get_element_type(), shape))

    # ---- values

    def t(self, a) -> SSAValue:
        """The SSA value of a tensor argument."""
        if isinstance(a, torch.fx.Node):
            v = self.env[a]
            if isinstance(v, SSAValue):
                return v
            raise _Skip(f"argument {a.name} is not a tensor")
        raise _Skip(f"expected a tensor argument, got {a!r}")

    def scalar(self, a):
        if isinstance(a, torch.fx.Node):
            v = self.env.get(a)
            if isinstance(v, (int, float, bool)):
                return v
            raise _Skip(f"argument {a.name} is a symbolic / runtime scalar")
        return a

    def ints(self, a) -> list[int]:
        return [int(self.scalar(x)) for x in a]

    def out_type(self) -> TensorType:
        val = self.node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise _Skip("no tensor metadata on the node")
        return tensor_type(val)

    def meta(self, a):
        if isinstance(a, torch.fx.Node):
            return a.meta.get("val")
        return a

    # ---- main loop

    def run(self) -> tuple[ModuleOp, dict[str, np.ndarray]]:
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        arg_types, arg_attrs, weights = [], [], {}
        order, statics = [], []
        for n in placeholders:
            spec = self.specs.get(n.name) or ArgSpec("input", n.name)
            kind = spec.kind
            val = n.meta.get("val")
            if kind == "value":  # a non-tensor argument bound to a known value (a specialised SymInt)
                self.env[n] = spec.value
                continue
            if kind == "static":  # a tensor known at import time (not an argument): a constant if used
                statics.append((n, spec.value))
                continue
            if val is None and kind == "input":  # an input passed as None: no argument
                self.env[n] = None
                continue
            if kind == "input" and isinstance(val, (bool, int, float)):  # a Python scalar: specialized
                self.env[n] = val
                continue
            if kind not in ("parameter", "buffer", "constant", "input") or not isinstance(val, torch.Tensor):
                what = kind if kind not in ("parameter", "buffer", "constant", "input") else f"{type(val).__name__}"
                self.unsupported.append(Unsupported(f"placeholder {n.name}", f"non-tensor input ({what})", ""))
                continue
            name = spec.name
            try:
                ty = tensor_type(val)
            except _Skip as e:
                self.unsupported.append(Unsupported(f"placeholder {n.name}", str(e), ""))
                continue
            order.append((n, ty))
            arg_types.append(ty)
            arg_attrs.append(DictionaryAttr({"kitsune.name": StringAttr(name), "kitsune.kind": StringAttr(kind)}))
            if kind != "input" and self.with_weights:
                t = spec.value
                if isinstance(t, torch.Tensor) and t.device.type != "meta":
                    if self.torch_weights:
                        weights[name] = t.detach()
                    else:
                        t = t.detach().cpu()
                        weights[name] = (t.float() if t.dtype == torch.bfloat16 else t).numpy().copy()
        self.block = Block(arg_types=arg_types)
        for (n, _), a in zip(order, self.block.args):
            self.env[n] = a
        for n, value in statics:
            arr = np.asarray(value)
            self.static[n] = arr
            self.node = n
            try:
                self.env[n] = self.const(arr, tensor_type(n.meta["val"]).get_element_type(), arr.shape)
            except _Skip as e:
                self.unsupported.append(Unsupported(f"placeholder {n.name}", str(e), ""))

        self.unsupported += self.bad_outputs
        out_node = None
        for node in self.graph.nodes:
            if node.op == "call_function":
                self.convert(node)
            elif node.op == "output":
                out_node = node
            elif node.op == "get_attr":
                self.env[node] = None
        results, res_attrs = [], []
        plan: list[tuple] = []
        if out_node is not None:
            for k, a in enumerate(_flatten(out_node.args[0])):
                if self.plan is not None:  # outputs that need no result: inputs, static values, repeats, None
                    v = self.env.get(a) if isinstance(a, torch.fx.Node) else None
                    if a is None:
                        plan.append(("none",))
                        continue
                    if isinstance(a, torch.fx.Node) and a in self.static:
                        plan.append(("static", self.static[a]))
                        continue
                    if isinstance(v, SSAValue) and v in self.block.args:
                        plan.append(("input", placeholders.index(next(n for n, _ in order
                                                                      if self.env[n] is v))))
                        continue
                    if isinstance(v, SSAValue) and v in results:
                        plan.append(("result", results.index(v)))
                        continue
                    if isinstance(v, SSAValue):
                        plan.append(("result", len(results)))
                if isinstance(a, torch.fx.Node):
                    v = self.env.get(a)
                    if isinstance(v, SSAValue):
                        results.append(v)
                        ra = {"kitsune.name": StringAttr(a.name)}
                        if k < len(self.mutates) and self.mutates[k]:
                            ra["kitsune.mutates"] = StringAttr(self.mutates[k])
                        res_attrs.append(DictionaryAttr(ra))
                    elif v is not _POISON:
                        self.unsupported.append(Unsupported(f"output {a.name}", "is not a tensor", ""))
                elif a is not None:
                    self.unsupported.append(Unsupported("output", f"constant output {a!r} is not supported", ""))
        if self.unsupported:
            raise UnsupportedOpsError(self.unsupported)
        if self.plan is not None:
            self.plan.items = plan
        ret = func.ReturnOp(*results)
        ret.location = self.loc
        self.block.add_op(ret)
        _dce(self.block)
        f = func.FuncOp("main", (arg_types, [r.type for r in results]), Region(self.block),
                        arg_attrs=ArrayAttr(arg_attrs), res_attrs=ArrayAttr(res_attrs))
        module = ModuleOp([f])
        for op in module.walk():
            try:
                op.verify_()
            except Exception as e:  # noqa: BLE001 - say which op, not the whole module
                loc = op.location
                where = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: " \
                    if isinstance(loc, FileLineColLoc) else ""
                raise KitsuneImportError(f"{where}error: the importer emitted an op its verifier rejects: {e}\n"
                                         f"    {_op_text(op)}") from None
        module.verify()
        return module, weights

    def convert(self, node: torch.fx.Node) -> None:
        self.node = node
        where = _location(node)
        if where is not None:
            self.loc = FileLineColLoc(StringAttr(where[0]), IntAttr(where[1]), IntAttr(where[2]))
        loc_s = f"{where[0]}:{where[1]}:{where[2]}" if where else ""
        src = where[3] if where else ""
        target = node.target
        opname = _op_name(target)
        h = HANDLERS.get(target)
        if h is None and isinstance(target, torch._ops.OpOverload):
            h = HANDLERS.get(target.overloadpacket)
        if h is None:
            self.unsupported.append(Unsupported(opname, "no mapping to the graph dialect", loc_s, src))
            self.env[node] = _POISON
            return
        deps = [a for a in node.all_input_nodes]
        if any(self.env.get(a) is _POISON for a in deps):
            self.env[node] = _POISON
            return
        try:
            self.env[node] = h(self, node, *node.args, **node.kwargs)
        except _Skip as e:
            self.unsupported.append(Unsupported(opname, str(e), loc_s, src))
            self.env[node] = _POISON


_POISON = object()


def _op_text(op) -> str:
    from io import StringIO

    from xdsl.printer import Printer

    s = StringIO()
    Printer(stream=s).print_op(op)
    text = s.getvalue().strip().splitlines()
    return text[0][:300] if text else op.name


def _flatten(x):
    if isinstance(x, (list, tuple)):
        for y in x:
            yield from _flatten(y)
    else:
        yield x


def _op_name(target) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return f"{target.namespace}.{target._opname}.{target._overloadname}"
    return getattr(target, "__name__", str(target))


def _dce(block: Block) -> None:
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.ops)):
            if isinstance(op, graph.GraphOp) and all(not r.uses for r in op.results):
                op.detach()
                op.erase()
                changed = True


# ------------------------------------------------------------------ handlers

HANDLERS: dict[Any, Callable] = {}


def _h(*targets):
    def deco(fn):
        for t in targets:
            HANDLERS[t] = fn
        return fn

    return deco


def _unary(name):
    def h(imp, node, x, *rest, **kw):
        return imp.emit(name, [imp.t(x)], imp.out_type())

    return h


for _n in ["relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "neg", "abs", "erf", "reciprocal", "silu",
           "sin", "cos"]:
    HANDLERS[getattr(aten, _n).default] = _unary(_n)


@_h(aten.gelu.default)
def _gelu(imp, node, x, approximate="none"):
    return imp.emit("gelu", [imp.t(x)], imp.out_type(), approximate=approximate)


@_h(aten.pow.Tensor_Scalar)
def _pow(imp, node, x, e):
    e = imp.scalar(e)
    xv = imp.t(x)
    rt = imp.out_type()
    xv = imp.cast(xv, rt.get_element_type())
    if not _is_float(rt.get_element_type()):
        raise _Skip("integer pow is not supported")
    return imp.emit("pow", [xv], rt, exponent=float(e))


def _operand(imp, a, elem) -> SSAValue:
    if isinstance(a, torch.fx.Node) and isinstance(imp.env.get(a), SSAValue):
        return imp.cast(imp.t(a), elem)
    v = imp.scalar(a)
    if isinstance(v, torch.Tensor):
        raise _Skip("tensor constant operands are not supported")
    return imp.const(v, elem)


def _binary(name, compare=False, swap=False):
    def h(imp, node, a, b, alpha=1, **kw):
        if kw.get("rounding_mode") is not None:
            raise _Skip(f"rounding_mode={kw['rounding_mode']!r} is not supported")
        if swap:
            a, b = b, a
        rt = imp.out_type()
        if compare:
            try:
                dt = torch.result_type(imp.meta(a), imp.meta(b))
            except Exception:  # noqa: BLE001
                dt = imp.meta(a).dtype if isinstance(imp.meta(a), torch.Tensor) else imp.meta(b).dtype
            elem = elem_type(dt)
        else:
            elem = rt.get_element_type()
        av = _operand(imp, a, elem)
        if alpha != 1 and name in ("add", "sub"):
            if isinstance(b, torch.fx.Node):
                bv = imp.emit("mul", [_operand(imp, b, elem), imp.const(imp.scalar(alpha), elem)])
            else:
                bv = imp.const(imp.scalar(b) * imp.scalar(alpha), elem)
        else:
            bv = _operand(imp, b, elem)
        return imp.emit(name, [av, bv], rt)

    return h


for _n, _cmp in [("add", False), ("sub", False), ("mul", False), ("div", False), ("fmod", False),
                 ("remainder", False), ("eq", True), ("ne", True), ("lt", True), ("le", True), ("gt", True), ("ge", True)]:
    _f = _binary(_n, _cmp)
    for _ov in ("Tensor", "Scalar", "Tensor_mode", "Scalar_mode"):
        if hasattr(getattr(aten, _n), _ov):
            HANDLERS[getattr(getattr(aten, _n), _ov)] = _f
HANDLERS[aten.rsub.Scalar] = _binary("sub", swap=True)
HANDLERS[aten.rsub.Tensor] = lambda imp, node, a, b, alpha=1: _binary("sub")(imp, node, b, a) if alpha == 1 \
    else (_ for _ in ()).throw(_Skip("rsub with alpha"))
HANDLERS[aten.maximum.default] = _binary("maximum")
HANDLERS[aten.minimum.default] = _binary("minimum")


@_h(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def _where(imp, node, c, a, b):
    rt = imp.out_type()
    cv = imp.t(c)
    if cv.type.get_element_type() != IntegerType(1):
        cv = imp.emit("ne", [cv, imp.const(0, cv.type.get_element_type())])
    e = rt.get_element_type()
    return imp.emit("where", [cv, _operand(imp, a, e), _operand(imp, b, e)], rt)


@_h(aten.clamp.default, aten.hardtanh.default)
def _clamp(imp, node, x, lo=None, hi=None):
    rt = imp.out_type()
    v = imp.cast(imp.t(x), rt.get_element_type())
    if lo is not None:
        v = imp.emit("maximum", [v, imp.const(imp.scalar(lo), rt.get_element_type())])
    if hi is not None:
        v = imp.emit("minimum", [v, imp.const(imp.scalar(hi), rt.get_element_type())])
    return v


@_h(aten.logical_not.default)
def _logical_not(imp, node, x):
    v = imp.t(x)
    e = v.type.get_element_type()
    return imp.emit("eq", [v, imp.const(0, e)], imp.out_type())


@_h(aten.logical_and.default, aten.logical_or.default)
def _logical_bin(imp, node, a, b):
    av, bv = imp.t(a), imp.t(b)
    f32 = Float32Type()

    def as01(v):
        if v.type.get_element_type() != IntegerType(1):
            v = imp.emit("ne", [v, imp.const(0, v.type.get_element_type())])
        return imp.cast(v, f32)

    m = imp.emit("mul" if node.target == aten.logical_and.default else "maximum", [as01(av), as01(bv)])
    return imp.emit("gt", [m, imp.const(0.0, f32)], imp.out_type())


@_h(aten.bitwise_and.Tensor, aten.bitwise_or.Tensor, aten.bitwise_xor.Tensor, aten.bitwise_and.Scalar,
    aten.bitwise_or.Scalar, aten.bitwise_xor.Scalar)
def _bitwise(imp, node, a, b):
    rt = imp.out_type()
    if rt.get_element_type() != IntegerType(1):
        raise _Skip("bitwise ops on integers are not supported (only on booleans)")
    f32 = Float32Type()

    def as01(x):
        v = _operand(imp, x, IntegerType(1)) if not isinstance(x, torch.fx.Node) else imp.t(x)
        return imp.cast(v, f32)

    fa, fb = as01(a), as01(b)
    name = node.target.overloadpacket.__name__
    if name == "bitwise_and":
        m = imp.emit("mul", [fa, fb])
    elif name == "bitwise_or":
        m = imp.emit("maximum", [fa, fb])
    else:
        return imp.emit("ne", [fa, fb], rt)
    return imp.emit("gt", [m, imp.const(0.0, f32)], rt)


@_h(aten.bitwise_not.default)
def _bitwise_not(imp, node, x):
    v = imp.t(x)
    if v.type.get_element_type() != IntegerType(1):
        raise _Skip("bitwise_not on integers is not supported (only on booleans)")
    return imp.emit("eq", [imp.cast(v, Float32Type()), imp.const(0.0, Float32Type())], imp.out_type())


@_h(aten.native_dropout.default, aten.dropout.default)
def _dropout(imp, node, x, p, train=None):
    if train is False or p == 0:
        return (imp.t(x), None) if node.target == aten.native_dropout.default else imp.t(x)
    raise _Skip(f"dropout (p={p}) in training mode is not supported: call model.eval() before compiling")


@_h(aten.any.dim, aten.any.dims, aten.any.default)
def _any(imp, node, x, dim=None, keepdim=False):
    v = imp.t(x)
    if v.type.get_element_type() != IntegerType(1):
        v = imp.emit("ne", [v, imp.const(0, v.type.get_element_type())])
    f = imp.cast(v, Float32Type())
    dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    m = imp.emit("amax", [f], dims=dims, keepdim=keepdim)
    return imp.emit("gt", [m, imp.const(0.0, Float32Type())], imp.out_type())


@_h(aten.clone.default, aten.alias.default, aten.contiguous.default, aten.detach.default,
    aten.lift_fresh_copy.default, aten._to_copy.default, aten.to.dtype, aten._to_dim_order_copy.default
    if hasattr(aten, "_to_dim_order_copy") else aten.clone.default, aten.type_as.default)
def _copy(imp, node, x, *args, **kw):
    v = imp.t(x)
    rt = imp.out_type()
    return imp.cast(v, rt.get_element_type())


@_h(aten._assert_tensor_metadata.default, aten._assert_scalar.default, aten.sym_constrain_range_for_size.default,
    aten._assert_async.msg)
def _noop(imp, node, *args, **kw):
    return None


@_h(aten.sym_size.int)
def _sym_size(imp, node, x, d):
    n = _dim(node.meta.get("val")) if node.meta.get("val") is not None else -1
    return n if n >= 0 else _Sym(node)


@_h(operator.getitem)
def _getitem(imp, node, x, i):
    v = imp.env[x]
    if not isinstance(v, (tuple, list)):
        raise _Skip("getitem of a non-tuple")
    r = v[i]
    if r is None:
        raise _Skip(f"result #{i} of {x.name} ({_op_name(x.target)}) is not supported (values only)")
    if isinstance(r, _StaticArr):
        imp.static[node] = r.value
        return imp.const(r.value, imp.out_type().get_element_type(), r.value.shape)
    return r


# ---- layout


@_h(aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.view_copy.default,
    aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default,
    aten.flatten.using_ints, aten.unflatten.int)
def _view(imp, node, x, *args):
    return imp.reshape(imp.t(x), imp.out_type().get_shape())


@_h(aten.permute.default)
def _permute(imp, node, x, perm):
    v = imp.t(x)
    perm = [p % max(len(_shape(v)), 1) for p in perm]
    if perm == list(range(len(perm))):
        return v
    return imp.emit("permute", [v], imp.out_type(), perm=perm)


@_h(aten.t.default, aten.numpy_T.default)
def _t(imp, node, x):
    v = imp.t(x)
    if len(_shape(v)) < 2:
        return v
    return imp.emit("permute", [v], imp.out_type(), perm=[1, 0])


@_h(aten.transpose.int)
def _transpose(imp, node, x, a, b):
    v = imp.t(x)
    r = len(_shape(v))
    perm = list(range(r))
    a, b = a % r, b % r
    perm[a], perm[b] = perm[b], perm[a]
    if a == b:
        return v
    return imp.emit("permute", [v], imp.out_type(), perm=perm)


@_h(aten.expand.default, aten.expand_copy.default)
def _expand(imp, node, x, size, implicit=False):
    v = imp.t(x)
    out = imp.out_type().get_shape()
    src = _shape(v)
    lead = len(out) - len(src)
    shape = []
    for i, n in enumerate(out):
        if n < 0 or (i >= lead and src[i - lead] == n):
            if i < lead:
                raise _Skip("expand to a new dynamic leading dim")
            shape.append(-1)
        else:
            shape.append(n)
    if lead == 0 and all(s == -1 for s in shape):
        return v
    return imp.emit("expand", [v], imp.out_type(), shape=shape)


def _static_dim(imp, v, d):
    n = _shape(v)[d]
    if n < 0:
        raise _Skip(f"dim {d} is dynamic")
    return n


@_h(aten.slice.Tensor, aten.slice_copy.Tensor)
def _slice(imp, node, x, dim=0, start=None, end=None, step=1):
    v = imp.t(x)
    r = len(_shape(v))
    dim %= r
    start = 0 if start is None else imp.scalar(start)
    end = None if end is None else imp.scalar(end)
    size = _shape(v)[dim]
    if size >= 0:
        if end is None or end > size:
            end = size
        if start == 0 and end == size and step == 1:
            return v
    elif end is not None and end >= 2**62:
        end = None
    return imp.emit("slice", [v], imp.out_type(), dim=dim, start=int(start), end=end, step=int(step))


@_h(aten.constant_pad_nd.default)
def _constant_pad(imp, node, x, pad, value=0):
    v = imp.t(x)
    r = len(_shape(v))
    pad = imp.ints(pad)
    if len(pad) % 2 or len(pad) > 2 * r:
        raise _Skip(f"pad {pad} must have an even length of at most 2 * rank")
    pads = [0] * (2 * r)
    for i in range(len(pad) // 2):  # torch's pad lists the last dim first
        d = r - 1 - i
        pads[2 * d], pads[2 * d + 1] = pad[2 * i], pad[2 * i + 1]
    for d in range(r):  # negative padding crops: a slice
        lo, hi = pads[2 * d], pads[2 * d + 1]
        if lo < 0 or hi < 0:
            n = _static_dim(imp, v, d)
            v = imp.emit("slice", [v], dim=d, start=max(-lo, 0), end=n - max(-hi, 0))
            pads[2 * d], pads[2 * d + 1] = max(lo, 0), max(hi, 0)
    if not any(pads):
        return v
    return imp.emit("pad", [v], imp.out_type(), pads=pads, value=float(imp.scalar(value)))


@_h(aten.slice_scatter.default)
def _slice_scatter(imp, node, x, src, dim=0, start=None, end=None, step=1):
    xv = imp.t(x)
    r = len(_shape(xv))
    start = 0 if start is None else imp.scalar(start)
    end = 2**62 if end is None else imp.scalar(end)
    return imp.emit("slice_scatter", [xv, imp.cast(imp.t(src), xv.type.get_element_type())], imp.out_type(),
                    dim=dim % r, start=int(start), end=int(min(end, 2**62)), step=int(step))


@_h(aten.copy.default)
def _copy_into(imp, node, dst, src, non_blocking=False):
    rt = imp.out_type()
    v = imp.cast(imp.t(src), rt.get_element_type())
    if _shape(v) != list(rt.get_shape()):
        v = imp.emit("expand", [v], rt, shape=list(rt.get_shape()))
    return v


@_h(aten.as_strided.default, aten.as_strided_copy.default)
def _as_strided(imp, node, x, size, stride, offset=None):
    v = imp.t(x)
    size, stride = imp.ints(size), imp.ints(stride)
    src = imp.meta(x)
    # a view with x's own layout over its elements in order: a reshape (channels-last strides, flatten)
    want, acc = [], 1
    for n in reversed(size):
        want.append(acc)
        acc *= n
    want.reverse()
    ok = (offset in (None, 0) and src is not None and src.is_contiguous() and
          all(a == b for a, b, n in zip(stride, want, size) if n != 1) and acc == _static_numel(_shape(v)))
    if not ok:
        raise _Skip(f"as_strided(size={size}, stride={stride}) is not a row-major view of its input; only "
                    "those are supported")
    return imp.reshape(v, size)


def _static_numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


@_h(aten.select.int, aten.select_copy.int)
def _select(imp, node, x, dim, index):
    v = imp.t(x)
    r = len(_shape(v))
    dim %= r
    index = imp.scalar(index)
    if index < 0:
        index += _static_dim(imp, v, dim)
    sl = imp.emit("slice", [v], dim=dim, start=index, end=index + 1)
    return imp.reshape(sl, imp.out_type().get_shape())


@_h(aten.repeat.default)
def _repeat(imp, node, x, sizes):
    v = imp.t(x)
    sizes = imp.ints(sizes)
    src = [1] * (len(sizes) - len(_shape(v))) + _shape(v)
    if any(d < 0 for d in src):
        raise _Skip("repeat of a dynamic dim is not supported")
    inter = [n for k, d in zip(sizes, src) for n in (1, d)]  # [1, d0, 1, d1, ...] -> [k0, d0, k1, d1, ...]
    big = [n for k, d in zip(sizes, src) for n in (k, d)]
    e = imp.emit("expand", [imp.reshape(v, inter)], TensorType(v.type.get_element_type(), big), shape=big)
    return imp.reshape(e, imp.out_type().get_shape())


@_h(aten.cat.default, aten.concat.default)
def _cat(imp, node, xs, dim=0):
    rt = imp.out_type()
    vals = [imp.t(x) for x in xs]
    vals = [v for v in vals if not (len(_shape(v)) == 1 and _shape(v)[0] == 0)]  # torch's legacy empty tensors
    vals = [imp.cast(v, rt.get_element_type()) for v in vals]
    if len(vals) == 1:
        return vals[0]
    return imp.emit("concat", vals, rt, dim=dim % len(rt.get_shape()))


@_h(aten.split_with_sizes.default, aten.split.Tensor, aten.split_with_sizes_copy.default, aten.split.sizes)
def _split(imp, node, x, sizes, dim=0):
    v = imp.t(x)
    r = len(_shape(v))
    dim %= r
    if isinstance(sizes, int):
        n = _static_dim(imp, v, dim)
        sizes = [min(sizes, n - i) for i in range(0, n, sizes)]
    sizes = imp.ints(sizes)
    vals = node.meta.get("val")
    rts = [tensor_type(t) for t in vals]
    return tuple(imp.emit("split", [v], rts, dim=dim, sizes=sizes))


@_h(aten.unbind.int)
def _unbind(imp, node, x, dim=0):
    v = imp.t(x)
    dim %= len(_shape(v))
    n = _static_dim(imp, v, dim)
    parts = imp.emit("split", [v], dim=dim, sizes=[1] * n)
    return tuple(imp.reshape(p, tensor_type(t).get_shape()) for p, t in zip(parts, node.meta["val"]))


# ---- reductions / normalisations


def _reduce(name):
    def h(imp, node, x, dims=None, keepdim=False, *rest, **kw):
        v = imp.t(x)
        rt = imp.out_type()
        if not _is_float(v.type.get_element_type()) or not _is_float(rt.get_element_type()):
            raise _Skip(f"{name} over non-float elements")
        v = imp.cast(v, rt.get_element_type())
        if isinstance(dims, int):
            dims = [dims]
        dims = list(dims or [])
        r = len(_shape(v))
        dims = sorted(d % r for d in dims) if r else []
        return imp.emit(name, [v], rt, dims=dims, keepdim=bool(keepdim))

    return h


for _n, _ts in [("sum", [aten.sum.dim_IntList, aten.sum.default]), ("mean", [aten.mean.dim, aten.mean.default]),
                ("amax", [aten.amax.default]), ("amin", [aten.amin.default]),
                ("prod", [aten.prod.dim_int, aten.prod.default])]:
    for _t_ in _ts:
        HANDLERS[_t_] = _reduce(_n)


def _softmax_h(name):
    def h(imp, node, x, dim, *rest, **kw):
        rt = imp.out_type()
        v = imp.cast(imp.t(x), rt.get_element_type())
        return imp.emit(name, [v], rt, dim=dim % max(len(_shape(v)), 1))

    return h


for _t_ in (aten._softmax.default, aten.softmax.int):
    HANDLERS[_t_] = _softmax_h("softmax")
for _t_ in (aten._log_softmax.default, aten.log_softmax.int):
    HANDLERS[_t_] = _softmax_h("log_softmax")


def _opt(imp, a) -> list[SSAValue]:
    return [] if a is None else [imp.t(a)]


@_h(aten.layer_norm.default)
def _layer_norm(imp, node, x, shape, w=None, b=None, eps=1e-5, cudnn=False):
    if w is None and b is not None:
        raise _Skip("layer_norm with a bias but no weight")
    return imp.emit("layer_norm", [imp.t(x), *_opt(imp, w), *_opt(imp, b)], imp.out_type(),
                    normalized_rank=len(shape), eps=float(eps))


@_h(aten.native_layer_norm.default)
def _native_layer_norm(imp, node, x, shape, w, b, eps):
    if w is None and b is not None:
        raise _Skip("layer_norm with a bias but no weight")
    y = imp.emit("layer_norm", [imp.t(x), *_opt(imp, w), *_opt(imp, b)], tensor_type(node.meta["val"][0]),
                 normalized_rank=len(shape), eps=float(eps))
    # the mean and 1/std a training graph saves for the backward (removed as dead code when unused)
    xv = imp.t(x)
    r = len(_shape(xv))
    dims = list(range(r - len(shape), r))
    mt, rt = tensor_type(node.meta["val"][1]), tensor_type(node.meta["val"][2])
    xs = imp.cast(xv, mt.get_element_type())
    mean = imp.emit("mean", [xs], dims=dims, keepdim=True)
    d = imp.emit("sub", [xs, mean])
    var = imp.emit("mean", [imp.emit("mul", [d, d])], dims=dims, keepdim=True)
    rstd = imp.emit("rsqrt", [imp.emit("add", [var, imp.const(float(eps), mt.get_element_type())])])
    return (y, imp.reshape(mean, mt.get_shape()), imp.reshape(rstd, rt.get_shape()))


@_h(aten.native_group_norm.default)
def _native_group_norm(imp, node, x, w, b, n, c, hw, group, eps):
    """GroupNorm: each sample's channels in ``group`` groups normalised over the group's channels and positions
    -- a row norm (graph.layer_norm, no affine) over ``[N, G, C / G * H * W]`` rows -- then the per-channel affine;
    the mean and 1/std ``[N, G]`` a training graph saves, from the same rows."""
    xv = imp.t(x)
    shape = _shape(xv)
    if len(shape) < 2 or any(d < 0 for d in shape):
        raise _Skip("group_norm needs a static [N, C, ...] input")
    n, c, g = shape[0], shape[1], int(imp.scalar(group))
    if g < 1 or c % g:
        raise _Skip(f"group_norm: {c} channels do not split into {g} groups")
    outs = node.meta["val"]
    yt = tensor_type(outs[0])
    rows = imp.reshape(xv, [n, g, math.prod(shape[1:]) // g])
    y = imp.reshape(imp.emit("layer_norm", [rows], TensorType(xv.type.get_element_type(), _shape(rows)),
                             normalized_rank=1, eps=float(eps)), shape)
    per_channel = [c] + [1] * (len(shape) - 2)
    if w is not None:
        y = imp.emit("mul", [y, imp.reshape(imp.t(w), per_channel)])
    if b is not None:
        y = imp.emit("add", [y, imp.reshape(imp.t(b), per_channel)])
    y = imp.cast(y, yt.get_element_type())
    mt, rt = tensor_type(outs[1]), tensor_type(outs[2])
    xs = imp.cast(rows, mt.get_element_type())
    mean = imp.emit("mean", [xs], dims=[2], keepdim=True)
    d = imp.emit("sub", [xs, mean])
    var = imp.emit("mean", [imp.emit("mul", [d, d])], dims=[2], keepdim=True)
    rstd = imp.emit("rsqrt", [imp.emit("add", [var, imp.const(float(eps), mt.get_element_type())])])
    return (y, imp.reshape(mean, mt.get_shape()), imp.reshape(rstd, rt.get_shape()))


def _upsample_nearest(imp, node, x, out_size):
    """Nearest-neighbour upsampling by whole factors: each input element repeated ``s`` times along each
    spatial dim (a reshape to [.., H, 1, W, 1], an expand to [.., H, s, W, s], a reshape to [.., H*s, W*s]);
    torch's index rule ``floor(o * in / out)`` is that repeat exactly when ``out = s * in``."""
    xv = imp.t(x)
    shape = _shape(xv)
    k = len(out_size)
    inner = shape[-k:]
    if any(d < 1 for d in inner) or any(o % i for o, i in zip(out_size, inner)):
        raise _Skip(f"nearest upsampling of {list(inner)} to {list(out_size)}: only whole factors (out = s * in) "
                    "are supported")
    lead = list(shape[:-k])
    rep = [o // i for o, i in zip(out_size, inner)]
    spaced = lead + [d for i in inner for d in (i, 1)]
    big = lead + [d for i, s_ in zip(inner, rep) for d in (i, s_)]
    e = imp.emit("expand", [imp.reshape(xv, spaced)], TensorType(xv.type.get_element_type(), big), shape=big)
    return imp.reshape(e, lead + list(out_size))


@_h(aten.upsample_nearest2d.vec)
def _upsample_nearest2d_vec(imp, node, x, output_size, scale_factors):
    return _upsample_nearest(imp, node, x, imp.out_type().get_shape()[-2:])


@_h(aten.upsample_nearest2d.default)
def _upsample_nearest2d(imp, node, x, output_size, scales_h=None, scales_w=None):
    return _upsample_nearest(imp, node, x, imp.out_type().get_shape()[-2:])


def _linear_taps(n_in: int, n_out: int, align_corners: bool, scale) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first source index, second source index, the second's weight) per output position of linear
    interpolation along one dim, by torch's rule (``area_pixel_compute_source_index``: a given scale factor is
    used as it is, else in / out; half-pixel centres clamped at 0 unless ``align_corners``)."""
    o = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = o * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        ratio = 1.0 / scale if scale else n_in / n_out
        src = np.maximum((o + 0.5) * ratio - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return i0, i1, (src - i0).astype(np.float64)


def _upsample_bilinear(imp, node, x, align_corners, scales):
    """Bilinear upsampling (or downsampling) of the last two dims, one dim after the other: the two source rows
    (index_select by constant indices) weighted by constant per-position weights, torch's rule for the source
    positions (``_linear_taps``)."""
    xv = imp.t(x)
    shape = _shape(xv)
    rt = imp.out_type()
    out = rt.get_shape()
    if len(shape) != 4 or any(d < 1 for d in shape):
        raise _Skip("bilinear upsampling needs a static [N, C, H, W] input")
    e = Float32Type()  # (the weights and the sums in fp32, as torch's kernels take them)
    v = imp.cast(xv, e)
    for d, scale in ((2, scales[0]), (3, scales[1])):
        i0, i1, lam = _linear_taps(shape[d], out[d], bool(align_corners), scale)
        if shape[d] == out[d] and not lam.any() and (i0 == np.arange(out[d])).all():
            continue
        wshape = [out[d]] + [1] * (3 - d)
        lo = imp.emit("index_select", [v, imp.const(i0, IntegerType(64), [out[d]])], dim=d)
        hi = imp.emit("index_select", [v, imp.const(i1, IntegerType(64), [out[d]])], dim=d)
        w1 = imp.const(lam.astype(np.float32), e, wshape)
        w0 = imp.const((1.0 - lam).astype(np.float32), e, wshape)
        v = imp.emit("add", [imp.emit("mul", [lo, w0]), imp.emit("mul", [hi, w1])])
    return imp.cast(v, rt.get_element_type())


@_h(aten.upsample_bilinear2d.vec)
def _upsample_bilinear2d_vec(imp, node, x, output_size, align_corners, scale_factors):
    sc = list(scale_factors) if scale_factors else [None, None]
    return _upsample_bilinear(imp, node, x, align_corners, sc)


@_h(aten.upsample_bilinear2d.default)
def _upsample_bilinear2d(imp, node, x, output_size, align_corners, scales_h=None, scales_w=None):
    return _upsample_bilinear(imp, node, x, align_corners, [scales_h, scales_w])


@_h(aten.native_layer_norm_backward.default)
def _native_layer_norm_backward(imp, node, g, x, shape, mean, rstd, w, b, mask):
    """dx: graph.layer_norm_backward (a row reduction); dweight, dbias: column sums of g * xhat and g."""
    outs = node.meta["val"]
    gv, xv = imp.t(g), imp.t(x)
    e = xv.type.get_element_type()
    mv, rv = imp.cast(imp.t(mean), e), imp.cast(imp.t(rstd), e)
    r = len(_shape(xv))
    lead = list(range(r - len(shape)))

    def colsum(v, t):
        v = imp.emit("sum", [v], dims=lead, keepdim=False) if lead else v
        return imp.cast(imp.reshape(v, tensor_type(t).get_shape()), tensor_type(t).get_element_type())

    dx = dw = db = None
    if mask[0]:
        dx = imp.emit("layer_norm_backward", [imp.cast(gv, e), xv, mv, rv, *_opt(imp, w)],
                      tensor_type(outs[0]), normalized_rank=len(shape))
    if mask[1] and w is not None:
        xhat = imp.emit("mul", [imp.emit("sub", [xv, mv]), rv])
        dw = colsum(imp.emit("mul", [imp.cast(gv, e), xhat]), outs[1])
    if mask[2] and b is not None:
        db = colsum(gv, outs[2])
    return (dx, dw, db)


def _grad_h(name, **attr_of):
    """An elementwise backward op (grad, x or y, then its scalar arguments in ATen's order or by name)."""

    def h(imp, node, g, x, *args, **kw):
        rt = imp.out_type()
        e = rt.get_element_type()
        attrs = {k: f(imp, kw[k] if k in kw else args[i]) for i, (k, f) in enumerate(attr_of.items())
                 if k in kw or i < len(args)}
        return imp.emit(name, [imp.cast(imp.t(g), e), imp.cast(imp.t(x), e)], rt, **attrs)

    return h


HANDLERS[aten.threshold_backward.default] = _grad_h(
    "threshold_backward", threshold=lambda imp, t: float(imp.scalar(t)))
HANDLERS[aten.gelu_backward.default] = _grad_h("gelu_backward", approximate=lambda imp, a: str(a))
HANDLERS[aten.sigmoid_backward.default] = _grad_h("sigmoid_backward")
HANDLERS[aten.tanh_backward.default] = _grad_h("tanh_backward")
HANDLERS[aten.silu_backward.default] = _grad_h("silu_backward")


def _softmax_bw_h(name):
    def h(imp, node, g, y, dim, input_dtype=None):
        rt = imp.out_type()
        e = rt.get_element_type()
        return imp.emit(name, [imp.cast(imp.t(g), e), imp.cast(imp.t(y), e)], rt,
                        dim=dim % max(len(rt.get_shape()), 1))

    return h


HANDLERS[aten._softmax_backward_data.default] = _softmax_bw_h("softmax_backward")
HANDLERS[aten._log_softmax_backward_data.default] = _softmax_bw_h("log_softmax_backward")


if hasattr(aten, "rms_norm"):
    @_h(aten.rms_norm.default)
    def _rms_norm(imp, node, x, shape, w=None, eps=None):
        if eps is None:
            eps = torch.finfo(imp.meta(x).dtype).eps
        return imp.emit("rms_norm", [imp.t(x), *_opt(imp, w)], imp.out_type(), normalized_rank=len(shape),
                        eps=float(eps))


def _bn(imp, x, w, b, mean, var, eps, rt, stats=None):
    if w is None and b is not None:
        raise _Skip("batch_norm with a bias but no weight")
    mv, vv = stats if stats is not None else (imp.t(mean), imp.t(var))
    return imp.emit("batch_norm", [imp.t(x), mv, vv, *_opt(imp, w), *_opt(imp, b)], rt, eps=float(eps))


@_h(aten._native_batch_norm_legit_no_training.default)
def _bn_no_training(imp, node, x, w, b, mean, var, momentum, eps):
    return (_bn(imp, x, w, b, mean, var, eps, tensor_type(node.meta["val"][0])), None, None)


@_h(aten.batch_norm.default)
def _batch_norm(imp, node, x, w, b, mean, var, training, momentum, eps, cudnn=False):
    if training or mean is None:
        raise _Skip("training-mode batch norm (batch statistics) is not supported; export the model in eval mode")
    return _bn(imp, x, w, b, mean, var, eps, imp.out_type())


@_h(aten._native_batch_norm_legit.default)
def _bn_training_inplace(imp, node, *args):
    raise _Skip("training-mode batch norm updating its running statistics in place is not supported: call "
                "model.eval() before compiling (torch.compile's training graphs use the functional form)")


@_h(aten._native_batch_norm_legit_functional.default)
def _bn_training(imp, node, x, w, b, running_mean, running_var, training, momentum, eps):
    """Training-mode batch norm, functional (aot_autograd's training graphs): the batch statistics over every
    dim but the channel (dim 1), the norm with them (graph.batch_norm), the saved mean and 1/std, and the
    running statistics' new values (momentum; the unbiased variance), which aot_autograd copies into the
    buffers."""
    if not training:
        raise _Skip("functional batch norm outside training mode is not supported")
    xv = imp.t(x)
    shp = _shape(xv)
    if len(shp) < 2 or any(d < 0 for d in shp):
        raise _Skip("batch norm needs a static [N, C, ...] input")
    outs = node.meta["val"]
    st = tensor_type(outs[1])  # the statistics' type (fp32 for a low-precision input on CUDA)
    e = st.get_element_type()
    dims = [0] + list(range(2, len(shp)))
    n = _static_numel([shp[d] for d in dims])
    keep = [1, shp[1]] + [1] * (len(shp) - 2)
    xs = imp.cast(xv, e)
    mean = imp.emit("mean", [xs], dims=dims, keepdim=False)
    d = imp.emit("sub", [xs, imp.reshape(mean, keep)])
    var = imp.emit("mean", [imp.emit("mul", [d, d])], dims=dims, keepdim=False)
    y = _bn(imp, x, w, b, x, x, eps, tensor_type(outs[0]), stats=(imp.cast(mean, xv.type.get_element_type()),
                                                                 imp.cast(var, xv.type.get_element_type())))
    rstd = imp.emit("rsqrt", [imp.emit("add", [var, imp.const(float(eps), e)])])
    m = float(momentum)

    def update(run, new):
        rv = imp.cast(imp.t(run), e)
        return imp.emit("add", [imp.emit("mul", [rv, imp.const(1.0 - m, e)]), imp.emit("mul", [new, imp.const(m, e)])])

    unbiased = imp.emit("mul", [var, imp.const(n / max(n - 1, 1), e)])
    new_rm = imp.cast(update(running_mean, mean), tensor_type(outs[3]).get_element_type())
    new_rv = imp.cast(update(running_var, unbiased), tensor_type(outs[4]).get_element_type())
    return (y, imp.reshape(mean, st.get_shape()), imp.reshape(rstd, tensor_type(outs[2]).get_shape()), new_rm, new_rv)


# ---- contractions


@_h(aten.linear.default)
def _linear(imp, node, x, w, b=None):
    return imp.emit("linear", [imp.t(x), imp.t(w), *_opt(imp, b)], imp.out_type())


def _transposed_source(imp, a) -> SSAValue | None:
    """If a is permute([1, 0]) / t() of a rank-2 value, that value."""
    if isinstance(a, torch.fx.Node) and a.target in (aten.permute.default, aten.t.default, aten.transpose.int):
        if a.target == aten.permute.default and list(a.args[1]) != [1, 0]:
            return None
        src = imp.env.get(a.args[0])
        if isinstance(src, SSAValue) and len(_shape(src)) == 2:
            return src
    return None


@_h(aten.mm.default, aten.bmm.default)
def _mm(imp, node, a, b):
    return imp.emit("matmul", [imp.t(a), imp.t(b)], imp.out_type())


@_h(aten.addmm.default)
def _addmm(imp, node, bias, a, b, beta=1, alpha=1):
    rt = imp.out_type()
    w = _transposed_source(imp, b)
    bv = imp.t(bias)
    if beta == 1 and alpha == 1 and w is not None and len(_shape(bv)) == 1:
        return imp.emit("linear", [imp.t(a), w, bv], rt)
    m = imp.emit("matmul", [imp.t(a), imp.t(b)])
    e = rt.get_element_type()
    if alpha != 1:
        m = imp.emit("mul", [m, imp.const(imp.scalar(alpha), e)])
    if beta != 1:
        bv = imp.emit("mul", [bv, imp.const(imp.scalar(beta), e)])
    return imp.emit("add", [m, bv], rt)


@_h(aten.matmul.default)
def _matmul(imp, node, a, b):
    av, bv = imp.t(a), imp.t(b)
    ra, rb = len(_shape(av)), len(_shape(bv))
    if ra == 1:
        av = imp.reshape(av, [1, _shape(av)[0]])
    if rb == 1:
        bv = imp.reshape(bv, [_shape(bv)[0], 1])
    if rb == 2 and ra >= 2:
        w = _transposed_source(imp, b)
        if w is not None and ra >= 2:
            return imp.reshape(imp.emit("linear", [av, w]), imp.out_type().get_shape())
    m = imp.emit("matmul", [av, bv])
    return imp.reshape(m, imp.out_type().get_shape())


@_h(aten.convolution.default)
def _convolution(imp, node, x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    if transposed:
        return _conv_transpose(imp, x, w, b, list(stride), list(padding), list(dilation), int(groups))
    if len(_shape(imp.t(x))) == 3 and len(_shape(imp.t(w))) == 3:  # 1-D: a 2-D convolution of height 1
        xv, wv = imp.t(x), imp.t(w)
        x4 = imp.reshape(xv, [_shape(xv)[0], _shape(xv)[1], 1, _shape(xv)[2]])
        w4 = imp.reshape(wv, [_shape(wv)[0], _shape(wv)[1], 1, _shape(wv)[2]])
        rt = imp.out_type()
        s = rt.get_shape()
        y = imp.emit("conv2d", [x4, w4, *_opt(imp, b)], TensorType(rt.get_element_type(), [s[0], s[1], 1, s[2]]),
                     stride=[1, *stride], padding=[0, *padding], dilation=[1, *dilation], groups=int(groups))
        return imp.reshape(y, list(s))
    if len(_shape(imp.t(x))) != 4:
        raise _Skip(f"only 1-D and 2-D convolution are supported (input rank {len(_shape(imp.t(x)))})")
    return imp.emit("conv2d", [imp.t(x), imp.t(w), *_opt(imp, b)], imp.out_type(), stride=list(stride),
                    padding=list(padding), dilation=list(dilation), groups=int(groups))


@_h(aten.leaky_relu.default)
def _leaky_relu(imp, node, x, negative_slope=0.01):
    """``where(x > 0, x, x * slope)`` (NaN stays NaN: the comparison is false and NaN * slope is NaN)."""
    rt = imp.out_type()
    e = rt.get_element_type()
    xv = imp.cast(imp.t(x), e)
    pos = imp.emit("gt", [xv, imp.const(0.0, e)])
    return imp.emit("where", [pos, xv, imp.emit("mul", [xv, imp.const(float(negative_slope), e)])], rt)


def _flipped_window(imp, w: SSAValue) -> SSAValue:
    """A kernel ``[F, C, KH, KW]`` reversed along both window dims (index_select by a descending arange)."""
    for dim in (2, 3):
        k = _shape(w)[dim]
        if k > 1:
            rev = imp.const(np.arange(k - 1, -1, -1, dtype=np.int64), IntegerType(64), [k])
            w = imp.emit("index_select", [w, rev], dim=dim)
    return w


def _conv_transpose(imp, x, w, b, stride, padding, dilation, groups) -> SSAValue:
    """A 2-D transposed convolution (ConvTranspose2d: a decoder's upsampling) is the input gradient of the
    convolution whose weight is its own, ``[C_in, C_out / groups, KH, KW]`` read as ``[F, C, ...]``: the same
    ``_transposed_window`` as ``aten.convolution_backward``'s, over the kernel flipped and transposed per group,
    to the output's size (``output_padding`` included), plus the bias per channel."""
    xv, wv = imp.t(x), imp.t(w)
    rt = imp.out_type()
    out = list(rt.get_shape())
    if len(_shape(xv)) != 4 or len(_shape(wv)) != 4 or any(n < 0 for n in _shape(xv) + out):
        raise _Skip("only 2-D transposed convolution of static shapes is supported")
    cin, cg, KH, KW = _shape(wv)
    e = xv.type.get_element_type()
    wf = _flipped_window(imp, imp.cast(wv, e))
    g = groups
    if g == 1:
        wt = imp.emit("permute", [wf], perm=[1, 0, 2, 3])  # [C_out, C_in, KH, KW]
    else:  # per group: [g, C_in / g, C_out / g, ..] -> [g, C_out / g, C_in / g, ..]
        wt = imp.emit("permute", [imp.reshape(wf, [g, cin // g, cg, KH, KW])], perm=[0, 2, 1, 3, 4])
        wt = imp.reshape(wt, [g * cg, cin // g, KH, KW])
    y = _transposed_window(imp, xv, wt, out, stride, padding, dilation, g)
    if b is not None:
        y = imp.emit("add", [y, imp.reshape(imp.cast(imp.t(b), e), [out[1], 1, 1])])
    return imp.cast(y, rt.get_element_type())


@_h(aten.convolution_backward.default)
def _convolution_backward(imp, node, g, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding,
                          groups, mask):
    """The gradients of a (1-D or 2-D, ungrouped) convolution as convolutions of the op table, none new:

    * bias: ``sum(g, [0, 2, 3])``;
    * weight: ``dW[f, c, kh, kw] = sum_{n, oh, ow} g[n, f, oh, ow] x[n, c, oh s + kh d - p, ...]`` is the
      convolution of x^T [C, N, H, W] with g^T [F, N, OH, OW] as its weight, stride and dilation swapped,
      cropped to the kernel and transposed back;
    * input: ``dX = conv2d(g with s - 1 zeros between its rows and columns, W flipped and transposed, dilation
      d)``, the zero-inserted gradient placed in zeros (slice_scatter with step s) with d (k - 1) - p rows
      and columns around it (negative: cropped), so that the output is x's size.
    """
    if transposed:
        raise _Skip("the gradient of a transposed convolution is not supported")
    if int(groups) != 1:
        raise _Skip("the gradient of a grouped convolution is not supported")
    gv, xv, wv = imp.t(g), imp.t(x), imp.t(w)
    outs = node.meta["val"]
    one_d = len(_shape(xv)) == 3
    if one_d:  # a 2-D convolution of height 1
        gv, xv, wv = (imp.reshape(v, [_shape(v)[0], _shape(v)[1], 1, _shape(v)[2]]) for v in (gv, xv, wv))
        stride, padding, dilation = [1, *stride], [0, *padding], [1, *dilation]
    if len(_shape(xv)) != 4 or any(n < 0 for v in (gv, xv, wv) for n in _shape(v)):
        raise _Skip("only the gradients of static 1-D and 2-D convolutions are supported")
    s, p, d = [int(v) for v in _pair(stride)], [int(v) for v in _pair(padding)], [int(v) for v in _pair(dilation)]
    N, C, H, W = _shape(xv)
    F, _, KH, KW = _shape(wv)
    OH, OW = _shape(gv)[2:]
    e = xv.type.get_element_type()
    gv = imp.cast(gv, e)
    dx = dw = db = None
    if mask[2]:
        db = imp.cast(imp.emit("sum", [gv], dims=[0, 2, 3]), tensor_type(outs[2]).get_element_type())
    if mask[1]:
        xt = imp.emit("permute", [xv], perm=[1, 0, 2, 3])
        gt = imp.emit("permute", [gv], perm=[1, 0, 2, 3])
        cw = imp.emit("conv2d", [xt, gt], stride=d, padding=p, dilation=s, groups=1)  # [C, F, >= KH, >= KW]
        if _shape(cw)[2] != KH:
            cw = imp.emit("slice", [cw], dim=2, start=0, end=KH)
        if _shape(cw)[3] != KW:
            cw = imp.emit("slice", [cw], dim=3, start=0, end=KW)
        dw = imp.emit("permute", [cw], perm=[1, 0, 2, 3])
        if one_d:
            dw = imp.reshape(dw, [F, C, KW])
    if mask[0]:
        wt = imp.emit("permute", [_flipped_window(imp, wv)], perm=[1, 0, 2, 3])  # [C, F, KH, KW], flipped
        dx = _transposed_window(imp, gv, wt, [N, C, H, W], s, p, d, 1)
        if one_d:
            dx = imp.reshape(dx, [N, C, W])
    return (dx, dw, db)


def _transposed_window(imp, gv, wt, out_shape, s, p, d, groups) -> SSAValue:
    """The input gradient of a windowed op (convolution, average pooling) whose output gradient is ``gv``: a
    convolution of ``gv`` with ``s - 1`` zeros between its rows and columns (slice_scatter with step s into
    zeros), ``d (k - 1) - p`` rows and columns around it (negative: cropped), with the flipped, transposed
    kernel ``wt`` [C, F / groups, KH, KW], dilation d: the output is ``out_shape`` (x's)."""
    N, C, H, W = out_shape
    KH, KW = _shape(wt)[2:]
    e = gv.type.get_element_type()
    lead = [d[0] * (KH - 1) - p[0], d[1] * (KW - 1) - p[1]]
    if s == [1, 1] and min(lead) >= 0 and _shape(gv)[2] + 2 * lead[0] - d[0] * (KH - 1) == H and \
            _shape(gv)[3] + 2 * lead[1] - d[1] * (KW - 1) == W:
        gd, pad = gv, lead
    else:  # zero-inserted and padded: gradient row oh at lead + oh s, the total making x's size
        tot = [H + d[0] * (KH - 1), W + d[1] * (KW - 1)]
        gd = gv
        for k, dim in enumerate((2, 3)):
            n = _shape(gd)[dim]
            first = max(0, -(-(-lead[k]) // s[k])) if lead[k] < 0 else 0
            last = min(n, (tot[k] - 1 - lead[k]) // s[k] + 1)
            if first > 0 or last < n:
                gd = imp.emit("slice", [gd], dim=dim, start=first, end=last)
            zshape = list(_shape(gd))
            zshape[dim] = tot[k]
            zero = imp.const(0.0, e, zshape)
            start = lead[k] + first * s[k]
            gd = imp.emit("slice_scatter", [zero, gd], dim=dim, start=start, end=start + (last - first - 1) * s[k] + 1,
                          step=s[k])
        pad = [0, 0]
    return imp.emit("conv2d", [gd, wt], TensorType(e, [N, C, H, W]), stride=[1, 1], padding=pad, dilation=d,
                    groups=groups)


@_h(aten.avg_pool2d_backward.default)
def _avg_pool_backward(imp, node, g, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Each window's gradient divided by the window's divisor and spread over the window: the transposed window
    (``_transposed_window``) with a kernel of ones, one group per channel; the divisors (padding not counted,
    ceil_mode's clipped windows, divisor_override) follow torch's rules and the static shapes."""
    gv, xv = imp.t(g), imp.t(x)
    shp = _shape(xv)
    if len(shp) != 4 or any(n < 0 for n in shp + _shape(gv)):
        raise _Skip("average pooling's gradient needs a static [N, C, H, W] input")
    N, C, H, W = shp
    OH, OW = _shape(gv)[2:]
    k = [int(v) for v in _pair(kernel)]
    s = [int(v) for v in (_pair(stride) if stride else k)]
    p = [int(v) for v in _pair(padding)]
    e = xv.type.get_element_type()
    if divisor_override:
        div = np.full((OH, OW), float(divisor_override))
    else:  # torch: the window clipped to the padded input; without count_include_pad, to the input itself
        def count(o, K, S, P, n):
            lo = o * S - P
            hi = min(lo + K, n + P)
            if not count_include_pad:
                lo, hi = max(lo, 0), min(hi, n)
            return hi - lo

        div = np.array([[count(i, k[0], s[0], p[0], H) * count(j, k[1], s[1], p[1], W) for j in range(OW)]
                        for i in range(OH)], dtype=np.float64)
    gv = imp.cast(gv, e)
    if np.all(div == div.flat[0]):
        gs = imp.emit("mul", [gv, imp.const(1.0 / float(div.flat[0]), e)])
    else:
        gs = imp.emit("div", [gv, imp.const(div, e, [OH, OW])])
    ones = imp.const(1.0, e, [C, 1, k[0], k[1]])
    return _transposed_window(imp, gs, ones, shp, s, p, [1, 1], C)


@_h(aten._adaptive_avg_pool2d_backward.default)
def _adaptive_avg_pool_backward(imp, node, g, x):
    shp = _shape(imp.t(x))
    out = _shape(imp.t(g))
    if len(shp) != 4 or any(n <= 0 for n in shp) or shp[2] % out[2] or shp[3] % out[3]:
        raise _Skip("adaptive average pooling's gradient needs output sizes that divide the input")
    k = [shp[2] // out[2], shp[3] // out[3]]
    return _avg_pool_backward(imp, node, g, x, k, k, [0, 0], False, True, None)


@_h(aten.conv2d.default)
def _conv2d(imp, node, x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    if isinstance(padding, str):
        raise _Skip(f"padding={padding!r} is not supported")
    return _convolution(imp, node, x, w, b, stride, padding, dilation, False, None, groups)


def _pair(v):
    v = [v] if isinstance(v, int) else list(v)
    return v * 2 if len(v) == 1 else v


def _pool(imp, x, kernel, stride, padding, dilation, ceil_mode, rt):
    if len(_shape(imp.t(x))) != 4:
        raise _Skip("max_pool2d needs [N, C, H, W] input")
    return imp.emit("max_pool2d", [imp.t(x)], rt, kernel=_pair(kernel), stride=_pair(stride) if stride else None,
                    padding=_pair(padding), dilation=_pair(dilation), ceil_mode=bool(ceil_mode))


@_h(aten.avg_pool2d.default)
def _avg_pool(imp, node, x, kernel, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
              divisor_override=None):
    if len(_shape(imp.t(x))) != 4:
        raise _Skip("avg_pool2d needs [N, C, H, W] input")
    return imp.emit("avg_pool2d", [imp.t(x)], imp.out_type(), kernel=_pair(kernel),
                    stride=_pair(stride) if stride else None, padding=_pair(padding), ceil_mode=bool(ceil_mode),
                    count_include_pad=bool(count_include_pad), divisor_override=int(divisor_override or 0))


@_h(aten.adaptive_avg_pool2d.default, aten._adaptive_avg_pool2d.default)
def _adaptive_avg_pool(imp, node, x, output_size):
    v = imp.t(x)
    shp = _shape(v)
    if len(shp) != 4 or any(d < 0 for d in shp[2:]):
        raise _Skip("adaptive_avg_pool2d needs [N, C, H, W] input with static H, W")
    out = [o if o is not None else i for o, i in zip(_pair(output_size), shp[2:])]
    if shp[2] % out[0] or shp[3] % out[1]:
        raise _Skip(f"adaptive_avg_pool2d from {shp[2]}x{shp[3]} to {out[0]}x{out[1]} (windows of unequal "
                    "size) is not supported; only output sizes that divide the input")
    k = [shp[2] // out[0], shp[3] // out[1]]
    if k == [1, 1]:
        return v
    return imp.emit("avg_pool2d", [v], imp.out_type(), kernel=k, stride=k)


@_h(aten.max_pool2d_with_indices.default)
def _max_pool_idx(imp, node, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    y = _pool(imp, x, kernel, stride, padding, dilation, ceil_mode, tensor_type(node.meta["val"][0]))
    # the indices a training graph saves for the backward (dead code, removed, when unused)
    idx = imp.emit("max_pool2d_indices", [imp.t(x)], tensor_type(node.meta["val"][1]), kernel=_pair(kernel),
                   stride=_pair(stride) if stride else None, padding=_pair(padding), dilation=_pair(dilation),
                   ceil_mode=bool(ceil_mode))
    return (y, idx)


@_h(aten.max_pool2d_with_indices_backward.default)
def _max_pool_backward(imp, node, g, x, kernel, stride, padding, dilation, ceil_mode, indices):
    """Each window's gradient added at its maximum (the saved flat index into H x W): scatter_reduce (sum) of
    the op table along the flattened plane of every (n, c)."""
    gv, xv, iv = imp.t(g), imp.t(x), imp.t(indices)
    shp = _shape(xv)
    if len(shp) != 4 or any(d < 0 for d in shp + _shape(gv)):
        raise _Skip("max pooling's gradient needs a static [N, C, H, W] input")
    N, C, H, W = shp
    rows, per = N * C, _static_numel(_shape(gv)[2:])
    e = xv.type.get_element_type()
    zeros = imp.const(0.0, e, [rows, H * W])
    dx = imp.emit("scatter_reduce", [zeros, imp.reshape(iv, [rows, per]), imp.reshape(imp.cast(gv, e), [rows, per])],
                  dim=1, reduce="sum", include_self=True)
    return imp.reshape(dx, shp)


@_h(aten.max_pool2d.default)
def _max_pool(imp, node, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _pool(imp, x, kernel, stride, padding, dilation, ceil_mode, imp.out_type())


@_h(aten.scaled_dot_product_attention.default)
def _sdpa(imp, node, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    return _attention(imp, q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa, imp.out_type())


# The fused kernels sdpa dispatches to. aot_autograd's graph (the torch.compile backend) holds these instead
# of sdpa: on CUDA the cuDNN / flash / memory-efficient one the dispatcher picked, on the CPU the flash one.
# Output 0 is the attention; the others (log-sum-exp, RNG state, debug mask) are only for autograd.
_FUSED_SDPA = {  # op -> index of attn_bias among the positional args (None: the op takes none)
    "_scaled_dot_product_cudnn_attention": 3,
    "_scaled_dot_product_efficient_attention": 3,
    "_scaled_dot_product_flash_attention": None,
    "_scaled_dot_product_flash_attention_for_cpu": None,
}


def _fused_sdpa(imp, node, q, k, v, *args, **kw):
    bias_at = _FUSED_SDPA[node.target._opname]
    rest = list(args)
    mask = kw.get("attn_mask")
    if bias_at is not None:  # (attn_bias, compute_log_sumexp, dropout_p, is_causal, ...)
        mask = rest[0] if rest else kw.get("attn_bias")
        rest = rest[2:]
    dropout = rest[0] if len(rest) > 0 else kw.get("dropout_p", 0.0)
    causal = rest[1] if len(rest) > 1 else kw.get("is_causal", False)
    outs = node.meta["val"]
    # the kernels are only dispatched for shapes they accept: GQA shapes mean the caller enabled it
    y = _attention(imp, q, k, v, mask, dropout, causal, kw.get("scale"), True, tensor_type(outs[0]))
    return (y,) + (None,) * (len(outs) - 1)


for _name in _FUSED_SDPA:
    if hasattr(aten, _name):
        _h(getattr(aten, _name).default)(_fused_sdpa)


def _attention(imp, q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa, out_type):
    if dropout_p:
        raise _Skip("attention dropout is not supported (call model.eval() before compiling)")
    qv, kv, vv = imp.t(q), imp.t(k), imp.t(v)
    if not (len(_shape(qv)) == len(_shape(kv)) == len(_shape(vv)) == 4):
        raise _Skip("attention needs [B, H, L, E] operands")
    hq, hk = _shape(qv)[1], _shape(kv)[1]
    if hq != hk and not (enable_gqa and hk > 0 and hq % hk == 0):
        raise _Skip("query and key heads differ without enable_gqa")
    mask = []
    if attn_mask is not None:
        mv = imp.t(attn_mask)
        e = qv.type.get_element_type()
        if mv.type.get_element_type() == IntegerType(1):  # boolean (True = attend): additive 0 / -inf
            mv = imp.emit("where", [mv, imp.const(0.0, e), imp.const(float("-inf"), e)])
        mask = [imp.cast(mv, e)]
    return imp.emit("attention", [qv, kv, vv, *mask], out_type, scale=float(scale) if scale else 0.0,
                    causal=bool(is_causal))


# ---- gather / scatter


@_h(aten.index_select.default)
def _index_select(imp, node, x, dim, idx):
    v = imp.t(x)
    return imp.emit("index_select", [v, imp.t(idx)], imp.out_type(), dim=dim % len(_shape(v)))


@_h(aten.embedding.default)
def _embedding(imp, node, w, idx, padding_idx=-1, *rest):
    return imp.emit("embedding", [imp.t(w), imp.t(idx)], imp.out_type())


@_h(aten._embedding_bag.default, aten._embedding_bag_forward_only.default, aten.embedding_bag.padding_idx,
    aten.embedding_bag.default)
def _embedding_bag(imp, node, w, idx, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if per_sample_weights is not None:
        raise _Skip("per_sample_weights are not supported")
    if padding_idx not in (None, -1):
        raise _Skip("padding_idx is not supported")
    iv = imp.t(idx)
    if len(_shape(iv)) == 2:  # 2-D indices: one bag per row, offsets unused
        bags = iv
    else:
        off = imp.static.get(offsets) if isinstance(offsets, torch.fx.Node) else None
        if off is None:
            raise _Skip("1-D indices need offsets that are a static arange (uniform bag size); "
                        "these offsets are computed at run time")
        n = _shape(iv)[0]
        if n < 0:
            raise _Skip("dynamic number of indices")
        if include_last_offset:
            off = off[:-1]
        nb = len(off)
        per = n // nb if nb else 0
        if nb == 0 or per * nb != n or not np.array_equal(off, np.arange(0, n, per)):
            raise _Skip("offsets do not describe bags of one uniform size")
        bags = imp.reshape(iv, [nb, per])
    mode_s = {0: "sum", 1: "mean", 2: "max"}[int(mode)]
    rt = tensor_type(node.meta["val"][0]) if isinstance(node.meta.get("val"), (tuple, list)) else imp.out_type()
    y = imp.emit("embedding_bag", [imp.t(w), bags], rt, mode=mode_s)
    if node.target in (aten.embedding_bag.default, aten.embedding_bag.padding_idx, aten._embedding_bag.default,
                       aten._embedding_bag_forward_only.default):
        return (y, *_bag_helpers(node, offsets, mode, include_last_offset, imp.static.get(offsets)))
    return y


def _bag_helpers(node, offsets, mode, include_last_offset, off) -> list:
    """offset2bag, bag_size, max_indices: what eager's embedding bag returns for its backward. With static
    offsets and no padding_idx (both required above) they depend on the offsets and the number of indices
    only: computed once here by the op itself on indices that are all 0, on the graph's device."""
    if off is None or int(mode) == 2:
        return [None, None, None]
    vals = node.meta.get("val")
    dev = vals[0].device if isinstance(vals, (tuple, list)) and vals[0].device.type != "meta" else "cpu"
    n = int(node.args[1].meta["val"].shape[0]) if len(node.args[1].meta["val"].shape) == 1 else None
    if n is None:
        return [None, None, None]
    wdt = node.args[0].meta["val"].dtype  # the kernels' helper results depend on the weight's dtype too
    with torch._subclasses.fake_tensor.unset_fake_temporarily():
        outs = aten._embedding_bag.default(torch.zeros(1, 1, device=dev, dtype=wdt),
                                           torch.zeros(n, dtype=torch.int64, device=dev),
                                           torch.as_tensor(off, device=dev), False, int(mode), False, None,
                                           bool(include_last_offset))
        got = [t.cpu().numpy().copy() for t in outs[1:]]
    # torch's fake kernel and its CPU kernel disagree on offset2bag's size for some dtypes (bf16: n vs 0):
    # the graph's shape wins, with the values the name says (index j's bag; each bag's size; no max index)
    nb = len(off) - (1 if include_last_offset else 0)
    per = n // max(nb, 1)
    meaning = [np.repeat(np.arange(nb, dtype=np.int64), per), np.full(nb, per, dtype=np.int64), None]
    out = []
    for a, v, m in zip(got, vals[1:], meaning):
        want = tuple(v.shape)
        if tuple(a.shape) != want:
            a = m if m is not None and m.shape == want else np.zeros(want, dtype=np.int64)
        out.append(_StaticArr(a))
    return out


def _scatter_rows(imp, num_weights: int, idx: SSAValue, src: SSAValue, rt) -> SSAValue:
    """``zeros[num_weights, E]`` with the rows of ``src`` [n, E] added at ``idx`` [n]: the op table's index_add
    (a scatter-accumulate, pushed from its source rows by the scatter template)."""
    zeros = imp.const(0.0, rt.get_element_type(), [num_weights, _shape(src)[-1]])
    return imp.emit("index_add", [zeros, idx, imp.cast(src, rt.get_element_type())], rt, dim=0)


@_h(aten.embedding_dense_backward.default)
def _embedding_dense_backward(imp, node, g, idx, num_weights, padding_idx, scale_grad_by_freq):
    if scale_grad_by_freq:
        raise _Skip("scale_grad_by_freq is not supported")
    gv, iv = imp.t(g), imp.t(idx)
    n = _static_numel(_shape(iv))
    if n < 0 or any(d < 0 for d in _shape(gv)):
        raise _Skip("dynamic shapes are not supported")
    E = _shape(gv)[-1]
    iv = imp.reshape(iv, [n])
    src = imp.reshape(gv, [n, E])
    pad = int(imp.scalar(padding_idx))
    if pad >= 0:  # the padding row gets no gradient
        ie = iv.type.get_element_type()
        hit = imp.emit("eq", [imp.reshape(iv, [n, 1]), imp.const(pad, ie)])
        src = imp.emit("where", [hit, imp.const(0.0, src.type.get_element_type()), src])
    return _scatter_rows(imp, int(imp.scalar(num_weights)), iv, src, imp.out_type())


@_h(aten._embedding_bag_backward.default)
def _embedding_bag_backward(imp, node, g, idx, offsets, offset2bag, bag_size, max_indices, num_weights,
                            scale_grad_by_freq, mode, sparse, per_sample_weights=None, padding_idx=-1):
    """sum / mean over bags of one static size: weight row I[b, l] gets g[b] (/ the bag size)."""
    if sparse or scale_grad_by_freq or per_sample_weights is not None or padding_idx not in (None, -1):
        raise _Skip("sparse, scale_grad_by_freq, per_sample_weights and padding_idx are not supported")
    if int(mode) == 2:
        raise _Skip("the gradient of a max bag is not supported")
    gv, iv = imp.t(g), imp.t(idx)
    if len(_shape(iv)) == 2:
        bags = iv
    else:
        off = imp.static.get(offsets) if isinstance(offsets, torch.fx.Node) else None
        n, nb = _shape(iv)[0], _shape(gv)[0]
        if off is None or n < 0 or nb <= 0 or len(off) not in (nb, nb + 1) or n % nb or \
                not np.array_equal(off[:nb], np.arange(0, n, n // nb)):
            raise _Skip("1-D indices need static offsets of one uniform bag size (an arange)")
        bags = imp.reshape(iv, [nb, n // nb])
    nb, per = _shape(bags)
    E = _shape(gv)[-1]
    src = imp.emit("expand", [imp.reshape(gv, [nb, 1, E])], shape=[nb, per, E])
    if int(mode) == 1:
        src = imp.emit("mul", [src, imp.const(1.0 / per, gv.type.get_element_type())])
    return _scatter_rows(imp, int(imp.scalar(num_weights)), imp.reshape(bags, [nb * per]),
                         imp.reshape(src, [nb * per, E]), imp.out_type())


@_h(aten.index_put.default, aten.index_put_.default)
def _index_put(imp, node, x, indices, values, accumulate=False):
    given = [d for d, i in enumerate(indices) if i is not None]
    if len(given) != 1:  # x[..., I] (None for the leading dims: index_select's gradient along dim d)
        raise _Skip("index_put with more than one index tensor is not supported")
    d = given[0]
    xv, iv, vv = imp.t(x), imp.t(indices[d]), imp.t(values)
    if len(_shape(iv)) != 1:
        raise _Skip("index_put needs a 1-D index tensor")
    want = [*_shape(xv)[:d], _shape(iv)[0], *_shape(xv)[d + 1:]]
    if _shape(vv) != want:
        vv = imp.emit("expand", [vv], TensorType(vv.type.get_element_type(), want), shape=want)
    vv = imp.cast(vv, xv.type.get_element_type())
    # x[..., I] = v (a KV cache's new row) is index_copy; += is index_add
    return imp.emit("index_add" if accumulate else "index_copy", [xv, iv, vv], imp.out_type(), dim=d)


@_h(aten.index_copy.default, aten.index_copy_.default)
def _index_copy(imp, node, x, dim, idx, src):
    xv = imp.t(x)
    d = dim % len(_shape(xv))
    iv = imp.t(idx)
    sv = imp.t(src)
    if len(_shape(iv)) == 0:  # a scalar index: one slice
        iv = imp.reshape(iv, [1])
    if len(_shape(sv)) != len(_shape(xv)):  # the slice without its dim
        sv = imp.reshape(sv, [*_shape(xv)[:d], 1, *_shape(xv)[d + 1:]])
    return imp.emit("index_copy", [xv, iv, imp.cast(sv, xv.type.get_element_type())], imp.out_type(), dim=d)


@_h(aten.index_add.default)
def _index_add(imp, node, x, dim, idx, src, alpha=1):
    xv = imp.t(x)
    # (torch.index_add on the GPU adds each slice atomically in x's own type: so does the compiled program)
    return imp.emit("index_add", [xv, imp.t(idx), imp.t(src)], imp.out_type(), dim=dim % len(_shape(xv)),
                    alpha=float(alpha), accumulate="native")


@_h(aten.index.Tensor)
def _index(imp, node, x, indices):
    xv = imp.t(x)
    dims = [d for d, i in enumerate(indices) if i is not None]
    if not dims:
        return xv
    idx = []
    for d in dims:
        iv = imp.t(indices[d])
        if iv.type.get_element_type() == IntegerType(1):
            raise _Skip("boolean-mask indexing (data-dependent output size) is not supported")
        known = imp.static.get(indices[d]) if isinstance(indices[d], torch.fx.Node) else None
        if known is None or (known < 0).any():  # x[i] with i < 0 counts from the end, as in eager
            n = _static_dim(imp, xv, d)
            e = iv.type.get_element_type()
            iv = imp.emit("where", [imp.emit("lt", [iv, imp.const(0, e)]), imp.emit("add", [iv, imp.const(n, e)]), iv])
        idx.append(iv)
    return imp.emit("index", [xv, *idx], imp.out_type(), dims=dims)


@_h(aten.scatter_reduce.two)
def _scatter_reduce(imp, node, x, dim, idx, src, reduce, include_self=True):
    xv = imp.t(x)
    if not _is_float(xv.type.get_element_type()):
        raise _Skip("scatter_reduce on non-float elements is not supported")
    return imp.emit("scatter_reduce", [xv, imp.t(idx), imp.cast(imp.t(src), xv.type.get_element_type())],
                    imp.out_type(), dim=dim % len(_shape(xv)), reduce=reduce, include_self=bool(include_self))


@_h(aten.scatter_add.default)
def _scatter_add(imp, node, x, dim, idx, src):
    return _scatter_reduce(imp, node, x, dim, idx, src, "sum", True)


@_h(aten.cumsum.default)
def _cumsum(imp, node, x, dim, dtype=None):
    v = imp.t(x)
    rt = imp.out_type()
    return imp.emit("cumsum", [imp.cast(v, rt.get_element_type())], rt, dim=dim % max(len(_shape(v)), 1))


@_h(aten.gather.default)
def _gather(imp, node, x, dim, idx, sparse_grad=False):
    xv = imp.t(x)
    return imp.emit("gather", [xv, imp.t(idx)], imp.out_type(), dim=dim % len(_shape(xv)))


# ---- constants


def _fill(imp, value):
    rt = imp.out_type()
    if any(d < 0 for d in rt.get_shape()):
        raise _Skip("a filled tensor of dynamic shape is not supported")
    return imp.const(imp.scalar(value), rt.get_element_type(), rt.get_shape())


@_h(aten.full.default, aten.full_like.default)
def _full(imp, node, a, value, *rest, **kw):
    return _fill(imp, value)


@_h(aten.new_full.default)
def _new_full(imp, node, x, size, value, *rest, **kw):
    return _fill(imp, value)


@_h(aten.zeros.default, aten.zeros_like.default, aten.new_zeros.default)
def _zeros(imp, node, *args, **kw):
    return _fill(imp, 0)


@_h(aten.ones.default, aten.ones_like.default, aten.new_ones.default)
def _ones(imp, node, *args, **kw):
    return _fill(imp, 1)


@_h(aten.scalar_tensor.default)
def _scalar_tensor(imp, node, v, **kw):
    return _fill(imp, v)


@_h(aten.arange.default, aten.arange.start, aten.arange.start_step)
def _arange(imp, node, *args, **kw):
    vals = [imp.scalar(a) for a in args]
    rt = imp.out_type()
    if any(d < 0 for d in rt.get_shape()):
        raise _Skip("arange with a dynamic length")
    val = node.meta["val"]
    arr = np.arange(*vals)
    arr = arr.astype(np.float64 if val.dtype.is_floating_point else np.int64)
    if not val.dtype.is_floating_point:
        imp.static[node] = arr
    return imp.const(arr, rt.get_element_type(), rt.get_shape())


# ------------------------------------------------------------------ API


def import_exported(ep: torch.export.ExportedProgram, *, decompositions: dict | None = None,
                    decompose: bool = True, with_weights: bool = True,
                    torch_weights: bool = False) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """An ExportedProgram -> (graph-dialect module, weights name -> numpy).

    ``torch_weights``: the weights as the exported program's own tensors (detached, on their device, their
    dtype) instead of numpy copies on the host (``kitsune.compile`` uploads them straight to the device: no
    round trip through host memory and fp32 for bf16 weights).

    ``decompositions`` defaults to ``decomposition_table()`` (core ATen minus
    ``KEPT_OPS``); pass ``torch.export.default_decompositions()`` to lower
    everything to core ATen, or ``decompose=False`` to import ``ep`` as is.
    Raises UnsupportedOpsError listing every unsupported op.
    """
    if decompose:
        ep = ep.run_decompositions(decomposition_table() if decompositions is None else decompositions)
    sig = ep.graph_signature
    kinds = {"PARAMETER": "parameter", "BUFFER": "buffer", "CONSTANT_TENSOR": "constant", "USER_INPUT": "input"}
    specs = {}
    for s in sig.input_specs:
        if not hasattr(s.arg, "name"):
            continue
        kind = kinds.get(s.kind.name, s.kind.name.lower())
        name = s.target if kind != "input" and s.target else s.arg.name
        value = None
        if kind != "input":
            value = ep.state_dict.get(name) if name in ep.state_dict else ep.constants.get(name)
        specs[s.arg.name] = ArgSpec(kind, name, value)
    bad = [Unsupported("(state update)", f"{s.kind.name.lower()} outputs (in-place updates of "
                       f"{'gradients' if 'GRADIENT' in s.kind.name else 'inputs' if 'INPUT' in s.kind.name else 'tokens'}"
                       ") are not supported: update buffers (register_buffer) instead of inputs, or call "
                       "model.eval() before compiling", "")
           for s in sig.output_specs if s.kind.name not in ("USER_OUTPUT", "BUFFER_MUTATION")]
    mutates = [s.target if s.kind.name == "BUFFER_MUTATION" else None for s in sig.output_specs]
    return import_graph(ep.graph, specs, with_weights=with_weights, bad_outputs=bad, torch_weights=torch_weights,
                        mutates=mutates)


def import_graph(graph: torch.fx.Graph, specs: dict[str, ArgSpec] | None = None, *, with_weights: bool = True,
                 bad_outputs: Sequence[Unsupported] = (), torch_weights: bool = False, plan: bool = False,
                 mutates: Sequence[str | None] = ()):
    """A functional ATen FX graph (torch.export's, or the one aot_autograd hands a ``torch.compile`` backend)
    -> (graph-dialect module, weights name -> numpy).

    Shapes and dtypes come from each node's ``meta["val"]`` (fake tensors). ``specs`` maps placeholder names
    to :class:`ArgSpec` (kind, torch name, weight value); placeholders not in it are user inputs. Raises
    UnsupportedOpsError listing every unsupported op (with ``bad_outputs`` added).

    ``plan=True`` (aot_autograd's graphs, whose outputs include the tensors saved for the backward): outputs
    that are placeholders, statically known values (ArgSpec kind ``static`` marks such a placeholder) or
    repeats get no function result, and a third value, the :class:`OutputPlan`, says where each comes from.

    ``mutates``: per graph output (torch.export's output specs), the buffer it is the new value of (a buffer
    mutation: ``index_copy_`` / slice assignment into a registered buffer), else None. Such a result carries
    ``kitsune.mutates = "<buffer name>"`` (see ``kitsune.interpreter.mutated_results``).
    """
    imp = _Importer(graph, specs or {}, with_weights, bad_outputs, torch_weights)
    imp.mutates = list(mutates)
    if plan:
        imp.plan = OutputPlan([])
        module, weights = imp.run()
        return module, weights, imp.plan
    return imp.run()


def import_module(model: torch.nn.Module, example_inputs: Sequence[Any], dynamic_shapes=None, *,
                  with_weights: bool = True, strict: bool = False,
                  decompositions: dict | None = None) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """torch.export.export(model, example_inputs) and import it (see import_exported)."""
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    ep = export(model, tuple(example_inputs), dynamic_shapes=dynamic_shapes, strict=strict)
    return import_exported(ep, with_weights=with_weights, decompositions=decompositions)


class ExportError(KitsuneImportError):
    """torch.export could not trace the model (data-dependent control flow, ...), said in Kitsune's words."""


def _user_frame(tb) -> tuple[str, int, str] | None:
    """The innermost traceback frame outside torch (the model's or a library's code)."""
    best = None
    while tb is not None:
        f = tb.tb_frame.f_code.co_filename
        if not f.startswith(_TORCH_DIR) and not f.startswith("<") and os.path.abspath(f) != os.path.abspath(__file__):
            best = (f, tb.tb_lineno, linecache.getline(f, tb.tb_lineno).strip())
        tb = tb.tb_next
    return best


def export(model, example_inputs, dynamic_shapes=None, strict: bool = False):
    """torch.export.export, with its tracing failures turned into a located ExportError."""
    import logging

    # torch logs the FX graph of a failed trace (screens of it) before raising: the error below says it all
    quiet = {n: lg.level for n, lg in logging.root.manager.loggerDict.items()
             if (n == "torch" or n.startswith("torch.")) and isinstance(lg, logging.Logger)}
    for n in quiet:
        logging.getLogger(n).setLevel(logging.CRITICAL)
    import contextlib
    import io
    import sys

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            ep = torch.export.export(model, tuple(example_inputs), dynamic_shapes=dynamic_shapes, strict=strict)
        sys.stderr.write(err.getvalue())  # warnings of a successful export are the user's to see
        return ep
    except Exception as e:  # noqa: BLE001
        name = type(e).__name__
        where = _user_frame(e.__traceback__)
        loc = f"{where[0]}:{where[1]}: " if where else ""
        src = f"\n    {where[2]}" if where and where[2] else ""
        if "DataDependent" in name or "GuardOnDataDependent" in name:
            raise ExportError(
                f"{loc}error: data-dependent control flow: this line branches (or sizes a tensor) on a tensor's "
                f"values, which torch.export cannot trace{src}\n"
                "  what to do: make the condition depend on shapes or Python values only, compute it outside "
                "the model and pass the result in, or use torch.cond for a data-dependent branch") from None
        first = str(e).strip().splitlines()[0][:300] if str(e).strip() else name
        raise ExportError(f"{loc}error: torch.export failed ({name}): {first}{src}") from None
    finally:
        for n, level in quiet.items():
            logging.getLogger(n).setLevel(level)


def module_to_text(module: ModuleOp, debuginfo: bool = True) -> str:
    """The module's text, with op locations (loc(...)) unless debuginfo=False."""
    from io import StringIO

    from xdsl.printer import Printer

    s = StringIO()
    Printer(stream=s, print_debuginfo=debuginfo).print_op(module)
    text = s.getvalue()
    if debuginfo:  # block arguments have no location: keep the text short
        text = text.replace(" loc(unknown)", "")
    return text + "\n"


def save_weights(path: str, weights: dict[str, np.ndarray]) -> None:
    np.savez(path, **weights)


def arguments(module: ModuleOp, weights: dict[str, np.ndarray], *inputs) -> list[Any]:
    """@main's arguments in order: weights by name (a derived one, ``kitsune.derived_weights``, from the weights
    it names), then the user inputs (positionally)."""
    from kitsune.derived_weights import available, resolve
    from kitsune.interpreter import arg_names, find_function

    f = find_function(module, "main")
    kinds = [a.data["kitsune.kind"].data if a is not None and "kitsune.kind" in a.data else "input"
             for a in f.arg_attrs.data]
    it = iter([x for x in inputs if x is not None and not isinstance(x, (bool, int, float))])  # not arguments
    out = []
    for name, kind in zip(arg_names(f), kinds):
        if kind == "input":
            out.append(next(it))
        else:
            if not available(name, weights):
                raise KeyError(f"no weight {name!r}")
            out.append(resolve(name, weights))  # (a derived parameter: from the weights it names)
    return out


def op_counts(module: ModuleOp) -> Counter:
    return Counter(op.name for op in module.walk() if isinstance(op, graph.GraphOp))


def rel_err(got, want) -> float:
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    d = float(np.linalg.norm(want))
    return float(np.linalg.norm(got - want)) / (d if d > 0 else 1.0)


def demo(workload: str = "nerf_65k", scale: float = 0.05) -> None:
    """`make demo`: import a built-in workload, interpret it, compare with torch eager."""
    from kitsune.interpreter import arg_names, find_function, interpret
    from kitsune.models import get_workload

    import warnings

    model, inputs = get_workload(workload).build(scale=scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        module, weights = import_module(model, inputs)
    f = find_function(module, "main")
    lines = module_to_text(module).splitlines()
    body = lines[2:-2]
    kinds = Counter(a.data["kitsune.kind"].data for a in f.arg_attrs.data)
    user = [f"%{n}: {graph.fmt_type(t)}" for n, t, a in zip(arg_names(f), f.function_type.inputs.data,
                                                          f.arg_attrs.data) if a.data["kitsune.kind"].data == "input"]
    print(f"== import: {workload} at scale {scale} via torch.export -> graph dialect")
    kinds.pop("input", None)
    print(f"func.func @main({', '.join(f'<{v} {k} args>' for k, v in kinds.items())}, {', '.join(user)}) "
          f"-> {', '.join(graph.fmt_type(t) for t in f.function_type.outputs.data)}")
    print("\n".join(body[:12] + (["    ..."] + body[-2:] if len(body) > 14 else body[12:])))
    counts = op_counts(module)
    print(f"   {sum(counts.values())} graph ops: " + ", ".join(f"{k[6:]} x{v}" for k, v in sorted(counts.items())))
    print(f"   {len(weights)} weight tensors, {sum(w.size for w in weights.values())} values (side file, not in the IR)")
    outs = interpret(module, arguments(module, weights, *inputs))
    with torch.no_grad():
        ref = model(*inputs)
    ref = ref if isinstance(ref, (tuple, list)) else (ref,)
    for i, (o, r) in enumerate(zip(outs, ref)):
        err = rel_err(o, r.float().numpy())
        print(f"== interpreter vs torch eager, output #{i} {list(o.shape)}: rel err (norm-wise) = {err:.2e}")
        if err > 1e-4:
            raise SystemExit("demo: the imported program disagrees with torch")
