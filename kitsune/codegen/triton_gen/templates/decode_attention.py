"""The decode_attention template: a flash-decoding partial with an online softmax.

A partial of ``kitsune-split-reduction``'s attention split computes, over its chunk of
the key positions,

    s = (q @ k^T) * scale (+ mask);  m = max_j s;  e = exp(s - m);  l = sum_j e;  o = e @ v

and yields ``(o, m, l)`` (the combine rescales and adds the partials). The generic
evaluator computes each yield on its own and re-reads K for every one of them (four
passes for the max, the weights, the sum). This template walks the keys once, in
blocks of ``BN``, with the online-softmax recurrence

    m' = max(m, max_j s);  a = exp(m - m');  l = a l + sum_j exp(s - m');  o = a o + exp(s - m') @ v

The partial is one task of ``P`` parts (``split_attention_in_one_task``: the chain runs on
``[B, Hq, P, 1, ..]`` tensors, k and v reshaped to ``[B, Hq, P, L / P, E]``), or, where no ``P``
divides the key length, one task per chunk. The work item is one tile ``[1, H, 1, Ev]`` of the
partial's result ``[B, Hq, P, Ev]`` (``[B, Hq, 1, Ev]`` per chunk): ``H`` query heads
that share one key/value head (GQA), which are the rows of both ``tl.dot`` s (padded to
16 rows by clamping: a padded row repeats the tile's last head, and its stores are
masked), so K and V are read once per group instead of once per head.

The loop structure, the recurrence and the dots live here; every load (q, the key
and value blocks, with whatever layout ops lead to them: the KV-cache concatenation
is a select between a load of the cache and a load of the new row, never a copy)
comes from the comprehension evaluator (``Evaluator.value_at``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kitsune.codegen.plan import CodegenError, dtype_key
from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.index_algebra import Lin, ladd, lconst
from kitsune.codegen.triton_gen.syntax import TL
from kitsune.dialects.graph import fmt_loc
from kitsune.dialects.regions import tensor_shape

if TYPE_CHECKING:
    from kitsune.codegen.triton_gen.stage import StageGen


def _owner_named(v, name: str):
    o = v.owner
    return o if getattr(o, "name", "") == f"graph.{name}" else None


def attention_chain(stage) -> tuple | None:
    """(q, k, v, scale value, o, m, l, mask) of a partial whose results are (o, m, l) of the softmax chain,
    else None. k and v are the values the chain's contractions read (key/value heads expanded to the query
    heads where GQA repeats them); mask is the additive mask added to the scaled scores, or None."""
    ys = [v for v, _, _ in stage.stores]
    if len(ys) != 3 or stage.pops or stage.pushes:
        return None
    # the one-task form (``split_attention_in_one_task``): the chain runs on [B, Hq, P, 1, ..] and its results
    # are reshaped to [B, Hq, P, ..]
    if all(_owner_named(y, "reshape") is not None for y in ys):
        ys = [y.owner.operands[0] for y in ys]
    o, m, l_ = ys
    mm2, summ, amax = _owner_named(o, "matmul"), _owner_named(l_, "sum"), _owner_named(m, "amax")
    if mm2 is None or summ is None or amax is None:
        return None
    e, v = mm2.operands
    ex = _owner_named(e, "exp")
    if ex is None or summ.operands[0] is not e:
        return None
    sub = _owner_named(ex.operands[0], "sub")
    if sub is None or sub.operands[1] is not m:
        return None
    s = sub.operands[0]
    if amax.operands[0] is not s:
        return None
    mask = None
    add = _owner_named(s, "add")
    if add is not None and _owner_named(add.operands[0], "mul") is not None:  # scores + mask
        s, mask = add.operands
    mul = _owner_named(s, "mul")
    if mul is None:
        return None
    mm1, scale = mul.operands
    mm1o = _owner_named(mm1, "matmul")
    if mm1o is None or tensor_shape(scale.type) or not mm1o.attrs()["transpose_b"] or mm1o.attrs()["transpose_a"] \
            or mm2.attrs()["transpose_a"] or mm2.attrs()["transpose_b"]:
        return None
    q, k = mm1o.operands
    rank = len(tensor_shape(k.type))
    if mask is not None and len(tensor_shape(mask.type)) > rank or rank not in (4, 5):
        return None
    return q, k, v, scale, o, m, l_, mask


def generate_decode_attention(g: "StageGen") -> list[str]:
    """The stage function body of a decode_attention partial (``g``: the stage's shell)."""
    st = g.stage
    b, ev = g.b, g.ev
    chain = attention_chain(st)
    T, D = tuple(st.tile), tuple(st.shape)
    if chain is None or len(T) != 4 or T[0] != 1 or T[2] != 1 or T[3] != D[3]:
        raise CodegenError(f"{fmt_loc(st.op)}stage \"{st.name}\": the decode_attention template needs a partial "
                           f"yielding (o, m, l) of softmax(q k^T * scale) v with tiles [1, H, 1, Ev]")
    q, k, v, scale, o, m, l_, mask = chain
    five = len(tensor_shape(k.type)) == 5  # one task of P parts: [B, Hq, P, keys, E], the part is idx[2]
    L, E = tensor_shape(k.type)[-2], tensor_shape(q.type)[-1]
    Ev = tensor_shape(v.type)[-1]
    BN = int(g.cfg.get("BN", 64))

    body = g.open_work_items(None)
    tix = g.tile_index(T, D)
    idx = tix.idx
    g.tile.axes, g.tile.idx, g.tile.local = tix.axes, tuple(idx), tix.local
    ha, ea = tix.axes.get(1), tix.axes[3]
    rows = b.aranges[ha] if ha is not None else 1
    if ha is None or rows < 16:
        raise CodegenError(f"{fmt_loc(st.op)}stage \"{st.name}\": decode_attention needs the head axis padded to "
                           f"16 rows (tile {list(T)})")
    # the tile's first head: every head of the tile reads the same key/value head
    h0 = Lin(tuple((a, c) for a, c in idx[1].terms if a.kind != "axis"), idx[1].const)
    lead = (idx[0], idx[1], idx[2], lconst(0)) if five else (idx[0], idx[1], idx[2])
    qv = ev.result_at(q, lead + (b.axis(ea, E - 1),))
    et = dtype_key(q.type.get_element_type())
    low = et in ("bf16", "f16")  # tensor-core operands in the model's type (fp32 accumulation), else fp32
    dt = TL[et] if low else "tl.float32"
    prec = "" if low or g.gen.tf32 else ', input_precision="ieee"'
    dot = "_dot_lp" if low else "tl.dot"
    sv = ev.result_at(scale, ())
    sc = b.place(sv, ()) if sv.const is None else repr(float(sv.const))
    em = b.em
    em.emit(f"qd = ({b.block(qv, (ha, ea))}).to({dt})", 1)
    em.emit(f"m_run = tl.full([{rows}], float(\"-inf\"), tl.float32)", 1)
    em.emit(f"l_run = tl.zeros([{rows}], tl.float32)", 1)
    em.emit(f"o_run = tl.zeros([{rows}, {b.aranges[ea]}], tl.float32)", 1)
    if L < BN:
        BN = max(16, 1 << (L - 1).bit_length())
    na = b.new_axis("n", BN)

    def step(n: Lin, depth: int, first_new: int | None) -> None:
        """One block of BN keys from ``n`` (the keys' index in the chunk): scores, the online-softmax update;
        ``first_new``: keys of the block before it are masked (the previous block had them), or past the chunk."""
        kvix = (idx[0], h0, idx[2], n) if five else (idx[0], h0, n)
        kv = ev.result_at(k, kvix + (b.axis(ea, E - 1),))
        vv = ev.result_at(v, kvix + (b.axis(ea, Ev - 1),))
        fr = b.frame_of({ea, na})  # (head dim, keys): K^T and V^T
        em.emit(f"kt = ({b.block(kv, fr)}).to({dt})", depth)
        em.emit(f"vt = ({b.block(vv, fr)}).to({dt})", depth)
        em.emit(f"s = {dot}(qd, kt, tl.zeros([{rows}, {BN}], tl.float32){prec}) * {sc}", depth)
        if mask is not None:  # the additive mask at (the tile's heads, the block's keys), broadcast right-aligned
            ms = tensor_shape(mask.type)
            full = (idx[0], idx[1], idx[2], lconst(0), n) if five else (idx[0], idx[1], idx[2], n)
            mix = tuple(lconst(0) if ms[d] == 1 else full[len(full) - len(ms) + d] for d in range(len(ms)))
            mv = ev.result_at(mask, mix)
            em.emit(f"s = s + ({b.block(mv, (ha, na))}).to(tl.float32)", depth)
        if L < BN:  # keys past the chunk
            em.emit(f"s = tl.where(({na}_raw < {L})[None, :], s, float(\"-inf\"))", depth)
        elif first_new:  # keys the previous block had
            em.emit(f"s = tl.where(({na}_raw >= {first_new})[None, :], s, float(\"-inf\"))", depth)
        em.emit("m_new = tl.maximum(m_run, tl.max(s, 1))", depth)
        em.emit("alpha = tl.exp(m_run - m_new)", depth)
        em.emit("p = tl.exp(s - m_new[:, None])", depth)
        em.emit("l_run = l_run * alpha + tl.sum(p, 1)", depth)
        em.emit(f"o_run = {dot}(p.to({dt}), tl.trans(vt), o_run * alpha[:, None]{prec})", depth)
        em.emit("m_run = m_new", depth)

    # Every block but the chunk's last in a loop, the last after it, moved back to end at the chunk's last key
    # (its keys before the loop's end masked): every key index stays inside the chunk (the loads need no
    # bounds), and only the last block reaches the chunk's end, so in the loop the key-cache concatenation's
    # select folds to the cache's load where the chunks end before the new keys (a decode step's new row is the
    # last key: the loop's blocks read the cache straight into the tensor-core operands, no select, no fp32
    # round trip; NOTES section 30)
    last0 = ((L - 1) // BN) * BN  # the first key of the last block that an earlier block has not had
    if last0 > 0:
        loop = em.open(f"for n0 in range(0, {last0}, {BN}):", 1)
        step(ladd(b.sym("n0", 0, last0 - BN, 2), b.axis(na, BN - 1)), 2, None)
        em.close(1, loop)
    step(ladd(lconst(max(0, L - BN)), b.axis(na, BN - 1)), 1, last0 - max(0, L - BN))
    # the results: o [.., H, 1, Ev], m and l [.., H, 1, 1]
    one = (idx[0], idx[1], idx[2], lconst(0))
    for (_, buf, _), tv, ix in zip(st.stores, (TV("o_run", (ha, ea), 1, "f"), TV("m_run", (ha,), 1, "f"),
                                              TV("l_run", (ha,), 1, "f")), (idx, one, one)):
        g.store(buf, tv, ix, whole=False)  # (the stores are o, m, l in this order: attention_chain)
    g.close_work_items(body)
    return g.body_text()


__all__ = ["generate_decode_attention", "attention_chain"]
