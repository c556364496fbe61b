"""The README's benchmark table from the latest JSON results.

    python -m kitsune.bench.table [bench/results/FILE.json ... | bench/results/] [--readme README.md]

Without ``--readme`` the markdown table goes to stdout; with it, the section of README.md between
``<!-- kitsune-bench:begin -->`` and ``<!-- kitsune-bench:end -->`` is rewritten. A directory means its
newest ``*.json``; several files are merged. Per (workload, mode) the newest record (by its date) counts.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys

BEGIN, END = "<!-- kitsune-bench:begin -->", "<!-- kitsune-bench:end -->"


def latest_json(path: str) -> str:
    if os.path.isdir(path):
        files = sorted(glob.glob(os.path.join(path, "*.json")), key=os.path.getmtime)
        files = [f for f in files if not os.path.basename(f).startswith("timeline")]
        if not files:
            raise FileNotFoundError(f"no *.json under {path}")
        return files[-1]
    return path


def _ms(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def _paired_note(records) -> str:
    """Which rows were timed in turn with Inductor + CUDA graph (``harness.paired_ms``), which as blocks."""
    records = list(records)
    paired = [r for r in records if r.get("paired_rounds")]
    if not paired:
        return ""
    if len(paired) == len(records):
        return (f" Kitsune and Inductor + CUDA graph timed in turn ({paired[0]['paired_rounds']} rounds each, the "
                f"order flipped every round; medians).")
    names = sorted({r["workload"] for r in paired})
    return (f" Timed in turn with Inductor + CUDA graph (rounds, the order flipped every round; medians): "
            f"{', '.join(names)}; the other rows as blocks, Inductor first.")


def markdown(records: list[dict], source: str = "") -> str:
    latest: dict[tuple, dict] = {}
    for r in records:
        if r.get("kind") == "timeline" or "mode" not in r or r.get("train"):  # training steps: not this table
            continue
        k = (r["workload"], r["mode"])
        if k not in latest or (r.get("date") or "") >= (latest[k].get("date") or ""):
            latest[k] = r
    devs = sorted({r.get("device") or "?" for r in latest.values()})
    dates = sorted({(r.get("date") or "?")[:10] for r in latest.values()})
    vers = sorted({f"torch {r.get('torch')}, triton {r.get('triton')}" for r in latest.values()})
    lines = [f"`python -m kitsune.bench` on {', '.join(devs)}, {', '.join(dates)}, {'; '.join(vers)}; median ms "
             f"(`triton.testing.do_bench`), all in one process per workload on the same inputs; Kitsune's launch "
             f"plan in a CUDA graph; correct = rel. err < 2e-2 vs eager on fresh inputs (a wrong result gets no "
             f"time); floor = roofline floor (cost model), % = floor / time." + _paired_note(latest.values())
             + (f" Source: `{source}`." if source else ""),
             "",
             "| workload | mode | correct (rel. err) | Kitsune | eager | eager+graph | Inductor | Inductor+graph "
             "| Inductor+graph / Kitsune | floor | Kitsune % of floor | DRAM MB Kitsune / Inductor |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (w, m), r in sorted(latest.items()):
        err = r.get("rel_err")
        ok = ("yes" if r.get("correct") else "**no**") + (f" ({err:.1e})" if isinstance(err, (int, float)) else "")
        if r.get("error") and not r.get("correct"):
            ok += f" {str(r['error'])[:60]}"
        sp = r.get("speedup")
        fr = r.get("fraction_of_floor")
        db, ib = r.get("dram_bytes"), r.get("inductor_dram_bytes")
        dram = "-" if db is None and ib is None else \
            f"{'-' if db is None else f'{db / 1e6:.0f}'} / {'-' if ib is None else f'{ib / 1e6:.0f}'}"
        lines.append(f"| {w} | {m} | {ok} | {_ms(r.get('kitsune_ms'))} | {_ms(r.get('eager_ms'))} | "
                     f"{_ms(r.get('eager_graph_ms'))} | {_ms(r.get('inductor_ms'))} | {_ms(r.get('inductor_graph_ms'))} "
                     f"| {'-' if sp is None else f'{sp:.2f}'} | {_ms(r.get('floor_ms'))} | "
                     f"{'-' if fr is None else f'{100 * fr:.0f}%'} | {dram} |")
    return "\n".join(lines) + "\n"


def rewrite(readme: str, text: str) -> None:
    with open(readme) as f:
        s = f.read()
    if BEGIN not in s or END not in s:
        raise SystemExit(f"{readme} has no {BEGIN} ... {END} section")
    head, rest = s.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(readme, "w") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kitsune.bench.table", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="*", default=["bench/results"],
                    help="result files (their records merged: per workload and mode the newest by date) or one "
                         "directory (its newest file)")
    ap.add_argument("--readme", help="rewrite this file's marked section")
    a = ap.parse_args(argv)
    paths = [latest_json(p) for p in a.json]
    recs = []
    for path in paths:
        with open(path) as f:
            recs += json.load(f)
    text = markdown(recs, source="`, `".join(os.path.relpath(p) for p in paths))
    if a.readme:
        rewrite(a.readme, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
