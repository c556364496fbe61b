"""Tests for the GPU descriptions (kitsune.gpu), the cost model (kitsune.cost) and kitsune-estimate."""

from __future__ import annotations

import math

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr

from kitsune import cost
from kitsune.context import parse_module
from kitsune.gpu import H100, H200, PRESETS, get_gpu, parse_gpu_option

ES = {"f32": 4, "bf16": 2, "f16": 2}


def _func(text: str):
    m = parse_module(text)
    return next(o for o in m.walk() if isinstance(o, func.FuncOp))


def _ops(f, name=None):
    return [o for o in f.walk() if o.name.startswith("graph.") and (name is None or o.name == "graph." + name)]


def _one(body_args: str, ret: str, body: str):
    return _func(f"func.func @main({body_args}) -> {ret} {{\n{body}\n}}")


def _matmul(M, K, N, dt="bf16"):
    return _one(f"%a: tensor<{M}x{K}x{dt}>, %b: tensor<{K}x{N}x{dt}>", f"tensor<{M}x{N}x{dt}>",
                f"%c = graph.matmul %a, %b : tensor<{M}x{K}x{dt}>, tensor<{K}x{N}x{dt}> -> tensor<{M}x{N}x{dt}>\n"
                f"func.return %c : tensor<{M}x{N}x{dt}>")


# ------------------------------------------------------------------ GPU presets


def test_presets():
    assert set(PRESETS) == {"h100", "h200"}
    h = get_gpu("h100")
    assert h is H100 and get_gpu("H100") is H100 and get_gpu(H200) is H200
    assert h.sm_count == 132 and h.l2_bytes == 50 * 2**20 and h.smem_per_sm_bytes == 228 * 1024
    assert h.dram_bw == pytest.approx(3.0e12) and h.tc_bf16_flops == pytest.approx(800e12)
    assert h.fp32_flops == pytest.approx(60e12)
    assert 3e-6 <= h.launch_overhead_s <= 5e-6
    g = get_gpu("h200")
    assert g.sm_count == 132 and g.tc_bf16_flops == h.tc_bf16_flops and g.l2_bytes == h.l2_bytes
    assert g.dram_bw == pytest.approx(4.3e12) and g.dram_bw_nominal == pytest.approx(4.8e12)
    assert h.peak("tc_fp16") == h.peak("tc_bf16")


def test_unknown_preset():
    with pytest.raises(ValueError, match=r"unknown GPU 'a100'; presets: h100, h200"):
        get_gpu("a100")
    with pytest.raises(ValueError, match="presets"):
        parse_gpu_option("v100")
    with pytest.raises(ValueError, match="bad GPU override"):
        parse_gpu_option("h100,warp_size=64")
    with pytest.raises(ValueError, match="unknown math class"):
        H100.peak("int4")


def test_parse_gpu_option():
    assert parse_gpu_option("gpu=h200") is H200
    g = parse_gpu_option("h100,sm_count=66,dram_bw=1.5e12")
    assert g.sm_count == 66 and g.dram_bw == 1.5e12 and g.tc_bf16_flops == H100.tc_bf16_flops
    assert H100.sm_count == 132  # frozen preset untouched


# ------------------------------------------------------------------ op counts


@pytest.mark.parametrize("dt", ["f32", "bf16"])
def test_matmul_counts(dt):
    M, K, N = 64, 96, 32
    (op,) = _ops(_matmul(M, K, N, dt))
    e = cost.estimate_op(op, "h100")
    assert e.flops == 2 * M * N * K
    assert e.bytes == (M * K + K * N + M * N) * ES[dt]
    rate = H100.tc_bf16_flops if dt == "bf16" else H100.fp32_flops
    assert e.compute_s == pytest.approx(2 * M * N * K / rate)
    assert e.memory_s == pytest.approx(e.bytes / H100.dram_bw)
    assert e.time_s == pytest.approx(max(e.compute_s, e.memory_s) + H100.launch_overhead_s)
    assert cost.math_class(op) == ("tc_bf16" if dt == "bf16" else "fp32")
    if dt == "f32":
        assert cost.math_class(op, tf32=True) == "tc_tf32"


def test_softmax_counts():
    R, C = 16, 128
    f = _one(f"%x: tensor<{R}x{C}xf32>", f"tensor<{R}x{C}xf32>",
             f"%y = graph.softmax %x : tensor<{R}x{C}xf32> -> tensor<{R}x{C}xf32>\n"
             f"func.return %y : tensor<{R}x{C}xf32>")
    (op,) = _ops(f)
    e = cost.estimate_op(op, "h100")
    # per element: max, sub, exp, add (row sum), div
    assert e.flops == 5 * R * C
    assert e.bytes == 2 * R * C * 4
    assert e.compute_s == pytest.approx(5 * R * C / H100.fp32_flops)
    assert e.bound == "launch"  # tiny: the launch overhead dominates


def test_layer_norm_counts():
    R, C = 8, 256
    t, w = f"tensor<{R}x{C}xbf16>", f"tensor<{C}xbf16>"
    f = _one(f"%x: {t}, %w: {w}, %b: {w}", t,
             f"%y = graph.layer_norm %x, %w, %b : {t}, {w}, {w} -> {t}\nfunc.return %y : {t}")
    (op,) = _ops(f)
    c = op.counts()
    # per element: sum, sub mean, square + add (variance), mul rstd, mul weight, add bias = 7;
    # per row: mean (mul), rstd (mul inv, add eps, rsqrt) = 4
    assert c.flops == 7 * R * C + 4 * R
    assert c.bytes_read == (R * C + 2 * C) * 2 and c.bytes_written == R * C * 2
    e = cost.estimate_op(op, "h100")
    assert e.flops == c.flops and e.bytes == c.bytes and cost.math_class(op) == "fp32"


# ------------------------------------------------------------------ bounds and tasks


def test_gemm_compute_bound_gemv_memory_bound():
    (gemm,) = _ops(_matmul(8192, 8192, 8192))
    e = cost.estimate_op(gemm, "h100")
    assert e.bound == "compute" and e.compute_s > 10 * e.memory_s
    (gemv,) = _ops(_matmul(1, 8192, 8192))
    e = cost.estimate_op(gemv, "h100")
    assert e.bound == "memory" and e.memory_s > 100 * e.compute_s
    # memory-bound: faster on the H200's HBM3e; compute-bound: the same
    assert cost.estimate_op(gemv, "h200").time_s < e.time_s
    assert cost.estimate_op(gemm, "h200").compute_s == pytest.approx(cost.estimate_op(gemm, "h100").compute_s)


def test_wave_quantization():
    (gemm,) = _ops(_matmul(4096, 4096, 4096))
    full = cost.estimate_op(gemm, "h100", tiles=132)
    assert full.waves == 1 and full.efficiency == 1.0
    one_more = cost.estimate_op(gemm, "h100", tiles=133)
    assert one_more.waves == 2 and one_more.efficiency == pytest.approx(133 / 264)
    assert one_more.compute_s == pytest.approx(full.compute_s * 264 / 133)
    # a grid of 10 CTAs streams with only 10 SMs
    (gemv,) = _ops(_matmul(1, 8192, 8192))
    few = cost.estimate_op(gemv, "h100", tiles=10)
    assert few.memory_s == pytest.approx(few.bytes / (10 * H100.sm_dram_bw))
    assert few.memory_s > cost.estimate_op(gemv, "h100").memory_s


def _mlp_text(T=1024, D=12288, H=6144, dt="bf16"):
    x, w1, b1, h = f"tensor<{T}x{D}x{dt}>", f"tensor<{H}x{D}x{dt}>", f"tensor<{H}x{dt}>", f"tensor<{T}x{H}x{dt}>"
    w2, b2 = f"tensor<{D}x{H}x{dt}>", f"tensor<{D}x{dt}>"
    return f"""
func.func @mlp(%x: {x}, %w1: {w1}, %b1: {b1}, %w2: {w2}, %b2: {b2}) -> {x} {{
  %h = graph.linear %x, %w1, %b1 : {x}, {w1}, {b1} -> {h}
  %g = graph.gelu %h : {h} -> {h}
  %y = graph.linear %g, %w2, %b2 : {h}, {w2}, {b2} -> {x}
  func.return %y : {x}
}}"""


def test_task_bytes_keep_intermediates_on_chip():
    T, D, H = 64, 256, 128
    f = _func(_mlp_text(T, D, H))
    lin1, gelu, lin2 = _ops(f)
    weights = (H * D + H + D * H + D) * 2
    r, w = cost.task_bytes([lin1, gelu, lin2])
    assert r == T * D * 2 + weights and w == T * D * 2
    # linear + gelu epilogue: x, w1, b1 in; g out (h stays on chip)
    r, w = cost.task_bytes([lin1, gelu])
    assert r == (T * D + H * D + H) * 2 and w == T * H * 2
    e = cost.estimate_task([lin1, gelu, lin2], "h100")
    assert e.flops == sum(o.counts().flops for o in (lin1, gelu, lin2))
    assert e.bytes == 2 * T * D * 2 + weights
    assert e.time_s < sum(cost.estimate_op(o, "h100").time_s for o in (lin1, gelu, lin2))


def test_floor_gpt_mlp_full_size():
    f = _func(_mlp_text())
    fl = cost.roofline_floor(f, "h100")
    assert fl.flops / 1e9 == pytest.approx(309.2, abs=0.3)
    assert fl.bytes / 1e6 == pytest.approx(352, abs=1)
    assert fl.bound == "compute"
    assert fl.time_s * 1e3 == pytest.approx(0.387, abs=0.001)
    # T=256: memory-bound at 315 MB, 0.105 ms (WORKLOADS.md)
    fl = cost.roofline_floor(_func(_mlp_text(T=256)), "h100")
    assert fl.flops / 1e9 == pytest.approx(77.3, abs=0.1)
    assert fl.bytes / 1e6 == pytest.approx(315, abs=1)
    assert fl.bound == "memory" and fl.time_s * 1e3 == pytest.approx(0.105, abs=0.001)


def test_floor_gathers_count_gathered_rows():
    f = _one("%w: tensor<100000x64xbf16>, %i: tensor<2048x20xi64>", "tensor<2048x64xbf16>",
             "%y = graph.embedding_bag %w, %i : tensor<100000x64xbf16>, tensor<2048x20xi64> -> tensor<2048x64xbf16>\n"
             "func.return %y : tensor<2048x64xbf16>")
    fl = cost.roofline_floor(f, "h100")
    # at most 2048*20 rows of the 100000-row table, the indices and the output
    assert fl.bytes <= (2048 * 20 * 64 * 2) + 2048 * 20 * 8 + 2048 * 64 * 2
    assert fl.bytes < 100000 * 64 * 2


def test_report():
    f = _func(_mlp_text(64, 256, 128))
    text = cost.report(f, "h200")
    assert "@mlp on h200" in text
    assert "%h = graph.linear" in text and "%g = graph.gelu" in text
    assert "total (one kernel each)" in text and "3 kernels" in text and "roofline floor" in text
    # ops that carry kitsune.task are reported as one fused task
    for o in _ops(f):
        o.attributes["kitsune.task"] = IntegerAttr(0, 64)
    text = cost.report(f, "h100")
    assert "task 0" in text and "1 kernels" in text


def test_estimate_pass_attributes():
    from kitsune.passes.estimate import EstimatePass
    from kitsune.context import make_context

    m = parse_module(_mlp_text(64, 256, 128))
    EstimatePass(gpu="h100").apply(make_context(), m)
    f = next(o for o in m.walk() if isinstance(o, func.FuncOp))
    fl = cost.roofline_floor(f, "h100")
    assert f.attributes["kitsune.floor_us"].value.data == pytest.approx(fl.time_s * 1e6, abs=1e-3)
    assert f.attributes["kitsune.bytes"].value.data == fl.bytes
    total = 0.0
    for o in _ops(f):
        assert o.attributes["kitsune.flops"].value.data == o.counts().flops
        assert o.attributes["kitsune.bytes"].value.data == o.counts().bytes
        total += o.attributes["kitsune.est_us"].value.data
    assert f.attributes["kitsune.est_us"].value.data == pytest.approx(total, abs=0.01)
    m.verify()


# ------------------------------------------------------------------ workloads through the importer


def _importer():
    try:
        import kitsune

        if hasattr(kitsune, "import_module"):
            return kitsune.import_module
        from kitsune.frontend.torch_export import import_module

        return import_module
    except (ImportError, AttributeError):
        return None


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_floor_llama_decode_weights():
    imp = _importer()
    if imp is None:
        pytest.skip("importer kitsune.frontend.torch_export not available yet")
    torch = pytest.importorskip("torch")
    from kitsune.models import get_workload

    model, inputs = get_workload("llama_decode_b1").build(1.0, torch.bfloat16, "cpu")
    module, _weights = imp(model, inputs)
    f = next(o for o in module.walk() if isinstance(o, func.FuncOp))
    fl = cost.roofline_floor(f, "h100")
    # 121.6 MB of weights + 2.1 MB of KV cache + activations: 124 MB, 0.041 ms, memory-bound
    assert fl.bytes / 1e6 == pytest.approx(124, abs=3)
    assert fl.bound == "memory"
    assert fl.time_s * 1e3 == pytest.approx(0.041, abs=0.002)
    assert math.isclose(fl.flops / 1e9, 0.13, abs_tol=0.03)
