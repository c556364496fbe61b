"""``-t triton``: a gpu_queue program -> one self-contained Python module of ``@triton.jit`` kernels.

How a stage becomes Triton
--------------------------
A stage's body computes whole tensors in value semantics; its programs compute
its output *tiles*. The generator never builds per-op loops: it asks "what is
value ``v`` at index ``I``?", where ``I`` is a tuple of symbolic index
expressions (``Lin``: affine sums of tile coordinates, ``tl.arange`` axes,
reduction-loop counters, floor-division / modulo terms and loaded index values).
The answer comes from the op table: each graph op's comprehension program
(``kitsune.semantics.optable``) is read statement by statement, so the same text
that drives the reference interpreter and the cost model drives the code:

* ``Y[...] = f(...)``: the left side is solved for its index variables
  (``j + 5`` at ``I`` gives ``j = I - 5`` and the condition ``0 <= j < ext``),
  the right side is evaluated with that binding; several statements writing one
  tensor (concat, slice_scatter, index_add) are folded with ``tl.where``.
* ``Y[...] op= f(...)`` with reduction variables: a loop over the flattened
  reduction space in power-of-two chunks, a new block axis per chunk, the body
  masked to the statement's neutral element outside the domain and reduced
  (``tl.sum`` / ``tl.max`` / ...). A product of two operands that split the
  two tile axes between them becomes ``tl.dot`` (bf16/fp16 operands, fp32
  accumulation): matmul, linear, scatter-add as a one-hot product, and a
  convolution as an implicit GEMM (``conv`` template: output channels by one
  lane axis of output pixels, several tile dims merged into it).
* A window reduction of a few steps (a pool's kh, kw) is unrolled: scalar
  offsets, one load of the tile's shape per step.
* Several trailing tile dims may share one lane axis (``TileIndexer.merged_run``),
  left unclamped: ``28 * (p // 28) + p % 28`` folds back to ``p`` (``ladd``),
  so loads stay contiguous; padded lanes are masked.
* Out-of-range reads give the statement's neutral element (masked loads), which
  is what padding means in the notation. Index checks that interval arithmetic
  proves true are left out.
* ``graph.reshape`` re-linearises the index; splat constants are literals.

Every intermediate stays in registers: a value needed at the same index twice is
computed once (memoised per index), anything that does not depend on a loop
counter is hoisted out of the loop. Elementwise prologues and epilogues
therefore fuse into their contraction for free.

Queues
------
Tiles travel through ring buffers in global memory (see ``kitsune.codegen.plan``
for the counters and the epoch protocol). ``push``: wait until the slot is free
(acquire), store, ``tl.debug_barrier()``, ``tl.atomic_add(filled, 1,
sem="release", scope="gpu")``. ``pop``: ``tl.atomic_add(filled, 0,
sem="acquire", scope="gpu")`` spins until the tile is there, loads bypass L1
(``.cg``), and after the tile's work a release increment of ``freed``. With
``WATCHDOG > 0`` every spin gives up after that many tries and records the
queue in the error flag, which the launcher's ``check`` turns into an exception
naming the queue.

Index checks
------------
Every index loaded from a tensor (a gather's read, a scatter's target) is checked
against the dimension it indexes, in every build (``index_checks=False`` leaves
them out): an index outside sets the error flag to a code naming the op, its
source location and the dimension (``INDEX_CHECKS``), while the access itself
stays masked (a read gives 0, a write is dropped). ``error(code)`` decodes the
flag, ``check(state)`` reads it (synchronising) and raises ``KitsuneIndexError``;
``kitsune.runtime`` reads it without synchronising (see ``Program``).

Layout
------
``index_algebra``   Lin / Atom: symbolic index expressions and their arithmetic (pure)
``syntax``          Triton spellings: dtype tables, literals, combine / reduce text
``emitter``         TV (a value in registers), Blk / Emitter (nested blocks of lines)
``blocks``          Blocks: names, tile axes, frames, broadcasting, index rendering, masks
``memory``          Memory: masked tl.load / tl.store of blocks
``arithmetic``      Arithmetic: operators, functions and accumulation on register values
``evaluator``       Evaluator: the comprehension evaluator (values at an index, statements,
                    inversion, reads, index tensors)
``reductions``      Reductions: which template computes a reduction; the generic chunked loop
``templates/``      dot (tl.dot: gemm, gemv, conv, one-hot scatter-add), split_k (K loops, split
                    reductions and their combination), row_reduction, window_reduction (unrolled),
                    scatter (atomic scatter-accumulate stages), decode_attention (flash-decoding
                    partials: online softmax, a key/value group's query heads as dot rows), tma
                    (dot operands through tensor descriptors, KITSUNE_TMA=1)
``tiling``          the output tile: tile coordinates, tile axes, merged lane axes
``queues``          queue waits, frees and pushes of a stage
``stage``           StageGen: the kernel shell of one stage function
``runtime_text``    the helper and host source pasted into every generated module
``module``          TritonGen: the module (stage functions, dispatchers, tables); generate_triton
"""

from kitsune.codegen.plan import CodegenError
from kitsune.codegen.triton_gen.module import TritonGen, emit_triton, generate_triton

__all__ = ["generate_triton", "emit_triton", "CodegenError", "TritonGen"]
