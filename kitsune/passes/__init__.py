"""Kitsune passes. ``ALL_PASSES`` maps each pass name to its class (for kitsune-opt)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _graph_canonicalize():
    from kitsune.passes.graph_canonicalize import GraphCanonicalizePass

    return GraphCanonicalizePass


def _graph_decompose():
    from kitsune.passes.graph_decompose import GraphDecomposePass

    return GraphDecomposePass


ALL_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "graph-canonicalize": _graph_canonicalize,
    "graph-decompose": _graph_decompose,
}


def register(name: str, factory: Callable[[], type[ModulePass]]) -> None:
    ALL_PASSES[name] = factory
