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
