"""Index algebra of the Triton generator: symbolic index expressions, pure functions, no code emitted.

An index is a ``Lin``: an affine sum of ``Atom``\\ s with integer coefficients plus a constant. An atom is a
tile axis (``tl.arange`` lanes), a scalar (a tile coordinate, a loop counter), a floor division or a modulo
of another ``Lin``, or a value loaded from memory (an index tensor). Every atom carries an interval
(``lo``, ``hi``; ``None``: unbounded), the axes it varies along and the loop depth it is defined at, so that
bound checks interval arithmetic proves true are left out and anything without a loop counter is hoisted.

``ladd`` folds the digits of a mixed-radix decomposition back (``_fold_radix``); ``lfloordiv`` / ``lmod``
drop a division or modulo whose remainder provably stays in range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kitsune.codegen.plan import row_major_strides


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
    """An affine index: the sum of ``coeff * atom`` over ``terms`` plus ``const``."""

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


def _factor(x: Lin, c: int) -> tuple[int, Lin, Lin] | None:
    """``x = g * a + b`` with ``g`` a divisor of ``c`` above 1 (the largest that works), ``a`` the terms
    divisible by ``g`` and ``0 <= b < g``: then ``x // c = a // (c / g)`` and ``x % c = g * (a % (c / g)) + b``.
    A GroupNorm's statistic read through its rows' reshape, ``(4096 (64 c + o) + w) // 49152`` with
    ``w < 4096``, is ``(64 c + o) // 12``: one division a channel instead of one an element."""
    for g in sorted({math.gcd(k, c) for _, k in x.terms} - {1, c}, reverse=True):
        a, b = _split(x, g)
        lo, hi = lrange(b)
        alo, _ = lrange(a)
        if lo is not None and hi is not None and 0 <= lo and hi < g and alo is not None and alo >= 0:
            return g, a, b  # (x >= 0: Triton's // and % truncate, equal to floor division there only)
    return None


def lfloordiv(x: Lin, c: int) -> Lin:
    if c == 1:
        return x
    q, r = _split(x, c)
    lo, hi = lrange(r)
    if lo is not None and hi is not None and 0 <= lo and hi < c:
        return q
    f = _factor(x, c)
    if f is not None:
        return lfloordiv(f[1], c // f[0])
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
    f = _factor(r, c)
    if f is not None:
        g, a, b = f
        return ladd(lscale(lmod(a, c // g), g), b)
    nonneg = lo is not None and lo >= 0
    a = Atom("mod", f"({r.key()})%{c}", 0 if nonneg else -(c - 1), c - 1, laxes(r), ldepth(r), r, c)
    return latom(a)



strides = row_major_strides  # (in elements; a global tensor's own: ``plan.Tensor.strides``)


def loffset(idx, st) -> Lin:
    """The flat offset ``sum(idx[d] * st[d])`` of index ``idx`` (Lins) over strides ``st``."""
    return ladd(*(lscale(x, s) for x, s in zip(idx, st)))


def reshape_groups(src: tuple[int, ...], dst: tuple[int, ...]) -> list[tuple[range, range]]:
    """The dims of a row-major reshape from ``src`` to ``dst`` in groups (source dims, result dims) of equal
    products, cut wherever the two shapes' prefix products meet: each group reshapes on its own. [N, C, H, 2, W, 2]
    -> [N, C, 2H, 2W] is (N)(C)(H, 2 | 2H)(W, 2 | 2W); one group of all the dims where they never meet."""
    groups, i, j = [], 0, 0
    while i < len(src) or j < len(dst):
        i0, j0, a, b = i, j, 1, 1
        while True:  # (unit dims join the group before them, or the first)
            if a <= b and i < len(src):
                a *= src[i]
                i += 1
            elif j < len(dst):
                b *= dst[j]
                j += 1
            else:
                break
            if a == b and (i == len(src) or src[i] != 1) and (j == len(dst) or dst[j] != 1):
                break
        groups.append((range(i0, i), range(j0, j)))
    return groups


def reshape_index(idx: tuple["Lin", ...], src: tuple[int, ...], dst: tuple[int, ...]) -> tuple["Lin", ...]:
    """The source index of a row-major reshape's result index ``idx``: the digits of each group's own flat offset
    (``reshape_groups``), not of the whole tensor's. Equal wherever ``idx`` is in range; beyond it (a window's
    padding, masked) each dim's digits stay in their own group, and a group of one source dim is its index: a
    convolution over a nearest upsampling reads ``X[n, c, y // 2, x // 2]`` instead of digits of the flat
    ``(((n C + c) 2H + y) 2W + x)`` (ten divisions an element)."""
    out: list[Lin] = [lconst(0)] * len(src)
    for gs, gd in reshape_groups(src, dst):
        dshape = [dst[d] for d in gd]
        lin = loffset([idx[d] for d in gd], strides(dshape))
        sshape = [src[d] for d in gs]
        for d, s, n in zip(gs, strides(sshape), sshape):
            out[d] = lconst(0) if n == 1 else lmod(lfloordiv(lin, s), n)
    return tuple(out)


__all__ = ["Atom", "Lin", "lconst", "latom", "ladd", "lscale", "lrange", "laxes", "ldepth", "lfloordiv", "lmod",
           "strides", "loffset", "reshape_groups", "reshape_index"]
