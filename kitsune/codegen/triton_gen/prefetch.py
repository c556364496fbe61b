"""Loads before waits: a stage's weights brought into L2 before its kernel waits for the previous one.

Under programmatic dependent launch (``PDL == 3``, runtime_text ``_pdl``) a kernel's programs may start while
the previous kernel still runs; they wait for it with ``griddepcontrol.wait``. What a program reads that no
kernel of the launch writes -- the parameters and constants -- does not depend on that wait, so its first work
item's share of them is prefetched into L2 first (bulk prefetches, fire and forget: nothing is read into
registers, nothing waits), and the HBM keeps streaming weights across the kernel boundary.

``PrefetchSink`` is what ``Memory.load`` reports to while a stage is generated *dry* (``StageGen(prefetch=True)``:
no loads, stores, index checks or waits are emitted, every loaded value is a block of zeros that Triton's dead
code elimination removes with all arithmetic on it). Each load of a parameter or constant whose indices over
the work item cover one contiguous range (``litem_span``: a row block of a weight matrix; not a gather, not a
column block of a row-major matrix) becomes one range; ``lines`` prefetches them, at most ``budget`` bytes per
program in all.
"""

from __future__ import annotations

import re

from kitsune.codegen.triton_gen.blocks import Blocks
from kitsune.codegen.triton_gen.emitter import Blk
from kitsune.codegen.triton_gen.index_algebra import Lin, litem_span
from kitsune.codegen.triton_gen.syntax import TL

#: bytes one kernel's programs prefetch in all (well inside the H100's 50 MB L2, ~5 us of HBM at 3 TB/s),
#: and the most / least one program does (``per_program``)
KERNEL_BUDGET = 16 << 20
PROGRAM_MAX = 64 << 10
PROGRAM_MIN = 4 << 10
#: chunks per range: ``_prefetch_l2`` issues one bulk prefetch per chunk (one per thread of 4 warps)
CHUNKS = 128

ESIZE = {"f32": 4, "bf16": 2, "f16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u8": 1, "i1": 1, "f64": 8}


def per_program(grid: int) -> int:
    """Bytes each of a kernel's ``grid`` programs may prefetch."""
    return max(PROGRAM_MIN, min(PROGRAM_MAX, KERNEL_BUDGET // max(grid, 1)))


class PrefetchSink:
    """The ranges of read-only tensors one work item reads, collected while its stage is generated dry."""

    def __init__(self, b: Blocks, read_only: set[str], budget: int):
        self.b = b
        self.read_only = read_only
        self.budget = budget
        self.ranges: dict[tuple[str, str], tuple[Lin, int]] = {}  # (tensor, first index) -> (first, bytes)

    def add(self, ptr: str, off: Lin, dt: str) -> None:
        """A load of ``ptr[off]``: kept when ``ptr`` is read-only and ``off`` spans one contiguous range."""
        if ptr not in self.read_only or dt not in ESIZE:
            return
        span = litem_span(off, self.b.steps)
        if span is None:
            return
        first, n = span
        key = (ptr, first.key())
        old = self.ranges.get(key)
        nbytes = n * ESIZE[dt]
        if old is None or old[1] < nbytes:
            self.ranges[key] = (first, nbytes)

    def lines(self) -> list[str]:
        """One ``_prefetch_l2`` call per range (in the order the loads came), the budget shared: a range smaller
        than its even share leaves the rest to the larger ones."""
        sizes = {}
        left, todo = self.budget, sorted(self.ranges, key=lambda k: self.ranges[k][1])
        for i, key in enumerate(todo):
            sizes[key] = min(self.ranges[key][1], max(CHUNKS * 16, left // (len(todo) - i)))
            left -= sizes[key]
        out = []
        for key, (first, _) in self.ranges.items():
            chunk = (-(-sizes[key] // CHUNKS) + 15) // 16 * 16
            out.append(f"_prefetch_l2({key[0]} + {self.b.render(first, ())}, {sizes[key]}, {chunk})")
        return out


_NAME = re.compile(r"[A-Za-z_]\w*")
_ASSIGN = re.compile(r"([A-Za-z_]\w*) = (.*)")


def prune(root: Blk, axis_lines: list[str]) -> list[str]:
    """The lines of a dry stage's body (``axis_lines`` then ``root``) that its prefetch calls need: every other
    assignment, and every block left empty, dropped (the arithmetic on the zeros the loads stood in with)."""
    body = Blk()
    body.items = [x.strip() for x in axis_lines] + list(root.items)
    needed: set[str] = set()

    def walk(blk: Blk) -> bool:
        """Add to ``needed`` what blk's kept lines use; whether it keeps any."""
        kept = False
        for it in reversed(blk.items):
            if isinstance(it, Blk):
                if walk(it):
                    kept = True
                    needed.update(_NAME.findall(it.header or ""))
                continue
            m = _ASSIGN.fullmatch(it)
            if m is None or m.group(1) in needed:
                kept = True
                needed.update(_NAME.findall(it if m is None else m.group(2)))
        return kept

    size = -1
    while size != len(needed):  # loop-carried names: until nothing more is needed
        size = len(needed)
        walk(body)

    def keep(blk: Blk) -> Blk:
        out = Blk(blk.header)
        for it in blk.items:
            if isinstance(it, Blk):
                inner = keep(it)
                if inner.items:
                    out.items.append(inner)
            else:
                m = _ASSIGN.fullmatch(it)
                if m is None or m.group(1) in needed:
                    out.items.append(it)
        return out

    return keep(body).lines(1)


def zeros_like_load(b: Blocks, frame: tuple, dt: str, raw: bool, kind: str) -> str:
    """The code of the block of zeros a dry load stands in with (the shape and type the real load has)."""
    shape = ", ".join(str(b.aranges[a]) for a in frame)
    if kind == "b":
        ty = "tl.int1"
    elif kind == "f":
        ty = TL[dt] if raw else "tl.float32"
    else:
        ty = TL[dt]
    return f"tl.zeros([{shape}], {ty})"


__all__ = ["PrefetchSink", "per_program", "prune", "zeros_like_load", "KERNEL_BUDGET"]
