"""Tests for the benchmark workloads in kitsune.models (CPU, fp32, small scale)."""

from __future__ import annotations

import pytest
import torch

from kitsune.models import WORKLOADS, Workload, get_workload

NAMES = [
    "mlp_gpt3_T1024",
    "mlp_gpt3_T256",
    "llama_decode_b1",
    "llama_decode_b8",
    "llama1b_decode_b1",
    "dlrm_b2048",
    "nerf_65k",
    "mgn_10k",
    "inception_b8",
]
SMALL = 0.05

# torch-internal deprecation noise from torch.export
pytestmark = pytest.mark.filterwarnings("ignore:.*LeafSpec.*:FutureWarning")


def _lin(i: int, o: int, bias: bool = True) -> int:
    return i * o + (o if bias else 0)


def _conv(i: int, o: int, k: int) -> int:
    return i * o * k * k + o


_GPT = _lin(12288, 6144) + _lin(6144, 12288)
_LLAMA = (
    2048  # attn RMSNorm
    + _lin(2048, (32 + 2 * 8) * 64, bias=False)
    + _lin(2048, 2048, bias=False)
    + 2048  # mlp RMSNorm
    + _lin(2048, 2 * 8192, bias=False)
    + _lin(8192, 2048, bias=False)
)
EXPECTED_PARAMS = {
    "mlp_gpt3_T1024": _GPT,
    "mlp_gpt3_T256": _GPT,
    "llama_decode_b1": _LLAMA,
    "llama_decode_b8": _LLAMA,
    "llama1b_decode_b1": 128256 * 2048 + 16 * _LLAMA + 2048,  # tied embedding / lm_head, 16 layers, final norm
    "dlrm_b2048": _lin(13, 512) + _lin(512, 256) + _lin(256, 64)
    + 8 * 100000 * 64
    + _lin(100, 512) + _lin(512, 256) + _lin(256, 1),
    "nerf_65k": _lin(63, 256) + 3 * _lin(256, 256) + _lin(256 + 63, 256) + 3 * _lin(256, 256) + _lin(256, 4),
    "mgn_10k": _lin(384, 128) + _lin(128, 128) + 2 * 128 + _lin(256, 128) + _lin(128, 128) + 2 * 128,
    "inception_b8": _conv(256, 64, 1)
    + _conv(256, 96, 1) + _conv(96, 128, 3)
    + _conv(256, 16, 1) + _conv(16, 32, 5)
    + _conv(256, 32, 1),
}

FULL_INPUT_SHAPES = {
    "mlp_gpt3_T1024": [(1024, 12288)],
    "mlp_gpt3_T256": [(256, 12288)],
    "llama_decode_b1": [(1, 1, 2048)],
    "llama_decode_b8": [(8, 1, 2048)],
    "llama1b_decode_b1": [(1, 1), (1,)],
    "dlrm_b2048": [(2048, 13), (8, 2048, 20)],
    "nerf_65k": [(65536, 63)],
    "mgn_10k": [(10000, 128), (60000, 128), (60000,), (60000,)],
    "inception_b8": [(8, 256, 28, 28)],
}
FULL_OUTPUT_SHAPES = {
    "mlp_gpt3_T1024": [(1024, 12288)],
    "mlp_gpt3_T256": [(256, 12288)],
    "llama_decode_b1": [(1, 1, 2048)],
    "llama_decode_b8": [(8, 1, 2048)],
    "llama1b_decode_b1": [(1, 1, 128256)],
    "dlrm_b2048": [(2048, 1)],
    "nerf_65k": [(65536, 4)],
    "mgn_10k": [(10000, 128), (60000, 128)],
    "inception_b8": [(8, 256, 28, 28)],
}


def _expected_output_shapes(name: str, cfg) -> list[tuple[int, ...]]:
    if name.startswith("mlp_gpt3"):
        return [(cfg.tokens, cfg.d_model)]
    if name.startswith("llama1b"):
        return [(cfg.layer.batch, 1, cfg.vocab)]
    if name.startswith("llama"):
        return [(cfg.batch, 1, cfg.hidden)]
    if name.startswith("dlrm"):
        return [(cfg.batch, 1)]
    if name.startswith("nerf"):
        return [(cfg.points, 4)]
    if name.startswith("mgn"):
        return [(cfg.nodes, cfg.latent), (cfg.edges, cfg.latent)]
    if name.startswith("inception"):
        return [(cfg.batch, cfg.channels, cfg.size, cfg.size)]
    raise AssertionError(name)


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def test_registry():
    assert list(WORKLOADS) == NAMES
    for name, w in WORKLOADS.items():
        assert isinstance(w, Workload)
        assert w.name == name
        assert w.description
        assert get_workload(name) is w


def test_unknown_workload():
    with pytest.raises(KeyError) as exc:
        get_workload("resnet50")
    msg = str(exc.value)
    assert "resnet50" in msg
    for name in NAMES:
        assert name in msg


def test_invalid_scale():
    with pytest.raises(ValueError):
        get_workload("nerf_65k").build(scale=0.0)


@pytest.mark.parametrize("name", NAMES)
def test_full_size_on_meta(name):
    """Scale 1.0 matches the spec: parameter count, input/output shapes (meta, no compute)."""
    model, inputs = get_workload(name).build(scale=1.0, device="meta")
    assert sum(p.numel() for p in model.parameters()) == EXPECTED_PARAMS[name]
    assert [tuple(t.shape) for t in inputs] == FULL_INPUT_SHAPES[name]
    with torch.no_grad():
        out = _as_tuple(model(*inputs))
    assert [tuple(o.shape) for o in out] == FULL_OUTPUT_SHAPES[name]
    if name == "llama1b_decode_b1":  # 16 layers, each with its KV cache of 1024 past positions + the new one
        assert {n: tuple(t.shape) for n, t in model.named_buffers()} == {
            f"layers.{i}.cache_{kv}": (1, 8, 1025, 64) for i in range(16) for kv in "kv"}
        assert model.embed.weight.shape == (128256, 2048)
    elif name.startswith("llama"):
        b = FULL_INPUT_SHAPES[name][0][0]
        assert {n: tuple(t.shape) for n, t in model.named_buffers()} == {
            "cache_k": (b, 8, 1024, 64),
            "cache_v": (b, 8, 1024, 64),
        }
        assert model.qkv.out_features == (32 + 2 * 8) * 64


@pytest.mark.parametrize("name", NAMES)
def test_small_forward(name):
    w = get_workload(name)
    cfg = w.config(SMALL)
    model, inputs = w.build(scale=SMALL)
    assert not model.training
    for p in model.parameters():
        assert p.dtype == torch.float32 and p.device.type == "cpu"
    for t in inputs:
        assert t.dtype in (torch.float32, torch.int64)
    if name.startswith("dlrm"):
        assert inputs[1].dtype == torch.int64
        assert 0 <= int(inputs[1].min()) and int(inputs[1].max()) < cfg.rows
    if name.startswith("mgn"):
        for idx in inputs[2:]:
            assert idx.dtype == torch.int64
            assert 0 <= int(idx.min()) and int(idx.max()) < cfg.nodes
    with torch.no_grad():
        out = _as_tuple(model(*inputs))
    assert [tuple(o.shape) for o in out] == _expected_output_shapes(name, cfg)
    for o in out:
        assert o.dtype == torch.float32
        assert torch.isfinite(o).all()
        # O(1), neither collapsed nor blown up
        assert 0.1 < o.float().std().item() < 10.0
        assert (o != 0).float().mean().item() > 0.2


@pytest.mark.parametrize("name", NAMES)
def test_tiny_scale_clamps(name):
    """Very small scales hit the minimum sizes and still run."""
    model, inputs = get_workload(name).build(scale=1e-4)
    with torch.no_grad():
        for o in _as_tuple(model(*inputs)):
            assert torch.isfinite(o).all()


def test_llama_structure_at_scale():
    for scale in (0.05, 0.3, 0.5, 1.0):
        cfg = get_workload("llama_decode_b8").config(scale)
        assert cfg.head_dim == 64 and cfg.batch == 8
        assert cfg.n_heads % cfg.n_kv_heads == 0 and cfg.n_heads // cfg.n_kv_heads == 4
        assert cfg.hidden == cfg.n_heads * cfg.head_dim
    cfg = get_workload("llama_decode_b1").config(1.0)
    assert (cfg.n_heads, cfg.n_kv_heads, cfg.hidden, cfg.intermediate, cfg.cache_len) == (32, 8, 2048, 8192, 1024)


def test_deterministic_seed():
    w = get_workload("mgn_10k")
    m1, i1 = w.build(scale=SMALL, seed=3)
    m2, i2 = w.build(scale=SMALL, seed=3)
    m3, _ = w.build(scale=SMALL, seed=4)
    for a, b in zip(i1, i2):
        assert torch.equal(a, b)
    s1, s2, s3 = m1.state_dict(), m2.state_dict(), m3.state_dict()
    assert all(torch.equal(s1[k], s2[k]) for k in s1)
    assert not all(torch.equal(s1[k], s3[k]) for k in s1)


def test_bf16_build():
    model, inputs = get_workload("llama_decode_b1").build(scale=SMALL, dtype=torch.bfloat16)
    assert all(p.dtype == torch.bfloat16 for p in model.parameters())
    assert model.cache_k.dtype == torch.bfloat16
    assert inputs[0].dtype == torch.bfloat16
    model, inputs = get_workload("dlrm_b2048").build(scale=SMALL, dtype=torch.bfloat16)
    assert inputs[0].dtype == torch.bfloat16 and inputs[1].dtype == torch.int64
    assert model.tri_idx.dtype == torch.int64


@pytest.mark.parametrize("name", NAMES)
def test_export(name):
    model, inputs = get_workload(name).build(scale=SMALL)
    ep = torch.export.export(model, inputs)
    core = ep.run_decompositions()
    with torch.no_grad():
        ref = _as_tuple(model(*inputs))
        got = _as_tuple(core.module()(*inputs))
    assert len(ref) == len(got)
    for r, g in zip(ref, got):
        torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-4)
    # the layers are functional (the KV cache concatenated); the whole model updates its caches in place
    mutated = set(core.graph_signature.buffers_to_mutate.values())
    if name == "llama1b_decode_b1":
        assert mutated == {n for n, _ in model.named_buffers()}
    else:
        assert not mutated


def test_llama_inplace_cache_decode_loop():
    """The in-place form is a real decode loop: each step writes its row at pos and attends over slots <= pos;
    step by step it matches the functional form run on the cache grown by concatenation."""
    from kitsune.models import LlamaConfig, LlamaDecodeLayer

    cfg = LlamaConfig.from_scale(SMALL, batch=2, kv_inplace=True)
    gen = torch.Generator().manual_seed(0)
    model = LlamaDecodeLayer(cfg)
    model.init_weights(gen)
    past = cfg.cache_len - 3
    with torch.no_grad():
        model.cache_k[:, :, past:] = 7.0  # slots not written yet: the mask must hide them
        model.cache_v[:, :, past:] = 7.0
    for step in range(3):
        x = torch.randn(2, 1, cfg.hidden, generator=gen)
        ref = LlamaDecodeLayer(LlamaConfig(batch=2, n_kv_heads=cfg.n_kv_heads, cache_len=past + step))
        ref.load_state_dict({k: v for k, v in model.state_dict().items() if "cache" not in k}, strict=False)
        ref.cache_k = model.cache_k[:, :, :past + step].clone()
        ref.cache_v = model.cache_v[:, :, :past + step].clone()
        with torch.no_grad():
            got = model(x, torch.tensor([past + step]))
            want = ref(x)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert not (model.cache_k[:, :, past:past + 3] == 7.0).all(dim=-1).any()  # every step left its row
    assert (model.cache_k[:, :, past + 3:] == 7.0).all()  # the slot no step reached is untouched
