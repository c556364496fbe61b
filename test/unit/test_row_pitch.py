"""Intermediates at a 16-byte row pitch (``kitsune/codegen/row_pitch.py``): a buffer of odd-width rows that only
the evaluator and the gemm template address is a view of a buffer of padded rows, its loads and stores use the
pitch, the Gluon gemm's TMA descriptors carry it, and the program still computes what eager does (Triton's
interpreter, both modes). A program's own output and a row too short keep their shape."""

from __future__ import annotations

import re

import pytest
import torch
from graphgen import bench_model_triton, bench_module

import kitsune
from kitsune.codegen.plan import Tensor
from kitsune.codegen.row_pitch import MIN_ROW, row_pitch


def _head(width: int, vocab: int):
    """LayerNorm, a projection to ``vocab`` columns, log_softmax over them (``bench/models/lm_head.py``'s model)."""
    torch.manual_seed(0)
    return bench_module("lm_head").LMHead(width, vocab).eval()


def _views(source: str) -> dict:
    m = re.search(r"^VIEWS = (\{.*?\})  #", source, re.M)
    return eval(m.group(1))


@pytest.mark.parametrize("mode", ["bulk-sync", "dataflow"])
def test_odd_width_logits_live_at_a_16_byte_pitch(mode):
    m, x = _head(32, 1001), torch.randn(4, 20, 32)
    cm = kitsune.compile(m, (x,), mode=mode, device="cpu", cache=False)
    views = _views(cm.source)
    (name, (base, dim, offset)), = views.items()
    assert (dim, offset) == (2, 0) and f"{base!r}: ((4, 20, 1004), 'f32', 'buffer')" in cm.source, views
    # the projection stores and the log_softmax loads its rows 1004 elements apart (not 1001)
    assert re.search(rf"tl\.store\({name} \+ \(.*\b1004 \*", cm.source) and re.search(rf"tl\.load\({name} \+ \(.*\b1004 \*",
                                                                                      cm.source)
    assert not re.search(rf"{name} \+ \(.*\b1001 \* ", cm.source)
    with torch.no_grad():
        torch.testing.assert_close(cm(x), m(x), rtol=1e-5, atol=1e-5)


def test_outputs_and_short_rows_keep_their_shape():
    """The log-probabilities (the program's output) stay [4, 20, 1001]; a 100-wide intermediate (under MIN_ROW)
    is not padded."""
    m, x = _head(32, 100), torch.randn(4, 20, 32)
    assert 100 < MIN_ROW
    cm = kitsune.compile(m, (x,), mode="bulk-sync", device="cpu", cache=False)
    assert _views(cm.source) == {}
    with torch.no_grad():
        torch.testing.assert_close(cm(x), m(x), rtol=1e-5, atol=1e-5)


def test_row_pitch_reads_only_padded_row_views():
    t = Tensor("a", (4, 1001), "bf16", "buffer", view=("b", 1, 0, (4, 1008)))
    assert row_pitch(t) == 1008 and t.strides() == [1008, 1]
    assert row_pitch(Tensor("a", (4, 8), "bf16", "buffer", view=("b", 0, 4, (8, 8)))) is None  # a concat part
    assert row_pitch(Tensor("a", (4, 1001), "bf16", "buffer")) is None


def test_gluon_gemm_descriptors_carry_the_pitch():
    """An LM head at full size (GPT-2's 50 257-token vocabulary, bf16, generated for the H100 without a GPU): the
    projection's logits are a view of rows of 50 264, and the Gluon gemm stores them by TMA through a descriptor
    of their own shape at that pitch (before: from registers, two bytes at a time)."""
    src = bench_model_triton("lm_head.py", "bulk-sync", gluon=True)  # (the Gluon form, as on a GPU)
    views = _views(src)
    logits = [n for n, (b, d, o) in views.items() if f"{b!r}: ((8, 128, 50264), 'bf16', 'buffer')" in src]
    assert len(logits) == 1, views
    assert re.search(rf"\('\w+', '{logits[0]}', \[1024, 50257\], \[50264, 1\], \[128, \d+\], 'bf16'\)", src)
    assert "tma.async_copy_shared_to_global" in src
