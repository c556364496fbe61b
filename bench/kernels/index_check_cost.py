"""What Kitsune's always-on index checks cost (issue 13): a workload built with index checks on and off, timed.

    python bench/kernels/index_check_cost.py [--workload dlrm_b2048] [--modes bulk-sync,dataflow]
        [--rounds 5] [--dtype bfloat16] [--out index_check_cost.json]
    TRITON_INTERPRET=1 python bench/kernels/index_check_cost.py --dry-run     # CPU: tiny scale, no timing

Per mode, two programs of the same lowering: ``kitsune.compile(..., index_checks=True)`` (the default) and
``index_checks=False`` (no ``_index_check`` in the kernels, no flag read at a call). Both are checked against
eager on a fresh input set (rel. err < 2e-2, as ``python -m kitsune.bench``), and the checked one is shown to
catch a bad index: a call with one table id out of range, a synchronize, then the next call must raise
``KitsuneIndexError`` (the lazy, non-synchronising check), with and without ``cuda_graph``, and a correct call
after it must give the right result again.

Two timings per program (median ms, ``triton.testing.do_bench``, rotating over the input sets as the harness
does when they fit in L2):

* ``kernels``: the program's launch captured in a CUDA graph (what ``python -m kitsune.bench`` reports as
  ``kitsune_ms``): the cost of the checks in the kernels;
* ``call``: ``program(*inputs)`` compiled with ``cuda_graph=True`` (input copies into the static buffers, the
  graph's replay, and with checks on the read of the flag's host word at the start of the call): what a
  user sees per call.

On and off are timed alternately, ``--rounds`` times each (the order flips every round, to cancel drift);
the table shows the medians over rounds and ``cost % = on / off - 1``. The JSON (``--out``) has every round.
Needs only torch, triton and kitsune.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import warnings


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", default="dlrm_b2048")
    ap.add_argument("--modes", default="bulk-sync,dataflow")
    ap.add_argument("--rounds", type=int, default=5, help="on/off timing rounds per mode (alternating order)")
    ap.add_argument("--dtype", default="bfloat16", help="GPU dtype (default bfloat16, as the harness)")
    ap.add_argument("--scale", type=float, default=None, help="workload scale (default 1.0; 0.02 with --dry-run)")
    ap.add_argument("--gpu", default=None, help="Kitsune GPU preset (default: h200 on an H200, else h100)")
    ap.add_argument("--rotate", type=int, default=4, help="input sets to rotate over (default 4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write the records (JSON) here")
    ap.add_argument("--dry-run", action="store_true", help="CPU, Triton interpreter, tiny scale, fp32, no timing")
    return ap.parse_args(argv)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def bad_indices(inputs):
    """``inputs`` with one id of the first integer input set past its table (``rows``), or None."""
    import torch

    out = list(inputs)
    for k, t in enumerate(out):
        if isinstance(t, torch.Tensor) and not t.is_floating_point() and t.dtype != torch.bool:
            b = t.clone()
            flat = b.view(-1)
            flat[min(7, flat.numel() - 1)] = int(t.max()) + 10 ** 6
            out[k] = b
            return tuple(out)
    return None


def semantics(model, inputs, check_inputs, mode, preset, dev, cuda_graph) -> dict:
    """A bad id raises KitsuneIndexError at the next call (after a synchronize) on a GPU, at the call itself
    under the interpreter; the flag is reset; a correct call after it is right again."""
    import torch

    import kitsune
    from kitsune.bench.harness import TOL, first_line, flatten, rel_errors

    bad = bad_indices(inputs)
    if bad is None:
        return {"skipped": "no integer input"}
    res: dict = {"cuda_graph": cuda_graph}
    try:
        cm = kitsune.compile(model, inputs, mode=mode, gpu=preset, device=dev, cuda_graph=cuda_graph, cache=False)
        cm(*inputs)
        raised_at, at = None, "faulty call"
        try:
            cm(*bad)
            if dev != "cpu":
                torch.cuda.synchronize()  # the faulty call has finished (the next call would see the flag anyway once its kernel ran)
            at = "next call"
            cm(*check_inputs)
        except IndexError as e:
            raised_at = at
            res["message"] = str(e).splitlines()[0][:300]
            res["type"] = type(e).__name__
        if raised_at is None:  # an explicit check must see it now
            try:
                cm.check_errors()
            except IndexError as e:
                raised_at = "check_errors()"
                res["message"] = str(e).splitlines()[0][:300]
        res["raised_at"] = raised_at
        errs = rel_errors([t.clone() for t in flatten(cm(*check_inputs))], model(*check_inputs))
        cm.check_errors()
        res["rel_err_after"] = max(errs)
        expect = "faulty call" if dev == "cpu" else "next call"
        res["ok"] = raised_at == expect and res.get("type") == "KitsuneIndexError" and max(errs) < TOL
    except Exception as e:  # noqa: BLE001
        res["error"] = first_line(e)
        res["ok"] = False
    return res


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.dry_run:
        os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", message=".*Triton's CPU interpreter.*")
    import torch

    import kitsune
    from kitsune.bench.harness import (TOL, bench_ms, first_line, flatten, get_source, gpu_preset, graphs_of,
                                       rel_errors, rotating, versions)

    dry = args.dry_run
    if not dry and not torch.cuda.is_available():
        print("no CUDA GPU: use --dry-run (CPU, Triton interpreter, no timing)", file=sys.stderr)
        return 2
    dev = "cpu" if dry else "cuda"
    dt = torch.float32 if dry else getattr(torch, args.dtype)
    scale = args.scale if args.scale is not None else (0.02 if dry else 1.0)
    preset = args.gpu or gpu_preset()
    src = get_source(args.workload)
    model, inputs = src.build(scale, dt, dev, args.seed)
    n_sets = 1 if dry else max(1, args.rotate)
    sets = [inputs] + [src.fresh(inputs, scale, dt, dev, args.seed + 100 + k) for k in range(1, n_sets)]
    check_inputs = src.fresh(inputs, scale, dt, dev, args.seed + 1000)
    records = []
    with torch.no_grad():
        for mode in [m for m in args.modes.split(",") if m]:
            rec: dict = {"workload": src.name, "mode": mode, "scale": scale, "dtype": str(dt).replace("torch.", ""),
                         "gpu_preset": preset, "input_sets": n_sets, "rounds": args.rounds, **versions()}
            records.append(rec)
            try:
                progs, calls = {}, {}
                for on in (True, False):
                    key = "on" if on else "off"
                    cm = kitsune.compile(model, inputs, mode=mode, gpu=preset, device=dev, index_checks=on,
                                         cache=False)
                    body = cm.source.split("def _index_check", 1)[1]
                    rec[f"checks_{key}"] = len(cm.program.module.INDEX_CHECKS)
                    rec[f"check_calls_in_source_{key}"] = body.count("_index_check(")
                    errs = rel_errors([t.clone() for t in flatten(cm(*check_inputs))], model(*check_inputs))
                    cm.check_errors()
                    rec[f"rel_err_{key}"] = max(errs)
                    progs[key] = cm
                    if not dry:
                        calls[key] = kitsune.compile(model, inputs, mode=mode, gpu=preset, device=dev,
                                                     index_checks=on, cuda_graph=True, cache=False)
                assert rec["check_calls_in_source_on"] > 0 and rec["check_calls_in_source_off"] == 0, \
                    "index checks: expected calls with index_checks=True and none without"
                rec["correct"] = rec["rel_err_on"] < TOL and rec["rel_err_off"] < TOL
                rec["semantics"] = [semantics(model, inputs, check_inputs, mode, preset, dev, False)]
                if not dry:
                    rec["semantics"].append(semantics(model, inputs, check_inputs, mode, preset, dev, True))
                if dry:
                    continue
                # kernels: the launch in a CUDA graph per input set, as the harness times kitsune_ms
                kern = {}
                keep = []
                for key, cm in progs.items():
                    prog = cm.program
                    envs = [{**prog._tensors, **prog._prepare(s)} for s in sets]
                    replays, _, gs = graphs_of(lambda env, p=prog: p.module.launch(p.state, env), envs, warmup=1)
                    keep.append(gs)
                    kern[key] = rotating(replays)
                call = {}
                for key, cm in calls.items():
                    for s in sets:  # the first call captures the graph
                        cm(*s, copy_outputs=False)
                    torch.cuda.synchronize()
                    call[key] = rotating([lambda s=s, c=cm: c(*s, copy_outputs=False) for s in sets])
                times = {f"{what}_ms_{key}": [] for what in ("kernels", "call") for key in ("on", "off")}
                for r in range(args.rounds):
                    order = ("on", "off") if r % 2 == 0 else ("off", "on")
                    for what, fns in (("kernels", kern), ("call", call)):
                        for key in order:
                            times[f"{what}_ms_{key}"].append(bench_ms(fns[key]))
                for c in calls.values():
                    c.check_errors()
                rec.update(times)
                for what in ("kernels", "call"):
                    on, off = median(times[f"{what}_ms_on"]), median(times[f"{what}_ms_off"])
                    rec[f"{what}_ms_on_median"], rec[f"{what}_ms_off_median"] = on, off
                    rec[f"{what}_cost_pct"] = 100.0 * (on / off - 1.0) if on and off else None
                del keep, kern, call
            except Exception as e:  # noqa: BLE001
                rec["error"] = first_line(e)
                import traceback

                traceback.print_exc()
            finally:
                if not dry:
                    torch.cuda.synchronize()
                    torch.cuda.empty_cache()

    print(table(records, dry))
    if args.out:
        d = os.path.dirname(os.path.abspath(args.out))
        os.makedirs(d, exist_ok=True)
        with open(args.out, "w") as f:
            json.dump({"date": datetime.datetime.now().isoformat(timespec="seconds"), "argv": sys.argv,
                       "records": records}, f, indent=1, default=str)
        print(f"wrote {args.out}")
    ok = all(r.get("correct") and "error" not in r and all(s.get("ok", True) for s in r.get("semantics", []))
             for r in records)
    return 0 if ok else 1


def table(records, dry) -> str:
    def f(x, fmt):
        return "-" if x is None else format(x, fmt)

    lines = [f"{'workload':<14} {'mode':<10} {'checks':>6} {'kern on':>9} {'kern off':>9} {'cost %':>7} "
             f"{'call on':>9} {'call off':>9} {'cost %':>7} {'rel err on/off':>17}  lazy check"]
    for r in records:
        sem = "; ".join(("graph " if s.get("cuda_graph") else "") +
                        (f"raised at {s.get('raised_at')}" if s.get("ok") else
                         f"FAILED ({s.get('error') or s.get('raised_at')})")
                        for s in r.get("semantics", []))
        lines.append(f"{r['workload']:<14} {r['mode']:<10} {r.get('checks_on', '-'):>6} "
                     f"{f(r.get('kernels_ms_on_median'), '.4f'):>9} {f(r.get('kernels_ms_off_median'), '.4f'):>9} "
                     f"{f(r.get('kernels_cost_pct'), '+.2f'):>7} "
                     f"{f(r.get('call_ms_on_median'), '.4f'):>9} {f(r.get('call_ms_off_median'), '.4f'):>9} "
                     f"{f(r.get('call_cost_pct'), '+.2f'):>7} "
                     f"{f(r.get('rel_err_on'), '.1e'):>8}/{f(r.get('rel_err_off'), '.1e'):<8}  {sem}"
                     + (f"  ERROR {r['error']}" if r.get("error") else ""))
    lines.append("ms: median over rounds of do_bench medians; kern = the launch in a CUDA graph (kitsune_ms); "
                 "call = program(*inputs) with cuda_graph=True (input copies, replay, flag read); "
                 "cost % = on / off - 1" + ("  [dry run: no timing]" if dry else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
