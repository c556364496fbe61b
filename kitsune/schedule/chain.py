"""Chain form: a task that runs several weight GEMMs one after another on the same rows (a *chain task*).

A task is in chain form when its contractions, in program order, are ``layer 0 .. layer L-1`` such that

* each is a plain two-factor product summed over K (roles M / N / K, ``is_contraction``) whose second factor
  (the N side) is a 2-D tensor read from memory (a block argument of the task: a weight), indexed by its N
  and K variables alone, either ``[n, k]`` (``linear``, ``matmul`` with ``transpose_b``) or ``[k, n]``;
* its first factor (the row operand ``a``, ``[rows..., K]``) is computed from memory and the previous
  layer's result only (layer 0: from memory only), through ops that keep the last dim apart: elementwise
  ops and concatenations along the last dim (a skip connection is a concat with a task input);
* every intermediate result is at most ``max_width`` wide (it lives in registers as the next layer's A
  operand, in segments) and has the rows of the task's result;
* what follows the last layer is elementwise or layout, or, when the last layer is at most ``max_width`` wide
  (then computed as one segment, whatever the other layers' segments), any row-wise op the evaluator computes
  over that segment (a norm).

The chain template (``kitsune.codegen.triton_gen.templates.chain``) then runs a tile of rows through every
layer: intermediates never leave the SM, each layer's weights stream from L2. ``kitsune-form-regions`` forms
such tasks (``chain_eligible``), ``kitsune-choose-schedules`` gives them the ``chain`` template.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Block, SSAValue

from kitsune.dialects.graph import GraphOp as GOp
from kitsune.dialects.graph import is_last_dim_concat
from kitsune.dialects.regions import tensor_shape
from kitsune.dialects.scattered_results import scatter_source
from kitsune.semantics.comprehension import Affine

CHAIN_MAX_WIDTH = 256  # widest intermediate (bf16 [128, 256] = 64 registers per thread at 8 warps)
CHAIN_SEG = 128  # default segment width (the N of one tl.dot)


@dataclass(frozen=True)
class ChainLayer:
    op: GOp  # the contraction
    red: str  # the tensor its reduction statement writes (the evaluator's memo key for the product)
    a: SSAValue  # the row operand [rows..., K]
    w: SSAValue  # the weight (a task / stage block argument)
    w_nk: bool  # the weight is indexed [n, k] (else [k, n])
    K: int
    N: int


@dataclass(frozen=True)
class ChainForm:
    layers: tuple[ChainLayer, ...]
    rows: tuple[int, ...]  # the leading (row) dims shared by every layer's result
    row_epilogue: bool = False  # a row-wise op follows the last layer: its result must be one segment

    @property
    def width(self) -> int:
        return max(l.N for l in self.layers[:-1]) if len(self.layers) > 1 else 0


def _plain_var(ix) -> str | None:
    if isinstance(ix, Affine) and len(ix.terms) == 1 and ix.terms[0][1] == 1 and not ix.const:
        return ix.terms[0][0]
    return None


def weight_layer(op: GOp) -> ChainLayer | None:
    """``op`` as a chain layer: a row operand times a 2-D weight read from memory, else None."""
    from kitsune.schedule.roles import is_contraction, roles_of
    from kitsune.schedule.select import op_program_inputs

    if op.OPDEF.category != "contraction":
        return None
    r = roles_of(op)
    if r is None or not is_contraction(r) or r.has("batch") or len(r.vars("K")) != 1 or len(r.vars("N")) != 1:
        return None
    inputs = op_program_inputs(op)
    A, B = r.factors
    if inputs is None or A.tensor not in inputs or B.tensor not in inputs:
        return None
    a, w = op.operands[inputs[A.tensor]], op.operands[inputs[B.tensor]]
    if not isinstance(w.owner, Block) or len(tensor_shape(w.type)) != 2:
        return None
    kv, nv = r.vars("K")[0], r.vars("N")[0]
    bvars = [_plain_var(ix) for ix in B.indices]
    if bvars == [nv, kv]:
        w_nk = True
    elif bvars == [kv, nv]:
        w_nk = False
    else:
        return None
    avars = [_plain_var(ix) for ix in A.indices]
    ashape, yshape = tensor_shape(a.type), tensor_shape(op.results[0].type)
    if not avars or avars[-1] != kv or any(v is None or r.role.get(v) != "M" for v in avars[:-1]) \
            or tuple(ashape[:-1]) != tuple(yshape[:-1]) or yshape[-1] != r.extent("N"):
        return None
    red = r.program.stmts[r.stmt].lhs.tensor
    return ChainLayer(op, red, a, w, w_nk, r.extent("K"), r.extent("N"))


def _contractions_behind(v: SSAValue, members: set, stop: dict) -> set:
    """The contractions among ``members`` that ``v`` is computed from (stopping at them), or None when the
    path from one of them passes an op that mixes the last dim (neither elementwise nor a last-dim concat). A
    value computed from memory alone (no contraction behind it: a gather of rows by an index, a slice of a task
    input) may be anything the evaluator computes at an index: it is loaded next to the segment that reads it."""
    out, stack, seen = set(), [v], set()
    while stack:
        x = stack.pop()
        o = x.owner
        if not isinstance(o, GOp) or o not in members or id(x) in seen:
            continue
        seen.add(id(x))
        if o in stop:
            out.add(o)
            continue
        if not segment_preserving(o):
            if any(b in stop for b in _all_behind(x, members)):
                return None
            continue
        stack += list(o.operands)
    return out


def segment_preserving(op: GOp) -> bool:
    """``op`` computes each column of its result from the same column of its operands (elementwise, with
    broadcasting) or concatenates along the last dim: a value in column segments stays in segments."""
    cat = op.OPDEF.category
    if cat in ("elementwise", "constant"):
        return True
    if op.OPDEF.name == "concat":
        return is_last_dim_concat(op)
    if op.OPDEF.name == "cast":
        return True
    return False


def chain_form(block: Block, seg: int = CHAIN_SEG, max_width: int = CHAIN_MAX_WIDTH,
               results: list[SSAValue] | None = None) -> ChainForm | None:
    """The chain form of a task's (or stage's) body, or None (see the module docstring). ``results``: the values
    the body yields (default: its terminator's operands)."""
    ops = [o for o in block.ops if isinstance(o, GOp)]
    contr = [o for o in ops if o.OPDEF.category == "contraction"]
    if len(contr) < 2:
        return None
    layers = []
    for op in contr:
        lay = weight_layer(op)
        if lay is None:
            return None
        layers.append(lay)
    members = set(ops)
    stop = {l.op: i for i, l in enumerate(layers)}
    rows = tuple(tensor_shape(layers[0].op.results[0].type)[:-1])
    for i, lay in enumerate(layers):
        if tuple(tensor_shape(lay.op.results[0].type)[:-1]) != rows:
            return None
        if i + 1 < len(layers) and lay.N > max_width:
            return None
        behind = _contractions_behind(lay.a, members, stop) if i else None
        if i == 0:
            # layer 0's row operand: anything the evaluator computes from memory (a prologue), but no contraction
            if any(o in stop for o in _all_behind(lay.a, members)):
                return None
            continue
        if behind is None or behind != {layers[i - 1].op}:
            return None
        # the previous layer's result (and what is derived from it) is read by this layer's operand only
        for o in _all_behind(lay.a, members):
            if o in stop:
                continue
            for r in o.results:
                if any(u.operation not in members for u in r.uses):
                    return None
    for r in layers[-2].op.results:
        if any(u.operation not in members for u in r.uses):
            return None
    # after the last layer: segment-preserving ops, or anything on a single segment
    last = layers[-1]
    after = [o for o in ops if o not in _all_behind(last.a, members) and o is not last.op
             and last.op in _all_behind_ops(o, members)]
    row_epilogue = any(not segment_preserving(o) for o in after)
    if row_epilogue and last.N > max(seg, max_width):  # (its row in one segment, whatever the others')
        return None
    # every result of the task comes from the last layer: its rows, or a zero-started scatter-accumulate of them
    # (kitsune.dialects.scattered_results: each tile adds its rows at the rows an index gives them)
    for v in (results if results is not None else list(block.last_op.operands)):
        if last.op not in _all_behind(v, members):
            return None
        if tuple(tensor_shape(v.type)[:-1]) != rows:
            src = scatter_source(v.owner)
            if src is None or tuple(tensor_shape(src.type)[:-1]) != rows:
                return None
    return ChainForm(tuple(layers), rows, row_epilogue)


def _all_behind(v: SSAValue, members: set) -> set:
    """Every member op ``v`` is computed from (``v``'s own op included)."""
    out, stack = set(), [v]
    while stack:
        x = stack.pop()
        o = x.owner
        if isinstance(o, GOp) and o in members and o not in out:
            out.add(o)
            stack += list(o.operands)
    return out


def _all_behind_ops(op: GOp, members: set) -> set:
    out = set()
    for v in op.operands:
        out |= _all_behind(v, members)
    return out


__all__ = ["ChainForm", "ChainLayer", "chain_form", "weight_layer", "segment_preserving", "CHAIN_MAX_WIDTH",
           "CHAIN_SEG"]
