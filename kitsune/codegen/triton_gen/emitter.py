"""Generated code as nested blocks of lines, and the values held in registers.

``Emitter`` keeps a stack of open blocks, one per loop depth: depth 0 is the stage function's body, depth 1
the tile (inside the loop over work items), deeper ones the reduction loops. ``emit(line, depth)`` puts a
line into the block of its depth *before* any loop still open there, which is how loop-invariant code
(anything that does not depend on a loop counter) is hoisted out of a loop.

``TV`` is a value in registers: the name of a block (or a literal) and the frame of tile axes it varies
along.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TV:
    """A value in registers: ``code`` has exactly the shape of ``frame`` (the axes it varies along)."""

    code: str
    frame: tuple
    depth: int
    kind: str = "f"  # f | i | b
    const: float | None = None


class Blk:
    """A block of lines under an optional header (``for ...:``, ``if ...:``); items are lines or blocks."""

    def __init__(self, header: str | None = None):
        self.header = header
        self.items: list = []
        self.open: Blk | None = None

    def lines(self, indent: int) -> list[str]:
        out = []
        pad = "    " * indent
        if self.header is not None:
            out.append(pad + self.header)
            inner = indent + 1
        else:
            inner = indent
        if self.header is not None and not self.items:
            out.append("    " * inner + "pass")
        for it in self.items:
            if isinstance(it, Blk):
                out += it.lines(inner)
            else:
                out.append("    " * inner + it)
        return out


class Emitter:
    """Code in nested blocks; a line goes to the block of its depth, before any loop still open there."""

    def __init__(self):
        self.root = Blk()
        self.active: list[Blk] = [self.root]
        self.floor = 0  # the shallowest depth a line may land at (1: nothing is hoisted above the tile loop)

    def emit(self, item, depth: int) -> None:
        b = self.active[max(depth, min(self.floor, len(self.active) - 1))]
        if b.open is not None:
            b.items.insert(next(i for i, x in enumerate(b.items) if x is b.open), item)
        else:
            b.items.append(item)

    def open(self, header: str, depth: int):
        """Open a block (a loop) at ``depth``: its body is depth + 1. Returns what ``close`` restores."""
        nb = Blk(header)
        self.emit(nb, depth)
        b = self.active[depth]
        saved = (b.open, self.active[depth + 1:])
        b.open = nb
        self.active = self.active[:depth + 1] + [nb]
        return saved

    def close(self, depth: int, saved) -> None:
        b = self.active[depth]
        b.open = saved[0]
        self.active = self.active[:depth + 1] + list(saved[1])

    def enter(self, header: str, depth: int) -> Blk:
        """Open a block (an ``if`` around the rest of the tile) that *replaces* the block of ``depth``: what is
        emitted at ``depth`` from now on goes inside it. Returns the block it replaced, for ``leave``."""
        outer = self.active[depth]
        self.open(header, depth)
        self.active = self.active[:depth] + [self.active[depth + 1]]
        return outer

    def leave(self, depth: int, outer: Blk) -> None:
        """Back to the block ``enter`` replaced: lines of ``depth`` go after the entered block again."""
        outer.open = None
        self.active = self.active[:depth] + [outer]


__all__ = ["TV", "Blk", "Emitter"]
