"""The backward (gradient) ops of the op table: aot_autograd's backward ATen ops, as comprehensions.

Training graphs (``torch.compile(model, backend="kitsune")`` on a model whose parameters require grad)
hold the derivative ops of the forward's ops. The ones with a body worth keeping whole are declared
here like every other op -- one comprehension program that drives shapes, the interpreter, the cost model
and code generation -- and the torch importer keeps them out of the core-ATen decomposition
(``kitsune.frontend.torch_export.KEPT_OPS``):

==========================  ==================================================================  ==============
op                          meaning (G: the incoming gradient)                                  ATen op
==========================  ==================================================================  ==============
threshold_backward          ``select(X <= t, 0, G)``                                            threshold_backward
gelu_backward               ``G * d gelu(X) / dX`` (exact or tanh)                              gelu_backward
sigmoid_backward            ``G * Y * (1 - Y)`` (Y: the forward's output)                       sigmoid_backward
tanh_backward               ``G * (1 - Y * Y)``                                                 tanh_backward
silu_backward               ``G * s * (1 + X * (1 - s))``, ``s = sigmoid(X)``                    silu_backward
softmax_backward            ``Y * (G - sum_j G * Y)`` along dim                                 _softmax_backward_data
log_softmax_backward        ``G - exp(Y) * sum_j G`` along dim                                  _log_softmax_backward_data
layer_norm_backward         the input gradient of layer_norm from the saved mean / rstd          native_layer_norm_backward
max_pool2d_indices          per window the flat index of its first maximum (what the forward     max_pool2d_with_indices
                            saves for max pooling's gradient)                                    (result 1)
==========================  ==================================================================  ==============

What is *not* a new op, because the table already has it (the importer emits it, no special case anywhere
after the import):

* ``native_layer_norm_backward``'s weight and bias gradients: column sums (``sum`` over the leading dims of
  ``G * xhat`` and ``G``);
* ``embedding_dense_backward`` / ``_embedding_bag_backward`` (sum, mean): ``index_add`` into zeros (the
  scatter-accumulate ``Y[I[j], e] += S[j, e]`` that the scatter template pushes from its source rows);
  the bag's gradient row ``G[b]`` is the source, expanded over the bag's indices (a prologue);
* ``mm`` / ``permute`` / ``sum`` of the linear layers' gradients and ``index_put(accumulate)`` of
  index_select's gradient: matmul, permute, sum and index_add;
* ``convolution_backward`` (ungrouped, 1-D / 2-D): convolutions -- the weight gradient is the convolution of
  the input, channels and batch swapped, with the output gradient as its weight (stride and dilation
  swapped); the input gradient is the convolution of the zero-inserted, padded output gradient
  (``slice_scatter`` with a step into zeros) with the flipped, transposed weight (``index_select`` with a
  reversed index, ``permute``). A comprehension of its own would need division in an index (``h = oh s + kh
  d - p`` solved for ``oh``), which the notation does not have; the convolution template serves these as
  it serves the forward;
* ``max_pool2d_with_indices_backward``: ``scatter_reduce`` (sum) of the gradient at the saved indices along the
  flattened H x W plane of every (n, c);
* ``avg_pool2d_backward`` / ``_adaptive_avg_pool2d_backward`` (sizes that divide): the gradient divided by each
  window's divisor (torch's rules, from the static shapes: a constant) and spread over the window by the same
  transposed-window convolution as ``convolution_backward``'s input gradient, with a kernel of ones, one group
  per channel;
* ``native_batch_norm_backward``: core ATen's decomposition (channel sums and pointwise ops, all in the
  table) is exact and is what the importer receives; training-mode batch norm's forward
  (``_native_batch_norm_legit_functional``) is ``batch_norm`` with the batch statistics (``mean``
  reductions) and the running statistics' new values.
"""

from __future__ import annotations

import re

from kitsune.semantics.optable import (
    MAX_POOL2D_ATTRS,
    Attr,
    Instance,
    OpDef,
    OpError,
    Operand,
    _bcast_access,
    _broadcast,
    _def,
    _fmt,
    _idx,
    _norm_dim,
    _norm_split,
    _pool_params,
    _vars,
)

# 1/sqrt(2 pi) and sqrt(2 / pi), torch's kBeta of the exact and tanh GELU gradients
_INV_SQRT_2PI = 0.3989422804014327
_SQRT_2_OVER_PI = 0.7978845608028654

GELU_BACKWARD = {
    "none": "g * (0.5 * (1.0 + erf(x * 0.7071067811865476)) + x * exp(-0.5 * x * x) * 0.3989422804014327)",
    # torch's: inner = kBeta (x + kappa x^3); 0.5 (1 + tanh(inner)) + 0.5 x (1 - tanh^2) kBeta (1 + 3 kappa x^2)
    "tanh": ("g * (0.5 * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))) + 0.5 * x * "
             "(1.0 - tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)) * "
             "tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))) * 0.7978845608028654 * "
             "(1.0 + 0.134145 * x * x))"),
}


def _pointwise(body: str, names: str, params=None):
    """An elementwise program over operands named by ``names`` (numpy broadcasting), ``$``-params from attrs."""

    def sem(shapes, attrs) -> Instance:
        out = _broadcast(shapes)
        iv = _vars("d", len(out))
        b = body(attrs) if callable(body) else body
        for letter, s in zip(names, shapes):
            b = re.sub(rf"\b{letter}\b", _bcast_access(letter.upper(), s, out, iv), b)
        return Instance(f"Y[{_idx(iv)}] = {b}", {l.upper(): i for i, l in enumerate(names)}, ["Y"],
                        params(attrs) if params else {})

    return sem


_def(OpDef("threshold_backward", [Operand("grad"), Operand("x")], {"threshold": Attr("float", 0.0)},
           _pointwise("select(x <= $threshold, 0.0, g)", "gx", lambda a: {"threshold": a["threshold"]}),
           "gradient of threshold / relu: grad where x > threshold, else 0 (x: the forward's input or output)",
           "elementwise",
           example="%y = graph.threshold_backward %g, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>"))

_def(OpDef("gelu_backward", [Operand("grad"), Operand("x")],
           {"approximate": Attr("str", "none", ("none", "tanh"))},
           _pointwise(lambda a: GELU_BACKWARD[a["approximate"]], "gx"),
           "gradient of gelu (exact or tanh) at x", "elementwise"))

_def(OpDef("sigmoid_backward", [Operand("grad"), Operand("y")], {}, _pointwise("g * y * (1.0 - y)", "gy"),
           "gradient of sigmoid from its output y", "elementwise"))

_def(OpDef("tanh_backward", [Operand("grad"), Operand("y")], {}, _pointwise("g * (1.0 - y * y)", "gy"),
           "gradient of tanh from its output y", "elementwise"))

_def(OpDef("silu_backward", [Operand("grad"), Operand("x")], {},
           _pointwise("g * sigmoid(x) * (1.0 + x * (1.0 - sigmoid(x)))", "gx"),
           "gradient of silu at x", "elementwise"))


def _softmax_backward(log: bool):
    def sem(shapes, attrs) -> Instance:
        g, y = shapes
        if len(g) != len(y):
            raise OpError(f"grad {_fmt(g)} and output {_fmt(y)} must have the same shape")
        _broadcast([g, y])
        d = _norm_dim(attrs["dim"], len(g))
        iv = _vars("d", len(g))
        iv[d] = "r"
        part, full = _idx([v for v in iv if v != "r"]), _idx(iv)
        if log:
            text = f"S[{part}] += G[{full}]; DX[{full}] = G[{full}] - exp(Y[{full}]) * S[{part}]"
        else:
            text = f"S[{part}] += G[{full}] * Y[{full}]; DX[{full}] = Y[{full}] * (G[{full}] - S[{part}])"
        return Instance(text, {"G": 0, "Y": 1}, ["DX"])

    return sem


_def(OpDef("softmax_backward", [Operand("grad"), Operand("y")], {"dim": Attr("int", -1)}, _softmax_backward(False),
           "gradient of softmax along dim from its output y: y * (grad - sum(grad * y))", "normalization",
           example="%dx = graph.softmax_backward %g, %y {dim = 1} : tensor<4x8xf32>, tensor<4x8xf32> -> "
                   "tensor<4x8xf32>"))
_def(OpDef("log_softmax_backward", [Operand("grad"), Operand("y")], {"dim": Attr("int", -1)},
           _softmax_backward(True),
           "gradient of log_softmax along dim from its output y: grad - exp(y) * sum(grad)", "normalization"))


def _layer_norm_backward(shapes, attrs) -> Instance:
    g, x, mean, rstd = shapes[:4]
    p, r, n = _norm_split(x, attrs["normalized_rank"])
    if len(g) != len(x) or any(a != b and -1 not in (a, b) for a, b in zip(g, x)):
        raise OpError(f"grad {_fmt(g)} and x {_fmt(x)} must have the same shape")
    stat = tuple(x[:len(p)]) + (1,) * len(r)
    for what, s in (("mean", mean), ("rstd", rstd)):
        if len(s) != len(stat) or any(a != b and -1 not in (a, b) for a, b in zip(s, stat)):
            raise OpError(f"{what} has shape {_fmt(s)}, expected {_fmt(stat)} (the statistics layer_norm saved)")
    P, F, S = _idx(p), _idx(p + r), _idx(p + ["0"] * len(r))
    gw = f"G[{F}]"
    if len(shapes) > 4:
        w = shapes[4]
        if tuple(w) != tuple(x[len(p):]) and -1 not in w:
            raise OpError(f"weight has shape {_fmt(w)}, expected {_fmt(x[len(p):])}")
        gw = f"G[{F}] * W[{_idx(r)}]"
    # xhat = (x - mean) rstd;  dx = rstd (gw - mean(gw) - xhat mean(gw xhat))
    text = (f"H[{F}] = (X[{F}] - M[{S}]) * R[{S}]; A[{P}] += {gw}; B[{P}] += {gw} * H[{F}]; "
            f"DX[{F}] = R[{S}] * ({gw} - A[{P}] * $inv - H[{F}] * B[{P}] * $inv)")
    return Instance(text, {"G": 0, "X": 1, "M": 2, "R": 3, "W": 4}, ["DX"], {"inv": 1.0 / n})


_def(OpDef("layer_norm_backward", [Operand("grad"), Operand("x"), Operand("mean"), Operand("rstd"),
                                   Operand("weight", "optional")],
           {"normalized_rank": Attr("int", 1)}, _layer_norm_backward,
           "input gradient of layer_norm over the trailing normalized_rank dims, from the forward's mean and "
           "rstd (shaped like x with the normalized dims 1) and the optional weight", "normalization"))


def _max_pool2d_indices(shapes, attrs) -> Instance:
    (x,) = shapes
    k, s, p, params, ext, out = _pool_params(x, attrs, "max_pool2d_indices")
    if x[3] == -1:
        raise OpError("max_pool2d_indices needs a static input width")
    params["W"] = x[3]
    h, w = "oh*$s0 + kh*$e0 - $p0", "ow*$s1 + kw*$e1 - $p1"
    win = f"X[n, c, {h}, {w}]"
    # the first maximum in the window's row-major order is the one with the smallest flat index h * W + w
    text = (f"M[n, c, oh, ow] max= {win}; "
            f"Y[n, c, oh, ow] min= select({win} == M[n, c, oh, ow], ({h}) * $W + {w}, inf)")
    return Instance(text, {"X": 0}, ["Y"], params, extents=ext, declared={"Y": out, "M": out})


_def(OpDef("max_pool2d_indices", [Operand("x")], MAX_POOL2D_ATTRS, _max_pool2d_indices,
           "the indices max_pool2d_with_indices returns: per window the flat index h * W + w (into the input's "
           "H x W plane) of its first maximum in row-major order (a window holding NaN: undefined)", "reduction",
           result_dtype="free"))
