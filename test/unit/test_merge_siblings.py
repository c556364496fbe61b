"""kitsune-merge-siblings (sibling contractions over concatenated weights), derived parameters and results that
are slices of their task's domain (kitsune.dialects.sliced_results)."""

from __future__ import annotations

import numpy as np
import pytest

from kitsune.context import make_context, parse_module

_CONVS = """
func.func @main(%w1: tensor<8x16x1x1xf32> {kitsune.name = "b1.weight", kitsune.kind = "parameter"},
                %b1: tensor<8xf32> {kitsune.name = "b1.bias", kitsune.kind = "parameter"},
                %w2: tensor<12x16x1x1xf32> {kitsune.name = "b2.weight", kitsune.kind = "parameter"},
                %b2: tensor<12xf32> {kitsune.name = "b2.bias", kitsune.kind = "parameter"},
                %w3: tensor<4x16x3x3xf32> {kitsune.name = "b3.weight", kitsune.kind = "parameter"},
                %b3: tensor<4xf32> {kitsune.name = "b3.bias", kitsune.kind = "parameter"},
                %w4: tensor<4x16x1x1xf32> {kitsune.name = "b4.weight", kitsune.kind = "input"},
                %w5: tensor<6x16x1x1xf32> {kitsune.name = "b5.weight", kitsune.kind = "parameter"},
                %b5: tensor<6xf32> {kitsune.name = "b5.bias", kitsune.kind = "parameter"},
                %x: tensor<2x16x6x6xf32> {kitsune.name = "x", kitsune.kind = "input"})
    -> (tensor<2x8x6x6xf32>, tensor<2x12x6x6xf32>, tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>, tensor<2x6x6x6xf32>) {
  %y1 = graph.conv2d %x, %w1, %b1 : tensor<2x16x6x6xf32>, tensor<8x16x1x1xf32>, tensor<8xf32> -> tensor<2x8x6x6xf32>
  %y2 = graph.conv2d %x, %w2, %b2 : tensor<2x16x6x6xf32>, tensor<12x16x1x1xf32>, tensor<12xf32> -> tensor<2x12x6x6xf32>
  %r2 = graph.relu %y2 : tensor<2x12x6x6xf32> -> tensor<2x12x6x6xf32>
  %y3 = graph.conv2d %x, %w3, %b3 {padding = [1, 1]} : tensor<2x16x6x6xf32>, tensor<4x16x3x3xf32>, tensor<4xf32> -> tensor<2x4x6x6xf32>
  %y4 = graph.conv2d %x, %w4 : tensor<2x16x6x6xf32>, tensor<4x16x1x1xf32> -> tensor<2x4x6x6xf32>
  %y5 = graph.conv2d %x, %w5, %b5 : tensor<2x16x6x6xf32>, tensor<6x16x1x1xf32>, tensor<6xf32> -> tensor<2x6x6x6xf32>
  func.return %y1, %r2, %y3, %y4, %y5 : tensor<2x8x6x6xf32>, tensor<2x12x6x6xf32>, tensor<2x4x6x6xf32>, tensor<2x4x6x6xf32>, tensor<2x6x6x6xf32>
}
"""

_LINEARS = """
func.func @main(%x: tensor<5x32xf32> {kitsune.name = "x", kitsune.kind = "input"},
                %wq: tensor<32x32xf32> {kitsune.name = "q.weight", kitsune.kind = "parameter"},
                %wk: tensor<16x32xf32> {kitsune.name = "k.weight", kitsune.kind = "parameter"},
                %wv: tensor<16x32xf32> {kitsune.name = "v.weight", kitsune.kind = "parameter"})
    -> (tensor<5x32xf32>, tensor<5x16xf32>) {
  %q = graph.linear %x, %wq : tensor<5x32xf32>, tensor<32x32xf32> -> tensor<5x32xf32>
  %k = graph.linear %x, %wk : tensor<5x32xf32>, tensor<16x32xf32> -> tensor<5x16xf32>
  %v = graph.linear %x, %wv : tensor<5x32xf32>, tensor<16x32xf32> -> tensor<5x16xf32>
  %kv = graph.add %k, %v : tensor<5x16xf32>, tensor<5x16xf32> -> tensor<5x16xf32>
  func.return %q, %kv : tensor<5x32xf32>, tensor<5x16xf32>
}
"""


def _named_inputs(m, seed=0):
    from kitsune.interpreter import arg_names

    f = m.body.block.first_op
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal(tuple(a.type.get_shape())) for n, a in zip(arg_names(f), f.body.block.args)}


def _merged(text):
    from kitsune.passes.merge_siblings import MergeSiblingsPass

    m = parse_module(text)
    out = m.clone()
    MergeSiblingsPass().apply(make_context(), out)
    out.verify()
    return m, out


def test_sibling_convolutions_merge_and_keep_meaning():
    """The three 1x1 convolutions with parameter weights (one of them under a ReLU) become one over a derived
    parameter, the concatenation of their weights, and slices; the 3x3 (another window) and the 1x1 whose weight
    is an input (training's: a copy per call) stay; the originals leave the signature. The reference interpreter
    gives the same outputs before and after, the derived weights computed from the ones they name."""
    from kitsune.interpreter import arg_names, interpret

    m, out = _merged(_CONVS)
    text = str(out)
    assert text.count("graph.conv2d") == 3, text
    assert "tensor<26x16x1x1xf32> {kitsune.name = \"concat(dim=0: b1.weight, b2.weight, b5.weight)\"" in text
    assert "{kitsune.name = \"concat(dim=0: b1.bias, b2.bias, b5.bias)\", kitsune.kind = \"parameter\"}" in text
    for s in ("{dim = 1, end = 8}", "{dim = 1, start = 8, end = 20}", "{dim = 1, start = 20, end = 26}"):
        assert f"graph.slice" in text and s in text, (s, text)
    names = arg_names(out.body.block.first_op)
    assert "b1.weight" not in names and "b3.weight" in names and "b4.weight" in names
    ins = _named_inputs(m)
    ref = interpret(m, ins, f64=True)
    got = interpret(out, ins, f64=True)  # (the derived arguments from the weights they name)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_sibling_linears_merge_along_the_last_dim():
    from kitsune.interpreter import interpret

    m, out = _merged(_LINEARS)
    text = str(out)
    assert text.count("graph.linear") == 1 and "tensor<64x32xf32>" in text
    assert "{dim = 1, start = 32, end = 48}" in text and "{dim = 1, start = 48, end = 64}" in text
    ins = _named_inputs(m, 1)
    for a, b in zip(interpret(out, ins, f64=True), interpret(m, ins, f64=True)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_no_merge_without_siblings_or_with_grouped_convolutions():
    text = _CONVS.replace("%y2 = graph.conv2d %x, %w2, %b2 :", "%y2 = graph.conv2d %x, %w2, %b2 {groups = 1} :")
    grouped = """
func.func @main(%w1: tensor<4x4x1x1xf32> {kitsune.name = "a", kitsune.kind = "parameter"},
                %w2: tensor<4x4x1x1xf32> {kitsune.name = "b", kitsune.kind = "parameter"},
                %x: tensor<1x8x4x4xf32> {kitsune.name = "x", kitsune.kind = "input"})
    -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %a = graph.conv2d %x, %w1 {groups = 2} : tensor<1x8x4x4xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x4x4xf32>
  %b = graph.conv2d %x, %w2 {groups = 2} : tensor<1x8x4x4xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x4x4xf32>
  func.return %a, %b : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}
"""
    _, out = _merged(grouped)
    assert str(out).count("graph.conv2d") == 2 and "concat(" not in str(out)
    _, out = _merged(text)  # an explicit default attribute is the same convolution
    assert str(out).count("graph.conv2d") == 3


def test_derived_weights_resolve():
    import torch

    from kitsune.derived_weights import Recipe, available, concat_label, recipe, resolve, slice_label

    lab = concat_label(0, ["a.w", "b.w"])
    assert recipe(lab) == Recipe("concat", 0, ("a.w", "b.w")) and recipe("a.w") is None
    w = {"a.w": torch.ones(2, 3), "b.w": torch.zeros(1, 3)}
    assert resolve(lab, w).shape == (3, 3) and available(lab, w) and not available(concat_label(0, ["a.w", "c"]), w)
    with pytest.raises(KeyError):
        resolve("c", w)
    # recipes nest: the column blocks of one weight, concatenated along rows
    w["f.w"] = torch.arange(12.0).reshape(2, 6)
    nested = concat_label(0, [slice_label(1, 0, 3, "f.w"), slice_label(1, 3, 6, "f.w")])
    assert recipe(nested).parts == (slice_label(1, 0, 3, "f.w"), slice_label(1, 3, 6, "f.w"))
    assert recipe(slice_label(1, 3, 6, "f.w")) == Recipe("slice", 1, ("f.w",), 3, 6)
    assert torch.equal(resolve(nested, w), torch.cat([w["f.w"][:, :3], w["f.w"][:, 3:]], 0))
    assert not available(concat_label(0, [slice_label(1, 0, 3, "g.w"), "a.w"]), w)
    import numpy as np

    got = resolve(slice_label(1, 1, 4, "n.w"), {"n.w": np.arange(12.0).reshape(2, 6)})
    assert got.shape == (2, 3) and got[1, 0] == 7.0


def _siblings_model():
    import torch
    from torch import nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(16, 8, 1)
            self.b = nn.Conv2d(16, 24, 1)
            self.b2 = nn.Conv2d(24, 8, 3, padding=1)
            self.c = nn.Conv2d(16, 16, 1)
            self.c2 = nn.Conv2d(16, 8, 3, padding=1)

        def forward(self, x):
            return torch.relu(torch.cat([self.a(x), self.b2(torch.relu(self.b(x))), self.c2(torch.relu(self.c(x)))], 1))

    return M()


@pytest.mark.parametrize("mode", ["bulk-sync", "dataflow"])
def test_merged_convolution_stores_its_slices_from_one_tile(mode):
    """End to end: the three sibling convolutions are one stage of the conv template whose result #0 (the merged
    output, read by nothing) is not stored and whose three slices are, each from the same accumulator (one dot
    ) at its offset, one of them straight into the concatenation's slice; the program matches eager."""
    import torch

    import kitsune

    torch.manual_seed(0)
    m = _siblings_model()
    x = torch.randn(2, 16, 10, 10)
    cm = kitsune.compile(m, (x,), mode=mode, device="cpu")
    src = cm.source
    stage = src[src.index("(contraction): programs"):]
    stage = stage[:stage.index("@triton.jit")]
    assert "of [2, 48, 10, 10]" in stage, stage[:200]
    assert stage.count("tl.store(") == 3 and stage.count("tl.dot(") == 1, stage
    assert "VIEWS = {" in src and "concat(dim=0: a.weight, b.weight, c.weight)" in src
    for s in range(2):
        x = torch.randn(2, 16, 10, 10, generator=torch.Generator().manual_seed(s))
        with torch.no_grad():
            ref = m(x)
        torch.testing.assert_close(cm(x), ref, rtol=1e-4, atol=1e-4)


class _BottleneckEntry:
    """ResNet-50's first bottleneck: its 1 x 1 reduction (+ BatchNorm + ReLU) and its 1 x 1 downsample (+ BatchNorm)
    read the same input; built lazily (torch is imported by the test)."""

    @staticmethod
    def build():
        import torch
        from torch import nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1, self.b1 = nn.Conv2d(16, 16, 1, bias=False), nn.BatchNorm2d(16)
                self.c2, self.b2 = nn.Conv2d(16, 32, 1, bias=False), nn.BatchNorm2d(32)

            def forward(self, x):
                return torch.relu(self.b1(self.c1(x))), self.b2(self.c2(x))

        torch.manual_seed(0)
        m = M()
        for bn in (m.b1, m.b2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.5, 0.5)
        return m.eval()


def test_merged_convolution_slices_through_batch_norms():
    """Sibling 1 x 1 convolutions each under an inference BatchNorm (ResNet-50's bottleneck entry) merge into one
    conv-template stage: the BatchNorm keeps the index (``OpDef.keeps_index``), so each branch is a slice of the
    merged output, stored from the one accumulator with its own channels' statistics; before, the BatchNorm hid
    the slices and the merged task fell to the evaluator on one output channel a tile. The program matches eager."""
    import torch

    import kitsune

    m = _BottleneckEntry.build()
    x = torch.randn(2, 16, 10, 10)
    cm = kitsune.compile(m, (x,), mode="bulk-sync", device="cpu")
    src = cm.source
    stage = src[src.index("(contraction): programs"):]
    stage = stage[:stage.index("@triton.jit")]
    assert "of [2, 48, 10, 10]" in stage, stage[:200]
    assert stage.count("tl.store(") == 2 and stage.count("tl.dot(") == 1, stage
    for s in range(2):
        x = torch.randn(2, 16, 10, 10, generator=torch.Generator().manual_seed(s))
        with torch.no_grad():
            ref = m(x)
        for got, want in zip(cm(x), ref):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_slice_offsets():
    """A result computed from a slice by elementwise ops is a slice of the domain at the slice's start; a
    result that mixes two offsets, or reads the domain whole, is not."""
    from kitsune.dialects.sliced_results import slice_offsets

    m = parse_module("""
func.func @main(%x: tensor<4x10xf32>, %r: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %a = graph.slice %x {dim = 1, start = 2, end = 5} : tensor<4x10xf32> -> tensor<4x3xf32>
  %b = graph.slice %x {dim = 1, start = 5, end = 8} : tensor<4x10xf32> -> tensor<4x3xf32>
  %ra = graph.relu %a : tensor<4x3xf32> -> tensor<4x3xf32>
  %c = graph.add %ra, %r : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %d = graph.add %a, %b : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  func.return %c, %d, %b : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}""")
    f = m.body.block.first_op
    x = f.body.block.args[0]
    ret = f.body.block.last_op.operands
    assert slice_offsets(ret[0], x) == (0, 2)
    assert slice_offsets(ret[1], x) is None  # two starts
    assert slice_offsets(ret[2], x) == (0, 5)
    assert slice_offsets(x, x) is None
