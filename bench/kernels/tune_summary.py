"""One line per record of a ``kitsune-tune --json`` file: task, problem (M, N, K), config, microseconds (the kernel's,
or with ``--in-program`` the program's a launch, and the incumbent's), error.

The device scripts' shared summary (``bench/kernels/s32*.sh`` on), in place of the five lines each ``s31*.sh``
repeated::

    python3 bench/kernels/tune_summary.py $OUT/tune.jsonl
"""

from __future__ import annotations

import json
import sys

SHORT = {"warps": "w", "stages": "s", "GLUON": "G", "SPLIT": "S", "SKEW": "skew"}


def config_text(c: dict) -> str:
    """``BMxBN`` and the other fields short, ``BK`` and ``GROUP_M`` left out (a gemm's); every field short else."""
    tile = "BM" in c and "BN" in c
    head = f'{c["BM"]}x{c["BN"]} ' if tile else ""
    skip = ("BM", "BN", "BK", "GROUP_M") if tile else ()
    rest = [f"{SHORT.get(k, k)}{v}" for k, v in sorted(c.items()) if k not in skip]
    return head + " ".join(rest)


def main(paths: list[str]) -> int:
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            us = r["ms"] * 1e3 if r.get("ms") else r.get("us")  # (``--in-program``: the program's us a launch)
            inc = f' (incumbent {r["incumbent_us"]})' if "incumbent_us" in r else ""
            print(r.get("task", ""), r.get("problem", "").split(",")[1:4], config_text(r.get("config", {})),
                  round(us, 1) if us else "-", inc + r.get("error", "")[:200])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
