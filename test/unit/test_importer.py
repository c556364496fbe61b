"""torch.export -> graph dialect importer (kitsune.frontend.torch_export)."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
import torch
from torch import nn

from kitsune.context import parse_module
from kitsune.frontend.torch_export import (
    UnsupportedOpsError,
    arguments,
    import_module,
    module_to_text,
    op_counts,
    rel_err,
)
from kitsune.interpreter import arg_names, find_function, interpret, mutated_results
from kitsune.models import WORKLOADS, get_workload

TOL = 1e-5


def _outputs(model, inputs):
    with torch.no_grad():
        ref = model(*inputs)
    return ref if isinstance(ref, (tuple, list)) else (ref,)


def check(model, inputs, dynamic_shapes=None, tol=TOL, run_inputs=None):
    """Import, verify, re-parse the printed text, run the interpreter vs torch eager."""
    module, weights = import_module(model, inputs, dynamic_shapes)
    text = module_to_text(module)
    reparsed = parse_module(text, "imported.mlir")
    assert module_to_text(reparsed) == text
    mutated = mutated_results(find_function(module, "main"))
    for xs in run_inputs or [inputs]:
        outs = interpret(module, arguments(module, weights, *xs))
        ref = _outputs(model, xs)
        buffers = dict(model.named_buffers())
        for i, name in mutated.items():  # a buffer's new value (the model's, after its call)
            assert rel_err(outs[i], buffers[name].float().numpy()) < tol
        outs = [o for i, o in enumerate(outs) if i not in mutated]
        assert len(outs) == len(ref)
        for o, r in zip(outs, ref):
            assert list(o.shape) == list(r.shape)
            err = rel_err(o, r.float().numpy())
            assert err < tol, f"rel err {err:.3e}"
    return module, weights, text


# ------------------------------------------------------------- workloads


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_workload_small_fp32(name):
    model, inputs = get_workload(name).build(scale=0.05)
    module, weights, text = check(model, inputs)
    # every op has a source location in the model's own file
    f = find_function(module, "main")
    for op in f.body.block.ops:
        if op.name.startswith("graph."):
            assert "kitsune/models/" in op.location.filename.data, (op.name, op.location)
    # weights: one per parameter / buffer argument, shapes match
    for name_, t in zip(arg_names(f), f.function_type.inputs.data):
        if name_ in weights:
            assert list(weights[name_].shape) == list(t.get_shape())
    assert set(weights) == set(dict(model.named_parameters())) | set(dict(model.named_buffers()))


FULL_EXPECT = {  # graph ops at full size (scale 1.0)
    "mlp_gpt3_T1024": {"graph.linear": 2, "graph.gelu": 1},
    "nerf_65k": {"graph.linear": 9, "graph.relu": 8, "graph.concat": 1},
    "inception_b8": {"graph.conv2d": 6, "graph.max_pool2d": 1, "graph.concat": 1},
    "dlrm_b2048": {"graph.embedding_bag": 8, "graph.matmul": 1, "graph.index_select": 1},
    "mgn_10k": {"graph.index_add": 1, "graph.layer_norm": 2, "graph.index_select": 2},
    "llama_decode_b8": {"graph.attention": 1, "graph.linear": 4},
}


@pytest.mark.slow
def test_full_size_import_meta(tmp_path):
    """Every workload at full size, built on meta: IR prints, re-parses, verifies; small .mlir."""
    t0 = time.time()
    for name in WORKLOADS:
        model, inputs = get_workload(name).build(scale=1.0, device="meta")
        module, weights = import_module(model, inputs)
        assert weights == {}  # meta: no values
        text = module_to_text(module)
        parse_module(text, f"{name}.mlir")
        layers = getattr(get_workload(name).config(1.0), "layers", 1)  # llama1b: 16 decoder layers
        assert len(text) < 200_000 * layers, len(text)  # no weights in the IR
        counts = op_counts(module)
        for k, v in FULL_EXPECT.get(name, {}).items():
            assert counts[k] == v, (name, dict(counts))
        (tmp_path / f"{name}.mlir").write_text(text)
    assert time.time() - t0 < 120


@pytest.mark.parametrize("name", ["llama_decode_b1", "mgn_10k", "dlrm_b2048", "inception_b8"])
def test_workload_full_core_aten(name):
    """With every core-ATen decomposition (no kept ops: SDPA -> bmm/_softmax/masks, layer_norm -> native_...)."""
    model, inputs = get_workload(name).build(scale=0.05)
    module, weights = import_module(model, inputs, decompositions=torch.export.default_decompositions())
    counts = op_counts(module)
    assert "graph.attention" not in counts
    outs = interpret(module, arguments(module, weights, *inputs))
    for o, r in zip(outs, _outputs(model, inputs)):
        assert rel_err(o, r.numpy()) < TOL


def test_small_weights_file(tmp_path):
    model, inputs = get_workload("dlrm_b2048").build(scale=0.02)
    module, weights = import_module(model, inputs)
    path = tmp_path / "w.npz"
    np.savez(path, **weights)
    loaded = dict(np.load(path))
    outs = interpret(module, {**loaded, "dense": inputs[0], "indices": inputs[1]})
    assert rel_err(outs[0], _outputs(model, inputs)[0].numpy()) < TOL


# ------------------------------------------------------------- extra models


class TwoBranches(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(12, 16)
        self.b = nn.Sequential(nn.Linear(12, 8), nn.Tanh(), nn.Linear(8, 16))

    def forward(self, x):
        return torch.sigmoid(self.a(x)) * self.b(x) - 0.5


def test_two_branches():
    torch.manual_seed(0)
    _, _, text = check(TwoBranches().eval(), (torch.randn(5, 12),))
    assert text.count("graph.linear") == 3


def test_transformer_encoder_layer():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True,
                                       dropout=0.0).eval()
    module, _, text = check(layer, (torch.randn(2, 6, 32),))
    counts = op_counts(module)
    assert counts["graph.attention"] == 1 and counts["graph.layer_norm"] == 2, dict(counts)


class HandAttention(nn.Module):
    """Hand-written block: SDPA with GQA, RMS-style norm, transpose, split, silu."""

    def __init__(self, d=32, hq=4, hk=2):
        super().__init__()
        self.hq, self.hk, self.e = hq, hk, d // hq
        self.qkv = nn.Linear(d, (hq + 2 * hk) * self.e, bias=False)
        self.o = nn.Linear(d, d)
        self.w = nn.Parameter(torch.rand(d) + 0.5)

    def forward(self, x):
        b, s, d = x.shape
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w
        q, k, v = self.qkv(h).split([self.hq * self.e, self.hk * self.e, self.hk * self.e], dim=-1)
        q = q.view(b, s, self.hq, self.e).transpose(1, 2)
        k = k.view(b, s, self.hk, self.e).transpose(1, 2)
        v = v.view(b, s, self.hk, self.e).transpose(1, 2)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        y = self.o(a.transpose(1, 2).reshape(b, s, d))
        return torch.nn.functional.silu(y) + x


def test_hand_written_gqa_attention():
    torch.manual_seed(0)
    module, _, _ = check(HandAttention().eval(), (torch.randn(2, 5, 32),))
    assert op_counts(module)["graph.attention"] == 1


class ConvBNReLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=4, bias=False)
        self.bn2 = nn.BatchNorm2d(8)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = torch.nn.functional.max_pool2d(torch.relu(self.bn2(self.conv2(y))), 3, stride=1, padding=1)
        return y.flatten(1).mean(1)


def test_conv_bn_relu_eval():
    torch.manual_seed(0)
    m = ConvBNReLU()
    with torch.no_grad():
        for bn in (m.bn, m.bn2):
            bn.running_mean.normal_()
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.normal_()
            bn.bias.normal_()
    module, weights, _ = check(m.eval(), (torch.randn(2, 3, 16, 16),))
    counts = op_counts(module)
    assert counts["graph.batch_norm"] == 2 and counts["graph.conv2d"] == 2
    assert "bn.running_var" in weights


class DynMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        h = self.norm(torch.relu(self.fc(x)))
        return h.view(h.shape[0], 4, 4).sum(-1), torch.softmax(h, -1) * 2.0


def test_dynamic_batch_two_sizes():
    torch.manual_seed(0)
    m = DynMLP().eval()
    batch = torch.export.Dim("batch", min=2, max=512)
    module, _, text = check(m, (torch.randn(3, 8),), ({0: batch},),
                            run_inputs=[(torch.randn(2, 8),), (torch.randn(37, 8),)])
    assert "tensor<?x8xf32>" in text and "tensor<?x4x4xf32>" in text
    f = find_function(module, "main")
    assert [list(t.get_shape())[1:] for t in f.function_type.outputs.data] == [[4], [16]]


class MultiOut(nn.Module):
    def forward(self, a, b):
        s = a + b
        return s, torch.exp(-s.abs()), (a * b).sum(0)


def test_multiple_outputs():
    module, _, _ = check(MultiOut(), (torch.randn(3, 4), torch.randn(3, 4)))
    f = find_function(module, "main")
    assert len(f.function_type.outputs.data) == 3
    assert arg_names(f) == ["a", "b"]


class ManyOps(nn.Module):
    """Exercises the less common mappings."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.register_buffer("offsets", torch.arange(0, 6))
        self.p = nn.Parameter(torch.randn(6, 6))

    def forward(self, x, idx, src):
        e = self.emb(idx)  # [3, 5, 6]
        y = x[:, 1] + x.select(1, -1) * 3.0 - 2.0 * x[:, 0]  # select / scalar ops, rsub-like
        z = torch.where(y > 0, y, torch.zeros_like(y)) + torch.clamp(y, -0.5, 0.5)
        mask = torch.logical_not(z < 0.1).any(dim=-1, keepdim=True)
        z = z * mask.to(z.dtype)
        acc = torch.zeros(4, 6).index_add(0, src, e[:, 0])
        t = e.transpose(1, 2) @ e  # [3, 6, 6] batched matmul
        w = torch.full((6,), 2.0) + self.offsets.float()
        r = torch.log_softmax(t.sum(1) * w, dim=-1)
        parts = torch.chunk(acc, 2, dim=0)
        return z, parts[0] - parts[1], r, torch.addmm(w, acc, self.p.t()).amax(1), torch.mm(acc, self.p) * 0.5


def test_many_ops():
    torch.manual_seed(0)
    x = torch.randn(3, 4, 6)
    idx = torch.randint(0, 10, (3, 5))
    src = torch.tensor([0, 3, 3])
    check(ManyOps().eval(), (x, idx, src))


def test_bf16_import():
    model, inputs = get_workload("mlp_gpt3_T256").build(scale=0.02, dtype=torch.bfloat16)
    module, weights = import_module(model, inputs)
    text = module_to_text(module)
    f = find_function(module, "main")
    for t in f.function_type.inputs.data:
        assert "bf16" in str(t)
    assert "xbf16>" in text and "xf32>" not in text
    outs = interpret(module, arguments(module, weights, *inputs))
    ref = _outputs(model, inputs)[0].float().numpy()
    assert rel_err(outs[0], ref) < 2e-2


def test_bf16_llama_and_fp16():
    model, inputs = get_workload("llama_decode_b1").build(scale=0.05, dtype=torch.bfloat16)
    module, weights = import_module(model, inputs)
    outs = interpret(module, arguments(module, weights, *inputs))
    assert rel_err(outs[0], _outputs(model, inputs)[0].float().numpy()) < 3e-2
    m = TwoBranches().eval().half()
    module, weights = import_module(m, (torch.randn(4, 12).half(),))
    assert "xf16>" in module_to_text(module)


class Unsupported(nn.Module):
    def forward(self, x):
        a = torch.topk(x, 2, 1).values
        b = torch.relu(a)
        c = torch.flip(b, [0])
        d = torch.sort(x, 1).values[:, :2]
        return c + d


def test_unsupported_ops_listed_at_once():
    with pytest.raises(UnsupportedOpsError) as ei:
        import_module(Unsupported(), (torch.randn(3, 4),))
    e = ei.value
    ops = [it.op for it in e.items]
    assert ops == ["aten.topk.default", "aten.flip.default", "aten.sort.default"]
    msg = str(e)
    assert msg.startswith("3 unsupported ops")
    lines = [it.loc for it in e.items]
    assert all(loc.startswith(__file__) for loc in lines), lines
    assert "torch.topk(x, 2, 1)" in msg and "torch.flip(b, [0])" in msg


def test_unsupported_reasons():
    class M(nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.5)

    q = torch.randn(1, 2, 4, 8)
    with pytest.raises(UnsupportedOpsError, match=r"attention dropout is not supported \(call model.eval\(\)"):
        import_module(M(), (q, q, q))

    class Bag(nn.Module):
        def __init__(self):
            super().__init__()
            self.bag = nn.EmbeddingBag(10, 4, mode="sum")

        def forward(self, idx, offsets):
            return self.bag(idx, offsets)

    with pytest.raises(UnsupportedOpsError, match="aten._embedding_bag.default: 1-D indices need offsets that are a static arange"):
        import_module(Bag(), (torch.tensor([1, 2, 3, 4]), torch.tensor([0, 1])))
    # 2-D indices (uniform bags) and mean mode are fine
    bag = Bag().eval()
    bag.bag.mode = "mean"
    check(bag, (torch.randint(0, 10, (3, 4)), None))


def test_cli(tmp_path):
    from kitsune.tools.import_ import main

    src = tmp_path / "m.py"
    src.write_text("import torch\n\ndef make_model():\n    return torch.nn.Linear(4, 3), (torch.randn(2, 4),)\n\n"
                   "def bad():\n    class B(torch.nn.Module):\n        def forward(self, x):\n"
                   "            return torch.flip(x, [0])\n    return B(), (torch.randn(2, 4),)\n")
    out, w = tmp_path / "o.mlir", tmp_path / "o.npz"
    assert main([str(src), "-o", str(out), "--weights", str(w)]) == 0
    assert "graph.linear" in out.read_text()
    assert sorted(np.load(w).keys()) == ["bias", "weight"]
    out2 = tmp_path / "bad.mlir"
    assert main([f"{src}:bad", "-o", str(out2)]) == 1
    assert not out2.exists()


def test_import_exported_and_top_level_api():
    import kitsune

    ep = torch.export.export(TwoBranches().eval(), (torch.randn(2, 12),))
    module, weights = kitsune.import_exported(ep)
    assert "a.weight" in weights
    module2, _ = kitsune.import_module(TwoBranches().eval(), (torch.randn(2, 12),))
    assert op_counts(module) == op_counts(module2)


@pytest.mark.parametrize("op", ["_scaled_dot_product_cudnn_attention", "_scaled_dot_product_efficient_attention",
                                "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu"])
@pytest.mark.parametrize("causal", [False, True])
def test_fused_sdpa_kernels_import_as_attention(op, causal):
    """aot_autograd's graph (the torch.compile backend) holds the fused kernel sdpa dispatched to (cuDNN on the
    H100), not sdpa: it imports as graph.attention (output 0; the autograd outputs unused), GQA included."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    from kitsune.frontend.torch_export import import_graph

    fn = getattr(torch.ops.aten, op).default
    with_bias = op in ("_scaled_dot_product_cudnn_attention", "_scaled_dot_product_efficient_attention")

    def f(q, k, v):
        if with_bias:
            return fn(q, k, v, None, False, 0.0, causal)[0]
        return fn(q, k, v, 0.0, causal)[0]

    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4, 3, 16), torch.randn(2, 2, 7, 16), torch.randn(2, 2, 7, 16)
    with FakeTensorMode(allow_non_fake_inputs=True):
        gm = make_fx(f, tracing_mode="fake")(q, k, v)
    gm.graph.eliminate_dead_code()  # as aot_autograd hands it over: the unused autograd outputs are gone
    module, _ = import_graph(gm.graph)
    assert op_counts(module)["graph.attention"] == 1
    attn = next(o for o in module.walk() if o.name == "graph.attention")
    assert (attn.properties["causal"].value.data != 0) == causal
    (out,) = interpret(module, [q.numpy(), k.numpy(), v.numpy()])
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    assert rel_err(out, ref.numpy()) < 1e-5


class _GroupNormUp(nn.Module):
    """A UNet block's forms: GroupNorm (with and without its affine) + SiLU, nearest upsampling by 2 and by
    (3, 2)."""

    def __init__(self, affine: bool):
        super().__init__()
        self.n = nn.GroupNorm(4, 8, affine=affine)
        if affine:
            self.n.weight.data.uniform_(0.5, 1.5)
            self.n.bias.data.uniform_(-0.5, 0.5)

    def forward(self, x):
        y = nn.functional.silu(self.n(x))
        return nn.functional.interpolate(y, scale_factor=2, mode="nearest"), \
            nn.functional.interpolate(x, scale_factor=(3, 2), mode="nearest")


@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_and_nearest_upsampling(affine):
    """``aten.native_group_norm`` imports as a row norm over ``[N, G, C / G * H * W]`` rows (graph.layer_norm) and
    the per-channel affine; ``aten.upsample_nearest2d`` by whole factors as reshape + expand + reshape. The
    reference interpreter matches eager; an upsampling to a size that is no whole multiple is refused with the
    op named."""
    m = _GroupNormUp(affine).eval()
    module, _, text = check(m, (torch.randn(2, 8, 5, 6),))
    assert re.search(r"graph\.layer_norm %\d+ : tensor<2x4x60xf32> -> tensor<2x4x60xf32>", text), text
    assert "graph.expand" in text and "tensor<2x8x5x2x6x2xf32>" in text

    class Odd(nn.Module):
        def forward(self, x):
            return nn.functional.interpolate(x, size=(7, 7), mode="nearest")

    with pytest.raises(UnsupportedOpsError, match=r"aten.upsample_nearest2d.vec: nearest upsampling of \[4, 4\] to "
                                                  r"\[7, 7\]: only whole factors"):
        import_module(Odd(), (torch.randn(1, 2, 4, 4),))


class _Bilinear(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw

    def forward(self, x):
        return nn.functional.interpolate(x, mode="bilinear", **self.kw)


@pytest.mark.parametrize("kw", [dict(scale_factor=2, align_corners=False), dict(scale_factor=2, align_corners=True),
                                dict(size=(7, 9), align_corners=False), dict(size=(3, 4), align_corners=False),
                                dict(scale_factor=1.5, align_corners=False), dict(size=(7, 9), align_corners=True)])
def test_bilinear_upsampling(kw):
    """``aten.upsample_bilinear2d`` as two passes of two constant-index row gathers weighted by constant
    per-position weights (torch's source positions: half-pixel centres clamped at 0, or ``align_corners``; a
    given scale factor used as given): up, down and fractional sizes match eager in the reference interpreter."""
    _, _, text = check(_Bilinear(**kw), (torch.randn(2, 3, 5, 6),))
    assert "graph.index_select" in text and "graph.upsample" not in text


@pytest.mark.parametrize("c, o, k, s, p, op, g", [(8, 4, 2, 2, 0, 0, 1), (8, 4, 3, 2, 1, 1, 1), (8, 6, 4, 2, 1, 0, 2),
                                                  (4, 4, 3, 1, 1, 0, 1), (6, 3, 3, 3, 0, 2, 1)])
def test_transposed_convolution(c, o, k, s, p, op, g):
    """ConvTranspose2d as the input gradient of the convolution with its weight (zeros between the input's rows
    and columns, the kernel flipped and transposed per group, the output size with ``output_padding``), the bias
    per channel: strides 1-3, padding, output padding and groups match eager in the reference interpreter."""
    torch.manual_seed(0)
    m = nn.ConvTranspose2d(c, o, k, s, p, output_padding=op, groups=g).eval()
    _, _, text = check(m, (torch.randn(2, c, 5, 6),))
    assert "graph.conv2d" in text


def test_leaky_relu():
    """``aten.leaky_relu`` as ``where(x > 0, x, x * slope)``; NaN stays NaN."""
    m = nn.LeakyReLU(0.2)
    x = torch.randn(3, 7)
    _, _, text = check(m, (x,))
    assert "graph.where" in text and "graph.gt" in text
