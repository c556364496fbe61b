"""Loads before waits (DESIGN.md, gpu_queue): under programmatic dependent launch a kernel's programs may start while
the kernel before it still runs. A program must wait for it (``griddepcontrol.wait``) before it touches anything the
launch writes, but not before it reads what no kernel of the launch writes: parameters, constants, inputs that are
not mutated. ``place_wait`` rewrites a stage body (the generator's Triton text) so that those reads, and the
arithmetic on them, come first and the wait sits just before the first statement that needs it.

The rewrite works on statements, never on expressions:

- a *simple* statement is an assignment whose calls are pure (loads, ``tl.*`` arithmetic; not a store, an atomic, a
  check or a ``_helper`` with effects). It is *early* if it names no buffer the launch writes and uses no value a
  later-placed statement defines; early statements move above the others (no name is read, written or overwritten
  across the move, and a read of a buffer nobody writes commutes with every store). A compound statement (a loop)
  all of whose statements are early moves as a whole: a GEMM's K loop over weights and inputs runs before the wait;
- a load of a written buffer that a single-iteration loop (``for it in range(0, 1)``: one work item per program) only
  uses inside it sinks into the loop's body, so that the weight loads of the work item come before it;
- the wait goes before the first statement left late. Inside a loop only where the loop runs at least once (literal
  bounds), and has one iteration or no tensor-core product (Triton's pipeliner must not meet an asm statement):
  anything after the loop is then behind the wait too. Anywhere else it goes before the compound statement.

Without PDL the wait is ``if PDL:`` on a constexpr 0 and the reordering is all that remains.
"""

from __future__ import annotations

import re

from kitsune.codegen.triton_gen.statements import (DOTS, Compound, Simple, code_of, independent, indent_of,
                                                   lines_of, literal_range, names_of_compound, parse, range_args,
                                                   reindent)

WAIT = ("if PDL:", "    gdc_wait()")

DEFAULT_PDL = 2
"""The programmatic-dependent-launch setting of a program the database has no entry for (``kitsune-tune
--launch``): the next kernel launched once every program of this one has done its work; each program's loads of
what the launch never writes are issued before it waits (``early_loads``). Measured on the H100 (bench/kernels/NOTES.md
section 27): on models outside the suite 2 is the fastest or within 0.4% of it (ResNet-18 853.5 us against 856.7 off
and 937.3 at 1, a BERT layer 183.3 / 184.6 / 189.4, GPT-2 1123.9 / 1174.3 / 1147.9), while 1, which wins on the
suite's GEMV chains and irregular graphs (its tuned entries), loses up to 9% there."""


def _late(s, unsafe: set[str]) -> bool:
    return not s.pure or bool(s.uses & unsafe)


def _sink_into_loops(block: list, unsafe: set[str]) -> list:
    """Loads of written buffers (and what is computed from them) before a single-iteration loop that only it uses
    move into its body's start."""
    block = list(block)
    tainted = set(unsafe)  # names whose values depend on a written buffer
    for s in block:
        if s.uses & tainted or not s.pure:
            tainted |= s.defs
    for i in reversed(range(len(block))):
        s = block[i]
        if not isinstance(s, Simple) or not s.pure or not (s.uses & tainted) or not s.defs:
            continue
        j = i + 1
        while j < len(block) and isinstance(block[j], Simple) and block[j].pure and independent(s, block[j]):
            j += 1
        if j >= len(block) or not isinstance(block[j], Compound):
            continue
        loop = block[j]
        lr = literal_range(loop)
        after = set().union(*[t.uses for t in block[j + 1:]]) if j + 1 < len(block) else set()
        if lr is None or lr[1] != 1 or lr[0] in s.uses or s.defs & after:
            continue
        body_indent = next((indent_of(ln) for ln in lines_of(loop.body) if code_of(ln)), None)
        own_indent = next(indent_of(ln) for ln in s.lines if code_of(ln))
        if body_indent is None:
            continue
        moved = Simple(reindent(s.lines, body_indent - own_indent), s.uses, s.defs, s.pure)
        loop.body = [moved] + loop.body
        del block[i]
    return block


def _descends(s) -> bool:
    """The wait may go inside compound statement ``s``: a loop with literal bounds that runs at least once (so
    that what follows it is behind the wait too) and has no tensor-core product (Triton's pipeliner would meet the
    wait's asm statement in its body; a single iteration is not pipelined)."""
    if not isinstance(s, Compound):
        return False
    lr = literal_range(s)
    return lr is not None and (lr[1] == 1 or lr[1] > 1 and not DOTS.search("\n".join(lines_of(s.body))))


def _schedule(block: list, unsafe: set[str], indent: int, whole: str | None) -> tuple[list[str], bool]:
    """The block's text with its early statements first and the wait placed; True if a wait was placed
    (``whole``: the function's code, for the names ``_peel`` may rename; None: no loop is peeled)."""
    block = _sink_into_loops(block, unsafe)
    # the statements up to the first compound statement that touches a written buffer (or has an effect): a
    # compound one that does not (a K loop over weights and inputs) moves as a whole
    early, late = [], []
    n = len(block)
    for i, s in enumerate(block):
        if isinstance(s, Compound) and (_late(s, unsafe) or any(not independent(s, t) for t in late)):
            n = i
            break
        if not _late(s, unsafe) and all(independent(s, t) for t in late):
            early.append(s)
        else:
            late.append(s)
    pad = " " * indent
    wait = [pad + WAIT[0], pad + WAIT[1]]
    if late and n < len(block) and _descends(block[n]) and block[n].pure and all(
            s.pure and independent(s, block[n]) for s in late):
        # the late loads wait after the loop, which reads nothing they write and writes nothing
        return _schedule(early + [block[n]] + late + block[n + 1:], unsafe, indent, whole)
    if whole is not None and n < len(block) and (late or not _descends(block[n])):  # the wait would go before
        # the loop
        peeled = _peel(block, n, unsafe, indent, whole)
        if peeled is not None:
            return _schedule(early + late + peeled, unsafe, indent, whole)
    if late:
        return lines_of(early) + wait + lines_of(late) + lines_of(block[n:]), True
    if n == len(block):
        return lines_of(block), False
    loop = block[n]
    if _descends(loop):
        body_indent = next((indent_of(ln) for ln in lines_of(loop.body) if code_of(ln)), indent + 4)
        inner, placed = _schedule(loop.body, unsafe, body_indent, whole)
        if placed:
            return lines_of(early) + loop.header + inner + lines_of(block[n + 1:]), True
        rest, placed = _schedule(block[n + 1:], unsafe, indent, whole)
        return lines_of(early) + loop.header + inner + rest, placed
    return lines_of(early) + wait + lines_of(block[n:]), True


PEEL_MAX = 8
"""The longest loop (literal trip count) whose first iteration ``_peel`` copies out: a memory-bound K loop of a
gemv or a decode attention (2-8 chunks), not a GEMM's long K loop, whose first chunk matters little."""


def _peel(block: list, n: int, unsafe: set[str], indent: int, whole: str) -> list | None:
    """``block[n:]`` with the first iteration of loop ``block[n]`` copied out before it, where the wait cannot go
    inside the loop (a tensor-core product: Triton's pipeliner must not meet the wait) and that iteration reads
    something the launch never writes (a weight chunk, a block of the KV cache): the copy's reads then go before
    the wait like any straight-line statement. The copy's loop variable and the names it alone defines (not
    carried from one iteration to the next, not read after the loop) take a suffix, so that Triton does not carry
    them through the loop. None where the loop is not such a loop."""
    loop = block[n]
    if not isinstance(loop, Compound) or loop.peeled:
        return None
    lr, ra = literal_range(loop), range_args(loop)
    if lr is None or not 2 <= lr[1] <= PEEL_MAX:
        return None
    var, a, b, step = ra
    body = lines_of(loop.body)
    text = "\n".join(code_of(ln) for ln in body)
    if re.search(r"\b(break|continue|return)\b", text):
        return None
    if not any(isinstance(s, Simple) and s.pure and not (s.uses & unsafe) and "load(" in code_of(" ".join(s.lines))
               for s in loop.body):
        return None  # nothing to read early
    # names the body defines before any use in it (not carried) and that nothing after the loop reads
    after = set().union(*[s.uses for s in block[n + 1:]]) if n + 1 < len(block) else set()
    carried, seen = set(), set()
    for s in loop.body:
        carried |= (s.uses - seen) & loop.defs
        seen |= s.defs
    inside = "\n".join(code_of(ln) for ln in loop.header + body)

    def only_inside(v: str) -> bool:  # every mention of v in the function is in the loop
        p = re.compile(rf"\b{re.escape(v)}\b")
        return len(p.findall(whole)) == len(p.findall(inside))

    local = sorted({v for v in loop.defs - carried - after if only_inside(v)} | {var})
    rename = {v: f"{v}_p0" for v in local}
    pat = re.compile(r"\b(" + "|".join(map(re.escape, rename)) + r")\b")
    body_indent = next((indent_of(ln) for ln in body if code_of(ln)), indent + 4)
    pad = " " * indent
    copy = [pad + f"{rename[var]} = {a}  # the first iteration of the loop below, copied out (loads before waits)"]
    copy += [pad + pat.sub(lambda mm: rename[mm.group(1)], ln[body_indent:] if not ln[:body_indent].strip()
                           else ln.lstrip()) if ln.strip() else ln for ln in body]
    hdr_indent = " " * indent_of(next(ln for ln in loop.header if code_of(ln)))
    rest = Compound(loop.header[:-1] + [f"{hdr_indent}for {var} in range({a + step}, {b}, {step}):"], loop.body,
                     peeled=True)
    names_of_compound(rest)
    return parse(copy) + [rest] + block[n + 1:]


def place_wait(body: list[str], unsafe: set[str], peel: bool = False) -> list[str]:
    """Stage body ``body`` (lines of one function body) with the launch-constant reads first and ``if PDL:
    gdc_wait()`` before the first statement that reads a name in ``unsafe`` (buffers the launch writes, the
    counters) or has an effect. A body that needs no wait comes back reordered only. ``peel``: a loop the wait
    would precede has its first iteration copied out (``_peel``), for its reads of launch constants."""
    code = [ln for ln in body if code_of(ln)]
    if not code:
        return body
    indent = indent_of(code[0])
    out, _ = _schedule(parse(body), unsafe, indent, "\n".join(code_of(ln) for ln in body) if peel else None)
    return out
