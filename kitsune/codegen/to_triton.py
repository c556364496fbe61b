"""``-t triton``: a gpu_queue program -> one self-contained Python module of ``@triton.jit`` kernels.

The generator lives in the package ``kitsune.codegen.triton_gen`` (its docstring says how a stage becomes
Triton, and which module does what). This module keeps the names other code imports from here.
"""

from __future__ import annotations

from kitsune.codegen.plan import CodegenError
from kitsune.codegen.triton_gen.index_algebra import Atom, Lin, ladd, latom, laxes, lconst, lfloordiv, lmod, lrange, lscale
from kitsune.codegen.triton_gen.module import TritonGen, emit_triton, generate_triton

__all__ = ["generate_triton", "emit_triton", "CodegenError", "TritonGen", "Atom", "Lin", "lconst", "latom", "ladd",
           "laxes", "lfloordiv", "lmod", "lrange", "lscale"]
