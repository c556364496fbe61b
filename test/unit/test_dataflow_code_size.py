"""Dataflow mode's generated code stays as small as bulk-sync's on a stack of transformer layers (issue 11).

A GPT-2-like model (pre-LayerNorm blocks: attention, GELU MLP) lowered in dataflow mode with placement ``auto``
(what ``kitsune.compile`` does for a model it has never seen) once made kernels that Triton took minutes to
compile: each LayerNorm consumer of a GEMM took the GEMM's 128-row band as its tile (a [128, 768] tile on two
programs), kitsune-split-reduction then replicated that under-filled task into 16 partial stages, and the
temporal kernels of identical layers differed in their counter indices, so none shared code. Checked here: no
evaluator stage gets a row-band tile beyond ``ROW_BAND_LIMIT``, dataflow mode emits about as many Triton
functions as bulk-sync, the temporal kernels of the layers share one function, and the program still computes
the model (Triton's CPU interpreter, two launches).
"""

from __future__ import annotations

import math
import re
import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from torch import nn  # noqa: E402

warnings.filterwarnings("ignore", message=".*Triton's CPU interpreter.*")


class Block(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.fc_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln_1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc_proj(nn.functional.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, layers: int, d: int, heads: int, tokens: int, vocab: int = 64):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(tokens, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]).unsqueeze(0))
        for blk in self.blocks:
            x = blk(x)
        return self.ln_f(x)


def _model(d: int, heads: int, tokens: int, layers: int = 2):
    torch.manual_seed(0)
    return GPT(layers, d, heads, tokens).eval(), torch.randint(0, 64, (1, tokens))


def _lowered(model, ids, mode: str):
    from kitsune.context import make_context
    from kitsune.frontend.torch_export import import_module
    from kitsune.passes.pipeline import KitsunePipelinePass

    module, _ = import_module(model, (ids,), with_weights=False)
    KitsunePipelinePass(mode=mode, gpu="h100").apply(make_context(), module)
    return module


def _padded(tile) -> int:
    return math.prod(1 << max(0, int(t) - 1).bit_length() for t in tile)


def test_gpt2_like_stack_in_dataflow_mode_is_no_larger_than_bulk_sync():
    """d=256, 64 tokens: the projections after the attention and the MLP's first GEMM (generic, with the residual)
    read their producers' 64-row bands. Before, they took [1, 64, 256] tiles, were split into 4 and 16 partials
    plus a combine of that tile, and the module had 16-stage kernels and 37 kernel and stage functions against
    bulk-sync's 22."""
    from kitsune.codegen.triton_gen import generate_triton
    from kitsune.dialects import gpu_queue as gq
    from kitsune.passes.choose_schedules import ROW_BAND_LIMIT

    model, ids = _model(256, 4, 64)
    functions, stages = {}, {}
    for mode in ("bulk-sync", "dataflow"):
        low = _lowered(model, ids, mode)
        src = generate_triton(low, capacity="all")
        functions[mode] = len(re.findall(r"^def k\d+", src, re.M))  # emitted kernels and their stage functions
        stages[mode] = max(len(k.stages()) for k in low.walk() if isinstance(k, gq.KernelOp))
        if mode == "dataflow":
            big = [(s.stage_name, list(s.tile_sizes())) for s in low.walk() if isinstance(s, gq.StageOp)
                   and s.template() in ("generic", "pointwise") and _padded(s.tile_sizes()) > ROW_BAND_LIMIT]
            assert not big, f"evaluator stages with tiles beyond ROW_BAND_LIMIT: {big}"
    assert functions["dataflow"] <= 1.1 * functions["bulk-sync"], functions
    # (a layer's GEMMs with their LayerNorms, on the gemm template since a norm over 256-wide rows runs in its
    # epilogue, pipelined in one kernel: 4 stages; the split partials this guards against made 16)
    assert stages["dataflow"] <= stages["bulk-sync"] + 4, stages


def test_temporal_kernels_of_identical_layers_share_one_function():
    """d=64, 16 tokens, three layers: each layer's MLP is a temporal kernel (a stage waits on its producer stage's
    counter); the last layer's also runs the final LayerNorm. Its counters count from the kernel's ticket, so the
    first two layers' kernels are one function (before: two, their counter indices and watchdog codes differed),
    each with its own counters; the program computes the model, twice (the second launch's epoch). (With two
    layers and the attention default of 2026-11-27 the placement makes the MLPs, not the attentions, the
    temporal kernels: the two differ by the final LayerNorm.)"""
    import kitsune

    model, ids = _model(64, 2, 16, layers=3)
    cm = kitsune.compile(model, (ids,), mode="dataflow", device="cpu", cache=False)
    mod = cm.program.module
    waiting = sorted({kernel for kernel, _, _ in mod.WAITS}, key=lambda k: int(k[1:]))
    fn = {k["name"]: k["fn"] for k in mod.KERNELS}
    ticket = {k["name"]: k["ticket"] for k in mod.KERNELS}
    shared = [(a, b) for i, a in enumerate(waiting) for b in waiting[i + 1:] if fn[a] is fn[b]]
    assert shared, f"no two temporal kernels share a function: {waiting}"
    a, b = shared[0]
    assert ticket[a] != ticket[b]  # their own counter regions
    assert re.search(rf'"name": "{b}", "fn": {a}\b', cm.source)
    # every watchdog code names one wait
    assert sorted(mod.WAIT_CODES.values()) == list(range(len(mod.WAITS)))
    with torch.no_grad():
        ref = model(ids)
        for _ in range(2):
            out = cm(ids)
            assert float((out - ref).norm() / ref.norm()) < 1e-4
