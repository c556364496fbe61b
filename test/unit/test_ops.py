"""Every graph op: build, verify, print/parse, interpret, compare with torch.

CASES must have a key for every op of the op table: adding an op without a
test case fails ``test_every_op_has_cases``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType, f32, i32, i64
from xdsl.utils.exceptions import VerifyException

from graphgen import assert_close, elem_of, reparse, single_op_module, ttype
from kitsune.context import parse_module
from kitsune.dialects import graph
from kitsune.interpreter import interpret
from kitsune.semantics.optable import OPS

R = np.random.default_rng(7)


def rn(*shape, dtype=np.float32):
    return R.standard_normal(shape).astype(dtype)


def pos(*shape):
    return (R.random(shape) + 0.5).astype(np.float32)


def ints(high, *shape):
    return R.integers(0, high, shape).astype(np.int64)


@dataclass
class Case:
    id: str
    inputs: list[np.ndarray]
    ref: Callable[..., Any]  # torch tensors -> tensor or tuple of tensors
    attrs: dict = field(default_factory=dict)
    result_types: list | None = None  # given for cast / reshape / constant
    dyn: dict[int, list[int]] = field(default_factory=dict)  # arg -> dims made '?'


def _u(fn, x=None, **attrs):
    x = rn(3, 4) if x is None else x
    return Case("basic", [x], fn, attrs)


CASES: dict[str, list[Case]] = {
    "relu": [_u(torch.relu), Case("dyn", [rn(3, 5)], torch.relu, dyn={0: [0, 1]})],
    "silu": [_u(F.silu)],
    "sigmoid": [_u(torch.sigmoid)],
    "tanh": [_u(torch.tanh), Case("rank0", [rn()], torch.tanh), Case("rank4", [rn(2, 1, 3, 2)], torch.tanh)],
    "exp": [_u(torch.exp)],
    "log": [_u(torch.log, pos(3, 4))],
    "sqrt": [_u(torch.sqrt, pos(3, 4))],
    "rsqrt": [_u(torch.rsqrt, pos(3, 4))],
    "neg": [_u(torch.neg)],
    "abs": [_u(torch.abs)],
    "erf": [_u(torch.erf)],
    "reciprocal": [_u(torch.reciprocal, pos(3, 4))],
    "gelu": [_u(F.gelu), Case("tanh", [rn(3, 4)], lambda x: F.gelu(x, approximate="tanh"), {"approximate": "tanh"})],
    "pow": [Case("sq", [rn(3, 4)], lambda x: x**2.0, {"exponent": 2.0}),
            Case("sqrt", [pos(5)], lambda x: x**0.5, {"exponent": 0.5}),
            Case("neg", [pos(2, 3)], lambda x: x**-1.5, {"exponent": -1.5})],
    "cast": [Case("f32_i32", [rn(3, 4) * 5], lambda x: x.to(torch.int32), result_types=[ttype([3, 4], i32)]),
             Case("i64_f32", [ints(9, 4)], lambda x: x.float(), result_types=[ttype([4], f32)]),
             Case("bool_f32", [rn(4) > 0], lambda x: x.float(), result_types=[ttype([4], f32)]),
             Case("f32_f64", [rn(4)], lambda x: x.double(), result_types=[ttype([4], elem_of(np.float64))])],
    "where": [Case("bcast", [rn(3, 1) > 0, rn(4), rn(3, 4)], torch.where),
              Case("int", [rn(2, 3) > 0, ints(5, 2, 3), ints(5, 1, 3)], torch.where)],
    "sum": [Case("all", [rn(3, 4)], lambda x: x.sum()),
            Case("dims", [rn(2, 3, 4)], lambda x: x.sum((0, 2)), {"dims": [0, -1]}),
            Case("keep", [rn(2, 3, 4)], lambda x: x.sum(1, keepdim=True), {"dims": [1], "keepdim": True}),
            Case("dyn", [rn(5, 3)], lambda x: x.sum(1), {"dims": [1]}, dyn={0: [0]}),
            Case("dyn_red", [rn(5, 3)], lambda x: x.sum(0, keepdim=True), {"dims": [0], "keepdim": True},
                 dyn={0: [0]})],
    "mean": [Case("dims", [rn(2, 3, 4)], lambda x: x.mean((-1,)), {"dims": [-1]}),
             Case("all_keep", [rn(2, 3)], lambda x: x.mean((0, 1), keepdim=True), {"keepdim": True}),
             Case("dyn", [rn(4, 6)], lambda x: x.mean(1), {"dims": [1]}, dyn={0: [0]})],
    "amax": [Case("dims", [rn(2, 3, 4)], lambda x: x.amax((0, 1)), {"dims": [0, 1]}),
             Case("keep", [rn(2, 3)], lambda x: x.amax(-1, keepdim=True), {"dims": [-1], "keepdim": True})],
    "amin": [Case("dims", [rn(2, 3, 4)], lambda x: x.amin(2), {"dims": [2]}),
             Case("all", [rn(3, 2)], lambda x: x.amin())],
    "prod": [Case("dims", [rn(2, 3)], lambda x: x.prod(1), {"dims": [1]}),
             Case("keep", [rn(2, 3, 2)], lambda x: x.prod(0, keepdim=True), {"dims": [-3], "keepdim": True})],
    "softmax": [Case("last", [rn(3, 5)], lambda x: torch.softmax(x, -1)),
                Case("dim0", [rn(3, 5, 2)], lambda x: torch.softmax(x, 0), {"dim": 0}),
                Case("neg", [rn(3, 5, 2)], lambda x: torch.softmax(x, -2), {"dim": -2}),
                Case("dyn", [rn(4, 6)], lambda x: torch.softmax(x, 1), {"dim": 1}, dyn={0: [0, 1]})],
    "log_softmax": [Case("last", [rn(3, 5)], lambda x: torch.log_softmax(x, -1)),
                    Case("dim1", [rn(2, 3, 4)], lambda x: torch.log_softmax(x, 1), {"dim": 1})],
    "layer_norm": [
        Case("plain", [rn(3, 8)], lambda x: F.layer_norm(x, (8,))),
        Case("w", [rn(3, 8), rn(8)], lambda x, w: F.layer_norm(x, (8,), w)),
        Case("wb_eps", [rn(2, 3, 8), rn(8), rn(8)], lambda x, w, b: F.layer_norm(x, (8,), w, b, eps=1e-3),
             {"eps": 1e-3}),
        Case("rank2", [rn(2, 3, 4), rn(3, 4), rn(3, 4)], lambda x, w, b: F.layer_norm(x, (3, 4), w, b),
             {"normalized_rank": 2}),
        Case("dyn", [rn(5, 8), rn(8)], lambda x, w: F.layer_norm(x, (8,), w), dyn={0: [0]}),
        # a static weight for a dynamic normalized dim (was rejected: "weight has shape [8], expected [?]")
        Case("dyn_norm_dim", [rn(5, 8), rn(8), rn(8)], lambda x, w, b: F.layer_norm(x, (8,), w, b),
             dyn={0: [0, 1]}),
    ],
    "rms_norm": [
        Case("plain", [rn(3, 8)], lambda x: F.rms_norm(x, (8,), eps=1e-6)),
        Case("w", [rn(2, 3, 8), rn(8)], lambda x, w: F.rms_norm(x, (8,), w, eps=1e-6)),
        Case("rank2_eps", [rn(2, 3, 4), rn(3, 4)], lambda x, w: F.rms_norm(x, (3, 4), w, eps=1e-2),
             {"normalized_rank": 2, "eps": 1e-2}),
    ],
    "layer_norm_stats": [
        Case("row", [rn(3, 8)], lambda x: (x.mean(-1, keepdim=True),
                                           torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)),
             result_types=[ttype([3, 1]), ttype([3, 1])]),
        Case("rank2_eps", [rn(2, 3, 4)], lambda x: (x.mean((1, 2), keepdim=True),
                                                    torch.rsqrt(x.var((1, 2), unbiased=False, keepdim=True) + 1e-2)),
             {"normalized_rank": 2, "eps": 1e-2}, result_types=[ttype([2, 1, 1]), ttype([2, 1, 1])]),
    ],
    "softmax_stats": [
        Case("last", [rn(3, 8)], lambda x: (x.amax(-1, keepdim=True),
                                            torch.exp(x - x.amax(-1, keepdim=True)).sum(-1, keepdim=True)),
             result_types=[ttype([3, 1]), ttype([3, 1])]),
        Case("dim1", [rn(2, 5, 3)], lambda x: (x.amax(1, keepdim=True),
                                               torch.exp(x - x.amax(1, keepdim=True)).sum(1, keepdim=True)),
             {"dim": 1}, result_types=[ttype([2, 1, 3]), ttype([2, 1, 3])]),
    ],
    "rms_norm_stats": [
        Case("row", [rn(3, 8)], lambda x: torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6),
             result_types=[ttype([3, 1])]),
        Case("rank2", [rn(2, 3, 4)], lambda x: torch.rsqrt((x * x).mean((1, 2), keepdim=True) + 1e-3),
             {"normalized_rank": 2, "eps": 1e-3}, result_types=[ttype([2, 1, 1])]),
    ],
    "batch_norm": [
        Case("plain", [rn(2, 3, 4, 4), rn(3), pos(3)], lambda x, m, v: F.batch_norm(x, m, v, training=False)),
        Case("w", [rn(2, 3, 4), rn(3), pos(3), rn(3)], lambda x, m, v, w: F.batch_norm(x, m, v, w, training=False)),
        Case("wb", [rn(2, 3), rn(3), pos(3), rn(3), rn(3)],
             lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False, eps=1e-3), {"eps": 1e-3}),
    ],
    "matmul": [
        Case("2d", [rn(3, 4), rn(4, 5)], torch.matmul),
        Case("batch_bcast", [rn(2, 1, 3, 4), rn(5, 4, 6)], torch.matmul),
        Case("lhs_2d", [rn(3, 4), rn(2, 4, 5)], torch.matmul),
        Case("ta", [rn(4, 3), rn(4, 5)], lambda a, b: a.T @ b, {"transpose_a": True}),
        Case("tb", [rn(2, 3, 4), rn(2, 5, 4)], lambda a, b: a @ b.transpose(-1, -2), {"transpose_b": True}),
        Case("ta_tb", [rn(4, 3), rn(5, 4)], lambda a, b: a.T @ b.T, {"transpose_a": True, "transpose_b": True}),
        Case("dyn", [rn(2, 3, 4), rn(4, 5)], torch.matmul, dyn={0: [0, 1]}),
    ],
    "linear": [
        Case("bias", [rn(3, 4), rn(5, 4), rn(5)], F.linear),
        Case("nobias", [rn(2, 3, 4), rn(5, 4)], F.linear),
        Case("rank1", [rn(4), rn(5, 4), rn(5)], F.linear),
        Case("dyn", [rn(6, 4), rn(5, 4), rn(5)], F.linear, dyn={0: [0]}),
    ],
    "conv2d": [
        Case("plain", [rn(1, 3, 6, 6), rn(4, 3, 3, 3)], F.conv2d),
        Case("bias_stride_pad", [rn(2, 3, 7, 6), rn(4, 3, 3, 2), rn(4)],
             lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 0)), {"stride": [2, 1], "padding": [1, 0]}),
        Case("dilation", [rn(1, 2, 7, 7), rn(3, 2, 3, 3)], lambda x, w: F.conv2d(x, w, dilation=2, padding=2),
             {"dilation": [2], "padding": [2]}),
        Case("groups", [rn(1, 4, 5, 5), rn(6, 2, 3, 3), rn(6)],
             lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=2), {"groups": 2, "padding": [1, 1]}),
        Case("depthwise", [rn(2, 3, 5, 5), rn(3, 1, 3, 3)], lambda x, w: F.conv2d(x, w, stride=2, groups=3),
             {"groups": 3, "stride": [2, 2]}),
    ],
    "max_pool2d": [
        Case("k2", [rn(1, 2, 6, 6)], lambda x: F.max_pool2d(x, 2), {"kernel": [2, 2]}),
        Case("ceil", [rn(1, 2, 7, 7)], lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True),
             {"kernel": [3, 3], "stride": [2, 2], "ceil_mode": True}),
        Case("pad", [rn(2, 2, 5, 7)], lambda x: F.max_pool2d(x, 3, stride=1, padding=1),
             {"kernel": [3], "stride": [1, 1], "padding": [1, 1]}),
        Case("neg_pad", [-pos(1, 1, 4, 4)], lambda x: F.max_pool2d(x, 3, stride=2, padding=1),
             {"kernel": [3, 3], "stride": [2, 2], "padding": [1, 1]}),
        Case("dilation", [rn(1, 2, 7, 7)], lambda x: F.max_pool2d(x, 2, stride=1, dilation=2),
             {"kernel": [2, 2], "stride": [1, 1], "dilation": [2, 2]}),
    ],
    "attention": [
        Case("mha", [rn(2, 2, 3, 4), rn(2, 2, 5, 4), rn(2, 2, 5, 6)], F.scaled_dot_product_attention),
        Case("gqa_scale", [rn(1, 4, 3, 4), rn(1, 2, 5, 4), rn(1, 2, 5, 4)],
             lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3, enable_gqa=True), {"scale": 0.3}),
        Case("gqa_mask_causal", [rn(2, 4, 5, 4), rn(2, 2, 5, 4), rn(2, 2, 5, 4), rn(2, 1, 5, 5)],
             lambda q, k, v, m: F.scaled_dot_product_attention(
                 q, k, v, m.masked_fill(torch.ones(5, 5, dtype=torch.bool).tril().logical_not(), float("-inf")),
                 enable_gqa=True), {"causal": True}),
        Case("causal", [rn(1, 2, 4, 4), rn(1, 2, 6, 4), rn(1, 2, 6, 4)],
             lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), {"causal": True}),
        Case("mask_bcast", [rn(1, 2, 3, 4), rn(1, 2, 5, 4), rn(1, 2, 5, 4), rn(3, 5)],
             lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m)),
    ],
    "sin": [_u(torch.sin)],
    "cos": [_u(torch.cos)],
    "cumsum": [Case("dim1", [rn(3, 5)], lambda x: torch.cumsum(x, 1), {"dim": 1}),
               Case("neg_int", [ints(4, 2, 3, 4)], lambda x: torch.cumsum(x, -2), {"dim": -2})],
    "avg_pool2d": [
        Case("k2", [rn(1, 2, 6, 6)], lambda x: F.avg_pool2d(x, 2), {"kernel": [2, 2]}),
        Case("pad", [rn(2, 2, 5, 7)], lambda x: F.avg_pool2d(x, 3, stride=2, padding=1),
             {"kernel": [3, 3], "stride": [2, 2], "padding": [1, 1]}),
        Case("pad_nocount", [rn(1, 2, 5, 5)], lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
             {"kernel": [3, 3], "stride": [2, 2], "padding": [1, 1], "count_include_pad": False}),
        Case("ceil", [rn(1, 2, 7, 7)], lambda x: F.avg_pool2d(x, 2, ceil_mode=True, count_include_pad=False),
             {"kernel": [2, 2], "ceil_mode": True, "count_include_pad": False}),
        Case("divisor", [rn(1, 1, 4, 4)], lambda x: F.avg_pool2d(x, 2, divisor_override=3),
             {"kernel": [2, 2], "divisor_override": 3}),
    ],
    "index": [
        Case("one", [rn(10, 4), ints(10, 3)], lambda x, i: x[i], {"dims": [0]}),
        Case("bcast_adjacent", [rn(2, 5, 6), ints(5, 3, 1), ints(6, 1, 4)], lambda x, i, j: x[:, i, j],
             {"dims": [1, 2]}),
        Case("apart", [rn(5, 2, 6), ints(5, 3), ints(6, 3)], lambda x, i, j: x[i, :, j], {"dims": [0, 2]}),
    ],
    "pad": [Case("2d", [rn(3, 4)], lambda x: F.pad(x, (1, 2, 0, 3), value=0.5), {"pads": [0, 3, 1, 2], "value": 0.5}),
            Case("int", [ints(5, 2, 3)], lambda x: F.pad(x, (2, 0)), {"pads": [0, 0, 2, 0]})],
    "scatter_reduce": [
        Case(f"{red}_{inc}", [rn(6, 4), ints(6, 9, 4), rn(9, 4)],
             lambda x, i, s, red=red, inc=inc: x.scatter_reduce(0, i, s, reduce=red, include_self=inc),
             {"dim": 0, "reduce": red, "include_self": inc})
        for red in ("sum", "prod", "amax", "amin", "mean") for inc in (True, False)
    ],
    "embedding": [Case("2d_idx", [rn(7, 4), ints(7, 2, 3)], lambda w, i: F.embedding(i, w)),
                  Case("1d_idx", [rn(7, 4), np.array([6, 0, 6])], lambda w, i: F.embedding(i, w))],
    "embedding_bag": [
        Case("sum", [rn(9, 4), ints(9, 3, 2)], lambda w, i: F.embedding_bag(i, w, mode="sum")),
        Case("mean", [rn(9, 4), ints(9, 3, 4)], lambda w, i: F.embedding_bag(i, w, mode="mean"), {"mode": "mean"}),
        Case("max", [rn(9, 4), ints(9, 2, 3)], lambda w, i: F.embedding_bag(i, w, mode="max"), {"mode": "max"}),
    ],
    "index_select": [Case("dim0", [rn(5, 3), np.array([4, 0, 4, 1])], lambda x, i: torch.index_select(x, 0, i),
                          {"dim": 0}),
                     Case("neg_dim", [rn(2, 5, 3), np.array([2, 2])], lambda x, i: torch.index_select(x, -2, i),
                          {"dim": -2})],
    "gather": [Case("dim1", [rn(3, 5), ints(5, 3, 4)], lambda x, i: torch.gather(x, 1, i), {"dim": 1}),
               Case("dim0", [rn(4, 2, 3), ints(4, 4, 2, 3)], lambda x, i: torch.gather(x, 0, i), {"dim": 0})],
    "index_add": [
        Case("repeat", [rn(5, 3), np.array([0, 2, 0, 4, 0]), rn(5, 3)], lambda x, i, s: torch.index_add(x, 0, i, s),
             {"dim": 0}),
        Case("alpha_neg_dim", [rn(2, 4), np.array([3, 3]), rn(2, 2)],
             lambda x, i, s: torch.index_add(x, -1, i, s, alpha=0.5), {"dim": -1, "alpha": 0.5}),
    ],
    "index_copy": [
        Case("kv_row", [rn(1, 2, 8, 4), np.array([5]), rn(1, 2, 1, 4)],
             lambda x, i, s: torch.index_copy(x, 2, i, s), {"dim": 2}),
        Case("rows_neg_dim", [rn(3, 6), np.array([4, 0, 2]), rn(3, 3)],
             lambda x, i, s: torch.index_copy(x, -1, i, s), {"dim": -1}),
        # in_place says where the result lives; the value is the same
        Case("in_place", [rn(5, 3), np.array([1, 3]), rn(2, 3)],
             lambda x, i, s: torch.index_copy(x, 0, i, s), {"dim": 0, "in_place": True}),
    ],
    "slice": [
        Case("basic", [rn(4, 8)], lambda x: x[:, 2:6], {"dim": 1, "start": 2, "end": 6}),
        Case("step_neg", [rn(7, 3)], lambda x: x[-5::2], {"dim": 0, "start": -5, "step": 2}),
        Case("neg_end", [rn(3, 6)], lambda x: x[:, 1:-1], {"dim": -1, "start": 1, "end": -1}),
        Case("clamp", [rn(4)], lambda x: x[1:100], {"dim": 0, "start": 1, "end": 100}),
    ],
    "slice_scatter": [
        Case("basic", [rn(4, 8), rn(4, 3)], lambda x, s: torch.slice_scatter(x, s, 1, 2, 5), {"dim": 1, "start": 2,
                                                                                              "end": 5}),
        Case("step", [rn(6, 2), rn(3, 2)], lambda x, s: torch.slice_scatter(x, s, 0, 0, 6, 2), {"dim": 0, "step": 2}),
    ],
    "concat": [
        Case("two", [rn(2, 3), rn(2, 5)], lambda a, b: torch.cat([a, b], 1), {"dim": 1}),
        Case("three_neg", [rn(1, 3), rn(2, 3), rn(3, 3)], lambda a, b, c: torch.cat([a, b, c], 0), {"dim": -2}),
        Case("one", [rn(2, 3)], lambda a: torch.cat([a], 0), {"dim": 0}),
        Case("int", [ints(5, 2), ints(5, 3)], lambda a, b: torch.cat([a, b]), {"dim": 0}),
    ],
    "split": [
        Case("two", [rn(4, 8)], lambda x: torch.split(x, [3, 5], 1), {"dim": 1, "sizes": [3, 5]}),
        Case("three_neg", [rn(6, 2)], lambda x: torch.split(x, [1, 2, 3], 0), {"dim": -2, "sizes": [1, 2, 3]}),
    ],
    "permute": [Case("3d", [rn(2, 3, 4)], lambda x: x.permute(2, 0, 1), {"perm": [2, 0, 1]}),
                Case("t", [rn(2, 3)], lambda x: x.T, {"perm": [1, 0]})],
    "expand": [Case("lead", [rn(1, 3)], lambda x: x.expand(2, 4, 3), {"shape": [2, 4, 3]}),
               Case("keep", [rn(2, 1)], lambda x: x.expand(-1, 5), {"shape": [-1, 5]})],
    "reshape": [Case("flat", [rn(2, 3, 4)], lambda x: x.reshape(6, 4), result_types=[ttype([6, 4])]),
                Case("dyn", [rn(4, 6)], lambda x: x.reshape(-1, 2, 3), result_types=[ttype([-1, 2, 3])],
                     dyn={0: [0]})],
    "constant": [
        Case("dense", [], lambda: torch.arange(6, dtype=torch.float32).reshape(2, 3),
             {"value": DenseIntOrFPElementsAttr.from_list(ttype([2, 3]), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])},
             result_types=[ttype([2, 3])]),
        Case("splat_int", [], lambda: torch.full((4,), 3, dtype=torch.int64),
             {"value": DenseIntOrFPElementsAttr.from_list(ttype([4], i64), [3])}, result_types=[ttype([4], i64)]),
        Case("scalar", [], lambda: torch.tensor(2.5),
             {"value": DenseIntOrFPElementsAttr.from_list(ttype([]), [2.5])}, result_types=[ttype([])]),
    ],
}

_BINARY_TORCH = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "maximum": torch.maximum,
                 "minimum": torch.minimum, "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le,
                 "gt": torch.gt, "ge": torch.ge, "fmod": torch.fmod, "remainder": torch.remainder}
for _n, _f in _BINARY_TORCH.items():
    CASES[_n] = [
        Case("same", [rn(3, 4), rn(3, 4)], _f),
        Case("bcast", [rn(4, 1, 3), rn(5, 3)], _f),
        Case("scalar", [rn(2, 3), rn()], _f),
        Case("dyn", [rn(3, 4), rn(4)], _f, dyn={0: [0, 1]}),
    ]
    if _n in ("fmod", "remainder"):  # a divisor away from 0
        CASES[_n] = [Case("same", [rn(3, 4) * 5, pos(3, 4) * np.sign(rn(3, 4))], _f),
                     Case("bcast", [rn(4, 1, 3) * 5, pos(5, 3)], _f),
                     Case("int", [ints(9, 3, 4) - 4, ints(4, 4) + 1], _f)]
    elif _n != "div":
        CASES[_n].append(Case("int", [ints(4, 3, 4), ints(4, 4)], _f))
# equal values so that eq / le / ge see ties
for _n in ("eq", "ne", "le", "ge"):
    _a = ints(3, 4, 5).astype(np.float32)
    CASES[_n].append(Case("ties", [_a, _a[:1]], _BINARY_TORCH[_n]))

# the backward ops (kitsune/semantics/grad_ops.py) against torch autograd (test_grad_ops.py draws more shapes)
from gradref import grad_case  # noqa: E402

for _n, _shape, _a in [("threshold_backward", (3, 4), {}), ("threshold_backward", (2, 3, 4), {"threshold": 0.5}),
                       ("gelu_backward", (3, 4), {}), ("gelu_backward", (3, 4), {"approximate": "tanh"}),
                       ("sigmoid_backward", (3, 4), {}), ("tanh_backward", (5,), {}), ("silu_backward", (3, 4), {}),
                       ("softmax_backward", (3, 5), {}), ("softmax_backward", (3, 5, 2), {"dim": 1}),
                       ("log_softmax_backward", (3, 5), {}), ("log_softmax_backward", (4, 3), {"dim": 0}),
                       ("layer_norm_backward", (3, 8), {}), ("layer_norm_backward", (2, 3, 4), {"normalized_rank": 2}),
                       ("layer_norm_backward", (4, 6), {"weight": False})]:
    _ins, _at, _ref = grad_case(_n, _shape, R, **_a)
    CASES.setdefault(_n, []).append(Case("x".join(map(str, _shape)) + "".join(f"-{k}" for k in _a), _ins, _ref, _at))

# max_pool2d_with_indices' indices (the first maximum of each window), with ties and padding
_mx = np.round(rn(2, 3, 7, 9) * 2).astype(np.float32)  # rounded: many ties
CASES["max_pool2d_indices"] = [
    Case(f"k{_k['kernel'][0]}{_k.get('stride', [''])[0]}{_k.get('padding', [''])[0]}{'c' if _k.get('ceil_mode') else ''}",
         [_mx], lambda x, k=_k: F.max_pool2d(x, k["kernel"], k.get("stride") or None, k.get("padding", 0),
                                              k.get("dilation", 1), ceil_mode=k.get("ceil_mode", False),
                                              return_indices=True)[1], _k,
         result_types=[ttype(list(F.max_pool2d(torch.from_numpy(_mx), _k["kernel"], _k.get("stride") or None,
                                               _k.get("padding", 0), _k.get("dilation", 1),
                                               ceil_mode=_k.get("ceil_mode", False)).shape), i64)])
    for _k in ({"kernel": [2, 2]}, {"kernel": [3, 3], "stride": [2, 2], "padding": [1, 1]},
               {"kernel": [2, 2], "ceil_mode": True}, {"kernel": [3, 2], "stride": [1, 2], "dilation": [2, 1]})]

ALL = [(name, c) for name, cases in CASES.items() for c in cases]


def test_every_op_has_cases():
    assert set(CASES) == set(OPS), f"ops without test cases: {sorted(set(OPS) - set(CASES))}"


def _arg_types(c: Case):
    out = []
    for i, a in enumerate(c.inputs):
        shape = [(-1 if d in c.dyn.get(i, []) else n) for d, n in enumerate(a.shape)]
        out.append(ttype(shape, elem_of(a.dtype)))
    return out


def _build(name: str, c: Case):
    m = single_op_module(name, _arg_types(c), result_types=c.result_types, **c.attrs)
    return reparse(m)  # print -> parse -> verify round trip


@pytest.mark.parametrize("name, case", ALL, ids=[f"{n}-{c.id}" for n, c in ALL])
def test_op_matches_torch(name, case):
    m = _build(name, case)
    if case.dyn:
        assert "?" in str(m)
    outs = interpret(m, case.inputs)
    want = case.ref(*[torch.from_numpy(np.asarray(a)) for a in case.inputs])
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    assert len(outs) == len(want)
    for got, w in zip(outs, want):
        w = w.numpy()
        assert got.dtype == w.dtype or (got.dtype.kind == w.dtype.kind == "f"), (got.dtype, w.dtype)
        assert_close(got, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, case", ALL, ids=[f"{n}-{c.id}" for n, c in ALL])
def test_infer_result_types_matches_builder(name, case):
    if case.result_types is not None:
        return
    types = graph.infer_result_types(name, _arg_types(case), **case.attrs)
    want = case.ref(*[torch.from_numpy(np.asarray(a)) for a in case.inputs])
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    for t, w in zip(types, want):
        shape = [d for d in t.get_shape()]
        assert len(shape) == w.dim()
        assert all(d < 0 or d == n for d, n in zip(shape, w.shape))


# ---------------------------------------------------------- low precision

LOWP = [
    ("add", [rn(3, 4), rn(4)], {}, torch.add),
    ("mul", [rn(3, 4), rn(3, 4)], {}, torch.mul),
    ("matmul", [rn(3, 8), rn(8, 5)], {}, torch.matmul),
    ("softmax", [rn(3, 8)], {}, lambda x: torch.softmax(x, -1)),
    ("layer_norm", [rn(3, 8), rn(8), rn(8)], {}, lambda x, w, b: F.layer_norm(x, (8,), w, b)),
    ("gelu", [rn(3, 8)], {}, F.gelu),
    ("sum", [rn(3, 8)], {"dims": [1]}, lambda x: x.sum(1)),
]


@pytest.mark.parametrize("dtype, tdtype, tol", [("bf16", torch.bfloat16, 3e-2), (np.float16, torch.float16, 3e-3)],
                         ids=["bf16", "f16"])
@pytest.mark.parametrize("name, inputs, attrs, ref", LOWP, ids=[x[0] for x in LOWP])
def test_low_precision(name, inputs, attrs, ref, dtype, tdtype, tol):
    elem = elem_of(dtype)
    types = [ttype(a.shape, elem) for a in inputs]
    m = reparse(single_op_module(name, types, **attrs))
    assert ("bf16" if dtype == "bf16" else "f16") in str(m)
    t_in = [torch.from_numpy(a).to(tdtype) for a in inputs]
    (got,) = interpret(m, t_in if dtype == "bf16" else [a.astype(np.float16) for a in inputs])
    want = ref(*t_in)
    if dtype == "bf16":
        assert got.dtype == np.float32
        # bf16 storage: values are representable in bf16
        np.testing.assert_array_equal(torch.from_numpy(got).to(torch.bfloat16).float().numpy(), got)
    else:
        assert got.dtype == np.float16
    assert_close(got.astype(np.float32), want.float().numpy(), rtol=tol, atol=tol)


# ------------------------------------------------------------- verifiers


def _mod(body: str, args: str, rtype: str) -> str:
    return f"func.func @main({args}) -> {rtype} {{\n  %y = {body}\n  func.return %y : {rtype}\n}}\n"


@pytest.mark.parametrize(
    "text, match",
    [
        (_mod("graph.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>",
              "%a: tensor<4x8xf32>, %b: tensor<7x16xf32>", "tensor<4x16xf32>"),
         r"'graph.matmul' size mismatch for index 'k': b dim 0 has size 7 but a dim 1 has size 8"),
        (_mod("graph.add %a, %b : tensor<4x8xf32>, tensor<3xf32> -> tensor<4x8xf32>",
              "%a: tensor<4x8xf32>, %b: tensor<3xf32>", "tensor<4x8xf32>"),
         r"'graph.add' shapes \[4, 8\], \[3\] do not broadcast \(dim 1: sizes \[3, 8\]\)"),
        (_mod("graph.softmax %a : tensor<4x8xf32> -> tensor<4x9xf32>", "%a: tensor<4x8xf32>", "tensor<4x9xf32>"),
         r"'graph.softmax' result #0 has type tensor<4x9xf32>, but the operands give shape \[4, 8\]"),
        (_mod("graph.add %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>",
              "%a: tensor<4xf32>, %b: tensor<4xf16>", "tensor<4xf32>"),
         r"operands must have one element type.*insert a graph.cast"),
        (_mod("graph.exp %a : tensor<4xf32> -> tensor<4xf16>", "%a: tensor<4xf32>", "tensor<4xf16>"),
         r"result #0 must have element type f32"),
        (_mod("graph.embedding %w, %i : tensor<8x4xf32>, tensor<3xf32> -> tensor<3x4xf32>",
              "%w: tensor<8x4xf32>, %i: tensor<3xf32>", "tensor<3x4xf32>"),
         r"operand 'indices' must have int elements, got tensor<3xf32>"),
        (_mod("graph.exp %a : tensor<4xi64> -> tensor<4xi64>", "%a: tensor<4xi64>", "tensor<4xi64>"),
         r"operand 'x' must have float elements"),
        (_mod("graph.layer_norm %a, %w : tensor<4x8xf32>, tensor<7xf32> -> tensor<4x8xf32>",
              "%a: tensor<4x8xf32>, %w: tensor<7xf32>", "tensor<4x8xf32>"),
         r"'graph.layer_norm' weight has shape \[7\], expected \[8\]"),
        (_mod("graph.slice %a {start = 1} : tensor<4xf32> -> tensor<3xf32>", "%a: tensor<4xf32>", "tensor<3xf32>"),
         r"'graph.slice' needs attribute 'dim' \(int\)"),
        (_mod("graph.sum %a {dims = [2]} : tensor<4x8xf32> -> tensor<4xf32>", "%a: tensor<4x8xf32>", "tensor<4xf32>"),
         r"dims 2 is out of range for rank 2"),
        (_mod("graph.gelu %a {approximate = \"fast\"} : tensor<4xf32> -> tensor<4xf32>", "%a: tensor<4xf32>",
              "tensor<4xf32>"), r"attribute 'approximate' must be one of 'none', 'tanh', got 'fast'"),
        (_mod("graph.eq %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>", "%a: tensor<4xf32>",
              "tensor<4xf32>"), r"result must have i1 elements"),
        (_mod("graph.reshape %a : tensor<4x8xf32> -> tensor<5x6xf32>", "%a: tensor<4x8xf32>", "tensor<5x6xf32>"),
         r"reshape from \[4, 8\] \(32 elements\) to \[5, 6\] \(30 elements\)"),
        (_mod("graph.permute %a {perm = [0, 0]} : tensor<4x8xf32> -> tensor<4x8xf32>", "%a: tensor<4x8xf32>",
              "tensor<4x8xf32>"), r"perm \[0, 0\] is not a permutation of 0..1"),
        (_mod("graph.conv2d %x, %w {groups = 2} : tensor<1x3x5x5xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x3x3xf32>",
              "%x: tensor<1x3x5x5xf32>, %w: tensor<4x1x3x3xf32>", "tensor<1x4x3x3xf32>"),
         r"groups = 2 must divide input channels 3"),
    ],
)
def test_verifier_errors(text, match):
    with pytest.raises(VerifyException, match=match) as ei:
        parse_module(text, "t.mlir")
    assert str(ei.value).startswith("t.mlir:2:3: 'graph.")


def test_verifier_error_from_builder_has_no_location():
    fb_types = [ttype([4, 8]), ttype([7, 16])]
    from graphgen import FuncBuilder

    fb = FuncBuilder()
    a, b = fb.arg(fb_types[0]), fb.arg(fb_types[1])
    bad = fb.op("matmul", a, b, result_types=[ttype([4, 16])])
    with pytest.raises(VerifyException, match="^'graph.matmul' size mismatch"):
        bad.verify()


def test_verification_memo_keeps_errors_and_locations():
    """Valid ops are remembered (name, properties, types): an op that differs in any of them is checked again,
    and an invalid op fails every time, with its own location."""
    good = _mod("graph.add %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>", "%a: tensor<4xf32>",
                "tensor<4xf32>")
    parse_module(good, "g.mlir").verify()
    parse_module(good, "g.mlir").verify()  # remembered: still fine
    bad = _mod("graph.add %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<5xf32>", "%a: tensor<4xf32>",
               "tensor<5xf32>")
    for _ in range(2):
        with pytest.raises(VerifyException, match="result #0 has type") as ei:
            parse_module(bad, "b.mlir")
        assert str(ei.value).startswith("b.mlir:2:3: 'graph.add'")
    # same name and types, another attribute value: checked again
    parse_module(_mod("graph.sum %a {dims = [0]} : tensor<4x8xf32> -> tensor<8xf32>", "%a: tensor<4x8xf32>",
                      "tensor<8xf32>"), "s.mlir")
    with pytest.raises(VerifyException, match="result #0 has type"):
        parse_module(_mod("graph.sum %a {dims = [1]} : tensor<4x8xf32> -> tensor<8xf32>", "%a: tensor<4x8xf32>",
                          "tensor<8xf32>"), "s.mlir")


def test_infer_result_types_raises_operror():
    from kitsune.semantics.optable import OpError

    with pytest.raises(OpError, match="do not broadcast"):
        graph.infer_result_types("add", [ttype([3]), ttype([4])])
    (t,) = graph.infer_result_types("lt", [ttype([3]), ttype([1])])
    assert isinstance(t.get_element_type(), IntegerType) and t.get_element_type().width.data == 1


# ----------------------------------------------------------------- counts


def _op(name, types, **attrs):
    m = single_op_module(name, types, **attrs)
    return next(o for o in m.walk() if isinstance(o, graph.GraphOp))


def test_counts_matmul():
    m, k, n = 3, 5, 7
    c = _op("matmul", [ttype([m, k]), ttype([k, n])]).counts()
    assert c.flops == 2 * m * n * k
    assert c.bytes_read == 4 * (m * k + k * n)
    assert c.bytes_written == 4 * m * n
    assert c.bytes == c.bytes_read + c.bytes_written
    c = _op("matmul", [ttype([2, m, k], elem_of("bf16")), ttype([k, n], elem_of("bf16"))]).counts()
    assert c.flops == 2 * 2 * m * n * k and c.bytes_read == 2 * (2 * m * k + k * n) and c.bytes_written == 2 * 2 * m * n


def test_counts_softmax():
    r, j = 4, 6
    op = _op("softmax", [ttype([r, j])])
    assert op.comprehension().startswith("M[d0] max= X[d0, r]")
    c = op.counts()
    assert c.flops == 5 * r * j  # max, sub, exp, add, div
    assert c.bytes_read == 4 * r * j and c.bytes_written == 4 * r * j


def test_counts_layer_norm():
    r, j = 4, 6
    c = _op("layer_norm", [ttype([r, j])]).counts()
    # S += X (1), M = S*inv (1/row), D = X - M (1), V += D*D (2), R = rsqrt(V*inv+eps) (3/row), Y = D*R (1)
    assert c.flops == 5 * r * j + 4 * r
    assert c.bytes_read == 4 * r * j and c.bytes_written == 4 * r * j
    c = _op("layer_norm", [ttype([r, j]), ttype([j]), ttype([j])]).counts()
    assert c.flops == 7 * r * j + 4 * r
    assert c.bytes_read == 4 * (r * j + 2 * j)


def test_counts_layout_ops():
    c = _op("reshape", [ttype([2, 3])], result_types=[ttype([6])]).counts()
    assert (c.flops, c.bytes) == (0, 0)
    assert _op("reshape", [ttype([2, 3])], result_types=[ttype([6])]).comprehension() is None


def test_attrs_defaults_filled():
    op = _op("conv2d", [ttype([1, 3, 5, 5]), ttype([4, 3, 3, 3])], padding=[1, 1])
    assert op.attrs() == {"stride": (1, 1), "padding": (1, 1), "dilation": (1, 1), "groups": 1}
    assert "padding = [1, 1]" in str(op) and "stride" not in str(op)


# ------------------------------------------------------------- interpreter


def test_interpret_input_checks():
    from kitsune.interpreter import InterpretError

    m = single_op_module("add", [ttype([2, 3]), ttype([3])])
    with pytest.raises(InterpretError, match="@main takes 2 inputs, got 1"):
        interpret(m, [rn(2, 3)])
    with pytest.raises(InterpretError, match=r"input #1 of @main has shape \[4\], expected tensor<3xf32>"):
        interpret(m, [rn(2, 3), rn(4)])
    with pytest.raises(InterpretError, match="input #0 of @main has dtype int64, expected tensor<2x3xf32>"):
        interpret(m, [ints(3, 2, 3), rn(3)])
    with pytest.raises(InterpretError, match=r"no function @nope in the module \(functions: @main\)"):
        interpret(m, [rn(2, 3), rn(3)], fn="nope")
    with pytest.raises(InterpretError, match="missing inputs for @main: arg1"):
        interpret(m, {"arg0": rn(2, 3)})


def test_interpret_named_and_torch_inputs():
    m = parse_module("""
func.func @main(%x: tensor<2x3xbf16> {kitsune.name = "x"}, %y: tensor<3xbf16> {kitsune.name = "y"}) -> tensor<2x3xbf16> {
  %z = graph.mul %x, %y : tensor<2x3xbf16>, tensor<3xbf16> -> tensor<2x3xbf16>
  func.return %z : tensor<2x3xbf16>
}
""")
    x, y = torch.randn(2, 3, dtype=torch.bfloat16), torch.randn(3, dtype=torch.bfloat16)
    (got,) = interpret(m, {"y": y, "x": x})
    np.testing.assert_allclose(got, (x * y).float().numpy(), rtol=1e-2)


def test_interpret_multiple_ops_and_results():
    fb_types = [ttype([2, 3]), ttype([4, 3])]
    from graphgen import FuncBuilder

    fb = FuncBuilder()
    x, w = fb.arg(fb_types[0]), fb.arg(fb_types[1])
    h = fb.v("relu", fb.v("linear", x, w))
    a, b = fb.op("split", h, dim=1, sizes=[1, 3]).results
    m = fb.module([fb.v("concat", b, a, dim=-1), h])
    xs, ws = rn(2, 3), rn(4, 3)
    got = interpret(reparse(m), [xs, ws])
    hh = np.maximum(xs @ ws.T, 0)
    assert_close(got[0], np.concatenate([hh[:, 1:], hh[:, :1]], 1))
    assert_close(got[1], hh)


# Every op rejects a wrong result type: the first case of each op, rebuilt with its
# first result's shape corrupted (a wrong size, or one more dim), must fail to verify
# with a message naming the op.
def _corrupt(t):
    from xdsl.dialects.builtin import TensorType

    shape = list(t.get_shape())
    if shape and shape[0] >= 0:
        shape[0] += 3
    else:
        shape.insert(0, 7)
    return TensorType(t.get_element_type(), shape)


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_verifier_rejects_wrong_result(name):
    case = CASES[name][0]
    m = _build(name, case)
    op = next(o for o in m.walk() if isinstance(o, graph.GraphOp) and o.OPDEF.name == name)
    op.verify()  # the valid one verifies
    rtypes = [r.type for r in op.results]
    rtypes[0] = _corrupt(rtypes[0])
    bad = type(op).create(operands=list(op.operands), result_types=rtypes, properties=dict(op.properties))
    with pytest.raises(VerifyException, match=f"graph.{name}"):
        bad.verify()


def test_attention_fully_masked_query_gives_zero():
    """A query whose keys are all masked gets 0, as torch's sdpa (safe softmax); no NaN."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 1, 3, 4)).astype(np.float32) for _ in range(3))
    m = np.where(np.array([[False] * 3, [True, False, False], [True, True, True]]), 0.0, -np.inf).astype(np.float32)
    want = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v, m))).numpy()
    mod = single_op_module("attention", [ttype([1, 1, 3, 4])] * 3 + [ttype([3, 3])])
    got = interpret(mod, [q, k, v, m])[0]
    assert not np.isnan(got).any()
    assert_close(got, want)


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16", "f64"])
def test_non_finite_constants_round_trip(dtype):
    """Non-finite floats print as hex bit patterns (dense<0xff800000> : tensor<f32> is -inf); they parse back as
    the same values, not as the integers the hex digits spell."""
    from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float64Type, TensorType

    from kitsune.dialects.values import constant_value
    from kitsune.frontend.torch_export import module_to_text

    et = {"f32": f32, "bf16": BFloat16Type(), "f16": Float16Type(), "f64": Float64Type()}[dtype]
    for shape, vals in (([], [float("-inf")]), ([4], [1.5, float("inf"), float("-inf"), float("nan")])):
        t = TensorType(et, shape)
        m = single_op_module("constant", [], result_types=[t], value=DenseIntOrFPElementsAttr.from_list(t, vals))
        text = module_to_text(m)
        assert "0x" in text
        back = parse_module(text)
        (c,) = [o for o in back.walk() if o.name == "graph.constant"]
        got = constant_value(c.properties["value"]).astype(np.float64).reshape(-1)
        np.testing.assert_array_equal(got, np.array(vals))
