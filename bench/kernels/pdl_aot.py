"""sm_90 AOT of generated modules (``dump_triton.py`` output) with the PDL constexpr at 0 and 2: registers, spills
per kernel, to check that loads before waits (``early_loads``) costs no spills before GPU time is spent.

    python bench/kernels/pdl_aot.py DIR [DIR2] --files a.bulk-sync.py,b.bulk-sync.py
Prints per file and kernel: registers / spill bytes at PDL 0 and 2 (and DIR2's at PDL 0 for comparison).
"""
from __future__ import annotations

import argparse
import os

from kitsune.codegen.aot import compile_module_source


def regs(path: str, pdl: int) -> dict[str, tuple]:
    src = open(path).read().replace('"PDL": 0}', f'"PDL": {pdl}}}')
    out = {}
    for r in compile_module_source(src):
        out[r["name"]] = ((r.get("registers"), (r.get("spill_stores") or 0) + (r.get("spill_loads") or 0))
                          if r["ok"] else ("ERR", r["error"].splitlines()[0][:80]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("base", nargs="?")
    ap.add_argument("--files", required=True)
    a = ap.parse_args()
    for f in a.files.split(","):
        new0, new2 = regs(os.path.join(a.dir, f), 0), regs(os.path.join(a.dir, f), 2)
        old0 = regs(os.path.join(a.base, f), 0) if a.base else {}
        print(f"== {f}")
        for k in new0:
            flag = " <--" if new2[k] != new0[k] or (old0 and old0.get(k) != new0[k]) else ""
            print(f"  {k:8s} new pdl0 {new0[k]!s:14s} pdl2 {new2[k]!s:14s} base pdl0 {old0.get(k)!s:14s}{flag}")


if __name__ == "__main__":
    main()
