"""Compile-phase timers: where the time of a ``kitsune.compile`` goes.

``with phase("codegen"): ...`` adds the block's wall time to the phase's entry of the recorder active in this
thread, if there is one (nothing is recorded, and almost nothing spent, otherwise). ``recording()`` makes a
recorder active for its block and yields it: a dict phase name -> seconds, in the order the phases first ran.
``kitsune.compile`` records one around itself and keeps it as ``CompiledModel.compile_times``; phases of a
graph whose lowering came from the in-process cache are absent there (they did not run).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator

_local = threading.local()


@contextmanager
def recording() -> Iterator[dict[str, float]]:
    """Record the phases run in this thread during the block (nested: the inner recorder gets them)."""
    rec: dict[str, float] = {}
    prev = getattr(_local, "rec", None)
    _local.rec = rec
    try:
        yield rec
    finally:
        _local.rec = prev


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Add the block's wall time to phase ``name`` of the active recorder (if any)."""
    rec = getattr(_local, "rec", None)
    if rec is None:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        rec[name] = rec.get(name, 0.0) + time.perf_counter() - t0


__all__ = ["recording", "phase"]
