"""The graph op table: every graph op's operands, attributes and meaning, once.

Each entry's ``semantics`` builds the op's tensor-comprehension program for the
operand shapes and attribute values of one op instance (rank-polymorphic ops
such as elementwise and reductions are templates over the rank). From this one
table derive:

* the IRDL op classes of the ``graph`` dialect (``kitsune.dialects.graph``),
* result-shape inference for the verifiers (``infer``),
* the numpy reference interpreter (``kitsune.interpreter``),
* FLOP / byte counts for the cost model (``op_counts``).

Ops whose meaning the notation does not cover are marked ``layout=True`` and
give a numpy function and a shape rule instead: only ``reshape`` and
``constant``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from kitsune.semantics.comprehension import DYN, Bound, TCError, count, infer_shapes, parse

Shape = tuple[int, ...]


class OpError(Exception):
    """A shape / attribute / dtype error of one op instance (for verifiers)."""


@dataclass(frozen=True)
class Operand:
    name: str
    kind: str = "tensor"  # tensor | optional | variadic
    dtype: str = "float"  # float | int | bool | any


@dataclass(frozen=True)
class Attr:
    kind: str  # int | ints | float | bool | str
    default: Any = None  # None = required
    choices: tuple = ()


@dataclass
class Instance:
    """One op instance's comprehension program."""

    text: str
    inputs: dict[str, int]  # tensor name in text -> operand position (flattened)
    results: list[str]  # tensor names in text, in result order
    params: dict[str, float | int] = field(default_factory=dict)
    extents: dict[str, int] = field(default_factory=dict)
    declared: dict[str, Shape] = field(default_factory=dict)


@dataclass
class OpDef:
    name: str
    operands: list[Operand]
    attrs: dict[str, Attr]
    semantics: Callable[[list[Shape], dict[str, Any]], Instance] | None
    summary: str
    category: str  # elementwise | reduction | contraction | normalization | gather | layout | constant
    result_dtype: str = "same"  # same | bool | free | operand:<name>
    results: int | str = 1  # number of results, or "variadic"
    layout_shape: Callable[[list[Shape], dict[str, Any], list[Shape]], list[Shape]] | None = None
    layout_eval: Callable[[list[np.ndarray], dict[str, Any], list[Shape]], list[np.ndarray]] | None = None
    example: str = ""

    @property
    def layout(self) -> bool:
        return self.semantics is None

    @property
    def keeps_index(self) -> bool:
        """Each result element is computed from the operands' elements at its own index (broadcast per
        channel included), reducing nothing: the elementwise ops, and ``batch_norm`` (inference: a per-channel
        affine of running statistics), which the fusion rules treat as elementwise."""
        return self.category == "elementwise" or self.name == "batch_norm"


OPS: dict[str, OpDef] = {}


def _def(op: OpDef) -> OpDef:
    OPS[op.name] = op
    return op


# ----------------------------------------------------------------- helpers


def _vars(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def _idx(ix: Sequence[str]) -> str:
    return ", ".join(ix)


def _broadcast(shapes: Sequence[Shape]) -> Shape:
    rank = max(len(s) for s in shapes)
    out = []
    for d in range(rank):
        sizes = [s[d - rank + len(s)] for s in shapes if d - rank + len(s) >= 0]
        known = {x for x in sizes if x not in (1, DYN)}
        if len(known) > 1:
            raise OpError(
                "shapes " + ", ".join(_fmt(s) for s in shapes) + f" do not broadcast (dim {d}: sizes {sorted(known)})"
            )
        if known:
            out.append(known.pop())
        elif DYN in sizes:
            out.append(DYN)
        else:
            out.append(1)
    return tuple(out)


def _fmt(s: Shape) -> str:
    return "[" + ", ".join("?" if d == DYN else str(d) for d in s) + "]"


def _bcast_access(name: str, shape: Shape, out: Shape, ivars: Sequence[str]) -> str:
    r, rank = len(shape), len(out)
    ix = []
    for j in range(r):
        d = j + rank - r
        ix.append("0" if shape[j] == 1 and out[d] != 1 else ivars[d])
    return f"{name}[{_idx(ix)}]"


def _norm_dims(dims: Sequence[int], rank: int, what: str = "dims") -> list[int]:
    out = []
    for d in dims:
        dd = d + rank if d < 0 else d
        if not 0 <= dd < max(rank, 1):
            raise OpError(f"{what} {d} is out of range for rank {rank}")
        out.append(dd)
    if len(set(out)) != len(out):
        raise OpError(f"{what} {list(dims)} repeats a dimension")
    return sorted(out)


def _norm_dim(d: int, rank: int) -> int:
    return _norm_dims([d], rank, "dim")[0]


def _numel(shape: Sequence[int]) -> int:
    return int(np.prod([max(d, 1) for d in shape])) if shape else 1


# --------------------------------------------------------------- elementwise

UNARY: dict[str, tuple[str, str]] = {
    # name: (body over x, summary)
    "relu": ("max(x, 0.0)", "max(x, 0)"),
    "silu": ("x * sigmoid(x)", "x * sigmoid(x)"),
    "sigmoid": ("sigmoid(x)", "1 / (1 + exp(-x))"),
    "tanh": ("tanh(x)", "hyperbolic tangent"),
    "exp": ("exp(x)", "e ** x"),
    "log": ("log(x)", "natural logarithm"),
    "sqrt": ("sqrt(x)", "square root"),
    "rsqrt": ("rsqrt(x)", "1 / sqrt(x)"),
    "neg": ("-x", "-x"),
    "abs": ("abs(x)", "|x|"),
    "erf": ("erf(x)", "the error function"),
    "reciprocal": ("1.0 / x", "1 / x"),
    "sin": ("sin(x)", "sine"),
    "cos": ("cos(x)", "cosine"),
}
_INT_OK = {"neg", "abs"}  # meaningful on integers too

GELU = {
    "none": "0.5 * x * (1.0 + erf(x * 0.7071067811865476))",
    "tanh": "0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))",
}


def _unary(body: str, extra_params: Callable[[dict], dict] | None = None):
    def sem(shapes: list[Shape], attrs: dict) -> Instance:
        (s,) = shapes
        iv = _vars("d", len(s))
        b = re.sub(r"\bx\b", f"X[{_idx(iv)}]", body)
        params = extra_params(attrs) if extra_params else {}
        return Instance(f"Y[{_idx(iv)}] = {b}", {"X": 0}, ["Y"], params)

    return sem


for _n, (_b, _s) in UNARY.items():
    _def(OpDef(_n, [Operand("x", dtype="any" if _n in _INT_OK else "float")], {}, _unary(_b), _s, "elementwise",
               example=f"%y = graph.{_n} %x : tensor<4x8xf32> -> tensor<4x8xf32>"))


def _gelu_sem(shapes, attrs):
    (s,) = shapes
    iv = _vars("d", len(s))
    return Instance(f"Y[{_idx(iv)}] = " + re.sub(r"\bx\b", f"X[{_idx(iv)}]", GELU[attrs["approximate"]]), {"X": 0}, ["Y"])


_def(OpDef("gelu", [Operand("x")], {"approximate": Attr("str", "none", ("none", "tanh"))}, _gelu_sem,
           "GELU, exact (erf) or tanh approximation", "elementwise"))

_def(OpDef("pow", [Operand("x")], {"exponent": Attr("float")},
           _unary("x ** $exponent", lambda a: {"exponent": a["exponent"]}),
           "x ** exponent (scalar exponent)", "elementwise",
           example="%y = graph.pow %x {exponent = 2.0} : tensor<4xf32> -> tensor<4xf32>"))

_def(OpDef("cast", [Operand("x", dtype="any")], {}, _unary("x"),
           "element type conversion (the result type names the target)", "elementwise", result_dtype="free"))

BINARY: dict[str, tuple[str, str, str]] = {
    # name: (body over a, b; result dtype rule; summary)
    "add": ("a + b", "same", "a + b"),
    "sub": ("a - b", "same", "a - b"),
    "mul": ("a * b", "same", "a * b"),
    "div": ("a / b", "same", "a / b"),
    "maximum": ("max(a, b)", "same", "elementwise maximum"),
    "minimum": ("min(a, b)", "same", "elementwise minimum"),
    "eq": ("a == b", "bool", "a == b"),
    "ne": ("a != b", "bool", "a != b"),
    "lt": ("a < b", "bool", "a < b"),
    "le": ("a <= b", "bool", "a <= b"),
    "gt": ("a > b", "bool", "a > b"),
    "ge": ("a >= b", "bool", "a >= b"),
    "fmod": ("a - trunc(a / b) * b", "same", "C fmod: the remainder with the sign of a"),
    "remainder": ("a - floor(a / b) * b", "same", "python %: the remainder with the sign of b"),
}


def _nary(body: str, names: str):
    def sem(shapes: list[Shape], attrs: dict) -> Instance:
        out = _broadcast(shapes)
        iv = _vars("d", len(out))
        b = body
        for letter, s in zip(names, shapes):
            b = re.sub(rf"\b{letter}\b", _bcast_access(letter.upper(), s, out, iv), b)
        return Instance(f"Y[{_idx(iv)}] = {b}", {l.upper(): i for i, l in enumerate(names)}, ["Y"])

    return sem


for _n, (_b, _rd, _s) in BINARY.items():
    _def(OpDef(_n, [Operand("a", dtype="any"), Operand("b", dtype="any")], {}, _nary(_b, "ab"),
               _s + " (numpy broadcasting)", "elementwise", result_dtype=_rd,
               example=f"%y = graph.{_n} %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8{'xi1' if _rd == 'bool' else 'xf32'}>"))

_def(OpDef("where", [Operand("cond", dtype="bool"), Operand("a", dtype="any"), Operand("b", dtype="any")], {},
           _nary("select(c, a, b)", "cab"), "cond ? a : b (numpy broadcasting)", "elementwise",
           result_dtype="operand:a"))

# ----------------------------------------------------------------- reductions


def _reduce_vars(shape: Shape, dims_attr, keepdim: bool):
    rank = len(shape)
    dims = _norm_dims(dims_attr, rank) if dims_attr else list(range(rank))
    iv = [f"r{d}" if d in dims else f"d{d}" for d in range(rank)]
    out = [("0" if keepdim else None) if d in dims else iv[d] for d in range(rank)]
    out = [o for o in out if o is not None]
    n = 1
    for d in dims:
        n *= shape[d] if shape[d] != DYN else 1
    return iv, out, dims, n


def _reduction(kind: str):
    def sem(shapes: list[Shape], attrs: dict) -> Instance:
        (s,) = shapes
        iv, out, dims, n = _reduce_vars(s, attrs["dims"], attrs["keepdim"])
        x, y = f"X[{_idx(iv)}]", f"Y[{_idx(out)}]"
        if kind == "sum":
            return Instance(f"{y} += {x}", {"X": 0}, ["Y"])
        if kind == "mean":
            return Instance(f"S[{_idx(out)}] += {x}; {y} = S[{_idx(out)}] * $inv", {"X": 0}, ["Y"],
                            {"inv": 1.0 / n})
        if kind == "prod":
            return Instance(f"{y} *= {x}", {"X": 0}, ["Y"])
        return Instance(f"{y} {kind}= {x}", {"X": 0}, ["Y"])

    return sem


_RED_ATTRS = {"dims": Attr("ints", ()), "keepdim": Attr("bool", False)}
for _n, _k, _s in [("sum", "sum", "sum"), ("mean", "mean", "mean"), ("amax", "max", "maximum"),
                   ("amin", "min", "minimum"), ("prod", "prod", "product")]:
    _def(OpDef(_n, [Operand("x")], dict(_RED_ATTRS), _reduction(_k),
               f"{_s} over dims (all dims when empty), keepdim keeps them as size 1", "reduction",
               example=f"%y = graph.{_n} %x {{dims = [1], keepdim = true}} : tensor<4x8xf32> -> tensor<4x1xf32>"))


def _softmax(log: bool):
    def sem(shapes, attrs):
        (s,) = shapes
        d = _norm_dim(attrs["dim"], len(s))
        iv = _vars("d", len(s))
        iv[d] = "r"
        red = [v for v in iv if v != "r"]
        x, full, part = f"X[{_idx(iv)}]", _idx(iv), _idx(red)
        text = (f"M[{part}] max= {x}; E[{full}] = exp({x} - M[{part}]); S[{part}] += E[{full}]; ")
        if log:
            text += f"Y[{full}] = {x} - M[{part}] - log(S[{part}])"
        else:
            text += f"Y[{full}] = E[{full}] / S[{part}]"
        return Instance(text, {"X": 0}, ["Y"])

    return sem


_def(OpDef("softmax", [Operand("x")], {"dim": Attr("int", -1)}, _softmax(False),
           "softmax along dim (max-subtracted)", "normalization",
           example="%y = graph.softmax %x {dim = 1} : tensor<4x8xf32> -> tensor<4x8xf32>"))
_def(OpDef("log_softmax", [Operand("x")], {"dim": Attr("int", -1)}, _softmax(True),
           "log of softmax along dim", "normalization"))


def _softmax_stats(shapes, attrs):
    """softmax's statistics alone, shaped like x with dim 1: the maximum and the sum of exp(x - max) along dim
    (``kitsune-split-long-norms``: rows too long for one tile)."""
    (s,) = shapes
    d = _norm_dim(attrs["dim"], len(s))
    iv = _vars("d", len(s))
    iv[d] = "r"
    out = list(iv)
    out[d] = "0"
    x, full, part = f"X[{_idx(iv)}]", _idx(iv), _idx(out)
    return Instance(f"M[{part}] max= {x}; E[{full}] = exp({x} - M[{part}]); S[{part}] += E[{full}]", {"X": 0},
                    ["M", "S"])


_def(OpDef("softmax_stats", [Operand("x")], {"dim": Attr("int", -1)}, _softmax_stats,
           "softmax's maximum and sum of exp(x - max) along dim, shaped like x with that dim 1", "normalization",
           result_dtype="free", results="variadic",
           example="%m, %s = graph.softmax_stats %x {dim = 1} : tensor<4x8xbf16> -> "
                   "(tensor<4x1xf32>, tensor<4x1xf32>)"))


def _norm_split(shape: Shape, nrank: int):
    if not 1 <= nrank <= len(shape):
        raise OpError(f"normalized_rank {nrank} must be between 1 and the rank {len(shape)}")
    p = _vars("p", len(shape) - nrank)
    r = _vars("r", nrank)
    n = 1
    for d in shape[len(shape) - nrank:]:
        n *= d if d != DYN else 1
    return p, r, n


def _layer_norm(shapes, attrs):
    s = shapes[0]
    p, r, n = _norm_split(s, attrs["normalized_rank"])
    P, F = _idx(p), _idx(p + r)
    rr = _idx(r)
    for i, w in enumerate(shapes[1:], 1):
        want = tuple(s[len(p):])
        if len(w) != len(want) or any(a != b and DYN not in (a, b) for a, b in zip(w, want)):
            raise OpError(f"{'weight' if i == 1 else 'bias'} has shape {_fmt(w)}, expected {_fmt(s[len(p):])}")
    y = f"D[{F}] * R[{P}]"
    if len(shapes) > 1:
        y += f" * W[{rr}]"
    if len(shapes) > 2:
        y += f" + B[{rr}]"
    text = (f"S[{P}] += X[{F}]; M[{P}] = S[{P}] * $inv; D[{F}] = X[{F}] - M[{P}]; "
            f"V[{P}] += D[{F}] * D[{F}]; R[{P}] = rsqrt(V[{P}] * $inv + $eps); Y[{F}] = {y}")
    return Instance(text, {"X": 0, "W": 1, "B": 2}, ["Y"], {"inv": 1.0 / n, "eps": attrs["eps"]})


_def(OpDef("layer_norm", [Operand("x"), Operand("weight", "optional"), Operand("bias", "optional")],
           {"normalized_rank": Attr("int", 1), "eps": Attr("float", 1e-5)}, _layer_norm,
           "layer normalisation over the trailing normalized_rank dims, optional affine weight and bias",
           "normalization"))


def _rms_norm(shapes, attrs):
    s = shapes[0]
    p, r, n = _norm_split(s, attrs["normalized_rank"])
    P, F = _idx(p), _idx(p + r)
    y = f"X[{F}] * R[{P}]" + (f" * W[{_idx(r)}]" if len(shapes) > 1 else "")
    text = f"S[{P}] += X[{F}] * X[{F}]; R[{P}] = rsqrt(S[{P}] * $inv + $eps); Y[{F}] = {y}"
    return Instance(text, {"X": 0, "W": 1}, ["Y"], {"inv": 1.0 / n, "eps": attrs["eps"]})


_def(OpDef("rms_norm", [Operand("x"), Operand("weight", "optional")],
           {"normalized_rank": Attr("int", 1), "eps": Attr("float", 1e-6)}, _rms_norm,
           "RMS normalisation over the trailing normalized_rank dims, optional weight", "normalization"))


def _norm_stats(centered: bool):
    """The statistics of layer_norm (mean, 1/std) or rms_norm (1/rms) alone, shaped like x with the normalized
    dims 1: what ``kitsune-split-long-norms`` computes once per row when a row is too long for one tile."""

    def sem(shapes, attrs):
        (s,) = shapes
        p, r, n = _norm_split(s, attrs["normalized_rank"])
        F, S = _idx(p + r), _idx(p + ["0"] * len(r))
        params = {"inv": 1.0 / n, "eps": attrs["eps"]}
        if not centered:
            return Instance(f"Q[{S}] += X[{F}] * X[{F}]; R[{S}] = rsqrt(Q[{S}] * $inv + $eps)", {"X": 0}, ["R"],
                            params)
        text = (f"A[{S}] += X[{F}]; M[{S}] = A[{S}] * $inv; D[{F}] = X[{F}] - M[{S}]; "
                f"V[{S}] += D[{F}] * D[{F}]; R[{S}] = rsqrt(V[{S}] * $inv + $eps)")
        return Instance(text, {"X": 0}, ["M", "R"], params)

    return sem


_def(OpDef("layer_norm_stats", [Operand("x")], {"normalized_rank": Attr("int", 1), "eps": Attr("float", 1e-5)},
           _norm_stats(True), "layer_norm's mean and 1 / sqrt(var + eps) over the trailing normalized_rank dims, "
           "shaped like x with those dims 1", "normalization", result_dtype="free", results="variadic",
           example="%m, %r = graph.layer_norm_stats %x {normalized_rank = 1} : tensor<4x8xbf16> -> "
                   "(tensor<4x1xf32>, tensor<4x1xf32>)"))
_def(OpDef("rms_norm_stats", [Operand("x")], {"normalized_rank": Attr("int", 1), "eps": Attr("float", 1e-6)},
           _norm_stats(False), "rms_norm's 1 / sqrt(mean(x^2) + eps) over the trailing normalized_rank dims, "
           "shaped like x with those dims 1", "normalization", result_dtype="free",
           example="%r = graph.rms_norm_stats %x {normalized_rank = 1} : tensor<4x8xbf16> -> tensor<4x1xf32>"))


def _batch_norm(shapes, attrs):
    s = shapes[0]
    if len(s) < 2:
        raise OpError(f"input must have rank >= 2 (N, C, ...), got {_fmt(s)}")
    iv = _vars("d", len(s))
    iv[1] = "c"
    F = _idx(iv)
    y = f"(X[{F}] - M[c]) * rsqrt(V[c] + $eps)"
    if len(shapes) > 3:
        y += " * W[c]"
    if len(shapes) > 4:
        y += " + B[c]"
    return Instance(f"Y[{F}] = {y}", {"X": 0, "M": 1, "V": 2, "W": 3, "B": 4}, ["Y"], {"eps": attrs["eps"]})


_def(OpDef("batch_norm", [Operand("x"), Operand("mean"), Operand("var"), Operand("weight", "optional"),
                          Operand("bias", "optional")], {"eps": Attr("float", 1e-5)}, _batch_norm,
           "inference batch norm over channel dim 1 with running mean / var", "normalization"))

# --------------------------------------------------------------- contractions


def _matmul(shapes, attrs):
    a, b = shapes
    if len(a) < 2 or len(b) < 2:
        raise OpError(f"operands must have rank >= 2, got {_fmt(a)} and {_fmt(b)}")
    nb = max(len(a), len(b)) - 2
    batch = _vars("b", nb)
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    ia = ["k", "m"] if ta else ["m", "k"]
    ib = ["n", "k"] if tb else ["k", "n"]
    bshape = _broadcast([a[:-2], b[:-2]]) if nb else ()
    A = _bcast_access("A", a[:-2], bshape, batch)[:-1] if nb else "A["
    B = _bcast_access("B", b[:-2], bshape, batch)[:-1] if nb else "B["
    sep_a = ", " if len(a) > 2 else ""
    sep_b = ", " if len(b) > 2 else ""
    C = _idx(batch + ["m", "n"])
    return Instance(f"C[{C}] += {A}{sep_a}{_idx(ia)}] * {B}{sep_b}{_idx(ib)}]", {"A": 0, "B": 1}, ["C"])


_def(OpDef("matmul", [Operand("a"), Operand("b")],
           {"transpose_a": Attr("bool", False), "transpose_b": Attr("bool", False)}, _matmul,
           "matrix product over the last two dims, leading dims batch (broadcast); optional transposes",
           "contraction",
           example="%c = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>"))


def _linear(shapes, attrs):
    x, w = shapes[0], shapes[1]
    if len(w) != 2:
        raise OpError(f"weight must be [out_features, in_features], got {_fmt(w)}")
    if len(x) < 1:
        raise OpError("input must have rank >= 1")
    lead = _vars("d", len(x) - 1)
    y = _idx(lead + ["n"])
    text = f"Y[{y}] += X[{_idx(lead + ['k'])}] * W[n, k]"
    if len(shapes) > 2:
        if len(shapes[2]) != 1:
            raise OpError(f"bias must be [out_features], got {_fmt(shapes[2])}")
        if DYN not in (shapes[2][0], w[0]) and shapes[2][0] != w[0]:
            raise OpError(f"bias has {shapes[2][0]} elements, weight has {w[0]} out_features")
        text = f"P[{y}] += X[{_idx(lead + ['k'])}] * W[n, k]; Y[{y}] = P[{y}] + Bias[n]"
    return Instance(text, {"X": 0, "W": 1, "Bias": 2}, ["Y"])


_def(OpDef("linear", [Operand("x"), Operand("weight"), Operand("bias", "optional")], {}, _linear,
           "x @ weight^T + bias (torch.nn.Linear)", "contraction",
           example="%y = graph.linear %x, %w, %b : tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32> -> tensor<4x16xf32>"))


def _pair(v, name):
    v = list(v)
    if len(v) == 1:
        v = v * 2
    if len(v) != 2:
        raise OpError(f"{name} must have 1 or 2 values, got {v}")
    return v


def _conv2d(shapes, attrs):
    x, w = shapes[0], shapes[1]
    if len(x) != 4 or len(w) != 4:
        raise OpError(f"input must be [N, C, H, W] and weight [F, C/groups, KH, KW], got {_fmt(x)} and {_fmt(w)}")
    g = attrs["groups"]
    s, p, d = _pair(attrs["stride"], "stride"), _pair(attrs["padding"], "padding"), _pair(attrs["dilation"], "dilation")
    if g < 1 or (x[1] != DYN and x[1] % g) or w[0] % g:
        raise OpError(f"groups = {g} must divide input channels {x[1]} and output channels {w[0]}")
    if x[1] != DYN and w[1] * g != x[1]:
        raise OpError(f"weight has {w[1]} input channels per group, input has {x[1]} channels / {g} groups")
    if len(shapes) > 2 and (len(shapes[2]) != 1 or DYN not in (shapes[2][0], w[0]) and shapes[2][0] != w[0]):
        raise OpError(f"bias must be [{w[0]}] (one per output channel), got {_fmt(shapes[2])}")
    params = {"s0": s[0], "s1": s[1], "p0": p[0], "p1": p[1], "e0": d[0], "e1": d[1], "CG": w[1], "FG": w[0] // g}
    win = "X[n, g*$CG + c, oh*$s0 + kh*$e0 - $p0, ow*$s1 + kw*$e1 - $p1]"
    if g == 1:
        text = f"O[n, f, oh, ow] += {win.replace('g*$CG + c', 'c')} * W[f, c, kh, kw]"
        if len(shapes) > 2:
            text = text.replace("O[", "P[", 1) + "; O[n, f, oh, ow] = P[n, f, oh, ow] + Bias[f]"
        return Instance(text, {"X": 0, "W": 1, "Bias": 2}, ["O"], params)
    text = f"P[n, g, f, oh, ow] += {win} * W[g*$FG + f, c, kh, kw]; O[n, g*$FG + f, oh, ow] = P[n, g, f, oh, ow]"
    if len(shapes) > 2:
        text += " + Bias[g*$FG + f]"
    # output spatial sizes from the window rule
    oh = (x[2] + 2 * p[0] - d[0] * (w[2] - 1) - 1) // s[0] + 1 if x[2] != DYN else DYN
    ow = (x[3] + 2 * p[1] - d[1] * (w[3] - 1) - 1) // s[1] + 1 if x[3] != DYN else DYN
    return Instance(text, {"X": 0, "W": 1, "Bias": 2}, ["O"], params,
                    extents={"g": g, "f": w[0] // g, "c": w[1]}, declared={"O": (x[0], w[0], oh, ow)})


_def(OpDef("conv2d", [Operand("x"), Operand("weight"), Operand("bias", "optional")],
           {"stride": Attr("ints", (1, 1)), "padding": Attr("ints", (0, 0)), "dilation": Attr("ints", (1, 1)),
            "groups": Attr("int", 1)}, _conv2d,
           "2-d convolution (cross-correlation), NCHW, zero padding, grouped", "contraction",
           example="%y = graph.conv2d %x, %w {padding = [1, 1]} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>"))


def _pool_out(size: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    """torch's pooling output size (ceil_mode: a last window that starts inside the input or left padding)."""
    if size == DYN:
        return DYN
    span = size + 2 * p - d * (k - 1) - 1
    n = (-(-span // s) if ceil else span // s) + 1
    if ceil and (n - 1) * s >= size + p:
        n -= 1
    return n


def _pool_params(x, attrs, what):
    if len(x) != 4:
        raise OpError(f"input must be [N, C, H, W], got {_fmt(x)}")
    k = _pair(attrs["kernel"], "kernel")
    s = _pair(attrs["stride"] or k, "stride")
    p = _pair(attrs["padding"], "padding")
    d = _pair(attrs.get("dilation", (1, 1)), "dilation")
    if min(k + s + d) < 1 or min(p) < 0:
        raise OpError(f"kernel, stride and dilation must be >= 1 and padding >= 0, got {k}, {s}, {d}, {p}")
    if p[0] * 2 > k[0] or p[1] * 2 > k[1]:
        raise OpError(f"padding {p} must be at most half the kernel {k}")
    oh = _pool_out(x[2], k[0], s[0], p[0], d[0], attrs["ceil_mode"])
    ow = _pool_out(x[3], k[1], s[1], p[1], d[1], attrs["ceil_mode"])
    if 0 in (oh, ow) or (oh != DYN and oh < 0) or (ow != DYN and ow < 0):
        raise OpError(f"{what} of kernel {k} over an input of {x[2]}x{x[3]} has no output position")
    params = {"s0": s[0], "s1": s[1], "p0": p[0], "p1": p[1], "e0": d[0], "e1": d[1]}
    ext = {"kh": k[0], "kw": k[1]}
    if oh != DYN:
        ext["oh"] = oh
    if ow != DYN:
        ext["ow"] = ow
    return k, s, p, params, ext, (x[0], x[1], oh, ow)


def _max_pool2d(shapes, attrs):
    (x,) = shapes
    k, s, p, params, ext, out = _pool_params(x, attrs, "max_pool2d")
    return Instance("Y[n, c, oh, ow] max= X[n, c, oh*$s0 + kh*$e0 - $p0, ow*$s1 + kw*$e1 - $p1]",
                    {"X": 0}, ["Y"], params, extents=ext, declared={"Y": out})


# max_pool2d's attributes (grad_ops' max_pool2d_indices takes the same window)
MAX_POOL2D_ATTRS = {"kernel": Attr("ints"), "stride": Attr("ints", ()), "padding": Attr("ints", (0, 0)),
                    "dilation": Attr("ints", (1, 1)), "ceil_mode": Attr("bool", False)}

_def(OpDef("max_pool2d", [Operand("x")], MAX_POOL2D_ATTRS, _max_pool2d,
           "2-d max pooling, NCHW (stride defaults to the kernel), -inf padding, NaN propagates; ceil_mode "
           "rounds the output size up (torch's rule)", "reduction",
           example="%y = graph.max_pool2d %x {kernel = [3, 3], stride = [1, 1], padding = [1, 1]} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>"))


def _avg_pool2d(shapes, attrs):
    (x,) = shapes
    k, s, p, params, ext, out = _pool_params(x, attrs, "avg_pool2d")
    win = "X[n, c, oh*$s0 + kh - $p0, ow*$s1 + kw - $p1]"
    div = attrs["divisor_override"]
    if div < 0:
        raise OpError(f"divisor_override must be positive, got {div}")
    # the divisor: kh*kw, unless windows are clipped (padding not counted, or ceil_mode's last window)
    clipped = out[2] == DYN or out[3] == DYN or (p != [0, 0] and not attrs["count_include_pad"]) or \
        (out[2] - 1) * s[0] + k[0] > x[2] + 2 * p[0] or (out[3] - 1) * s[1] + k[1] > x[3] + 2 * p[1]
    if div or not clipped:
        params["inv"] = 1.0 / (div or k[0] * k[1])
        return Instance(f"S[n, c, oh, ow] += {win}; Y[n, c, oh, ow] = S[n, c, oh, ow] * $inv", {"X": 0}, ["Y"],
                        params, extents=ext, declared={"Y": out})
    if x[2] == DYN or x[3] == DYN:
        raise OpError("avg_pool2d with clipped windows needs static spatial sizes")
    inc = attrs["count_include_pad"]
    params.update({"lo0": -p[0] if inc else 0, "lo1": -p[1] if inc else 0,
                   "hi0": x[2] + p[0] if inc else x[2], "hi1": x[3] + p[1] if inc else x[3]})
    r, c_ = "oh*$s0 + kh - $p0", "ow*$s1 + kw - $p1"
    cnt = (f"select({r} >= $lo0, 1.0, 0.0) * select({r} < $hi0, 1.0, 0.0) * "
           f"select({c_} >= $lo1, 1.0, 0.0) * select({c_} < $hi1, 1.0, 0.0)")
    return Instance(f"S[n, c, oh, ow] += {win}; C[oh, ow] += {cnt}; Y[n, c, oh, ow] = S[n, c, oh, ow] / C[oh, ow]",
                    {"X": 0}, ["Y"], params, extents=ext, declared={"Y": out})


_def(OpDef("avg_pool2d", [Operand("x")],
           {"kernel": Attr("ints"), "stride": Attr("ints", ()), "padding": Attr("ints", (0, 0)),
            "ceil_mode": Attr("bool", False), "count_include_pad": Attr("bool", True),
            "divisor_override": Attr("int", 0)}, _avg_pool2d,
           "2-d average pooling, NCHW, torch's rules for padding, ceil_mode, count_include_pad and "
           "divisor_override (0: none)", "reduction",
           example="%y = graph.avg_pool2d %x {kernel = [2, 2]} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>"))


def _attention(shapes, attrs):
    q, k, v = shapes[:3]
    if len(q) != 4 or len(k) != 4 or len(v) != 4:
        raise OpError(f"q, k, v must be [B, H, L, E], got {_fmt(q)}, {_fmt(k)}, {_fmt(v)}")
    hq, hk = q[1], k[1]
    if hk == DYN or hq == DYN or hk < 1 or hq < 1:
        raise OpError(f"needs at least one query and one key/value head, got {hq} and {hk}")
    if hq % hk:
        raise OpError(f"query heads {hq} must be a multiple of key/value heads {hk}")
    scale = attrs["scale"] if attrs["scale"] != 0.0 else 1.0 / math.sqrt(q[3])
    G = hq // hk
    inputs = {"Q": 0, "K": 1, "V": 2}
    score = "S[b, h, g, i, j] * $scale"
    if len(shapes) > 3:  # an additive mask broadcast to [B, Hq, L, S] (a boolean one is where(m, 0, -inf))
        m = shapes[3]
        full = (q[0], q[1], q[2], k[2])
        if len(m) > 4:
            raise OpError(f"mask must have rank <= 4 (broadcast to [B, H, L, S]), got {_fmt(m)}")
        _broadcast([m, full])
        acc = _bcast_access("Mask", m, full, ["b", "h*$G + g", "i", "j"])
        score = f"{score} + {acc}"
        inputs["Mask"] = 3
    if attrs["causal"]:  # torch's is_causal: the upper-left triangle, j <= i
        score = f"select(j <= i, {score}, -inf)"
    if score == "S[b, h, g, i, j] * $scale":
        text = ("S[b, h, g, i, j] += Q[b, h*$G + g, i, e] * K[b, h, j, e]; "
                "M[b, h, g, i] max= S[b, h, g, i, j]; "
                "P[b, h, g, i, j] = exp((S[b, h, g, i, j] - M[b, h, g, i]) * $scale); ")
    else:
        # a query whose keys are all masked gets 0, as torch's (safe-softmax) sdpa
        text = ("S[b, h, g, i, j] += Q[b, h*$G + g, i, e] * K[b, h, j, e]; "
                f"A[b, h, g, i, j] = {score}; "
                "M[b, h, g, i] max= A[b, h, g, i, j]; "
                "P[b, h, g, i, j] = select(M[b, h, g, i] > -inf, exp(A[b, h, g, i, j] - M[b, h, g, i]), 0.0); ")
    text += ("L[b, h, g, i] += P[b, h, g, i, j]; "
             "O[b, h, g, i, f] += P[b, h, g, i, j] * V[b, h, j, f]; ")
    if score == "S[b, h, g, i, j] * $scale":
        text += "Y[b, h*$G + g, i, f] = O[b, h, g, i, f] / L[b, h, g, i]"
    else:
        text += "Y[b, h*$G + g, i, f] = select(L[b, h, g, i] > 0.0, O[b, h, g, i, f] / L[b, h, g, i], 0.0)"
    return Instance(text, inputs, ["Y"], {"G": G, "scale": scale},
                    extents={"g": G}, declared={"Y": (q[0], q[1], q[2], v[3])})


_def(OpDef("attention", [Operand("q"), Operand("k"), Operand("v"), Operand("mask", "optional")],
           {"scale": Attr("float", 0.0), "causal": Attr("bool", False)}, _attention,
           "softmax(q k^T * scale + mask) v over [B, H, L, E]; fewer key/value heads than query heads = "
           "grouped-query attention; scale 0 means 1/sqrt(E); an optional additive mask broadcast to "
           "[B, H, L, S] (a boolean mask b is where(b, 0, -inf)); causal keeps key j <= query i", "contraction",
           example="%y = graph.attention %q, %k, %v, %m {causal = true} : tensor<1x2x8x16xf32>, "
                   "tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x8x8xf32> -> tensor<1x2x8x16xf32>"))

# ---------------------------------------------------------------- gather/scatter


def _embedding(shapes, attrs):
    w, i = shapes
    if len(w) != 2:
        raise OpError(f"weight must be [num, dim], got {_fmt(w)}")
    iv = _vars("d", len(i))
    return Instance(f"Y[{_idx(iv + ['e'])}] = W[I[{_idx(iv)}], e]", {"W": 0, "I": 1}, ["Y"])


_def(OpDef("embedding", [Operand("weight"), Operand("indices", dtype="int")], {}, _embedding,
           "rows of weight picked by indices: Y[..., e] = W[I[...], e]", "gather", result_dtype="operand:weight"))


def _embedding_bag(shapes, attrs):
    w, i = shapes
    if len(w) != 2 or len(i) != 2:
        raise OpError(f"weight must be [num, dim] and indices [bags, per_bag], got {_fmt(w)} and {_fmt(i)}")
    mode = attrs["mode"]
    if mode == "sum":
        return Instance("Y[b, e] += W[I[b, l], e]", {"W": 0, "I": 1}, ["Y"])
    if mode == "max":
        return Instance("Y[b, e] max= W[I[b, l], e]", {"W": 0, "I": 1}, ["Y"])
    return Instance("S[b, e] += W[I[b, l], e]; Y[b, e] = S[b, e] * $inv", {"W": 0, "I": 1}, ["Y"],
                    {"inv": 1.0 / max(i[1], 1)})


_def(OpDef("embedding_bag", [Operand("weight"), Operand("indices", dtype="int")],
           {"mode": Attr("str", "sum", ("sum", "mean", "max"))}, _embedding_bag,
           "per bag (row of indices) the sum / mean / max of the picked rows", "gather",
           result_dtype="operand:weight"))


def _index_select(shapes, attrs):
    x, i = shapes
    if len(i) != 1:
        raise OpError(f"indices must be rank 1, got {_fmt(i)}")
    d = _norm_dim(attrs["dim"], len(x))
    iv = _vars("d", len(x))
    src = list(iv)
    src[d] = "I[j]"
    iv[d] = "j"
    return Instance(f"Y[{_idx(iv)}] = X[{_idx(src)}]", {"X": 0, "I": 1}, ["Y"])


_def(OpDef("index_select", [Operand("x", dtype="any"), Operand("indices", dtype="int")], {"dim": Attr("int")},
           _index_select, "slices of x along dim picked by a rank-1 index", "gather", result_dtype="operand:x"))


def _gather(shapes, attrs):
    x, i = shapes
    if len(i) != len(x):
        raise OpError(f"indices must have the rank of x ({len(x)}), got {_fmt(i)}")
    d = _norm_dim(attrs["dim"], len(x))
    iv = _vars("d", len(x))
    src = list(iv)
    src[d] = f"I[{_idx(iv)}]"
    return Instance(f"Y[{_idx(iv)}] = X[{_idx(src)}]", {"X": 0, "I": 1}, ["Y"])


_def(OpDef("gather", [Operand("x", dtype="any"), Operand("indices", dtype="int")], {"dim": Attr("int")}, _gather,
           "torch.gather: Y[..i..] = X[.., I[..i..], ..]", "gather", result_dtype="operand:x"))


def _check_other_dims(s: Shape, x: Shape, d: int) -> None:
    """A scattered source must match x in every dim but d (the comprehension allows partial writes)."""
    for k in range(len(x)):
        if k != d and DYN not in (s[k], x[k]) and s[k] != x[k]:
            raise OpError(f"source has size {s[k]} in dim {k}, x has {x[k]}")


def _indexed_slices(shapes, attrs) -> tuple[str, str, str]:
    """Index lists (x's, the target's ``I[j]`` along dim, the source's ``j`` along dim) of an op writing the
    source's slices at indices along dim (index_add, index_copy), after checking the shapes."""
    x, i, s = shapes
    if len(i) != 1:
        raise OpError(f"indices must be rank 1, got {_fmt(i)}")
    d = _norm_dim(attrs["dim"], len(x))
    if len(s) != len(x):
        raise OpError(f"source must have the rank of x ({len(x)}), got {_fmt(s)}")
    _check_other_dims(s, x, d)
    if DYN not in (s[d], i[0]) and s[d] != i[0]:
        raise OpError(f"source has size {s[d]} along dim {d}, indices has {i[0]}")
    iv = _vars("d", len(x))
    dst = list(iv)
    dst[d] = "I[j]"
    sv = list(iv)
    sv[d] = "j"
    return _idx(iv), _idx(dst), _idx(sv)


def _index_add(shapes, attrs):
    iv, dst, sv = _indexed_slices(shapes, attrs)
    body = f"S[{sv}]" + (" * $alpha" if attrs["alpha"] != 1.0 else "")
    return Instance(f"Y[{iv}] = X[{iv}]; Y[{dst}] += {body}", {"X": 0, "I": 1, "S": 2}, ["Y"],
                    {"alpha": attrs["alpha"]})


_def(OpDef("index_add", [Operand("x"), Operand("indices", dtype="int"), Operand("source")],
           {"dim": Attr("int"), "alpha": Attr("float", 1.0),
            "accumulate": Attr("str", "f32", ("f32", "native"))}, _index_add,
           "x with alpha * source slices added at indices along dim (scatter-add; repeats accumulate). "
           "accumulate, for a 16-bit x: f32 (the repeats summed in fp32, rounded once: what eager's embedding "
           "and index_put backward do) or native (atomic adds in x's own type: what eager's index_add_ does "
           "on the GPU)", "gather"))


def _index_copy(shapes, attrs):
    iv, dst, sv = _indexed_slices(shapes, attrs)
    return Instance(f"Y[{iv}] = X[{iv}]; Y[{dst}] = S[{sv}]", {"X": 0, "I": 1, "S": 2}, ["Y"])


_def(OpDef("index_copy", [Operand("x", dtype="any"), Operand("indices", dtype="int"), Operand("source", dtype="any")],
           {"dim": Attr("int"), "in_place": Attr("bool", False), "forwarded": Attr("bool", False)}, _index_copy,
           "x with the slices at indices along dim replaced by source's (torch.index_copy; a repeated index keeps "
           "one of its slices); in_place: the result takes x's storage and only the slices are written "
           "(kitsune-inplace-updates sets it where x is a mutated buffer read by nothing else); forwarded: the "
           "result's readers (but the mutation it returns) read it as selects over x instead, so no read of x "
           "in the launch depends on the write (kitsune-inplace-updates sets it with in_place)", "gather",
           result_dtype="operand:x",
           example="%y = graph.index_copy %c, %i, %k {dim = 2} : tensor<1x2x8x4xbf16>, tensor<1xi64>, "
                   "tensor<1x2x1x4xbf16> -> tensor<1x2x8x4xbf16>"))


def _cumsum(shapes, attrs):
    (x,) = shapes
    d = _norm_dim(attrs["dim"], len(x))
    iv = _vars("d", len(x))
    src = list(iv)
    src[d] = "j"
    return Instance(f"Y[{_idx(iv)}] += select(j <= {iv[d]}, X[{_idx(src)}], 0.0)", {"X": 0}, ["Y"],
                    extents={"j": x[d]} if x[d] != DYN else {}, declared={"Y": x})


_def(OpDef("cumsum", [Operand("x", dtype="any")], {"dim": Attr("int")}, _cumsum,
           "inclusive prefix sum along dim", "reduction",
           example="%y = graph.cumsum %x {dim = 1} : tensor<2x8xf32> -> tensor<2x8xf32>"))


def _index(shapes, attrs):
    x, idx = shapes[0], shapes[1:]
    dims = list(attrs["dims"])
    if len(dims) != len(idx) or not idx:
        raise OpError(f"dims {dims} must name one dim of x per index tensor ({len(idx)})")
    dims = [_norm_dim(d, len(x)) for d in dims]
    if len(set(dims)) != len(dims):
        raise OpError(f"dims {dims} repeats a dimension")
    bshape = _broadcast(idx)
    bv = _vars("b", len(bshape))
    src = _vars("d", len(x))
    for n, (d, s) in enumerate(zip(dims, idx)):
        src[d] = _bcast_access(f"I{n}", s, bshape, bv)
    rest = [v for i, v in enumerate(_vars("d", len(x))) if i not in dims]
    if sorted(dims) == list(range(min(dims), max(dims) + 1)):  # adjacent: the index dims replace them
        lo = min(dims)
        out = [f"d{i}" for i in range(lo)] + bv + [f"d{i}" for i in range(max(dims) + 1, len(x))]
    else:  # torch puts the broadcast index dims first
        out = bv + rest
    ext = {v: n for v, n in zip(bv, bshape) if n != DYN}
    return Instance(f"Y[{_idx(out)}] = X[{_idx(src)}]", {"X": 0, **{f"I{n}": n + 1 for n in range(len(idx))}},
                    ["Y"], extents=ext)


_def(OpDef("index", [Operand("x", dtype="any"), Operand("indices", "variadic", "int")], {"dims": Attr("ints")},
           _index, "advanced indexing x[..., I0, I1, ...]: the index tensors (broadcast together) pick along "
           "dims (torch.Tensor.__getitem__ with tensors)", "gather", result_dtype="operand:x",
           example="%y = graph.index %x, %i {dims = [0]} : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x4xf32>"))


def _pad(shapes, attrs):
    (x,) = shapes
    pads = list(attrs["pads"])
    if len(pads) != 2 * len(x) or min(pads, default=0) < 0:
        raise OpError(f"pads {pads} must give a (before, after) pair >= 0 for each of the {len(x)} dims")
    iv = _vars("d", len(x))
    dst = [f"{v} + {pads[2 * i]}" if pads[2 * i] else v for i, v in enumerate(iv)]
    out = tuple(DYN if n == DYN else n + pads[2 * i] + pads[2 * i + 1] for i, n in enumerate(x))
    return Instance(f"Y[{_idx(iv)}] = $value; Y[{_idx(dst)}] = X[{_idx(iv)}]", {"X": 0}, ["Y"],
                    {"value": attrs["value"]}, declared={"Y": out})


_def(OpDef("pad", [Operand("x", dtype="any")], {"pads": Attr("ints"), "value": Attr("float", 0.0)}, _pad,
           "constant padding: pads = [before0, after0, before1, after1, ...] in dim order", "layout",
           result_dtype="operand:x",
           example="%y = graph.pad %x {pads = [0, 0, 1, 1]} : tensor<2x4xf32> -> tensor<2x6xf32>"))


_SCATTER_REDUCE = {"sum": "+=", "prod": "*=", "amax": "max=", "amin": "min=", "mean": "+="}


def _scatter_reduce(shapes, attrs):
    x, i, s = shapes
    if not (len(i) == len(s) == len(x)):
        raise OpError(f"index and source must have the rank of x ({len(x)}), got {_fmt(i)} and {_fmt(s)}")
    d = _norm_dim(attrs["dim"], len(x))
    for k in range(len(x)):
        if i[k] != DYN and s[k] != DYN and i[k] > s[k]:
            raise OpError(f"index has size {i[k]} in dim {k}, larger than the source's {s[k]}")
        if k != d and DYN not in (i[k], x[k]) and i[k] > x[k]:
            raise OpError(f"index has size {i[k]} in dim {k}, larger than x's {x[k]}")
    iv, jv = _vars("d", len(x)), _vars("j", len(x))
    dst = list(jv)
    dst[d] = f"I[{_idx(jv)}]"
    red, op = attrs["reduce"], _SCATTER_REDUCE[attrs["reduce"]]
    D, J, T = _idx(iv), _idx(jv), _idx(dst)
    ext = {v: n for v, n in zip(jv, i) if n != DYN}
    start = f"X[{D}]" if attrs["include_self"] else {"+=": "0.0", "*=": "1.0", "max=": "-inf", "min=": "inf"}[op]
    text = f"T[{D}] = {start}; T[{T}] {op} S[{J}]; N[{D}] = 0.0; N[{T}] += 1.0; "
    if red == "mean":
        cnt = f"N[{D}] + 1.0" if attrs["include_self"] else f"max(N[{D}], 1.0)"
        text += f"Y[{D}] = select(N[{D}] > 0.0, T[{D}] / ({cnt}), X[{D}])"
    else:
        text += f"Y[{D}] = select(N[{D}] > 0.0, T[{D}], X[{D}])"
    return Instance(text, {"X": 0, "I": 1, "S": 2}, ["Y"], extents=ext, declared={"T": x, "N": x})


_def(OpDef("scatter_reduce", [Operand("x"), Operand("indices", dtype="int"), Operand("source")],
           {"dim": Attr("int"), "reduce": Attr("str", "sum", tuple(_SCATTER_REDUCE)),
            "include_self": Attr("bool", True)}, _scatter_reduce,
           "torch.scatter_reduce: x with source[j] combined into position indices[j] along dim "
           "(sum, prod, amax, amin, mean; include_self: whether x's own value takes part)", "gather"))

# ------------------------------------------------------------------- layout


def _slice_params(size: int, attrs) -> tuple[int, int, int]:
    start, end, step = attrs["start"], attrs["end"], attrs["step"]
    if step < 1:
        raise OpError(f"step must be >= 1, got {step}")
    if size == DYN:
        return start, DYN, step
    if start < 0:
        start += size
    if end < 0:
        end += size
    start, end = min(max(start, 0), size), min(max(end, 0), size)
    n = max(0, -(-(end - start) // step))
    return start, n, step


def _slice(shapes, attrs):
    (x,) = shapes
    d = _norm_dim(attrs["dim"], len(x))
    start, n, step = _slice_params(x[d], attrs)
    iv = _vars("d", len(x))
    src = list(iv)
    src[d] = "j*$step + $start"
    iv[d] = "j"
    ext = {"j": n} if n != DYN else {}
    return Instance(f"Y[{_idx(iv)}] = X[{_idx(src)}]", {"X": 0}, ["Y"], {"step": step, "start": start}, ext)


_SLICE_ATTRS = {"dim": Attr("int"), "start": Attr("int", 0), "end": Attr("int", 2**62), "step": Attr("int", 1)}
_def(OpDef("slice", [Operand("x", dtype="any")], dict(_SLICE_ATTRS), _slice,
           "x[start:end:step] along dim (python slice rules)", "layout", result_dtype="operand:x",
           example="%y = graph.slice %x {dim = 1, start = 2, end = 6} : tensor<4x8xf32> -> tensor<4x4xf32>"))


def _slice_scatter(shapes, attrs):
    x, s = shapes
    d = _norm_dim(attrs["dim"], len(x))
    if len(s) != len(x):
        raise OpError(f"source must have the rank of x ({len(x)}), got {_fmt(s)}")
    _check_other_dims(s, x, d)
    start, n, step = _slice_params(x[d], attrs)
    if n != DYN and s[d] != DYN and s[d] != n:
        raise OpError(f"source has size {s[d]} along dim {d}, the slice has {n}")
    iv = _vars("d", len(x))
    dst = list(iv)
    dst[d] = "j*$step + $start"
    sv = list(iv)
    sv[d] = "j"
    return Instance(f"Y[{_idx(iv)}] = X[{_idx(iv)}]; Y[{_idx(dst)}] = S[{_idx(sv)}]", {"X": 0, "S": 1}, ["Y"],
                    {"step": step, "start": start})


_def(OpDef("slice_scatter", [Operand("x", dtype="any"), Operand("source", dtype="any")], dict(_SLICE_ATTRS),
           _slice_scatter, "x with x[start:end:step] along dim replaced by source", "layout",
           result_dtype="operand:x"))


def _concat(shapes, attrs):
    if not shapes:
        raise OpError("needs at least one operand")
    rank = len(shapes[0])
    d = _norm_dim(attrs["dim"], rank)
    for i, s in enumerate(shapes):
        if len(s) != rank:
            raise OpError(f"operand #{i} has rank {len(s)}, operand #0 has rank {rank}")
        for k in range(rank):
            if k != d and DYN not in (s[k], shapes[0][k]) and s[k] != shapes[0][k]:
                raise OpError(f"operand #{i} has size {s[k]} in dim {k}, operand #0 has {shapes[0][k]}")
    stmts, off = [], 0
    inputs = {}
    for i, s in enumerate(shapes):
        iv = _vars("d", rank)
        iv[d] = f"j{i}"
        dst = list(iv)
        dst[d] = f"j{i} + {off}" if off else f"j{i}"
        stmts.append(f"Y[{_idx(dst)}] = X{i}[{_idx(iv)}]")
        inputs[f"X{i}"] = i
        off = DYN if DYN in (off, s[d]) else off + s[d]
        if off == DYN:
            break
    out = list(shapes[0])
    out[d] = off
    return Instance("; ".join(stmts), inputs, ["Y"], declared={"Y": tuple(out)})


_def(OpDef("concat", [Operand("inputs", "variadic", "any")], {"dim": Attr("int")}, _concat,
           "concatenation along dim", "layout", result_dtype="operand:inputs",
           example="%y = graph.concat %a, %b {dim = 1} : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<4x8xf32>"))


def _split(shapes, attrs):
    (x,) = shapes
    d = _norm_dim(attrs["dim"], len(x))
    sizes = list(attrs["sizes"])
    if x[d] != DYN and sum(sizes) != x[d]:
        raise OpError(f"sizes {sizes} add up to {sum(sizes)}, dim {d} has size {x[d]}")
    stmts, results, off, ext = [], [], 0, {}
    for i, n in enumerate(sizes):
        iv = _vars("d", len(x))
        iv[d] = f"j{i}"
        src = list(iv)
        src[d] = f"j{i} + {off}" if off else f"j{i}"
        stmts.append(f"Y{i}[{_idx(iv)}] = X[{_idx(src)}]")
        results.append(f"Y{i}")
        ext[f"j{i}"] = n
        off += n
    return Instance("; ".join(stmts), {"X": 0}, results, extents=ext)


_def(OpDef("split", [Operand("x", dtype="any")], {"dim": Attr("int"), "sizes": Attr("ints")}, _split,
           "consecutive pieces of the given sizes along dim", "layout", result_dtype="operand:x",
           results="variadic",
           example="%a, %b = graph.split %x {dim = 1, sizes = [3, 5]} : tensor<4x8xf32> -> (tensor<4x3xf32>, tensor<4x5xf32>)"))


def _permute(shapes, attrs):
    (x,) = shapes
    perm = list(attrs["perm"])
    if sorted(perm) != list(range(len(x))):
        raise OpError(f"perm {perm} is not a permutation of 0..{len(x) - 1}")
    iv = _vars("d", len(x))
    return Instance(f"Y[{_idx([iv[p] for p in perm])}] = X[{_idx(iv)}]", {"X": 0}, ["Y"])


_def(OpDef("permute", [Operand("x", dtype="any")], {"perm": Attr("ints")}, _permute,
           "dimension permutation: Y dim i is X dim perm[i]", "layout", result_dtype="operand:x",
           example="%y = graph.permute %x {perm = [1, 0]} : tensor<4x8xf32> -> tensor<8x4xf32>"))


def _expand(shapes, attrs):
    (x,) = shapes
    shape = list(attrs["shape"])
    if len(shape) < len(x):
        raise OpError(f"shape {shape} has fewer dims than the input {_fmt(x)}")
    lead = len(shape) - len(x)
    out = []
    for i, n in enumerate(shape):
        src = x[i - lead] if i >= lead else 1
        if n == -1:
            if i < lead:
                raise OpError(f"-1 in new leading dim {i}")
            n = src
        elif src not in (1, n, DYN):
            raise OpError(f"cannot expand dim {i - lead} of size {src} to {n}")
        out.append(n)
    iv = _vars("d", len(out))
    acc = _bcast_access("X", x, tuple(out), iv)
    ext = {v: n for v, n in zip(iv, out) if n != DYN}
    return Instance(f"Y[{_idx(iv)}] = {acc}", {"X": 0}, ["Y"], extents=ext)


_def(OpDef("expand", [Operand("x", dtype="any")], {"shape": Attr("ints")}, _expand,
           "broadcast to shape (-1 keeps a dim)", "layout", result_dtype="operand:x",
           example="%y = graph.expand %x {shape = [4, 8]} : tensor<1x8xf32> -> tensor<4x8xf32>"))


def _reshape_shape(shapes, attrs, result_shapes):
    (x,) = shapes
    (y,) = result_shapes
    if DYN not in x and DYN not in y and _numel(x) != _numel(y):
        raise OpError(f"reshape from {_fmt(x)} ({_numel(x)} elements) to {_fmt(y)} ({_numel(y)} elements)")
    if DYN in y and DYN not in x:
        known = _numel([d for d in y if d != DYN])
        if y.count(DYN) != 1 or _numel(x) % known:
            raise OpError(f"cannot reshape {_fmt(x)} to {_fmt(y)}")
    return [y]


def _reshape_eval(arrays, attrs, result_shapes):
    (x,) = arrays
    (y,) = result_shapes
    return [np.reshape(x, [-1 if d == DYN else d for d in y])]


_def(OpDef("reshape", [Operand("x", dtype="any")], {}, None,
           "row-major reshape (view); the result type names the shape ('?' once for a dynamic dim)", "layout",
           result_dtype="operand:x", layout_shape=_reshape_shape, layout_eval=_reshape_eval,
           example="%y = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>"))

_def(OpDef("constant", [], {}, None, "a dense constant tensor", "constant", result_dtype="free",
           layout_shape=lambda s, a, r: r, layout_eval=None,
           example="%c = graph.constant dense<1.0> : tensor<4xf32>"))

# the backward (gradient) ops of training graphs: their own file, same table
from kitsune.semantics import grad_ops as _grad_ops  # noqa: E402,F401

# ------------------------------------------------------------------ queries


def instantiate(opdef: OpDef, shapes: list[Shape], attrs: dict[str, Any]) -> tuple[Instance, Bound]:
    """The op's comprehension program applied to ``shapes`` (raises OpError)."""
    assert opdef.semantics is not None
    inst = opdef.semantics([tuple(s) for s in shapes], attrs)
    prog = parse(inst.text, inst.params)
    names = {n: shapes[p] for n, p in inst.inputs.items() if p < len(shapes)}
    try:
        bound = infer_shapes(prog, names, inst.extents, inst.declared)
    except TCError as e:
        raise OpError(_rename(e.message, opdef, inst)) from None
    return inst, bound


def _rename(msg: str, opdef: OpDef, inst: Instance) -> str:
    """Say operand names ('weight') rather than comprehension names ('W')."""
    flat = flat_operand_names(opdef, max(inst.inputs.values(), default=-1) + 1)
    for tname, pos in sorted(inst.inputs.items(), key=lambda kv: -len(kv[0])):
        if pos < len(flat):
            msg = msg.replace(f"{tname} dim", f"{flat[pos]} dim").replace(f"'{tname}'", f"'{flat[pos]}'")
    return msg


def operand_slots(opdef: OpDef, n: int) -> list[tuple[Operand, str]]:
    """For an instance with ``n`` operands: each position's operand definition and display name.

    Operands are positional: required ones always, optional ones in order while
    operands remain, a variadic one takes the rest (``inputs#0``, ``inputs#1``, ...).
    """
    extra = n - sum(1 for o in opdef.operands if o.kind == "tensor")
    out: list[tuple[Operand, str]] = []
    for o in opdef.operands:
        if o.kind == "tensor":
            out.append((o, o.name))
        elif o.kind == "optional":
            if extra > 0:
                out.append((o, o.name))
                extra -= 1
        else:
            out += [(o, f"{o.name}#{i}") for i in range(max(extra, 0))]
            extra = 0
    return out[:n]


def flat_operand_names(opdef: OpDef, n: int) -> list[str]:
    return [name for _, name in operand_slots(opdef, n)]


def infer(opdef: OpDef, shapes: list[Shape], attrs: dict[str, Any], result_shapes: list[Shape]) -> list[Shape]:
    """Result shapes of an op instance (DYN where unknown). Raises OpError."""
    if opdef.layout:
        assert opdef.layout_shape is not None
        return opdef.layout_shape([tuple(s) for s in shapes], attrs, [tuple(s) for s in result_shapes])
    inst, bound = instantiate(opdef, shapes, attrs)
    return [bound.shapes[r] for r in inst.results]


def comprehension_text(opdef: OpDef, shapes: list[Shape], attrs: dict[str, Any]) -> str | None:
    if opdef.layout:
        return None
    inst, _ = instantiate(opdef, shapes, attrs)
    return inst.text


def run(opdef: OpDef, arrays: list[np.ndarray], attrs: dict[str, Any], result_shapes: list[Shape],
        result_dtypes: list[np.dtype]) -> list[np.ndarray]:
    """Evaluate one op on numpy arrays (float16 / bf16 storage handled by the caller)."""
    from kitsune.semantics.comprehension import evaluate

    if opdef.layout:
        assert opdef.layout_eval is not None
        return opdef.layout_eval(arrays, attrs, result_shapes)
    inst = opdef.semantics([a.shape for a in arrays], attrs)
    prog = parse(inst.text, inst.params)
    env = {n: arrays[p] for n, p in inst.inputs.items() if p < len(arrays)}
    dtypes = {r: dt for r, dt in zip(inst.results, result_dtypes)}
    for t in prog.defined():
        if t not in dtypes:
            dtypes[t] = np.float32 if not result_dtypes or result_dtypes[0].kind != "f" else result_dtypes[0]
    out = evaluate(prog, env, inst.extents, inst.declared, dtypes)
    return [out[r] for r in inst.results]


@dataclass
class OpCounts:
    flops: int
    bytes_read: int
    bytes_written: int

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written


def moved_elems(opdef: OpDef, shapes: list[Shape], attrs: dict[str, Any]) -> tuple[int, list[int], list[int]]:
    """(FLOPs, elements read per operand, elements written per result) of one instance of a non-layout op:
    the fewest (a gather reads only the rows it reaches). An ``in_place`` update does not read x (the result's
    storage) and writes only the source's slices."""
    inst, bound = instantiate(opdef, shapes, attrs)
    c = count(bound)
    reads = [0] * len(shapes)
    for name, pos in inst.inputs.items():
        if pos < len(shapes) and name in c.read_elems:
            reads[pos] = c.read_elems[name]
    writes = [c.write_elems.get(r, 0) for r in inst.results]
    if attrs.get("in_place"):
        reads[inst.inputs["X"]] = 0
        writes = [_numel(shapes[inst.inputs["S"]])]
    return c.flops, reads, writes


def op_counts(opdef: OpDef, shapes: list[Shape], attrs: dict[str, Any], operand_bytes: list[int],
              result_shapes: list[Shape], result_bytes: list[int]) -> OpCounts:
    """FLOPs and the fewest bytes one op instance moves (element sizes given per operand/result)."""
    if opdef.layout:
        if opdef.name == "constant":
            return OpCounts(0, 0, sum(_numel(s) * b for s, b in zip(result_shapes, result_bytes)))
        # a reshape is a view: nothing moves
        return OpCounts(0, 0, 0)
    flops, reads, writes = moved_elems(opdef, shapes, attrs)
    return OpCounts(flops, sum(n * b for n, b in zip(reads, operand_bytes)),
                    sum(n * b for n, b in zip(writes, result_bytes)))
