"""``python -m kitsune.bench --train``: a training step per workload, Kitsune's backend next to its peers.

A training step is the forward, a scalar loss (the mean squared error of every output, in fp32, against a
fixed target drawn once per workload) and the backward, with the parameters' gradients reset to None before
it (``zero_grad(set_to_none=True)``); no optimizer. The model is put in training mode.

Per workload, on the same inputs:

* correctness first: every parameter's gradient of one step on fresh inputs against eager's (the same dtype:
  bf16 on the GPU, ``||g - g_eager|| / ||g_eager|| < 2e-2`` each; fp32 under ``--dry-run``), for Kitsune and
  for Inductor; a wrong peer or a wrong Kitsune gets no time. Low-precision gradients are noisy in eager too
  (on the CPU at scale 0.02-0.25, eager bf16's gradients are 4-60% from float64's for nerf, dlrm and mgn:
  sums of many terms that cancel), so with a bf16 run the record also has every gradient's error against
  the model in fp32 (same weights and inputs) for Kitsune (``ref32_rel_err``) and for eager bf16
  (``eager_ref32_rel_err``); ``--train-check fp32`` makes that the gate instead: Kitsune's error against
  fp32 at most ``max(2e-2, 2 x eager bf16's)`` for each parameter;
* peers: eager, Inductor (``torch.compile(model)``) and Inductor + CUDA graph (``torch.compile(model,
  mode="reduce-overhead")``: CUDA-graph trees over the forward and the backward); eager + CUDA graph is not
  measured (capturing autograd's backward needs static gradient buffers, which the step resets);
* Kitsune: ``torch.compile(model, backend="kitsune", options={"mode": M, "cuda_graph": True})`` (each of
  aot_autograd's two graphs replayed as a CUDA graph of its launch plan, inputs at unchanged addresses read
  in place, the others copied into the graph's static buffers: ``kitsune_graph_ms``) and without CUDA graphs (``kitsune_nograph_ms``), per ``--modes``;
  ``kitsune_ms`` is the faster (``kitsune_variant``), ``speedup`` = Inductor + CUDA graph / it; the record says
  what the backend did (``backend_graphs``: 'kitsune' or the fallback, ``kitsune_backward``: the backward
  graph was compiled by Kitsune);
* time: median ms of ``triton.testing.do_bench`` over whole steps.

Records carry ``train: true`` (``python -m kitsune.bench.table`` leaves them out of the inference table).
``--dry-run``: CPU, Triton's interpreter, fp32 (``--dtype bfloat16``: bf16, with the fp32 reference), small
scale, the gradient check only. Under the interpreter bf16 figures are pessimistic: Triton's CPU interpreter
converts fp32 to bf16 by truncation (twice round-to-nearest's error; measured on 4096 normal values: mean
error 2.2e-3 vs 1.1e-3), so Kitsune's bf16 gradients there are ~2x further from fp32 than eager's (mlp
1.2e-2 vs 4.0e-3, nerf 7.2e-2 vs 3.1e-2 at scale 0.02), while the reference interpreter, which rounds to
nearest, matches eager's rounding exactly. The GPU rounds to nearest.
"""

from __future__ import annotations

import copy
import math
import time
from typing import Any

from kitsune.bench.harness import TOL, first_line, flatten, get_source, log, versions


def _loss(out, targets):
    return sum((o.float() - t).square().mean() for o, t in zip(flatten(out), targets))


def make_step(fn, model, inputs, targets):
    """One training step of ``fn`` (the model, or a compiled model) on ``inputs``."""
    params = [p for p in model.parameters() if p.requires_grad]

    def step():
        for p in params:
            p.grad = None
        _loss(fn(*inputs), targets).backward()

    return step


def grads(fn, model, inputs, targets) -> dict:
    make_step(fn, model, inputs, targets)()
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}


def grad_errors(got: dict, want: dict) -> dict[str, float]:
    """Per parameter ``||g - g_ref|| / ||g_ref||`` in fp32; NaN when a gradient is missing or not finite."""
    import torch

    out = {}
    for n, w in want.items():
        g = got.get(n)
        if g is None or tuple(g.shape) != tuple(w.shape) or not torch.isfinite(g.float()).all():
            out[n] = float("nan")
            continue
        den = torch.linalg.vector_norm(w.float()).item()
        num = torch.linalg.vector_norm(g.float() - w.float()).item()
        out[n] = num / den if den > 0 else num
    return out


def _worst(errs: dict[str, float]) -> tuple[float, str]:
    if not errs:
        return float("nan"), ""
    n = max(errs, key=lambda k: math.inf if math.isnan(errs[k]) else errs[k])
    return errs[n], n


def _ok(errs: dict[str, float]) -> bool:
    return bool(errs) and all(not math.isnan(v) and v < TOL for v in errs.values())


def run_training(spec: str, modes, args, emit, mark=None, baseline: dict | None = None) -> None:
    """Peers once, then each Kitsune mode; ``emit(record)`` once per mode (also on failure)."""
    import torch
    import torch._dynamo

    import kitsune.backend as kb
    from kitsune.bench.harness import bench_ms

    mark = mark or (lambda _m: None)
    dry = args.dry_run
    dev = "cpu" if dry else "cuda"
    # --dry-run: fp32, unless --dtype asks otherwise (a CPU rehearsal of the bf16 check)
    dt = torch.float32 if dry and not getattr(args, "dtype_explicit", False) else getattr(torch, args.dtype)
    scale = args.scale if args.scale is not None else (0.05 if dry else 1.0)
    base: dict[str, Any] = {"workload": spec, "train": True, "scale": scale, "dtype": str(dt).replace("torch.", ""),
                            **versions(), "eager_ms": None, "eager_graph_ms": None, "inductor_ms": None,
                            "inductor_graph_ms": None}
    try:
        src = get_source(spec)
        base["workload"] = src.name
        model, inputs = src.build(scale, dt, dev, args.seed)
        model.train()
        gen = torch.Generator(device="cpu").manual_seed(args.seed + 7)
        with torch.no_grad():
            targets = [torch.randn(o.shape, generator=gen).to(dev) for o in flatten(model(*inputs))]
        check = src.fresh(inputs, scale, dt, dev, args.seed + 1000)
        want = grads(model, model, check, targets)
        want32 = None
        if dt != torch.float32:  # the same model, weights and inputs in fp32: the reference of both
            m32 = copy.deepcopy(model).float()
            c32 = tuple(x.float() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in check)
            want32 = grads(m32, m32, c32, targets)
            del m32
            base["eager_ref32_rel_err"], base["eager_ref32_worst_param"] = _worst(grad_errors(want, want32))
    except Exception as e:  # noqa: BLE001
        for m in modes:
            emit({**base, "mode": m, "correct": False, "stage": "build", "error": first_line(e)})
        return
    preset = args.gpu or _preset()
    base["gpu_preset"] = preset
    by_fp32 = want32 is not None and getattr(args, "train_check", "eager") == "fp32"
    base["train_check"] = "fp32" if by_fp32 else "eager"

    def gate(got: dict) -> dict[str, float]:
        """Per parameter the error the gate compares with TOL: against eager in the same dtype, or (fp32 check)
        against the fp32 model, scaled so that max(TOL, 2 x eager's own error there) maps to TOL."""
        if not by_fp32:
            return grad_errors(got, want)
        e32, eager32 = grad_errors(got, want32), grad_errors(want, want32)
        return {n: v / max(TOL, 2 * eager32[n]) * TOL for n, v in e32.items()}
    peers = [p for p in args.peers.split(",") if p] if not dry else []

    if baseline is not None:
        base.update(baseline)
    else:
        pb: dict[str, Any] = {}
        if "eager" in peers:
            try:
                pb["eager_ms"] = bench_ms(make_step(model, model, inputs, targets))
            except Exception as e:  # noqa: BLE001
                pb["eager_error"] = first_line(e)
        for peer, kw in (("inductor", {}), ("inductor_graph", {"mode": "reduce-overhead"})):
            if peer not in peers:
                continue
            torch._dynamo.reset()
            try:
                t1 = time.perf_counter()
                cm = torch.compile(model, **kw)
                errs = gate(grads(cm, model, check, targets))
                pb[f"{peer}_compile_s"] = round(time.perf_counter() - t1, 1)
                pb[f"{peer}_rel_err"], _ = _worst(errs)
                if _ok(errs):
                    pb[f"{peer}_ms"] = bench_ms(make_step(cm, model, inputs, targets))
                else:
                    pb[f"{peer}_error"] = f"gradient rel err {pb[f'{peer}_rel_err']:.3e}: not timed"
            except Exception as e:  # noqa: BLE001
                pb[f"{peer}_error"] = first_line(e)
                log(f"{src.name}: {peer} failed: {first_line(e)}")
            torch._dynamo.reset()
        log(f"{src.name} (train): peers " + ", ".join(f"{k} {v:.4f}" for k, v in pb.items()
                                                      if k.endswith("_ms") and v is not None))
        base.update(pb)
        mark({"_baseline": pb})

    for m in modes:
        mark({"_start": m})
        rec: dict[str, Any] = {**base, "mode": m, "correct": False, "kitsune_ms": None}
        stage = "compile"
        torch._dynamo.reset()
        n0 = len(kb.records())
        try:
            t1 = time.perf_counter()
            c = torch.compile(model, backend="kitsune", options={"mode": m, "gpu": preset, "cuda_graph": not dry})
            got = grads(c, model, check, targets)
            errs = gate(got)
            rec["compile_s"] = round(time.perf_counter() - t1, 2)
            rec["eager_rel_err"] = _worst(grad_errors(got, want))[0]  # against eager in the same dtype
            if want32 is not None:
                rec["ref32_rel_err"], rec["ref32_worst_param"] = _worst(grad_errors(got, want32))
            recs = kb.records()[n0:]
            rec["backend_graphs"] = [r.status for r in recs]
            rec["kitsune_backward"] = bool(recs) and all(r.status == "kitsune" and r.backward is not None
                                                          for r in recs)
            rec["rel_err"], rec["worst_param"] = _worst(errs)
            rec["correct"] = _ok(errs)
            stage = "check"
            if not rec["kitsune_backward"]:  # Inductor's (or eager's) time would be recorded as Kitsune's
                why = "; ".join(r.reason.splitlines()[0] for r in recs if r.reason) or "no graph compiled"
                rec["correct"] = False
                rec["error"] = f"not compiled by Kitsune (forward and backward): {why}"
            elif not rec["correct"]:
                rec["error"] = (f"gradient of {rec['worst_param']}: rel err {rec['rel_err']:.3e} >= {TOL} "
                                f"({base['train_check']} check): wrong, not timed")
            elif not dry:
                stage = "time"
                rec["kitsune_graph_ms"] = bench_ms(make_step(c, model, inputs, targets))
                stage = "recheck"
                errs = gate(grads(c, model, check, targets))
                # the same programs launched without CUDA graphs: no copies of moved inputs into static buffers,
                # a launch per kernel instead
                torch._dynamo.reset()
                c2 = torch.compile(model, backend="kitsune", options={"mode": m, "gpu": preset})
                errs2 = gate(grads(c2, model, check, targets))
                rec["kitsune_nograph_ms"] = bench_ms(make_step(c2, model, inputs, targets))
                errs = {n: max(v, errs2[n]) for n, v in errs.items()}
                rec["rel_err"], rec["worst_param"] = _worst(errs)
                best = min(("graph", rec["kitsune_graph_ms"]), ("nograph", rec["kitsune_nograph_ms"]),
                           key=lambda t: t[1])
                rec["kitsune_variant"], rec["kitsune_ms"] = best
                if not _ok(errs):
                    rec["correct"], rec["kitsune_ms"] = False, None
                    rec["error"] = f"gradient rel err {rec['rel_err']:.3e} after timing"
            if rec["kitsune_ms"] and rec.get("inductor_graph_ms"):
                rec["speedup"] = rec["inductor_graph_ms"] / rec["kitsune_ms"]
            if rec["kitsune_ms"] and rec.get("inductor_ms"):
                rec["speedup_inductor"] = rec["inductor_ms"] / rec["kitsune_ms"]
            stage = None
            log(f"{src.name} {m} (train): gradient rel err {rec['rel_err']:.2e} ({rec['worst_param']}), graphs "
                f"{rec['backend_graphs']}, kitsune "
                f"{'-' if rec['kitsune_ms'] is None else format(rec['kitsune_ms'], '.4f')} ms")
        except Exception as e:  # noqa: BLE001
            rec["error"] = first_line(e)
            log(f"{src.name} {m} (train): failed at {stage}: {first_line(e)}")
        rec["stage"] = stage
        torch._dynamo.reset()
        if not dry:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        emit(rec)


def _preset() -> str:
    from kitsune.bench.harness import gpu_preset

    return gpu_preset()


__all__ = ["run_training", "make_step", "grads", "grad_errors"]
