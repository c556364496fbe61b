"""Triton spellings shared by the generator: element types, literals, accumulation and reduction text, block sizes;
the code part of a generated line."""

from __future__ import annotations

import math

TL = {"f32": "tl.float32", "bf16": "tl.bfloat16", "f16": "tl.float16", "f64": "tl.float64", "i64": "tl.int64",
      "i32": "tl.int32", "i16": "tl.int16", "i8": "tl.int8", "i1": "tl.int1"}
SIG = {"f32": "*fp32", "bf16": "*bf16", "f16": "*fp16", "f64": "*fp64", "i64": "*i64", "i32": "*i32",
       "i16": "*i16", "i8": "*i8", "i1": "*i1"}
TORCH = {"f32": "torch.float32", "bf16": "torch.bfloat16", "f16": "torch.float16", "f64": "torch.float64",
         "i64": "torch.int64", "i32": "torch.int32", "i16": "torch.int16", "i8": "torch.int8", "i1": "torch.bool"}
NEUTRAL = {"=": 0.0, "+=": 0.0, "*=": 1.0, "max=": -math.inf, "min=": math.inf}
NAN = "propagate_nan=tl.PropagateNan.ALL"  # max / min: a NaN wins, as in torch


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


def code_part(line: str) -> str:
    """``line`` up to its comment (a ``#`` outside string literals), trailing blanks dropped."""
    quote = None
    for i, ch in enumerate(line):
        if quote is not None:
            if ch == quote and line[i - 1] != "\\":
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return line[:i].rstrip()
    return line


__all__ = ["TL", "SIG", "TORCH", "NEUTRAL", "NAN", "combine_text", "reduce_text", "pow2", "pow2_floor", "lit",
           "code_part"]
