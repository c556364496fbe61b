"""Code templates of the Triton generator: how particular reductions and stages become loops.

``dot`` (tl.dot for products that split the tile's axes: gemm, gemv, conv, one-hot scatter-add), ``split_k``
(K loops, split reductions and the combination of their parts), ``row_reduction`` (over a whole tile axis),
``window_reduction`` (small windows, unrolled), ``scatter`` (a stage of atomic scatter-accumulates) and
``depthwise`` (a stage of a window contraction with one input row band an output: row strips in registers). They
work through the evaluator's and the stage shell's public surface (see ``evaluator`` and ``stage``).
"""
