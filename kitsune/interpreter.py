"""Reference interpreter (numpy) for the graph dialect and func, on xdsl.interpreter.

Every graph op runs through the op table (``kitsune.semantics.optable``), i.e.
through the same tensor-comprehension text that drives shape inference and the
cost model. Tensors are numpy arrays: f32 -> float32, f64 -> float64, f16 ->
float16, bf16 -> float32 holding bf16-rounded values, i64/i32 -> int64/int32,
i1 -> bool. Floating ops compute in float32 and round to the result type.

``interpret(..., f64=True)`` evaluates every floating tensor in float64 instead
(no bf16 / f16 rounding; constants keep the values their type gives them, as do
literals of the notation, which are float32): two evaluations of one computation
in different association orders (a pass that splits a reduction, another BLAS
kernel) then agree to ~1e-13, so comparing them tests meaning, not float32 rounding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters.func import FuncFunctions

from kitsune.dialects.graph import GRAPH_OPS, GraphOp, fmt_loc, fmt_type
# the value helpers live in kitsune.dialects.values; re-exported here for existing callers
from kitsune.dialects.values import _F64, InterpretError, constant_value, np_dtype, round_bf16, to_storage  # noqa: F401
from kitsune.semantics import optable
from kitsune.semantics.comprehension import DYN


def _run_graph_op(op: GraphOp, args: tuple[Any, ...]) -> tuple[Any, ...]:
    od = op.OPDEF
    if od.name == "constant":
        return (constant_value(op.properties["value"]),)
    arrays = [np.asarray(a) for a in args]
    rtypes = [r.type for r in op.results]
    rshapes = []
    for r in rtypes:
        rshapes.append(tuple(DYN if d < 0 else d for d in r.get_shape()))
    try:
        outs = optable.run(od, arrays, op.attrs(), rshapes, [np_dtype(t.get_element_type()) for t in rtypes])
    except Exception as e:  # noqa: BLE001 - OpError, TCError, numpy errors: report which op failed
        raise InterpretError(
            f"{fmt_loc(op)}{op.name} failed on inputs of shapes {[list(a.shape) for a in arrays]}: {e}"
        ) from e
    return tuple(to_storage(o, t) for o, t in zip(outs, rtypes))


def _make_functions() -> type[InterpreterFunctions]:
    ns: dict[str, Any] = {}
    for name, cls in GRAPH_OPS.items():
        def run(self, interpreter, op, args, _cls=cls):
            return _run_graph_op(op, args)

        ns[f"run_{name}"] = impl(cls)(run)
    return register_impls(type("GraphFunctions", (InterpreterFunctions,), ns))


GraphFunctions = _make_functions()


def _extra_functions() -> list[InterpreterFunctions]:
    """Interpreter functions of the lower levels, where they exist."""
    out = []
    for mod, name in (("kitsune.dialects.dataflow", "DataflowFunctions"),
                      ("kitsune.dialects.gpu_queue", "GpuQueueFunctions")):
        try:
            m = __import__(mod, fromlist=[name])
        except ImportError:
            continue
        if hasattr(m, name):
            out.append(getattr(m, name)())
    return out


def _as_numpy(x: Any) -> np.ndarray:
    try:
        import torch

        if isinstance(x, torch.Tensor):
            x = x.detach().cpu()
            if x.dtype == torch.bfloat16:
                return x.float().numpy()
            return x.numpy()
    except ImportError:  # pragma: no cover
        pass
    return np.asarray(x)


def find_function(module: ModuleOp, fn: str) -> func.FuncOp:
    for op in module.walk():
        if isinstance(op, func.FuncOp) and op.sym_name.data == fn:
            return op
    names = [op.sym_name.data for op in module.walk() if isinstance(op, func.FuncOp)]
    raise InterpretError(f"no function @{fn} in the module (functions: {', '.join('@' + n for n in names) or 'none'})")


def check_inputs(f: func.FuncOp, inputs: Sequence[Any]) -> list[np.ndarray]:
    types = f.function_type.inputs.data
    if len(inputs) != len(types):
        raise InterpretError(f"@{f.sym_name.data} takes {len(types)} inputs, got {len(inputs)}")
    out = []
    for i, (x, t) in enumerate(zip(inputs, types)):
        a = _as_numpy(x)
        if not isinstance(t, TensorType):
            out.append(a)
            continue
        shape = t.get_shape()
        if len(shape) != a.ndim or any(d >= 0 and d != s for d, s in zip(shape, a.shape)):
            raise InterpretError(f"input #{i} of @{f.sym_name.data} has shape {list(a.shape)}, "
                                 f"expected {fmt_type(t)}")
        want = np_dtype(t.get_element_type())
        if (want.kind == "f") != (a.dtype.kind == "f") or (want == np.bool_) != (a.dtype == np.bool_):
            raise InterpretError(f"input #{i} of @{f.sym_name.data} has dtype {a.dtype}, expected {fmt_type(t)}")
        out.append(to_storage(a, t))
    return out


def interpret(module: ModuleOp, inputs: Sequence[Any] | Mapping[str, Any], fn: str = "main", *,
              f64: bool = False) -> list[np.ndarray]:
    """Run function ``fn`` of ``module`` on numpy arrays (or torch tensors).

    ``inputs`` is a list in argument order, or a dict keyed by the argument
    names the importer records (``kitsune.name``), falling back to positions.
    ``f64=True``: every floating tensor is evaluated in float64 (see the module docstring).
    """
    if f64:
        tok = _F64.set(True)
        try:
            return [np.asarray(x) for x in interpret(module, inputs, fn)]
        finally:
            _F64.reset(tok)
    f = find_function(module, fn)
    if isinstance(inputs, Mapping):
        inputs = _order_inputs(f, inputs)
    args = check_inputs(f, list(inputs))
    interp = Interpreter(module)
    interp.register_implementations(FuncFunctions())
    interp.register_implementations(GraphFunctions())
    for extra in _extra_functions():
        interp.register_implementations(extra)
    return list(interp.call_op(fn, tuple(args)))


def _order_inputs(f: func.FuncOp, inputs: Mapping[str, Any]) -> list[Any]:
    from kitsune.derived_weights import available, resolve

    names = arg_names(f)
    missing = [n for n in names if not available(n, inputs)]
    if missing:
        raise InterpretError(f"missing inputs for @{f.sym_name.data}: {', '.join(missing)}")
    return [resolve(n, inputs) for n in names]  # (a derived parameter: from the weights it names)


def arg_names(f: func.FuncOp) -> list[str]:
    """Argument names: the ``kitsune.name`` argument attribute, else arg<i>."""
    names = []
    attrs = f.arg_attrs.data if f.arg_attrs is not None else [None] * len(f.function_type.inputs.data)
    for i, a in enumerate(attrs):
        n = None
        if a is not None and "kitsune.name" in a.data:
            n = a.data["kitsune.name"].data
        names.append(n or f"arg{i}")
    return names


def mutated_results(f: func.FuncOp) -> dict[int, str]:
    """Result position -> the buffer it is the new value of (``kitsune.mutates``: torch.export's buffer
    mutations, e.g. a KV cache's ``index_copy_``). Every other result is a user output."""
    out = {}
    attrs = f.res_attrs.data if f.res_attrs is not None else []
    for i, a in enumerate(attrs):
        if a is not None and "kitsune.mutates" in a.data:
            out[i] = a.data["kitsune.mutates"].data
    return out
