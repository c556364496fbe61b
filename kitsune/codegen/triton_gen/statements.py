"""A stage body's Triton text as a tree of statements, with the names each reads and writes: what the rewrites of the
generator's text (``early_loads``: loads before waits; ``loop_fusion``: sibling K loops) reorder, move and merge.

A *simple* statement is an assignment (its continuation lines and the comments before it included); it is *pure*
if its calls are (loads, ``tl.*`` arithmetic; not a store, an atomic, a check or a ``_helper`` with effects). A
*compound* statement is a header ending in ``:`` (a loop, an ``if``) with its body and its ``elif`` / ``else``
clauses; its names are those of everything inside it.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field

from kitsune.codegen.triton_gen.syntax import code_part

_PURE_HELPERS = {"_dot_lp", "_mul_combine", "_max_combine", "_min_combine"}
_EFFECTS = {"store", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg", "atomic_or",
            "atomic_and", "atomic_xor", "debug_barrier", "inline_asm_elementwise", "device_print", "device_assert",
            "gdc_wait", "gdc_launch_dependents"}
DOTS = re.compile(r"\btl\.dot\(|\b_dot_lp\(|\.load\(\[|\bwarpgroup_mma\b")


@dataclass
class Simple:
    lines: list[str]
    uses: set[str] = field(default_factory=set)
    defs: set[str] = field(default_factory=set)
    pure: bool = False


@dataclass
class Compound:
    header: list[str]  # the header line(s) of the statement (its comments first)
    body: list  # list of Simple | Compound
    clauses: list = field(default_factory=list)  # (header lines, body) of its elif / else
    uses: set[str] = field(default_factory=set)  # every name it or its clauses mention
    defs: set[str] = field(default_factory=set)
    pure: bool = True  # every statement inside is pure
    peeled: bool = False  # its first iteration was copied out (``_peel``): not again
    loops: int = 1  # the loops of the stage it stands for (``loop_fusion`` merges several into one)


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def code_of(line: str) -> str:
    return code_part(line).strip()


def _statements(lines: list[str]) -> list[list[str]]:
    """``lines`` as statements: a statement's continuation lines (inside open brackets) and the comment lines
    before it stay with it."""
    out, cur, depth, pending = [], [], 0, []
    for ln in lines:
        code = code_of(ln)
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


def parse(lines: list[str]) -> list:
    """A block of statements at one indentation (the first code line's) as a tree."""
    stmts = _statements(lines)
    base = next((indent_of(ln) for s in stmts for ln in s if code_of(ln)), 0)
    out: list = []
    i = 0
    while i < len(stmts):
        s = stmts[i]
        head = [ln for ln in s if code_of(ln)]
        if not head:  # trailing comments
            out.append(Simple(s, pure=True))
            i += 1
            continue
        j = i + 1
        body_lines: list[str] = []
        while j < len(stmts) and _first_indent(stmts[j]) > base:
            body_lines += stmts[j]
            j += 1
        if code_of(head[-1]).endswith(":"):
            node = Compound(s, parse(body_lines))
            # elif / else clauses at the same indentation belong to this statement
            while j < len(stmts) and re.match(r"(elif\b|else\s*:)", code_of(next(ln for ln in stmts[j] if code_of(ln)))):
                cl = stmts[j]
                k = j + 1
                cl_body: list[str] = []
                while k < len(stmts) and _first_indent(stmts[k]) > base:
                    cl_body += stmts[k]
                    k += 1
                node.clauses.append((cl, parse(cl_body)))
                j = k
            names_of_compound(node)
            out.append(node)
        else:
            out.append(_simple(s + body_lines))
        i = j
    return out


def _first_indent(stmt: list[str]) -> int:
    return next((indent_of(ln) for ln in stmt if code_of(ln)), 1 << 30)


def _simple(lines: list[str]) -> Simple:
    st = Simple(lines)
    src = textwrap.dedent("\n".join(ln for ln in lines if code_of(ln) or ln.strip()))
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


def names_of_compound(node: Compound) -> None:
    src = "\n".join(code_of(ln) for ln in node.header if code_of(ln))
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
        node.uses |= set(re.findall(r"[A-Za-z_]\w*", " ".join(code_of(ln) for ln in cl)))


def range_args(node: Compound) -> tuple[str, int, int, int] | None:
    """(loop variable, start, stop, step) of ``for v in range(a, b[, s]):`` with integer literals and s > 0, else
    None."""
    if node.clauses:
        return None
    header = " ".join(code_of(ln) for ln in node.header if code_of(ln))
    m = re.fullmatch(r"for\s+(\w+)\s+in\s+range\(([^()]*)\)\s*:", header)
    if not m:
        return None
    try:
        args = [int(a) for a in m.group(2).split(",")]
    except ValueError:
        return None
    a, b, s = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
    return (m.group(1), a, b, s) if s > 0 else None


def literal_range(node: Compound) -> tuple[str, int] | None:
    """(loop variable, trip count) of ``for v in range(a, b[, s]):`` with integer literals, else None."""
    r = range_args(node)
    return None if r is None else (r[0], max(0, -(-(r[2] - r[1]) // r[3])))


def lines_of(block: list) -> list[str]:
    out: list[str] = []
    for s in block:
        if isinstance(s, Simple):
            out += s.lines
        else:
            out += s.header + lines_of(s.body)
            for cl, b in s.clauses:
                out += cl + lines_of(b)
    return out


def reindent(lines: list[str], delta: int) -> list[str]:
    return [(" " * delta + ln) if ln.strip() else ln for ln in lines]


def independent(a: Simple, b) -> bool:
    """``a`` and ``b`` may swap: neither reads or writes a name the other writes."""
    return not (a.defs & (b.uses | b.defs) or b.defs & a.uses)


__all__ = ["Simple", "Compound", "DOTS", "parse", "lines_of", "code_of", "indent_of", "reindent", "range_args",
           "literal_range", "names_of_compound", "independent"]
