"""Sibling K loops fused: a stage body (the generator's Triton text) whose two tensor-core K loops run over the same
range, one after the other, with nothing the second needs computed by the first or between them, runs them as one
loop; a load the second repeats (the same row operand chunk) is read once.

Where: a skinny GEMM (the gemv template's tensor-core form, M <= 16) whose epilogue needs its merged contraction at
a second column offset. Llama's gate / up projection (``kitsune-merge-siblings`` merges the two weights; the
SiLU(gate) * up epilogue reads column j of both halves) was two pipelined loops per program, each with its own
pipeline ramp and half the bytes in flight: at batch 8 on the H100 28.3 us for 67 MB (2.4 TB/s) against 24.0 us at
batch 1, whose form has no loop (bench/kernels/NOTES.md section 29). Fused, one loop streams both weight chunks.

The rewrite is on statements (``early_loads``' parser), never on expressions:

- the two loops are ``for`` statements of one block with the same literal ``range(lo, hi, step)``, every statement
  inside them pure (loads, arithmetic, the dot), each with a tensor-core product, and no loop nested in them;
- the second loop uses no name the first one or a statement between them that stays between defines; the
  statements between that define what it needs (its accumulator's zeros) move above the first loop, which only
  they may not use or shadow;
- the second loop's counter is renamed to the first's (it is not read after its loop), and a load of its body whose
  text then equals a load of the first's reuses that value.

Nothing else changes: a body without such a pair comes back as it was.
"""

from __future__ import annotations

import re

from kitsune.codegen.triton_gen.early_loads import (_DOTS, _Compound, _lines, _names_of_compound, _parse,
                                                    _range_args, _Simple)

_LOAD_STMT = re.compile(r"^(\s*)([A-Za-z_]\w*) = (tl\.load\(.*)$")


def _loop(node) -> tuple[str, int, int, int] | None:
    """(counter, lo, hi, step) of a fusable K loop: literal bounds, pure, a tensor-core product, nothing nested."""
    if not isinstance(node, _Compound) or node.clauses or not node.pure:
        return None
    if any(isinstance(s, _Compound) for s in node.body):
        return None
    rng = _range_args(node)
    if rng is None or not any(_DOTS.search(ln) for ln in _lines(node.body)):
        return None
    return rng


def _rename(lines: list[str], old: str, new: str) -> list[str]:
    pat = re.compile(rf"\b{re.escape(old)}\b")
    return [pat.sub(new, ln) for ln in lines]


def _same_values(block: list, once: set[str]) -> dict[str, str]:
    """Names of ``block``'s top-level pure statements that repeat an earlier one's value: ``r21 = tl.arange(0,
    256)`` after ``r5 = tl.arange(0, 256)`` maps r21 to r5 (the evaluator gives each loop its own axis ranges).
    Only names assigned once in the whole function (``once``): an accumulator's zeros are not its value."""
    seen: dict[str, str] = {}
    same: dict[str, str] = {}
    for s in block:
        if not isinstance(s, _Simple) or not s.pure or len(s.defs) != 1 or not s.defs <= once:
            continue
        code = " ".join(ln.strip() for ln in s.lines if ln.strip() and not ln.strip().startswith("#"))
        m = re.fullmatch(r"([A-Za-z_]\w*) = (.*)", code)
        if m is None:
            continue
        rhs = m[2]
        for old, new in same.items():
            rhs = re.sub(rf"\b{re.escape(old)}\b", new, rhs)
        if rhs in seen:
            same[m[1]] = seen[rhs]
        else:
            seen[rhs] = m[1]
    return same


def _fuse_pair(block: list, i: int, j: int, same: dict[str, str]) -> list | None:
    """``block`` with loop ``j`` fused into loop ``i``, or None where that is not sound."""
    first, second = block[i], block[j]
    k1, k2 = _loop(first)[0], _loop(second)[0]
    needs = second.uses - {k2}  # (an accumulator is both used and defined inside: its zeros come from before)
    between = block[i + 1:j]
    later = block[j + 1:]
    if k2 != k1 and any(k2 in s.uses for s in later):
        return None  # the second counter is read after its loop
    if needs & first.defs:
        return None
    hoist, stay = [], []
    for s in between:
        (hoist if s.defs & needs else stay).append(s)
    for s in hoist:
        if not isinstance(s, _Simple) or not s.pure:
            return None
        defined_before = first.defs.union(*(t.defs for t in stay))
        if s.uses & defined_before or s.defs & (first.uses | first.defs):
            return None  # it needs what the first loop or a staying statement computes, or would shadow a name
    if first.uses & second.defs:
        return None
    body2 = _lines(second.body)
    if k2 != k1:
        body2 = _rename(body2, k2, k1)
    # a load the first loop makes already (after the renaming: the same address text)
    loads1 = {}
    for ln in _lines(first.body):
        m = _LOAD_STMT.match(ln)
        if m:
            loads1.setdefault(m[3].strip(), m[2])
    out2: list[str] = []
    subst: dict[str, str] = dict(same)
    for ln in body2:
        for old, new in subst.items():
            ln = re.sub(rf"\b{re.escape(old)}\b", new, ln)
        m = _LOAD_STMT.match(ln)
        if m and m[3].strip() in loads1:
            subst[m[2]] = loads1[m[3].strip()]
            continue
        out2.append(ln)
    indent1 = len(_lines(first.body)[0]) - len(_lines(first.body)[0].lstrip(" "))
    indent2 = len(body2[0]) - len(body2[0].lstrip(" ")) if body2 else indent1
    if indent2 != indent1:
        delta = indent1 - indent2
        out2 = [(" " * delta + ln) if delta > 0 else ln[-delta:] for ln in out2]
    fused = _Compound(first.header, _parse(_lines(first.body) + out2))
    _names_of_compound(fused)
    return block[:i] + hoist + [fused] + stay + later


def _fuse_block(block: list, same: dict[str, str], once: set[str]) -> tuple[list, bool]:
    changed = False
    same = {**same, **_same_values(block, once)}
    for node in block:
        if isinstance(node, _Compound) and _loop(node) is None:
            node.body, c = _fuse_block(node.body, same, once)
            changed |= c
    i = 0
    while i < len(block):
        rng = _loop(block[i])
        if rng is not None:
            for j in range(i + 1, len(block)):
                r2 = _loop(block[j])
                if r2 is not None and r2[1:] == rng[1:]:
                    new = _fuse_pair(block, i, j, same)
                    if new is not None:
                        block, changed = new, True
                        break
        i += 1
    return block, changed


def fuse_sibling_loops(body: list[str]) -> list[str]:
    """Stage body ``body`` (lines of one function body) with sibling K loops fused (see the module doc)."""
    tree = _parse(body)
    assigned: dict[str, int] = {}
    for ln in body:
        m = re.match(r"\s*([A-Za-z_]\w*)\s*(=|\+=|-=|\*=)(?!=)", ln)
        if m:
            assigned[m[1]] = assigned.get(m[1], 0) + (1 if m[2] == "=" else 2)
    once = {v for v, n in assigned.items() if n == 1}
    tree, changed = _fuse_block(tree, {}, once)
    return _lines(tree) if changed else body


__all__ = ["fuse_sibling_loops"]
