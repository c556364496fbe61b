"""Replays of a program's CUDA graph that hand their outputs to the caller without copying them.

A CUDA graph writes its outputs to fixed addresses, so a caller that keeps an output (autograd saving the
forward's activations for the backward, a weight gradient becoming ``.grad``) needs its own copy: a full read
and write of every output per call (two 101 us copies a step for mlp_gpt3_T256's weight gradients on the
H100, bench/kernels/NOTES.md section 10). Here a program has up to ``MAX_SLOTS`` *slots*, each a graph
captured with its own static inputs and its own output tensors; a call replays a slot whose outputs nobody
holds any more and returns views of them (new tensors on the same storage, so their lifetime is visible in
the storage's use count, as CUDA graph trees check it in Inductor). When every slot's outputs are still held,
a *copy slot* (the program's own buffers) replays and its outputs are cloned, as before. Outputs that are not
the slot's own tensors (an input passed through, a weight) are always cloned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch

MAX_SLOTS = 2
"""Graphs whose outputs may be held by the caller at once (a forward's and the next forward's, say)."""


def storage_users(t: torch.Tensor) -> int:
    """How many tensors share ``t``'s storage (its StorageImpl's use count)."""
    return int(torch._C._storage_Use_Count(t.untyped_storage()._cdata))


@dataclass
class Slot:
    graph: Any
    static: dict[str, torch.Tensor]  # the graph's inputs: each call copies into them
    outputs: list[torch.Tensor]  # what the captured launch returned
    owned: list[bool]  # output i is this slot's own tensor (handed out as a view), else cloned
    base: list[int] = field(default_factory=list)  # storage users of each owned output while nobody holds it

    def free(self) -> bool:
        return all(storage_users(t) <= b for t, o, b in zip(self.outputs, self.owned, self.base) if o)


class GraphSlots:
    """``capture(static_inputs, own_outputs) -> (graph, outputs)`` captures one launch writing its results into
    ``own_outputs`` (an empty dict: the program's buffers); ``fresh_outputs()`` makes a slot's output tensors."""

    def __init__(self, capture: Callable[[dict, dict], tuple[Any, list]],
                 fresh_outputs: Callable[[], dict[str, torch.Tensor]], max_slots: int = MAX_SLOTS):
        self.capture = capture
        self.fresh_outputs = fresh_outputs
        self.max_slots = max_slots
        self.slots: list[Slot] = []
        self.copy_slot: Slot | None = None

    def _new(self, ins: dict[str, torch.Tensor], own: bool) -> Slot:
        static = {n: t.clone() for n, t in ins.items()}
        outputs = self.fresh_outputs() if own else {}
        graph, outs = self.capture(static, outputs)
        outs = list(outs)
        mine = {id(t) for t in outputs.values()}
        slot = Slot(graph, static, outs, [id(t) in mine for t in outs])
        slot.base = [storage_users(t) for t in outs]
        return slot

    def run(self, ins: dict[str, torch.Tensor], copy: bool = True) -> list[torch.Tensor]:
        """Replay a graph on ``ins``; the outputs the caller may keep (``copy``), else the copy slot's own."""
        slot = next((s for s in self.slots if s.free()), None) if copy else None
        if slot is None and copy and len(self.slots) < self.max_slots:
            slot = self._new(ins, own=True)
            self.slots.append(slot)
        if slot is None:
            if self.copy_slot is None:
                self.copy_slot = self._new(ins, own=False)
            slot = self.copy_slot
            handed = False
        else:
            handed = True
        for n, t in ins.items():
            slot.static[n].copy_(t)
        slot.graph.replay()
        if not copy:
            return list(slot.outputs)
        out: list[torch.Tensor] = []
        for t, own in zip(slot.outputs, slot.owned):
            out.append(t.detach() if handed and own else t.clone())  # detach: a new tensor, same storage
        return out


__all__ = ["GraphSlots", "Slot", "storage_users", "MAX_SLOTS"]
