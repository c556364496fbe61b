"""The tensor-comprehension notation: parser, shape rules, evaluator, counts.

Every graph op declares its meaning as a short program in this notation (see
``tc.lark``), for example::

    C[m,n] += A[m,k] * B[k,n]

From that one text this module derives

* the extent of every index variable and the shape of every tensor the
  program defines (``infer_shapes``), which the verifiers use,
* a numpy evaluation (``evaluate``), which the reference interpreter uses,
* FLOP and byte counts (``count``), which the cost model uses.

Semantics in brief:

* ``=`` assigns, ``+=`` / ``*=`` / ``max=`` / ``min=`` accumulate. Index
  variables on the right that are not on the left are reduction variables and
  need an accumulating statement. A tensor first defined by an accumulating
  statement starts at the combiner's neutral element (0, 1, -inf, +inf); one
  that already exists (an input, or defined by an earlier statement) is
  accumulated into.
* An index is an affine expression of index variables, integers and
  ``$parameters`` or an access of an integer tensor (indirect: a gather on the
  right, a scatter-accumulate on the left).
* A read outside a tensor (padding of a convolution or a pooling window) gives
  the neutral element of the statement's combiner (0 for ``=`` and ``+=``).
* The extent of an index variable comes, in this order, from the explicit
  extents the op passes in, from a tensor dimension it indexes alone, or from
  an affine index ``a*v + ... + c`` into a tensor of size D, read as a window
  with symmetric padding ``max(0, -c)``: ``(D - 1 + max(0,-c) - c - sum b*(K-1)) // a + 1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Mapping, Sequence

import lark
import numpy as np

DYN = -1
"""A dynamic (unknown until run time) size."""


class TCError(Exception):
    """An error in a comprehension text or in the shapes it is applied to."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        self.line = line
        self.column = column
        where = f"{line}:{column}: " if line is not None else ""
        super().__init__(where + message)
        self.message = message


# --------------------------------------------------------------------------- AST


@dataclass(frozen=True)
class Affine:
    """sum(coeff * var) + const."""

    terms: tuple[tuple[str, int], ...]
    const: int

    @property
    def vars(self) -> tuple[str, ...]:
        return tuple(v for v, _ in self.terms)

    def plain_var(self) -> str | None:
        if len(self.terms) == 1 and self.terms[0][1] == 1 and self.const == 0:
            return self.terms[0][0]
        return None

    def __str__(self) -> str:
        parts = [v if c == 1 else f"{c}*{v}" for v, c in self.terms]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts)


@dataclass(frozen=True)
class Indirect:
    access: "Access"

    @property
    def vars(self) -> tuple[str, ...]:
        return self.access.vars

    def plain_var(self) -> str | None:
        return None

    def __str__(self) -> str:
        return str(self.access)


Index = Affine | Indirect


@dataclass(frozen=True)
class Access:
    tensor: str
    indices: tuple[Index, ...]

    @property
    def vars(self) -> tuple[str, ...]:
        out: list[str] = []
        for ix in self.indices:
            for v in ix.vars:
                if v not in out:
                    out.append(v)
        return tuple(out)

    def __str__(self) -> str:
        return f"{self.tensor}[{', '.join(map(str, self.indices))}]"


@dataclass(frozen=True)
class Num:
    value: float


@dataclass(frozen=True)
class Call:
    fn: str
    args: tuple["Expr", ...]


@dataclass(frozen=True)
class BinOp:
    op: str  # + - * / ** == != < <= > >=
    lhs: "Expr"
    rhs: "Expr"


@dataclass(frozen=True)
class Neg:
    arg: "Expr"


@dataclass(frozen=True)
class IVar:
    """The value of an index variable (an integer), e.g. the ``j <= i`` of a triangular mask."""

    name: str


Expr = Access | Num | Call | BinOp | Neg | IVar


@dataclass(frozen=True)
class Stmt:
    lhs: Access
    op: str  # = += *= max= min=
    rhs: Expr

    def accesses(self) -> list[Access]:
        return list(_accesses(self.rhs))

    def all_accesses(self) -> list[Access]:
        """Every access of the statement: its target (and the index tensors a scatter's target reads) and the
        right-hand side's."""
        return list(_accesses(self.lhs)) + self.accesses()

    @property
    def lhs_vars(self) -> tuple[str, ...]:
        return self.lhs.vars

    @property
    def all_vars(self) -> tuple[str, ...]:
        out = list(self.lhs.vars)
        for a in self.accesses():
            for v in a.vars:
                if v not in out:
                    out.append(v)
        for v in _ivars(self.rhs):
            if v not in out:
                out.append(v)
        return tuple(out)

    @property
    def reduction_vars(self) -> tuple[str, ...]:
        lv = set(self.lhs.vars)
        return tuple(v for v in self.all_vars if v not in lv)


@dataclass(frozen=True)
class Program:
    stmts: tuple[Stmt, ...]
    text: str

    def defined(self) -> list[str]:
        out: list[str] = []
        for s in self.stmts:
            if s.lhs.tensor not in out:
                out.append(s.lhs.tensor)
        return out

    def used(self) -> list[str]:
        """Tensors read before (or without) being defined: the program's inputs."""
        defined: set[str] = set()
        out: list[str] = []

        def see(name: str):
            if name not in defined and name not in out:
                out.append(name)

        for s in self.stmts:
            for a in s.accesses():
                see(a.tensor)
                for ix in a.indices:
                    if isinstance(ix, Indirect):
                        see(ix.access.tensor)
            for ix in s.lhs.indices:
                if isinstance(ix, Indirect):
                    see(ix.access.tensor)
            if s.op != "=" and s.lhs.tensor not in defined:
                pass  # accumulating into an undefined tensor: starts at neutral
            defined.add(s.lhs.tensor)
        return out


def _ivars(e: Expr):
    match e:
        case IVar(name=n):
            yield n
        case Call(args=args):
            for a in args:
                yield from _ivars(a)
        case BinOp(lhs=l, rhs=r):
            yield from _ivars(l)
            yield from _ivars(r)
        case Neg(arg=a):
            yield from _ivars(a)


def _accesses(e: Expr):
    match e:
        case Access():
            yield e
            for ix in e.indices:
                if isinstance(ix, Indirect):
                    yield from _accesses(ix.access)
        case Num() | IVar():
            return
        case Call(args=args):
            for a in args:
                yield from _accesses(a)
        case BinOp(lhs=l, rhs=r):
            yield from _accesses(l)
            yield from _accesses(r)
        case Neg(arg=a):
            yield from _accesses(a)


# ------------------------------------------------------------------------ parser

FUNCTIONS: dict[str, int] = {
    # name -> arity. The numpy meaning is in _FN below; FLOPs count 1 each.
    "exp": 1, "log": 1, "sqrt": 1, "rsqrt": 1, "tanh": 1, "erf": 1,
    "sigmoid": 1, "abs": 1, "max": 2, "min": 2, "select": 3,
    "sin": 1, "cos": 1, "trunc": 1, "floor": 1,
}

_GRAMMAR_PATH = Path(__file__).with_name("tc.lark")


@lru_cache(maxsize=1)
def _lark() -> lark.Lark:
    return lark.Lark(_GRAMMAR_PATH.read_text(), parser="lalr", propagate_positions=True)


@lru_cache(maxsize=4096)
def _parse_tree(text: str) -> lark.Tree:
    try:
        return _lark().parse(text)
    except lark.exceptions.UnexpectedCharacters as e:
        raise TCError(f"unexpected character {text[e.pos_in_stream]!r}", e.line, e.column) from None
    except lark.exceptions.UnexpectedToken as e:
        tok = e.token
        what = "end of text" if tok.type == "$END" else repr(str(tok))
        expected = ", ".join(sorted(_pretty_terminal(t) for t in e.expected))
        raise TCError(f"unexpected {what}; expected one of: {expected}", e.line, e.column) from None
    except lark.exceptions.UnexpectedEOF:
        raise TCError("unexpected end of text", None, None) from None


_TERMINAL_NAMES = {
    "NAME": "a name", "INT": "an integer", "NUMBER": "a number", "PARAM": "a $parameter",
    "ASSIGN": "an assignment (=, +=, *=, max=, min=)", "LSQB": "'['", "RSQB": "']'",
    "LPAR": "'('", "RPAR": "')'", "COMMA": "','", "SEMICOLON": "';'", "PLUS": "'+'",
    "MINUS": "'-'", "STAR": "'*'", "SLASH": "'/'", "CMPOP": "a comparison",
    "__ANON_0": "'**'", "INF": "'inf'", "$END": "end of text",
}


def _pretty_terminal(t: str) -> str:
    return _TERMINAL_NAMES.get(t, t)


def parse(text: str, params: Mapping[str, float | int] | None = None) -> Program:
    """Parse a comprehension program; ``$name`` parameters take values from ``params``."""
    return _parse_cached(text, tuple(sorted((params or {}).items())))


@lru_cache(maxsize=8192)
def _parse_cached(text: str, params_items: tuple) -> Program:
    tree = _parse_tree(text)
    params = dict(params_items)
    builder = _Builder(params)
    stmts = tuple(builder.stmt(s) for s in tree.children)
    prog = Program(stmts, text)
    _check_program(prog)
    return prog


def _pos(t) -> tuple[int | None, int | None]:
    meta = getattr(t, "meta", None)
    if meta is not None and not getattr(meta, "empty", True):
        return meta.line, meta.column
    if isinstance(t, lark.Token):
        return t.line, t.column
    return None, None


class _Builder:
    def __init__(self, params: Mapping[str, float | int]):
        self.params = params

    def param(self, tok: lark.Token) -> float | int:
        name = str(tok)[1:]
        if name not in self.params:
            raise TCError(f"unknown parameter ${name}", tok.line, tok.column)
        return self.params[name]

    def stmt(self, t: lark.Tree) -> Stmt:
        acc, op, rhs = t.children
        stmt = Stmt(self.access(acc), str(op), self.expr(rhs))
        _check_stmt(stmt, *_pos(t))  # report with the statement's line:col
        return stmt

    def access(self, t: lark.Tree) -> Access:
        name = str(t.children[0])
        idx = tuple(self.index(c) for c in t.children[1:] if c is not None)
        return Access(name, idx)

    def index(self, t) -> Index:
        r = self._affine(t)
        if isinstance(r, Indirect):
            return r
        terms, const = r
        return Affine(tuple((v, c) for v, c in terms.items() if c != 0), const)

    def _affine(self, t):
        if isinstance(t, lark.Token):  # cannot happen with the grammar's aliases
            raise TCError(f"bad index {t}", t.line, t.column)
        k = t.data
        if k == "ivar":
            return ({str(t.children[0]): 1}, 0)
        if k == "iconst":
            return ({}, int(t.children[0]))
        if k == "iparam":
            v = self.param(t.children[0])
            if int(v) != v:
                line, col = _pos(t)
                raise TCError(f"index parameter {t.children[0]} = {v} is not an integer", line, col)
            return ({}, int(v))
        if k == "iindirect":
            return Indirect(self.access(t.children[0]))
        if k in ("iadd", "isub", "imul", "ineg"):
            parts = [self._affine(c) for c in t.children]
            line, col = _pos(t)
            if any(isinstance(p, Indirect) for p in parts):
                raise TCError("an indirect index cannot be combined with arithmetic", line, col)
            if k == "ineg":
                (terms, c), = parts
                return ({v: -x for v, x in terms.items()}, -c)
            (ta, ca), (tb, cb) = parts
            if k == "imul":
                if ta and tb:
                    raise TCError("index is not affine (product of two index variables)", line, col)
                if ta:
                    ta, ca, tb, cb = tb, cb, ta, ca
                return ({v: x * ca for v, x in tb.items()}, ca * cb)
            sign = 1 if k == "iadd" else -1
            terms = dict(ta)
            for v, x in tb.items():
                terms[v] = terms.get(v, 0) + sign * x
            return (terms, ca + sign * cb)
        line, col = _pos(t)
        raise TCError(f"bad index expression ({k})", line, col)

    def expr(self, t) -> Expr:
        k = t.data
        if k == "access":
            return self.access(t)
        if k == "number":
            return Num(float(t.children[0]))
        if k == "param":
            return Num(float(self.param(t.children[0])))
        if k == "inf":
            return Num(math.inf)
        if k == "ivalue":
            return IVar(str(t.children[0]))
        if k == "neg":
            return Neg(self.expr(t.children[0]))
        if k in ("add", "sub", "mul", "div", "pow"):
            op = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}[k]
            return BinOp(op, self.expr(t.children[0]), self.expr(t.children[1]))
        if k == "compare":
            return BinOp(str(t.children[1]), self.expr(t.children[0]), self.expr(t.children[2]))
        if k == "call":
            name_tok = t.children[0]
            fn = str(name_tok)
            if fn not in FUNCTIONS:
                raise TCError(
                    f"unknown function '{fn}'; known: {', '.join(sorted(FUNCTIONS))}",
                    name_tok.line, name_tok.column,
                )
            args = tuple(self.expr(c) for c in t.children[1:])
            if len(args) != FUNCTIONS[fn]:
                raise TCError(
                    f"function '{fn}' takes {FUNCTIONS[fn]} argument(s), got {len(args)}",
                    name_tok.line, name_tok.column,
                )
            return Call(fn, args)
        line, col = _pos(t)
        raise TCError(f"bad expression ({k})", line, col)


def _check_program(prog: Program) -> None:
    for s in prog.stmts:
        _check_stmt(s)


def _check_stmt(s: Stmt, line: int | None = None, column: int | None = None) -> None:
    lhs_vars = [v for ix in s.lhs.indices if isinstance(ix, Affine) for v in ix.vars]
    if len(lhs_vars) != len(set(lhs_vars)):
        raise TCError(f"index variable repeated on the left of '{s.lhs}'", line, column)
    if s.op == "=" and s.reduction_vars:
        raise TCError(
            f"statement '{s.lhs} = ...' has index variable(s) "
            f"{', '.join(s.reduction_vars)} only on the right: use an accumulating "
            f"assignment (+=, *=, max=, min=) to reduce over them",
            line, column,
        )


# ------------------------------------------------------------------ shape rules


@dataclass
class Bound:
    """A program applied to concrete (or partly dynamic) shapes."""

    program: Program
    shapes: dict[str, tuple[int, ...]]
    """Shape of every tensor: inputs, temporaries, results."""
    extents: list[dict[str, int]]
    """Per statement: the extent of every index variable."""


def infer_shapes(
    prog: Program,
    input_shapes: Mapping[str, Sequence[int]],
    extents: Mapping[str, int] | None = None,
    declared: Mapping[str, Sequence[int]] | None = None,
) -> Bound:
    """Check the program against the input shapes and infer every other shape.

    ``extents`` fixes index variables explicitly; ``declared`` gives the shape of
    tensors the program defines piecewise (e.g. a concatenation).
    Raises TCError with a message naming the tensors, dimensions and variables.
    """
    shapes: dict[str, tuple[int, ...]] = {k: tuple(v) for k, v in input_shapes.items()}
    declared = {k: tuple(v) for k, v in (declared or {}).items()}
    all_ext: list[dict[str, int]] = []
    for s in prog.stmts:
        ext: dict[str, int] = {v: e for v, e in (extents or {}).items() if v in s.all_vars}
        src: dict[str, str] = {v: "given" for v in ext}
        lhs_known = s.lhs.tensor in shapes or s.lhs.tensor in declared
        accs = s.accesses()
        if lhs_known:
            accs = [*accs, s.lhs]
        for a in accs:
            shp = shapes.get(a.tensor, declared.get(a.tensor))
            if shp is None:
                raise TCError(f"tensor '{a.tensor}' is read before it is defined")
            if len(shp) != len(a.indices):
                raise TCError(
                    f"'{a}' uses {len(a.indices)} indices but '{a.tensor}' has rank {len(shp)} "
                    f"(shape {_fmt_shape(shp)})"
                )
            for d, ix in enumerate(a.indices):
                v = ix.plain_var()
                if v is None:
                    continue
                size = shp[d]
                if v in ext:
                    if a is s.lhs:
                        continue  # the written part of an existing tensor: checked below
                    if src[v] == "given" and size != DYN and ext[v] != DYN and ext[v] <= size:
                        continue  # a given extent may read a leading part of a dimension
                    if size != DYN and ext[v] != DYN and ext[v] != size:
                        raise TCError(
                            f"size mismatch for index '{v}': {a.tensor} dim {d} has size {size} "
                            f"but {src[v]} has size {ext[v]}"
                        )
                    if ext[v] == DYN:
                        ext[v], src[v] = size, f"{a.tensor} dim {d}"
                else:
                    ext[v], src[v] = size, f"{a.tensor} dim {d}"
        # Variables that only appear inside affine indices: window rule.
        changed = True
        while changed:
            changed = False
            for a in accs:
                shp = shapes.get(a.tensor, declared.get(a.tensor))
                for d, ix in enumerate(a.indices):
                    if not isinstance(ix, Affine):
                        continue
                    unknown = [(v, c) for v, c in ix.terms if v not in ext]
                    if len(unknown) != 1 or unknown[0][1] <= 0:
                        continue
                    v, coef = unknown[0]
                    others = [(w, c) for w, c in ix.terms if w != v]
                    if shp[d] == DYN or any(ext[w] == DYN for w, _ in others):
                        ext[v] = DYN
                    else:
                        span = sum(c * (ext[w] - 1) for w, c in others)
                        pad = max(0, -ix.const)
                        n = (shp[d] - 1 + pad - ix.const - span) // coef + 1
                        if n <= 0:
                            raise TCError(
                                f"index '{ix}' of '{a}' has no valid position: {a.tensor} dim {d} "
                                f"has size {shp[d]}"
                            )
                        ext[v] = n
                    src[v] = f"{a.tensor} dim {d} (window)"
                    changed = True
        missing = [v for v in s.all_vars if v not in ext]
        if missing:
            raise TCError(f"cannot tell the extent of index variable(s) {', '.join(missing)} in '{s.lhs} {s.op} ...'")
        if not lhs_known:
            shp = []
            for ix in s.lhs.indices:
                if isinstance(ix, Indirect):
                    raise TCError(f"scatter into '{s.lhs.tensor}' needs the tensor to exist first")
                if any(ext[v] == DYN for v in ix.vars):
                    shp.append(DYN)
                else:
                    shp.append(sum(c * (ext[v] - 1) for v, c in ix.terms if c > 0) + ix.const + 1)
            shapes[s.lhs.tensor] = tuple(shp)
        else:
            if s.lhs.tensor not in shapes:
                shapes[s.lhs.tensor] = declared[s.lhs.tensor]
            shp = shapes[s.lhs.tensor]
            for d, ix in enumerate(s.lhs.indices):
                if isinstance(ix, Indirect) or shp[d] == DYN or any(ext[v] == DYN for v in ix.vars):
                    continue
                hi = sum(c * (ext[v] - 1) for v, c in ix.terms if c > 0) + ix.const
                lo = sum(c * (ext[v] - 1) for v, c in ix.terms if c < 0) + ix.const
                if lo < 0 or hi >= shp[d]:
                    raise TCError(
                        f"'{s.lhs}' writes positions {lo}..{hi} of {s.lhs.tensor} dim {d}, "
                        f"which has size {shp[d]}"
                    )
        all_ext.append(ext)
    return Bound(prog, shapes, all_ext)


def _fmt_shape(shp: Sequence[int]) -> str:
    return "[" + ", ".join("?" if d == DYN else str(d) for d in shp) + "]"


# -------------------------------------------------------------------- evaluator

_NEUTRAL = {"=": 0.0, "+=": 0.0, "*=": 1.0, "max=": -math.inf, "min=": math.inf}


def _erf(x):
    import torch

    return torch.special.erf(torch.from_numpy(np.ascontiguousarray(x))).numpy()


def _fdt(x):
    """float64 for float64 values (they stay float64), else float32."""
    return np.float64 if np.asarray(x).dtype == np.float64 else np.float32


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


_FN: dict[str, Callable] = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "tanh": np.tanh,
    "erf": lambda x: _erf(np.asarray(x, dtype=_fdt(x)) if np.ndim(x) else _fdt(x)(x)),
    "sigmoid": _sigmoid,
    "abs": np.abs,
    "sin": np.sin,
    "cos": np.cos,
    "trunc": np.trunc,
    "floor": np.floor,
    "max": np.maximum,
    "min": np.minimum,
    "select": lambda c, a, b: np.where(c, a, b),
}

_BIN: dict[str, Callable] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "**": np.power,
    "==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
    ">": np.greater, ">=": np.greater_equal,
}


def _combine(op: str):
    return {"+=": np.add, "*=": np.multiply, "max=": np.maximum, "min=": np.minimum}[op]


def _reduce(op: str, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if not axes:
        return x
    fn = {"+=": np.sum, "*=": np.prod, "max=": np.max, "min=": np.min}[op]
    return fn(x, axis=axes)


class _Domain:
    def __init__(self, vars_: Sequence[str], ext: Mapping[str, int]):
        self.vars = list(vars_)
        self.ext = ext
        self.pos = {v: i for i, v in enumerate(self.vars)}

    def shape(self) -> tuple[int, ...]:
        return tuple(self.ext[v] for v in self.vars)

    def iota(self, v: str) -> np.ndarray:
        shp = [1] * len(self.vars)
        shp[self.pos[v]] = self.ext[v]
        return np.arange(self.ext[v], dtype=np.int64).reshape(shp)

    def index_array(self, ix: Index, env) -> np.ndarray | int:
        if isinstance(ix, Indirect):
            arr = self.gather(ix.access, env, 0)
            return np.asarray(arr).astype(np.int64)
        val: np.ndarray | int = ix.const
        for v, c in ix.terms:
            val = val + c * self.iota(v)
        return val

    def gather(self, a: Access, env, neutral: float) -> np.ndarray:
        """The values of access ``a`` over the domain (size-1 axes where a var is unused)."""
        arr = env[a.tensor]
        plain = [ix.plain_var() for ix in a.indices]
        if all(p is not None for p in plain) and len(set(plain)) == len(plain):
            # A transposed, reshaped view: no copy.
            if any(arr.shape[d] != self.ext[plain[d]] for d in range(len(plain))):
                arr = arr[tuple(slice(0, self.ext[plain[d]]) for d in range(len(plain)))]
            order = sorted(range(len(plain)), key=lambda d: self.pos[plain[d]])
            view = np.transpose(arr, order) if arr.ndim else arr
            shp = [1] * len(self.vars)
            for d in range(len(plain)):
                shp[self.pos[plain[d]]] = arr.shape[d]
            return view.reshape(shp)
        idx = [self.index_array(ix, env) for ix in a.indices]
        mask = None
        for d, ia in enumerate(idx):
            if isinstance(ia, (int, np.integer)):
                ia = np.asarray(ia).reshape([1] * len(self.vars))
                idx[d] = ia
            bad = (ia < 0) | (ia >= arr.shape[d])
            if bad.any():
                if isinstance(a.indices[d], Indirect):
                    b = np.asarray(ia)[np.asarray(bad)]
                    raise TCError(
                        f"index {int(b.flat[0])} out of range for {a.tensor} dim {d} (size {arr.shape[d]}) "
                        f"in '{a}'"
                    )
                mask = bad if mask is None else (mask | bad)
                idx[d] = np.clip(ia, 0, arr.shape[d] - 1)
        if not idx:
            return np.asarray(arr).reshape([1] * len(self.vars))
        res = arr[tuple(idx)]
        if mask is not None:
            res = np.where(mask, np.asarray(neutral, dtype=res.dtype), res)
        # Advanced indexing gives the broadcast shape of the index arrays.
        full = [1] * len(self.vars)
        for ia in idx:
            for i, n in enumerate(np.shape(ia)):
                full[i] = max(full[i], n)
        return res.reshape(full)


def _eval_expr(e: Expr, dom: _Domain, env, neutral: float):
    match e:
        case Access():
            return dom.gather(e, env, neutral)
        case Num(value=v):
            return np.float32(v)
        case IVar(name=n):
            return dom.iota(n)
        case Neg(arg=a):
            return np.negative(_eval_expr(a, dom, env, neutral))
        case BinOp(op=op, lhs=l, rhs=r):
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return _BIN[op](_eval_expr(l, dom, env, neutral), _eval_expr(r, dom, env, neutral))
        case Call(fn=fn, args=args):
            vals = [_eval_expr(a, dom, env, neutral) for a in args]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                return _FN[fn](*vals)
    raise AssertionError(e)


def _product_factors(e: Expr) -> list[Expr] | None:
    """``e`` as a product of accesses and numbers, or None."""
    match e:
        case BinOp(op="*", lhs=l, rhs=r):
            fl, fr = _product_factors(l), _product_factors(r)
            if fl is None or fr is None:
                return None
            return fl + fr
        case Access() | Num():
            return [e]
    return None


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _value_over_lhs(s: Stmt, ext: Mapping[str, int], env) -> tuple[np.ndarray, list[str]]:
    """The right-hand side reduced over the reduction vars, over the lhs vars."""
    lhs_vars = list(s.lhs.vars)
    red = list(s.reduction_vars)
    dom = _Domain(lhs_vars + red, ext)
    neutral = _NEUTRAL[s.op]
    factors = _product_factors(s.rhs) if s.op == "+=" else None
    if factors is not None and red and sum(isinstance(f, Access) for f in factors) >= 1:
        scale = 1.0
        ops, subs = [], []
        for f in factors:
            if isinstance(f, Num):
                scale *= f.value
                continue
            g = dom.gather(f, env, 0.0)
            used = [v for v in dom.vars if v in f.vars]
            g = g.reshape([ext[v] for v in used]) if used else g.reshape(())
            ops.append(g)
            subs.append("".join(_LETTERS[dom.pos[v]] for v in used))
        out = "".join(_LETTERS[dom.pos[v]] for v in lhs_vars)
        # Vars of the domain no factor uses still multiply the sum by their extent.
        used_all = set("".join(subs))
        missing = [v for v in dom.vars if _LETTERS[dom.pos[v]] not in used_all]
        mult = 1
        for v in missing:
            if v in red:
                mult *= ext[v]
        val = np.einsum(",".join(subs) + "->" + "".join(c for c in out if c in used_all), *ops, optimize=True)
        if any(c not in used_all for c in out):
            shp = [ext[v] if _LETTERS[dom.pos[v]] in used_all else 1 for v in lhs_vars]
            val = np.broadcast_to(val.reshape(shp), [ext[v] for v in lhs_vars])
        val = val * np.float32(scale * mult) if (scale != 1.0 or mult != 1) else val
        return np.asarray(val), lhs_vars
    val = _eval_expr(s.rhs, dom, env, neutral)
    val = np.broadcast_to(val, dom.shape()) if np.ndim(val) == len(dom.vars) else np.broadcast_to(
        np.asarray(val).reshape([1] * len(dom.vars)) if np.ndim(val) == 0 else val, dom.shape()
    )
    val = _reduce(s.op, val, tuple(range(len(lhs_vars), len(dom.vars))))
    return np.asarray(val), lhs_vars


def evaluate(
    prog: Program,
    inputs: Mapping[str, np.ndarray],
    extents: Mapping[str, int] | None = None,
    declared: Mapping[str, Sequence[int]] | None = None,
    dtypes: Mapping[str, np.dtype] | None = None,
) -> dict[str, np.ndarray]:
    """Run the program on numpy arrays; returns every tensor it defines.

    Floating inputs are computed in float32 (float64 stays float64); ``dtypes``
    gives the numpy dtype of defined tensors (default float32).
    """
    env: dict[str, np.ndarray] = {}
    for k, v in inputs.items():
        v = np.asarray(v)
        if v.dtype == np.float16:
            v = v.astype(np.float32)
        env[k] = v
    bound = infer_shapes(prog, {k: v.shape for k, v in env.items()}, extents, declared)
    dtypes = dtypes or {}
    for s, ext in zip(prog.stmts, bound.extents):
        name = s.lhs.tensor
        dt = np.dtype(dtypes.get(name, np.float32))
        if name not in env:
            start = _NEUTRAL[s.op]
            if dt.kind in "iu" and np.isinf(start):  # an integer min= / max= (max_pool2d_indices): its extreme
                start = np.iinfo(dt).max if start > 0 else np.iinfo(dt).min
            env[name] = np.full(bound.shapes[name], start, dtype=dt)
            fresh = True
        else:
            if name in inputs:  # never write into the caller's arrays
                env[name] = np.array(env[name], dtype=dt if dt.kind == env[name].dtype.kind else env[name].dtype)
            fresh = False
        target = env[name]
        val, lhs_vars = _value_over_lhs(s, ext, env)
        dom = _Domain(lhs_vars, ext)
        plain = [ix.plain_var() for ix in s.lhs.indices]
        if plain == lhs_vars and tuple(target.shape) == tuple(ext[v] for v in lhs_vars):
            if s.op == "=" or fresh:
                target[...] = val
            else:
                target[...] = _combine(s.op)(target, val)
            continue
        if not s.lhs.indices:
            target[...] = val if s.op == "=" or fresh else _combine(s.op)(target, val)
            continue
        idx = []
        for d, ix in enumerate(s.lhs.indices):
            ia = dom.index_array(ix, env)
            ia = np.broadcast_to(np.asarray(ia), dom.shape()) if len(dom.vars) else np.asarray(ia)
            if (ia < 0).any() or (ia >= target.shape[d]).any():
                raise TCError(f"write outside '{name}' (dim {d}, size {target.shape[d]}) in '{s.lhs}'")
            idx.append(ia)
        val = np.broadcast_to(val, dom.shape())
        if s.op == "=":
            target[tuple(idx)] = val
        elif any(isinstance(ix, Indirect) for ix in s.lhs.indices):
            _combine(s.op).at(target, tuple(idx), val)
        else:
            target[tuple(idx)] = _combine(s.op)(target[tuple(idx)], val)
    return {k: env[k] for k in prog.defined()}


# ------------------------------------------------------------------------ counts


def _expr_flops(e: Expr) -> int:
    match e:
        case Access() | Num() | IVar():
            return 0
        case Neg(arg=a):
            return 1 + _expr_flops(a)
        case BinOp(lhs=l, rhs=r):
            return 1 + _expr_flops(l) + _expr_flops(r)
        case Call(args=args):
            return 1 + sum(_expr_flops(a) for a in args)
    raise AssertionError(e)


@dataclass
class Counts:
    flops: int = 0
    """Arithmetic operations (a multiply-add counts 2; a transcendental 1)."""
    read_elems: dict[str, int] = field(default_factory=dict)
    """Per input tensor: elements that must be read at least once."""
    write_elems: dict[str, int] = field(default_factory=dict)
    """Per defined tensor: elements written."""


def count(bound: Bound) -> Counts:
    """FLOPs of the program and the fewest elements each tensor moves.

    A tensor read through an indirect index (a gather) moves only the elements
    the index space can reach, not the whole tensor. Dynamic sizes count as 1.
    """
    prog = bound.program
    c = Counts()
    inputs = set(prog.used())

    def n(shape) -> int:
        return int(np.prod([max(d, 1) for d in shape], dtype=np.int64)) if shape else 1

    for s, ext in zip(prog.stmts, bound.extents):
        dom = n([ext[v] for v in s.all_vars])
        c.flops += dom * (_expr_flops(s.rhs) + (1 if s.op != "=" else 0))
        for a in s.accesses() + [ix.access for ix in s.lhs.indices if isinstance(ix, Indirect)]:
            if a.tensor not in inputs:
                continue
            shape = bound.shapes[a.tensor]
            full = n(shape)
            if any(isinstance(ix, Indirect) for ix in a.indices):
                reach = n([ext[v] for v in a.vars])
                elems = min(full, reach)
            else:
                # positions an affine index can reach in its dimension (a slice reads only its part)
                per_dim = []
                for d, ix in enumerate(a.indices):
                    size = max(shape[d], 1)
                    if not ix.terms:
                        per_dim.append(1)
                    elif len(ix.terms) == 1:
                        per_dim.append(min(size, max(ext[ix.terms[0][0]], 1)))
                    else:
                        span = sum(abs(c) * (max(ext[v], 1) - 1) for v, c in ix.terms)
                        per_dim.append(min(size, span + 1))
                elems = min(full, n(per_dim))
            c.read_elems[a.tensor] = max(c.read_elems.get(a.tensor, 0), elems)
        c.write_elems[s.lhs.tensor] = n(bound.shapes[s.lhs.tensor])
    return c
