"""Heuristic defaults against the tuned database, per workload and mode (issue 11: within 1.3x).

    python bench/kernels/heuristic_ratio.py bench/results/heuristic [--limit 1.3]

Reads every ``db0-*.json`` (``KITSUNE_TUNING_DB=0``) and ``db1-*.json`` (the database on) under the folder, skipping
``*-old-rule*`` files; later files (by name) win per workload and mode. Prints heuristic ms, tuned ms, and the ratio,
flagging those over ``--limit``; exit status 1 if any is.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys


def _records(path: str) -> dict[tuple[str, str], float]:
    with open(path) as fh:
        data = json.load(fh)
    recs = data if isinstance(data, list) else data.get("records") or data.get("results") or []
    return {(r["workload"], r["mode"]): r["kitsune_ms"] for r in recs if r.get("kitsune_ms")}


def collect(folder: str, prefix: str) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for f in sorted(glob.glob(os.path.join(folder, f"*{prefix}-*.json"))):
        if "old-rule" not in os.path.basename(f):
            out.update(_records(f))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--limit", type=float, default=1.3)
    args = ap.parse_args(argv)
    heur, tuned = collect(args.folder, "db0"), collect(args.folder, "db1")
    over = 0
    print(f"{'workload':<18} {'mode':<10} {'heuristic':>10} {'tuned':>10} {'ratio':>7}")
    for key in sorted(heur):
        if key not in tuned:
            print(f"{key[0]:<18} {key[1]:<10} {heur[key]:>10.4f} {'-':>10}")
            continue
        ratio = heur[key] / tuned[key]
        over += ratio > args.limit
        flag = "  OVER" if ratio > args.limit else ""
        print(f"{key[0]:<18} {key[1]:<10} {heur[key]:>10.4f} {tuned[key]:>10.4f} {ratio:>7.3f}{flag}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
