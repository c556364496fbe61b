"""The depthwise template (a window contraction with one input row band an output: strips of a row in registers)
and the tile of a pointwise task that reads an input through a transposing permute (NOTES section 38).

Each: the form / tile the schedule layer reads off the IR, the code the template emits, and the outputs of the
compiled program under Triton's interpreter against eager."""

from __future__ import annotations

import re

import pytest
import torch

import kitsune
from kitsune.frontend.torch_export import import_module
from kitsune.schedule.depthwise import depthwise_form, strip_width


class _Conv(torch.nn.Module):
    def __init__(self, cin, cout, k, groups, stride=1, padding=0, dilation=1):
        super().__init__()
        self.c = torch.nn.Conv2d(cin, cout, k, stride=stride, padding=padding, dilation=dilation, groups=groups)

    def forward(self, x):
        return self.c(x)


def _conv_op(module, shape):
    gm, _ = import_module(module, (torch.randn(*shape),), None, with_weights=False)
    return next(o for o in gm.walk() if getattr(o, "name", "") == "graph.conv2d")


@pytest.mark.parametrize("args, depthwise", [
    ((8, 8, 7, 8, 1, 3), True),  # ConvNeXt's 7 x 7
    ((8, 16, 3, 8, 1, 1), True),  # a channel multiplier of 2: still one input channel an output
    ((8, 8, 3, 8, (2, 1), 1), True),  # strided rows
    ((8, 8, 3, 8, 1, 1, (2, 1)), True),  # dilated rows
    ((8, 8, 3, 8, 2, 1), True),  # strided columns: V outputs of a strip read 2V + 1 adjacent inputs
    ((8, 8, 3, 8, 1, 2, 2), False),  # dilated columns
    ((8, 8, 3, 4, 1, 1), False),  # two input channels a group: a K to sum
    ((8, 16, 3, 1, 1, 1), False),  # a dense convolution
])
def test_depthwise_form(args, depthwise):
    cin, cout, k, groups, stride, pad, *dil = args
    op = _conv_op(_Conv(cin, cout, k, groups, stride, pad, dil[0] if dil else 1), (1, cin, 16, 16))
    form = depthwise_form(op)
    assert (form is not None) == depthwise
    if form is not None:
        assert (form.krows, form.kcols, form.col_pad) == (k, k, pad if isinstance(pad, int) else pad[1])
        assert form.col_stride == (stride if isinstance(stride, int) else stride[1])


def test_strip_width_and_blocks():
    assert [strip_width(n, n) for n in (56, 28, 14, 7, 12)] == [8, 4, 2, 1, 4]
    # at column stride 2 an input vector is 2V columns (at most 8) dividing the input row
    assert [strip_width(2 * n, n, 2) for n in (56, 28, 14, 7)] == [4, 4, 2, 1]
    assert strip_width(24, 12, 2) == 4 and strip_width(15, 7, 2) == 1
    op = _conv_op(_Conv(4, 4, 7, 4, 1, 3), (1, 4, 16, 16))
    # outputs o of a strip of 8 read o + kw - 3 (kw < 7): the vectors -1, 0 and 1; of a strip of 2: -2 .. 2
    assert depthwise_form(op).blocks(8) == (-1, 1)
    assert depthwise_form(op).blocks(2) == (-2, 2)


class _DW(torch.nn.Module):
    """A depthwise convolution with the epilogues models put after it (BatchNorm + ReLU6, a residual add)."""

    def __init__(self, c, k, mult=1, stride=1, dilation=1, padding=None, epilogue=None, residual=False):
        super().__init__()
        padding = k // 2 if padding is None else padding
        self.c = torch.nn.Conv2d(c, c * mult, k, padding=padding, groups=c, stride=stride, dilation=dilation)
        self.bn = torch.nn.BatchNorm2d(c * mult).eval()
        with torch.no_grad():
            self.bn.running_mean.uniform_(-1, 1)
            self.bn.running_var.uniform_(0.5, 2)
        self.epilogue, self.residual = epilogue, residual

    def forward(self, x):
        if self.epilogue == "prologue":  # computed in the task: not a tensor the template can read as vectors
            x = torch.relu(x)
        y = self.c(x)
        if self.epilogue == "bn_relu6":
            y = torch.nn.functional.relu6(self.bn(y))
        return y + x if self.residual else y


CASES = {
    # name: (module, input shape, the template's strip width V; None: the evaluator runs the convolution)
    "7x7 rows of 16": (lambda: _DW(8, 7), (2, 8, 16, 16), 8),
    "3x3 bn relu6 rows of 12": (lambda: _DW(8, 3, epilogue="bn_relu6"), (2, 8, 12, 12), 4),
    "7x7 on 7x7 images": (lambda: _DW(8, 7), (2, 8, 7, 7), 1),
    "7x7 rows of 14 with a residual": (lambda: _DW(4, 7, residual=True), (2, 4, 14, 14), 2),
    "channel multiplier 2": (lambda: _DW(4, 3, mult=2), (1, 4, 16, 16), 8),
    "strided rows": (lambda: _DW(4, 3, stride=(2, 1), padding=(1, 1)), (1, 4, 16, 16), 8),
    "5x5 uneven padding, tall (rows of 24 in, 22 out)": (lambda: _DW(3, 5, padding=(2, 1)), (1, 3, 40, 24), 2),
    "3x3 stride 2 bn relu6 (16 -> 8)": (lambda: _DW(8, 3, stride=2, epilogue="bn_relu6"), (2, 8, 16, 16), 4),
    "5x5 stride 2 (14 -> 7)": (lambda: _DW(4, 5, stride=2), (2, 4, 14, 14), 1),
    "input computed in the task": (lambda: _DW(4, 3, epilogue="prologue"), (1, 4, 16, 16), None),
}


@pytest.mark.parametrize("name, mode", [(n, "bulk-sync") for n in CASES] + [
    ("3x3 bn relu6 rows of 12", "dataflow"), ("7x7 rows of 14 with a residual", "dataflow")])
def test_depthwise_end_to_end(name, mode):
    """Under Triton's interpreter: the outputs match eager; the template ran where it applies (V outputs a lane:
    whole V-vector loads split into registers and joined back for the store), else the evaluator."""
    make, shape, v = CASES[name]
    torch.manual_seed(0)
    model = make().eval()
    x = torch.randn(*shape)
    cm = kitsune.compile(model, (x,), mode=mode, device="cpu")
    src = cm.source
    splits = len(re.findall(r"= tl\.split\(", src))
    joins = src.count("tl.join(")
    strip_axis = re.search(r"(j\d+)_raw = tl\.arange\(0, (\d+)\)", src)
    if v is None:
        assert splits == 0 and strip_axis is None
    elif v == 1:  # (one output a lane: nothing joined; at column stride 2 its input pairs are split)
        assert joins == 0 and re.search(r"g\d+_raw = tl\.arange", src)
    else:
        assert strip_axis is not None and int(strip_axis.group(2)) in (v, 2 * v)
        assert splits > 0 and joins == v - 1
    with torch.no_grad():
        ref = model(x)
    torch.testing.assert_close(cm(x), ref, rtol=1e-4, atol=1e-4)


class _Transposed(torch.nn.Module):
    """ConvNeXt's block tail: an MLP over channels-last pixels, permuted back and added to its NCHW input."""

    def __init__(self, c):
        super().__init__()
        self.fc = torch.nn.Linear(c, c)

    def forward(self, x):
        return x + self.fc(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


@pytest.mark.parametrize("hw, tile", [(8, "[1, 24, 4, 8]"), (40, "[1, 24, 1, 40]")])
def test_transposed_read_tile(hw, tile):
    """The residual add's tile spans the channels (the input it reads channels-last runs along them) by whole
    rows (8 x 8 images whole, then halved by ``fill_tile`` for a grid of two images); the channels stay an axis of
    their own, unclamped (24 in 32 lanes: their loads stay vectors, the padded lanes masked), the image's rows
    share one; outputs match."""
    torch.manual_seed(0)
    model = _Transposed(24).eval()
    x = torch.randn(2, 24, hw, hw)
    cm = kitsune.compile(model, (x,), mode="bulk-sync", device="cpu")
    src = cm.source
    stage = re.search(r'# stage "[^"]+" \(elementwise\): programs \[[^\]]*\), tile (\[[^\]]*\])', src)
    assert stage is not None and stage.group(1) == tile
    body = src[stage.end():src.index("@triton.jit", stage.end())]
    axes = dict(re.findall(r"(\w+)_raw = tl\.arange\(0, (\d+)\)", body))
    chan = [a for a, n in axes.items() if n == "32" and a.startswith("o")]  # (a per-dim axis; p: merged rows)
    assert len(axes) == 2 and len(chan) == 1  # the channels, and the rows
    assert f"{chan[0]} = {chan[0]}_raw" in body
    with torch.no_grad():
        ref = model(x)
    torch.testing.assert_close(cm(x), ref, rtol=1e-4, atol=1e-4)


class _Pool(torch.nn.Module):
    def __init__(self, kind, k, stride, pad=0, ceil=False):
        super().__init__()
        self.kind, self.args = kind, (k, stride, pad)
        self.ceil = ceil

    def forward(self, x):
        if self.kind == "max":
            return torch.nn.functional.max_pool2d(x, *self.args, ceil_mode=self.ceil)
        return torch.nn.functional.avg_pool2d(x, *self.args)


@pytest.mark.parametrize("kind, k, stride, pad, ceil, shape, template", [
    ("max", 3, 2, 1, False, (2, 3, 16, 16), True),  # ResNet's stem pool
    ("max", 3, 2, 1, False, (2, 3, 15, 17), True),  # odd rows: one output a lane
    ("max", 3, 2, 1, True, (2, 3, 15, 17), True),  # ceil_mode's last window past the input
    ("max", 2, 2, 0, False, (2, 4, 32, 32), True),
    ("avg", 2, 2, 0, False, (2, 4, 16, 16), True),  # a sum of the input alone, scaled in the epilogue
    ("max", 3, 1, 1, False, (2, 8, 16, 16), False),  # stride 1: the evaluator's separable form stays
])
def test_strided_pools_take_the_depthwise_template(kind, k, stride, pad, ceil, shape, template):
    """A pool of column stride 2 is in depthwise form with no filter (``DepthwiseForm.w`` None, ``reduce`` the
    pool's max or sum): strips of a row from aligned input vectors, the padding -inf for a max, NaN propagated
    as eager does (ResNet-50's stride-2 max pool: 80 registers and 68 spill stores in the evaluator's 4096-lane
    form, 31 registers and 16-byte loads here). The outputs match eager, NaN positions included."""
    torch.manual_seed(0)
    m = _Pool(kind, k, stride, pad, ceil)
    x = torch.randn(*shape)
    x[0, 0, 0, 0] = float("nan")
    gm, _ = import_module(m, (x,), None, with_weights=False)
    op = next(o for o in gm.walk() if getattr(o, "name", "").endswith("_pool2d"))
    form = depthwise_form(op)
    assert (form is not None) == template
    if form is not None:
        assert form.w is None and form.reduce == ("max=" if kind == "max" else "+=") and form.col_stride == stride
    cm = kitsune.compile(m, (x,), mode="bulk-sync", device="cpu", cache=False)
    (stage,) = [ln for ln in cm.lowered.splitlines() if "gpu_queue.stage" in ln]
    assert ('template = "depthwise"' in stage) == template, stage
    if template and kind == "max":
        assert re.search(r'acc\d+ = tl\.full\(\[[0-9, ]+\], float\("-inf"\), tl\.float32\)', cm.source)
        assert "tl.split(" in cm.source and (pad == 0 or 'other=float("-inf")' in cm.source)
    ref = m(x)
    got = cm(x)
    assert torch.equal(torch.isnan(got), torch.isnan(ref))
    torch.testing.assert_close(got.nan_to_num(), ref.nan_to_num(), rtol=1e-5, atol=1e-5)
