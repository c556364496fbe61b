"""Numpy values of the builtin tensor types: element types, bf16 rounding, dense constants.

The storage convention of every numpy-side consumer (the reference interpreter, the gpu_queue
interpreter, code generators reading ``graph.constant``, schedule selection, kitsune-run): f32 ->
float32, f64 -> float64, f16 -> float16, bf16 -> float32 holding bf16-rounded values, i64 / i32 / i16 /
i8 -> int64 / int32 / int16 / int8, i1 -> bool.
"""

from __future__ import annotations

import contextvars

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    TensorType,
)

from kitsune.dialects.graph import fmt_type


class InterpretError(Exception):
    """Bad inputs for a function (count, shape, dtype) or a failing op.

    Raised here for an element type without a numpy counterpart; the reference interpreter
    (``kitsune.interpreter``, which re-exports it) raises it for everything else."""


_F64 = contextvars.ContextVar("kitsune_interpret_f64", default=False)
"""Set while ``kitsune.interpreter.interpret(..., f64=True)`` runs: floating tensors are float64, no bf16 rounding."""


def np_dtype(elem) -> np.dtype:
    if _F64.get() and isinstance(elem, (Float32Type, BFloat16Type, Float16Type, Float64Type)):
        return np.dtype(np.float64)
    if isinstance(elem, Float32Type) or isinstance(elem, BFloat16Type):
        return np.dtype(np.float32)
    if isinstance(elem, Float16Type):
        return np.dtype(np.float16)
    if isinstance(elem, Float64Type):
        return np.dtype(np.float64)
    if isinstance(elem, IntegerType):
        w = elem.width.data
        return np.dtype(bool) if w == 1 else np.dtype({8: np.int8, 16: np.int16, 32: np.int32}.get(w, np.int64))
    raise InterpretError(f"no numpy type for {fmt_type(elem)}")


def round_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    shape = np.shape(x)
    x = np.ascontiguousarray(x, dtype=np.float32).reshape(shape)  # ascontiguousarray makes 0-d arrays 1-d
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(x), x, out)


def to_storage(a: np.ndarray, t: TensorType) -> np.ndarray:
    elem = t.get_element_type()
    a = np.asarray(a).astype(np_dtype(elem), copy=False)
    if isinstance(elem, BFloat16Type) and not _F64.get():
        a = round_bf16(a)
    return a


def _raw_values(attr: DenseIntOrFPElementsAttr) -> np.ndarray | None:
    """The elements of ``attr`` decoded from its packed bytes by numpy (xDSL's ``get_values`` builds a Python
    list: seconds for a 6.4 M-element constant), or None for an element type this does not know."""
    elem = attr.get_element_type()
    raw = attr.data.data
    if isinstance(elem, BFloat16Type):
        return (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
    fmt = getattr(elem, "format", None)
    if not isinstance(fmt, str):
        return None
    try:
        dt = np.dtype(fmt)
    except TypeError:
        return None
    if dt.itemsize == 0 or len(raw) % dt.itemsize:
        return None
    return np.frombuffer(raw, dtype=dt)


def constant_value(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    t = attr.get_type()
    shape = [d for d in t.get_shape()]
    raw = _raw_values(attr)
    vals = np.asarray(raw if raw is not None else attr.get_values()).astype(np_dtype(t.get_element_type()))
    n = int(np.prod(shape)) if shape else 1
    if vals.size == 1 and n != 1:  # a splat: one element stands for all (rounded once, then broadcast)
        one = to_storage(vals.reshape(()), t)
        return np.full(shape, one, dtype=one.dtype)
    return to_storage(vals.reshape(shape), t)


def splat_attr(t: TensorType, value) -> DenseIntOrFPElementsAttr:
    """A dense constant of type ``t`` holding ``value`` everywhere, stored as its one element (prints as
    ``dense<v>``; ``constant_value`` expands it). ``DenseIntOrFPElementsAttr.from_list(t, [v])`` stores every
    element: 12.8 MB for the zero start of a [100000, 64] bf16 embedding gradient, and every reader of it
    (verification, printing, schedule selection) then decodes millions of elements in Python."""
    one = DenseIntOrFPElementsAttr.from_list(TensorType(t.get_element_type(), []), [value])
    return DenseIntOrFPElementsAttr(t, one.data)


__all__ = ["InterpretError", "np_dtype", "round_bf16", "to_storage", "constant_value", "splat_attr"]
