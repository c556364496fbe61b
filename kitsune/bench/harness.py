"""The benchmark harness behind ``python -m kitsune.bench`` (see ``kitsune/bench/__init__.py``)."""

from __future__ import annotations

import argparse
import csv
import datetime
import importlib.util
import inspect
import io
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

MODES = ("dataflow", "bulk-sync")
PEERS = ("eager", "eager_graph", "inductor", "inductor_graph")
TOL = 2e-2
HBM_BW = 3.0e12  # bytes/s: the H100's measured device-to-device copy (WORKLOADS.md), for hbm_fraction
NCU_METRICS = "dram__bytes_read.sum,dram__bytes_write.sum"


def log(*a) -> None:
    print("[kitsune.bench]", *a, file=sys.stderr, flush=True)


def first_line(e: BaseException) -> str:
    s = f"{type(e).__name__}: {e}".strip()
    return s.splitlines()[0][:300] if s else type(e).__name__


# ------------------------------------------------------------------ workloads


@dataclass
class Source:
    """A workload: a suite name or ``path.py[:factory]``."""

    spec: str
    name: str
    build: Callable[..., tuple]  # (scale, dtype, device, seed) -> (model, inputs)
    fresh: Callable[..., tuple]  # (inputs, scale, dtype, device, seed) -> new inputs like ``inputs``


def _to(inputs, dtype, device):
    import torch

    return tuple(t.to(device=device, dtype=dtype) if t.is_floating_point() else t.to(device=device)
                 if isinstance(t, torch.Tensor) else t for t in inputs)


def get_source(spec: str) -> Source:
    import torch

    if spec.endswith(".py") or ".py:" in spec:
        path, _, fname = spec.partition(".py")
        path += ".py"
        fname = fname.lstrip(":") or "make_model"
        if not os.path.exists(path):
            raise FileNotFoundError(f"model file {path} not found")
        modname = "kitsune_bench_model_" + os.path.basename(path)[:-3].replace("-", "_")
        ms = importlib.util.spec_from_file_location(modname, path)
        mod = importlib.util.module_from_spec(ms)
        sys.modules[modname] = mod
        ms.loader.exec_module(mod)
        factory = getattr(mod, fname, None)
        if factory is None:
            raise AttributeError(f"{path} has no factory {fname!r} (returning (module, example_inputs))")
        takes_seed = "seed" in inspect.signature(factory).parameters

        def call(seed):
            r = factory(seed=seed) if takes_seed else factory()
            model, inputs = r[0], r[1]
            return model, (inputs,) if isinstance(inputs, torch.Tensor) else tuple(inputs)

        def build(scale, dtype, device, seed):
            torch.manual_seed(seed)
            model, inputs = call(seed)
            model = model.to(device=device)
            if dtype is not None:
                model = model.to(dtype=dtype)
            return model.eval(), _to(inputs, dtype, device)

        def fresh(inputs, scale, dtype, device, seed):
            if takes_seed:
                return _to(call(seed)[1], dtype, device)
            g = torch.Generator(device="cpu").manual_seed(seed)
            return tuple(torch.randn(t.shape, generator=g).to(device=t.device, dtype=t.dtype)
                         if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs)

        name = os.path.basename(path)[:-3] + (f":{fname}" if fname != "make_model" else "")
        return Source(spec, name, build, fresh)

    from kitsune.models import WORKLOADS, get_workload

    if spec not in WORKLOADS:
        raise KeyError(f"unknown workload {spec!r}; valid: {', '.join(WORKLOADS)}, or path.py[:factory]")
    w = get_workload(spec)

    def build(scale, dtype, device, seed):
        return w.build(scale=scale, dtype=dtype, device=device, seed=seed)

    def fresh(inputs, scale, dtype, device, seed):
        gen = torch.Generator(device="cpu").manual_seed(seed)
        return _to(w.make_inputs(w.config(scale), gen), dtype, device)

    return Source(spec, spec, build, fresh)


# ------------------------------------------------------------------ helpers


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


def fp32_errors(model, inputs, got) -> tuple[float, float]:
    """(Kitsune's, bf16 eager's) largest relative error against the model run in fp32 (a copy; the same
    weights, floating inputs cast up)."""
    import copy

    import torch

    m32 = copy.deepcopy(model).float()
    x32 = [t.float() if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs]
    with torch.no_grad():
        ref = m32(*x32)
        eager = model(*inputs)
    del m32
    return max(rel_errors(got, ref)), max(rel_errors(eager, ref))


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
        num = torch.linalg.vector_norm((o32 - r32)).item()
        errs.append(num / den if den > 0 else num)
    return errs


def gpu_preset() -> str:
    import torch

    name = torch.cuda.get_device_name().lower() if torch.cuda.is_available() else ""
    return "h200" if "h200" in name else "h100"


def bench_ms(fn) -> float:
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def paired_ms(a: Callable, b: Callable, rounds: int) -> tuple[float, float]:
    """``bench_ms`` of ``a`` and of ``b`` taken in turn, ``rounds`` times each, the order flipped every round (a b,
    b a, a b, ...): medians. A sustained tensor-core load slows the GPU as it runs (power and heat: an H200 timed a
    GPT-3 MLP step 402 us after a flush, 437 back to back, 472 in a graph of 20, ``bench/kernels/flush_probe.py``), so
    whichever side is timed later in a block is timed on a warmer GPU; taking them in turn gives both the same."""
    import statistics

    ta: list[float] = []
    tb: list[float] = []
    for r in range(rounds):
        for f, t in ((a, ta), (b, tb)) if r % 2 == 0 else ((b, tb), (a, ta)):
            t.append(bench_ms(f))
    return statistics.median(ta), statistics.median(tb)


def rotating(fns: list[Callable]) -> Callable:
    """One call = the next of ``fns`` (round robin)."""
    if len(fns) == 1:
        return fns[0]
    state = [0]

    def f():
        i = state[0]
        state[0] = i + 1
        return fns[i % len(fns)]()

    return f


def nbytes(inputs) -> int:
    import torch

    return sum(t.numel() * t.element_size() for t in inputs if isinstance(t, torch.Tensor))


def graphs_of(fn_of_set, sets, warmup: int = 2):
    """One CUDA graph per input set: ([replay], [captured outputs])."""
    from kitsune.runtime.program import capture_graph

    gs, outs = [], []
    for s in sets:
        g, out = capture_graph(lambda s=s: fn_of_set(s), warmup=warmup)
        gs.append(g)
        outs.append(out)
    return [g.replay for g in gs], outs, gs


def _json_safe(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else str(x)
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    return x


def versions() -> dict:
    import torch

    try:
        import triton

        tv = triton.__version__
    except Exception:  # noqa: BLE001
        tv = None
    dev = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu (Triton interpreter)"
    return {"device": dev, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "torch": torch.__version__, "triton": tv}


# ------------------------------------------------------------------ per-kernel times


def kernel_times(fn, kernels: list[str], iters: int = 5) -> dict[str, float]:
    """Mean device time (us) per call of each named kernel while ``fn`` runs (torch.profiler)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    tot: dict[str, float] = {}
    for ev in prof.events():
        if not str(getattr(ev, "device_type", "")).endswith("CUDA"):
            continue  # kernel records only (no CPU-side op of the same name)
        name = ev.name
        match = name if name in kernels else max((k for k in kernels if name.startswith(k + "_")), key=len,
                                                   default=None)
        if match is None:
            continue
        dt = getattr(ev, "device_time", None)
        if dt is None:
            dt = getattr(ev, "cuda_time", 0.0)
        tot[match] = tot.get(match, 0.0) + float(dt)
    return {k: v / iters for k, v in tot.items()}


def kernel_estimates(compiled) -> list[dict]:
    """Per kernel of a ``kitsune.compile`` result: name, the Triton function name and the cost model's estimate."""
    from kitsune.compile import _attr
    from kitsune.dialects import gpu_queue as gq

    mod = compiled.program.module
    fnames = {}
    for k in getattr(mod, "KERNELS", []):
        f = k["fn"]
        fnames[k["name"]] = getattr(f, "__name__", None) or getattr(getattr(f, "fn", None), "__name__", k["name"])
    out = []
    for p in [o for o in compiled._low.module.walk() if isinstance(o, gq.ProgramOp)]:
        for k in p.kernels():
            out.append({"kernel": k.kernel_name, "fn": fnames.get(k.kernel_name, k.kernel_name),
                        "grid": k.grid_size(), "est_us": _attr(k, "est_us")})
    return out


# ------------------------------------------------------------------ one workload (in-process)


def run_workload(spec: str, modes, args, emit, mark=None, baseline: dict | None = None) -> None:
    """Peers once, then each Kitsune mode; ``emit(record)`` once per mode (also on failure).

    ``mark`` gets ``{"_baseline": {...}}`` once the peers are measured and ``{"_start": mode}`` before each
    mode (a parent tells from them where a crash was). With ``baseline`` given the peers are not measured.
    """
    import torch

    import kitsune

    mark = mark or (lambda _m: None)
    dry = args.dry_run
    dev = "cpu" if dry else "cuda"
    dt = torch.float32 if dry else getattr(torch, args.dtype)
    scale = args.scale if args.scale is not None else (0.05 if dry else 1.0)
    base: dict[str, Any] = {"workload": None, "scale": scale, "dtype": str(dt).replace("torch.", ""), **versions(),
                            "eager_ms": None, "eager_graph_ms": None, "inductor_ms": None, "inductor_graph_ms": None}
    try:
        src = get_source(spec)
        base["workload"] = src.name
        t0 = time.perf_counter()
        model, inputs = src.build(scale, dt, dev, args.seed)
        log(f"{src.name}: built in {time.perf_counter() - t0:.1f} s")
    except Exception as e:  # noqa: BLE001
        base["workload"] = base["workload"] or spec
        for m in modes:
            emit({**base, "mode": m, "correct": False, "stage": "build", "error": first_line(e)})
        return
    preset = args.gpu or gpu_preset()
    base["gpu_preset"] = preset
    n_sets = 1
    if not dry and args.rotate > 1 and nbytes(inputs) < args.rotate_bytes:
        n_sets = args.rotate
    sets = [inputs] + [src.fresh(inputs, scale, dt, dev, args.seed + 100 + k) for k in range(1, n_sets)]
    base["input_sets"] = n_sets

    def check_set(k):
        return src.fresh(inputs, scale, dt, dev, args.seed + 1000 + k)

    inductor_replay = None  # (replay, what keeps its graphs alive) where Kitsune's modes are timed in turn with it
    with torch.no_grad():
        peers = [p for p in args.peers.split(",") if p] if not dry else []
        if baseline is not None:
            base.update(baseline)
        else:
            pb: dict[str, Any] = {}
            if "eager" in peers:
                try:
                    pb["eager_ms"] = bench_ms(rotating([lambda s=s: model(*s) for s in sets]))
                except Exception as e:  # noqa: BLE001
                    pb["eager_error"] = first_line(e)
            if "eager_graph" in peers:
                try:
                    replays, _, keep = graphs_of(lambda s: model(*s), sets)
                    pb["eager_graph_ms"] = bench_ms(rotating(replays))
                    del replays, keep
                except Exception as e:  # noqa: BLE001
                    pb["eager_graph_error"] = first_line(e)
            if "inductor" in peers or "inductor_graph" in peers:
                try:
                    t1 = time.perf_counter()
                    cm = torch.compile(model)
                    for s in sets:
                        cm(*s)
                    torch.cuda.synchronize()
                    pb["inductor_compile_s"] = round(time.perf_counter() - t1, 1)
                    if "inductor" in peers:
                        pb["inductor_ms"] = bench_ms(rotating([lambda s=s: cm(*s) for s in sets]))
                    if "inductor_graph" in peers:
                        replays, outs, keep = graphs_of(lambda s: cm(*s), sets, warmup=3)
                        pb["inductor_graph_ms"] = bench_ms(rotating(replays))
                        replays[0]()
                        torch.cuda.synchronize()
                        pb["inductor_rel_err"] = max(rel_errors(outs[0], model(*sets[0])))
                        if args.paired > 0:  # timed again in turn with each Kitsune mode (paired_ms)
                            inductor_replay = (rotating(replays), outs, keep)
                        del replays, outs, keep
                except Exception as e:  # noqa: BLE001
                    pb["inductor_error"] = first_line(e)
                    log(f"{src.name}: inductor failed: {first_line(e)}")
            log(f"{src.name}: peers " + ", ".join(f"{k} {v:.4f}" for k, v in pb.items()
                                                 if k.endswith("_ms") and v is not None))
            base.update(pb)
            mark({"_baseline": pb})

        for m in modes:
            mark({"_start": m})
            rec: dict[str, Any] = {**base, "mode": m, "correct": False, "kitsune_ms": None}
            stage = "compile"
            fn = None
            try:
                t1 = time.perf_counter()
                fn = kitsune.compile(model, inputs, mode=m, gpu=preset, device=dev, debug=args.debug,
                                     cuda_graph=False)
                rec["compile_s"] = round(time.perf_counter() - t1, 2)
                if m == "dataflow":
                    rec["placement"] = fn.placement  # 'auto' (cost model) or the tuned one (kitsune-tune --placement)
                if getattr(fn.program, "capacity_fallback", False):
                    rec["capacity_fallback"] = True
                st = getattr(fn.program, "state", None)
                if isinstance(st, dict) and "pdl" in st:
                    rec["pdl"] = int(st["pdl"])  # programmatic dependent launch (kitsune-tune --launch)
                floor = fn._low.floor
                if floor is not None:
                    rec["floor_ms"] = floor.us / 1e3
                    rec["floor_bytes"] = int(floor.bytes)
                    rec["floor_bound"] = floor.bound
                stage = "check"
                errs = []
                x = check_set(0)
                got = [t.clone() for t in flatten(fn(*x))]
                errs += rel_errors(got, model(*x))
                tol = TOL
                if not dry:
                    tol, fp32 = tolerance(model, x, got, errs)
                    if fp32 is not None:
                        rec["fp32_ref"] = fp32
                        if tol > TOL:
                            rec["tolerance"] = tol
                        log(f"{src.name} {m}: rel err vs fp32: kitsune {fp32['kitsune']:.3e}, bf16 eager "
                            f"{fp32['eager']:.3e}; tolerance vs bf16 eager {tol:.3e}")
                ok = all(v < tol for v in errs)
                if ok and not dry:
                    stage = "time"
                    prog = fn.program
                    envs = [{**prog._tensors, **prog._prepare(s)} for s in sets]
                    replays, outs, keep = graphs_of(prog.launch, envs, warmup=1)
                    t_ms = bench_ms(rotating(replays))
                    if inductor_replay is not None:
                        rec["block_kitsune_ms"] = t_ms  # timed after the peers, as a block
                        rec["block_inductor_graph_ms"] = rec["inductor_graph_ms"]
                        t_ms, rec["inductor_graph_ms"] = paired_ms(rotating(replays), inductor_replay[0], args.paired)
                        rec["paired_rounds"] = args.paired
                    stage = "recheck"
                    # the CUDA-graph replay itself is right (outputs of set 0), and a fresh set after timing
                    replays[0]()
                    torch.cuda.synchronize()
                    errs += rel_errors([t.clone() for t in outs[0]], model(*sets[0]))
                    if args.recheck:
                        x = check_set(1)
                        errs += rel_errors([t.clone() for t in flatten(fn(*x))], model(*x))
                    ok = all(v < tol for v in errs)
                    if ok:
                        rec["kitsune_ms"] = t_ms
                        stage = "kernels"
                        try:
                            ests = kernel_estimates(fn)
                            meas = kernel_times(lambda: prog.launch(envs[0]), [k["fn"] for k in ests])
                            shared = {}  # kernels of the same code share one function: its time is theirs together
                            for k in ests:
                                shared[k["fn"]] = shared.get(k["fn"], 0) + 1
                            for k in ests:
                                us = meas.get(k["fn"])  # (not ``m``: that is the mode of this loop)
                                k["measured_us"] = None if us is None else us / shared[k["fn"]]
                                if shared[k["fn"]] > 1:
                                    k["shared_fn"] = shared[k["fn"]]  # measured_us: the mean over those kernels
                            rec["kernels"] = ests
                            rec["est_us"] = sum(k["est_us"] or 0.0 for k in ests)
                        except Exception as e:  # noqa: BLE001
                            rec["kernels_error"] = first_line(e)
                    del replays, outs, keep
                rec["rel_err"] = float("nan") if any(math.isnan(v) for v in errs) else max(errs)
                rec["correct"] = bool(ok)
                if not ok:
                    rec["error"] = f"rel err {rec['rel_err']:.3e} >= {tol:.3g}: wrong result, not timed"
                if rec["kitsune_ms"]:
                    if rec.get("inductor_graph_ms"):
                        rec["speedup"] = rec["inductor_graph_ms"] / rec["kitsune_ms"]
                    if rec.get("floor_ms"):
                        rec["fraction_of_floor"] = rec["floor_ms"] / rec["kitsune_ms"]
                    if rec.get("floor_bytes"):  # the fewest bytes over the time, against HBM_BW
                        rec["hbm_fraction"] = rec["floor_bytes"] / (rec["kitsune_ms"] * 1e-3) / HBM_BW
                if rec.get("floor_ms") and rec.get("inductor_graph_ms"):
                    rec["inductor_fraction_of_floor"] = rec["floor_ms"] / rec["inductor_graph_ms"]
                    if rec.get("floor_bytes"):
                        rec["inductor_hbm_fraction"] = rec["floor_bytes"] / (rec["inductor_graph_ms"] * 1e-3) / HBM_BW
                if args.report:
                    rec["report"] = fn.report()
                stage = "backend"
                if args.backend:
                    rec.update(_backend(model, inputs, sets, m, preset, check_set, dry))
                stage = None
                log(f"{src.name} {m}: rel err {rec['rel_err']:.2e}, kitsune "
                    f"{'-' if rec['kitsune_ms'] is None else format(rec['kitsune_ms'], '.4f')} ms")
            except Exception as e:  # noqa: BLE001
                rec["error"] = first_line(e)
                log(f"{src.name} {m}: failed at {stage}: {first_line(e)}")
                if args.traceback:
                    traceback.print_exc()
            rec["stage"] = stage
            fn = None
            if not dry:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            if args.ncu and not dry and rec.get("correct"):
                rec.update(ncu_bytes(spec, m, args, "kitsune"))
                if "inductor_dram_bytes" not in base and ("inductor_graph" in peers or baseline is not None):
                    ib = ncu_bytes(spec, m, args, "inductor")
                    base.update(ib)
                    rec.update(ib)
                    mark({"_baseline": {k: v for k, v in base.items() if k.startswith("inductor_dram")}})
            emit(rec)


def _backend(model, inputs, sets, mode, preset, check_set, dry) -> dict:
    """``torch.compile(model, backend="kitsune", options={"mode": mode})``: correctness, then time."""
    import torch
    import torch._dynamo

    import kitsune.backend as kb

    out: dict[str, Any] = {}
    torch._dynamo.reset()
    n0 = len(kb.records())
    try:
        c = torch.compile(model, backend="kitsune", options={"mode": mode, "gpu": preset})
        x = check_set(2)
        errs = rel_errors([t.clone() for t in flatten(c(*x))], model(*x))
        recs = kb.records()[n0:]
        out["backend_graphs"] = [r.status for r in recs]
        out["backend_rel_err"] = max(errs)
        out["backend_correct"] = all(v < TOL for v in errs)
        if out["backend_correct"] and not dry:
            out["backend_ms"] = bench_ms(rotating([lambda s=s: c(*s) for s in sets]))
    except Exception as e:  # noqa: BLE001
        out["backend_error"] = first_line(e)
    torch._dynamo.reset()
    return out


# ------------------------------------------------------------------ ncu


def ncu_bytes(spec: str, mode: str, args, target: str) -> dict:
    """DRAM bytes (read + write) of one call of ``target`` ('kitsune' with ``mode``, or 'inductor': Inductor in
    a CUDA graph), from Nsight Compute in a child process."""
    key = "dram_bytes" if target == "kitsune" else "inductor_dram_bytes"
    ncu = shutil.which("ncu") or next((p for p in ("/usr/local/cuda/bin/ncu",) if os.path.exists(p)), None)
    if ncu is None:
        return {key + "_error": "ncu not found"}
    cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--metrics", NCU_METRICS, "--csv",
           "--print-units", "base", sys.executable, "-m", "kitsune.bench", "--_ncu", spec, "--_ncu-target",
           f"{target}:{mode}", "--seed", str(args.seed), "--dtype", args.dtype]
    if args.scale is not None:
        cmd += ["--scale", repr(args.scale)]
    if args.gpu:
        cmd += ["--gpu", args.gpu]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.ncu_timeout)
    except subprocess.TimeoutExpired:
        return {key + "_error": f"ncu timed out after {args.ncu_timeout} s"}
    rd, wr, n = parse_ncu_csv(p.stdout)
    if n == 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or [""]
        return {key + "_error": f"ncu: no kernels measured (exit {p.returncode}) {tail[0][:200]}"}
    return {key: rd + wr, key + "_read": rd, key + "_write": wr, key.replace("bytes", "kernels"): n}


def parse_ncu_csv(text: str) -> tuple[float, float, int]:
    """(read bytes, write bytes, kernels) summed over an ``ncu --csv --print-units base`` listing."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    if not lines:
        return 0.0, 0.0, 0
    rd = wr = 0.0
    kernels = set()
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        name, val = row.get("Metric Name"), row.get("Metric Value")
        if name is None or val is None:
            continue
        try:
            v = float(val.replace(",", ""))
        except ValueError:
            continue
        unit = (row.get("Metric Unit") or "byte").lower()
        mult = {"byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9}.get(unit, 1)
        kernels.add(row.get("ID"))
        if name == "dram__bytes_read.sum":
            rd += v * mult
        elif name == "dram__bytes_write.sum":
            wr += v * mult
    return rd, wr, len(kernels)


def ncu_child(spec: str, target: str, args) -> int:
    """Under ncu: warm the target up, then one call between cudaProfilerStart / Stop."""
    import torch

    import kitsune
    from kitsune.runtime.program import capture_graph

    what, _, mode = target.partition(":")
    src = get_source(spec)
    scale = args.scale if args.scale is not None else 1.0
    model, inputs = src.build(scale, getattr(torch, args.dtype), "cuda", args.seed)
    with torch.no_grad():
        if what == "kitsune":
            fn = kitsune.compile(model, inputs, mode=mode, gpu=args.gpu or gpu_preset())
            prog = fn.program
            env = {**prog._tensors, **prog._prepare(inputs)}
            g, _ = capture_graph(lambda: prog.module.launch(prog.state, env), warmup=2)
        else:
            cm = torch.compile(model)
            cm(*inputs)
            g, _ = capture_graph(lambda: cm(*inputs), warmup=3)
        g.replay()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        g.replay()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
    return 0


# ------------------------------------------------------------------ isolation: one child process a workload


def _child_once(spec: str, modes, args, baseline: dict | None):
    with tempfile.TemporaryDirectory(prefix="kitsune_bench_") as tmp:
        out = os.path.join(tmp, "records.jsonl")
        cmd = [sys.executable, "-m", "kitsune.bench", "--_child", spec, "--_out", out, "--modes", ",".join(modes),
               "--seed", str(args.seed), "--peers", args.peers, "--rotate", str(args.rotate),
               "--rotate-bytes", str(args.rotate_bytes), "--ncu-timeout", str(args.ncu_timeout)]
        if args.scale is not None:
            cmd += ["--scale", repr(args.scale)]
        for flag in ("debug", "report", "traceback", "dry_run", "backend", "ncu", "train"):
            if getattr(args, flag):
                cmd.append("--" + flag.replace("_", "-"))
        if not args.recheck:
            cmd.append("--no-recheck")
        if args.gpu:
            cmd += ["--gpu", args.gpu]
        if args.dtype_explicit:
            cmd += ["--dtype", args.dtype]
        if args.train:
            cmd += ["--train-check", args.train_check]
        if baseline is not None:
            cmd += ["--_baseline", json.dumps(baseline)]
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"
        if args.dry_run:
            env["TRITON_INTERPRET"] = "1"
        else:
            env.pop("TRITON_INTERPRET", None)
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
        except KeyboardInterrupt:
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
            last = next((t for t in reversed(tail) if t and not t.startswith("[kitsune.bench]")), "")
            why = f"subprocess exit {p.returncode}" + (f": {last[:300]}" if last else "")
        return lines, why


def run_isolated(spec: str, modes, args) -> list[dict]:
    """The modes of one workload in a child process; after a hang or crash a new child runs the modes left
    (reusing the peers measured)."""
    recs: list[dict] = []
    left = list(modes)
    baseline = None
    base_fields = {"workload": spec, **versions()}
    while left:
        lines, why = _child_once(spec, left, args, baseline)
        started = None
        for ln in lines:
            if "_baseline" in ln:
                baseline = {**(baseline or {}), **ln["_baseline"]}
            elif "_start" in ln:
                started = ln["_start"]
            else:
                recs.append(ln)
                base_fields["workload"] = ln.get("workload", spec)
                if ln["mode"] in left:
                    left.remove(ln["mode"])
                started = None
        if not left:
            break
        fail = {**base_fields, "correct": False, "kitsune_ms": None, "stage": "subprocess", "error": why or "no result",
                **(baseline or {})}
        if started is not None and started in left and not args._interrupted:
            recs.append({**fail, "mode": started})
            left.remove(started)
            continue
        recs += [{**fail, "mode": m} for m in left]
        break
    order = {m: i for i, m in enumerate(modes)}
    return sorted(recs, key=lambda r: order.get(r["mode"], 99))


# ------------------------------------------------------------------ output


def _f(v, fmt: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    try:
        return format(v, fmt)
    except (TypeError, ValueError):
        return str(v)


def table(records: list[dict]) -> str:
    cols = ["workload", "mode", "correct", "rel err", "kitsune", "eager", "eager+g", "inductor", "ind+g",
            "ind+g/ks", "floor", "of floor"]
    rows = [[r["workload"], r["mode"] + (" train" if r.get("train") else ""), "yes" if r.get("correct") else "NO", _f(r.get("rel_err"), ".1e"),
             _f(r.get("kitsune_ms"), ".4f"), _f(r.get("eager_ms"), ".4f"), _f(r.get("eager_graph_ms"), ".4f"),
             _f(r.get("inductor_ms"), ".4f"), _f(r.get("inductor_graph_ms"), ".4f"), _f(r.get("speedup"), ".2f"),
             _f(r.get("floor_ms"), ".4f"),
             "-" if r.get("fraction_of_floor") is None else f"{100 * r['fraction_of_floor']:.0f}%"]
            for r in records]
    wd = [max(len(c), *(len(x[i]) for x in rows)) if rows else len(c) for i, c in enumerate(cols)]
    out = ["  ".join(c.ljust(w) for c, w in zip(cols, wd))]
    out += ["  ".join(x.ljust(w) for x, w in zip(row, wd)) for row in rows]
    for r in records:
        if r.get("block_kitsune_ms") is not None:
            out.append(f"  {r['workload']} {r['mode']}: timed as blocks (Inductor + graph first) kitsune "
                       f"{_f(r['block_kitsune_ms'], '.4f')}, inductor+graph {_f(r.get('block_inductor_graph_ms'), '.4f')}"
                       f"; in turn ({r.get('paired_rounds')} rounds) {_f(r.get('kitsune_ms'), '.4f')}, "
                       f"{_f(r.get('inductor_graph_ms'), '.4f')}")
        if r.get("kernels"):
            out.append(f"  {r['workload']} {r['mode']}: per kernel est_us / measured_us: " + ", ".join(
                f"{k['kernel']} {_f(k.get('est_us'), '.1f')}/{_f(k.get('measured_us'), '.1f')}" for k in r["kernels"]))
        if r.get("dram_bytes") is not None or r.get("inductor_dram_bytes") is not None:
            out.append(f"  {r['workload']} {r['mode']}: DRAM MB kitsune {_f((r.get('dram_bytes') or 0) / 1e6, '.1f')}"
                       f", inductor {_f((r.get('inductor_dram_bytes') or 0) / 1e6, '.1f')}")
        if r.get("train") and r.get("backend_graphs") is not None:
            out.append(f"  {r['workload']} {r['mode']} train: graphs {r['backend_graphs']}, backward compiled by "
                       f"Kitsune: {'yes' if r.get('kitsune_backward') else 'no'}, worst gradient "
                       f"{r.get('worst_param') or '-'}")
        elif r.get("backend_graphs") is not None:
            out.append(f"  {r['workload']} {r['mode']}: torch.compile(backend='kitsune') graphs "
                       f"{r['backend_graphs']} rel err {_f(r.get('backend_rel_err'), '.1e')} "
                       f"{_f(r.get('backend_ms'), '.4f')} ms")
    seen = set()
    for r in records:
        if r.get("error"):
            out.append(f"! {r['workload']} {r['mode']} [{r.get('stage')}]: {r['error']}")
        for k in [k for k in r if k.endswith("_error") and r[k]]:
            if (r["workload"], k) not in seen:
                seen.add((r["workload"], k))
                out.append(f"! {r['workload']} {k}: {r[k]}")
    out.append("times: median ms (triton.testing.do_bench; with --paired, the default, Kitsune and Inductor + CUDA "
               "graph timed in turn, the medians of the rounds); kitsune = its launch plan in a CUDA graph; "
               f"ind+g/ks > 1: Kitsune faster; correct: rel err < {TOL:g} vs torch eager (or within 2.5x bf16 eager's own error vs fp32: see tolerance)")
    return "\n".join(out)


def append_json(path: str, records: list[dict]) -> None:
    """Append ``records`` to the JSON list in ``path`` (created if missing)."""
    old: list = []
    if os.path.exists(path) and os.path.getsize(path):
        try:
            with open(path) as fh:
                old = json.load(fh)
            if not isinstance(old, list):
                old = [old]
        except json.JSONDecodeError:
            os.replace(path, path + ".corrupt")
            old = []
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(_json_safe(old + records), fh, indent=1)
    os.replace(tmp, path)


def plot(records: list[dict], path: str) -> str:
    """A PNG of peer time / Kitsune time per workload and mode (> 1: Kitsune faster; log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    latest: dict[tuple, dict] = {}
    for r in records:
        latest[(r["workload"], r["mode"])] = r
    keys = sorted(latest)
    peers = [("inductor_graph_ms", "Inductor + CUDA graph"), ("eager_graph_ms", "eager + CUDA graph"),
             ("inductor_ms", "Inductor"), ("eager_ms", "eager")]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(keys) + 2), 4.5))
    w = 0.8 / len(peers)
    for j, (k, lab) in enumerate(peers):
        xs, ys = [], []
        for i, key in enumerate(keys):
            r = latest[key]
            if r.get("kitsune_ms") and r.get(k):
                xs.append(i + (j - (len(peers) - 1) / 2) * w)
                ys.append(r[k] / r["kitsune_ms"])
        ax.bar(xs, ys, width=w, label=lab)
    for i, key in enumerate(keys):
        r = latest[key]
        if not r.get("correct"):
            ax.text(i, 1, "wrong /\nfailed", ha="center", va="center", fontsize=7, color="red")
        elif r.get("fraction_of_floor"):
            ax.text(i, 1.05, f"{100 * r['fraction_of_floor']:.0f}%\nof floor", ha="center", va="bottom", fontsize=6)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([f"{w_}\n{m}" for w_, m in keys], rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("peer ms / Kitsune ms  (> 1: Kitsune faster)")
    dev = next((r.get("device") for r in records if r.get("device")), "")
    date = max((r.get("date") or "" for r in records), default="")
    ax.set_title(f"Kitsune vs peers, {dev}, {date[:10]}", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def tolerance(model, x, got, errs) -> tuple[float, dict | None]:
    """The relative error Kitsune's outputs ``got`` (on inputs ``x``, ``errs`` their errors against bf16 eager) may
    have against bf16 eager, and the fp32 reference's figures where they were needed. A deep model (llama1b's 16
    layers) drifts from bf16 eager by more than TOL on rounding alone: against an fp32 reference Kitsune may be
    1.5x as far as bf16 eager is, and then its distance to bf16 eager may be up to the sum, 2.5x."""
    if all(v < TOL for v in errs) or any(math.isnan(v) for v in errs):
        return TOL, None
    e_k, e_e = fp32_errors(model, x, got)
    tol = max(TOL, 2.5 * e_e) if e_k < max(TOL, 1.5 * e_e) else TOL
    return tol, {"kitsune": e_k, "eager": e_e}


# ------------------------------------------------------------------ sanitize


def sanitize(spec: str, args) -> int:
    """Compile one workload's program (first of --modes), run it ``--iters`` times, check (no timing, no graph)."""
    import torch

    import kitsune

    mode = args.modes.split(",")[0] if args.modes else "dataflow"
    src = get_source(spec)
    scale = args.scale if args.scale is not None else 1.0
    dt = getattr(torch, args.dtype)
    model, inputs = src.build(scale, dt, "cuda", args.seed)
    with torch.no_grad():
        fn = kitsune.compile(model, inputs, mode=mode, gpu=args.gpu or gpu_preset(), debug=args.debug)
        x = src.fresh(inputs, scale, dt, "cuda", args.seed + 1000)
        out = None
        for _ in range(max(1, args.iters)):
            out = [t.clone() for t in flatten(fn(*x))]
        torch.cuda.synchronize()
        # the reference with PyTorch's math attention: cuDNN's flash SDPA kernel (torch 2.11, H100) reads out of
        # bounds under memcheck and faults under racecheck on llama1b_decode_b1, which would hide Kitsune's results
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(SDPBackend.MATH):
            errs = rel_errors(out, model(*x))
            tol, _ = tolerance(model, x, out, errs)
    ok = all(e < tol for e in errs)
    print(f"sanitize {src.name} {mode} scale={scale} iters={args.iters}: rel errs "
          f"{', '.join(f'{e:.2e}' for e in errs)} (tolerance {tol:.2e}) -> {'ok' if ok else 'WRONG'}", flush=True)
    return 0 if ok else 1


# ------------------------------------------------------------------ timeline


def timeline(spec: str, args) -> int:
    """``--timeline W``: compile W with profile=True, call it, write report.txt / graph.png / timeline.png
    under ``--out`` (per mode), and the profile overhead (time with and without the instrumentation)."""
    import torch

    import kitsune

    dry = args.dry_run
    dev = "cpu" if dry else "cuda"
    scale = args.scale if args.scale is not None else (0.05 if dry else 1.0)
    dt = torch.float32 if dry else getattr(torch, args.dtype)
    src = get_source(spec)
    model, inputs = src.build(scale, dt, dev, args.seed)
    summary = []
    with torch.no_grad():
        for m in [x for x in args.modes.split(",") if x]:
            d = os.path.join(args.out, f"{src.name}_{m}")
            f = kitsune.compile(model, inputs, mode=m, gpu=args.gpu or gpu_preset(), device=dev, profile=True)
            plain = kitsune.compile(model, inputs, mode=m, gpu=args.gpu or gpu_preset(), device=dev)
            y, y0 = flatten(f(*inputs)), flatten(plain(*inputs))
            same = all(torch.equal(a, b) for a, b in zip(y, y0))
            line = {"workload": src.name, "mode": m, "profile_equal_results": same, **versions()}
            if not dry:
                for name, c in (("plain", plain), ("profile", f)):
                    prog = c.program
                    env = {**prog._tensors, **prog._prepare(inputs)}
                    line[f"{name}_ms"] = bench_ms(lambda prog=prog, env=env: prog.module.launch(prog.state, env))
                line["profile_overhead"] = line["profile_ms"] / line["plain_ms"] - 1
                f(*inputs)  # a last call: its timeline is the one drawn
                torch.cuda.synchronize()
            files = f.report(d)
            line["files"] = sorted(os.listdir(d))
            summary.append(line)
            print(json.dumps(_json_safe(line)), flush=True)
            del files
    if args.json:
        append_json(args.json, [{**s, "kind": "timeline"} for s in summary])
    return 0 if all(s["profile_equal_results"] for s in summary) else 1


# ------------------------------------------------------------------ main


def _runner(args) -> Callable:
    """The per-workload run: inference (run_workload) or a training step (kitsune.bench.train)."""
    if args.train:
        from kitsune.bench.train import run_training

        return run_training
    return run_workload


def main(argv: list[str] | None = None) -> int:
    from kitsune.bench import __doc__ as doc

    ap = argparse.ArgumentParser(prog="python -m kitsune.bench", description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="all", help="comma list of suite names, path.py[:factory], or 'all'")
    ap.add_argument("--modes", default=",".join(MODES), help="Kitsune modes: dataflow,bulk-sync (default both)")
    ap.add_argument("--peers", default=",".join(PEERS), help=f"peers to time (default {','.join(PEERS)}; '' none)")
    ap.add_argument("--no-inductor", action="store_true", help="peers eager,eager_graph only")
    ap.add_argument("--backend", action="store_true", help="also time torch.compile(model, backend='kitsune')")
    ap.add_argument("--ncu", action="store_true", help="DRAM bytes per call (Kitsune, Inductor + graph) from ncu")
    ap.add_argument("--ncu-timeout", type=float, default=240.0)
    ap.add_argument("--json", help="append the records to this JSON list")
    ap.add_argument("--plot", help="write a PNG of the ratios (of --json's records when given, else this run's)")
    ap.add_argument("--scale", type=float, default=None, help="workload scale (default 1.0; 0.05 with --dry-run)")
    ap.add_argument("--dtype", default=None, help="GPU dtype (default bfloat16); with --dry-run --train: the CPU "
                                                  "run's dtype (default float32)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gpu", help="Kitsune GPU preset (default: h200 on an H200, else h100)")
    ap.add_argument("--rotate", type=int, default=4, help="input sets to rotate over when they fit in L2 (default 4)")
    ap.add_argument("--rotate-bytes", type=int, default=16 << 20, help="rotate when one input set is below this")
    ap.add_argument("--paired", type=int, default=4, help="time each Kitsune mode and Inductor + CUDA graph in turn, "
                    "this many rounds each, the order flipped every round; the records' kitsune_ms and "
                    "inductor_graph_ms are the medians, the first timings block_*_ms (default 4; 0: blocks only)")
    ap.add_argument("--debug", action="store_true", help="kitsune.compile(debug=True): watchdog on")
    ap.add_argument("--report", action="store_true", help="keep Kitsune's .report() in the JSON")
    ap.add_argument("--no-recheck", dest="recheck", action="store_false", help="skip the check after timing")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a workload's child process (default 300)")
    ap.add_argument("--no-isolate", action="store_true", help="run every workload in this process")
    ap.add_argument("--traceback", action="store_true")
    ap.add_argument("--dry-run", action="store_true", help="CPU: Triton interpreter, small scale, fp32, no timing")
    ap.add_argument("--train", action="store_true", help="time a training step (forward, loss, backward) through "
                                                          "torch.compile(backend='kitsune'); kitsune/bench/train.py")
    ap.add_argument("--train-check", choices=("eager", "fp32"), default="eager",
                    help="--train's gradient gate: against eager in the same dtype (< 2e-2), or against the fp32 "
                         "model within max(2e-2, 2 x eager's own error)")
    ap.add_argument("--sanitize", metavar="W", help="run W's program once, no timing (for compute-sanitizer)")
    ap.add_argument("--iters", type=int, default=1, help="--sanitize: runs of the program")
    ap.add_argument("--timeline", metavar="W", help="profile mode: W's report pictures (SM timeline) under --out, "
                                                     "and the profile overhead")
    ap.add_argument("--out", default=os.environ.get("OUT", "bench/results"), help="--timeline's directory")
    ap.add_argument("--_child", help=argparse.SUPPRESS)
    ap.add_argument("--_out", help=argparse.SUPPRESS)
    ap.add_argument("--_baseline", help=argparse.SUPPRESS)
    ap.add_argument("--_ncu", help=argparse.SUPPRESS)
    ap.add_argument("--_ncu-target", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.dtype_explicit = args.dtype is not None
    args.dtype = args.dtype or "bfloat16"
    if args.no_inductor:
        args.peers = ",".join(p for p in args.peers.split(",") if not p.startswith("inductor"))
    args._interrupted = False

    if args.dry_run:
        os.environ.setdefault("TRITON_INTERPRET", "1")
    else:
        os.environ.pop("TRITON_INTERPRET", None)  # compiled kernels, never the interpreter, on the GPU
    import torch

    if not args.dry_run and not torch.cuda.is_available():
        print("kitsune.bench: no CUDA device (use --dry-run for the CPU path)", file=sys.stderr)
        return 2
    if args._ncu:
        return ncu_child(args._ncu, args._ncu_target, args)
    if args.sanitize:
        return sanitize(args.sanitize, args)
    if args.timeline:
        return timeline(args.timeline, args)
    modes = [m for m in args.modes.split(",") if m]
    bad = [m for m in modes if m not in MODES]
    if bad:
        ap.error(f"unknown modes {bad}; valid: {', '.join(MODES)}")
    bad = [p for p in args.peers.split(",") if p and p not in PEERS]
    if bad:
        ap.error(f"unknown peers {bad}; valid: {', '.join(PEERS)}")

    if args._child:
        def emit(rec):
            with open(args._out, "a") as fh:
                fh.write(json.dumps(_json_safe(rec)) + "\n")

        run = _runner(args)
        run(args._child, modes, args, emit, mark=emit, baseline=json.loads(args._baseline) if args._baseline else None)
        return 0

    from kitsune.models import WORKLOADS

    names = list(WORKLOADS) if args.workloads == "all" else [n for n in args.workloads.split(",") if n]
    unknown = [n for n in names if n not in WORKLOADS and ".py" not in n]
    if unknown:
        ap.error(f"unknown workloads {unknown}; valid: {', '.join(WORKLOADS)}, or path.py[:factory]")
    log(f"{versions()['device']}, torch {torch.__version__}; workloads {names}, modes {modes}, peers {args.peers}")

    def on_term(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)  # `timeout N python -m kitsune.bench` still writes what is done
    records: list[dict] = []
    t0 = time.perf_counter()
    for n in names:
        if args._interrupted:
            break
        if args.no_isolate:
            got: list[dict] = []
            try:
                _runner(args)(n, modes, args, got.append)
            except KeyboardInterrupt:
                args._interrupted = True
            except Exception as e:  # noqa: BLE001
                done = {r["mode"] for r in got}
                got += [{"workload": n, "mode": m, "correct": False, "kitsune_ms": None, "stage": "run",
                         "error": first_line(e), **versions()} for m in modes if m not in done]
        else:
            got = run_isolated(n, modes, args)
        records += got
        if args.json:  # several calls build one result set; what is done is kept if the run is cut off
            append_json(args.json, got)
    log(f"done in {time.perf_counter() - t0:.0f} s")
    print(table(records), flush=True)
    if args.plot:
        allrec = records
        if args.json and os.path.exists(args.json):
            with open(args.json) as fh:
                allrec = [r for r in json.load(fh) if r.get("kind") != "timeline"]
        plot(allrec, args.plot)
    return 0 if records and all(r.get("correct") for r in records) else 1
