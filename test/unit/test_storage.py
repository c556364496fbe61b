"""Storage decisions of code generation (``kitsune.codegen.layouts``, ``kitsune.codegen.concat_in_place``): which
tensors change layout or become slices of another, and that the programs still compute the reference's result
(under Triton's interpreter, two calls each, both schedules)."""

from __future__ import annotations

import ast
import re

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

from kitsune.context import make_context, parse_module  # noqa: E402
from kitsune.passes.pipeline import KitsunePipelinePass  # noqa: E402
from kitsune.schedule.configs import GenericConfig  # noqa: E402
from test_templates import conv_chain_module, mlir_type, run  # noqa: E402

PAR = '{kitsune.kind = "parameter"}'
MODES = ["bulk-sync", "dataflow"]


def lower_pipeline(text, cfg, mode):
    module = parse_module(text)
    KitsunePipelinePass(mode=mode).apply(make_context(), module)
    return module


def table(src: str, name: str):
    return ast.literal_eval(re.search(rf"^{name} = (\{{.*\}}|\[.*\])", src, re.M)[1])


def branches_module(n=2, c=8, hw=6, f1=16, f2=24, extra_use=False, weight_kind=PAR):
    """Two convolutions of x (1x1 to f1, 3x3 to f2) concatenated along channels, ReLU; with ``extra_use`` the
    concatenation is also the input of a third 1x1 convolution (a second result)."""
    x = mlir_type([n, c, hw, hw], "f32")
    y1, y2, y = (mlir_type([n, f, hw, hw], "f32") for f in (f1, f2, f1 + f2))
    w1, w2 = mlir_type([f1, c, 1, 1], "f32"), mlir_type([f2, c, 3, 3], "f32")
    b1, b2 = mlir_type([f1], "f32"), mlir_type([f2], "f32")
    args = f"%x: {x}, %w1: {w1} {weight_kind}, %b1: {b1} {PAR}, %w2: {w2} {weight_kind}, %b2: {b2} {PAR}"
    body = (f"    %y1 = graph.conv2d %x, %w1, %b1 : {x}, {w1}, {b1} -> {y1}\n"
            f"    %y2 = graph.conv2d %x, %w2, %b2 {{padding = [1, 1]}} : {x}, {w2}, {b2} -> {y2}\n"
            f"    %c = graph.concat %y1, %y2 {{dim = 1}} : {y1}, {y2} -> {y}\n")
    if not extra_use:
        return (f"func.func @main({args}) -> {y} {{\n{body}"
                f"    %r = graph.relu %c : {y} -> {y}\n    func.return %r : {y}\n}}\n")
    w3, b3, z = mlir_type([8, f1 + f2, 1, 1], "f32"), mlir_type([8], "f32"), mlir_type([n, 8, hw, hw], "f32")
    return (f"func.func @main({args}, %w3: {w3} {PAR}, %b3: {b3} {PAR}) -> ({y}, {z}) {{\n{body}"
            f"    %z = graph.conv2d %c, %w3, %b3 : {y}, {w3}, {b3} -> {z}\n"
            f"    func.return %c, %z : {y}, {z}\n}}\n")


@pytest.mark.parametrize("mode", MODES)
def test_concat_parts_stored_in_place(tmp_path, mode):
    """relu(cat(conv, conv)) leaving the program: the ReLU moves into the convolutions, each stores into its slice
    of the result (VIEWS), no stage copies the parts."""
    src = run(branches_module(), GenericConfig(), mode, tmp_path, "f32", 0, lower=lower_pipeline, name="cat")
    views = table(src, "VIEWS")
    assert sorted((off, dim) for _, dim, off in views.values()) == [(0, 1), (16, 1)], views
    assert len({base for base, _, _ in views.values()}) == 1
    assert "concat" not in " ".join(re.findall(r'# stage "(\w+)"', src)), "a stage still copies the parts"
    for kernel in re.split(r'\n# kernel (?=")', src)[1:]:  # no idle programs where the copy's were
        grid = int(re.match(r'"\w+": grid (\d+)', kernel)[1])
        assert grid == max(int(hi) for hi in re.findall(r"programs \[\d+, (\d+)\)", kernel))


@pytest.mark.parametrize("mode", MODES)
def test_concat_read_by_a_stage_stays(tmp_path, mode):
    """A concatenation another stage reads (a stage of the same kernel might wait on it) keeps its stage."""
    src = run(branches_module(extra_use=True), GenericConfig(), mode, tmp_path, "f32", 1, lower=lower_pipeline,
              name="catread")
    assert table(src, "VIEWS") == {}
    assert "concat" in " ".join(re.findall(r'# stage "(\w+)"', src))


@pytest.mark.parametrize("weight_is_parameter", [True, False])
def test_layouts_need_parameter_weights(tmp_path, weight_is_parameter):
    """1x1 -> ReLU -> 3x3: the intermediate is stored channels-last and the 3x3 weight packed when that weight is
    a parameter; when it is a per-call input nothing changes layout (strided weight loads would cost more than
    the window's gather saves)."""
    text = conv_chain_module(2, 4, 24, 9, 8, 3, 1, 1, 1, "f32")
    if not weight_is_parameter:
        text = re.sub(r"(%w2: tensor<[0-9x]+f32>) \{kitsune.kind = \"parameter\"\}", r"\1", text)
    src = run(text, GenericConfig(), "bulk-sync", tmp_path, "f32", 3, lower=lower_pipeline, name="orders")
    orders = table(src, "ORDERS")
    assert sorted(orders.values()) == ([(0, 2, 3, 1), (2, 3, 1, 0)] if weight_is_parameter else []), orders


@pytest.mark.parametrize("mode", MODES)
def test_window_major_when_channels_lead_the_tile(tmp_path, mode):
    """Output rows wider than the pixel block (a row segment per tile) put the output channels on the tile's
    first axis: the channels-last input is then the dot's second operand, and the K loop is window-major all the
    same (it was a flat loop of gathers: ResNet-18's 56-wide layers ran 404 us on the H200)."""
    text = conv_chain_module(1, 3, 16, 3, 8, 3, 1, 1, 1, "f32")  # 3 x 6 pixels, widened to 3 x 70:
    text = re.sub(r"x3x6x", "x3x70x", text)
    src = run(text, GenericConfig(), mode, tmp_path, "f32", 4, lower=lower_pipeline, name="wide")
    assert sorted(table(src, "ORDERS").values()) == [(0, 2, 3, 1), (2, 3, 1, 0)]
    assert re.search(r"tile \[1, \d+, 1, \d+\] of \[1, 8, 3, 70\]", src), "not a row-segment tile"
    assert re.search(r"for k\d+ in range\(0, 9\):", src), "no window-major K loop"


def pool_module(n, c, h, w, k, stride, pad, dil, kind, dt="f32"):
    oh = (h + 2 * pad - dil * (k - 1) - 1) // stride + 1
    ow = (w + 2 * pad - dil * (k - 1) - 1) // stride + 1
    x, y = mlir_type([n, c, h, w], dt), mlir_type([n, c, oh, ow], dt)
    attrs = f"kernel = [{k}, {k}], stride = [{stride}, {stride}], padding = [{pad}, {pad}]"
    attrs += f", dilation = [{dil}, {dil}]" if kind == "max_pool2d" else ""
    return (f"func.func @main(%x: {x}) -> {y} {{\n    %y = graph.{kind} %x {{{attrs}}} : {x} -> {y}\n"
            f"    func.return %y : {y}\n}}\n")


@pytest.mark.parametrize("kind, k, stride, pad, dil, separable", [
    ("max_pool2d", 3, 1, 1, 1, True), ("max_pool2d", 5, 1, 2, 1, True), ("max_pool2d", 3, 1, 1, 2, False),
    ("max_pool2d", 2, 1, 0, 1, False), ("avg_pool2d", 3, 1, 1, 1, True), ("max_pool2d", 3, 2, 1, 1, False)])
@pytest.mark.parametrize("mode", MODES)
def test_separable_window_reduction(tmp_path, kind, k, stride, pad, dil, separable, mode):
    """A stride-1 pool whose rows keep their length and whose tile holds whole rows loads only the window's
    column at each lane and takes the row neighbours from the other lanes (``tl.gather``); a stride-2 pool, a
    dilated window off its centre and a 2x2 window (rows one shorter) load every window position. Against the
    reference, padding included (-inf for max, zeros counted for avg)."""
    src = run(pool_module(2, 3, 9, 11, k, stride, pad, dil, kind), GenericConfig(), mode, tmp_path, "f32", 5,
              lower=lower_pipeline, name=f"pool{k}{stride}{pad}{dil}")
    assert ("tl.gather(" in src) == separable


def residual_module(n=2, c=4, hw=7, f=16):
    """x -> 1x1 -> ReLU = h; z = ReLU(3x3(h) + h) (a residual); y = 1x1(z)."""
    x, t = mlir_type([n, c, hw, hw], "f32"), mlir_type([n, f, hw, hw], "f32")
    w1, w2, w3, b = (mlir_type([f, c, 1, 1], "f32"), mlir_type([f, f, 3, 3], "f32"), mlir_type([f, f, 1, 1], "f32"),
                     mlir_type([f], "f32"))
    return (f"func.func @main(%x: {x}, %w1: {w1} {PAR}, %w2: {w2} {PAR}, %w3: {w3} {PAR}, %b: {b} {PAR}) -> {t} {{\n"
            f"    %a = graph.conv2d %x, %w1, %b : {x}, {w1}, {b} -> {t}\n"
            f"    %h = graph.relu %a : {t} -> {t}\n"
            f"    %c = graph.conv2d %h, %w2, %b {{padding = [1, 1]}} : {t}, {w2}, {b} -> {t}\n"
            f"    %s = graph.add %c, %h : {t}, {t} -> {t}\n"
            f"    %z = graph.relu %s : {t} -> {t}\n"
            f"    %y = graph.conv2d %z, %w3, %b : {t}, {w3}, {b} -> {t}\n"
            f"    func.return %y : {t}\n}}\n")


@pytest.mark.parametrize("mode", MODES)
def test_channels_last_through_residuals_and_1x1(tmp_path, mode):
    """A block's input read by its 3x3 convolution and again as the residual in that convolution's epilogue, and
    a result read by a 1x1 convolution (whose weight needs no packing): both stored channels-last; only the 3x3
    weight is packed."""
    src = run(residual_module(), GenericConfig(), mode, tmp_path, "f32", 6, lower=lower_pipeline, name="resid")
    orders = table(src, "ORDERS")
    args = table(src, "ARGS")
    assert orders.pop(args[2]) == (2, 3, 1, 0), orders
    assert sorted(orders.values()) == [(0, 2, 3, 1)] * 2, orders


def scaled_silu_conv_module(n, c, hw, f, dt="f32"):
    """x * s (per channel) -> SiLU -> 3x3 convolution: the elementwise prologue of a UNet's convolutions (its
    GroupNorm's affine and SiLU), the scale and the weights parameters."""
    x, s = mlir_type([n, c, hw, hw + 3], dt), mlir_type([1, c, 1, 1], dt)
    w, b, y = mlir_type([f, c, 3, 3], dt), mlir_type([f], dt), mlir_type([n, f, hw, hw + 3], dt)
    return (f"func.func @main(%x: {x}, %s: {s} {PAR}, %w: {w} {PAR}, %b: {b} {PAR}) -> {y} {{\n"
            f"    %m = graph.mul %x, %s : {x}, {s} -> {x}\n"
            f"    %a = graph.silu %m : {x} -> {x}\n"
            f"    %y = graph.conv2d %a, %w, %b {{padding = [1, 1]}} : {x}, {w}, {b} -> {y}\n"
            f"    func.return %y : {y}\n}}\n")


@pytest.mark.parametrize("c, hw", [(16, 6), (24, 9), (40, 5)])
@pytest.mark.parametrize("mode", MODES)
def test_elementwise_prologue_stored_channels_last(tmp_path, c, hw, mode):
    """An elementwise prologue of a 3x3 convolution (``FormRegions.windowed_conv_input``) stays a task of its own,
    tiled across the channels (``select.conv_input_tile``); in bulk-sync its result is stored channels-last, the
    weight packed, and the convolution loops window-major without recomputing the SiLU per tap."""
    src = run(scaled_silu_conv_module(2, c, hw, 8), GenericConfig(), mode, tmp_path, "f32", c, lower=lower_pipeline,
              name="ewcl")
    stages = dict(re.findall(r'# stage "(\w+)" \((\w+)\)', src))
    assert "elementwise" in stages.values(), stages
    conv = src[src.index('stage "conv2d'):]
    conv = conv[:conv.index("@triton.jit")]
    assert "sigmoid" not in conv, "the convolution recomputes the prologue"
    assert re.search(rf"tile \[1, {min(c, 64)}, \d+, {hw + 3}\] of \[2, {c}, {hw}, {hw + 3}\]", src), \
        "the elementwise tile does not span the channels"
    if mode == "bulk-sync":
        assert sorted(table(src, "ORDERS").values()) == [(0, 2, 3, 1), (2, 3, 1, 0)]
        assert re.search(r"for k\d+ in range\(0, \d+\):", conv), "no window-major K loop"


def upsampled_conv_module(n, c, hw, f, dt="f32"):
    """Nearest upsampling by 2 (reshape, expand, reshape: the importer's form) -> 3x3 convolution."""
    x, sp, big = (mlir_type(s, dt) for s in ([n, c, hw, hw + 1], [n, c, hw, 1, hw + 1, 1],
                                              [n, c, hw, 2, hw + 1, 2]))
    u = mlir_type([n, c, 2 * hw, 2 * hw + 2], dt)
    w, b, y = mlir_type([f, c, 3, 3], dt), mlir_type([f], dt), mlir_type([n, f, 2 * hw, 2 * hw + 2], dt)
    return (f"func.func @main(%x: {x}, %w: {w} {PAR}, %b: {b} {PAR}) -> {y} {{\n"
            f"    %r = graph.reshape %x : {x} -> {sp}\n"
            f"    %e = graph.expand %r {{shape = [{n}, {c}, {hw}, 2, {hw + 1}, 2]}} : {sp} -> {big}\n"
            f"    %u = graph.reshape %e : {big} -> {u}\n"
            f"    %y = graph.conv2d %u, %w, %b {{padding = [1, 1]}} : {u}, {w}, {b} -> {y}\n"
            f"    func.return %y : {y}\n}}\n")


@pytest.mark.parametrize("c, hw", [(16, 3), (24, 4)])
@pytest.mark.parametrize("mode", MODES)
def test_upsampling_before_a_conv_stays_a_copy(tmp_path, c, hw, mode):
    """A nearest upsampling read only by a 3x3 convolution is a copy ``kitsune-fuse-copies`` leaves in place
    (``feeds_windowed_convs``): in bulk-sync it writes the upsampled tensor channels-last, indexing its source
    ``[y // 2, x // 2]`` (``reshape_index``), and the convolution loops window-major over it."""
    src = run(upsampled_conv_module(2, c, hw, 8), GenericConfig(), mode, tmp_path, "f32", c + hw,
              lower=lower_pipeline, name="upcl")
    assert len(re.findall(r'# stage "', src)) == 2, "the upsampling was inlined into the convolution"
    copy = src[src.index('# stage "'):]
    copy = copy[:copy.index("@triton.jit")]
    assert "// 2" in copy and "% 2" not in copy, "the source index is not [y // 2, x // 2]"
    if mode == "bulk-sync":
        assert sorted(table(src, "ORDERS").values()) == [(0, 2, 3, 1), (2, 3, 1, 0)]
        assert re.search(r"for k\d+ in range\(0, \d+\):", src), "no window-major K loop"
