"""The model zoo runs under Triton's CPU interpreter (set before anything imports triton)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

if not os.path.exists("/dev/nvidia0"):
    os.environ.setdefault("TRITON_INTERPRET", "1")

sys.path.insert(0, str(Path(__file__).parent))
