"""Print a ``kitsune-tune --json`` log (one record a task) as the device scripts' short table: per task its problem,
the winner and the incumbent with their microseconds, the errors, then the fastest candidates.

    python bench/kernels/tune_summary.py tune.jsonl [--top 6]
"""

from __future__ import annotations

import argparse
import json


def short(c: dict) -> str:
    """A config as ``BMxBN wW sS G<GLUON> S<SPLIT>`` (fields a template lacks print their defaults)."""
    return f'{c.get("BM")}x{c.get("BN")} w{c.get("warps")} s{c.get("stages")} G{c.get("GLUON", 0)} S{c.get("SPLIT", 1)}'


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("jsonl")
    ap.add_argument("--top", type=int, default=6)
    a = ap.parse_args()
    for line in open(a.jsonl):
        r = json.loads(line)
        print(r["task"], r["problem"].split(",")[1:5], "win", short(r["config"]), r["us"], "inc", short(r["incumbent"]),
              r["incumbent_us"], "errors", len(r["errors"]))
        for k, v in sorted(r["candidates"].items(), key=lambda kv: kv[1])[:a.top]:
            print("   ", v, k[:120])


if __name__ == "__main__":
    main()
