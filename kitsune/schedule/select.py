"""Choose a task's template from the roles of its anchor, and its config (tuning database, else heuristic).

The anchor of a task is the op its result comes from through elementwise ops
only (a GEMM with its bias / activation / residual epilogue), or, without such a
contraction, its row reduction. Templates by roles (see ``roles``):

* ``gemm``: a two-factor contraction with K, N and M > 16 rows;
* ``gemv``: the same with at most 16 rows (decode, small batches);
* ``scatter``: a scatter-accumulate ``Y[.., I[j], .., d] += f(j, d)`` whose other statement
  copies a zero tensor (``index_add`` into zeros; ``kitsune-materialize`` gives every
  scatter a task of its own and moves a non-zero start into the consumer): pushed from the
  source with atomics, the grid over source rows;
* ``conv``: a convolution (M / N / K / window roles): implicit GEMM over output rows, the
  evaluator's window reads as one tl.dot operand (``conv_choice``);
* ``depthwise``: a window contraction with one input row band an output (``kitsune.schedule.depthwise``,
  ``depthwise_choice``): bands of whole output rows, each lane a strip of adjacent outputs of a row;
* ``pointwise``: a task without reductions (the evaluator with the task's tile; no config yet; an input read
  through a transposing permute tiles it along both layouts, ``transposed_tile``);
* ``generic``: everything else (convolutions, gathers, attention for now): the
  comprehension evaluator with the task's tile, its leading dims cut until the grid
  fills the GPU (``fill_tile``).

A template needs the anchor's output to *be* the task's first result up to
elementwise ops (same shape), so that its tile is the result's tile; otherwise
the task stays generic and the reason is recorded (``schedule_note``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from xdsl.ir import BlockArgument

from kitsune.dialects.graph import GraphOp as GOp
from kitsune.dialects.graph import elem_bytes
from kitsune.dialects.regions import grid_of, tensor_shape
from kitsune.dialects.values import constant_value
from kitsune.gpu import GPU, get_gpu
from kitsune.schedule import db as tuning_db
from kitsune.schedule.configs import Config, GenericConfig, Problem, _pow2_ge, batched_small, default_config
from kitsune.schedule.roles import Roles, is_contraction, op_program, roles_of

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
    return op.OPDEF.keeps_index


def unit_reshape(op) -> bool:
    """A reshape that only adds or drops dims of one (``[200, n] -> [1, 200, n]``: kitsune-flatten-rows' exit)."""
    if not isinstance(op, GOp) or op.OPDEF.name != "reshape":
        return False
    a, b = tensor_shape(op.operands[0].type), tensor_shape(op.results[0].type)
    return [d for d in a if d != 1] == [d for d in b if d != 1]


def anchor_of(task) -> tuple[GOp | None, str]:
    """The op task result #0 comes from through same-shape elementwise ops (and a last reshape that only adds
    or drops unit dims: ``choose`` maps the tile), or why there is none."""
    y = task.body.blocks.first.last_op
    if not y.operands:
        return None, "no results"
    v = y.operands[0]
    if unit_reshape(v.owner):
        v = v.owner.operands[0]
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
        # follow the anchor side: an operand that is not elementwise itself first, but elementwise ops over a
        # contraction before a gather (a GEMM's epilogue adding gathered rows: the GEMM is the anchor)
        nxt.sort(key=lambda o: _anchor_rank(o, shape))
        v = nxt[0]
    return None, "result #0 is a task argument"


def _anchor_rank(v, shape) -> int:
    """Which operand ``anchor_of`` follows first (lowest): 0 an op that is neither elementwise nor a gather,
    1 elementwise ops over a contraction, 2 a gather or a reshape of a task input, 3 other elementwise ops."""
    op = v.owner
    if not _elementwise(op):
        if op.OPDEF.category == "layout" and op.OPDEF.name == "reshape" and isinstance(op.operands[0], BlockArgument):
            return 2  # a task input viewed (its rows regrouped, ``kitsune-flatten-rows``): read as it is
        return 2 if op.OPDEF.category == "gather" else 0
    return 1 if _contraction_behind(v, shape) else 3


def _contraction_behind(v, shape, depth: int = 16) -> bool:
    """A contraction of result shape ``shape`` is behind ``v`` through same-shape elementwise ops."""
    op = v.owner
    if not isinstance(op, GOp) or depth == 0:
        return False
    if op.OPDEF.category == "contraction":
        return tensor_shape(op.results[0].type) == shape
    return _elementwise(op) and any(tensor_shape(o.type) == shape and _contraction_behind(o, shape, depth - 1)
                                    for o in op.operands)


def _ops_downstream(task, v):
    """The graph ops of ``task`` that ``v`` flows into, directly or through other ops of the task."""
    members = set(task.body.blocks.first.ops)
    stack, seen = [v], set()
    while stack:
        for u in stack.pop().uses:
            o = u.operation
            if o in seen or o not in members or not isinstance(o, GOp):
                continue
            seen.add(o)
            yield o
            stack += list(o.results)


def _downstream_elementwise(task, anchor: GOp) -> bool:
    """Everything the anchor's result flows into inside the task is elementwise (a split reduction may combine
    partial sums before them)."""
    return all(_elementwise(o) for o in _ops_downstream(task, anchor.results[0]))


def _all_after(task, anchor: GOp) -> bool:
    """Every result of the task is computed from the anchor's result (so a split reduction's last part stores
    them all in its epilogue; a result that does not need the sum would be stored by every part)."""
    y = task.body.blocks.first.last_op
    after = {anchor.results[0]}
    for o in task.body.blocks.first.ops:
        if any(v in after for v in o.operands):
            after |= set(o.results)
    return all(v in after for v in y.operands)


ROW_EPILOGUE_MAX = 256
"""Widest row a norm in a gemm template's epilogue normalises (the template's widest BN)."""


def _row_ops_over(task, contraction: GOp | None) -> list[GOp]:
    """The row-wise ops of ``task`` (norms, softmax, row reductions) computed from ``contraction``'s result."""
    if contraction is None:
        return []
    from kitsune.passes.form_regions import row_wise

    return [o for o in _ops_downstream(task, contraction.results[0]) if row_wise(o)]


def row_epilogue_contraction(op: GOp) -> GOp | None:
    """The contraction whose result ``op`` normalises row by row (a LayerNorm / RMSNorm over the last dim, a
    softmax along it), through same-shape elementwise ops (bias, activation), when the row is a power of two
    of 16 .. ``ROW_EPILOGUE_MAX``: one gemm tile then spans the row and the norm runs in its epilogue."""
    from kitsune.passes.form_regions import last_dim_row_op

    if op.OPDEF.name not in ("layer_norm", "rms_norm", "softmax", "log_softmax") or not last_dim_row_op(op):
        return None
    shape = tensor_shape(op.operands[0].type)
    n = shape[-1] if shape else 0
    if n < 16 or n > ROW_EPILOGUE_MAX or n & (n - 1) or tensor_shape(op.results[0].type) != shape:
        return None
    v = op.operands[0]
    for _ in range(16):
        o = v.owner
        if not isinstance(o, GOp):
            return None
        if o.OPDEF.category == "contraction":
            return o if tensor_shape(o.results[0].type) == shape else None
        if not _elementwise(o):
            return None
        nxt = [x for x in o.operands if tensor_shape(x.type) == shape and _contraction_behind(x, shape)]
        if not nxt:
            return None
        v = nxt[0]
    return None


def problem_of(task, anchor: GOp, r: Roles, row: int = 0) -> tuple[Problem, str] | None:
    """The gemm / gemv problem of a contraction anchor whose output is task result #0's shape (``row``: a norm
    over rows of that many columns follows in the epilogue, ``row_epilogue_contraction``: gemm only, the tile
    spans the row, no split)."""
    if not is_contraction(r):
        return None
    y = task.body.blocks.first.last_op
    res, out = tensor_shape(y.operands[0].type), tensor_shape(anchor.results[0].type)
    if [d for d in res if d != 1] != [d for d in out if d != 1] or res != out and not unit_reshape(y.operands[0].owner):
        return None  # (the same shape, or a last reshape that adds or drops unit dims: ``anchor_of``)
    M, N, K, B = r.extent("M"), r.extent("N"), r.extent("K"), r.extent("batch")
    if N == 1:
        return None  # a matrix-vector product along the rows: the evaluator's row reduction (no tl.dot)
    eb = max(elem_bytes(o.type) for o in anchor.operands[:2])
    n_contr = sum(1 for o in task.body.blocks.first.ops if isinstance(o, GOp) and o.OPDEF.category == "contraction")
    split_ok = _downstream_elementwise(task, anchor) and n_contr == 1 and _all_after(task, anchor)
    template = "gemv" if M <= GEMV_MAX_M else "gemm"
    if batched_small(Problem("gemm", M=M, N=N, K=K, batch=B)):
        template, split_ok = "gemm", False  # whole small matrices, several batch entries per tile
    if row:
        if template != "gemm" or B != 1 or N != row or batched_small(Problem("gemm", M=M, N=N, K=K, batch=B)):
            return None
        return (Problem("gemm", M=M, N=N, K=K, batch=B, elem_bytes=eb, row=row, split_ok=False),
                f"{r.summary()}, a norm over rows of {row} in the epilogue")
    return Problem(template, M=M, N=N, K=K, batch=B, elem_bytes=eb, split_ok=split_ok), r.summary()


def _zero_constant(v) -> bool:
    op = v.owner
    if not isinstance(op, GOp) or op.OPDEF.name != "constant":
        return False
    attr = op.attributes.get("value") or op.properties.get("value")
    try:
        arr = constant_value(attr)
    except Exception:  # noqa: BLE001 - not a dense constant: not a zero start
        return False
    return arr.size > 0 and not arr.any()


def scatter_form(op: GOp, assign: bool = False) -> tuple[Roles, object] | None:
    """(roles, the start operand) of an op whose program is ``Y[D] = X[D]; Y[..I[j]..] += f`` with the
    scatter's other indices plain variables and the last index plain (index_add), or every index scattered
    (``index_add`` into a vector: a graph's degree count): what the scatter template pushes; None for anything
    else. ``assign``: ``Y[..I[j]..] = f`` of an op marked ``in_place`` instead (an
    ``index_copy`` into a buffer's own storage, ``kitsune-inplace-updates``): the template stores the slices."""
    from kitsune.semantics.comprehension import Access, Affine, Indirect

    if assign and not op.attrs().get("in_place"):
        return None
    r = roles_of(op)
    if r is None or r.reduce_op != ("=" if assign else "+=") or not r.has("scatter") or r.has("R") \
            or r.has("gather"):
        return None
    stmts = r.program.stmts
    if len(stmts) != 2 or r.stmt != 1 or stmts[0].op != "=":
        return None
    init, sc = stmts
    if not isinstance(init.rhs, Access) or init.rhs.tensor != "X" or init.lhs.tensor != sc.lhs.tensor:
        return None
    for ix in sc.lhs.indices:
        if isinstance(ix, Indirect):
            continue
        if not (isinstance(ix, Affine) and len(ix.terms) == 1 and ix.terms[0][1] == 1 and not ix.const):
            return None
    if isinstance(sc.lhs.indices[-1], Indirect) and not all(isinstance(ix, Indirect) for ix in sc.lhs.indices):
        return None  # (a scattered last dim after plain ones: its rows are not the template's [rows, columns])
    inst = op_program_inputs(op)
    if inst is None or "X" not in inst:
        return None
    return r, op.operands[inst["X"]]


def op_program_inputs(op: GOp) -> dict | None:
    from kitsune.schedule.roles import op_program

    got = op_program(op)
    return dict(got[0].inputs) if got is not None else None


def scatter_choice(task, anchor: GOp, gpu, use_db: bool) -> "Choice | None":
    """The scatter template for a task whose first result *is* a zero-started scatter-accumulate, or an
    in-place assignment of slices (``scatter_form(assign=True)``)."""
    assign = scatter_form(anchor, assign=True)
    form = assign or scatter_form(anchor)
    y = task.body.blocks.first.last_op
    if form is None or y.operands[0] is not anchor.results[0]:
        return None
    r, start = form
    if assign is None and not _zero_constant(start):
        return None
    shape = tensor_shape(anchor.results[0].type)
    sc = r.program.stmts[1]
    from kitsune.semantics.comprehension import Indirect

    plain = [ix.terms[0][0] for ix in sc.lhs.indices if not isinstance(ix, Indirect)]
    jv = r.vars("scatter")
    J = math.prod(r.ext[v] for v in jv)
    D = r.ext[plain[-1]] if plain else 1  # (no plain dim: one value a source row)
    B = math.prod(r.ext[v] for v in plain[:-1]) if len(plain) > 1 else 1
    eb = elem_bytes(anchor.results[0].type)
    p = Problem("scatter", M=math.prod(n for ix, n in zip(sc.lhs.indices, shape) if isinstance(ix, Indirect)),
                N=D, K=J, batch=B, elem_bytes=eb, split_ok=False)
    cfg = (tuning_db.lookup(p, gpu) if use_db else None) or default_config(p, gpu)
    tile = tuple(n if isinstance(ix, Indirect) else (min(cfg.BD, n) if k == len(shape) - 1 else 1)
                 for k, (ix, n) in enumerate(zip(sc.lhs.indices, shape)))
    how = "stored in place" if assign else "pushed"
    return Choice("scatter", cfg, tile, p, anchor, f"roles {r.summary()}: {how} from {J} source rows",
                  "heuristic")


def conv_choice(task, anchor: GOp, r: Roles, gpu, use_db: bool) -> "Choice | None":
    """Implicit GEMM for a convolution anchor ``O[n, f, oh, ow] += X[..window..] * W[f, ...]`` (roles M / N / K /
    window, nothing else) whose output is the task's result up to elementwise ops: M = the output pixels (every
    left-side variable but the channel one), N = the output channels, K = c * kh * kw. The tile is BF channels
    by a block of pixels (``pixel_tile``: a row segment, whole rows of one image or whole images), which the
    codegen flattens into one lane axis; the evaluator's reduction over c * kh * kw becomes a tl.dot of the
    channels by the pixels."""
    if r.reduce_op != "+=" or len(r.factors) != 2 or not r.has("window") or not r.has("N"):
        return None
    if any(role not in ("M", "N", "K", "window") for role in r.role.values()):
        return None
    y = task.body.blocks.first.last_op
    if tensor_shape(y.operands[0].type) != tensor_shape(anchor.results[0].type):
        return None
    lhs = r.lhs_vars
    nv = r.vars("N")
    if len(nv) != 1 or lhs[-1] == nv[0]:
        return None
    F = r.ext[nv[0]]
    if F < 2:
        return None  # one output channel: no N axis for a dot
    pix = [v for v in lhs if v != nv[0]]
    ext = [r.ext[v] for v in pix]
    M = math.prod(ext)
    if M < 16:
        return None  # fewer pixels than an mma's rows: the evaluator as it is
    K = math.prod(n for v, n in r.ext.items() if v not in lhs)
    eb = max(elem_bytes(o.type) for o in anchor.operands[:2])
    rows = ext[-1] * (ext[-2] if len(ext) > 1 else 1)
    p = Problem("conv", M=M, N=F, K=K, elem_bytes=eb, row=ext[-1], rows=rows, split_ok=False)
    cfg = (tuning_db.lookup(p, gpu) if use_db else None) or default_config(p, gpu)
    return Choice("conv", cfg, conv_tile(r, cfg), p, anchor, f"roles {r.summary()}: implicit GEMM, M = output pixels",
                  "heuristic")


def depthwise_choice(task, anchor: GOp, gpu, use_db: bool) -> "Choice | None":
    """The depthwise template for a window contraction with one input row band an output
    (``kitsune.schedule.depthwise``: ConvNeXt's 7 x 7, MobileNet's 3 x 3 depthwise convolutions) that reads its
    input from memory (an argument of the task) and whose task computes nothing else but elementwise ops of
    results of its shape: a work item is a band of whole output rows (``depthwise_tile``)."""
    from kitsune.schedule.depthwise import depthwise_form

    form = depthwise_form(anchor)
    if form is None:
        return None
    shape = tensor_shape(anchor.results[0].type)
    args = set(task.body.blocks.first.args)
    x = anchor.operands[op_program(anchor)[0].inputs[form.x.tensor]]
    if x not in args or len(shape) < 3 or shape[-1] < 2:
        return None
    y = task.body.blocks.first.last_op
    if any(tensor_shape(v.type) != shape for v in y.operands):
        return None
    if any(isinstance(o, GOp) and o is not anchor and not _elementwise(o) and o.OPDEF.category != "constant"
           for o in task.body.blocks.first.ops):
        return None
    eb = max(elem_bytes(o.type) for o in anchor.operands[:2])
    p = Problem("depthwise", M=math.prod(shape[:-1]), N=shape[-1], K=form.krows * form.kcols,
                row=tensor_shape(x.type)[-1], rows=shape[-2], batch=shape[-3], elem_bytes=eb, split_ok=False,
                stride=form.col_stride if form.col_stride > 1 else 0)
    cfg, source = config_for(p, gpu, use_db, None)
    return Choice("depthwise", cfg, depthwise_tile(shape, cfg), p, anchor,
                  f"depthwise window {form.krows}x{form.kcols}: strips of a row in registers", source)


def depthwise_tile(shape, cfg) -> tuple[int, ...]:
    """The tile of a depthwise task's result under ``cfg``: BH whole rows (of BC channels where BH is the
    image's height)."""
    bh = max(1, min(cfg.BH, shape[-2]))
    bc = max(1, min(cfg.BC, shape[-3])) if bh == shape[-2] else 1
    return (1,) * (len(shape) - 3) + (bc, bh, shape[-1])


def with_input_layout(task, c: "Choice") -> "Choice":
    """``c`` with its problem's ``layout`` 1 where ``task`` is a convolution whose program stores its input
    channels-last (``kitsune.schedule.storage``; every task must have its template by then), else ``c``."""
    from dataclasses import replace

    from kitsune.schedule.storage import conv_input_channels_last

    if c.template != "conv" or c.problem is None or not conv_input_channels_last(task, c.anchor):
        return c
    return replace(c, problem=replace(c.problem, layout=1))


def conv_tile(r: Roles, cfg) -> tuple[int, ...]:
    """The tile of a convolution's result under conv config ``cfg``: BF output channels by ``pixel_tile``'s block
    of at most BM output pixels (the anchor's roles ``r``: one N variable, the others pixels)."""
    lhs = r.lhs_vars
    nv = r.vars("N")[0]
    pix = [v for v in lhs if v != nv]
    pt = dict(zip(pix, pixel_tile([r.ext[v] for v in pix], cfg.BM)))
    return tuple(min(cfg.BF, r.ext[nv]) if v == nv else pt[v] for v in lhs)


def pixel_tile(ext: list[int], bm: int) -> list[int]:
    """The largest row-major block of at most ``bm`` pixels of a pixel space of extents ``ext``, whole trailing
    dims first: a row segment when a row is wider than ``bm``, else whole rows, else whole images."""
    tile = [1] * len(ext)
    budget = bm
    for d in range(len(ext) - 1, -1, -1):
        t = min(budget, ext[d])
        tile[d] = max(1, t)
        if t < ext[d]:
            break
        budget //= ext[d]
        if budget < 2:
            break
    return tile


MIN_WORK = 512  # element-steps per program of a generic task at least (fill_tile)


def fill_tile(shape, tile, gpu: GPU, work: int = 1, min_work: int = MIN_WORK) -> tuple[int, ...]:
    """A generic task's tile with its leading dims cut (the innermost one with more than one row first,
    halving) until the grid has two programs per SM, keeping at least ``min_work`` element-steps per tile
    (``work``: reduction steps per result element): the evaluator's tiles are small and memory-bound, so a
    grid of a few tiles leaves most SMs idle (DLRM's embedding bags ran on 16 CTAs)."""
    min_elems = max(1, min_work // max(1, work))
    tile = list(tile)
    if len(tile) != len(shape) or not shape:
        return tuple(tile)

    target = 2 * gpu.sm_count
    while math.prod(grid_of(shape, tile)) < target:
        dims = [d for d in range(len(tile) - 1) if tile[d] > 1]
        if not dims:
            break
        d = dims[-1]
        new = max(1, tile[d] // 2)
        if math.prod(tile) // tile[d] * new < min_elems:
            break
        tile[d] = new
    if work > 1 and math.prod(tile) < min_elems:  # (a reduction of short rows)
        tile = _grown_tile(shape, tile, target, GROW_WORK // work)
    return tuple(tile)


WIDE_TILE_LANES = 16384
"""Lanes of a generic tile (padded to powers of two) past which ``generic_warps`` adds warps."""


def generic_warps(cfg, tile) -> "GenericConfig":
    """``cfg`` with warps enough for a generic tile of more than ``WIDE_TILE_LANES`` lanes, about 128 a thread (at
    most 32 warps): a norm over whole rows of tens of thousands of elements (GroupNorm's [N, G, C / G * H * W]
    rows: 49 152 in a UNet's decoder) held 512 values a thread at 4 warps, 16 KB of spills a thread."""
    lanes = math.prod(_pow2_ge(t) for t in tile)
    if lanes <= WIDE_TILE_LANES:
        return cfg
    return replace(cfg, warps=max(cfg.warps, min(32, lanes // 4096)))


GROW_WORK = 4096
"""Element-steps per program that ``fill_tile`` grows a reduction's tile of less than ``MIN_WORK`` towards (rows
of a few hundred steps; a gather or pointwise tile keeps its size): the squeeze-excitation means of
EfficientNet-B0 ran one 49-196-element row a program of 4 warps (up to 36 864 programs, each a few hundred
bytes): 20-45 us for 6-7 MB on the H100, the programs' start-up and not the bytes."""


def _grown_tile(shape, tile, target: int, want: int) -> list[int]:
    """``tile`` doubled along its innermost dim that is not whole (then the next one out, once that is whole),
    while it has fewer than ``want`` elements and the grid keeps ``target`` programs: a row-major block, so
    that the tile's rows stay adjacent in memory."""
    tile = list(tile)
    for d in range(len(tile) - 1, -1, -1):
        if tile[d] >= shape[d]:
            continue
        while tile[d] < shape[d] and math.prod(tile) < want:
            grown = tile[:d] + [min(shape[d], 2 * tile[d])] + tile[d + 1:]
            if math.prod(grid_of(shape, grown)) < target:
                return tile
            tile = grown
        if tile[d] < shape[d] or math.prod(tile) >= want:
            break
    return tile


TRANSPOSE_BLOCK = 64
"""Most elements of a pointwise tile along the dim in which an input read through a permute is contiguous
(``transposed_tile``)."""


def transposed_read_dim(block, out_shape) -> int | None:
    """The dim of a task's (or stage's) result of ``out_shape`` along which an input its body ``block`` reads
    through a permute (of the stored tensor, or of a reshape of it that keeps its last dim) runs contiguously in
    memory, where that is not the result's last dim: ConvNeXt's residual adds of an MLP's [pixels, channels]
    output permuted back to [n, c, h, w]."""
    out = tuple(out_shape)
    args = set(block.args)
    for o in block.ops:
        if not isinstance(o, GOp) or o.OPDEF.name != "permute" or tuple(tensor_shape(o.results[0].type)) != out:
            continue
        src = o.operands[0]
        if isinstance(src.owner, GOp) and src.owner.OPDEF.name == "reshape" and \
                tensor_shape(src.owner.operands[0].type)[-1:] == tensor_shape(src.type)[-1:]:
            src = src.owner.operands[0]  # (a view of the stored rows)
        if src not in args:
            continue
        perm = [p % len(out) for p in o.attrs()["perm"]]
        d = perm.index(len(out) - 1)
        if d != len(out) - 1:
            return d
    return None


def transposed_tile(task, tile) -> tuple[int, ...]:
    """A pointwise task's tile where it reads an input through a transposing permute (``transposed_read_dim``:
    along dim ``d``), so that both its stores (along the result's trailing dims) and that input's loads (along
    ``d``) move whole sectors; Triton converts between the two layouts through shared memory, and the codegen
    keeps ``d`` an axis of its own (``TileIndexer.merged_run``). Whole images of the trailing two dims where one
    has at most 256 elements, by 16 to ``TRANSPOSE_BLOCK`` along ``d`` (4096 lanes); else rows of at least 64
    elements by ``TRANSPOSE_BLOCK``. A tile of one whole channel image read channels-last loaded one element a
    lane from rows 96 channels apart: ConvNeXt's stage-1 residual add 36 us on the H100 for 29 MB. Else
    ``tile``."""
    if not task.outs:
        return tuple(tile)
    shape = tensor_shape(task.outs[0].type)
    d = transposed_read_dim(task.body.blocks.first, shape)
    if d is None or len(shape) < 2:
        return tuple(tile)
    return block_tile(shape, d)


def conv_input_tile(shape) -> tuple[int, ...]:
    """The tile of an elementwise task whose [n, c, h, w] result its program stores channels-last for the
    convolutions that read it (``kitsune.schedule.storage.channels_last_writer``: a UNet's GroupNorm affine +
    SiLU): ``block_tile`` along the channels, so that its loads (along w, of NCHW inputs) and its stores (along
    c) both move whole sectors."""
    return block_tile(shape, 1)


def block_tile(shape, d: int) -> tuple[int, ...]:
    """A tile holding whole runs of the trailing dims and a block along dim ``d`` (``transposed_tile``,
    ``conv_input_tile``): whole images of the trailing two dims where one has at most 256 elements, by 16 to
    ``TRANSPOSE_BLOCK`` along ``d`` (4096 lanes); else rows of at least 64 elements by ``TRANSPOSE_BLOCK``."""
    n = len(shape)
    out = [1] * n
    out[-1] = shape[-1]
    if n >= 3 and d < n - 2:
        if shape[-2] * shape[-1] <= 256:
            out[-2] = shape[-2]
        else:
            out[-2] = min(shape[-2], max(1, 64 // shape[-1]))
    rest = 4096 // _pow2_ge(math.prod(out[d + 1:]))
    out[d] = min(shape[d], TRANSPOSE_BLOCK, max(16, rest))
    return tuple(out)


GATHER_MIN_WORK = 16384
"""Element-steps per program of a generic task that gathers rows by index (an embedding bag, an index_select):
the probe (``bench/kernels/gather_probe.py``, NOTES section 15) ran DLRM's bags at 48.8 us with 4 bags x 20
indices x 64 columns per program of 4 warps and at 24.3-26.5 us from 16 bags up: a program's index load and
the dependent row loads are a fixed latency that a small tile does not amortise."""


def generic_work(task) -> tuple[int, int]:
    """``fill_tile``'s ``work`` and ``min_work`` for a generic task, from its anchor's roles: reduction steps per
    result element (1 without a reduction), and the floor of element-steps per program (``GATHER_MIN_WORK`` for
    a gather, else ``MIN_WORK``)."""
    anchor, _ = anchor_of(task)
    r = roles_of(anchor) if anchor is not None else None
    if r is None:
        return 1, MIN_WORK
    min_work = GATHER_MIN_WORK if r.has("gather") else MIN_WORK
    if r.reduce_op == "=":
        return 1, min_work
    return max(1, math.prod(n for v, n in r.ext.items() if v not in r.lhs_vars)), min_work


def gemm_tile(r: Roles, template: str, cfg: Config) -> tuple[int, ...] | None:
    """Result tile of a gemm / gemv config: N's dim gets BN, the innermost M dim BM (gemv: every M dim whole),
    batch and outer M dims 1. None when the roles do not sit on the result's dims as the templates need."""
    lhs = r.lhs_vars
    nv, mv = r.vars("N"), r.vars("M")
    if len(nv) != 1 or not lhs or lhs[-1] != nv[0]:
        return None
    bb = getattr(cfg, "BB", 1)
    if bb > 1:  # a batched dot: whole matrices of BB entries of the innermost batch dim, M dims adjacent to N
        bv = [v for v in lhs if r.role[v] == "batch"]
        if len(mv) != 1 or len(lhs) < 3 or lhs[-2] != mv[0] or not bv or lhs[-3] != bv[-1]:
            return None
        return tuple(min(bb, r.ext[v]) if v == bv[-1] else r.ext[v] if v in (mv[0], nv[0]) else 1 for v in lhs)
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


def _last_dim_split(op: GOp) -> bool:
    """A ``split`` (torch's ``chunk`` / ``split``) along the last dim: each result a slice of its columns."""
    if op.OPDEF.name != "split":
        return False
    rank = len(tensor_shape(op.operands[0].type))
    return rank > 0 and op.attrs()["dim"] % rank == rank - 1


def _through_slices(task, c: GOp) -> bool:
    """Result #0 comes from contraction ``c`` through elementwise ops and slices only (a column of the result
    needs one column of ``c``: no row reduction, which would need the columns of other tiles). Operands that do
    not depend on ``c`` (a row scale computed from the task's inputs) are not followed."""
    y = task.body.blocks.first.last_op
    after = {c.results[0]}
    for o in task.body.blocks.first.ops:
        if any(v in after for v in o.operands):
            after |= set(o.results)
    stack, seen = [y.operands[0]], set()
    while stack:
        v = stack.pop()
        op = v.owner
        if not isinstance(op, GOp) or op is c or op in seen or v not in after:
            continue
        seen.add(op)
        name = op.OPDEF.name
        if not (_elementwise(op) or name in ("slice", "constant", "reshape") or _last_dim_split(op)):
            return False
        stack += list(op.operands)
    return True


def sliced_contraction(task, gpu, use_db: bool) -> Choice | None:
    """A contraction whose result reaches the task's first result through slices along the last dim and
    elementwise ops only (Llama's fused gate/up projection, sliced in two and multiplied): a gemv (M up to
    ``GEMV_MAX_M``) or gemm of the task's result tile, each output column reading the contraction at the
    columns its slices name -- a K loop a slice, each with its accumulator (``Problem.slices``); no split (the
    combine would need every slice's partial sums)."""
    c = sole_contraction(task)
    r = roles_of(c) if c is not None else None
    if r is None or not is_contraction(r):
        return None
    if r.extent("M") > GEMV_MAX_M:
        return _sliced_gemm(task, c, r, gpu, use_db)
    out = tensor_shape(c.results[0].type)
    res = tensor_shape(task.body.blocks.first.last_op.operands[0].type)
    nv = r.vars("N")
    if len(out) != len(res) or out[:-1] != res[:-1] or len(nv) != 1 or r.lhs_vars[-1] != nv[0]:
        return None
    if not _through_slices(task, c):
        return None
    eb = max(elem_bytes(o.type) for o in c.operands[:2])
    p = Problem("gemv", M=r.extent("M"), N=r.extent("N"), K=r.extent("K"), batch=r.extent("batch"), elem_bytes=eb,
                split_ok=False)
    cfg, source = (tuning_db.lookup(p, gpu) if use_db else None), "database"
    if cfg is None or cfg.SPLIT > 1:
        cfg, source = default_config(p, gpu), "heuristic"
    tile = tuple(list(res[:-1]) + [min(cfg.BN, res[-1])])
    return Choice("gemv", cfg, tile, p, c, f"roles {r.summary()}, sliced along N into the result", source)


def result_slices(task, c: GOp | None = None, r: Roles | None = None) -> int:
    """How many slices of its one contraction's columns task result #0 reads (``sliced_contraction``'s gemm form:
    an accumulator and a K loop each), 0 where it is not of that form (``c``, ``r``: that contraction and its
    roles, where the caller has them)."""
    if r is None:
        c = sole_contraction(task)
        r = roles_of(c) if c is not None else None
    if r is None or not is_contraction(r):
        return 0
    out = tensor_shape(c.results[0].type)
    res = tensor_shape(task.body.blocks.first.last_op.operands[0].type)
    nv = r.vars("N")
    if len(res) < 2 or math.prod(out[:-1]) != math.prod(res[:-1]) or len(nv) != 1 or r.lhs_vars[-1] != nv[0] \
            or out[-1] % res[-1] or out[-1] == res[-1] or not _through_slices(task, c):
        return 0  # (one slice: problem_of's, where it has a form; leading dims regrouped by a reshape:
        # kitsune-flatten-rows' exit from 2-D rows)
    return out[-1] // res[-1]


def _sliced_gemm(task, c: GOp, r: Roles, gpu, use_db: bool) -> Choice | None:
    """``sliced_contraction``'s gemm (the Triton form: a dot a slice in one tile)."""
    slices = result_slices(task, c, r)
    if not slices:
        return None
    res = tensor_shape(task.body.blocks.first.last_op.operands[0].type)
    eb = max(elem_bytes(o.type) for o in c.operands[:2])
    p = Problem("gemm", M=r.extent("M"), N=res[-1], K=r.extent("K"), batch=r.extent("batch"), elem_bytes=eb,
                split_ok=False, slices=slices)
    cfg, source = (tuning_db.lookup(p, gpu) if use_db else None), "database"
    if cfg is None or cfg.SPLIT > 1 or cfg.GLUON:
        cfg, source = default_config(p, gpu), "heuristic"
    tile = tuple([1] * (len(res) - 2) + [min(cfg.BM, res[-2]), min(cfg.BN, res[-1])])
    return Choice("gemm", cfg, tile, p, c, f"roles {r.summary()}, {p.slices} slices along N into the result",
                  source)


def config_for(p: Problem, gpu: GPU, use_db: bool, forced: dict | None) -> tuple[Config, str]:
    """(config, source) of problem ``p``: the one ``forced`` gives for its template ("option"), else the tuning
    database's ("database"), else the heuristic default ("heuristic")."""
    if forced is not None and forced.get("template") == p.template:
        from kitsune.schedule.configs import config_from

        return config_from(p.template, forced), "option"
    cfg = tuning_db.lookup(p, gpu) if use_db else None
    if cfg is not None:
        return cfg, "database"
    return default_config(p, gpu), "heuristic"


def chain_problem(form, eb: int = 2) -> Problem:
    """The chain template's problem of a chain form (``kitsune.schedule.chain``)."""
    rows = math.prod(max(1, d) for d in form.rows)
    # from memory: all of the first layer's operand, and what a later layer reads beside its predecessor's result
    mem = [form.layers[0].K] + [l.K - p.N for p, l in zip(form.layers, form.layers[1:]) if l.K > p.N]
    return Problem("chain", M=rows, N=form.layers[-1].N, K=max(l.K for l in form.layers), elem_bytes=eb,
                   row=form.width, rows=len(form.layers), out_elems=sum(l.K * l.N for l in form.layers),
                   mem_cols=sum(-(-c // 64) * 64 for c in mem))


def chain_tile(shape, cfg) -> tuple[int, ...]:
    """A chain task's tile of result ``shape``: ``cfg.BM`` whole rows."""
    return tuple([1] * (len(shape) - 2) + [min(cfg.BM, shape[-2]), shape[-1]])


def chain_choice(task, gpu, use_db: bool, forced: dict | None = None) -> "Choice | None":
    """The chain template for a task in chain form: several weight GEMMs on the same rows, one after another."""
    from kitsune.schedule.chain import CHAIN_MAX_WIDTH, chain_form
    from kitsune.schedule.configs import ChainConfig

    # (a norm after the last layer reads that layer's one accumulator, up to CHAIN_MAX_WIDTH wide, whatever SEG)
    form = chain_form(task.body.blocks.first, seg=CHAIN_MAX_WIDTH)
    if form is None:
        return None
    eb = max(elem_bytes(l.w.type) for l in form.layers)
    p = chain_problem(form, eb)
    cfg, source = config_for(p, gpu, use_db, forced)
    if form.row_epilogue and form.layers[-1].N > cfg.SEG and not cfg.TMA and cfg.BM >= 128:
        # a norm after the last layer reads its whole row, the layer's one accumulator (the register form; the
        # TMA form has one a layer already, on its own warps): 128 rows of it on 8 warps
        cfg = replace(cfg, warps=8)
    if cfg.TMA and not all(l.w_nk for l in form.layers):
        cfg = replace(cfg, TMA=0)  # the TMA form streams [n, k] weights
    tile = chain_tile(tensor_shape(task.outs[0].type), cfg)
    where = ("in shared memory, weights by TMA" if cfg.TMA else "in registers")
    note = (f"chain of {len(form.layers)} weight GEMMs on {p.M} rows (widths "
            f"{'-'.join(str(l.N) for l in form.layers)}), intermediates {where}")
    return Choice("chain", cfg, tile, p, form.layers[-1].op, note, source)


def attention_choice(task, gpu: GPU, use_db: bool = True, forced: dict | None = None) -> "Choice | None":
    """The attention template (prefill) for a task whose result #0 is one ``graph.attention`` of several queries
    through layout and elementwise ops, stored with a dim of its own for the queries and whole heads last
    (``[B, H, L, E]``, the heads merged ``[B, L, H * E]``, or ``nn.MultiheadAttention``'s ``[L, B, H, E]``: see
    ``attention_dims``): a tile is ``BM`` queries by one head's ``E`` columns. (One query is decode:
    ``kitsune-split-reduction``'s decode_attention.)"""
    atts = [o for o in task.body.blocks.first.ops if isinstance(o, GOp) and o.OPDEF.name == "attention"]
    if len(atts) != 1:
        return None
    att = atts[0]
    others = [o for o in task.body.blocks.first.ops if isinstance(o, GOp) and o is not att
              and o.OPDEF.category not in ("elementwise", "layout", "constant")]
    if others:
        return None
    B, H, L, E = tensor_shape(att.operands[0].type)
    S, Ev = tensor_shape(att.operands[1].type)[2], tensor_shape(att.operands[2].type)[3]
    shape = tensor_shape(task.outs[0].type)
    if L <= 1 or E != Ev or not 16 <= E <= 256 or len(shape) < 3 or shape[-1] % E or min(B, H, L, S) < 1:
        return None
    qdim = result_query_dim(att, task.body.blocks.first.last_op.operands[0])
    if qdim is None:
        return None
    p = Problem("attention", M=L, N=E, K=S, batch=B * H, elem_bytes=elem_bytes(att.operands[0].type))
    cfg, source = config_for(p, gpu, use_db, forced)
    return Choice("attention", cfg, attention_tile(shape, L, E, cfg, qdim), p, att, f"attention of {L} queries "
                  f"over {S} keys, head dim {E}: online softmax, tensor cores", source)


def attention_dims(att, v, ops=None) -> list[tuple[int, ...]] | None:
    """Which dims of the attention's result ``[B, H, L, E]`` (0 .. 3) each dim of ``v`` holds, ``v`` reached from
    it through a chain of permutes, reshapes and same-shape elementwise ops (each the only reader of the value
    before it; within ``ops`` where given): a tuple per dim of ``v``, ``()`` for a unit dim, ``(1, 3)`` for the
    heads merged with the head dim. None where ``v`` is not reached so, or a dim mixes others with the queries."""
    sizes = tensor_shape(att.results[0].type)
    dims: list[tuple[int, ...]] = [() if n == 1 else (d,) for d, n in enumerate(sizes)]
    cur = att.results[0]
    members = None if ops is None else set(ops)
    for _ in range(16):
        if cur is v:
            return dims
        users = [u.operation for u in cur.uses if isinstance(u.operation, GOp)
                 and (members is None or u.operation in members)]
        if len(users) != 1 or len(users[0].results) != 1:
            return None
        dims = attention_step(dims, users[0], cur)
        if dims is None:
            return None
        cur = users[0].results[0]
    return None


def attention_step(dims: list[tuple[int, ...]], op, through) -> list[tuple[int, ...]] | None:
    """``attention_dims`` of ``op``'s result, ``dims`` those of its operand ``through``; None where ``op`` mixes
    the queries with another dim (``[L, B, H, E] -> [L * B, H * E]``) or is not a layout / elementwise op."""
    name = op.OPDEF.name
    if name == "permute":
        return [dims[p] for p in op.attrs()["perm"]]
    if op.OPDEF.category == "elementwise":
        return dims if tensor_shape(op.results[0].type) == tensor_shape(through.type) else None
    if name != "reshape":
        return None
    ins, out = tensor_shape(through.type), tensor_shape(op.results[0].type)
    got, i = [], 0
    for n in out:  # each output dim: the run of input dims whose sizes multiply to it
        group: tuple[int, ...] = ()
        prod = 1
        while i < len(ins) and (prod < n or (ins[i] == 1 and n != 1 and prod == n)):
            prod *= ins[i]
            group += dims[i]
            i += 1
        if prod != n:
            return None
        if len(group) > 1 and group != (1, 3):
            return None  # (only the heads may merge, with the head dim after them)
        got.append(group)
    if any(ins[j] != 1 for j in range(i, len(ins))):
        return None
    return got


def result_query_dim(att, v) -> int | None:
    """The dim of ``v`` (the stored result of the attention's task) that holds the queries, where the last one
    holds the head dim (alone or after the heads), else None."""
    dims = attention_dims(att, v)
    if dims is None or not dims or dims[-1] not in ((3,), (1, 3)) or (2,) not in dims:
        return None
    return dims.index((2,))


def tile_query_dim(tile) -> int:
    """The dim of an attention tile (``attention_tile``) that holds its queries: the one before the last that it
    spans ([B, H, L, E] or [B, L, H * E]: the second to last; nn.MultiheadAttention's [L, B, H, E]: the first)."""
    return next((i for i in range(len(tile) - 1) if tile[i] > 1), len(tile) - 2)


def attention_tile(shape, L: int, E: int, cfg, qdim: int = -2) -> tuple[int, ...]:
    """The attention template's tile of a result of ``shape`` (the queries at ``qdim``, heads last): BM queries by
    one head's E columns."""
    tile = [1] * len(shape)
    tile[qdim] = min(cfg.BM, L)  # (fewer than 16 queries: lanes padded to 16)
    tile[-1] = E
    return tuple(tile)


def choose(task, gpu: GPU | str = "h100", use_db: bool = True, forced: dict | None = None) -> Choice:
    """Template, config and tile of one dataflow task."""
    c = _choose(task, gpu, use_db, forced)
    if not task.outs or len(c.tile) == len(tensor_shape(task.outs[0].type)):
        return c
    # the anchor's tile through a last reshape that only adds or drops unit dims (``anchor_of``)
    shape = tensor_shape(task.outs[0].type)
    kept = [t for t, n in zip(c.tile, tensor_shape(c.anchor.results[0].type)) if n != 1] if c.anchor else None
    if kept is None or len(kept) != sum(1 for n in shape if n != 1):
        return Choice("generic", GenericConfig(), task.tile_sizes(), None, c.anchor,
                      f"{c.note}; its tile does not map onto the result's dims", "task")
    it = iter(kept)
    return replace(c, tile=tuple(1 if n == 1 else next(it) for n in shape))


def _choose(task, gpu: GPU | str = "h100", use_db: bool = True, forced: dict | None = None) -> Choice:
    gpu = get_gpu(gpu)
    tile0 = task.tile_sizes()
    ch = chain_choice(task, gpu, use_db, forced)
    if ch is not None:
        return ch
    att = attention_choice(task, gpu, use_db, forced)
    if att is not None:
        return att
    anchor, why = anchor_of(task)
    if anchor is None:
        return Choice("generic", GenericConfig(), tile0, None, None, why, "task")
    r = roles_of(anchor)
    if r is None:
        return Choice("generic", GenericConfig(), tile0, None, anchor, f"'{anchor.name}' has no comprehension",
                      "task")
    sc = (scatter_choice(task, anchor, gpu, use_db) or conv_choice(task, anchor, r, gpu, use_db)
          or depthwise_choice(task, anchor, gpu, use_db))
    if sc is not None:
        return sc
    got = None
    # norms over the rows of a GEMM's result: the gemm template, its tile spanning the row, when every one of
    # them allows it (else the evaluator runs the task)
    contraction = anchor if anchor.OPDEF.category == "contraction" else row_epilogue_contraction(anchor)
    norms = _row_ops_over(task, contraction)
    if norms and all(row_epilogue_contraction(n) is contraction for n in norms):
        rr = roles_of(contraction)
        got = problem_of(task, contraction, rr, row=tensor_shape(contraction.results[0].type)[-1]) if rr else None
        if got is not None:
            anchor, r = contraction, rr
    if got is None:
        got = problem_of(task, anchor, r)
        if got is not None and norms and got[0].template == "gemm":
            got = None  # a norm over rows the gemm tile does not span: the evaluator runs the task
    if got is None:
        sliced = sliced_contraction(task, gpu, use_db)
        if sliced is not None:
            return sliced
        kind = "pointwise" if not any(isinstance(o, GOp) and o.OPDEF.category != "elementwise"
                                      and o.OPDEF.category != "layout" and o.OPDEF.category != "constant"
                                      for o in task.body.blocks.first.ops) else "generic"
        cfg = GenericConfig()
        if r.has("window") and all(role in ("window", "P") for role in r.role.values()) and math.prod(tile0) >= 512:
            cfg = GenericConfig(warps=8)  # a pool over a tile of whole images: inception_b8's 3x3 pool 5.2 -> 4.1 us
        return Choice(kind if kind == "pointwise" else "generic", cfg, tile0, None, anchor,
                      f"roles {r.summary()}: no template yet for this anchor, the evaluator runs it", "task")
    p, summary = got
    cfg, source = config_for(p, gpu, use_db, forced)
    if getattr(cfg, "SPLIT", 1) > 1 and not p.split_ok:
        cfg = default_config(p, gpu)  # a database entry of another task with the same shape and a split
    tile = gemm_tile(r, p.template, cfg)
    if tile is None:
        return Choice("generic", GenericConfig(), tile0, p, anchor,
                      f"roles {summary}: the N dim is not the result's last dim", "task")
    return Choice(p.template, cfg, tile, p, anchor, f"roles {summary}", source)


__all__ = ["Choice", "choose", "with_input_layout", "conv_input_tile", "block_tile", "attention_choice", "attention_tile", "attention_dims", "attention_step", "result_query_dim", "tile_query_dim", "anchor_of", "scatter_form", "scatter_choice", "conv_choice", "depthwise_choice", "depthwise_tile", "conv_tile", "pixel_tile", "fill_tile", "generic_warps", "transposed_tile", "transposed_read_dim", "generic_work", "problem_of", "gemm_tile", "chain_tile", "sliced_contraction", "result_slices", "unit_reshape", "sole_contraction"]
