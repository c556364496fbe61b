"""Forms that models outside the suite showed (bench/models/: ViT, MLP-Mixer, ConvNeXt, a GCN; NOTES section 37):
a contraction the task only views or normalises across its rows gets a task (and template) of its own, a norm
transposed into a contraction is computed once, a norm over channels through permutes is tiled by whole
channel rows, ``index_add`` into a vector is pushed by the scatter template, and a fused scatter adds
[rows, columns] blocks. Each: the IR the passes produce, and the reference interpreter (or eager, end to end
under Triton's interpreter) before and after."""

from __future__ import annotations

import re

import numpy as np
import pytest

from kitsune.context import make_context, parse_module
from kitsune.dialects import dataflow as df
from kitsune.interpreter import interpret
from kitsune.passes.choose_schedules import ChooseSchedulesPass
from kitsune.passes.form_regions import FormRegionsPass
from kitsune.passes.materialize import MaterializePass, transposed_norm, viewed_contraction


def _inputs(module, seed=0):
    from xdsl.dialects import func

    rng = np.random.default_rng(seed)
    f = next(o for o in module.walk() if isinstance(o, func.FuncOp) and o.sym_name.data == "main")
    out = []
    for t in f.function_type.inputs.data:
        if t.get_element_type().name.startswith("i"):
            out.append(rng.integers(0, 9, tuple(t.get_shape())).astype(np.int64))
        else:
            out.append(rng.standard_normal(tuple(t.get_shape())).astype(np.float32))
    return out


def _lowered(text, passes):
    """The module after ``passes``, checked against the reference interpreter (float64) on random inputs."""
    module = parse_module(text)
    inputs = _inputs(module)
    ref = interpret(module, inputs, f64=True)
    out = module.clone()
    for p in passes:
        p.apply(make_context(), out)
    out.verify()
    got = interpret(parse_module(str(out)), inputs, f64=True)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-9 * max(1.0, float(np.max(np.abs(r)))))
    return out


def _tasks(module):
    return [o for o in module.walk() if isinstance(o, df.TaskOp)]


def _task_with(module, name):
    got = [t for t in _tasks(module) if any(o.name == name for o in t.body.blocks.first.ops)]
    assert len(got) == 1, [t.task_name for t in _tasks(module)]
    return got[0]


PATCH_EMBED = """func.func @main(%x: tensor<2x3x16x16xf32>, %w: tensor<32x3x4x4xf32>, %b: tensor<32xf32>,
    %cls: tensor<1x1x32xf32>, %pos: tensor<1x17x32xf32>) -> tensor<2x17x32xf32> {
  %c = graph.conv2d %x, %w, %b {stride = [4, 4]} : tensor<2x3x16x16xf32>, tensor<32x3x4x4xf32>, tensor<32xf32> -> tensor<2x32x4x4xf32>
  %r = graph.reshape %c : tensor<2x32x4x4xf32> -> tensor<2x32x16xf32>
  %p = graph.permute %r {perm = [0, 2, 1]} : tensor<2x32x16xf32> -> tensor<2x16x32xf32>
  %e = graph.expand %cls {shape = [2, -1, -1]} : tensor<1x1x32xf32> -> tensor<2x1x32xf32>
  %t = graph.concat %e, %p {dim = 1} : tensor<2x1x32xf32>, tensor<2x16x32xf32> -> tensor<2x17x32xf32>
  %y = graph.add %t, %pos : tensor<2x17x32xf32>, tensor<1x17x32xf32> -> tensor<2x17x32xf32>
  func.return %y : tensor<2x17x32xf32>
}"""


@pytest.mark.parametrize("flops, own", [(0.0, True), (1e18, False)])
def test_viewed_convolution_gets_a_task_and_template(flops, own):
    """ViT's patch embedding: the convolution reaches the result through reshape, permute, concat and add. From
    ``viewed_flops`` of work on it is a task of its own with the conv template (the concat's task no longer holds
    it); below, it stays where form-regions put it. Meaning is preserved either way."""
    formed = _lowered(PATCH_EMBED, [FormRegionsPass()])
    assert viewed_contraction(_task_with(formed, "graph.conv2d"), 0.0) is not None
    out = _lowered(PATCH_EMBED, [FormRegionsPass(), MaterializePass(viewed_flops=flops), ChooseSchedulesPass(db=False)])
    conv = _task_with(out, "graph.conv2d")
    cat = _task_with(out, "graph.concat")
    assert (conv is not cat) == own
    if own:
        assert conv.attributes["template"].data == "conv"
        assert [o.name for o in conv.body.blocks.first.ops if o.name.startswith("graph.")] == ["graph.conv2d"]


SLICED = """func.func @main(%x: tensor<1x64xf32>, %w: tensor<256x64xf32>) -> tensor<1x128xf32> {
  %p = graph.linear %x, %w : tensor<1x64xf32>, tensor<256x64xf32> -> tensor<1x256xf32>
  %g = graph.slice %p {dim = 1, start = 0, end = 128} : tensor<1x256xf32> -> tensor<1x128xf32>
  %u = graph.slice %p {dim = 1, start = 128, end = 256} : tensor<1x256xf32> -> tensor<1x128xf32>
  %s = graph.silu %g : tensor<1x128xf32> -> tensor<1x128xf32>
  %y = graph.mul %s, %u : tensor<1x128xf32>, tensor<1x128xf32> -> tensor<1x128xf32>
  func.return %y : tensor<1x128xf32>
}"""


def test_sliced_contraction_stays():
    """A decode step's gate / up projection: slices of one contraction combined elementwise are the sliced
    gemv's form, not a view: the contraction stays in the task that combines its halves."""
    out = _lowered(SLICED, [FormRegionsPass(), MaterializePass(viewed_flops=0), ChooseSchedulesPass(db=False)])
    assert _task_with(out, "graph.linear") is _task_with(out, "graph.mul")


CHANNEL_NORM = """func.func @main(%x: tensor<2x3x16x16xf32>, %w: tensor<16x3x4x4xf32>, %b: tensor<16xf32>,
    %g: tensor<16xf32>, %beta: tensor<16xf32>) -> tensor<2x16x4x4xf32> {
  %c = graph.conv2d %x, %w, %b {stride = [4, 4]} : tensor<2x3x16x16xf32>, tensor<16x3x4x4xf32>, tensor<16xf32> -> tensor<2x16x4x4xf32>
  %p = graph.permute %c {perm = [0, 2, 3, 1]} : tensor<2x16x4x4xf32> -> tensor<2x4x4x16xf32>
  %n = graph.layer_norm %p, %g, %beta {eps = 1.0e-06} : tensor<2x4x4x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x4x4x16xf32>
  %y = graph.permute %n {perm = [0, 3, 1, 2]} : tensor<2x4x4x16xf32> -> tensor<2x16x4x4xf32>
  func.return %y : tensor<2x16x4x4xf32>
}"""


def test_channel_norm_after_a_convolution():
    """ConvNeXt's stem: a LayerNorm over the channels of a convolution, through permutes. Form-regions tiles the
    task by whole channel rows (the channel dim of the NCHW result whole), so the statistics are computed once
    a pixel; the convolution, which the norm reads across its rows, moves into a task of its own with the conv
    template. Meaning is preserved."""
    formed = _lowered(CHANNEL_NORM, [FormRegionsPass()])
    t = _task_with(formed, "graph.layer_norm")
    assert t.tile_sizes()[1] == 16 and t.tile_sizes()[2] == 1, t.tile_sizes()
    assert viewed_contraction(t, 0.0) is not None
    out = _lowered(CHANNEL_NORM, [FormRegionsPass(), MaterializePass(viewed_flops=0), ChooseSchedulesPass(db=False)])
    conv, norm = _task_with(out, "graph.conv2d"), _task_with(out, "graph.layer_norm")
    assert conv is not norm and conv.attributes["template"].data == "conv"
    assert norm.tile_sizes()[1] == 16


TOKEN_MIX = """func.func @main(%x: tensor<2x16x32xf32>, %g: tensor<32xf32>, %beta: tensor<32xf32>,
    %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<2x32x8xf32> {
  %n = graph.layer_norm %x, %g, %beta {eps = 1.0e-06} : tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x16x32xf32>
  %p = graph.permute %n {perm = [0, 2, 1]} : tensor<2x16x32xf32> -> tensor<2x32x16xf32>
  %y = graph.linear %p, %w, %b : tensor<2x32x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<2x32x8xf32>
  func.return %y : tensor<2x32x8xf32>
}"""


def test_transposed_norm_is_computed_once():
    """MLP-Mixer's token mixing: a LayerNorm over channels, transposed, then a linear over tokens. Where
    form-regions joins them the linear's tiles cut across the norm's rows; materialize gives the norm a task of
    its own tiled by whole rows (32 channels), and the linear keeps the gemm template. Meaning is preserved."""
    formed = _lowered(TOKEN_MIX, [FormRegionsPass()])
    lin = _task_with(formed, "graph.linear")
    if any(o.name == "graph.layer_norm" for o in lin.body.blocks.first.ops):
        assert transposed_norm(lin) is not None
    out = _lowered(TOKEN_MIX, [FormRegionsPass(), MaterializePass(), ChooseSchedulesPass(db=False)])
    norm, lin = _task_with(out, "graph.layer_norm"), _task_with(out, "graph.linear")
    assert norm is not lin
    assert norm.tile_sizes()[-1] == 32
    assert lin.attributes["template"].data == "gemm"
    assert transposed_norm(lin) is None


DEGREE = """func.func @main(%dst: tensor<40xi64>) -> tensor<9xf32> {
  %z = graph.constant dense<0.0> : tensor<9xf32>
  %one = graph.constant dense<1.0> : tensor<40xf32>
  %d = graph.index_add %z, %dst, %one {dim = 0} : tensor<9xf32>, tensor<40xi64>, tensor<40xf32> -> tensor<9xf32>
  %y = graph.add %d, %d : tensor<9xf32>, tensor<9xf32> -> tensor<9xf32>
  func.return %y : tensor<9xf32>
}"""


def test_index_add_into_a_vector_takes_the_scatter_template():
    """A graph's degree count (``index_add`` of one value a source row into a vector) is pushed from its source
    by the scatter template (one lane a row, blocks of BJ rows), not evaluated per node over every edge."""
    out = _lowered(DEGREE, [FormRegionsPass(), MaterializePass(), ChooseSchedulesPass(db=False)])
    t = _task_with(out, "graph.index_add")
    assert t.attributes["template"].data == "scatter"
    cfg = {k: v.value.data for k, v in t.attributes["config"].data.items()}
    assert cfg["BD"] == 1 and cfg["BJ"] >= 128


class _GCN:
    """A GCN layer: messages h[src] * norm, index_add into the nodes, + bias, ReLU; the degree count in the
    graph itself (a 1-D index_add)."""

    @staticmethod
    def module():
        import torch
        from torch import nn

        class Layer(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(16, 16, bias=False)
                self.bias = nn.Parameter(torch.randn(16))

            def forward(self, x, src, dst):
                n = x.shape[0]
                deg = torch.zeros(n).index_add(0, dst, torch.ones(dst.shape[0]))
                dis = (deg + 1.0).rsqrt()
                h = self.lin(x)
                msg = h[src] * (dis[src] * dis[dst]).unsqueeze(-1)
                return torch.relu(torch.zeros_like(h).index_add(0, dst, msg) + self.bias)

        torch.manual_seed(0)
        g = torch.Generator().manual_seed(1)
        return Layer(), (torch.randn(12, 16, generator=g), torch.randint(0, 12, (40,), generator=g),
                         torch.randint(0, 12, (40,), generator=g))


def test_gcn_scatters_end_to_end():
    """End to end on the CPU (Triton's interpreter): the degree count is a scatter stage (atomics, one lane a
    row); the messages are added into the nodes by the stage that computes them, in [rows, columns] blocks
    (Triton vectorises their atomics only so), and are never stored; outputs match eager."""
    import torch

    import kitsune

    model, inputs = _GCN.module()
    cm = kitsune.compile(model, inputs, mode="bulk-sync", device="cpu")
    src = cm.source
    calls = [line.strip() for line in src.splitlines() if line.strip().startswith("_scatter_add(")]
    assert len(calls) == 2, calls
    assert not any("tl.reshape(" in c for c in calls)
    two_d = [c for c in calls if "[None, :]" in c]
    assert len(two_d) == 1, calls  # the messages: rows by columns
    assert "((40, 16)," not in src  # (the messages' buffer: not allocated, not stored)
    with torch.no_grad():
        ref = model(*inputs)
    torch.testing.assert_close(cm(*inputs), ref, rtol=1e-4, atol=1e-4)


RAGGED_BLOCK = """func.func @main(%x: tensor<2x197x32xf32>, %pos: tensor<1x197x32xf32>, %g: tensor<32xf32>, %beta: tensor<32xf32>,
    %w1: tensor<64x32xf32>, %b1: tensor<64xf32>, %w2: tensor<32x64xf32>) -> tensor<2x197x32xf32> {
  %p = graph.add %x, %pos : tensor<2x197x32xf32>, tensor<1x197x32xf32> -> tensor<2x197x32xf32>
  %n = graph.layer_norm %p, %g, %beta {eps = 1.0e-06} : tensor<2x197x32xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<2x197x32xf32>
  %h = graph.linear %n, %w1, %b1 : tensor<2x197x32xf32>, tensor<64x32xf32>, tensor<64xf32> -> tensor<2x197x64xf32>
  %a = graph.gelu %h : tensor<2x197x64xf32> -> tensor<2x197x64xf32>
  %o = graph.linear %a, %w2 : tensor<2x197x64xf32>, tensor<32x64xf32> -> tensor<2x197x32xf32>
  %y = graph.add %p, %o : tensor<2x197x32xf32>, tensor<2x197x32xf32> -> tensor<2x197x32xf32>
  func.return %y : tensor<2x197x32xf32>
}"""


@pytest.mark.parametrize("tokens, flat", [(197, True), (192, False)])
def test_flatten_rows(tokens, flat):
    """ViT's MLP block over 197 tokens: the row-local region (LayerNorm, both linears, GELU, the residual add)
    runs on [394, n] rows, reshaped once on the way in and once on the way out; the position embedding's add,
    which broadcasts over the batch only, stays outside. Over 192 tokens (three 64-row tiles a matrix) nothing
    changes. Meaning is preserved; the linears' tasks get 2-D gemm tiles."""
    from kitsune.passes.flatten_rows import FlattenRowsPass

    text = RAGGED_BLOCK.replace("197", str(tokens))
    out = _lowered(text, [FlattenRowsPass()])
    lin = [o for o in out.walk() if o.name == "graph.linear"]
    assert all(len(o.results[0].type.get_shape()) == (2 if flat else 3) for o in lin)
    reshapes = [o for o in out.walk() if o.name == "graph.reshape"]
    assert len(reshapes) == (2 if flat else 0)
    adds = [o for o in out.walk() if o.name == "graph.add"]
    assert sorted(len(o.results[0].type.get_shape()) for o in adds) == ([2, 3] if flat else [3, 3])
    if flat:
        low = _lowered(text, [FlattenRowsPass(), FormRegionsPass(), MaterializePass(), ChooseSchedulesPass(db=False)])
        for t in _tasks(low):
            if any(o.name == "graph.linear" for o in t.body.blocks.first.ops):
                assert t.attributes["template"].data == "gemm" and len(t.tile_sizes()) == 2


GATED_RAGGED = """func.func @main(%x: tensor<2x197x32xf32>, %w: tensor<128x32xf32>) -> tensor<2x197x64xf32> {
  %h = graph.linear %x, %w : tensor<2x197x32xf32>, tensor<128x32xf32> -> tensor<2x197x128xf32>
  %g, %u = graph.split %h {dim = 2, sizes = [64, 64]} : tensor<2x197x128xf32> -> (tensor<2x197x64xf32>, tensor<2x197x64xf32>)
  %s = graph.silu %g : tensor<2x197x64xf32> -> tensor<2x197x64xf32>
  %y = graph.mul %s, %u : tensor<2x197x64xf32>, tensor<2x197x64xf32> -> tensor<2x197x64xf32>
  func.return %y : tensor<2x197x64xf32>
}"""


def test_flatten_rows_takes_a_gated_projections_split():
    """A gated projection over 197 tokens (the linear's columns split in two, silu of one times the other): the
    split of the last dim is row-local, so the whole region runs on [394, n] rows, one reshape in and one out,
    and the task is one gemm of two slices (``select.sliced_contraction``) tiled over the result. Meaning is
    preserved."""
    from kitsune.passes.flatten_rows import FlattenRowsPass

    out = _lowered(GATED_RAGGED, [FlattenRowsPass()])
    (split,) = [o for o in out.walk() if o.name == "graph.split"]
    assert [r.type.get_shape() for r in split.results] == [(394, 64), (394, 64)] and split.attrs()["dim"] == 1
    assert len([o for o in out.walk() if o.name == "graph.reshape"]) == 2
    low = _lowered(GATED_RAGGED, [FlattenRowsPass(), FormRegionsPass(), MaterializePass(), ChooseSchedulesPass(db=False)])
    (t,) = [t for t in _tasks(low) if any(o.name == "graph.linear" for o in t.body.blocks.first.ops)]
    assert t.attributes["template"].data == "gemm" and "2 slices" in t.attributes["schedule"].data


def test_attention_output_read_as_rows_by_the_gluon_gemm():
    """End to end (code generation only): a ViT-sized attention block over 197 tokens in bf16. The projection
    after the attention reads the attention's [B, L, H * E] result as [B * L, H * E] rows (a reshape view that
    form-regions leaves to the reader); the Gluon form takes it through a 2-D descriptor of the attention's own
    buffer, and the attention keeps its template."""
    import torch
    from torch import nn

    from kitsune.codegen.triton_gen import generate_triton
    from kitsune.frontend.torch_export import import_module
    from kitsune.passes.pipeline import KitsunePipelinePass

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(256)
            self.qkv = nn.Linear(256, 768)
            self.proj = nn.Linear(256, 256)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln(x)).reshape(b, t, 3, 4, 64).permute(2, 0, 3, 1, 4)
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            return x + self.proj(a.transpose(1, 2).reshape(b, t, d))

    model = Block().to(torch.bfloat16).to("meta")
    module, _ = import_module(model, (torch.empty(4, 197, 256, dtype=torch.bfloat16, device="meta"),), None,
                              with_weights=False)
    KitsunePipelinePass(mode="bulk-sync", gpu="h100").apply(make_context(), module)
    stages = {o.properties["sym_name"].data if "sym_name" in o.properties else None: o for o in module.walk()
              if o.name == "gpu_queue.stage"}
    templates = sorted(o.attributes["template"].data for o in stages.values())
    assert "attention" in templates and templates.count("gemm") == 2, templates
    src = generate_triton(module, capacity="ir", gluon=True)
    att = next(o for o in module.walk() if o.name == "gpu_queue.stage" and o.attributes["template"].data == "attention")
    kname = att.parent_op().properties["sym_name"].data if "sym_name" in att.parent_op().properties else None
    # the projection's A descriptor: the attention kernel's result, as 788 rows of 256
    got = re.findall(r"_da', '(k\d+)_out0', \[788, 256\], \[256, 1\], \[128, 64\]", src)
    assert got and (kname is None or got[0] == kname), (got, kname)


CONV_BN = """func.func @main(%x: tensor<2x8x16x16xf32>, %w: tensor<16x8x3x3xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>,
    %g: tensor<16xf32>, %beta: tensor<16xf32>) -> tensor<2x16x16x16xf32> {
  %c = graph.conv2d %x, %w {padding = [1, 1]} : tensor<2x8x16x16xf32>, tensor<16x8x3x3xf32> -> tensor<2x16x16x16xf32>
  %n = graph.batch_norm %c, %m, %v, %g, %beta {eps = 1.0e-05} : tensor<2x16x16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<2x16x16x16xf32>
  %y = graph.relu %n : tensor<2x16x16x16xf32> -> tensor<2x16x16x16xf32>
  func.return %y : tensor<2x16x16x16xf32>
}"""


def test_convolution_stays_in_its_batchnorm_epilogue():
    """An inference BatchNorm is a per-channel affine map, not a norm across the convolution's rows: the
    convolution keeps it (and the ReLU) as its epilogue in one task, whatever ``viewed_flops``. Meaning is
    preserved. (A first version of the rule took BatchNorm for a norm and moved every convolution of
    MobileNetV2 out of its epilogue: NOTES section 37.)"""
    # (the variance must stay positive: the interpreter's inputs are standard normal)
    text = CONV_BN.replace("%v: tensor<16xf32>", "%v0: tensor<16xf32>").replace(
        "%n = graph.batch_norm %c, %m, %v,",
        "%v = graph.exp %v0 : tensor<16xf32> -> tensor<16xf32>\n  %n = graph.batch_norm %c, %m, %v,")
    formed = _lowered(text, [FormRegionsPass()])
    assert viewed_contraction(_task_with(formed, "graph.conv2d"), 0.0) is None
    out = _lowered(text, [FormRegionsPass(), MaterializePass(viewed_flops=0), ChooseSchedulesPass(db=False)])
    assert _task_with(out, "graph.conv2d") is _task_with(out, "graph.batch_norm")


SQUEEZE_MEAN = """func.func @main(%x: tensor<32x1152x7x7xf32>) -> tensor<32x1152x1x1xf32> {
  %m = graph.mean %x {dims = [2, 3], keepdim = true} : tensor<32x1152x7x7xf32> -> tensor<32x1152x1x1xf32>
  func.return %m : tensor<32x1152x1x1xf32>
}"""


def test_short_row_reduction_takes_many_rows_a_program():
    """EfficientNet-B0's squeeze-excitation mean over 7 x 7 images: a reduction of 49 steps a row would run one
    row a program (36 864 programs of a few hundred bytes); its tile grows along the channels, the rows adjacent
    in memory, to about ``GROW_WORK`` element-steps while the grid keeps two programs an SM. Meaning preserved;
    end to end (Triton's interpreter) the generated stage reduces a [rows, steps] block and matches eager."""
    import torch

    import kitsune
    from kitsune.schedule.select import GROW_WORK

    out = _lowered(SQUEEZE_MEAN, [FormRegionsPass(), ChooseSchedulesPass(db=False)])
    (t,) = _tasks(out)
    tile = t.tile_sizes()
    assert tile == (1, 128, 1, 1), tile  # 128 rows x 49 steps >= GROW_WORK / 2; 288 programs
    assert 128 * 49 >= GROW_WORK // 2

    class SqueezeMean(torch.nn.Module):
        def forward(self, a):
            return a.mean(dim=(2, 3), keepdim=True)

    x = torch.randn(32, 1152, 7, 7)
    cm = kitsune.compile(SqueezeMean(), (x,), mode="bulk-sync", device="cpu")
    assert "tile [1, 128, 1, 1] of [32, 1152, 1, 1]" in cm.source
    assert re.search(r"tl\.sum\([^)]*axis=1\)", cm.source), cm.source
    torch.testing.assert_close(cm(x), x.mean(dim=(2, 3), keepdim=True), rtol=1e-5, atol=1e-5)


def test_linear_over_ragged_rows_as_the_result_keeps_its_template():
    """A linear over 200 tokens whose result is the model's output: kitsune-flatten-rows runs it on [200, n]
    rows and reshapes back to [1, 200, n] at the exit, a reshape that only adds a unit dim and that form-regions
    leaves in the linear's task. ``anchor_of`` looks through it (the task stayed generic before: "'graph.reshape'
    has no comprehension") and the evaluator indexes through it dim for dim, so the gemm template's K loop runs
    on the tensor cores (a dot, no per-element division of the flat offset). Matches eager."""
    import torch
    from torch import nn

    import kitsune
    from kitsune.frontend.torch_export import rel_err

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(128, 192)

        def forward(self, x):
            return torch.relu(self.fc(x))

    torch.manual_seed(0)
    m = Head()
    x = torch.randn(1, 200, 128)
    cm = kitsune.compile(m, (x,), mode="bulk-sync", device="cpu", cache=False)
    (stage,) = [ln for ln in cm.lowered.splitlines() if "gpu_queue.stage" in ln]
    assert 'template = "gemm"' in stage, stage
    body = cm.source[cm.source.index("for it in range"):]
    assert re.search(r"\btl\.dot\(|_dot_lp\(", body) and "// 192" not in body, body
    with torch.no_grad():
        ref = m(x)
    assert rel_err(cm(x).numpy(), ref.numpy()) < 1e-4


def test_group_norm_statistics_once_a_row():
    """GroupNorm (a diffusion UNet's: ``[N, G, C / G * H * W]`` rows, normalised, reshaped back to [N, C, H, W]):
    the reshape that cuts the rows stays out of the norm's task, so the task is tiled by whole rows and computes
    each row's statistics once (tiled by [N, C, H, W] channel images, every element summed its whole group, twice);
    a row wider than ``WIDE_TILE_LANES`` takes more warps (``generic_warps``). Matches eager under Triton's
    interpreter."""
    import torch
    from torch import nn

    import kitsune
    from kitsune.schedule.configs import GenericConfig
    from kitsune.schedule.select import generic_warps

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n = nn.GroupNorm(4, 16)
            self.c = nn.Conv2d(16, 16, 3, padding=1)

        def forward(self, x):
            return self.c(nn.functional.silu(self.n(x)))

    torch.manual_seed(0)
    m = Block().eval()
    x = torch.randn(2, 16, 8, 8)
    cm = kitsune.compile(m, (x,), mode="bulk-sync", device="cpu", cache=False)
    assert re.search(r"\(reduction\): programs \[0, \d+\), tile \[1, 1, 256\] of \[2, 4, 256\]", cm.source), cm.source
    with torch.no_grad():
        ref = m(x)
    torch.testing.assert_close(cm(x), ref, rtol=1e-4, atol=1e-4)
    assert generic_warps(GenericConfig(), (1, 1, 16384)).warps == 4
    assert generic_warps(GenericConfig(), (1, 1, 49152)).warps == 16  # (65 536 lanes)
    assert generic_warps(GenericConfig(), (1, 1, 1 << 20)).warps == 32


def test_group_norm_long_rows_statistics_task():
    """GroupNorm over rows longer than ``LONG_ROW`` (one group of 32 channels of 32 x 32: 32 768 elements): the
    statistics are a task of their own whose tile is one row's mean and 1/std (a loop over the row), and the
    normalisation joins the affine + SiLU task that stores the convolution's input: no stage holds a whole row.
    Matches eager under Triton's interpreter."""
    import torch
    from torch import nn

    import kitsune

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n = nn.GroupNorm(1, 32)
            self.c = nn.Conv2d(32, 8, 3, padding=1)

        def forward(self, x):
            return self.c(nn.functional.silu(self.n(x)))

    torch.manual_seed(0)
    m = Block().eval()
    with torch.no_grad():
        m.n.weight.uniform_(0.5, 1.5)
        m.n.bias.uniform_(-0.5, 0.5)
    x = torch.randn(2, 32, 32, 32) * 3 + 1
    cm = kitsune.compile(m, (x,), mode="bulk-sync", device="cpu", cache=False)
    stages = [ln for ln in cm.source.splitlines() if "# stage" in ln]
    assert re.search(r'"layer_norm_stats_\d+" \(reduction\): programs \[0, 2\), tile \[1, 1, 1\] of \[2, 1, 1\]',
                     stages[0]), stages
    assert len(stages) == 3 and "tl.sigmoid" in cm.source and "32768]" not in "".join(stages), stages
    with torch.no_grad():
        ref = m(x)
    torch.testing.assert_close(cm(x), ref, rtol=1e-4, atol=1e-4)


def test_softmax_long_rows_statistics_task():
    """A log_softmax and a softmax over rows longer than ``LONG_ROW`` (16 400 columns, a vocabulary's logits): the
    maximum and the sum of exponentials are a task of their own (a loop over each row) and the normalisations are
    elementwise tasks tiled across the rows; no stage holds a whole row. Matches eager under Triton's
    interpreter."""
    import torch
    from torch import nn

    import kitsune

    class Probs(nn.Module):
        def forward(self, x):
            return torch.log_softmax(x, -1), torch.softmax(x * 0.5, -1)

    x = torch.randn(2, 16400) * 4
    cm = kitsune.compile(Probs(), (x,), mode="bulk-sync", device="cpu", cache=False)
    stages = [ln for ln in cm.source.splitlines() if "# stage" in ln]
    stats = [ln for ln in stages if re.search(r'"softmax_stats_\d+" \(reduction\): .* tile \[1, 1\] of \[2, 1\]', ln)]
    assert len(stats) == 2 and not any("16400] of" in ln for ln in stages), stages
    with torch.no_grad():
        ref = Probs()(x)
    for got, want in zip(cm(x), ref):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)


def test_long_softmax_normalisation_keeps_its_tile_size_on_the_statistics_rows():
    """The normalisation after split softmax statistics takes the statistics task's row bands (one row here) and
    as many more columns as it gave up rows: tiles of 512 elements, not 128 (a language-model head's ran 201 216
    programs of 256 elements). Matches eager under Triton's interpreter."""
    import torch
    from torch import nn

    import kitsune

    class LogProbs(nn.Module):
        def forward(self, x):
            return torch.log_softmax(x, -1)

    x = torch.randn(8, 17000) * 3
    cm = kitsune.compile(LogProbs(), (x,), mode="bulk-sync", device="cpu", cache=False)
    stages = [ln for ln in cm.source.splitlines() if "# stage" in ln]
    norm = [ln for ln in stages if "(elementwise)" in ln]
    assert len(norm) == 1 and re.search(r"tile \[1, 512\] of \[8, 17000\]", norm[0]), stages
    torch.testing.assert_close(cm(x), LogProbs()(x), rtol=1e-4, atol=1e-5)


def test_long_softmax_normalisation_reads_the_logits_where_they_are():
    """A language model's head (``bench/models/lm_head.py``: LayerNorm, projection to a vocabulary of 16 400, then
    log_softmax over it, bf16): the normalisation after the split statistics begins with a widening cast of the
    logits, which joined to the projection's task made it write a second, fp32 copy of them. It stays with the
    normalisation: the projection's task has one result, its bf16 logits, read by the statistics and the
    normalisation alike. The reference interpreter agrees before and after the task passes."""
    import torch
    from graphgen import bench_model

    from kitsune.frontend.torch_export import import_module
    from kitsune.passes.pipeline import KitsunePipelinePass

    model, inputs = bench_model("lm_head.py:small", torch.bfloat16)
    module, _ = import_module(model, inputs, None, with_weights=False)
    passes = [p for p in KitsunePipelinePass(mode="bulk-sync", gpu="h100").task_passes()]
    formed = _lowered(str(module), passes)
    proj = _task_with(formed, "graph.matmul") if any(o.name == "graph.matmul" for o in formed.walk()) \
        else _task_with(formed, "graph.linear")
    assert [str(r.type) for r in proj.outs] == ["tensor<2x3x16400xbf16>"], [str(r.type) for r in proj.outs]
    assert any(o.name == "graph.softmax_stats" for o in formed.walk())


@pytest.mark.parametrize("BN,norm_tile", [(128, "[1, 2, 4096]"), (256, "[1, 2, 4096]")])
def test_lm_head_at_full_size(tmp_path, monkeypatch, BN, norm_tile):
    """GPT-2's head at batch 8 x 128 tokens (``bench/models/lm_head.py``, meta, bf16), its projection given BN-column
    tiles through the user's database: the projection's [8, 128, 50 257] logits are walked in groups of 8 row
    blocks across the batch entries (one row block each: row-major read the 77 MB weight once a batch entry, 175
    against ~120 us on the H200); the normalisation takes the statistics' 2 rows and widens its columns only up to
    ``WIDENED_TILE_LIMIT`` elements ([2, 16 384] from 128 x 256 tiles spilled 9.7 KB a thread)."""
    import torch
    from graphgen import bench_model

    from kitsune.codegen.triton_gen import generate_triton
    from kitsune.frontend.torch_export import import_module
    from kitsune.passes.pipeline import KitsunePipelinePass
    from kitsune.schedule import db
    from kitsune.schedule.configs import GemmConfig
    from kitsune.tools.tune import scheduled_tasks

    monkeypatch.setenv("KITSUNE_CACHE_DIR", str(tmp_path))
    model, inputs = bench_model("lm_head.py", torch.bfloat16)
    model = model.to("meta")
    gm, _ = import_module(model, tuple(x.to("meta") for x in inputs), None, with_weights=False)
    (proj, ) = [c for _, c in scheduled_tasks(gm, "h100") if c.template == "gemm"]
    db.store(proj.problem, "h100", GemmConfig(BM=128, BN=BN, BK=64, GROUP_M=8, warps=8, stages=4, GLUON=2), 0.0, None)
    low = gm.clone()
    KitsunePipelinePass(mode="bulk-sync", gpu="h100").apply(make_context(), low)
    src = generate_triton(low, capacity="ir")
    stages = [ln for ln in src.splitlines() if "# stage" in ln]
    assert any(f"tile [1, 128, {BN}] of [8, 128, 50257]" in ln for ln in stages if "contraction" in ln), stages
    norm = [ln for ln in stages if "(elementwise)" in ln]
    assert len(norm) == 1 and f"tile {norm_tile} of [8, 128, 50257]" in norm[0], stages
    k = src[src.index('# stage "linear_1"'):]  # (the Gluon form's or, under Triton's interpreter, the Triton one's)
    order = k[:k.index("gsz = ") + 400]
    assert "gsz = tl.minimum(8 - first, 8)" in order and re.search(r"c1 = first \+ tg % gsz", order), order


@pytest.mark.parametrize("mode", ["bulk-sync", "dataflow"])
def test_unet_decoder_step_end_to_end(mode):
    """A UNet decoder step: nearest upsampling by 2, GroupNorm + SiLU, a skip concatenation along the channels and
    a 3 x 3 convolution, compiled whole (Triton's interpreter) in both modes: matches eager."""
    import torch
    from torch import nn

    import kitsune

    class Up(nn.Module):
        def __init__(self):
            super().__init__()
            self.n = nn.GroupNorm(2, 8)
            self.c = nn.Conv2d(12, 8, 3, padding=1)

        def forward(self, x, skip):
            h = nn.functional.interpolate(x, scale_factor=2, mode="nearest")
            return self.c(torch.cat([nn.functional.silu(self.n(h)), skip], 1))

    torch.manual_seed(0)
    m = Up().eval()
    x, skip = torch.randn(2, 8, 6, 6), torch.randn(2, 4, 12, 12)
    cm = kitsune.compile(m, (x, skip), mode=mode, device="cpu", cache=False)
    with torch.no_grad():
        ref = m(x, skip)
    torch.testing.assert_close(cm(x, skip), ref, rtol=1e-4, atol=1e-4)


def test_transposed_convolution_and_leaky_relu_end_to_end():
    """A decoder's upsampling by ConvTranspose2d after a LeakyReLU, compiled whole (Triton's interpreter): the
    transposed convolution runs as a convolution over the zero-inserted input (the conv template), NaN
    propagates through the LeakyReLU; matches eager."""
    import torch
    from torch import nn

    import kitsune

    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.LeakyReLU(0.1), nn.ConvTranspose2d(8, 4, 2, 2)).eval()
    x = torch.randn(2, 4, 8, 8)
    x[0, 0, 0, 0] = float("nan")
    cm = kitsune.compile(m, (x,), mode="bulk-sync", device="cpu", cache=False)
    with torch.no_grad():
        ref = m(x)
    got = cm(x)
    assert torch.equal(torch.isnan(got), torch.isnan(ref))
    torch.testing.assert_close(got.nan_to_num(), ref.nan_to_num(), rtol=1e-4, atol=1e-4)
