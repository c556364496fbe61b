"""kitsune-tune: time each templated task's candidate configs on the GPU, keep the fastest correct one.

    kitsune-tune --workload mlp_gpt3_T256 [--workload ...] [--max-candidates 12] [--db PATH] [--only GLUON=1,2]
    kitsune-tune path/model.py[:factory]
    kitsune-tune --train --workload nerf_65k   (the forward and backward graphs of a training step)
    kitsune-tune --placement --workload all    (each workload's dataflow placement, measured)
    kitsune-tune --launch --workload all       (each workload's programmatic dependent launch, per mode, measured)
    python -m kitsune.tools.tune --workload all --json OUT

For every task that ``kitsune-choose-schedules`` gives a template with a search space (gemm, gemv, attention, chain), the
task is lowered on its own (``kitsune.schedule.isolate``) with the heuristic default and with the
candidates the cost model ranks best; each runs on random inputs, its result is checked against the
default's (which is checked against the reference interpreter when the shapes are small enough), and it is
timed as CUDA-graph replays. The fastest correct config goes to the tuning database
(``kitsune.schedule.db``: the user's cache, or ``--db``), keyed by template, problem and GPU; a second
task with the same problem is not timed again. A progress bar shows the candidates left.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

from kitsune.gpu import get_gpu


def _progress(i: int, n: int, label: str, t0: float) -> None:
    if not sys.stderr.isatty() and i not in (0, n):
        return
    w = 30
    done = int(w * i / max(n, 1))
    eta = (time.time() - t0) / max(i, 1) * (n - i)
    sys.stderr.write(f"\r[{'#' * done}{'.' * (w - done)}] {i}/{n} {label[:40]:<40} eta {eta:5.0f} s")
    if i == n:
        sys.stderr.write("\n")
    sys.stderr.flush()


def scheduled_tasks(graph_module, gpu: str):
    """(task, Choice) of every task of the graph module as ``kitsune-pipeline`` forms them (its passes before
    kitsune-choose-schedules; configs: heuristic defaults)."""
    from kitsune.context import make_context
    from kitsune.dialects import dataflow as df
    from kitsune.passes.pipeline import KitsunePipelinePass
    from kitsune.schedule.select import choose
    from xdsl.dialects.builtin import StringAttr

    m = graph_module.clone()
    ctx = make_context()
    for p in KitsunePipelinePass(mode="bulk-sync", gpu=gpu).task_passes():
        p.apply(ctx, m)
    out = []
    for t in [o for o in m.walk() if isinstance(o, df.TaskOp)]:
        out.append((t, choose(t, gpu, use_db=False)))
    for t, c in out:  # (what isolate.task_module reads of a task's producers and readers: their templates)
        t.attributes["template"] = StringAttr(c.template)
    from kitsune.passes.choose_schedules import tile_channels_last_writers

    for g in [o for o in m.walk() if isinstance(o, df.GraphOp)]:  # (and an elementwise writer's tile across the
        tile_channels_last_writers(g)  # channels, which stores a convolution's input channels-last)
    # a convolution over an input its program stores channels-last is its own problem (``Problem.layout``), known
    # once every task has its template
    from kitsune.schedule.select import with_input_layout

    return [(t, with_input_layout(t, c)) for t, c in out]


def parse_only(text: str | None) -> dict[str, set[int]]:
    """``--only``'s filter: ``FIELD=V[,V..][;FIELD=..]`` (config fields, integer values)."""
    out: dict[str, set[int]] = {}
    for part in (text or "").split(";"):
        if not part.strip():
            continue
        name, _, vals = part.partition("=")
        out[name.strip()] = {int(v) for v in vals.split(",") if v.strip()}
    return out


def only_configs(space: list, only: dict[str, set[int]] | None) -> list:
    """The configs of ``space`` whose fields take ``only``'s values (``parse_only``; all where it is empty)."""
    return [c for c in space if all(int(getattr(c, f, 0)) in v for f, v in (only or {}).items())]


def tune_task(task, choice, gpu: str, device, max_candidates: int = 12, log=None,
              only: dict[str, set[int]] | None = None, db_path=None) -> dict | None:
    """Time the default, the database's current winner (in ``db_path`` first, where given: the file the run writes)
    and the best-ranked candidates of one task (``only``: candidates whose config fields take these values,
    ``parse_only``); returns the record of the winner."""
    import torch

    from kitsune.schedule import db, isolate
    from kitsune.schedule.configs import CONFIGS
    from kitsune.dialects.regions import tensor_shape
    from kitsune.schedule.roles import roles_of
    from kitsune.schedule.select import (attention_tile, chain_tile, conv_tile, depthwise_tile, gemm_tile,
                                         tile_query_dim)

    p = choice.problem
    g = get_gpu(gpu)
    space = only_configs(CONFIGS[p.template].space(p), only)
    ranked = sorted(space, key=lambda c: c.estimate_s(p, g))
    # diverse candidates: the default, the incumbent (a winner of an earlier run stays in the race), then the
    # best-ranked of each tile shape (the cost model's ranking of splits and shapes is what tuning corrects),
    # then the rest by rank
    cands = [choice.config]
    # (a run writing its own file: the winner it holds, not the packaged one it would replace; on the H100 a
    # T256 fc2 entry of 67.1 us gave way to a 72.1 us candidate when only the packaged 74.3 us one raced it)
    incumbent = db.lookup(p, gpu, Path(db_path) if db_path else None)
    if incumbent is not None and incumbent not in cands:
        cands.append(incumbent)
    seen_shapes = set()
    for c in ranked:
        shape = tuple(v for k, v in c.as_dict().items() if k not in ("SPLIT", "GROUP_M"))
        if shape not in seen_shapes and c not in cands:
            seen_shapes.add(shape)
            cands.append(c)
    cands += [c for c in ranked if c not in cands]
    cands = cands[:max_candidates]
    base = isolate.task_module(task)
    r = roles_of(choice.anchor) if p.template not in ("attention", "chain") else None
    inputs, ref = isolate.reference_inputs(base, device, gpu)  # (the generic evaluator's result: finite)
    results = []
    t0 = time.time()
    for i, cfg in enumerate(cands):
        _progress(i, len(cands), f"{task.task_name} {p.template}", t0)
        rec = dict(config=cfg.as_dict())
        try:
            if p.template == "attention":
                tile = attention_tile(tensor_shape(task.outs[0].type), p.M, p.N, cfg, tile_query_dim(choice.tile))
            elif p.template == "chain":
                tile = chain_tile(tensor_shape(task.outs[0].type), cfg)
            elif p.template == "conv":
                tile = conv_tile(r, cfg)
            elif p.template == "depthwise":
                tile = depthwise_tile(tensor_shape(task.outs[0].type), cfg)
            else:
                tile = gemm_tile(r, p.template, cfg)
            m = isolate.lower(isolate.with_config(base, p.template, cfg, tile), gpu)
            prog, call = isolate.load(m, inputs, device)  # (a conv input as its program stores it)
            out = prog(*call)[0].float()
            torch.cuda.synchronize()
            rec["err"] = isolate.rel_err(out, ref)
            if not bool(torch.isfinite(out).all()) or not rec["err"] <= 2e-2:
                rec["error"] = f"wrong result (rel. err {rec['err']:.2e} against the generic evaluator)"
            else:
                rec["ms"] = isolate.measure(prog, call)
        except Exception as e:  # noqa: BLE001 - a candidate that fails to compile or run is skipped
            rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        results.append(rec)
        if log is not None:
            log.write(json.dumps(dict(task=task.task_name, problem=p.key(), **rec)) + "\n")
    _progress(len(cands), len(cands), f"{task.task_name} {p.template}", t0)
    ok = [x for x in results if "ms" in x]
    if not ok:
        return None
    best = min(ok, key=lambda x: x["ms"])
    default_ms = results[0].get("ms")
    return dict(task=task.task_name, template=p.template, problem=p, config=best["config"], ms=best["ms"],
                default_ms=default_ms, candidates=results)


TUNED_TEMPLATES = ("gemm", "gemv", "attention", "chain", "conv")
"""The templates whose configs kitsune-tune times alone (the others' heuristics stand: a scatter's split follows
its rows, a decode attention's parts are a structural choice of kitsune-split-reduction; a depthwise task is tuned
in its program only, ``--in-program --templates depthwise``: alone, MobileNetV2's 3x3 depthwise tasks ranked
one-warp configs up to 1.41x faster, which made the program 0.805 -> 0.854 ms on the H100, NOTES section 38;
``bench/kernels/dwtune.py`` times them alone). A convolution is timed on
its program's memory layout (``isolate.task_module``: a channels-last input, a packed weight and a channels-last
result where the program stores them so). Measured on the H100 (2026-11-27, bench/kernels/NOTES.md section 28):
isolated with NCHW operands, ResNet-18's first 3x3 of layer 1 took 120 us against 53 in its program and the tuned
model ran slower; on its layout, 55 us, and ResNet-18 tuned so 0.872 -> 0.826 ms (0.99x -> 1.04x Inductor + CUDA
graph)."""


def tune_graph(graph_module, gpu: str = "h100", device="cuda", max_candidates: int = 12, db_path=None,
               log=None, store: bool = True, seen: set[str] | None = None,
               only: dict[str, set[int]] | None = None) -> list[dict]:
    """Tune every templated task of an imported graph module; winners go to the database. ``seen``: problem keys
    already tuned in this run (shared across graphs: a training step's forward and backward have GEMMs of one
    problem with other epilogues, and the first tuned keeps its entry)."""
    from kitsune.schedule import db
    from kitsune.schedule.configs import config_from

    seen = set() if seen is None else seen
    out = []
    for task, c in scheduled_tasks(graph_module, gpu):
        if c.problem is None or c.template not in TUNED_TEMPLATES:
            continue
        k = db.key(c.problem, gpu)
        if k in seen:
            continue
        seen.add(k)
        rec = tune_task(task, c, gpu, device, max_candidates, log, only, db_path)
        if rec is None:
            continue
        if store:
            db.store(rec["problem"], gpu, config_from(rec["template"], rec["config"]), rec["ms"],
                     rec["default_ms"], Path(db_path) if db_path else None)
        out.append(rec)
    return out


PLACEMENT_CANDIDATES = ("spatial", "temporal", "separate")


def launch_plan_graph(cm, inputs):
    """A CUDA graph of one launch of ``cm``'s program (``kitsune.compile``'s result) on ``inputs``: what the
    placement tuner and the benchmarks replay and time (no per-call host work in the measurement). The graph holds
    ``cm`` and the launch's tensors (``keepalive``): a replay reads the program's weights and buffers at the
    addresses captured, so they must live as long as the graph. (The in-program tuner kept only the graphs of its
    candidates: their programs' memory was freed and re-used under them, and on the H100 a replay ended on an
    illegal memory access, 2026-11-27.)"""
    from kitsune.bench.harness import flatten
    from kitsune.runtime.program import capture_graph

    prog = cm.program
    env = {**prog._tensors, **prog._prepare(list(flatten(inputs)))}
    g = capture_graph(lambda: prog.module.launch(prog.state, env), warmup=2)[0]
    g.keepalive = (cm, env)
    return g


def compiled_program(model, inputs, **compile_kw):
    """(``kitsune.compile``'s result without its cache, a copy of its outputs on ``inputs``, a CUDA graph of one
    launch of its program): what the whole-program tuners check and time."""
    import torch

    import kitsune
    from kitsune.bench.harness import flatten

    with torch.no_grad():
        cm = kitsune.compile(model, inputs, cache=False, **compile_kw)
        outs = [o.clone() for o in flatten(cm(*inputs))]
        return cm, outs, launch_plan_graph(cm, inputs)


def tune_placement(model, inputs, gpu: str, db_path=None, log=None, store: bool = True) -> dict:
    """Time a model's dataflow program under each placement candidate (and the cost model's ``auto`` where the
    database has no entry yet), each launch plan replayed in a CUDA graph, outputs checked against the
    ``separate`` program's (bf16 tolerance); the fastest correct one goes to the database, keyed by the
    imported graph's hash, and ``placement="auto"`` uses it from then on."""
    from triton.testing import do_bench

    from kitsune.schedule import db

    def run(placement):
        cm, outs, g = compiled_program(model, inputs, mode="dataflow", gpu=gpu, placement=placement)
        return cm, outs, do_bench(g.replay, warmup=25, rep=200, return_mode="median")

    cm, ref, ms = run("separate")
    graph_hash = cm.graph_hash
    times = {"separate": ms}
    cands = [p for p in PLACEMENT_CANDIDATES if p != "separate"]
    if db.lookup_placement(graph_hash, gpu) is None:
        cands.append("auto")
    errors = {}
    for p in cands:
        try:
            _, outs, ms = run(p)
        except Exception as e:  # noqa: BLE001 - a placement that cannot be built or run is not a candidate
            errors[p] = _first_line(e)
            continue
        err = max((_rel(a, b) for a, b in zip(outs, ref)), default=0.0)
        if not err < 2e-2:
            errors[p] = f"rel err {err:.2e} against separate kernels"
            continue
        times[p] = ms
    best = min(times, key=times.get)
    rec = {"graph_hash": graph_hash, "placement": best, "ms": times, "errors": errors}
    if log:
        log.write(json.dumps(rec) + "\n")
    if store:
        db.store_placement(graph_hash, gpu, best, times, Path(db_path) if db_path else None)
    return rec


LAUNCH_CANDIDATES = (0, 1, 2)
"""Programmatic-dependent-launch settings ``tune_launch`` times: off, the next kernel launched once every program of
this one started (1) or did its work (2)."""


def tune_launch(model, inputs, gpu: str, mode: str, db_path=None, log=None, store: bool = True,
                rounds: int = 3) -> dict:
    """Time a model's program (``mode``; in dataflow mode its database placement) under each kernel-launch setting
    (``LAUNCH_CANDIDATES``), each launch plan replayed in a CUDA graph, the settings alternated ``rounds`` times
    (their order flipping each round), outputs checked against the setting-0 program's; the fastest correct one
    goes to the database (per graph and mode), and ``kitsune.compile`` uses it from then on. The launch's first
    kernel never overlaps what ran before it, so the check is the same whatever the setting."""
    import statistics

    import torch
    from triton.testing import do_bench

    import kitsune
    from kitsune.bench.harness import flatten
    from kitsune.schedule import db

    with torch.no_grad():
        cm = kitsune.compile(model, inputs, mode=mode, gpu=gpu, cache=False, cuda_graph=False)
        st = cm.program.state
        if not st.get("pdl_capable"):
            raise RuntimeError("the device has no programmatic dependent launch (sm_90+)")

        def run(pdl):
            st["pdl"] = pdl
            outs = [o.clone() for o in flatten(cm(*inputs))]
            return outs, launch_plan_graph(cm, inputs)

        ref, graphs, errors = None, {}, {}
        for p in LAUNCH_CANDIDATES:  # (0 first: the reference)
            try:
                outs, g = run(p)
            except Exception as e:  # noqa: BLE001 - a setting that cannot run is not a candidate
                if ref is None:  # the program itself does not run
                    raise
                errors[p] = _first_line(e)
                continue
            ref = outs if ref is None else ref
            err = max((_rel(a, b) for a, b in zip(outs, ref)), default=0.0)
            if p and not err < 2e-2:
                errors[p] = f"rel err {err:.2e} against PDL 0"
                continue
            graphs[p] = g
        times = {p: [] for p in graphs}
        order = list(graphs)
        for r in range(rounds):
            for p in (order if r % 2 == 0 else order[::-1]):
                times[p].append(do_bench(graphs[p].replay, warmup=10, rep=100, return_mode="median") * 1e3)
    us = {p: statistics.median(t) for p, t in times.items()}
    best = min(us, key=us.get)
    rec = {"graph_hash": cm.graph_hash, "mode": mode, "pdl": best, "us": us, "errors": errors}
    if log:
        log.write(json.dumps(rec) + "\n")
    if store:
        db.store_launch(cm.graph_hash, mode, gpu, best, us, Path(db_path) if db_path else None)
    st["pdl"] = best
    return rec


def tune_in_program(model, inputs, gpu: str, mode: str = "bulk-sync", templates=("gemv",), max_candidates: int = 8,
                    rounds: int = 3, log=None, store: bool = True,
                    only: dict[str, set[int]] | None = None) -> list[dict]:
    """Tune the configs of a model's tasks of ``templates`` inside their program, one task after another
    (coordinate descent): each candidate config goes into the user's database, the whole program is compiled
    (``mode``, its tuned placement and launch), its outputs checked against the incumbent program's, and its launch
    plan replayed in a CUDA graph; the best of the default, the incumbent and the cost model's best-ranked
    ``max_candidates`` (``only``: those whose config fields take these values, ``parse_only``) is re-timed
    against the incumbent in ``rounds`` alternating rounds and kept where it is faster (the database's entry for
    the task's problem; ``ms`` is then the program's time). The user's entry is put back as it was first, whatever
    happens (an exception, or a fault that ends the process's CUDA context). Why: a config timed alone is not
    timed where it runs -- the kernel before it still draining, its own loads issued before its wait under
    programmatic dependent launch; llama_decode_b8's gate / up winner alone (BN 32) lost in its program
    (bench/kernels/NOTES.md section 28). The database written is the user's: ``kitsune.compile`` reads it."""
    from triton.testing import do_bench

    from kitsune.frontend.torch_export import import_module
    from kitsune.schedule import db
    from kitsune.schedule.configs import CONFIGS

    g = get_gpu(gpu)

    def build():
        _, outs, graph = compiled_program(model, inputs, mode=mode, gpu=gpu, cuda_graph=False)
        return outs, graph

    def us(graph) -> float:
        return do_bench(graph.replay, warmup=10, rep=100, return_mode="median") * 1e3

    gm = import_module(model, inputs)[0]
    tasks = [(t, c) for t, c in scheduled_tasks(gm, gpu) if c.problem is not None and c.template in templates]
    out, seen = [], set()
    for task, choice in tasks:
        p = choice.problem
        k = db.key(p, gpu)
        if k in seen:
            continue
        seen.add(k)
        incumbent = db.lookup(p, gpu) or choice.config
        ranked = sorted(only_configs(CONFIGS[p.template].space(p), only), key=lambda c: c.estimate_s(p, g))
        cands = [c for c in ([] if only else [choice.config]) + ranked if c != incumbent]
        cands = list(dict.fromkeys(cands))[:max_candidates]
        user_saved = db.user_entry(k)
        try:
            times, med, errors = _in_program_times(task.task_name, p, incumbent, cands, build, us, rounds,
                                                   lambda cfg: db.store(p, gpu, cfg, 0.0, None,
                                                                        extra={"in_program": "candidate"}))
        finally:
            db.put_user_entry(k, user_saved)
        winner = min(med, key=med.get)
        if store and winner != incumbent:
            db.store(p, gpu, winner, med[winner] * 1e-3, med[incumbent] * 1e-3,
                     extra={"in_program": {"mode": mode, "us": round(med[winner], 2),
                                           "incumbent_us": round(med[incumbent], 2)}})
        rec = dict(task=task.task_name, template=p.template, problem=p.key(), incumbent=incumbent.as_dict(),
                   config=winner.as_dict(), us=round(med[winner], 2), incumbent_us=round(med[incumbent], 2),
                   candidates={str(c.as_dict()): round(v, 2) for c, v in times.items()}, errors=errors)
        if log is not None:
            log.write(json.dumps(rec) + "\n")
        out.append(rec)
    return out


def _in_program_times(name: str, p, incumbent, cands, build, us, rounds: int, install):
    """One task of ``tune_in_program``: (first-pass microseconds per config, median microseconds of the incumbent
    and the best over ``rounds`` alternating rounds, errors per candidate). ``install(cfg)`` puts a candidate
    where the next ``build()`` reads it."""
    import statistics

    ref, base = build()  # the incumbent's program
    times = {incumbent: us(base)}
    graphs = {incumbent: base}
    errors = {}
    t0 = time.time()
    for i, cfg in enumerate(cands):
        _progress(i, len(cands), f"{name} {p.template} in its program", t0)
        try:
            install(cfg)
            outs, gr = build()
            err = max((_rel(a, b) for a, b in zip(outs, ref)), default=0.0)
            if not err < 2e-2:
                errors[str(cfg.as_dict())] = f"rel err {err:.2e} against the incumbent's program"
                continue
            times[cfg] = us(gr)
            if times[cfg] < min(v for c, v in times.items() if c != cfg):
                graphs = {incumbent: base, cfg: gr}  # (only the incumbent's and the best's programs stay)
        except Exception as e:  # noqa: BLE001 - a candidate that fails to compile or run is skipped
            errors[str(cfg.as_dict())] = _first_line(e)
    _progress(len(cands), len(cands), f"{name} {p.template} in its program", t0)
    best = min(times, key=times.get)
    final = {incumbent: [], best: []}
    for r in range(rounds):  # the winner against the incumbent, alternating (the first pass's noise)
        for c in (list(final) if r % 2 == 0 else list(final)[::-1]):
            final[c].append(us(graphs[c]))
    return times, {c: statistics.median(v) for c, v in final.items()}, errors


def _cuda_models(models):
    """(name, model, inputs) of each suite workload or model file, built on the GPU in bf16 as the harness builds
    it (the placement and launch tuners time whole programs)."""
    import torch

    from kitsune.bench.harness import get_source

    for name, _, _ in models:
        model, inputs = get_source(name).build(1.0, torch.bfloat16, "cuda", 0)
        model.eval()
        yield name, model, inputs


def _first_line(e: BaseException) -> str:
    """An exception as a candidate's error: its type and its message's first line."""
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def _rel(a, b) -> float:
    """Relative L2 distance of ``a`` from ``b`` (fp32)."""
    import torch

    return (torch.linalg.vector_norm(a.float() - b.float())
            / torch.linalg.vector_norm(b.float()).clamp_min(1e-30)).item()


def training_graphs(name: str, gpu: str, device: str = "cuda", scale: float = 1.0) -> list[tuple[str, object]]:
    """(label, imported graph module) of the forward and backward graphs of a suite workload's training step
    through ``torch.compile(backend="kitsune")`` (on the GPU, bf16): the graphs whose tasks a training step runs
    (weight-gradient GEMMs with a short K, split reductions) and an inference graph does not have."""
    import torch
    import torch._dynamo

    import kitsune.backend as kb
    from kitsune.bench.harness import get_source
    from kitsune.context import parse_module

    model, inputs = get_source(name).build(scale, torch.bfloat16 if device == "cuda" else torch.float32, device, 0)
    model.train()
    torch._dynamo.reset()
    n0 = len(kb.records())
    c = torch.compile(model, backend="kitsune", options={"mode": "bulk-sync", "gpu": gpu, "fallback": False})
    c(*inputs)  # compiles the forward and (aot_autograd lowers it at once) the backward
    out = []
    for r in kb.records()[n0:]:
        for cg in (r.compiled, r.backward):
            if cg is not None and getattr(cg, "_low", None) is not None:
                out.append((f"{name}:{cg.role}", parse_module(cg._low.graph_text, f"{name}:{cg.role}")))
    torch._dynamo.reset()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="kitsune-tune", description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?", help="path/model.py[:factory] (returns module and example inputs)")
    ap.add_argument("--workload", action="append", default=[], help="a suite workload (repeatable; 'all')")
    ap.add_argument("--gpu", default=None, help="GPU preset (default: from the device name)")
    ap.add_argument("--max-candidates", type=int, default=12)
    ap.add_argument("--only", default=None, help="time only candidates whose config fields take these values, "
                    "e.g. 'GLUON=1,2' or 'BM=128;warps=8' (the default and the database's winner are timed too)")
    ap.add_argument("--db", default=None, help="database file (default: the user's cache)")
    ap.add_argument("--json", default=None, help="write every candidate's timing here")
    ap.add_argument("--placement", action="store_true",
                    help="tune each workload's dataflow placement (spatial / temporal / separate kernels) instead")
    ap.add_argument("--launch", action="store_true",
                    help="tune each workload's kernel launch (programmatic dependent launch 0 / 1 / 2) in --modes instead")
    ap.add_argument("--modes", default="bulk-sync,dataflow", help="the modes --launch tunes (--in-program: the first)")
    ap.add_argument("--in-program", action="store_true",
                    help="tune the configs of --templates' tasks inside their whole program (CUDA-graph replays), "
                    "one task after another; winners go to the user's database")
    ap.add_argument("--templates", default="gemv", help="the templates --in-program tunes (comma list)")
    ap.add_argument("--train", action="store_true",
                    help="tune the forward and backward graphs of each workload's training step instead")
    a = ap.parse_args(argv)
    if a.in_program and a.db:
        ap.error("--in-program writes the user's database, where kitsune.compile reads its candidates; --db "
                 "does not apply to it")
    import torch

    from kitsune.frontend.torch_export import import_module
    from kitsune.models import WORKLOADS, get_workload

    if not torch.cuda.is_available():
        print("kitsune-tune: needs a CUDA GPU (tuning times kernels); without one the heuristic defaults are used",
              file=sys.stderr)
        return 2
    gpu = a.gpu or ("h200" if "H200" in torch.cuda.get_device_name() else "h100")
    models = []
    names = [w for x in a.workload for w in (sorted(WORKLOADS) if x == "all" else [x])]
    for w in names:
        if w not in WORKLOADS:
            print(f"kitsune-tune: unknown workload {w!r}; known: {', '.join(sorted(WORKLOADS))}", file=sys.stderr)
            return 2
        if a.train or a.placement or a.launch or a.in_program:
            models.append((w, None, None))
            continue
        model, inputs = get_workload(w).build(1.0, torch.bfloat16, "meta", seed=0)
        models.append((w, model, inputs))
    if a.model and (a.placement or a.launch or a.in_program):
        models.append((a.model, None, None))
    elif a.model:
        from kitsune.bench.harness import get_source

        # built as the harness builds it (bf16 on the GPU): the factory's own fp32 model would tune fp32 problems,
        # whose database entries a bf16 program never looks up
        model, inputs = get_source(a.model).build(1.0, torch.bfloat16, "cuda", 0)
        models.append((a.model, model.eval(), inputs))
    if not models:
        ap.error("give a model file or --workload")
    log = open(a.json, "w") if a.json else None
    try:
        if a.placement:
            for name, model, inputs in _cuda_models(models):
                r = tune_placement(model, inputs, gpu, a.db, log)
                print(f"{name:<24} placement {r['placement']:<9} " + " ".join(f"{k} {v * 1e3:.1f} us"
                                                                        for k, v in r["ms"].items())
                      + "".join(f"; {k}: {v}" for k, v in r["errors"].items()))
            print(f"kitsune-tune: {datetime.date.today()}: database {a.db or 'user cache'}")
            return 0
        if a.in_program:
            mode = a.modes.split(",")[0]
            for name, model, inputs in _cuda_models(models):
                for r in tune_in_program(model, inputs, gpu, mode, tuple(a.templates.split(",")), a.max_candidates,
                                         log=log, only=parse_only(a.only)):
                    print(f"{name:<24} {r['task']:<14} {r['template']:<5} in program {r['us']:.1f} us "
                          f"(incumbent {r['incumbent_us']:.1f} us) {r['config']}"
                          + "".join(f"; {k}: {v}" for k, v in r["errors"].items()), flush=True)
            print(f"kitsune-tune: {datetime.date.today()}: database user cache")
            return 0
        if a.launch:
            for name, model, inputs in _cuda_models(models):
                for mode in a.modes.split(","):
                    r = tune_launch(model, inputs, gpu, mode, a.db, log)
                    print(f"{name:<24} {mode:<9} pdl {r['pdl']} " + " ".join(f"{k}: {v:.1f} us" for k, v in r["us"].items())
                          + "".join(f"; {k}: {v}" for k, v in r["errors"].items()), flush=True)
            print(f"kitsune-tune: {datetime.date.today()}: database {a.db or 'user cache'}")
            return 0
        graphs = []
        for name, model, inputs in models:
            if model is None:
                graphs += training_graphs(name, gpu)
            else:
                graphs.append((name, import_module(model, inputs)[0]))
        seen: set[str] = set()
        for name, gm in graphs:
            recs = tune_graph(gm, gpu, "cuda", a.max_candidates, a.db, log, seen=seen, only=parse_only(a.only))
            for r in recs:
                d = r["default_ms"]
                print(f"{name:<24} {r['task']:<14} {r['template']:<5} best {r['ms'] * 1e3:8.1f} us "
                      f"(default {'-' if d is None else f'{d * 1e3:.1f}'} us) {r['config']}")
    finally:
        if log:
            log.close()
    print(f"kitsune-tune: {datetime.date.today()}: database {a.db or 'user cache'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
