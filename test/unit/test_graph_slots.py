"""kitsune.runtime.graph_slots: which captured launch a CUDA-graph call replays, which inputs it reads in place,
and when its outputs are handed to the caller without a copy. The graphs here are stand-ins (CPU tensors, a
replay that computes y = 2 x (+ w) into the capture's output tensor) so that the choice is tested without a GPU;
the real capture is ``Program._capture_slot``.

Like a real CUDA graph, a stand-in keeps *addresses*, not tensors: at replay it reads whatever live tensor
sits at the address it captured (``memory``, filled by the inputs the tests pass and the static buffers a
capture is given), so a slot that served a call with a tensor at another address would read the wrong data."""

from __future__ import annotations

import weakref

import pytest

torch = pytest.importorskip("torch")

from kitsune.runtime.graph_slots import MAX_CAPTURES, GraphSlots, storage_users  # noqa: E402

memory: "weakref.WeakValueDictionary[int, torch.Tensor]" = weakref.WeakValueDictionary()


def at(t):
    """``t``, registered as the live tensor at its address."""
    memory[t.data_ptr()] = t
    return t


class FakeGraph:
    def __init__(self, inputs, y):
        self.addr = {n: at(t).data_ptr() for n, t in inputs.items()}
        self.y = y

    def replay(self):
        v = memory[self.addr["x"]] * 2
        if "w" in self.addr:
            v = v + memory[self.addr["w"]]
        self.y.copy_(v)


def make(passthrough=False, names=()):
    buffers = {"y": torch.zeros(4)}  # the program's own buffer (the copy slot writes here)
    captures = []

    def capture(inputs, outputs):
        y = outputs.get("y", buffers["y"])
        captures.append(y)
        outs = [y, inputs["x"]] if passthrough else [y]
        return FakeGraph(inputs, y), outs

    return GraphSlots(capture, lambda: {"y": torch.empty(4)}, output_names=names), buffers, captures


def x(v):
    return {"x": at(torch.full((4,), float(v)))}


def test_outputs_handed_out_while_held_elsewhere_come_from_another_capture():
    slots, buffers, captures = make()
    slots.max_slots = 2
    keep = [x(i) for i in range(4)]  # distinct addresses
    (r1,) = slots.run(keep[1])
    (r2,) = slots.run(keep[2])  # r1 is held: a second capture with outputs of its own
    assert len(captures) == 2 and r1.untyped_storage().data_ptr() != r2.untyped_storage().data_ptr()
    (r3,) = slots.run(keep[3])  # both held, no third slot: the copy slot (the program's buffer), cloned
    assert len(captures) == 3 and captures[2] is buffers["y"]
    assert r3.untyped_storage().data_ptr() != buffers["y"].untyped_storage().data_ptr()
    assert r1.tolist() == [2.0] * 4 and r2.tolist() == [4.0] * 4 and r3.tolist() == [6.0] * 4
    ptr1 = r1.untyped_storage().data_ptr()
    del r1  # nobody holds the first capture's output any more: it is replayed, no new capture, no copy
    keep[1]["x"].fill_(4.0)  # (at the address it reads in place)
    (r4,) = slots.run(keep[1])
    assert len(captures) == 3 and r4.untyped_storage().data_ptr() == ptr1
    assert r2.tolist() == [4.0] * 4 and r4.tolist() == [8.0] * 4


def test_a_view_of_an_output_keeps_its_capture_busy():
    slots, _, captures = make()
    inp = x(1)
    (r1,) = slots.run(inp)
    part = r1[1:3]
    base = storage_users(part)
    del r1
    assert storage_users(part) == base  # (the view holds the storage)
    inp["x"].fill_(2.0)
    slots.run(inp)
    assert part.tolist() == [2.0, 2.0] and len(captures) == 2


def test_copy_false_returns_the_buffers_and_passthrough_outputs_are_copies():
    slots, buffers, _ = make()
    (y,) = slots.run(x(5), copy=False)
    assert y is buffers["y"] and y.tolist() == [10.0] * 4
    slots2, _, _ = make(passthrough=True, names=("y", "x"))
    inp = x(7)
    y2, xs = slots2.run(inp)
    assert xs.tolist() == [7.0] * 4 and y2.tolist() == [14.0] * 4
    assert xs.data_ptr() != inp["x"].data_ptr()  # an input passed through: cloned from the call's tensor
    assert slots2.slots[0].outputs[1] is None  # and the slot keeps no reference to the caller's tensor


def test_an_input_that_stays_put_is_read_in_place():
    slots, _, captures = make()
    pool = at(torch.zeros(2, 4))
    a = {"x": at(pool[0])}
    pool[0] = 1.0
    (r1,) = slots.run(a)
    assert slots.slots[0].direct == {"x": pool[0].data_ptr()} and slots.slots[0].static == {}
    del r1
    pool[0] = 3.0  # the same tensor, new values: no copy, the graph reads them where they are
    (r2,) = slots.run(a)
    assert r2.tolist() == [6.0] * 4 and len(captures) == 1


def test_a_moved_input_is_copied_and_a_steady_one_read_in_place():
    slots, _, captures = make()
    pool = at(torch.zeros(4, 4))
    w = at(torch.full((4,), 0.5))
    rows = [at(pool[i]) for i in range(4)]
    for i in range(4):
        pool[i] = float(i)
    outs = []
    for i in range(4):  # x moves every call, w stays
        (r,) = slots.run({"x": rows[i], "w": w})
        outs.append(r.tolist())
        del r
    assert outs == [[2 * i + 0.5] * 4 for i in range(4)]
    # first call: both in place (at x = rows[0]); then x moved: a slot that copies x and reads w in place
    assert [sorted(s.direct) for s in slots.slots] == [["w", "x"], ["w"]]
    assert sorted(slots.slots[1].static) == ["x"] and len(captures) == 2
    (r,) = slots.run({"x": rows[0], "w": w})  # back at the first address: the first slot fits again
    assert r.tolist() == [0.5] * 4 and len(captures) == 2


def test_addresses_that_keep_moving_stop_causing_captures():
    slots, _, captures = make()
    keep = []
    for i in range(3 * MAX_CAPTURES):
        inp = x(i)
        keep.append(inp)
        (r,) = slots.run(inp)
        assert r.tolist() == [2.0 * i] * 4
        # every other call repeats the address of the one before (steady), then moves
        (r,) = slots.run(inp)
        assert r.tolist() == [2.0 * i] * 4
        del r
    assert slots.captures <= MAX_CAPTURES and len(slots.slots) <= slots.max_slots
