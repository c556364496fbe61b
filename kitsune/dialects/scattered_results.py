"""Results that are scatter-accumulates of their task's domain rows (``kitsune-fuse-scatters``).

A task computes its results tile by tile over the shape of its first result (its *domain*). A further result may
be ``index_add(0, I, S)`` (zeros, a dim, an index tensor, source rows ``S``) whose source ``S`` has the domain's
shape, indexed by the domain's own variables: each tile adds its rows of ``S`` into the result at the rows
``I`` gives them, with atomics (``kitsune.codegen.triton_gen.templates.scatter.scatter_store``), so the result is
written by every tile in part and needs no tiles of its own; its buffer starts from zero.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from kitsune.dialects.regions import tensor_shape


def scatter_source(op) -> SSAValue | None:
    """The source rows ``S`` of a zero-started scatter-accumulate ``op`` (``index_add``) that reads ``S`` at its
    own plain variables (``Y[I[j], d] += S[j, d]``), else None."""
    from kitsune.dialects.graph import GraphOp
    from kitsune.schedule.select import _zero_constant, op_program_inputs, scatter_form
    from kitsune.semantics.comprehension import Access, Affine

    if not isinstance(op, GraphOp):
        return None
    form = scatter_form(op)
    if form is None or not _zero_constant(form[1]):
        return None
    roles, _ = form
    rhs = roles.program.stmts[roles.stmt].rhs
    inputs = op_program_inputs(op) or {}
    if not isinstance(rhs, Access) or rhs.tensor not in inputs:
        return None
    if not all(isinstance(ix, Affine) and len(ix.terms) == 1 and ix.terms[0][1] == 1 and not ix.const
               for ix in rhs.indices):
        return None
    return op.operands[inputs[rhs.tensor]]


def scattered(v: SSAValue, domain: SSAValue) -> bool:
    """``v`` is a zero-started scatter-accumulate whose source rows have the shape of ``domain`` (see the
    module doc)."""
    src = scatter_source(v.owner)
    return src is not None and v is not domain and tensor_shape(src.type) == tensor_shape(domain.type)


__all__ = ["scatter_source", "scattered"]
