"""compiled.report(path): the dataflow graph picture and, in profile mode, the SM timeline (CPU, interpreter)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import kitsune
from kitsune.models import get_workload

pytest.importorskip("matplotlib")


def _png(path):
    import matplotlib.image as mpimg

    img = mpimg.imread(str(path))
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    assert float(np.std(img[..., :3])) > 0.01  # not a blank canvas
    return img


@pytest.mark.parametrize("mode", ["dataflow", "bulk-sync"])
def test_report_pictures(tmp_path, mode):
    model, inputs = get_workload("nerf_65k").build(scale=0.05, seed=0)
    plain = kitsune.compile(model, inputs, mode=mode, device="cpu")
    f = kitsune.compile(model, inputs, mode=mode, device="cpu", profile=True)
    with torch.no_grad():
        y, y0 = f(*inputs), plain(*inputs)
    assert torch.equal(y, y0)  # the profile mode does not change results
    text = f.report(tmp_path)
    assert text == plain.report()  # the text report stays text
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["graph.png", "report.txt", "timeline.json", "timeline.png"]
    _png(tmp_path / "graph.png")
    _png(tmp_path / "timeline.png")
    assert "measured timeline" in (tmp_path / "report.txt").read_text()

    # structure: one node per stage; the dataflow schedule has fewer kernels than bulk-sync's one per task
    from kitsune.report import graph_structure, timeline_structure

    g = graph_structure(f._low.module)
    assert len(g["nodes"]) == 9
    kinds = {e["kind"] for e in g["edges"]}
    if mode == "dataflow":  # placement=auto: temporal kernels (stages read earlier stages' buffers) here
        assert len(g["kernels"]) < 9 and kinds <= {"queue", "buffer"}
        assert {e["relation"] for e in g["edges"]} <= {"tile", "rows", "all"}
    else:
        assert len(g["kernels"]) == 9 and kinds == {"buffer"}
    items = json.loads((tmp_path / "timeline.json").read_text())["items"]
    prog = f.program
    assert len(items) == sum(k["grid"] for k in prog.module.KERNELS)  # one work item per program
    assert {it["stage"] for it in items} == {n["id"] for n in g["nodes"]}
    assert all(it["unit"] == "tick" and it["end"] > it["start"] for it in items)
    # the interpreter runs programs one by one: the logical clock orders them without overlap
    spans = sorted((it["start"], it["end"]) for it in items)
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))
    s = timeline_structure(items, g)
    assert s["rows"] == sorted({it["pid"] for it in items}) and s["stages"]  # interpreter: row = program id


def test_timeline_waits_inferred():
    from kitsune.report import timeline_structure

    graph = {"edges": [{"kind": "queue", "src": "a", "dst": "b", "relation": "tile"}]}
    items = [{"stage": "a", "pid": 0, "start": 0, "end": 5000, "sm": 0, "unit": "ns"},
             {"stage": "b", "pid": 1, "start": 1000, "end": 8000, "sm": 1, "unit": "ns"}]
    s = timeline_structure(items, graph)
    assert s["rows"] == [0, 1] and s["unit"] == "us"
    assert s["waits"] == [{"sm": 1, "stage": "b", "pid": 1, "t0": 1.0, "t1": 5.0}]


def test_timeline_needs_profile():
    model, inputs = get_workload("nerf_65k").build(scale=0.05, seed=0)
    f = kitsune.compile(model, inputs, mode="bulk-sync", device="cpu")
    with pytest.raises(RuntimeError, match="profile=True"):
        f.timeline()
