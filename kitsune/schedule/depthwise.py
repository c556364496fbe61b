"""The depthwise form of a window contraction, read off its comprehension (never its op's name).

A contraction ``P[.., oh, ow] += X[.., oh*s + kh*e - p, ow + kw - q] * F[..]`` is *depthwise* when every output
element reads one input row band of one channel: apart from the window variables (``kh`` next to the output
row ``oh``, ``kw`` next to the output column ``ow``), every reduction variable has extent one (a grouped
convolution with one input channel a group), and the filter ``F`` reads neither output coordinate. ConvNeXt's
7 x 7 and MobileNet's 3 x 3 depthwise convolutions are such. So is a *pool* of column stride 2 or more
(``P[.., oh, ow] max= X[..]``, or ``+=`` of the input alone): no filter (``w`` None), the window's max or sum
(ResNet's 3 x 3 stride-2 max pool); a stride-1 pool keeps the evaluator's separable form (Inception's).

Along the columns the window must be dense (dilation one: ``ow*s + kw - q``): then ``V`` adjacent outputs of a
row read ``s*(V - 1) + KW`` adjacent inputs, which the ``depthwise`` template loads as aligned ``s*V``-vectors and
combines in registers (``kitsune.codegen.triton_gen.templates.depthwise``). Rows may be strided or dilated (each
output row reads its own input rows).
"""

from __future__ import annotations

from dataclasses import dataclass

from kitsune.semantics.comprehension import Access, Affine


@dataclass(frozen=True)
class DepthwiseForm:
    stmt: int  # the reduction statement of the op's program
    x: Access  # the windowed input read (the first factor)
    w: Access | None  # the filter read (the second factor); None: a pool
    row: str  # the output's row variable (its second last left-side index)
    col: str  # the output's column variable (its last left-side index)
    krow: str  # the window variable beside ``row`` in the input's row index
    kcol: str  # the window variable beside ``col`` in the input's column index
    col_pad: int  # q: the input column is ``col * col_stride + kcol - col_pad``
    krows: int  # the window's extents
    kcols: int
    col_stride: int = 1
    reduce: str = "+="  # the reduction: "+=" (a sum of products, or a pool's sum), "max=" (a max pool)

    def blocks(self, v: int) -> tuple[int, int]:
        """(first, last) input vector of ``s * v`` columns (``s`` the column stride), relative to the input
        column ``s * c`` of a strip of ``v`` outputs starting at output column ``c``, that the strip's window
        reads: its output ``o`` reads input columns ``s * o + kw - col_pad`` from there."""
        sv = self.col_stride * v
        return (-self.col_pad) // sv, (self.col_stride * (v - 1) + self.kcols - 1 - self.col_pad) // sv


def depthwise_form(op) -> DepthwiseForm | None:
    """``op``'s depthwise form (module docstring), or None."""
    from kitsune.schedule.roles import roles_of

    r = roles_of(op)
    if r is None or not r.has("window"):
        return None
    prog, bound = r.program, r.bound
    s = prog.stmts[r.stmt]
    if r.reduce_op == "+=" and len(r.factors) == 2:
        x, w = r.factors
    elif r.reduce_op in ("+=", "max=") and isinstance(s.rhs, Access):
        x, w = s.rhs, None  # a pool
    else:
        return None
    if len(s.lhs.indices) < 3 or len(x.indices) < 3 or not all(isinstance(ix, Affine) for ix in s.lhs.indices):
        return None
    row, col = s.lhs.indices[-2].plain_var(), s.lhs.indices[-1].plain_var()
    if row is None or col is None:
        return None
    lhs = set(s.lhs.vars)
    reduce_vars = [v for v in s.all_vars if v not in lhs]
    xr, xc = x.indices[-2], x.indices[-1]
    if not isinstance(xr, Affine) or not isinstance(xc, Affine):
        return None
    tc, tr = dict(xc.terms), dict(xr.terms)
    kcol = next((v for v in tc if v != col), None)
    krow = next((v for v in tr if v != row), None)
    if (kcol is None or krow is None or len(tc) != 2 or len(tr) != 2 or tc.get(col, 0) < 1 or tc[kcol] != 1
            or kcol not in reduce_vars or krow not in reduce_vars or kcol == krow or tr.get(row, 0) < 1
            or tr[krow] < 1):
        return None
    ext = bound.extents[r.stmt]
    if any(int(ext.get(v, 1)) != 1 for v in reduce_vars if v not in (kcol, krow)):
        return None  # several input channels an output: a convolution's implicit GEMM, not this
    if any(not isinstance(ix, Affine) or row in ix.vars or col in ix.vars or krow in ix.vars or kcol in ix.vars
           for ix in x.indices[:-2]):
        return None
    if w is not None and any(not isinstance(ix, Affine) or row in ix.vars or col in ix.vars for ix in w.indices):
        return None
    if w is None and int(tc[col]) < 2:
        return None  # (a stride-1 pool: the evaluator's separable form, measured on Inception)
    return DepthwiseForm(r.stmt, x, w, row, col, krow, kcol, -xc.const, int(ext[krow]), int(ext[kcol]),
                         int(tc[col]), r.reduce_op)


def strip_width(in_cols: int, out_cols: int, stride: int = 1) -> int:
    """Outputs a lane computes: the largest power of two V up to 8 that divides the output row and whose input
    vectors (``stride * V`` columns, at most 8: one 16-byte load at bf16) divide the input row, so that every
    strip of the output and every vector of the input starts aligned in a row-major tensor. (16-column vectors
    at stride 2 went through shared memory to be split: MobileNetV2's 112 -> 56, ptxas on sm_90.)"""
    v = 8
    while v > 1 and (out_cols % v or in_cols % (stride * v) or stride * v > 8):
        v //= 2
    return v


__all__ = ["DepthwiseForm", "depthwise_form", "strip_width"]
