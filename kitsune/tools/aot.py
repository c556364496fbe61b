"""Ahead-of-time compile checks from the command line: generated Triton modules -> sm_90 cubins, no GPU needed.

Full-size import on the meta device, bf16, lowered with ``kitsune-pipeline{mode=M}``, generated, compiled
(``kitsune.codegen.aot``), printed as a table::

    python -m kitsune.tools.aot --workload mlp_gpt3_T256 --mode dataflow
    python -m kitsune.tools.aot --workload all --mode all --json out.json
    python -m kitsune.tools.aot --source generated.py      # a module file as is

Exit status 1 when a kernel failed to compile (or generation failed), else 0. It must run without
``TRITON_INTERPRET`` (it refuses to start with it set).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Iterable

from kitsune.codegen import aot


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "y" if v else "n"
    return str(v)


def format_table(records: Iterable[dict]) -> str:
    cols = ["workload", "mode", "kernel", "ok", "grid", "warps", "regs", "smem", "spill", "wgmma", "mma",
            "cta/SM", "resident", "rings", "secs"]
    rows = []
    for rec in records:
        if not rec.get("kernels"):
            rows.append([rec.get("workload", "-"), rec.get("mode", "-"), "-", "n"] + ["-"] * (len(cols) - 4))
            continue
        for k in rec["kernels"]:
            spill = None
            if k.get("spill_stores") is not None or k.get("spill_loads") is not None:
                spill = (k.get("spill_stores") or 0) + (k.get("spill_loads") or 0)
            rows.append([rec.get("workload", "-"), rec.get("mode", "-"), k["name"], _fmt(k["ok"]), _fmt(k.get("grid")),
                         _fmt(k.get("num_warps")), _fmt(k.get("registers")), _fmt(k.get("shared")), _fmt(spill),
                         _fmt(k.get("wgmma")), _fmt(k.get("mma")), _fmt(k.get("ctas_per_sm")),
                         _fmt(k.get("resident")), _fmt(k.get("ring_queues")), _fmt(k.get("compile_s"))])
    widths = [max(len(c), *(len(str(r[i])) for r in rows)) if rows else len(c) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(str(x).ljust(w) for x, w in zip(r, widths)) for r in rows]
    errs = [r for r in records if r.get("error")]
    for r in errs:
        lines.append(f"! {r.get('workload', '-')} {r.get('mode', '-')} [{r.get('stage')}]: {r['error']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kitsune.tools.aot", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", help="workload name, comma list, or 'all'")
    ap.add_argument("--source", help="compile this generated module file instead of a workload")
    ap.add_argument("--mode", default="dataflow", help="dataflow, bulk-sync, a comma list, or 'all'")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--arch", type=int, default=90)
    ap.add_argument("--gpu", default="h100", help="GPU preset for kitsune-pipeline")
    ap.add_argument("--capacity", default="ir", choices=["ir", "all"])
    ap.add_argument("--json", help="write the records as JSON to this file")
    ap.add_argument("--quiet", action="store_true", help="no table")
    args = ap.parse_args(argv)
    if bool(args.workload) == bool(args.source):
        ap.error("give --workload W or --source FILE")
    if aot.interpret_env_set():
        print("kitsune.tools.aot: error: TRITON_INTERPRET is set; run without it "
              "(env -u TRITON_INTERPRET python -m kitsune.tools.aot ...)", file=sys.stderr)
        return 2

    records: list[dict] = []
    if args.source:
        with open(args.source) as fh:
            src = fh.read()
        ks = aot.compile_module_source(src, args.arch)
        records.append({"workload": os.path.basename(args.source), "mode": "-", "kernels": ks,
                        "ok": bool(ks) and all(k["ok"] for k in ks), "stage": None})
    else:
        from kitsune.models import WORKLOADS

        names = list(WORKLOADS) if args.workload == "all" else args.workload.split(",")
        modes = list(aot.MODES) if args.mode == "all" else args.mode.split(",")
        for m in modes:
            if m not in aot.MODES:
                ap.error(f"unknown mode {m!r} (dataflow, bulk-sync)")
        for n in names:
            if n not in WORKLOADS:
                ap.error(f"unknown workload {n!r}; valid: {', '.join(WORKLOADS)}")
            records += aot.compile_workload(n, modes, args.scale, args.arch, args.gpu, args.capacity)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(records, fh, indent=1)
    if not args.quiet:
        print(format_table(records))
    return 0 if records and all(r["ok"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
