"""Reference values of the backward ops (kitsune/semantics/grad_ops.py): torch autograd.

``grad_case(name, shape, rng, **attrs)`` draws the op's operands for a forward input of ``shape`` and
returns ``(inputs, attrs, ref)``: ``ref(*torch_inputs)`` is the gradient torch's autograd computes for
the forward op (a vector-Jacobian product with the drawn ``grad``), never the op's own formula. Operands
that a backward op takes from the forward (softmax's output, layer_norm's mean / rstd) are computed from
the drawn forward input, as the forward would.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

GRAD_OPS = ["threshold_backward", "gelu_backward", "sigmoid_backward", "tanh_backward", "silu_backward",
            "softmax_backward", "log_softmax_backward", "layer_norm_backward"]


def vjp(fn, g: torch.Tensor, *xs: torch.Tensor, wrt: int = 0) -> torch.Tensor:
    """d(sum(fn(*xs) * g)) / d xs[wrt], by torch autograd, in float64."""
    xs = [x.detach().double().requires_grad_(i == wrt) for i, x in enumerate(xs)]
    y = fn(*xs)
    (gx,) = torch.autograd.grad(y, xs[wrt], g.double())
    return gx.float()


def grad_case(name: str, shape, rng: np.random.Generator, **attrs):
    def rn(*s):
        return rng.standard_normal(s).astype(np.float32)

    shape = tuple(shape)
    g = rn(*shape)
    x = rn(*shape) * 2
    if name == "threshold_backward":
        t = float(attrs.get("threshold", 0.0))
        x.reshape(-1)[0] = t  # a tie: x <= threshold gets no gradient
        return [g, x], {"threshold": t} if t else {}, \
            lambda g, x: vjp(lambda x: F.threshold(x, t, 0.0), g, x)
    if name == "gelu_backward":
        a = attrs.get("approximate", "none")
        return [g, x], ({"approximate": a} if a != "none" else {}), \
            lambda g, x: vjp(lambda x: F.gelu(x, approximate=a), g, x)
    if name == "silu_backward":
        return [g, x], {}, lambda g, x: vjp(F.silu, g, x)
    if name == "sigmoid_backward":
        y = torch.sigmoid(torch.from_numpy(x)).numpy()
        return [g, y], {}, lambda g, y: vjp(torch.sigmoid, g, torch.logit(y.double()))
    if name == "tanh_backward":
        y = torch.tanh(torch.from_numpy(x)).numpy()
        return [g, y], {}, lambda g, y: vjp(torch.tanh, g, torch.atanh(y.double()))
    if name in ("softmax_backward", "log_softmax_backward"):
        d = attrs.get("dim", -1)
        f = torch.softmax if name == "softmax_backward" else torch.log_softmax
        y = f(torch.from_numpy(x).double(), d).float().numpy()
        # softmax(log y) = y and log_softmax(y) = y: the forward input is recovered from its output
        inv = (lambda y: torch.log(y)) if name == "softmax_backward" else (lambda y: y)
        return [g, y], ({"dim": d} if d != -1 else {}), lambda g, y: vjp(lambda x: f(x, d), g, inv(y.double()))
    if name == "layer_norm_backward":
        k = attrs.get("normalized_rank", 1)
        eps = attrs.get("eps", 1e-5)
        ns = shape[len(shape) - k:]
        dims = tuple(range(len(shape) - k, len(shape)))
        xd = torch.from_numpy(x).double()
        mean = xd.mean(dims, keepdim=True)
        rstd = torch.rsqrt(xd.var(dims, unbiased=False, keepdim=True) + eps)
        ins = [g, x, mean.float().numpy(), rstd.float().numpy()]
        w = None
        if attrs.get("weight", True):
            w = rn(*ns) + 1.0
            ins.append(w)
        a = {"normalized_rank": k} if k != 1 else {}
        if w is None:
            return ins, a, lambda g, x, m, r: vjp(lambda x: F.layer_norm(x, ns, eps=eps), g, x)
        return ins, a, lambda g, x, m, r, w: vjp(lambda x, w: F.layer_norm(x, ns, w, eps=eps), g, x, w)
    raise KeyError(name)
