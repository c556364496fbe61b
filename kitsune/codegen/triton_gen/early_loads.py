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

import ast
import re
import textwrap
from dataclasses import dataclass, field

from kitsune.codegen.triton_gen.syntax import code_part

WAIT = ("if PDL:", "    gdc_wait()")

DEFAULT_PDL = 2
"""The programmatic-dependent-launch setting of a program the database has no entry for (``kitsune-tune
--launch``): the next kernel launched once every program of this one has done its work; each program's loads of
what the launch never writes are issued before it waits (``early_loads``). Measured on the H100 (bench/kernels/NOTES.md
section 27): on models outside the suite 2 is the fastest or within 0.4% of it (ResNet-18 853.5 us against 856.7 off
and 937.3 at 1, a BERT layer 183.3 / 184.6 / 189.4, GPT-2 1123.9 / 1174.3 / 1147.9), while 1, which wins on the
suite's GEMV chains and irregular graphs (its tuned entries), loses up to 9% there."""

_PURE_HELPERS = {"_dot_lp", "_mul_combine", "_max_combine", "_min_combine"}
_EFFECTS = {"store", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg", "atomic_or",
            "atomic_and", "atomic_xor", "debug_barrier", "inline_asm_elementwise", "device_print", "device_assert",
            "gdc_wait", "gdc_launch_dependents"}
_DOTS = re.compile(r"\btl\.dot\(|\b_dot_lp\(|\.load\(\[|\bwarpgroup_mma\b")


@dataclass
class _Simple:
    lines: list[str]
    uses: set[str] = field(default_factory=set)
    defs: set[str] = field(default_factory=set)
    pure: bool = False


@dataclass
class _Compound:
    header: list[str]  # the header line(s) of the statement (its comments first)
    body: list  # list of _Simple | _Compound
    clauses: list = field(default_factory=list)  # (header lines, body) of its elif / else
    uses: set[str] = field(default_factory=set)  # every name it or its clauses mention
    defs: set[str] = field(default_factory=set)
    pure: bool = True  # every statement inside is pure
    peeled: bool = False  # its first iteration was copied out (``_peel``): not again


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _code(line: str) -> str:
    return code_part(line).strip()


def _statements(lines: list[str]) -> list[list[str]]:
    """``lines`` as statements: a statement's continuation lines (inside open brackets) and the comment lines
    before it stay with it."""
    out, cur, depth, pending = [], [], 0, []
    for ln in lines:
        code = _code(ln)
        if depth == 0 and not code:  # a comment or a blank line: goes with the next statement
            pending.append(ln)
            continue
        if depth == 0:
            cur = pending + [ln]
            pending = []
            out.append(cur)
        else:
            cur.append(ln)
        depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
    if pending:
        out.append(pending)
    return out


def _parse(lines: list[str]) -> list:
    """A block of statements at one indentation (the first code line's) as a tree."""
    stmts = _statements(lines)
    base = next((_indent(ln) for s in stmts for ln in s if _code(ln)), 0)
    out: list = []
    i = 0
    while i < len(stmts):
        s = stmts[i]
        head = [ln for ln in s if _code(ln)]
        if not head:  # trailing comments
            out.append(_Simple(s, pure=True))
            i += 1
            continue
        j = i + 1
        body_lines: list[str] = []
        while j < len(stmts) and _first_indent(stmts[j]) > base:
            body_lines += stmts[j]
            j += 1
        if _code(head[-1]).endswith(":"):
            node = _Compound(s, _parse(body_lines))
            # elif / else clauses at the same indentation belong to this statement
            while j < len(stmts) and re.match(r"(elif\b|else\s*:)", _code(next(ln for ln in stmts[j] if _code(ln)))):
                cl = stmts[j]
                k = j + 1
                cl_body: list[str] = []
                while k < len(stmts) and _first_indent(stmts[k]) > base:
                    cl_body += stmts[k]
                    k += 1
                node.clauses.append((cl, _parse(cl_body)))
                j = k
            _names_of_compound(node)
            out.append(node)
        else:
            out.append(_simple(s + body_lines))
        i = j
    return out


def _first_indent(stmt: list[str]) -> int:
    return next((_indent(ln) for ln in stmt if _code(ln)), 1 << 30)


def _simple(lines: list[str]) -> _Simple:
    st = _Simple(lines)
    src = textwrap.dedent("\n".join(ln for ln in lines if _code(ln) or ln.strip()))
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return st  # impure: nothing moves across it
    _collect(tree, st.uses, st.defs)
    body = tree.body
    doc = len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    st.pure = doc or (len(body) == 1 and isinstance(body[0], (ast.Assign, ast.AugAssign, ast.AnnAssign))
                      and all(_call_pure(c) for c in ast.walk(body[0]) if isinstance(c, ast.Call)))
    return st


def _call_pure(call: ast.Call) -> bool:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr not in _EFFECTS
    if isinstance(f, ast.Name):
        return not f.id.startswith("_") or f.id in _PURE_HELPERS
    return False


def _collect(tree, uses: set[str], defs: set[str]) -> None:
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (defs if isinstance(n.ctx, ast.Store) else uses).add(n.id)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            uses.add(n.target.id)


def _names_of_compound(node: _Compound) -> None:
    src = "\n".join(_code(ln) for ln in node.header if _code(ln))
    try:
        hdr = ast.parse(src + "\n    pass")
    except SyntaxError:
        hdr = None
    if hdr is not None:
        _collect(hdr, node.uses, node.defs)
    for blk in [node.body] + [b for _, b in node.clauses]:
        for s in blk:
            node.uses |= s.uses
            node.defs |= s.defs
            node.pure = node.pure and s.pure
    for cl, _ in node.clauses:
        node.uses |= set(re.findall(r"[A-Za-z_]\w*", " ".join(_code(ln) for ln in cl)))


def _range_args(node: _Compound) -> tuple[str, int, int, int] | None:
    """(loop variable, start, stop, step) of ``for v in range(a, b[, s]):`` with integer literals and s > 0, else
    None."""
    if node.clauses:
        return None
    header = " ".join(_code(ln) for ln in node.header if _code(ln))
    m = re.fullmatch(r"for\s+(\w+)\s+in\s+range\(([^()]*)\)\s*:", header)
    if not m:
        return None
    try:
        args = [int(a) for a in m.group(2).split(",")]
    except ValueError:
        return None
    a, b, s = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
    return (m.group(1), a, b, s) if s > 0 else None


def _literal_range(node: _Compound) -> tuple[str, int] | None:
    """(loop variable, trip count) of ``for v in range(a, b[, s]):`` with integer literals, else None."""
    r = _range_args(node)
    return None if r is None else (r[0], max(0, -(-(r[2] - r[1]) // r[3])))


def _lines(block: list) -> list[str]:
    out: list[str] = []
    for s in block:
        if isinstance(s, _Simple):
            out += s.lines
        else:
            out += s.header + _lines(s.body)
            for cl, b in s.clauses:
                out += cl + _lines(b)
    return out


def _reindent(lines: list[str], delta: int) -> list[str]:
    return [(" " * delta + ln) if ln.strip() else ln for ln in lines]


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
        if not isinstance(s, _Simple) or not s.pure or not (s.uses & tainted) or not s.defs:
            continue
        j = i + 1
        while j < len(block) and isinstance(block[j], _Simple) and block[j].pure and _independent(s, block[j]):
            j += 1
        if j >= len(block) or not isinstance(block[j], _Compound):
            continue
        loop = block[j]
        lr = _literal_range(loop)
        after = set().union(*[t.uses for t in block[j + 1:]]) if j + 1 < len(block) else set()
        if lr is None or lr[1] != 1 or lr[0] in s.uses or s.defs & after:
            continue
        body_indent = next((_indent(ln) for ln in _lines(loop.body) if _code(ln)), None)
        own_indent = next(_indent(ln) for ln in s.lines if _code(ln))
        if body_indent is None:
            continue
        moved = _Simple(_reindent(s.lines, body_indent - own_indent), s.uses, s.defs, s.pure)
        loop.body = [moved] + loop.body
        del block[i]
    return block


def _independent(a: _Simple, b) -> bool:
    """``a`` and ``b`` may swap: neither reads or writes a name the other writes."""
    return not (a.defs & (b.uses | b.defs) or b.defs & a.uses)


def _descends(s) -> bool:
    """The wait may go inside compound statement ``s``: a loop with literal bounds that runs at least once (so
    that what follows it is behind the wait too) and has no tensor-core product (Triton's pipeliner would meet the
    wait's asm statement in its body; a single iteration is not pipelined)."""
    if not isinstance(s, _Compound):
        return False
    lr = _literal_range(s)
    return lr is not None and (lr[1] == 1 or lr[1] > 1 and not _DOTS.search("\n".join(_lines(s.body))))


def _schedule(block: list, unsafe: set[str], indent: int, whole: str | None) -> tuple[list[str], bool]:
    """The block's text with its early statements first and the wait placed; True if a wait was placed
    (``whole``: the function's code, for the names ``_peel`` may rename; None: no loop is peeled)."""
    block = _sink_into_loops(block, unsafe)
    # the statements up to the first compound statement that touches a written buffer (or has an effect): a
    # compound one that does not (a K loop over weights and inputs) moves as a whole
    early, late = [], []
    n = len(block)
    for i, s in enumerate(block):
        if isinstance(s, _Compound) and (_late(s, unsafe) or any(not _independent(s, t) for t in late)):
            n = i
            break
        if not _late(s, unsafe) and all(_independent(s, t) for t in late):
            early.append(s)
        else:
            late.append(s)
    pad = " " * indent
    wait = [pad + WAIT[0], pad + WAIT[1]]
    if late and n < len(block) and _descends(block[n]) and block[n].pure and all(
            s.pure and _independent(s, block[n]) for s in late):
        # the late loads wait after the loop, which reads nothing they write and writes nothing
        return _schedule(early + [block[n]] + late + block[n + 1:], unsafe, indent, whole)
    if whole is not None and n < len(block) and (late or not _descends(block[n])):  # the wait would go before
        # the loop
        peeled = _peel(block, n, unsafe, indent, whole)
        if peeled is not None:
            return _schedule(early + late + peeled, unsafe, indent, whole)
    if late:
        return _lines(early) + wait + _lines(late) + _lines(block[n:]), True
    if n == len(block):
        return _lines(block), False
    loop = block[n]
    if _descends(loop):
        body_indent = next((_indent(ln) for ln in _lines(loop.body) if _code(ln)), indent + 4)
        inner, placed = _schedule(loop.body, unsafe, body_indent, whole)
        if placed:
            return _lines(early) + loop.header + inner + _lines(block[n + 1:]), True
        rest, placed = _schedule(block[n + 1:], unsafe, indent, whole)
        return _lines(early) + loop.header + inner + rest, placed
    return _lines(early) + wait + _lines(block[n:]), True


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
    if not isinstance(loop, _Compound) or loop.peeled:
        return None
    lr, ra = _literal_range(loop), _range_args(loop)
    if lr is None or not 2 <= lr[1] <= PEEL_MAX:
        return None
    var, a, b, step = ra
    body = _lines(loop.body)
    text = "\n".join(_code(ln) for ln in body)
    if re.search(r"\b(break|continue|return)\b", text):
        return None
    if not any(isinstance(s, _Simple) and s.pure and not (s.uses & unsafe) and "load(" in _code(" ".join(s.lines))
               for s in loop.body):
        return None  # nothing to read early
    # names the body defines before any use in it (not carried) and that nothing after the loop reads
    after = set().union(*[s.uses for s in block[n + 1:]]) if n + 1 < len(block) else set()
    carried, seen = set(), set()
    for s in loop.body:
        carried |= (s.uses - seen) & loop.defs
        seen |= s.defs
    inside = "\n".join(_code(ln) for ln in loop.header + body)

    def only_inside(v: str) -> bool:  # every mention of v in the function is in the loop
        p = re.compile(rf"\b{re.escape(v)}\b")
        return len(p.findall(whole)) == len(p.findall(inside))

    local = sorted({v for v in loop.defs - carried - after if only_inside(v)} | {var})
    rename = {v: f"{v}_p0" for v in local}
    pat = re.compile(r"\b(" + "|".join(map(re.escape, rename)) + r")\b")
    body_indent = next((_indent(ln) for ln in body if _code(ln)), indent + 4)
    pad = " " * indent
    copy = [pad + f"{rename[var]} = {a}  # the first iteration of the loop below, copied out (loads before waits)"]
    copy += [pad + pat.sub(lambda mm: rename[mm.group(1)], ln[body_indent:] if not ln[:body_indent].strip()
                           else ln.lstrip()) if ln.strip() else ln for ln in body]
    hdr_indent = " " * _indent(next(ln for ln in loop.header if _code(ln)))
    rest = _Compound(loop.header[:-1] + [f"{hdr_indent}for {var} in range({a + step}, {b}, {step}):"], loop.body,
                     peeled=True)
    _names_of_compound(rest)
    return _parse(copy) + [rest] + block[n + 1:]


def place_wait(body: list[str], unsafe: set[str], peel: bool = False) -> list[str]:
    """Stage body ``body`` (lines of one function body) with the launch-constant reads first and ``if PDL:
    gdc_wait()`` before the first statement that reads a name in ``unsafe`` (buffers the launch writes, the
    counters) or has an effect. A body that needs no wait comes back reordered only. ``peel``: a loop the wait
    would precede has its first iteration copied out (``_peel``), for its reads of launch constants."""
    code = [ln for ln in body if _code(ln)]
    if not code:
        return body
    indent = _indent(code[0])
    out, _ = _schedule(_parse(body), unsafe, indent, "\n".join(_code(ln) for ln in body) if peel else None)
    return out
