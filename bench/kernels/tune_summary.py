"""One line per candidate of a ``kitsune-tune --json`` file: task, problem (M, N, K), config, microseconds, error.

The device scripts' shared summary (``bench/kernels/s32*.sh`` on), in place of the five lines each ``s31*.sh``
repeated::

    python3 bench/kernels/tune_summary.py $OUT/tune.jsonl
"""

from __future__ import annotations

import json
import sys

SHORT = {"warps": "w", "stages": "s", "GLUON": "G", "SPLIT": "S", "SKEW": "skew"}


def config_text(c: dict) -> str:
    """``BMxBN`` (where the config has both) and the other fields short, ``BK`` and ``GROUP_M`` left out."""
    head = f'{c["BM"]}x{c["BN"]} ' if "BM" in c and "BN" in c else ""
    rest = [f"{SHORT.get(k, k)}{v}" for k, v in sorted(c.items()) if k not in ("BM", "BN", "BK", "GROUP_M")]
    return head + " ".join(rest)


def main(paths: list[str]) -> int:
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            ms = r.get("ms")
            print(r.get("task", ""), r.get("problem", "").split(",")[1:4], config_text(r.get("config", {})),
                  round(ms * 1e3, 1) if ms else "-", r.get("error", "")[:200])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
