"""Online softmax statistics (``templates/online_softmax.py``): a maximum and the sum of exponentials over it, in a
loop of chunks, are one pass over the row. The pattern is read off the statements, never an op name; the
generated statistics loop once, and the program matches eager on rows with -inf, NaN and large values (Triton's
interpreter)."""

from __future__ import annotations

import re

import torch
from graphgen import bench_model_triton
from torch import nn

import kitsune
from kitsune.codegen.triton_gen.templates.online_softmax import FOLD, sum_of_exponentials
from kitsune.semantics.comprehension import parse


def test_the_pattern_is_read_off_the_statements():
    stats = "M[d0, 0] max= X[d0, r]; E[d0, r] = exp(X[d0, r] - M[d0, 0]); S[d0, 0] += E[d0, r]"
    assert sum_of_exponentials(parse(stats).stmts, 0) == 2
    inline = "M[d0, 0] max= X[d0, r]; S[d0, 0] += exp(X[d0, r] - M[d0, 0])"
    assert sum_of_exponentials(parse(inline).stmts, 0) == 1
    for other in ("M[d0, 0] max= X[d0, r]; S[d0, 0] += exp(Y[d0, r] - M[d0, 0])",  # another operand
                  "M[d0, 0] max= X[d0, r]; S[d0, 0] += exp(2 * X[d0, r] - M[d0, 0])",  # another body
                  "M[d0, 0] max= X[d0, r]; S[d0, 0] += X[d0, r] - M[d0, 0]",  # no exponential
                  "M[d0, 0] max= X[d0, r]; S[d0, 0] += exp(X[d0, r] - M[d0, 0]); S[d0, 0] += 1.0",  # S twice
                  "M[d0, 0] min= X[d0, r]; S[d0, 0] += exp(X[d0, r] - M[d0, 0])"):  # a minimum
        assert sum_of_exponentials(parse(other).stmts, 0) is None, other


class Probs(nn.Module):
    def forward(self, x):
        return torch.log_softmax(x, -1), torch.softmax(x * 0.5, -1)


def test_long_row_statistics_in_one_pass_match_eager():
    """Rows of 17 000 (past ``LONG_ROW``: split statistics, a loop of chunks): one loop a statistics stage, its step
    ``FOLD`` sub-chunks folded into block accumulators -- an exponential an element, one to rescale the lanes' sums,
    one in the lanes' combination after the loop; a row half -inf, one with a NaN, one with a large value."""
    x = torch.randn(4, 17000) * 30
    x[0, :9000] = float("-inf")
    x[1, 5] = float("nan")
    x[2, 16999] = 1e4
    cm = kitsune.compile(Probs(), (x,), mode="bulk-sync", device="cpu", cache=False)
    src = cm.source
    stats = [f for f in src.split("@triton.jit") if "softmax_stats" in f and "(reduction)" in f]
    assert len(stats) == 2 and all(f.count("for k") == 1 and f.count("tl.exp(") == FOLD + 2 for f in stats), stats
    assert all(f.count("tl.load(") == FOLD for f in stats), stats  # (the sub-chunks' loads, issued together)
    for got, want in zip(cm(x), Probs()(x)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6, equal_nan=True)


def test_dataflow_statistics_keep_their_own_row_bands():
    """In the dataflow schedule the statistics of a language-model head's log_softmax (rows of 50 257) do not take
    the projection's 128-row bands for a queue's sake (8 programs looping over 6.4 M elements each: 4.1 ms on the
    H200) but keep tiles of 2 rows (512 programs); long-row softmaxes in the dataflow mode match eager."""
    src = bench_model_triton("lm_head.py", "dataflow")
    assert re.search(r'stage "softmax_stats_\d+" \(reduction\): programs \[0, 512\), tile \[1, 2, 1\]', src)
    x = torch.randn(4, 17000) * 30
    cm = kitsune.compile(Probs(), (x,), mode="dataflow", device="cpu", cache=False)
    for got, want in zip(cm(x), Probs()(x)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)
