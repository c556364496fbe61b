"""The model zoo runs under Triton's CPU interpreter (set before anything imports triton)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# One BLAS thread: the pass-meaning tests compare two interpreter runs of float32 reductions, and a
# multi-threaded BLAS may split a GEMM differently between runs (the intermittent
# test_form_regions_preserves_meaning[mlp] failure); this must come before numpy is imported.
for _v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

if not os.path.exists("/dev/nvidia0"):
    os.environ.setdefault("TRITON_INTERPRET", "1")

sys.path.insert(0, str(Path(__file__).parent))
