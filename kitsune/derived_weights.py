"""Derived parameters: weights a pass computes from other weights, named by their recipe.

``kitsune-merge-siblings`` concatenates the weights of sibling convolutions / linears into one argument, and
``kitsune-project-gathers`` takes column blocks of a linear's weight. The new argument's label is its recipe,
``concat(dim=0: b1.weight, b2_reduce.weight)`` or ``slice(dim=1, 0:128: fc1.weight)`` (recipes nest:
``concat(dim=0: slice(dim=1, 0:128: w), slice(dim=1, 128:256: w))``), so that whatever supplies weights by label
(the runtime's upload, the reference interpreter's inputs, ``kitsune-run``) derives its value from the weights
it already has, once, when they are loaded: no kernel computes it per call and no side file changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_CONCAT = re.compile(r"^concat\(dim=(-?\d+): (.+)\)$")
_SLICE = re.compile(r"^slice\(dim=(-?\d+), (\d+):(\d+): (.+)\)$")


@dataclass(frozen=True)
class Recipe:
    """How a derived weight is made: ``op`` ``concat`` (its ``parts`` along ``dim``) or ``slice`` (``[start,
    end)`` of its one part along ``dim``)."""

    op: str
    dim: int
    parts: tuple[str, ...]
    start: int = 0
    end: int = 0


def concat_label(dim: int, labels: Sequence[str]) -> str:
    """The label of the concatenation of the weights ``labels`` along ``dim``."""
    return f"concat(dim={dim}: {', '.join(labels)})"


def slice_label(dim: int, start: int, end: int, label: str) -> str:
    """The label of ``[start, end)`` of weight ``label`` along ``dim``."""
    return f"slice(dim={dim}, {start}:{end}: {label})"


def _top_level_parts(text: str) -> list[str]:
    """``text`` split at the ``", "`` that are outside parentheses."""
    parts, depth, cur = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0 and text.startswith(", ", i):
            parts.append(text[cur:i])
            cur = i + 2
    parts.append(text[cur:])
    return parts


def recipe(label: str) -> Recipe | None:
    """The recipe of a derived label, None for a plain one."""
    m = _SLICE.match(label)
    if m:
        return Recipe("slice", int(m.group(1)), (m.group(4),), int(m.group(2)), int(m.group(3)))
    m = _CONCAT.match(label)
    if m:
        return Recipe("concat", int(m.group(1)), tuple(_top_level_parts(m.group(2))))
    return None


def _combine(r: Recipe, vals: list) -> Any:
    try:
        import torch

        if all(isinstance(v, torch.Tensor) for v in vals):
            vals = [v.detach() for v in vals]
            if r.op == "slice":
                return vals[0].narrow(r.dim, r.start, r.end - r.start).contiguous()
            return torch.cat(vals, r.dim)
    except ImportError:  # pragma: no cover
        pass
    import numpy as np

    vals = [np.asarray(v.detach().cpu().float() if hasattr(v, "detach") else v) for v in vals]
    if r.op == "slice":
        index = [slice(None)] * vals[0].ndim
        index[r.dim] = slice(r.start, r.end)
        return np.ascontiguousarray(vals[0][tuple(index)])
    return np.concatenate(vals, r.dim)


def resolve(label: str, weights: Mapping[str, Any]) -> Any:
    """The value of weight ``label``: ``weights[label]``, or derived from the parts it names (torch tensors or
    numpy arrays, as they come). Raises KeyError naming the first missing weight."""
    if label in weights:
        return weights[label]
    r = recipe(label)
    if r is None:
        raise KeyError(label)
    return _combine(r, [resolve(p, weights) for p in r.parts])


def available(label: str, weights: Mapping[str, Any]) -> bool:
    """Whether ``resolve`` finds a value for ``label``."""
    if label in weights:
        return True
    r = recipe(label)
    return r is not None and all(available(p, weights) for p in r.parts)


__all__ = ["Recipe", "concat_label", "slice_label", "recipe", "resolve", "available"]
