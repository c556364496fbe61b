"""Pictures of a compiled program (matplotlib only: no graphviz).

* :func:`draw_graph` -- the dataflow graph of a gpu_queue-lowered module: one box per task (stage) with
  its template / config (when the schedule chose one), program ids, SMs and tiles, grouped and coloured
  by kernel; solid arrows are queues (relation, slots / tiles), dashed arrows are buffers that go through
  memory between kernels (or stages of one kernel).
* :func:`draw_timeline` -- a measured SM timeline (``kitsune.compile(..., profile=True)``): one row per
  SM, one bar per work item (a stage call of one program) from its start to its end, coloured by stage;
  the part of a work item spent before the producer items it depends on had finished is hatched grey
  ("waits": inferred from the measured times and the queue relations, since the spin loops themselves
  are not instrumented).
* :func:`write_report` -- ``report.txt``, ``graph.png`` and, with a profile, ``timeline.png`` +
  ``timeline.json`` in a directory (``CompiledModel.report(path)``).

Every picture function returns the structure it drew (nodes / edges, rows / items), so tests can check it.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

__all__ = ["graph_structure", "draw_graph", "timeline", "timeline_structure", "draw_timeline", "write_report"]


def _mpl():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _attr(op, name):
    a = op.attributes.get(name) if hasattr(op, "attributes") else None
    if a is None:
        return None
    for f in ("data", "value"):
        v = getattr(a, f, None)
        if v is not None:
            v = getattr(v, "data", v)
            if isinstance(v, (int, float, str)):
                return v
    return str(a)


# ------------------------------------------------------------------ the dataflow graph


def graph_structure(module) -> dict[str, Any]:
    """Nodes (stages) and edges (queues and buffers) of a gpu_queue-lowered module."""
    from kitsune.codegen.plan import build_plan

    plan = build_plan(module, "ir")
    nodes, edges = [], []
    writer: dict[str, str] = {}
    for ki, k in enumerate(plan.kernels):
        for st in k.stages:
            nodes.append({"id": st.name, "kernel": k.name, "kernel_index": ki, "pids": [st.lo, st.hi],
                          "sms": _attr(st.op, "sms"), "tile": list(st.tile), "tiles": st.ntiles,
                          "template": _attr(st.op, "template"), "config": _attr(st.op, "config"),
                          "est_us": _attr(st.op, "est_us"), "bound": _attr(st.op, "bound")})
            for _, buf, _ in st.stores:
                writer[buf] = st.name
    for k in plan.kernels:
        for q in k.queues:
            edges.append({"src": q.producer, "dst": q.consumer, "kind": "queue", "name": q.name,
                          "relation": q.relation, "capacity": q.capacity, "tiles": q.ntiles})
    seen = set()
    for k in plan.kernels:
        for st in k.stages:
            for buf in st.args.values():
                src = writer.get(buf)
                if src is not None and src != st.name and (src, st.name, buf) not in seen:
                    seen.add((src, st.name, buf))
                    edges.append({"src": src, "dst": st.name, "kind": "buffer", "name": buf, "relation": "all"})
    return {"nodes": nodes, "edges": edges, "kernels": [k.name for k in plan.kernels],
            "inputs": [plan.tensors[a].label or a for a in plan.args if plan.tensors[a].role == "input"],
            "outputs": list(plan.outputs)}


def _levels(nodes, edges) -> dict[str, int]:
    ids = [n["id"] for n in nodes]
    preds = defaultdict(set)
    for e in edges:
        if e["src"] in ids and e["dst"] in ids and e["src"] != e["dst"]:
            preds[e["dst"]].add(e["src"])
    level: dict[str, int] = {}
    for _ in range(len(ids) + 1):
        changed = False
        for n in ids:
            lv = 1 + max((level.get(p, 0) for p in preds[n]), default=-1)
            if level.get(n) != lv:
                level[n] = lv
                changed = True
        if not changed:
            break
    return level


def draw_graph(module, path: str | os.PathLike, *, title: str = "") -> dict[str, Any]:
    """Draw the dataflow graph of ``module`` to ``path`` (PNG); returns :func:`graph_structure` with the
    positions used."""
    plt = _mpl()
    from matplotlib.patches import FancyBboxPatch

    g = graph_structure(module)
    nodes, edges = g["nodes"], g["edges"]
    level = _levels(nodes, edges)
    by_level = defaultdict(list)
    for n in nodes:
        by_level[level[n["id"]]].append(n)
    nl = max(by_level) + 1 if by_level else 1
    width = max((len(v) for v in by_level.values()), default=1)
    bw, bh, dx, dy = 3.2, 1.25, 4.4, 2.3
    pos = {}
    for lv, ns in by_level.items():
        for i, n in enumerate(ns):
            pos[n["id"]] = ((i - (len(ns) - 1) / 2) * dx, -lv * dy)
    fig_w = max(6.0, width * dx * 0.75 + 2)
    fig_h = max(3.0, nl * dy * 0.75 + 1.5)
    fig, ax = plt.subplots(figsize=(fig_w, fig_h))
    cmap = plt.get_cmap("tab10")
    for n in nodes:
        x, y = pos[n["id"]]
        col = cmap(n["kernel_index"] % 10)
        ax.add_patch(FancyBboxPatch((x - bw / 2, y - bh / 2), bw, bh, boxstyle="round,pad=0.05",
                                    fc=(*col[:3], 0.25), ec=col, lw=1.5))
        lo, hi = n["pids"]
        tmpl = n["template"] or "(no template attr)"
        cfg = f" {n['config']}" if n["config"] else ""
        lines = [n["id"], f"{tmpl}{cfg}"[:48],
                 f"pids [{lo},{hi}) SMs {n['sms'] if n['sms'] is not None else '?'}",
                 f"tile {'x'.join(map(str, n['tile'])) or '-'} x{n['tiles']}"
                 + (f"  est {float(n['est_us']):.1f} us" if n["est_us"] is not None else "")]
        ax.text(x, y + 0.38, lines[0], ha="center", va="center", fontsize=8, weight="bold")
        ax.text(x, y - 0.12, "\n".join(lines[1:]), ha="center", va="center", fontsize=6.5)
    for e in edges:
        if e["src"] not in pos or e["dst"] not in pos:
            continue
        (x0, y0), (x1, y1) = pos[e["src"]], pos[e["dst"]]
        queue = e["kind"] == "queue"
        ax.annotate("", xy=(x1, y1 + bh / 2 + 0.05), xytext=(x0, y0 - bh / 2 - 0.05),
                    arrowprops=dict(arrowstyle="-|>", lw=1.4 if queue else 1.0, ls="-" if queue else "--",
                                    color="tab:red" if queue else "0.4", shrinkA=0, shrinkB=0))
        lab = (f"{e['name']}: {e['relation']}, {e['capacity']}/{e['tiles']} slots" if queue
               else f"{e['name']} (memory)")
        ax.text((x0 + x1) / 2, (y0 + y1) / 2, lab, fontsize=6, ha="center", va="center",
                color="tab:red" if queue else "0.3", bbox=dict(fc="white", ec="none", alpha=0.8, pad=0.5))
    for i, kname in enumerate(g["kernels"]):
        ax.plot([], [], "s", color=cmap(i % 10), label=f"kernel {kname}")
    ax.plot([], [], "-", color="tab:red", label="queue (relation, slots/tiles)")
    ax.plot([], [], "--", color="0.4", label="buffer through memory")
    ax.legend(loc="upper right", fontsize=7, framealpha=0.9)
    xs = [p[0] for p in pos.values()] or [0]
    ys = [p[1] for p in pos.values()] or [0]
    ax.set_xlim(min(xs) - dx, max(xs) + dx)
    ax.set_ylim(min(ys) - dy * 0.7, max(ys) + dy * 0.7)
    ax.axis("off")
    ax.set_title(title or f"dataflow graph: {len(nodes)} task(s), {len(g['kernels'])} kernel(s), "
                 f"{sum(e['kind'] == 'queue' for e in edges)} queue(s)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    g["positions"] = pos
    return g


# ------------------------------------------------------------------ the SM timeline


def timeline(program) -> list[dict]:
    """The work items of ``program``'s last launch (compiled with ``profile=True``)."""
    mod = program.module
    if not getattr(mod, "PROFILE", None):
        raise RuntimeError("this program was not compiled with profile=True (kitsune.compile(..., profile=True))")
    if program.calls == 0:
        raise RuntimeError("no call yet: run the compiled model once before reading its timeline")
    unit = "ns" if program.device.type == "cuda" else "tick"
    return [{"kernel": k, "stage": s, "pid": p, "start": int(t0), "end": int(t1), "sm": int(sm), "unit": unit}
            for k, s, p, t0, t1, sm in mod.read_profile(program.state)]


def _deps(graph: dict | None) -> dict[str, list[tuple[str, str]]]:
    """consumer stage -> [(producer stage, relation)] through queues (the hand-offs a work item waits on)."""
    out = defaultdict(list)
    for e in (graph or {}).get("edges", []):
        if e["kind"] == "queue":
            out[e["dst"]].append((e["src"], e["relation"]))
    return out


def timeline_structure(items: list[dict], graph: dict | None = None) -> dict[str, Any]:
    """Rows (SMs), items with times relative to the first start, and inferred waits."""
    if not items:
        return {"rows": [], "items": [], "waits": [], "stages": [], "unit": "ns", "span": 0}
    t0 = min(it["start"] for it in items)
    unit = items[0].get("unit", "ns")
    scale = 1e-3 if unit == "ns" else 1.0
    its = [{**it, "t0": (it["start"] - t0) * scale, "t1": (it["end"] - t0) * scale} for it in items]
    rows = sorted({it["sm"] for it in its})
    stages = list(dict.fromkeys(it["stage"] for it in its))
    by_stage = defaultdict(list)
    for it in its:
        by_stage[it["stage"]].append(it)
    waits = []
    for cons, prods in _deps(graph).items():
        for it in by_stage.get(cons, []):
            until = it["t0"]
            for p, rel in prods:
                ps = sorted(by_stage.get(p, []), key=lambda x: x["pid"])
                if not ps:
                    continue
                cs = sorted(by_stage[cons], key=lambda x: x["pid"])
                if rel == "tile" and len(ps) == len(cs):
                    need = [ps[cs.index(it)]]
                else:  # a row band or the whole tensor: bounded by the producer stage's last item
                    need = ps
                until = max(until, min(it["t1"], max(x["t1"] for x in need)))
            if until > it["t0"]:
                waits.append({"sm": it["sm"], "stage": cons, "pid": it["pid"], "t0": it["t0"], "t1": until})
    span = max(it["t1"] for it in its)
    return {"rows": rows, "items": its, "waits": waits, "stages": stages,
            "unit": "us" if unit == "ns" else "tick", "span": span}


def draw_timeline(items: list[dict], path: str | os.PathLike, *, graph: dict | None = None,
                  title: str = "") -> dict[str, Any]:
    """Draw the SM timeline of ``items`` (:func:`timeline`) to ``path`` (PNG); returns
    :func:`timeline_structure`."""
    plt = _mpl()
    s = timeline_structure(items, graph)
    rows = s["rows"]
    row_of = {sm: i for i, sm in enumerate(rows)}
    h = max(2.5, min(0.12 * len(rows) + 1.5, 30))
    fig, ax = plt.subplots(figsize=(11, h))
    cmap = plt.get_cmap("tab20")
    col = {st: cmap(i % 20) for i, st in enumerate(s["stages"])}
    by_stage = defaultdict(list)
    for it in s["items"]:
        by_stage[it["stage"]].append((it["t0"], max(it["t1"] - it["t0"], 1e-9), row_of[it["sm"]]))
    for st, bars in by_stage.items():
        for t, w, r in bars:
            ax.broken_barh([(t, w)], (r - 0.4, 0.8), facecolors=col[st], edgecolors="none")
        ax.broken_barh([], (0, 0), facecolors=col[st], label=st)
    for wt in s["waits"]:
        ax.broken_barh([(wt["t0"], wt["t1"] - wt["t0"])], (row_of[wt["sm"]] - 0.4, 0.8), facecolors="none",
                       edgecolors="0.2", hatch="////", linewidth=0)
    if s["waits"]:
        ax.broken_barh([], (0, 0), facecolors="none", edgecolors="0.2", hatch="////",
                       label="waiting on a producer (inferred)")
    ax.set_ylim(-1, max(len(rows), 1))
    step = max(1, len(rows) // 24)
    ax.set_yticks(range(0, len(rows), step))
    ax.set_yticklabels([str(rows[i]) for i in range(0, len(rows), step)], fontsize=6)
    ax.set_ylabel("SM" if s["unit"] == "us" else "program (interpreter: no SMs)")
    ax.set_xlabel("time since the first work item started (us)" if s["unit"] == "us"
                  else "logical clock (interpreter: programs run one by one)")
    ax.set_xlim(0, s["span"] * 1.02 if s["span"] else 1)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    ax.set_title(title or f"SM timeline: {len(s['items'])} work item(s) on {len(rows)} row(s)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return s


# ------------------------------------------------------------------ the report directory


def write_report(path, text: str, module, *, gpu=None, program=None) -> dict[str, str]:
    """``report.txt``, ``graph.png`` and (profile mode, after a call) ``timeline.png`` / ``timeline.json``
    under directory ``path``."""
    d = Path(path)
    d.mkdir(parents=True, exist_ok=True)
    files = {"text": str(d / "report.txt"), "graph": str(d / "graph.png")}
    g = draw_graph(module, files["graph"])
    if program is not None and getattr(program.module, "PROFILE", None) and program.calls:
        items = timeline(program)
        s = draw_timeline(items, d / "timeline.png", graph=g)
        files["timeline"] = str(d / "timeline.png")
        files["timeline_json"] = str(d / "timeline.json")
        with open(files["timeline_json"], "w") as f:
            json.dump({"unit": items[0]["unit"] if items else "ns", "items": items,
                       "waits": s["waits"]}, f)
        text = text + _timeline_text(s, g)
    with open(files["text"], "w") as f:
        f.write(text)
    return files


def _timeline_text(s: dict, g: dict) -> str:
    """Per stage: measured span and busy time next to the cost model's estimate."""
    est = {n["id"]: n["est_us"] for n in g["nodes"]}
    lines = ["", f"measured timeline ({s['unit']}): {len(s['items'])} work items on {len(s['rows'])} row(s), "
                 f"span {s['span']:.3f}"]
    lines.append(f"  {'stage':<24} {'items':>6} {'first start':>12} {'last end':>10} {'busy':>10} "
                 f"{'waits':>10} {'est_us':>9}")
    waits = defaultdict(float)
    for w in s["waits"]:
        waits[w["stage"]] += w["t1"] - w["t0"]
    for st in s["stages"]:
        its = [i for i in s["items"] if i["stage"] == st]
        busy = sum(i["t1"] - i["t0"] for i in its)
        e = est.get(st)
        lines.append(f"  {st:<24} {len(its):>6} {min(i['t0'] for i in its):>12.3f} {max(i['t1'] for i in its):>10.3f} "
                     f"{busy:>10.3f} {waits[st]:>10.3f} {('-' if e is None else f'{float(e):.3f}'):>9}")
    return "\n".join(lines) + "\n"
