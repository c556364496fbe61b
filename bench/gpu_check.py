#!/usr/bin/env python3
"""Kitsune on the GPU: correctness against torch eager, and speed against eager and Inductor + CUDA graph.

For each workload (full size, bf16, cuda) and mode (dataflow, bulk-sync):

* build the model and inputs (``kitsune.models.get_workload(W).build``),
  ``kitsune.compile(model, inputs, mode=M, gpu=..., cuda_graph=True)``;
* check against torch eager bf16 on fresh random inputs (a new seed, the
  workload's own input factory, so index inputs stay in range): for every output
  ``||out - ref|| / ||ref|| < 2e-2`` (in fp32; a NaN/Inf fails); checked again
  after the timing loop with another fresh input set (CUDA-graph replays and
  queue epochs must keep it right);
* time the median of ``triton.testing.do_bench`` for Kitsune (CUDA graph), torch
  eager, and Inductor (``torch.compile``) captured in a ``torch.cuda.CUDAGraph``
  and replayed -- all in the same process, on the same inputs.

Each workload runs in its own subprocess (``--no-isolate`` to run in-process), so
a crash, a CUDA error that poisons the context or a hang (``--timeout`` seconds a
subprocess) costs only the mode it happened in: a fresh subprocess runs the modes
left, reusing the baselines; finished results are kept. The table
comes last; ``speedup`` = Inductor+graph ms / Kitsune ms (> 1: Kitsune is faster).

    python3 bench/gpu_check.py                                  # all 8 workloads, both modes
    python3 bench/gpu_check.py --workloads mlp_gpt3_T256,llama_decode_b1 --modes dataflow --json $OUT/r.json
    python3 bench/gpu_check.py --no-inductor --scale 0.25      # quicker
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python3 bench/gpu_check.py --sanitize nerf_65k
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

os.environ.pop("TRITON_INTERPRET", None)  # compiled kernels, never the interpreter, here

MODES = ("dataflow", "bulk-sync")
TOL = 2e-2


class _Skip(Exception):
    pass


def log(*a) -> None:
    print("[gpu_check]", *a, file=sys.stderr, flush=True)


def first_line(e: BaseException) -> str:
    s = f"{type(e).__name__}: {e}".strip()
    return s.splitlines()[0][:300] if s else type(e).__name__


# ----------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------

def flatten(x) -> list:
    import torch

    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for e in x for t in flatten(e)]
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in flatten(x[k])]
    if x is None:
        return []
    raise TypeError(f"unexpected output type {type(x).__name__}")


def rel_errors(outs, refs) -> list[float]:
    """``||out - ref|| / ||ref||`` per output, in fp32; NaN when out has a non-finite value."""
    import torch

    outs, refs = flatten(outs), flatten(refs)
    if len(outs) != len(refs):
        raise ValueError(f"{len(outs)} outputs, the reference has {len(refs)}")
    errs = []
    for o, r in zip(outs, refs):
        if tuple(o.shape) != tuple(r.shape):
            raise ValueError(f"output shape {tuple(o.shape)} != reference {tuple(r.shape)}")
        o32, r32 = o.detach().float(), r.detach().float()
        if not torch.isfinite(o32).all():
            errs.append(float("nan"))
            continue
        den = torch.linalg.vector_norm(r32).item()
        num = torch.linalg.vector_norm(o32 - r32).item()
        errs.append(num / den if den > 0 else num)
    return errs


def fresh_inputs(workload, scale: float, seed: int, device, dtype):
    """New random inputs from the workload's own factory (index tensors stay in range)."""
    import torch

    cfg = workload.config(scale)
    gen = torch.Generator(device="cpu").manual_seed(seed)
    ins = workload.make_inputs(cfg, gen)
    return tuple(t.to(device=device, dtype=dtype) if t.is_floating_point() else t.to(device=device) for t in ins)


def gpu_preset() -> str:
    import torch

    name = torch.cuda.get_device_name().lower()
    return "h200" if "h200" in name else "h100"


def kitsune_compile(model, inputs, **kw):
    """``kitsune.compile`` with the keyword arguments it accepts (the API is young)."""
    import kitsune

    fn = getattr(kitsune, "compile", None)
    if fn is None:
        from kitsune.compile import compile as fn  # type: ignore
    try:
        params = inspect.signature(fn).parameters
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            dropped = [k for k in kw if k not in params]
            if dropped:
                log(f"kitsune.compile takes no {dropped}; leaving them out")
            kw = {k: v for k, v in kw.items() if k in params}
    except (TypeError, ValueError):
        pass
    return fn(model, inputs, **kw)


def report_text(compiled) -> str | None:
    rep = getattr(compiled, "report", None)
    if rep is None:
        return None
    try:
        r = rep() if callable(rep) else rep
        return r if isinstance(r, str) else str(r)
    except Exception as e:  # noqa: BLE001
        return f"(report failed: {first_line(e)})"


def bench_ms(fn) -> float:
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def inductor_graph(model, inputs):
    """``torch.compile(model)`` captured in a CUDA graph: (replay, static outputs)."""
    import torch

    from kitsune.runtime.program import capture_graph

    compiled = torch.compile(model)
    static_in = tuple(t.clone() for t in inputs)
    g, static_out = capture_graph(lambda: compiled(*static_in), warmup=3)
    torch.cuda.synchronize()
    return g, static_in, static_out


# ----------------------------------------------------------------------------------
# one workload (in-process)
# ----------------------------------------------------------------------------------

def run_workload(name: str, modes, args, emit, mark=None, baseline: dict | None = None) -> None:
    """Baselines, then each mode; ``emit(record)`` once per mode (also on failure).

    ``mark`` (if given) gets ``{"_baseline": {...}}`` once the baselines are measured and
    ``{"_start": mode}`` before each mode, so a parent can tell where a hang was. With
    ``baseline`` given, the baselines are not measured again.
    """
    mark = mark or (lambda _m: None)
    import torch

    from kitsune.models import get_workload

    dev, dt = "cuda", torch.bfloat16
    base: dict[str, Any] = {"workload": name, "scale": args.scale, "device": torch.cuda.get_device_name(),
                            "torch": torch.__version__}
    w = get_workload(name)
    t0 = time.perf_counter()
    try:
        model, inputs = w.build(scale=args.scale, dtype=dt, device=dev, seed=args.seed)
    except Exception as e:  # noqa: BLE001
        for m in modes:
            emit({**base, "mode": m, "correct": False, "stage": "build", "error": first_line(e)})
        return
    log(f"{name}: built in {time.perf_counter() - t0:.1f} s")

    with torch.no_grad():
        # --- baselines (once per workload) ---
        eager_ms = ind_ms = ind_err = None
        base_err = {}
        if baseline is not None:
            base.update(baseline)
            ind_ms = baseline.get("inductor_graph_ms")
        try:
            if baseline is not None:
                raise _Skip
            eager_ms = bench_ms(lambda: model(*inputs))
            log(f"{name}: eager {eager_ms:.4f} ms")
        except _Skip:
            pass
        except Exception as e:  # noqa: BLE001
            base_err["eager_error"] = first_line(e)
        if not args.no_inductor and baseline is None:
            try:
                t1 = time.perf_counter()
                g, st_in, st_out = inductor_graph(model, inputs)
                ind_ms = bench_ms(g.replay)
                ref = model(*st_in)
                g.replay()
                torch.cuda.synchronize()
                ind_err = max(rel_errors(st_out, ref))
                log(f"{name}: inductor+graph {ind_ms:.4f} ms (compile {time.perf_counter() - t1:.0f} s, "
                    f"rel err {ind_err:.2e})")
                del g, st_in, st_out
            except Exception as e:  # noqa: BLE001
                base_err["inductor_error"] = first_line(e)
                log(f"{name}: inductor failed: {first_line(e)}")
        if baseline is None:
            base.update(eager_ms=eager_ms, inductor_graph_ms=ind_ms, inductor_rel_err=ind_err, **base_err)
            mark({"_baseline": {k: base[k] for k in ("eager_ms", "inductor_graph_ms", "inductor_rel_err",
                                                         *base_err)}})

        # --- kitsune, per mode ---
        for m in modes:
            mark({"_start": m})
            rec: dict[str, Any] = {**base, "mode": m, "correct": False}
            fn = None
            stage = "compile"
            try:
                t1 = time.perf_counter()
                fn = kitsune_compile(model, inputs, mode=m, gpu=args.gpu or gpu_preset(), cuda_graph=True,
                                     debug=args.debug)
                rec["compile_s"] = round(time.perf_counter() - t1, 2)

                def check(k: int) -> list[float]:
                    x = fresh_inputs(w, args.scale, args.seed + 1000 + k, dev, dt)
                    out = [t.clone() for t in flatten(fn(*x))]
                    torch.cuda.synchronize()
                    return rel_errors(out, model(*x))

                stage = "check"
                errs = [check(0)]
                stage = "time"
                rec["kitsune_ms"] = bench_ms(lambda: fn(*inputs))
                if args.recheck:
                    stage = "recheck"
                    errs.append(check(1))
                flat = [v for e in errs for v in e]
                rec["rel_errs"] = errs
                rec["rel_err"] = float("nan") if any(math.isnan(v) for v in flat) else max(flat)
                rec["correct"] = all(v < TOL for v in flat)  # NaN compares False
                if not rec["correct"]:
                    rec["error"] = f"rel err {rec['rel_err']:.3e} >= {TOL}" + \
                        (" (non-finite output)" if math.isnan(rec["rel_err"]) else "")
                if ind_ms:
                    rec["speedup"] = ind_ms / rec["kitsune_ms"]
                if args.report:
                    rec["report"] = report_text(fn)
                stage = None
                log(f"{name} {m}: rel err {rec['rel_err']:.2e}, {rec['kitsune_ms']:.4f} ms")
            except Exception as e:  # noqa: BLE001
                rec["error"] = first_line(e)
                log(f"{name} {m}: failed at {stage}: {first_line(e)}")
                if args.traceback:
                    traceback.print_exc()
            rec["stage"] = stage
            emit(rec)
            fn = None  # free the compiled program before the next mode
            torch.cuda.synchronize()
            torch.cuda.empty_cache()


# ----------------------------------------------------------------------------------
# isolation: one subprocess a workload
# ----------------------------------------------------------------------------------

def _child_once(name: str, modes, args, baseline: dict | None):
    """One child process for ``modes``: (lines it wrote, why it failed or None)."""
    with tempfile.TemporaryDirectory(prefix="gpu_check_") as tmp:
        out = os.path.join(tmp, "records.jsonl")
        cmd = [sys.executable, os.path.abspath(__file__), "--_child", name, "--_out", out,
               "--modes", ",".join(modes), "--scale", repr(args.scale), "--seed", str(args.seed)]
        for flag in ("no_inductor", "debug", "report", "traceback"):
            if getattr(args, flag):
                cmd.append("--" + flag.replace("_", "-"))
        if not args.recheck:
            cmd.append("--no-recheck")
        if args.gpu:
            cmd += ["--gpu", args.gpu]
        if baseline is not None:
            cmd += ["--_baseline", json.dumps(baseline)]
        env = dict(os.environ)
        env.pop("TRITON_INTERPRET", None)
        env["PYTHONUNBUFFERED"] = "1"
        tail: list[str] = []
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

        def pump():
            for line in p.stderr:
                sys.stderr.write(line)
                tail.append(line.rstrip())
                del tail[:-20]

        th = threading.Thread(target=pump, daemon=True)
        th.start()
        why = None
        try:
            p.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            why = f"timed out after {args.timeout:.0f} s (hang?)"
        except KeyboardInterrupt:  # SIGTERM / SIGINT of this script: keep what is done, stop here
            p.kill()
            p.wait()
            why = "interrupted"
            args._interrupted = True
        th.join(timeout=5)
        lines = []
        if os.path.exists(out):
            with open(out) as fh:
                lines = [json.loads(line) for line in fh if line.strip()]
        if why is None and p.returncode != 0:
            last = next((t for t in reversed(tail) if t and not t.startswith("[gpu_check]")), "")
            why = f"subprocess exit {p.returncode}" + (f": {last[:300]}" if last else "")
        return lines, why


def run_isolated(name: str, modes, args) -> list[dict]:
    """Modes of one workload in a child process; after a hang or crash in a mode, a new child
    runs the modes left (reusing the baselines measured)."""
    recs: list[dict] = []
    left = list(modes)
    baseline = None
    while left:
        lines, why = _child_once(name, left, args, baseline)
        started = None
        for ln in lines:
            if "_baseline" in ln:
                baseline = ln["_baseline"]
            elif "_start" in ln:
                started = ln["_start"]
            else:
                recs.append(ln)
                if ln["mode"] in left:
                    left.remove(ln["mode"])
                started = None
        if not left:
            break
        if started is not None and started in left and not args._interrupted:
            # this mode hung or crashed; the others get a fresh process
            recs.append({"workload": name, "mode": started, "correct": False, "stage": "subprocess",
                         "error": why or "no result", **(baseline or {})})
            left.remove(started)
            continue
        for m in left:  # failed before any mode (build / baselines), or interrupted
            recs.append({"workload": name, "mode": m, "correct": False, "stage": "subprocess",
                         "error": why or "no result", **(baseline or {})})
        break
    order = {m: i for i, m in enumerate(modes)}
    return sorted(recs, key=lambda r: order.get(r["mode"], 99))


# ----------------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------------

def _f(v, fmt: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return format(v, fmt)


def table(records: list[dict]) -> str:
    cols = ["workload", "mode", "correct", "rel err", "kitsune ms", "inductor+graph ms", "eager ms", "speedup"]
    rows = [[r["workload"], r["mode"], "yes" if r.get("correct") else "NO", _f(r.get("rel_err"), ".2e"),
             _f(r.get("kitsune_ms"), ".4f"), _f(r.get("inductor_graph_ms"), ".4f"), _f(r.get("eager_ms"), ".4f"),
             _f(r.get("speedup"), ".2f")] for r in records]
    wd = [max(len(c), *(len(x[i]) for x in rows)) if rows else len(c) for i, c in enumerate(cols)]
    out = ["  ".join(c.ljust(w) for c, w in zip(cols, wd))]
    out += ["  ".join(x.ljust(w) for x, w in zip(row, wd)) for row in rows]
    seen = set()
    for r in records:
        if r.get("error"):
            out.append(f"! {r['workload']} {r['mode']} [{r.get('stage')}]: {r['error']}")
        for k in ("eager_error", "inductor_error"):
            if r.get(k) and (r["workload"], k) not in seen:
                seen.add((r["workload"], k))
                out.append(f"! {r['workload']} {k.split('_')[0]}: {r[k]}")
    out.append("speedup = inductor+graph ms / kitsune ms (> 1: Kitsune faster); "
               f"correct: every output's rel err < {TOL:g} vs torch eager bf16")
    return "\n".join(out)


def _json_safe(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else str(x)
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    return x


# ----------------------------------------------------------------------------------
# sanitize
# ----------------------------------------------------------------------------------

def sanitize(name: str, args) -> int:
    """Compile one workload's program (first of --modes, default dataflow), run it ``--iters`` times, check."""
    import torch

    from kitsune.models import get_workload

    mode = args.modes.split(",")[0] if args.modes else "dataflow"
    w = get_workload(name)
    model, inputs = w.build(scale=args.scale, dtype=torch.bfloat16, device="cuda", seed=args.seed)
    with torch.no_grad():
        fn = kitsune_compile(model, inputs, mode=mode, gpu=args.gpu or gpu_preset(), cuda_graph=False,
                             debug=args.debug)
        x = fresh_inputs(w, args.scale, args.seed + 1000, "cuda", torch.bfloat16)
        out = None
        for _ in range(max(1, args.iters)):
            out = [t.clone() for t in flatten(fn(*x))]
        torch.cuda.synchronize()
        errs = rel_errors(out, model(*x))
    ok = all(e < TOL for e in errs)
    print(f"sanitize {name} {mode} scale={args.scale} iters={args.iters}: rel errs "
          f"{', '.join(f'{e:.2e}' for e in errs)} -> {'ok' if ok else 'WRONG'}", flush=True)
    return 0 if ok else 1


# ----------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="all", help="comma list or 'all' (default)")
    ap.add_argument("--modes", default=",".join(MODES), help="comma list of dataflow, bulk-sync (default both)")
    ap.add_argument("--no-inductor", action="store_true", help="skip torch.compile + CUDA graph")
    ap.add_argument("--json", help="write all records (JSON list) here")
    ap.add_argument("--scale", type=float, default=1.0, help="workload scale (default 1.0: full size)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gpu", help="kitsune GPU preset (default: h200 on an H200, else h100)")
    ap.add_argument("--debug", action="store_true", help="kitsune.compile(debug=True)")
    ap.add_argument("--report", action="store_true", help="keep kitsune's .report() in the JSON")
    ap.add_argument("--no-recheck", dest="recheck", action="store_false",
                    help="skip the second correctness check after timing")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds a workload (isolated), default 180")
    ap.add_argument("--no-isolate", action="store_true", help="run every workload in this process")
    ap.add_argument("--traceback", action="store_true", help="print tracebacks of failures")
    ap.add_argument("--sanitize", metavar="W", help="run W's program once, no timing (for compute-sanitizer)")
    ap.add_argument("--iters", type=int, default=1, help="--sanitize: runs of the program (default 1)")
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    ap.add_argument("--_out", help=argparse.SUPPRESS)
    ap.add_argument("--_baseline", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    import torch

    if not torch.cuda.is_available():
        print("gpu_check: no CUDA device", file=sys.stderr)
        return 2
    if args.sanitize:
        return sanitize(args.sanitize, args)

    modes = [m for m in args.modes.split(",") if m]
    bad = [m for m in modes if m not in MODES]
    if bad:
        ap.error(f"unknown modes {bad}")

    if args._child:  # one workload, records appended to --_out as they finish
        def emit(rec):
            with open(args._out, "a") as fh:
                fh.write(json.dumps(_json_safe(rec)) + "\n")

        run_workload(args._child, modes, args, emit, mark=emit,
                     baseline=json.loads(args._baseline) if args._baseline else None)
        return 0

    from kitsune.models import WORKLOADS

    names = list(WORKLOADS) if args.workloads == "all" else [n for n in args.workloads.split(",") if n]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workloads {unknown}; valid: {', '.join(WORKLOADS)}")
    log(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; workloads {names}, modes {modes}")

    def on_term(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)  # `timeout N python3 bench/gpu_check.py` still prints the table
    args._interrupted = False
    records: list[dict] = []
    t0 = time.perf_counter()
    for n in names:
        if args._interrupted:
            records += [{"workload": n, "mode": m, "correct": False, "stage": "skipped", "error": "interrupted"}
                        for m in modes]
            continue
        if args.no_isolate:
            got: list[dict] = []
            try:
                run_workload(n, modes, args, got.append)
            except KeyboardInterrupt:
                args._interrupted = True
                got += [{"workload": n, "mode": m, "correct": False, "stage": "run", "error": "interrupted"}
                        for m in modes if m not in {r["mode"] for r in got}]
            except Exception as e:  # noqa: BLE001
                done = {r["mode"] for r in got}
                got += [{"workload": n, "mode": m, "correct": False, "stage": "run", "error": first_line(e)}
                        for m in modes if m not in done]
            records += got
        else:
            records += run_isolated(n, modes, args)
        if args.json:  # keep what is done, in case the whole run is cut off
            with open(args.json, "w") as fh:
                json.dump(_json_safe(records), fh, indent=1)
    log(f"done in {time.perf_counter() - t0:.0f} s")
    print(table(records), flush=True)
    return 0 if records and all(r.get("correct") for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
