"""bench/kernels: each template on the suite's shapes, next to the torch op, in one run (GPU).

For every task of the suite's workloads (full size, bf16) that ``kitsune-choose-schedules`` gives a
template, the task is lowered on its own and timed (CUDA-graph replays, ``kitsune.schedule.isolate``) with
the config ``kitsune.compile`` would use (tuning database, then heuristic) and with the heuristic default
alone; next to it the torch op of its anchor on the same shapes (``F.linear`` / ``torch.matmul``: cuBLAS;
``F.conv2d``: cuDNN; ``index_add``: eager's atomics; without the task's fused epilogue). Both sides rotate over
copies of their operands that together are twice the L2 (``isolate.measure``, ``rotating``): weights come from
DRAM, as in a model (until 2026-11-27 the torch op re-read one set, from L2 where it fit: b8's 12 MB QKV weight
5.9 us warm against 7.4 cold). Columns: ms, TFLOP/s, GB/s, % of the roofline (max of FLOPs / 800
TFLOP/s and bytes / 3.0 TB/s, the measured H100 ceilings). Results: JSON (``--json``), a table last.

    python3 bench/kernels/run.py [--workloads a,b] [--json OUT]
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import sys

import torch
import triton
from triton.testing import do_bench

PEAK_FLOPS, PEAK_BW = 800e12, 3.0e12


def torch_peer(anchor, device, channels_last: bool = False):
    """(op, args): the anchor's torch op and random inputs of its shapes, or None (``channels_last``: a
    convolution's input and weight in torch's channels-last memory format, as Kitsune's program stores them)."""
    from kitsune.dialects.regions import tensor_shape

    name = anchor.OPDEF.name
    shapes = [tensor_shape(o.type) for o in anchor.operands]
    if name == "index_add":  # eager's scatter-add (atomics in the tensor's type)
        x, i, s = shapes
        dim = anchor.attrs()["dim"]
        idx = torch.randint(0, x[dim], i, device=device)
        src = torch.randn(s, device=device, dtype=torch.bfloat16)
        base = torch.zeros(x, device=device, dtype=torch.bfloat16)
        return (lambda b, j, v: b.index_add(dim, j, v)), [base, idx, src]
    args = [torch.randn(s, device=device, dtype=torch.bfloat16) / math.sqrt(max(1, s[-1])) for s in shapes]
    if name == "conv2d":  # cuDNN
        a = anchor.attrs()
        if channels_last:
            args = [t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t for t in args]
        return (lambda x, w: torch.nn.functional.conv2d(x, w, None, tuple(a["stride"]), tuple(a["padding"]),
                                                        tuple(a["dilation"]), a["groups"])), args[:2]
    if name == "linear":
        return torch.nn.functional.linear, args
    if name == "matmul":
        a = anchor.attrs()

        def mm(x, y):
            x = x.transpose(-1, -2) if a.get("transpose_a") else x
            y = y.transpose(-1, -2) if a.get("transpose_b") else y
            return torch.matmul(x, y)
        return mm, args
    return None


def rotating(op, args, reps: int = 10):
    """A step calling ``op`` on copies of ``args`` in turn, as many as ``isolate.measure`` rotates Kitsune's
    operands over (together at least twice the L2): each of ``graph_ms``'s ``reps`` calls reads its operands from
    DRAM, as a model's layers do."""
    from kitsune.schedule.isolate import copies_past_l2

    sets = [list(c.values()) for c in copies_past_l2(dict(enumerate(args)), args[0].device, reps)]
    calls = [0]

    def step():
        s = sets[calls[0] % len(sets)]
        calls[0] += 1
        return op(*s)
    return step


def p_skip(c) -> bool:
    """Scatters are timed inside their workloads (python -m kitsune.bench): isolated, their random indices
    (integers in [0, 2)) would send every row to two targets."""
    return c.problem.template == "scatter"


def _value(v: str):
    """A --extra field value: an int, a bool (True / False) or the string."""
    if v in ("True", "False"):
        return v == "True"
    try:
        return int(v)
    except ValueError:
        return v


def extra_variants(specs: list[str], p, used) -> list[tuple[str, object]]:
    """The ``--extra`` configs for problem ``p``: ("extra:<overrides>", ``used`` with them) for each spec whose
    match fields all equal ``p``'s and whose overrides are fields of ``used``'s config class."""
    import dataclasses

    out = []
    for spec in specs:
        match, _, cfg = spec.rpartition(":")
        want = dict(kv.split("=", 1) for kv in match.split(",") if kv)
        if any(str(getattr(p, k, None)) != v for k, v in want.items()):
            continue
        over = {k: _value(v) for k, v in (kv.split("=", 1) for kv in cfg.split(",") if kv)}
        names = {f.name for f in dataclasses.fields(used)}
        if not over or not set(over) <= names:
            continue
        out.append((f"extra:{cfg}", dataclasses.replace(used, **over)))
    return out


def graph_ms(fn, reps=10):
    from kitsune.runtime.program import capture_graph

    g, _ = capture_graph(lambda: [fn() for _ in range(reps)])
    return do_bench(g.replay, warmup=25, rep=200, return_mode="median") / reps


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default="all")
    ap.add_argument("--json", default="")
    ap.add_argument("--no-default", action="store_true", help="skip timing the heuristic default separately")
    ap.add_argument("--extra", action="append", default=[], metavar="MATCH:CONFIG",
                    help="also time CONFIG (field=value,... over the used config) on each problem whose fields "
                         "take MATCH's values (field=value,...; empty: every problem of a template taking "
                         "CONFIG's fields), e.g. 'M=1,K=8192:BN=2,BK=4096,PER_ITEM=1'; repeatable")
    a = ap.parse_args()
    from kitsune.frontend.torch_export import import_module
    from kitsune.models import WORKLOADS, get_workload
    from kitsune.schedule import db, isolate
    from kitsune.schedule.configs import default_config
    from kitsune.schedule.roles import roles_of
    from kitsune.schedule.select import conv_tile, gemm_tile
    from kitsune.tools.tune import scheduled_tasks

    gpu = "h200" if "H200" in torch.cuda.get_device_name() else "h100"
    names = sorted(WORKLOADS) if a.workloads == "all" else a.workloads.split(",")
    rows, seen = [], set()
    for w in names:
        model, inputs = get_workload(w).build(1.0, torch.bfloat16, "meta", seed=0)
        gm, _ = import_module(model, inputs)
        for task, c in scheduled_tasks(gm, gpu):
            if c.problem is None or p_skip(c):
                continue
            p = c.problem
            key = (p.template, p.key())
            if key in seen:
                continue
            seen.add(key)
            row = dict(workload=w, task=task.task_name, template=p.template, M=p.M, N=p.N, K=p.K, batch=p.batch)
            flops = 2.0 * p.M * p.N * p.K * p.batch
            nbytes = (p.M * p.K + p.N * p.K + p.M * p.N) * p.batch * p.elem_bytes
            floor = max(flops / PEAK_FLOPS, nbytes / PEAK_BW) * 1e3
            base = isolate.task_module(task)
            r = roles_of(c.anchor)
            tuned = db.lookup(p, gpu)
            variants = [("used", tuned or c.config)]
            if tuned is not None and not a.no_default:
                variants.append(("default", default_config(p, gpu)))
            variants += extra_variants(a.extra, p, tuned or c.config)
            # the reference: the same task on the generic evaluator (no template), on inputs it gives a finite
            # result for
            ins, ref = isolate.reference_inputs(base, "cuda", gpu)
            for label, cfg in variants:
                try:
                    tile = (gemm_tile(r, p.template, cfg) if p.template in ("gemm", "gemv")
                            else conv_tile(r, cfg) if p.template == "conv" else c.tile)
                    m = isolate.lower(isolate.with_config(base, p.template, cfg, tile), gpu)
                    prog, call = isolate.load(m, ins, "cuda")  # (a conv input as its program stores it)
                    out = prog(*call)[0].float()
                    err = isolate.rel_err(out, ref)
                    row[f"{label}_err"] = err
                    row[f"{label}_config"] = cfg.as_dict()
                    if not (err < 2e-2):
                        row[f"{label}_error"] = f"wrong result: rel. err {err:.2e} against the generic evaluator"
                        continue
                    ms = isolate.measure(prog, call)
                    row[f"{label}_ms"] = ms
                except Exception as e:  # noqa: BLE001
                    row[f"{label}_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:150] if str(e) else ''}"
            f = [o for o in base.walk() if o.name == "func.func"][0]
            cl = any("kitsune.order" in a.data for a in f.arg_attrs.data) if f.arg_attrs else False
            row["channels_last"] = cl
            peer = torch_peer(c.anchor, "cuda", channels_last=cl)
            if peer is not None:
                row["torch_ms"] = graph_ms(rotating(*peer))
            ms = row.get("used_ms")
            if ms:
                row.update(tflops=flops / ms * 1e-9, gbs=nbytes / ms * 1e-6, roofline=floor / ms,
                           vs_torch=row.get("torch_ms", float("nan")) / ms)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    meta = dict(device=torch.cuda.get_device_name(), date=datetime.date.today().isoformat(),
                torch=torch.__version__, triton=triton.__version__, peak_flops=PEAK_FLOPS, peak_bw=PEAK_BW,
                peer_rotated=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(meta, rows=rows), f, indent=1)
    print(f"{meta['device']} {meta['date']} torch {meta['torch']} triton {meta['triton']}")
    print(f"{'workload':<16} {'task':<12} {'tpl':<5} {'M':>6} {'N':>6} {'K':>6} {'ms':>8} {'default':>8} {'torch':>8} "
          f"{'TF/s':>6} {'GB/s':>6} {'roof%':>6} {'x torch':>7}")
    for r in rows:
        def f(k, scale=1.0, fmt="8.4f"):
            v = r.get(k)
            return format(v * scale, fmt) if isinstance(v, (int, float)) and not math.isnan(v) else "-".rjust(8)
        print(f"{r['workload']:<16} {r['task']:<12} {r['template']:<5} {r['M']:>6} {r['N']:>6} {r['K']:>6} "
              f"{f('used_ms')} {f('default_ms')} {f('torch_ms')} {f('tflops', 1, '6.0f')} {f('gbs', 1, '6.0f')} "
              f"{f('roofline', 100, '6.1f')} {f('vs_torch', 1, '7.2f')}"
              + (f"  ERROR {r['used_error']}" if "used_error" in r else ""))
        for k in sorted(k for k in r if k.startswith("extra:") and k.endswith("_ms")):
            nbytes = (r["M"] * r["K"] + r["N"] * r["K"] + r["M"] * r["N"]) * r["batch"] * 2  # (bf16, as the suite)
            pct = 100 * nbytes / PEAK_BW / (r[k] * 1e-3)
            print(f"{'':<16} {k[:-3]:<40} {f(k)} ({pct:.1f}% of the byte roofline"
                  + (f", x torch {r['torch_ms'] / r[k]:.2f})" if r.get("torch_ms") else ")"))
        for k in sorted(k for k in r if k.startswith("extra:") and k.endswith("_error")):
            print(f"{'':<16} {k[:-6]:<40} ERROR {r[k]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
