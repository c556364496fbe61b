"""Derived parameters: weights a pass computes from other weights, named by their recipe.

``kitsune-merge-siblings`` concatenates the weights of sibling convolutions / linears into one argument. Its
label is the recipe, ``concat(dim=0: b1.weight, b2_reduce.weight)``, so that whatever supplies weights by label
(the runtime's upload, the reference interpreter's inputs, ``kitsune-run``) derives its value from the weights
it already has, once, when they are loaded: no kernel computes it per call and no side file changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_CONCAT = re.compile(r"^concat\(dim=(-?\d+): (.+)\)$")


def concat_label(dim: int, labels: Sequence[str]) -> str:
    """The label of the concatenation of the weights ``labels`` along ``dim``."""
    return f"concat(dim={dim}: {', '.join(labels)})"


def recipe(label: str) -> tuple[int, list[str]] | None:
    """(dim, the labels of its parts) of a derived label, None for a plain one."""
    m = _CONCAT.match(label)
    return (int(m.group(1)), m.group(2).split(", ")) if m else None


def resolve(label: str, weights: Mapping[str, Any]) -> Any:
    """The value of weight ``label``: ``weights[label]``, or derived from the parts it names (torch tensors or
    numpy arrays, as they come). Raises KeyError naming the first missing weight."""
    if label in weights:
        return weights[label]
    r = recipe(label)
    if r is None:
        raise KeyError(label)
    dim, parts = r
    vals = [resolve(p, weights) for p in parts]
    try:
        import torch

        if all(isinstance(v, torch.Tensor) for v in vals):
            return torch.cat([v.detach() for v in vals], dim)
    except ImportError:  # pragma: no cover
        pass
    import numpy as np

    return np.concatenate([np.asarray(v.detach().cpu().float() if hasattr(v, "detach") else v) for v in vals], dim)


def available(label: str, weights: Mapping[str, Any]) -> bool:
    """Whether ``resolve`` finds a value for ``label``."""
    if label in weights:
        return True
    r = recipe(label)
    return r is not None and all(available(p, weights) for p in r[1])


__all__ = ["concat_label", "recipe", "resolve", "available"]
