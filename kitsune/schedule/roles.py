"""Roles of an anchor comprehension's index variables: what a schedule template is chosen from.

A task's *anchor* is the op that decides its loop structure (a contraction, a
gather, a reduction). Its comprehension statement names every index variable; the
role of each follows from where it appears, never from the op's name:

* ``M``: on the left side and in the first factor only (rows of the result);
* ``N``: on the left side and in the second factor only (columns);
* ``batch``: on the left side and in both factors;
* ``K``: a reduction variable (right side only) indexing both factors plainly;
* ``window``: a variable in an affine index together with another variable
  (``oh*$s0 + kh``: both ``oh`` and ``kh``; convolutions and pools);
* ``gather``: inside an indirect index on the right (``W[I[b, l], e]``);
* ``scatter``: inside an indirect index on the left (``Y[I[j], d] += ...``);
* ``R``: any other reduction variable (a row reduction's reduced dims);
* ``P``: any other left-side variable (a pointwise / row dimension).

``matmul``, ``linear`` and ``bmm`` all read as M/N/K(/batch); a convolution as
M/N/K plus windows; embedding bags as gathers; ``index_add`` as a scatter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from kitsune.semantics import optable
from kitsune.semantics.comprehension import Access, Affine, BinOp, Indirect, Num, parse

ROLES = ("M", "N", "K", "batch", "window", "gather", "scatter", "R", "P")


@dataclass
class Roles:
    """The roles of one statement of one op's comprehension."""

    op: object  # the graph op
    stmt: int  # index of the statement in the op's program
    text: str  # the statement, for messages
    reduce_op: str  # = += max= ...
    role: dict[str, str]  # index variable -> role
    ext: dict[str, int]  # index variable -> extent
    factors: tuple[Access, ...] = ()  # the contraction's two factors (first = the M side)
    lhs_vars: tuple[str, ...] = ()
    program: object = None
    bound: object = None
    notes: list[str] = field(default_factory=list)

    def vars(self, role: str) -> list[str]:
        return [v for v, r in self.role.items() if r == role]

    def extent(self, role: str) -> int:
        return math.prod(self.ext[v] for v in self.vars(role)) if self.vars(role) else 1

    def has(self, role: str) -> bool:
        return any(r == role for r in self.role.values())

    def summary(self) -> str:
        parts = []
        for r in ROLES:
            vs = self.vars(r)
            if vs:
                parts.append(f"{r}={'*'.join(vs)}:{self.extent(r)}")
        return " ".join(parts)


def _factors(e) -> list | None:
    if isinstance(e, BinOp) and e.op == "*":
        a, b = _factors(e.lhs), _factors(e.rhs)
        return None if a is None or b is None else a + b
    if isinstance(e, (Access, Num)):
        return [e]
    return None


def _index_vars(acc: Access) -> tuple[set[str], set[str], set[str]]:
    """(plain vars, vars in multi-variable affine indices, vars under an indirect index) of one access."""
    plain, window, indirect = set(), set(), set()
    for ix in acc.indices:
        if isinstance(ix, Indirect):
            for v in ix.vars:
                indirect.add(v)
            continue
        if isinstance(ix, Affine):
            vs = [v for v, _ in ix.terms]
            if len(vs) > 1:
                window |= set(vs)
            else:
                plain |= set(vs)
    return plain, window, indirect


def op_program(op):
    """(instance, bound, parsed program) of a graph op's comprehension, or None (reshape, constant)."""
    from kitsune.dialects.regions import tensor_shape

    od = op.OPDEF
    if od.name in ("reshape", "constant"):
        return None
    shapes = [tensor_shape(o.type) for o in op.operands]
    try:
        inst, bound = optable.instantiate(od, shapes, op.attrs())
    except optable.OpError:
        return None
    return inst, bound, parse(inst.text, inst.params)


def roles_of(op, stmt: int | None = None) -> Roles | None:
    """The roles of ``op``'s main statement (the first reduction, else the last statement)."""
    got = op_program(op)
    if got is None:
        return None
    inst, bound, prog = got
    if stmt is None:
        red = [i for i, s in enumerate(prog.stmts) if s.op != "="]
        stmt = red[0] if red else len(prog.stmts) - 1
    s = prog.stmts[stmt]
    ext = dict(bound.extents[stmt])
    lhs_plain, lhs_window, lhs_indirect = _index_vars(s.lhs)
    role: dict[str, str] = {}
    for v in lhs_indirect:
        role[v] = "scatter"
    accs = s.accesses()
    facs = _factors(s.rhs) if s.op == "+=" else None
    fac_accs = tuple(f for f in (facs or []) if isinstance(f, Access))
    win, ind = set(lhs_window), set()
    for a in accs:
        _, w, i = _index_vars(a)
        win |= w
        ind |= i
    for v in ind:
        role.setdefault(v, "gather")
    for v in win:
        role.setdefault(v, "window")
    lhs = set(s.lhs.vars)
    if len(fac_accs) == 2:
        va, vb = set(fac_accs[0].vars), set(fac_accs[1].vars)
        for v in s.all_vars:
            if v in role:
                continue
            if v in lhs:
                role[v] = "batch" if (v in va and v in vb) else ("M" if v in va else ("N" if v in vb else "P"))
            else:
                role[v] = "K" if (v in va and v in vb) else "R"
    else:
        for v in s.all_vars:
            if v not in role:
                role[v] = "P" if v in lhs else "R"
    ordered = {v: role[v] for v in s.all_vars if v in role}
    return Roles(op, stmt, f"{s.lhs} {s.op} ...", s.op, ordered, {v: int(ext.get(v, 1)) for v in ordered},
                 fac_accs, tuple(s.lhs.vars), prog, bound)


def is_contraction(r: Roles) -> bool:
    """A plain two-factor product summed over K, with rows and columns: what gemm / gemv compute."""
    return (r.reduce_op == "+=" and len(r.factors) == 2 and r.has("K") and r.has("N")
            and not (r.has("window") or r.has("gather") or r.has("scatter") or r.has("R")))


__all__ = ["Roles", "roles_of", "op_program", "is_contraction", "ROLES"]
