"""Register blocks of one stage function: names, tile axes, frames, broadcasting, index rendering and masks.

A stage's values are Triton blocks whose axes are ``tl.arange`` ranges (``new_axis``); a value's *frame* is
the ordered subset of those axes it varies along, and ``place`` broadcasts it into a larger frame
(``x[:, None]``). Axes are *clamped* to the tile's extent (padded lanes repeat the last element) unless they
are *unclamped* lane axes, whose padded lanes run on and are masked (``lane_mask``, ``Memory.load``).

``Blocks`` is the vocabulary everything else emits through; it knows nothing of graph ops, stages or queues.
"""

from __future__ import annotations

from typing import Sequence

from kitsune.codegen.triton_gen.emitter import TV, Emitter
from kitsune.codegen.triton_gen.index_algebra import Atom, Lin, latom, laxes, ldepth, lrange
from kitsune.codegen.triton_gen.syntax import lit


class Blocks:
    def __init__(self):
        self.em = Emitter()
        self.n = 0
        self.memo: dict = {}  # values by (what, index): computed once per stage function
        self.aranges: dict[str, int] = {}
        self.order: list[str] = []  # axis order (frames are ordered subsets of it)
        self.clamp: dict[str, int] = {}  # tile axis -> the tile's extent (lanes past it are padding)
        self.unclamped: set[str] = set()  # padded axes whose lanes run on (masked) instead of repeating the last
        self.masked: dict[str, tuple] = {}  # value -> (mask, neutral) of the tl.where that made it
        self.steps: dict[str, int] = {}  # scalar -> the step its values are multiples of (a loop counter's)

    # ---- names and axes
    def fresh(self, p: str = "v") -> str:
        self.n += 1
        return f"{p}{self.n}"

    def new_axis(self, prefix: str, size: int, before: str | None = None) -> str:
        """A new axis of ``size`` lanes, last in the axis order (or just ``before`` another axis: values over
        both then have the new axis first)."""
        name = self.fresh(prefix)
        self.aranges[name] = size
        self.order.insert(self.order.index(before) if before is not None else len(self.order), name)
        return name

    def frame_of(self, axes) -> tuple:
        axes = set(axes)
        return tuple(a for a in self.order if a in axes)

    def union(self, *tvs: TV) -> tuple:
        axes = set()
        for t in tvs:
            axes |= set(t.frame)
        return self.frame_of(axes)

    @staticmethod
    def ordered(sub, frame) -> bool:
        """The axes of ``sub`` appear in ``frame`` in the same order."""
        pos = [frame.index(a) for a in sub]
        return pos == sorted(pos)

    # ---- values
    def place(self, tv: TV, frame: tuple) -> str:
        if tv.const is not None:
            return lit(tv.const) if tv.kind == "f" else str(int(tv.const))
        if tv.frame == frame or not tv.frame:
            return tv.code
        pos = [frame.index(a) for a in tv.frame]
        assert pos == sorted(pos), (tv.frame, frame)
        return tv.code + "[" + ", ".join(":" if a in tv.frame else "None" for a in frame) + "]"

    def tmp(self, code: str, frame: tuple, depth: int, kind: str = "f") -> TV:
        name = self.fresh()
        self.em.emit(f"{name} = {code}", depth)
        return TV(name, frame, depth, kind)

    def block(self, tv: TV, frame: tuple) -> str:
        """``tv`` as a full block of ``frame``'s shape (a constant filled, a value of fewer axes broadcast)."""
        shp = ", ".join(str(self.aranges[b]) for b in frame)
        if tv.const is not None:
            return f"tl.full([{shp}], {lit(tv.const)}, tl.float32)"
        if set(tv.frame) != set(frame):
            return f"tl.broadcast_to({self.place(tv, frame)}, [{shp}])"
        return self.place(tv, frame)

    def where(self, m: TV | None, a: TV, b: TV | float) -> TV:
        if m is None:
            return a
        if not isinstance(b, TV):
            b = TV("", (), 0, "f", float(b))
        key = (m.code, b.code if b.const is None else b.const)
        if self.masked.get(a.code) == key:  # where(m, where(m, x, n), n) is where(m, x, n)
            return a
        f = self.union(m, a, b)
        tv = self.tmp(f"tl.where({self.place(m, f)}, {self.place(a, f)}, {self.place(b, f)})", f,
                      max(m.depth, a.depth, b.depth), a.kind if a.kind == b.kind else "f")
        self.masked[tv.code] = key
        return tv

    # ---- index expressions
    def render(self, x: Lin, frame: tuple) -> str:
        parts = []
        for a, c in x.terms:
            s = self.render_atom(a, frame)
            parts.append(s if c == 1 else f"{c} * {s}")
        if x.const or not parts:
            parts.append(str(x.const))
        s = " + ".join(parts).replace("+ -", "- ")
        return s if len(parts) == 1 else f"({s})"

    def render_atom(self, a: Atom, frame: tuple) -> str:
        if a.kind == "axis":
            if frame == (a.key,):
                return a.key
            return a.key + "[" + ", ".join(":" if f == a.key else "None" for f in frame) + "]"
        if a.kind == "sym":
            return a.key
        if a.kind == "div":
            return f"({self.render(a.arg, frame)} // {a.c})"
        if a.kind == "mod":
            return f"({self.render(a.arg, frame)} % {a.c})"
        return self.place(a.arg_tv, frame)  # type: ignore[attr-defined]

    def val_atom(self, tv: TV) -> Lin:
        """A loaded value (an index tensor's) as an index term."""
        a = Atom("val", tv.code, None, None, frozenset(tv.frame), tv.depth)
        object.__setattr__(a, "arg_tv", tv)
        return latom(a)

    def sym(self, name: str, lo: int, hi: int, depth: int) -> Lin:
        """A scalar of [lo, hi] defined at loop depth ``depth`` (a tile coordinate, a loop counter)."""
        return latom(Atom("sym", name, lo, hi, frozenset(), depth))

    def axis(self, name: str, hi: int) -> Lin:
        """The lanes of axis ``name`` (values 0 .. hi)."""
        return latom(Atom("axis", name, 0, hi, frozenset([name]), 0))

    def lin_tv(self, x: Lin) -> TV:
        """An index expression as an integer value."""
        if not x.terms:
            return TV("", (), 0, "i", x.const)
        f = self.frame_of(laxes(x))
        return self.tmp(self.render(x, f), f, ldepth(x), "i")

    # ---- masks
    def conds(self, idx: Sequence[Lin], shape: Sequence[int]) -> list[tuple[Lin, str, int]]:
        """The bound checks of ``idx`` in ``shape`` that interval arithmetic cannot prove."""
        out = []
        for x, d in zip(idx, shape):
            lo, hi = lrange(x)
            if lo is None or lo < 0:
                out.append((x, ">=", 0))
            if hi is None or hi >= d:
                out.append((x, "<", d))
        return out

    def mask(self, cs: list[tuple[Lin, str, int]]) -> TV | None:
        if not cs:
            return None
        axes = frozenset().union(*(laxes(x) for x, _, _ in cs))
        frame = self.frame_of(axes)
        depth = max(ldepth(x) for x, _, _ in cs)
        key = ("mask", tuple((x.key(), o, c) for x, o, c in cs))
        if key in self.memo:
            return self.memo[key]
        code = " & ".join(f"({self.render(x, frame)} {o} {c})" for x, o, c in cs)
        tv = self.tmp(code, frame, depth, "b")
        self.memo[key] = tv
        return tv

    def mask_mixed(self, cs) -> TV | None:
        """The AND of conditions given as ``(Lin, op, bound)`` tuples and as boolean values (``TV``)."""
        lins = [c for c in cs if isinstance(c, tuple)]
        tvs = [c for c in cs if isinstance(c, TV)]
        m = self.mask(lins) if lins else None
        for t in tvs:
            if m is None:
                m = t
            else:
                f = self.union(m, t)
                m = self.tmp(f"{self.place(m, f)} & {self.place(t, f)}", f, max(m.depth, t.depth), "b")
        return m

    def raw(self, a: str, frame: tuple) -> str:
        """The unclamped lanes of axis ``a`` (``a_raw``) placed in ``frame``."""
        if frame == (a,):
            return f"{a}_raw"
        return f"{a}_raw[" + ", ".join(":" if f == a else "None" for f in frame) + "]"

    def lane_mask(self, frame: tuple) -> str | None:
        """The condition that excludes the padded lanes of the tile axes in ``frame`` (None: no padding)."""
        parts = []
        for a in frame:
            t = self.clamp.get(a)
            if t is not None and self.aranges[a] != t:  # padded lanes (pow2, or a tl.dot's 16) are masked
                parts.append(f"({self.raw(a, frame)} < {t})")
        return " & ".join(parts) if parts else None

    # ---- the function's prologue
    def axis_lines(self) -> list[str]:
        """The ``tl.arange`` of every axis and its clamped view (the stage function's first lines)."""
        lines = []
        for a, size in self.aranges.items():
            lines.append(f"    {a}_raw = tl.arange(0, {size})")
            t = self.clamp.get(a, size)
            clamped = t != size and a not in self.unclamped
            lines.append(f"    {a} = tl.minimum({a}_raw, {t - 1})" if clamped else f"    {a} = {a}_raw")
        return lines


__all__ = ["Blocks"]
