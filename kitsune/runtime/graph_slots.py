"""Replays of a program's CUDA graph that neither copy their inputs in nor their outputs out.

A CUDA graph reads and writes fixed addresses. Copying every input into the graph's static buffers and every
output out of them costs a full read and write of each per call: a training step copies all its parameters
into the forward's graph and every saved activation into the backward's (mlp_gpt3_T256: ~450 MB a step), and
clones the weight gradients out (two 101 us copies a step on the H100, bench/kernels/NOTES.md section 10).

Here a program has up to ``MAX_SLOTS`` *slots*, each a graph captured with output tensors of its own:

* **outputs**: a call replays a slot whose outputs nobody holds any more and returns views of them (new
  tensors on the same storage, so their lifetime is visible in the storage's use count, as CUDA graph trees
  check it in Inductor). When every slot's outputs are still held, a *copy slot* (the program's own buffers,
  every input copied in) replays and its outputs are cloned. Outputs that are not the slot's own tensors (an
  input passed through, a weight) are always cloned.
* **inputs**: a slot reads some inputs *in place* (``direct``: name -> the address it was captured with) and
  copies the others into static buffers of its own. A slot serves a call only if each of its direct inputs
  sits at the captured address (a graph never writes its inputs, so reading whatever tensor lives there now
  is right). An input is captured in place when its address did not change since the previous call
  (parameters, the saved activations a forward slot hands to the backward, a benchmark's fixed inputs);
  on the first call every input is. A call whose steady inputs are more than the best fitting slot reads in
  place captures a new slot (the least recently used free slot that fits worse is dropped when all are
  taken); after ``MAX_CAPTURES`` captures the slots are kept as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

MAX_SLOTS = 3
"""Graphs with outputs of their own (a forward's and the next forward's, one with other input addresses)."""
MAX_CAPTURES = 8
"""Captures of own-output slots after which input addresses that keep moving stop causing new ones."""
READ_IN_PLACE = True
"""False: every input is copied into static buffers (the behaviour before; for A/B measurements)."""


def storage_users(t: torch.Tensor) -> int:
    """How many tensors share ``t``'s storage (its StorageImpl's use count)."""
    return int(torch._C._storage_Use_Count(t.untyped_storage()._cdata))


def _handle(t: torch.Tensor) -> int:
    """``t``'s StorageImpl (fixed while the slot holds ``t``): its use count without a storage object per call."""
    return t.untyped_storage()._cdata


@dataclass
class Slot:
    graph: Any
    static: dict[str, torch.Tensor]  # inputs copied in by each call
    direct: dict[str, int]  # inputs read in place: name -> the address captured
    outputs: list[torch.Tensor | None]  # what the captured launch returned (None: an input passed through)
    owned: list[bool]  # output i is this slot's own tensor (handed out as a view), else cloned
    passed: list[str | None]  # output i is this input (cloned from the call's tensor)
    base: list[tuple[int, int]] = field(default_factory=list)  # owned outputs: (storage, its users when unheld)
    used: int = 0  # the call count at its last replay (least recently used goes first)

    def free(self) -> bool:
        use = torch._C._storage_Use_Count
        return all(use(h) <= b for h, b in self.base)

    def fits(self, ptrs: dict[str, int]) -> bool:
        return all(ptrs.get(n) == a for n, a in self.direct.items())


class GraphSlots:
    """``capture(inputs, own_outputs) -> (graph, outputs)`` captures one launch reading ``inputs`` and writing its
    results into ``own_outputs`` (an empty dict: the program's buffers); ``fresh_outputs()`` makes a slot's
    output tensors; ``output_names`` (optional) names the launch's outputs, so that an input passed through
    is cloned from the call's tensor rather than kept from the capture."""

    def __init__(self, capture: Callable[[dict, dict], tuple[Any, list]],
                 fresh_outputs: Callable[[], dict[str, torch.Tensor]], max_slots: int = MAX_SLOTS,
                 output_names: Sequence[str] = (), max_captures: int = MAX_CAPTURES):
        self.capture = capture
        self.fresh_outputs = fresh_outputs
        self.max_slots = max_slots
        self.max_captures = max_captures
        self.output_names = list(output_names)
        self.slots: list[Slot] = []
        self.copy_slot: Slot | None = None
        self.captures = 0
        self.calls = 0
        self._last: dict[str, int] | None = None  # the previous call's input addresses

    def _new(self, ins: dict[str, torch.Tensor], own: bool, direct: set[str]) -> Slot:
        static = {n: t.clone() for n, t in ins.items() if n not in direct}
        outputs = self.fresh_outputs() if own else {}
        graph, outs = self.capture({**static, **{n: ins[n] for n in direct}}, outputs)
        outs = list(outs)
        mine = {id(t) for t in outputs.values()}
        names = self.output_names if len(self.output_names) == len(outs) else [None] * len(outs)
        passed = [n if n in ins and id(t) not in mine else None for n, t in zip(names, outs)]
        outs = [None if p is not None else t for t, p in zip(outs, passed)]  # hold no caller tensor
        slot = Slot(graph, static, {n: ins[n].data_ptr() for n in direct}, outs,
                    [t is not None and id(t) in mine for t in outs], passed)
        slot.base = [(_handle(t), storage_users(t)) for t, o in zip(outs, slot.owned) if o]
        return slot

    def _own_slot(self, ins: dict[str, torch.Tensor], ptrs: dict[str, int], steady: set[str]) -> Slot | None:
        """A free own-output slot that fits the call, capturing one that reads more inputs in place if it can."""
        best = next((s for s in sorted(self.slots, key=lambda s: -len(s.direct)) if s.fits(ptrs) and s.free()),
                    None)
        if best is not None and len(best.direct) >= len(steady):
            return best
        if self.captures >= self.max_captures and best is not None:
            return best
        if self.captures >= self.max_captures and len(self.slots) >= self.max_slots:
            return None
        if len(self.slots) >= self.max_slots:  # drop the least recently used free slot that serves worse
            spare = [s for s in self.slots if s.free() and s is not best]
            if not spare:
                return best
            self.slots.remove(min(spare, key=lambda s: s.used))
        slot = self._new(ins, own=True, direct=steady)
        self.captures += 1
        self.slots.append(slot)
        return slot

    def run(self, ins: dict[str, torch.Tensor], copy: bool = True) -> list[torch.Tensor]:
        """Replay a graph on ``ins``; the outputs the caller may keep (``copy``), else the copy slot's own."""
        self.calls += 1
        ptrs = {n: t.data_ptr() for n, t in ins.items()}
        last, self._last = self._last, ptrs
        steady = set(ins) if last is None else {n for n, p in ptrs.items() if last.get(n) == p}
        if not READ_IN_PLACE:
            steady = set()
        slot = self._own_slot(ins, ptrs, steady) if copy else None
        handed = slot is not None
        if slot is None:
            if self.copy_slot is None:
                self.copy_slot = self._new(ins, own=False, direct=set())
            slot = self.copy_slot
        slot.used = self.calls
        for n, t in slot.static.items():
            t.copy_(ins[n])
        slot.graph.replay()
        out: list[torch.Tensor] = []
        for t, own, p in zip(slot.outputs, slot.owned, slot.passed):
            if p is not None:
                out.append(ins[p].clone())
            elif not copy:
                out.append(t)
            else:
                out.append(t.detach() if handed and own else t.clone())  # detach: a new tensor, same storage
        return out


__all__ = ["GraphSlots", "Slot", "storage_users", "MAX_SLOTS", "MAX_CAPTURES"]
