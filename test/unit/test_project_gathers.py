"""kitsune-project-gathers: a linear over a concatenation of gathered rows projects the rows before they are
gathered (a graph network's message function), with the weight's column blocks as derived parameters."""

from __future__ import annotations

import numpy as np
import pytest

from kitsune.context import make_context, parse_module

_MESSAGE = """
func.func @main(%w: tensor<5x20xf32> {kitsune.name = "fc.weight", kitsune.kind = "parameter"},
                %b: tensor<5xf32> {kitsune.name = "fc.bias", kitsune.kind = "parameter"},
                %x: tensor<6x8xf32> {kitsune.name = "x", kitsune.kind = "input"},
                %e: tensor<10x4xf32> {kitsune.name = "e", kitsune.kind = "input"},
                %src: tensor<10xi64> {kitsune.name = "src", kitsune.kind = "input"},
                %dst: tensor<10xi64> {kitsune.name = "dst", kitsune.kind = "input"}) -> (tensor<10x5xf32>) {
  %xs = graph.index_select %x, %src {dim = 0} : tensor<6x8xf32>, tensor<10xi64> -> tensor<10x8xf32>
  %xd = graph.index_select %x, %dst {dim = 0} : tensor<6x8xf32>, tensor<10xi64> -> tensor<10x8xf32>
  %c = graph.concat %xs, %xd, %e {dim = 1} : tensor<10x8xf32>, tensor<10x8xf32>, tensor<10x4xf32> -> tensor<10x20xf32>
  %y = graph.linear %c, %w, %b : tensor<10x20xf32>, tensor<5x20xf32>, tensor<5xf32> -> tensor<10x5xf32>
  %r = graph.relu %y : tensor<10x5xf32> -> tensor<10x5xf32>
  func.return %r : tensor<10x5xf32>
}
"""


def _inputs(m, seed=0):
    from kitsune.interpreter import arg_names

    f = m.body.block.first_op
    rng = np.random.default_rng(seed)
    out = {}
    for n, a in zip(arg_names(f), f.body.block.args):
        shape = tuple(a.type.get_shape())
        if "i64" in str(a.type):
            out[n] = np.concatenate([[0, 0, 5], rng.integers(0, 6, shape[0] - 3)]).astype(np.int64)  # repeats
        else:
            out[n] = rng.standard_normal(shape)
    return out


def _rewritten(text, merge=True):
    from kitsune.passes.merge_siblings import MergeSiblingsPass
    from kitsune.passes.project_gathers import ProjectGathersPass

    m = parse_module(text)
    out = m.clone()
    ProjectGathersPass().apply(make_context(), out)
    if merge:
        MergeSiblingsPass().apply(make_context(), out)
    out.verify()
    return m, out


def _same_meaning(m, out, seeds=(0, 1, 2)):
    from kitsune.interpreter import interpret

    for s in seeds:
        ins = _inputs(m, s)
        for a, b in zip(interpret(out, ins, f64=True), interpret(m, ins, f64=True)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_gathered_parts_are_projected_then_gathered():
    """The endpoints' parts become one projection of x (the two column blocks of the weight, merged by
    kitsune-merge-siblings: a [10, 8] derived parameter) whose slices are gathered and added to the edge part's
    linear, which keeps the bias; the original weight leaves the signature; same outputs on random inputs with
    repeated indices."""
    m, out = _rewritten(_MESSAGE)
    text = str(out)
    assert text.count("graph.linear") == 2 and "graph.concat" not in text, text
    assert '"concat(dim=0: slice(dim=1, 0:8: fc.weight), slice(dim=1, 8:16: fc.weight))"' in text, text
    assert 'tensor<5x4xf32> {kitsune.name = "slice(dim=1, 16:20: fc.weight)"' in text, text
    assert "graph.linear %x, %" in text.replace("%2", "%x") or "tensor<6x8xf32>, tensor<10x8xf32> -> tensor<6x10xf32>" in text
    assert '"fc.weight"' not in text
    assert text.count("graph.index_select") == 2 and text.count("graph.add") == 2
    assert "tensor<10x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<10x5xf32>" in text  # the bias on e's part
    _same_meaning(m, out)


def test_all_parts_gathered_and_parts_between():
    """Every part gathered: the bias goes with the first projection. A gathered part between two others: the
    rest is one linear over their concatenation with the weight's two column blocks side by side."""
    allg = _MESSAGE.replace(", %e {dim = 1} : tensor<10x8xf32>, tensor<10x8xf32>, tensor<10x4xf32>",
                            " {dim = 1} : tensor<10x8xf32>, tensor<10x8xf32>") \
        .replace("tensor<5x20xf32>", "tensor<5x16xf32>").replace("tensor<10x20xf32>", "tensor<10x16xf32>")
    m, out = _rewritten(allg, merge=False)
    text = str(out)
    assert "tensor<6x8xf32>, tensor<5x8xf32>, tensor<5xf32> -> tensor<6x5xf32>" in text, text
    assert text.count("tensor<5xf32> -> tensor<6x5xf32>") == 1
    _same_meaning(m, out)
    mid = _MESSAGE.replace("%c = graph.concat %xs, %xd, %e {dim = 1} : tensor<10x8xf32>, tensor<10x8xf32>, "
                           "tensor<10x4xf32>",
                           "%e2 = graph.relu %xd : tensor<10x8xf32> -> tensor<10x8xf32>\n"
                           "  %c = graph.concat %e, %xs, %e2 {dim = 1} : tensor<10x4xf32>, tensor<10x8xf32>, "
                           "tensor<10x8xf32>")
    m, out = _rewritten(mid)
    text = str(out)
    assert '"concat(dim=1: slice(dim=1, 0:4: fc.weight), slice(dim=1, 12:20: fc.weight))"' in text, text
    assert text.count("graph.index_select") == 2 and text.count("graph.concat") == 1
    _same_meaning(m, out)


@pytest.mark.parametrize("edit", ["more_rows", "input_weight", "concat_read_twice", "rows_concat"])
def test_no_rewrite(edit):
    """No rewrite when projecting first is no cheaper (x has as many rows as the gather picks), when the weight
    is not a parameter (training's weights: a derived copy per call), when the concatenation is read elsewhere
    too, or when it is not along the last dim."""
    text = _MESSAGE
    if edit == "more_rows":
        text = text.replace("tensor<6x8xf32>", "tensor<12x8xf32>")
    elif edit == "input_weight":
        text = text.replace('"fc.weight", kitsune.kind = "parameter"', '"fc.weight", kitsune.kind = "input"')
    elif edit == "concat_read_twice":
        text = text.replace("func.return %r : tensor<10x5xf32>", "func.return %r, %c : tensor<10x5xf32>, "
                                                                  "tensor<10x20xf32>") \
            .replace("-> (tensor<10x5xf32>)", "-> (tensor<10x5xf32>, tensor<10x20xf32>)")
    else:
        text = """
func.func @main(%w: tensor<5x8xf32> {kitsune.name = "fc.weight", kitsune.kind = "parameter"},
                %x: tensor<6x8xf32> {kitsune.name = "x", kitsune.kind = "input"},
                %e: tensor<10x8xf32> {kitsune.name = "e", kitsune.kind = "input"},
                %src: tensor<10xi64> {kitsune.name = "src", kitsune.kind = "input"}) -> (tensor<20x5xf32>) {
  %xs = graph.index_select %x, %src {dim = 0} : tensor<6x8xf32>, tensor<10xi64> -> tensor<10x8xf32>
  %c = graph.concat %xs, %e {dim = 0} : tensor<10x8xf32>, tensor<10x8xf32> -> tensor<20x8xf32>
  %y = graph.linear %c, %w : tensor<20x8xf32>, tensor<5x8xf32> -> tensor<20x5xf32>
  func.return %y : tensor<20x5xf32>
}
"""
    m, out = _rewritten(text, merge=False)
    assert str(out) == str(m)


@pytest.mark.parametrize("mode", ["bulk-sync", "dataflow"])
def test_message_function_end_to_end(mode):
    """End to end on the CPU (Triton's interpreter): the edge linear's K loop runs over the edge features only
    and loads the projected endpoint rows by index in its epilogue (no stage gathers rows on its own); the
    program matches eager on random graphs with repeated endpoints."""
    import torch
    from torch import nn

    import kitsune

    class Message(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3 * 16, 32)
            self.out = nn.Linear(32, 16)

        def forward(self, x, e, src, dst):
            return self.out(torch.relu(self.fc(torch.cat([x[src], x[dst], e], -1))))

    torch.manual_seed(0)
    m = Message()
    x, e = torch.randn(12, 16), torch.randn(40, 16)
    src, dst = torch.randint(0, 12, (40,)), torch.randint(0, 12, (40,))
    cm = kitsune.compile(m, (x, e, src, dst), mode=mode, device="cpu")
    src_text = cm.source
    assert "(gather): programs" not in src_text
    assert "slice(dim=1, 32:48: fc.weight)" in src_text
    for s in range(2):
        g = torch.Generator().manual_seed(s)
        args = (torch.randn(12, 16, generator=g), torch.randn(40, 16, generator=g),
                torch.randint(0, 12, (40,), generator=g), torch.randint(0, 12, (40,), generator=g))
        with torch.no_grad():
            ref = m(*args)
        torch.testing.assert_close(cm(*args), ref, rtol=1e-4, atol=1e-4)

