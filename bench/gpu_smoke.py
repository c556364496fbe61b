"""First contact with the GPU: every workload, full size, bf16, both modes, through the generated Triton.

Phase 1 (parallel, one process per workload and mode): import, lower, generate, JIT-compile, run once
with the debug watchdog, compare with torch eager (rel. err), poison-check the outputs.
Phase 2 (sequential): median time (triton.testing.do_bench) of the launch plan with and without a
CUDA graph next to eager and Inductor + CUDA graph.

    python3 bench/gpu_smoke.py [--workloads a,b] [--modes dataflow,bulk-sync] [--no-time] [--out DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

ALL = ["mlp_gpt3_T1024", "mlp_gpt3_T256", "llama_decode_b1", "llama_decode_b8", "dlrm_b2048", "nerf_65k",
       "mgn_10k", "inception_b8"]


def rel(a, b) -> float:
    import torch

    a, b = a.double(), b.double()
    if not torch.isfinite(a).all():
        return float("nan")
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


def build(workload: str, mode: str, out: str):
    import torch

    from kitsune.codegen.to_triton import generate_triton
    from kitsune.context import make_context
    from kitsune.frontend.torch_export import import_module
    from kitsune.models import get_workload
    from kitsune.passes.pipeline import KitsunePipelinePass as KitsunePipeline

    model, inputs = get_workload(workload).build(1.0, torch.bfloat16, "cuda", seed=0)
    module, _ = import_module(model, inputs, with_weights=False)
    KitsunePipeline(mode=mode).apply(make_context(), module)
    params = dict(model.named_parameters())
    params.update(dict(model.named_buffers()))

    def load(capacity):
        src = generate_triton(module, capacity=capacity)
        path = os.path.join(out, f"gen_{workload}_{mode.replace('-', '_')}_{capacity}.py")
        with open(path, "w") as f:
            f.write(src)
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        tensors = {}
        it = iter(inputs)
        for n in mod.ARGS:
            shape, dt, role = mod.TENSORS[n]
            if role == "input":
                tensors[n] = next(it).contiguous()
            else:
                tensors[n] = params[mod.LABELS[n]].detach().to(mod.DTYPES[dt]).contiguous()
        return mod, tensors

    mod, tensors = load("ir")
    ring = {k for (_, k, cap, nt) in mod.QUEUES if cap < nt}
    res = mod.residency(mod.allocate("cuda"), tensors)
    print("residency", res, flush=True)
    if any(name in ring and grid > fit for name, grid, fit, *_ in res):
        print("ring queues need the whole grid resident: capacity=all", flush=True)
        mod, tensors = load("all")
    return model, inputs, mod, tensors


def one(workload: str, mode: str, out: str, watchdog: int) -> dict:
    import torch

    res = {"workload": workload, "mode": mode}
    t0 = time.time()
    model, inputs, mod, tensors = build(workload, mode, out)
    res["gen_s"] = round(time.time() - t0, 1)
    state = mod.allocate("cuda")
    for b in state["buffers"].values():
        if b.is_floating_point():
            b.fill_(float("nan"))
    t0 = time.time()
    outs = mod.launch(state, tensors, watchdog=watchdog)
    torch.cuda.synchronize()
    res["first_run_s"] = round(time.time() - t0, 1)
    mod.check(state)
    with torch.no_grad():
        ref = model(*inputs)
    ref = ref if isinstance(ref, (tuple, list)) else (ref,)
    errs = [rel(o.float(), r.float()) for o, r in zip(outs, ref)]
    # second run with fresh inputs: epochs advance, counters are not reset
    torch.manual_seed(1)
    for n in mod.ARGS:
        if mod.TENSORS[n][2] == "input" and tensors[n].is_floating_point():
            tensors[n].copy_(torch.randn_like(tensors[n]))
    it = iter(tensors[n] for n in mod.ARGS if mod.TENSORS[n][2] == "input")
    new_inputs = tuple(next(it) if x.is_floating_point() else x for x in inputs)
    outs = mod.launch(state, tensors, watchdog=watchdog)
    torch.cuda.synchronize()
    mod.check(state)
    with torch.no_grad():
        ref = model(*new_inputs)
    ref = ref if isinstance(ref, (tuple, list)) else (ref,)
    errs += [rel(o.float(), r.float()) for o, r in zip(outs, ref)]
    res["rel_err"] = max(errs)
    res["ok"] = bool(res["rel_err"] < 2e-2)
    return res


def timing(workload: str, mode: str, out: str) -> dict:
    import torch
    from triton.testing import do_bench

    from kitsune.runtime.program import capture_graph

    model, inputs, mod, tensors = build(workload, mode, out)
    state = mod.allocate("cuda")
    mod.launch(state, tensors)
    torch.cuda.synchronize()
    t_plain = do_bench(lambda: mod.launch(state, tensors), warmup=50, rep=300, return_mode="median")
    g, _ = capture_graph(lambda: mod.launch(state, tensors), warmup=2)
    g.replay()
    torch.cuda.synchronize()
    mod.check(state)
    t_graph = do_bench(g.replay, warmup=50, rep=300, return_mode="median")
    return {"kitsune_ms": t_plain, "kitsune_graph_ms": t_graph}


def peers(workload: str, timed: bool = True) -> dict:
    import torch
    from triton.testing import do_bench

    from kitsune.runtime.program import capture_graph

    from kitsune.models import get_workload

    model, inputs = get_workload(workload).build(1.0, torch.bfloat16, "cuda", seed=0)
    res = {}
    with torch.no_grad():
        if not timed:
            torch.compile(model)(*inputs)
            torch.cuda.synchronize()
            return {"warm": True}
        res["eager_ms"] = do_bench(lambda: model(*inputs), warmup=50, rep=300, return_mode="median")
        try:
            cm = torch.compile(model)
            for _ in range(3):
                cm(*inputs)
            torch.cuda.synchronize()
            g, _ = capture_graph(lambda: cm(*inputs), warmup=3)
            res["inductor_graph_ms"] = do_bench(g.replay, warmup=50, rep=300, return_mode="median")
        except Exception as e:  # noqa: BLE001
            res["inductor_error"] = str(e).splitlines()[0][:200]
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default=",".join(ALL))
    ap.add_argument("--modes", default="dataflow,bulk-sync")
    ap.add_argument("--no-time", action="store_true")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/kitsune_out"))
    ap.add_argument("--watchdog", type=int, default=1 << 22)
    ap.add_argument("--child", nargs=3, metavar=("KIND", "WORKLOAD", "MODE"))
    ap.add_argument("--timeout", type=int, default=240)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.child:
        kind, w, m = a.child
        try:
            r = (one(w, m, a.out, a.watchdog) if kind == "check" else timing(w, m, a.out) if kind == "time"
                 else peers(w, timed=(kind == "peers")))
        except Exception as e:  # noqa: BLE001
            r = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
            traceback.print_exc()
        print("RESULT " + json.dumps(r), flush=True)
        return 0
    ws, ms = a.workloads.split(","), a.modes.split(",")
    env = dict(os.environ)

    def run(kind, w, m, log):
        return subprocess.Popen([sys.executable, __file__, "--child", kind, w, m, "--out", a.out,
                                 "--watchdog", str(a.watchdog)], stdout=open(log, "w"), stderr=subprocess.STDOUT,
                                env=env)

    def result(log):
        for line in open(log):
            if line.startswith("RESULT "):
                return json.loads(line[7:])
        return {"error": "no result (timeout or crash)"}

    jobs = []
    warm = []
    if not a.no_time:  # compile Inductor's kernels in parallel with the checks (cache hits when timed)
        for w in ws:
            log = os.path.join(a.out, f"warm_{w}.log")
            warm.append(run("peers-warm", w, "-", log))
    for w in ws:
        for m in ms:
            log = os.path.join(a.out, f"check_{w}_{m}.log")
            jobs.append((w, m, log, run("check", w, m, log)))
    t0 = time.time()
    for w, m, log, p in jobs:
        try:
            p.wait(timeout=max(1, a.timeout - (time.time() - t0)))
        except subprocess.TimeoutExpired:
            p.kill()
    rows = {(w, m): result(log) for w, m, log, _ in jobs}
    for p in warm:
        try:
            p.wait(timeout=max(1, a.timeout - (time.time() - t0)))
        except subprocess.TimeoutExpired:
            p.kill()
    if not a.no_time:
        for w in ws:
            for m in ms:
                if not rows[(w, m)].get("ok"):
                    continue
                log = os.path.join(a.out, f"time_{w}_{m}.log")
                p = run("time", w, m, log)
                try:
                    p.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    p.kill()
                rows[(w, m)].update(result(log))
            log = os.path.join(a.out, f"peers_{w}.log")
            p = run("peers", w, "-", log)
            try:
                p.wait(timeout=180)
            except subprocess.TimeoutExpired:
                p.kill()
            pr = result(log)
            for m in ms:
                rows[(w, m)].update({k: v for k, v in pr.items() if k != "error"})
    with open(os.path.join(a.out, "smoke.json"), "w") as f:
        json.dump({f"{w}/{m}": r for (w, m), r in rows.items()}, f, indent=1)
    print(f"{'workload':18} {'mode':9} {'ok':5} {'rel_err':>9} {'ks ms':>8} {'ks+g ms':>8} {'ind+g':>8} "
          f"{'eager':>8}  note")
    for (w, m), r in rows.items():
        def f(k):
            v = r.get(k)
            return f"{v:8.3f}" if isinstance(v, (int, float)) else f"{'-':>8}"
        err = r.get("rel_err")
        print(f"{w:18} {m:9} {str(r.get('ok', False)):5} {err if err is None else format(err, '9.2e'):>9} "
              f"{f('kitsune_ms')} {f('kitsune_graph_ms')} {f('inductor_graph_ms')} {f('eager_ms')}  "
              f"{r.get('error', '')[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
