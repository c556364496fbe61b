"""Shared fixtures for the unit tests (helpers live in graphgen.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

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
