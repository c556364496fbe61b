"""Code generation from the gpu_queue dialect: ``-t triton`` (main) and ``-t cuda``.

``TARGETS`` maps a ``kitsune-opt -t`` name to a function ``(module, output) -> None``.
"""

from __future__ import annotations


def _triton(module, output):
    from kitsune.codegen.triton_gen import emit_triton

    emit_triton(module, output)


def _cuda(module, output):
    from kitsune.codegen.to_cuda import emit_cuda

    emit_cuda(module, output)


TARGETS = {"triton": _triton, "cuda": _cuda}
