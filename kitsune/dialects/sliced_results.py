"""Results that are slices of their task's domain.

A task computes its results tile by tile over the shape of its first result (its *domain*). A further result
may be a slice of that domain: ``relu(y[:, 64:160])`` next to ``relu(y[:, :64])`` where ``y`` is the task's
anchor, a convolution whose weights are its siblings' concatenated (``kitsune-merge-siblings``). Such a
result is written from the domain's own tiles: each tile stores the part of it that falls inside the slice,
at the index shifted by the slice's start (``kitsune.codegen.triton_gen.stage``), so the anchor is computed
once for all its slices and nothing is recomputed per slice.

``slice_offsets`` finds the shift: the result must be computed from slices (step 1, any dims) of the domain
value by ops that keep the index (elementwise ops and inference batch norms, ``OpDef.keeps_index``, whose
result has the slice's shape), and every path from the domain to it must cross slices of the same starts.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from kitsune.dialects.regions import tensor_shape


def _slice_start(op) -> tuple[int, int] | None:
    """(dim, start) of a ``graph.slice`` of step 1, else None."""
    from kitsune.semantics.optable import _norm_dim, _slice_params

    if getattr(op, "name", None) != "graph.slice":
        return None
    a = op.attrs()
    shape = tensor_shape(op.operands[0].type)
    if any(d < 0 for d in shape):
        return None
    start, _, step = _slice_params(shape[_norm_dim(a["dim"], len(shape))], a)
    return (_norm_dim(a["dim"], len(shape)), start) if step == 1 else None


def slice_offsets(v: SSAValue, domain: SSAValue) -> tuple[int, ...] | None:
    """Per dim, where result ``v`` starts inside ``domain`` when ``v`` is a slice of it (see the module doc);
    None when it is not one (or is ``domain`` itself, or its rank differs)."""
    from kitsune.dialects.graph import GraphOp

    dshape, vshape = tensor_shape(domain.type), tensor_shape(v.type)
    if v is domain or len(dshape) != len(vshape) or any(d < 0 for d in dshape):
        return None
    memo: dict[SSAValue, object] = {}
    NONE, FREE = "none", "free"  # not a slice of the domain; independent of the domain

    def off(x: SSAValue):
        if x in memo:
            return memo[x]
        memo[x] = NONE  # (no cycles in SSA; guards against a re-entry while computing)
        if x is domain:
            r = (0,) * len(dshape) if tensor_shape(x.type) == vshape else NONE
            memo[x] = r
            return r
        op = x.owner
        if not isinstance(op, GraphOp):
            memo[x] = FREE
            return FREE
        sl = _slice_start(op)
        if sl is not None:
            inner = off(op.operands[0]) if op.operands[0] is not domain else (0,) * len(dshape)
            if inner == FREE:
                r = FREE
            elif inner == NONE or len(inner) != len(dshape):
                r = NONE
            else:
                d, s = sl
                r = tuple(o + (s if i == d else 0) for i, o in enumerate(inner))
            memo[x] = r
            return r
        parts = [(o, off(o)) for o in op.operands]
        dep = [p for _, p in parts if p != FREE]
        if not dep:
            r = FREE
        elif not op.OPDEF.keeps_index or tensor_shape(x.type) != vshape or any(p == NONE for p in dep) \
                or len(set(dep)) != 1 or any(p != FREE and tensor_shape(o.type) != vshape for o, p in parts):
            r = NONE
        else:
            r = dep[0]
        memo[x] = r
        return r

    r = off(v)
    if r in (NONE, FREE) or not isinstance(r, tuple):
        return None
    if any(o < 0 or o + n > d for o, n, d in zip(r, vshape, dshape)) or r == (0,) * len(dshape) and vshape == dshape:
        return None
    return r


def sliced_domain(results: Sequence[SSAValue], candidates: Sequence[SSAValue]) -> SSAValue | None:
    """The value among ``candidates`` of which every one of ``results`` is a slice (``slice_offsets``), when
    there is exactly one such value and it is none of the results."""
    found = [c for c in candidates if c not in results and all(slice_offsets(r, c) is not None for r in results)]
    return found[0] if len(found) == 1 else None


__all__ = ["slice_offsets", "sliced_domain"]
