"""Shared fixtures for the unit tests (helpers live in graphgen.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# One BLAS thread (before numpy is imported): no thread pools competing with Triton's interpreter on
# shared CI cores. It was set for the intermittent test_form_regions_preserves_meaning[mlp] failure, which
# it cannot explain: that test's GEMMs give bitwise the same results with 1 to 8 OpenBLAS threads; the
# pass-meaning tests now compare float64 evaluations (test_dataflow._check_same).
for _v in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

# Without a GPU, emitted Triton runs under Triton's CPU interpreter. Triton decides that when it is
# first imported (its own library functions, tl.sum and the like, are decorated then), so this must
# come before anything imports triton.
if not os.path.exists("/dev/nvidia0"):
    os.environ.setdefault("TRITON_INTERPRET", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))  # make `import graphgen` work


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# Property tests: random in development (new examples every run), derandomized under
# CI so a CI run is reproducible (`CI=true` is set there).
import os  # noqa: E402

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
