"""kitsune.runtime.graph_slots: which captured launch a CUDA-graph call replays, and when its outputs are handed
to the caller without a copy. The graphs here are stand-ins (CPU tensors, a replay that computes y = 2 x into
the capture's output tensor) so that the choice is tested without a GPU; the real capture is
``Program._capture_slot``."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from kitsune.runtime.graph_slots import GraphSlots, storage_users  # noqa: E402


class FakeGraph:
    def __init__(self, static, y):
        self.static, self.y = static, y

    def replay(self):
        self.y.copy_(self.static["x"] * 2)


def make(passthrough=False):
    buffers = {"y": torch.zeros(4)}  # the program's own buffer (the copy slot writes here)
    captures = []

    def capture(static, outputs):
        y = outputs.get("y", buffers["y"])
        captures.append(y)
        outs = [y, static["x"]] if passthrough else [y]
        return FakeGraph(static, y), outs

    return GraphSlots(capture, lambda: {"y": torch.empty(4)}), buffers, captures


def x(v):
    return {"x": torch.full((4,), float(v))}


def test_outputs_handed_out_while_held_elsewhere_come_from_another_capture():
    slots, buffers, captures = make()
    (r1,) = slots.run(x(1))
    (r2,) = slots.run(x(2))  # r1 is held: a second capture with outputs of its own
    assert len(captures) == 2 and r1.untyped_storage().data_ptr() != r2.untyped_storage().data_ptr()
    (r3,) = slots.run(x(3))  # both held, no third slot: the copy slot (the program's buffer), cloned
    assert len(captures) == 3 and captures[2] is buffers["y"]
    assert r3.untyped_storage().data_ptr() != buffers["y"].untyped_storage().data_ptr()
    assert r1.tolist() == [2.0] * 4 and r2.tolist() == [4.0] * 4 and r3.tolist() == [6.0] * 4
    ptr1 = r1.untyped_storage().data_ptr()
    del r1  # nobody holds the first capture's output any more: it is replayed, no new capture, no copy
    (r4,) = slots.run(x(4))
    assert len(captures) == 3 and r4.untyped_storage().data_ptr() == ptr1
    assert r2.tolist() == [4.0] * 4 and r4.tolist() == [8.0] * 4


def test_a_view_of_an_output_keeps_its_capture_busy():
    slots, _, captures = make()
    (r1,) = slots.run(x(1))
    part = r1[1:3]
    base = storage_users(part)
    del r1
    assert storage_users(part) == base  # (the view holds the storage)
    slots.run(x(2))
    assert part.tolist() == [2.0, 2.0] and len(captures) == 2


def test_copy_false_returns_the_buffers_and_passthrough_outputs_are_copies():
    slots, buffers, _ = make()
    (y,) = slots.run(x(5), copy=False)
    assert y is buffers["y"] and y.tolist() == [10.0] * 4
    slots2, _, _ = make(passthrough=True)
    inp = x(7)
    y2, xs = slots2.run(inp)
    assert xs.tolist() == [7.0] * 4
    static_x = slots2.slots[0].static["x"]
    assert xs.untyped_storage().data_ptr() != static_x.untyped_storage().data_ptr()  # an input: cloned
