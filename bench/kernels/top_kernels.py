"""The slowest kernels of harness records (``python -m kitsune.bench --json``): per record its workload, mode and
Kitsune time, then its ``--top`` slowest kernels (measured us), or with ``--pick WORKLOAD=K1,K2`` those kernels of
that workload's records.

    python bench/kernels/top_kernels.py RESULTS.json... [--top 14] [--pick unet=k1,k16]
"""

from __future__ import annotations

import argparse
import json


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--top", type=int, default=14)
    ap.add_argument("--pick", action="append", default=[], help="WORKLOAD=K1,K2: these kernels instead of the top")
    a = ap.parse_args()
    pick = {w: k.split(",") for w, k in (p.split("=", 1) for p in a.pick)}
    for f in a.files:
        for r in json.load(open(f)):
            ks = sorted(r.get("kernels") or [], key=lambda k: -k["measured_us"])
            if pick:
                us = {k["kernel"]: round(k["measured_us"], 1) for k in ks}
                shown = {k: us.get(k) for k in pick.get(r["workload"], ())}
            else:
                shown = [(k["kernel"], round(k["measured_us"], 1)) for k in ks[:a.top]]
            print(r["workload"], r.get("mode"), r.get("kitsune_ms"), shown)


if __name__ == "__main__":
    main()
