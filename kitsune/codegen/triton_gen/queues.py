"""A stage's queue traffic (see ``kitsune.codegen.plan`` for the counters and the epoch protocol): the waits
for the producer tiles a consumer tile reads, their release after the tile's work, and the push of the
output tile into its ring-buffer slot (wait until the slot is free, store, publish). ``ctr`` is the kernel's
counter region and ``cbase`` its start (``TritonGen.counter_params``): a watchdog's code is the queue's first
counter in the whole array (``QUEUE_CODES``)."""

from __future__ import annotations

import math

from kitsune.codegen.plan import Queue, Stage
from kitsune.codegen.triton_gen.blocks import Blocks
from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.index_algebra import ladd, lconst, lscale, strides
from kitsune.codegen.triton_gen.memory import Memory
from kitsune.codegen.triton_gen.tiling import OutputTile


class QueueTraffic:
    def __init__(self, stage: Stage, blocks: Blocks, memory: Memory, tile: OutputTile):
        self.stage = stage
        self.b = blocks
        self.mem = memory
        self.tile = tile

    def wait_popped(self) -> None:
        """Wait for the tiles of every popped queue this tile reads (in the tile, before its work)."""
        for p, q in self.stage.pops:
            self.b.em.emit(self.pop_call("_pop_wait", q), 1)

    def free_popped(self) -> None:
        """Give the slots of the popped tiles back (after the tile's work)."""
        for p, q in self.stage.pops:
            self.b.em.emit(self.pop_call("_pop_free", q), 1)

    def push(self, q: Queue, tv: TV) -> None:
        """Store the output tile's value ``tv`` into its slot of queue ``q`` and publish it."""
        tstr = strides(q.tile)
        offs = [lscale(self.tile.local[d], tstr[d]) for d, t in enumerate(self.stage.tile) if t > 1]
        slot_base = f"(t % {q.capacity}) * {q.tile_elems}" if q.capacity < q.ntiles else f"t * {q.tile_elems}"
        self.b.em.emit(f"_push_wait(ctr, {q.counter_base}, t, {q.capacity}, {q.ntiles}, {q.readers}, epoch, err, "
                       f"cbase + {q.counter_base}, WATCHDOG)", 1)
        self.mem.store(f"{q.storage} + {slot_base}", ladd(*offs) if offs else lconst(0), tv,
                       self.b.mask(self.b.conds(self.tile.idx, q.shape)), q.dtype)
        self.b.em.emit(f"_push_done(ctr, {q.counter_base}, t, {q.capacity})", 1)

    def pop_call(self, fn: str, q: Queue) -> str:
        """The ``_pop_wait`` / ``_pop_free`` line of queue ``q``."""
        # the producer tiles this consumer tile reads: its own (tile), its row band (rows), all (all)
        if q.relation == "tile":
            j0, n = "t", 1
        elif q.relation == "rows":
            cg = self.stage.grid
            lead = cg[:-1]
            j0 = "0"
            if lead and math.prod(lead) > 1:
                j0 = f"(t // {cg[-1]}) * {q.grid[-1]}"
            n = q.grid[-1]
        else:
            j0, n = "0", q.ntiles
        if fn == "_pop_wait":
            return (f"_pop_wait(ctr, {q.counter_base}, {j0}, {n}, {q.capacity}, {q.ntiles}, epoch, err, "
                    f"cbase + {q.counter_base}, WATCHDOG)  # queue \"{q.name}\" ({q.relation}) from stage \"{q.producer}\"")
        return f"_pop_free(ctr, {q.counter_base}, {j0}, {n}, {q.capacity})  # queue \"{q.name}\""


__all__ = ["QueueTraffic"]
