"""Choose a task's template from the roles of its anchor, and its config (tuning database, else heuristic).

The anchor of a task is the op its result comes from through elementwise ops
only (a GEMM with its bias / activation / residual epilogue), or, without such a
contraction, its row reduction. Templates by roles (see ``roles``):

* ``gemm``: a two-factor contraction with K, N and M > 16 rows;
* ``gemv``: the same with at most 16 rows (decode, small batches);
* ``pointwise``: a task without reductions (the evaluator with the task's tile; no config yet);
* ``generic``: everything else (convolutions, gathers, scatters, attention for
  now): the comprehension evaluator with the task's tile.

A template needs the anchor's output to *be* the task's first result up to
elementwise ops (same shape), so that its tile is the result's tile; otherwise
the task stays generic and the reason is recorded (``schedule_note``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kitsune.dialects.graph import GraphOp as GOp
from kitsune.dialects.graph import elem_bytes
from kitsune.dialects.regions import tensor_shape
from kitsune.gpu import GPU, get_gpu
from kitsune.schedule import db as tuning_db
from kitsune.schedule.configs import Config, GenericConfig, Problem, default_config
from kitsune.schedule.roles import Roles, is_contraction, roles_of

GEMV_MAX_M = 16


@dataclass
class Choice:
    template: str
    config: Config
    tile: tuple[int, ...]
    problem: Problem | None
    anchor: GOp | None
    note: str
    source: str  # heuristic | database | task (kept)


def _elementwise(op: GOp) -> bool:
    return op.OPDEF.category == "elementwise" or op.OPDEF.name == "batch_norm"


def anchor_of(task) -> tuple[GOp | None, str]:
    """The op task result #0 comes from through same-shape elementwise ops, or why there is none."""
    y = task.body.blocks.first.last_op
    if not y.operands:
        return None, "no results"
    v = y.operands[0]
    shape = tensor_shape(v.type)
    seen = 0
    while isinstance(v.owner, GOp) and seen < 64:
        op = v.owner
        seen += 1
        if not _elementwise(op):
            return op, ""
        nxt = [o for o in op.operands if tensor_shape(o.type) == shape and isinstance(o.owner, GOp)]
        if not nxt:
            return op, ""
        # follow the operand that is not elementwise itself first (the anchor side)
        nxt.sort(key=lambda o: 0 if not _elementwise(o.owner) else 1)
        v = nxt[0]
    return None, "result #0 is a task argument"


def _downstream_elementwise(task, anchor: GOp) -> bool:
    """Everything the anchor's result flows into inside the task is elementwise (a split reduction may combine
    partial sums before them)."""
    members = set(task.body.blocks.first.ops)
    stack = [anchor.results[0]]
    seen = set()
    while stack:
        v = stack.pop()
        for u in v.uses:
            o = u.operation
            if o in seen or o not in members:
                continue
            seen.add(o)
            if isinstance(o, GOp):
                if not _elementwise(o):
                    return False
                stack += list(o.results)
    return True


def problem_of(task, anchor: GOp, r: Roles) -> tuple[Problem, str] | None:
    """The gemm / gemv problem of a contraction anchor whose output is task result #0's shape."""
    if not is_contraction(r):
        return None
    y = task.body.blocks.first.last_op
    if tensor_shape(y.operands[0].type) != tensor_shape(anchor.results[0].type):
        return None
    M, N, K, B = r.extent("M"), r.extent("N"), r.extent("K"), r.extent("batch")
    if N == 1:
        return None  # a matrix-vector product along the rows: the evaluator's row reduction (no tl.dot)
    eb = max(elem_bytes(o.type) for o in anchor.operands[:2])
    n_contr = sum(1 for o in task.body.blocks.first.ops if isinstance(o, GOp) and o.OPDEF.category == "contraction")
    split_ok = _downstream_elementwise(task, anchor) and n_contr == 1 and len(y.operands) == 1
    template = "gemv" if M <= GEMV_MAX_M else "gemm"
    return Problem(template, M=M, N=N, K=K, batch=B, elem_bytes=eb, split_ok=split_ok), r.summary()


def gemm_tile(r: Roles, template: str, cfg: Config) -> tuple[int, ...] | None:
    """Result tile of a gemm / gemv config: N's dim gets BN, the innermost M dim BM (gemv: every M dim whole),
    batch and outer M dims 1. None when the roles do not sit on the result's dims as the templates need."""
    lhs = r.lhs_vars
    nv, mv = r.vars("N"), r.vars("M")
    if len(nv) != 1 or not lhs or lhs[-1] != nv[0]:
        return None
    tile = []
    for v in lhs:
        role, ext = r.role[v], r.ext[v]
        if v == nv[0]:
            tile.append(min(cfg.BN, ext))
        elif role == "M":
            if template == "gemv":
                tile.append(ext)
            else:
                tile.append(min(cfg.BM, ext) if v == mv[-1] else 1)
        else:
            tile.append(1)
    return tuple(tile)


def sole_contraction(task) -> GOp | None:
    ops = [o for o in task.body.blocks.first.ops if isinstance(o, GOp) and o.OPDEF.category == "contraction"]
    return ops[0] if len(ops) == 1 else None


def sliced_gemv(task, gpu, use_db: bool) -> Choice | None:
    """A skinny contraction whose result reaches the task's first result through layout ops along the last dim
    only (Llama's fused gate/up projection, sliced in two and multiplied): a gemv of the task's result tile,
    each output column reading the contraction at the columns its slices name; no split (the combine would
    need every slice's partial sums)."""
    c = sole_contraction(task)
    r = roles_of(c) if c is not None else None
    if r is None or not is_contraction(r) or r.extent("M") > GEMV_MAX_M:
        return None
    out = tensor_shape(c.results[0].type)
    res = tensor_shape(task.body.blocks.first.last_op.operands[0].type)
    nv = r.vars("N")
    if len(out) != len(res) or out[:-1] != res[:-1] or len(nv) != 1 or r.lhs_vars[-1] != nv[0]:
        return None
    eb = max(elem_bytes(o.type) for o in c.operands[:2])
    p = Problem("gemv", M=r.extent("M"), N=r.extent("N"), K=r.extent("K"), batch=r.extent("batch"), elem_bytes=eb,
                split_ok=False)
    cfg, source = (tuning_db.lookup(p, gpu) if use_db else None), "database"
    if cfg is None or cfg.SPLIT > 1:
        cfg, source = default_config(p, gpu), "heuristic"
    tile = tuple(list(res[:-1]) + [min(cfg.BN, res[-1])])
    return Choice("gemv", cfg, tile, p, c, f"roles {r.summary()}, sliced along N into the result", source)


def choose(task, gpu: GPU | str = "h100", use_db: bool = True, forced: dict | None = None) -> Choice:
    """Template, config and tile of one dataflow task."""
    gpu = get_gpu(gpu)
    tile0 = task.tile_sizes()
    anchor, why = anchor_of(task)
    if anchor is None:
        return Choice("generic", GenericConfig(), tile0, None, None, why, "task")
    r = roles_of(anchor)
    if r is None:
        return Choice("generic", GenericConfig(), tile0, None, anchor, f"'{anchor.name}' has no comprehension",
                      "task")
    got = problem_of(task, anchor, r)
    if got is None:
        sliced = sliced_gemv(task, gpu, use_db)
        if sliced is not None:
            return sliced
        kind = "pointwise" if not any(isinstance(o, GOp) and o.OPDEF.category != "elementwise"
                                      and o.OPDEF.category != "layout" and o.OPDEF.category != "constant"
                                      for o in task.body.blocks.first.ops) else "generic"
        return Choice(kind if kind == "pointwise" else "generic", GenericConfig(), tile0, None, anchor,
                      f"roles {r.summary()}: no template yet for this anchor, the evaluator runs it", "task")
    p, summary = got
    cfg, source = None, "heuristic"
    if forced is not None and forced.get("template") == p.template:
        from kitsune.schedule.configs import config_from
        cfg, source = config_from(p.template, forced), "option"
    if cfg is None and use_db:
        cfg = tuning_db.lookup(p, gpu)
        source = "database" if cfg is not None else source
    if cfg is None:
        cfg = default_config(p, gpu)
    if getattr(cfg, "SPLIT", 1) > 1 and not p.split_ok:
        cfg = default_config(p, gpu)  # a database entry of another task with the same shape and a split
    tile = gemm_tile(r, p.template, cfg)
    if tile is None:
        return Choice("generic", GenericConfig(), tile0, p, anchor,
                      f"roles {summary}: the N dim is not the result's last dim", "task")
    return Choice(p.template, cfg, tile, p, anchor, f"roles {summary}", source)


__all__ = ["Choice", "choose", "anchor_of", "problem_of", "gemm_tile", "sliced_gemv", "sole_contraction"]
