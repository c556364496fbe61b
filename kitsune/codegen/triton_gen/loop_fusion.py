"""Sibling K loops of one stage fused into one (a stage body, the generator's Triton text).

A gated projection's two contractions over one input (Llama's ``silu(x Wg^T) * (x Wu^T)`` with ``Wg`` and ``Wu``
slices of one weight) are evaluated one after the other: two K loops of the same range, each pipelined by Triton on
its own, so the weight stream drains at the end of the first and fills again at the start of the second, with the
row statistics of a fused RMS norm in between. ``fuse_sibling_dot_loops`` merges such loops into one loop that
carries both accumulators: both weight chunks of a step are in flight together, and the input chunk both read is
one load (Triton's CSE, once both bodies index with the same loop variable).

Two loops fuse when both have literal ranges equal in start, stop and step, both compute a tensor-core product,
neither reads or writes a name the other writes, nothing in or between them has an effect (a store, an atomic, a
wait: memory order the names do not show), and the statements between them split into those the second loop
needs (its accumulator's initialisation), which move above the first loop, and the rest, which stay after the fused
loop; each move is checked with the same read / write sets as the loads-before-waits reordering (``statements``).
"""

from __future__ import annotations

import re

from kitsune.codegen.triton_gen.statements import (DOTS, Compound, code_of, independent, indent_of, lines_of,
                                                   names_of_compound, parse, range_args)

FUSE_SIBLING_LOOPS = True
"""Whether tensor-core gemv stages get their sibling K loops fused (``StageGen.generate``)."""

FUSED_RING_BYTES = 160 << 10
"""The shared memory a fused loop's operand ring may take (``StageGen.fusable_loops``): within an A100's 164 KB a
CTA; llama_decode_b8's fused gate / up (two [64, 256] bf16 weight chunks and the [16, 256] input, two buffers)
takes 144 KB on the H100."""


def fuse_sibling_dot_loops(body: list[str], max_loops: int = 2) -> list[str]:
    """Stage body ``body`` (lines of one function body) with fusable sibling K loops (see the module docstring)
    merged, at most ``max_loops`` into one (each brings its operand chunks to the loop's shared-memory ring), at any
    depth (the work-item loop's body included)."""
    if max_loops < 2 or not any(code_of(ln) for ln in body):
        return body
    return lines_of(_fuse_block(parse(body), max_loops))


def _dot_loop(s) -> tuple[int, int, int] | None:
    """(start, stop, step) of a ``for`` loop with literal bounds whose body computes a tensor-core product."""
    if not isinstance(s, Compound):
        return None
    ra = range_args(s)
    if ra is None or not DOTS.search("\n".join(code_of(ln) for ln in lines_of(s.body))):
        return None
    return ra[1:]


def _fuse_block(block: list, max_loops: int) -> list:
    for s in block:
        if isinstance(s, Compound):
            s.body = _fuse_block(s.body, max_loops)
            s.clauses = [(cl, _fuse_block(b, max_loops)) for cl, b in s.clauses]
            _refresh(s)
    fused = True
    while fused:
        fused = False
        for i, first in enumerate(block):
            rng = _dot_loop(first)
            if rng is None or first.loops >= max_loops:
                continue
            for j in range(i + 1, len(block)):
                if _dot_loop(block[j]) != rng or first.loops + block[j].loops > max_loops:
                    continue
                order = _hoist(block[i + 1:j], first, block[j])
                if order is None:
                    continue
                before, after = order
                block = block[:i] + before + [_merge(first, block[j])] + after + block[j + 1:]
                fused = True
                break
            if fused:
                break
    return block


def _hoist(between: list, first: Compound, second: Compound) -> tuple[list, list] | None:
    """The statements between two loops as (those the second loop needs, moved above the first; the others, left
    after the fused loop), or None where the loops cannot be fused."""
    var1, var2 = range_args(first)[0], range_args(second)[0]
    own1, own2 = first.defs - {var1}, second.defs - {var2}
    if not (first.pure and second.pure) or not all(s.pure for s in between):
        return None  # (an effect -- a store, an atomic, a wait -- orders memory, which the names do not show)
    if (second.uses - {var2}) & own1 or (first.uses - {var1}) & own2 or own1 & own2 or var1 in second.uses:
        return None
    need = set(second.uses)
    needed = [False] * len(between)
    for k in reversed(range(len(between))):
        if between[k].defs & need:
            needed[k] = True
            need |= between[k].uses
    moved = [s for s, n in zip(between, needed) if n]
    stay = [s for s, n in zip(between, needed) if not n]
    for k, s in enumerate(between):
        if needed[k]:
            if not independent(s, first) or not all(
                    independent(s, t) for t, n in zip(between[:k], needed) if not n):
                return None
        elif not independent(s, second) or s.defs & second.defs:
            return None
    return moved, stay


def _merge(first: Compound, second: Compound) -> Compound:
    """One loop: ``first``'s header, its body, then ``second``'s body over ``first``'s loop variable."""
    var1, var2 = range_args(first)[0], range_args(second)[0]
    pat = re.compile(rf"\b{re.escape(var2)}\b")
    lines1, lines2 = lines_of(first.body), lines_of(second.body)
    ind1 = next((indent_of(ln) for ln in lines1 if code_of(ln)), 0)
    ind2 = next((indent_of(ln) for ln in lines2 if code_of(ln)), ind1)
    moved = [(" " * ind1 + ln[ind2:] if ln.strip() else ln) for ln in lines2]
    node = Compound(list(first.header), parse(lines1 + [pat.sub(var1, ln) for ln in moved]))
    _refresh(node)
    node.loops = first.loops + second.loops
    return node


def _refresh(node: Compound) -> None:
    node.uses, node.defs, node.pure = set(), set(), True
    names_of_compound(node)


__all__ = ["FUSE_SIBLING_LOOPS", "FUSED_RING_BYTES", "fuse_sibling_dot_loops"]
