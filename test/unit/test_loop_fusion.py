"""Sibling K loops fused (``kitsune.codegen.triton_gen.loop_fusion``): two tensor-core K loops of one range become one
loop carrying both accumulators, the second loop's accumulator set up before it; the rewritten body computes what the
original did (both run as Python over numpy, with a small stand-in for ``tl``), and loops that must stay apart do."""

from __future__ import annotations

import re
import textwrap
import types

import numpy as np
import pytest

from kitsune.codegen.triton_gen.loop_fusion import fuse_sibling_dot_loops


class _Ptr:
    """A buffer as a pointer: ``ptr + offsets`` is what ``tl.load`` reads."""

    def __init__(self, a):
        self.a = a

    def __add__(self, off):
        return (self.a, off)


def _tl():
    ns = types.SimpleNamespace()
    ns.float32 = np.float32
    ns.arange = lambda lo, hi: np.arange(lo, hi)
    ns.zeros = lambda shape, dt: np.zeros(shape, np.float64)
    ns.load = lambda p: p[0][p[1]]
    ns.sum = lambda x, axis: x.sum(axis=axis)
    ns.sigmoid = lambda x: 1 / (1 + np.exp(-x))
    ns.trans = lambda x: x.T
    ns.static_range = range
    return ns


def _run(body: list[str], env: dict) -> dict:
    scope = dict(env, tl=_tl(), _dot_lp=lambda a, b, acc: acc + a @ b)
    exec("def _f():\n" + "\n".join(body) + "\n    return dict(locals())\n", scope)
    return scope["_f"]()


# a gated projection's two K loops over one input, a row statistic between them (llama_decode_b8's gate / up)
GATED = """
    o1 = tl.arange(0, 4)
    o2 = tl.arange(0, 8)
    r5 = tl.arange(0, 16)
    for it in range(0, 1):
        acc4 = tl.zeros([4, 8], tl.float32)
        for k6 in range(0, 64, 16):
            v7 = tl.load(x + (k6 + 64 * o1[:, None] + r5[None, :]))
            v8 = tl.load(w + (k6 + 64 * o2[:, None] + r5[None, :]))
            acc4 = _dot_lp(v7, tl.trans(v8), acc4)
        v13 = tl.sum(tl.load(x + (64 * o1[:, None] + tl.arange(0, 64)[None, :])), axis=1)
        v17 = acc4 * v13[:, None]
        v19 = v17 * tl.sigmoid(v17)
        acc20 = tl.zeros([4, 8], tl.float32)
        for k22 in range(0, 64, 16):
            v23 = tl.load(x + (k22 + 64 * o1[:, None] + r5[None, :]))
            v24 = tl.load(w + (k22 + 64 * o2[:, None] + r5[None, :] + 512))
            acc20 = _dot_lp(v23, tl.trans(v24), acc20)
        v26 = v19 * acc20
"""


def _env(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {"x": _Ptr(rng.standard_normal(256)), "w": _Ptr(rng.standard_normal(1024))}


def _loops(body: list[str]) -> list[str]:
    return [ln.strip() for ln in body if re.match(r"\s*for k\d+ in range\(", ln)]


def test_gated_loops_fuse_and_mean_the_same():
    body = textwrap.dedent(GATED).strip("\n").splitlines()
    body = ["    " + ln for ln in body]
    out = fuse_sibling_dot_loops(body)
    assert _loops(body) == ["for k6 in range(0, 64, 16):", "for k22 in range(0, 64, 16):"]
    assert _loops(out) == ["for k6 in range(0, 64, 16):"], "\n".join(out)
    text = "\n".join(out)
    # the second accumulator is set up before the fused loop, both products are in it, the statistic after it
    assert text.index("acc20 = tl.zeros") < text.index("for k6 in range")
    loop = text[text.index("for k6 in range"):text.index("v13 = ")]
    assert loop.count("_dot_lp(") == 2 and "k22" not in text, text
    for seed in range(3):
        before, after = _run(body, _env(seed)), _run(out, _env(seed))
        np.testing.assert_allclose(after["v26"], before["v26"], rtol=1e-12)


@pytest.mark.parametrize("change, why", [
    ("for k22 in range(0, 64, 32):", "another step"),
    ("for k22 in range(16, 64, 16):", "another start"),
])
def test_loops_of_other_ranges_stay_apart(change, why):
    body = ["    " + ln for ln in textwrap.dedent(GATED).strip("\n").splitlines()]
    body = [ln.replace("for k22 in range(0, 64, 16):", change) for ln in body]
    assert len(_loops(fuse_sibling_dot_loops(body))) == 2, why


@pytest.mark.parametrize("scale, fused", [("v13[:, None]", True), ("v17[:, 0:1]", False)])
def test_second_loop_reading_a_value_between(scale, fused):
    """The second loop's operand scaled by a value computed between the loops: by the row statistic, which needs
    nothing of the first loop (it moves above the fused loop), or by the first loop's result (the second cannot
    start before the first ends: the loops stay apart). Either way the body means what it meant."""
    body = ["    " + ln for ln in textwrap.dedent(GATED).strip("\n").splitlines()]
    body = [ln.replace("acc20 = _dot_lp(v23, tl.trans(v24), acc20)", f"acc20 = _dot_lp(v23 * {scale}, "
                       "tl.trans(v24), acc20)") for ln in body]
    out = fuse_sibling_dot_loops(body)
    assert len(_loops(out)) == (1 if fused else 2), "\n".join(out)
    for seed in range(2):
        np.testing.assert_allclose(_run(out, _env(seed))["v26"], _run(body, _env(seed))["v26"], rtol=1e-12)


def test_loops_without_a_product_stay_apart():
    """Two plain reduction loops (no tensor-core product: nothing the fusion is for) are left as they are."""
    body = ["    " + ln for ln in textwrap.dedent(GATED).strip("\n").splitlines()]
    body = [ln.replace("_dot_lp(v7, tl.trans(v8), acc4)", "acc4 + v7[:, :8] * v8[:4, :8]")
            .replace("_dot_lp(v23, tl.trans(v24), acc20)", "acc20 + v23[:, :8] * v24[:4, :8]") for ln in body]
    assert fuse_sibling_dot_loops(body) == body


def test_at_most_max_loops_fuse():
    """A third sibling loop joins only where ``max_loops`` lets the fused loop carry three (each brings its operand
    chunks to the shared-memory ring); ``max_loops`` 1 leaves the body as it is."""
    body = ["    " + ln for ln in textwrap.dedent(GATED).strip("\n").splitlines()]
    third = ["        acc30 = tl.zeros([4, 8], tl.float32)",
             "        for k31 in range(0, 64, 16):",
             "            v32 = tl.load(x + (k31 + 64 * o1[:, None] + r5[None, :]))",
             "            v33 = tl.load(w + (k31 + 64 * o2[:, None] + r5[None, :] + 256))",
             "            acc30 = _dot_lp(v32, tl.trans(v33), acc30)",
             "        v34 = v26 + acc30"]
    body += third
    assert fuse_sibling_dot_loops(body, max_loops=1) == body
    two, three = fuse_sibling_dot_loops(body, max_loops=2), fuse_sibling_dot_loops(body, max_loops=3)
    assert len(_loops(two)) == 2 and len(_loops(three)) == 1, "\n".join(three)
    for out in (two, three):
        np.testing.assert_allclose(_run(out, _env(1))["v34"], _run(body, _env(1))["v34"], rtol=1e-12)


def test_an_effect_between_the_loops_keeps_them_apart():
    """A store between the loops (the second loop might read what it writes: memory order, which the names do not
    show) keeps them apart; so does a store inside either loop."""
    body = ["    " + ln for ln in textwrap.dedent(GATED).strip("\n").splitlines()]
    at = next(i for i, ln in enumerate(body) if "v19 = " in ln)
    stored = body[:at + 1] + ["        tl.store(out + o1, v13)"] + body[at + 1:]
    assert len(_loops(fuse_sibling_dot_loops(stored))) == 2
    inside = [ln + "\n            tl.store(out + o1, acc4)" if "acc4 = _dot_lp" in ln else ln for ln in body]
    inside = "\n".join(inside).splitlines()
    assert len(_loops(fuse_sibling_dot_loops(inside))) == 2
