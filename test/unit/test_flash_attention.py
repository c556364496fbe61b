"""The attention template (prefill: a block of queries, one pass over the keys with an online softmax, tl.dot):
chosen for graph.attention of several queries, and right under Triton's interpreter against eager for the
variants torch's sdpa has (causal, an additive or boolean mask, grouped-query heads, lengths that do not divide
the blocks, fewer keys than a block, fewer queries than a dot's 16 rows)."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import kitsune


class Attn(nn.Module):
    def __init__(self, hq, hk, causal=False, mask=None):
        super().__init__()
        self.hq, self.hk, self.causal, self.mask = hq, hk, causal, mask

    def forward(self, q, k, v):
        if self.hk != self.hq:
            k = k.repeat_interleave(self.hq // self.hk, 1)
            v = v.repeat_interleave(self.hq // self.hk, 1)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask, is_causal=self.causal)
        b, h, l, e = y.shape
        return y.transpose(1, 2).reshape(b, l, h * e)  # heads merged, as a transformer's output projection reads


CASES = {
    "plain": dict(hq=2, hk=2, L=40, S=40),
    "causal": dict(hq=2, hk=2, L=70, S=70, causal=True),
    "gqa_cross": dict(hq=4, hk=2, L=20, S=150),
    "few_keys": dict(hq=2, hk=2, L=33, S=9),
    "mask": dict(hq=2, hk=2, L=24, S=90, mask="add"),
    "bool_mask": dict(hq=2, hk=2, L=24, S=30, mask="bool"),
    "few_queries": dict(hq=4, hk=1, L=5, S=33, causal=True),  # fewer queries than the 16 rows a dot needs
}


@pytest.mark.parametrize("case", list(CASES))
def test_prefill_attention_template(case):
    c = CASES[case]
    g = torch.Generator().manual_seed(1)
    q = torch.randn(2, c["hq"], c["L"], 32, generator=g)
    k = torch.randn(2, c["hk"], c["S"], 32, generator=g)
    v = torch.randn(2, c["hk"], c["S"], 32, generator=g)
    mask = None
    if c.get("mask") == "add":
        mask = torch.randn(2, 1, c["L"], c["S"], generator=g)
    elif c.get("mask") == "bool":
        mask = torch.rand(1, 1, c["L"], c["S"], generator=g) > 0.3
        mask[..., 3, :] = False  # a query with every key masked: 0, as the safe softmax gives
    m = Attn(c["hq"], c["hk"], c.get("causal", False), mask)
    cm = kitsune.compile(m, (q, k, v), mode="bulk-sync", device="cpu")
    st = cm.source[cm.source.index('(contraction): programs'):]
    assert "_dot" in st.split("@triton.jit")[0] or "tl.dot(" in st.split("@triton.jit")[0]
    assert "m_run" in cm.source and "l_run" in cm.source
    with torch.no_grad():
        ref = m(q, k, v)
    ref = torch.nan_to_num(ref)
    torch.testing.assert_close(cm(q, k, v), ref, rtol=1e-4, atol=1e-4)


def test_attention_default_config():
    """The heuristic default (measured on four prefill shapes on the H200, bench/kernels/NOTES.md section 43): 64
    queries on 4 warps (8 past head dim 128: Gemma's 256, section 44); 64-key blocks at 3 stages (2 where the loop
    has at most four blocks); never wider than the keys."""
    from kitsune.gpu import get_gpu
    from kitsune.schedule.configs import AttentionConfig, Problem

    def pick(L, E, S, batch=96):
        c = AttentionConfig.default(Problem("attention", M=L, N=E, K=S, batch=batch), get_gpu("h100"))
        return c.BM, c.BN, c.warps, c.stages

    assert pick(512, 64, 512) == (64, 64, 4, 3)
    assert pick(256, 64, 256) == (64, 64, 4, 2)
    assert pick(4096, 64, 4096, 32) == (64, 64, 4, 3)
    assert pick(2048, 128, 2048, 32) == (64, 64, 4, 3)
    assert pick(512, 256, 512) == (64, 64, 8, 3)
    assert pick(1024, 256, 1024, 8) == (64, 64, 8, 3)
    assert pick(256, 160, 256) == (64, 64, 8, 2)
    assert pick(20, 64, 9) == (64, 16, 4, 2)


def test_attention_choice_and_tile():
    """choose-schedules picks the template with a tile of BM queries by one head for [B, L, H*E] results, and
    leaves one query (decode) to split-reduction's decode_attention."""
    from kitsune.context import make_context
    from kitsune.frontend.torch_export import import_module
    from kitsune.passes.pipeline import KitsunePipelinePass

    q = torch.randn(2, 4, 300, 64)
    mod, _ = import_module(Attn(4, 4), (q, q, q), None, with_weights=False)
    KitsunePipelinePass(mode="bulk-sync", gpu="h100").apply(make_context(), mod)
    text = str(mod)
    assert 'template = "attention"' in text and "tile [1, 64, 64]" in text, text[:2000]
    # the heuristic default for a head dim of 64 (AttentionConfig.default): 64 queries on 4 warps, blocks of 64 keys
    assert "config = {warps = 4 : i64, stages = 3 : i64, BM = 64 : i64, BN = 64 : i64}" in text
    q1 = torch.randn(2, 4, 1, 64)
    kv = torch.randn(2, 4, 300, 64)
    mod, _ = import_module(Attn(4, 4), (q1, kv, kv), None, with_weights=False)
    KitsunePipelinePass(mode="bulk-sync", gpu="h100").apply(make_context(), mod)
    assert 'template = "attention"' not in str(mod)


def _key_loops(source: str) -> list[str]:
    """The attention stage's loops over key blocks, each as its text."""
    st = source[source.index("(contraction): programs"):].split("@triton.jit")[0]
    parts = st.split("for n0")[1:]
    return [p.split("att")[0] if i == len(parts) - 1 else p for i, p in enumerate(parts)]


@pytest.mark.parametrize("causal,S,loops", [(True, 128, ["plain", "masked"]), (False, 128, ["plain"]),
                                             (False, 80, ["plain", "masked"]), (False, 9, ["masked"])])
def test_attention_key_loops(causal, S, loops):
    """A causal tile walks the key blocks wholly before its first query without a mask and only the blocks to its
    last query masked; a non-causal one its whole blocks unmasked, then the last keys (fewer than a block: one
    masked block). Scores go through base-2 exponentials. Both checked in the source and against eager."""
    g = torch.Generator().manual_seed(2)
    q = torch.randn(1, 2, S, 32, generator=g)
    k = torch.randn(1, 2, S, 32, generator=g)
    v = torch.randn(1, 2, S, 32, generator=g)
    m = Attn(2, 2, causal)
    cm = kitsune.compile(m, (q, k, v), mode="bulk-sync", device="cpu")
    got = _key_loops(cm.source)
    assert ["masked" if "tl.where(" in body else "plain" for body in got] == loops, got
    assert all("tl.math.exp2(" in body and "tl.exp(" not in body for body in got)
    if causal:
        assert "<=" in got[1]  # the diagonal's mask: a key after its query is out
    with torch.no_grad():
        ref = m(q, k, v)
    torch.testing.assert_close(cm(q, k, v), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("e,causal", [(80, True), (160, False), (256, True)])
def test_attention_template_wide_and_uneven_heads(e, causal):
    """Head dims past 128 (Gemma's 256) and of no power of two (Phi-2's 80, 160) take the template too: the head-dim
    lanes padded to a power of two, q's padded lanes zeroed; against eager."""
    g = torch.Generator().manual_seed(3)
    q = torch.randn(1, 2, 40, e, generator=g)
    k = torch.randn(1, 2, 70, e, generator=g)
    v = torch.randn(1, 2, 70, e, generator=g)
    m = Attn(2, 2, causal)
    cm = kitsune.compile(m, (q, k, v), mode="bulk-sync", device="cpu")
    assert 'template = "attention"' in str(cm._low.module)
    with torch.no_grad():
        ref = m(q, k, v)
    torch.testing.assert_close(cm(q, k, v), ref, rtol=1e-4, atol=1e-4)


class Computed(nn.Module):
    """q and k computed before the attention, in its task: q's padded head-dim lanes become ones (0 * 0.5 + 1), k's
    infinities (1 / 0)."""

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q * 0.5 + 1.0, torch.reciprocal(k), v, is_causal=True)


def test_attention_template_uneven_heads_of_computed_operands():
    """Head dim 80 padded to 128 lanes: q and k read from memory load zeros in the padded lanes (masked loads,
    contiguous: clamped lanes made Triton load k an element at a time); a k computed from such loads (1 / 0 = inf
    there) is zeroed in them, so that the scores stay finite; against eager."""
    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(1, 2, n, 80, generator=g) for n in (40, 70, 70))
    k = k.sign() * (k.abs() + 0.5)  # (no reciprocal of a value near zero)
    cm = kitsune.compile(Computed(), (q, k, v), mode="bulk-sync", device="cpu")
    src = cm.source
    stages = [ln for ln in src.splitlines() if "# stage" in ln]
    assert len(stages) == 1 and '"attention_0"' in stages[0], stages  # (q and k computed in the attention's task)
    assert re.search(r"kt\d+ = tl\.where\(e\d+_raw\[:, None\] < 80, kt\d+, 0\.0\)", src)
    assert "tl.minimum(e" not in src and re.search(r"mask=\(e\d+_raw < 80\)", src)  # masked lanes, not clamped
    with torch.no_grad():
        ref = Computed()(q, k, v)
    torch.testing.assert_close(cm(q, k, v), ref, rtol=1e-4, atol=1e-4)


class MHA(nn.Module):
    def __init__(self, d, heads, batch_first):
        super().__init__()
        self.a = nn.MultiheadAttention(d, heads, batch_first=batch_first)

    def forward(self, x):
        return self.a(x, x, x, need_weights=False)[0]


class RowsMerged(nn.Module):
    """Attention whose heads' merge also merges the batch with the queries: ``[B, H, L, E] -> [B * L, H * E]``."""

    def forward(self, q, k, v):
        y = F.scaled_dot_product_attention(q, k, v)
        b, h, n, e = y.shape
        return y.transpose(1, 2).reshape(b * n, h * e) * 2.0


@pytest.mark.parametrize("case", ["mha_batch_first", "mha_seq_first", "rows_merged"])
def test_attention_template_finds_the_queries_in_the_result(case):
    """The template tiles the result's dim of the queries wherever the layout ops put it: ``nn.MultiheadAttention``
    stores ``[L, B, H, E]`` and merges it to ``[L * B, H * E]`` for its output projection (the task then ends before
    that merge, the projection reads through it), a model may merge the batch with the queries. Before, both ran on
    the generic evaluator. Against eager."""
    g = torch.Generator().manual_seed(4)
    if case == "rows_merged":
        m = RowsMerged()
        inputs = tuple(torch.randn(2, 4, 40, 16, generator=g) for _ in range(3))
        tile = "tile [1, 40, 1, 16]"
    else:
        m = MHA(64, 4, case == "mha_batch_first").eval()
        inputs = (torch.randn(2, 40, 64, generator=g) if case == "mha_batch_first" else
                  torch.randn(40, 2, 64, generator=g),)
        tile = "tile [40, 1, 1, 16]"
    cm = kitsune.compile(m, inputs, mode="bulk-sync", device="cpu")
    stages = [ln for ln in str(cm._low.module).split("\n") if "gpu_queue.stage" in ln and 'template = "attention"' in ln]
    assert len(stages) == 1 and tile in stages[0], stages
    with torch.no_grad():
        ref = m(*inputs)
    torch.testing.assert_close(cm(*inputs), ref, rtol=1e-4, atol=1e-4)
