"""Compile time of a 12-layer, d=768 GPT-2 (issue 11): Kitsune vs Inductor, cold caches.

The target: ``kitsune.compile`` plus the first call of GPT-2 (transformers' ``GPT2Config`` sizes: 12 layers,
d=768, 12 heads, random weights) <= 2x Inductor's compile time (``torch.compile`` default mode, first call) on
the same machine. Batch 1, ``--tokens`` tokens (256), bf16 on the GPU, eval mode, no grad.

Each measurement runs in a fresh subprocess with empty caches of its own: ``KITSUNE_CACHE_DIR``,
``TRITON_CACHE_DIR`` and ``TORCHINDUCTOR_CACHE_DIR`` point into a new temporary directory, and Inductor's FX
graph, AOT-autograd and remote caches are off, so every compile is cold. Model building, weight init, CUDA
context creation and the eager reference call happen before the clock starts, in each process.

* ``kitsune:<mode>``: ``kitsune.compile(model, (ids,), mode=<mode>)`` + first call + synchronize, with the
  phases of the compile (``CompiledModel.compile_times``: torch.export, import, each pass, verification,
  codegen, module load, weight upload, Triton compile) and the first call; bulk-sync, then dataflow with the
  time that is left (it may not finish: it says so);
* ``inductor``: ``torch.compile(model)`` first call + synchronize;

each output checked against eager (relative Frobenius error < 2e-2, as ``kitsune.bench``). The model is
``transformers.GPT2Model`` when transformers imports, else a hand-written GPT-2 of the same structure in plain
torch (LayerNorm, fused Conv1D-style ``c_attn`` with ``addmm``, causal sdpa, ``c_proj``, 4x MLP with tanh GELU);
the output says which.

    python bench/compile_time.py --timeout 540 --json compile_time.json       # the GPU machine
    python bench/compile_time.py --dry-run                                    # CPU: tiny config, interpreter

``--timeout``: the whole run's wall-clock budget in seconds (children are killed when it runs out; what finished
is reported). ``--dry-run``: 2 layers, d=32, 8 tokens, fp32 on the CPU, Kitsune under Triton's interpreter,
Inductor's CPU backend (``--peers none`` skips it): the path a CI test runs, timings meaningless.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = "@@compile_time@@ "
TOL = 2e-2


# ------------------------------------------------------------------ the model


def _handwritten_gpt2(n_layer: int, d: int, n_head: int, vocab: int, n_pos: int):
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Conv1D(nn.Module):
        def __init__(self, nf, nx):
            super().__init__()
            self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
            self.bias = nn.Parameter(torch.zeros(nf))
            self.nf = nf

        def forward(self, x):
            size_out = x.size()[:-1] + (self.nf,)
            return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(size_out)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = Conv1D(3 * d, d)
            self.c_proj = Conv1D(d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.c_attn(x).split(d, dim=2)
            q, k, v = (z.view(b, t, n_head, d // n_head).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).reshape(b, t, d))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = Conv1D(4 * d, d)
            self.c_proj = Conv1D(d, 4 * d)

        def forward(self, x):
            return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(d, eps=1e-5)
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(d, eps=1e-5)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(n_pos, d)
            nn.init.normal_(self.wte.weight, std=0.02)
            nn.init.normal_(self.wpe.weight, std=0.01)
            self.h = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(d, eps=1e-5)

        def forward(self, input_ids):
            pos = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
            x = self.wte(input_ids) + self.wpe(pos)
            for blk in self.h:
                x = blk(x)
            return self.ln_f(x)

    return GPT2()


def _transformers_gpt2(n_layer: int, d: int, n_head: int, vocab: int, n_pos: int):
    import torch

    try:
        from transformers import GPT2Config, GPT2Model
        GPT2Model  # noqa: B018 - the lazy import happens here
    except Exception:  # noqa: BLE001
        import importlib.util

        if importlib.util.find_spec("torchvision") is None:
            raise
        # transformers imports torchvision, whose CUDA-linked wheel fails to register its ops on a CPU torch
        # (see test/models/zoo.py): declare the two schemas its import needs, then try once more
        try:
            torch.ops.torchvision.nms  # noqa: B018
        except (AttributeError, RuntimeError):
            lib = torch.library.Library("torchvision", "FRAGMENT")  # noqa: TOR901
            lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            _transformers_gpt2.lib = lib
        for n in [n for n in sys.modules if n.startswith(("transformers", "torchvision"))]:
            del sys.modules[n]
        from transformers import GPT2Config, GPT2Model

    cfg = GPT2Config(vocab_size=vocab, n_positions=n_pos, n_embd=d, n_layer=n_layer, n_head=n_head, use_cache=False,
                     attn_implementation="sdpa")

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = GPT2Model(cfg)

        def forward(self, input_ids):
            return self.m(input_ids=input_ids).last_hidden_state

    return Wrap()


def build(args):
    """(model, (ids,), description) on the run's device and dtype, eval mode, seed 0."""
    import torch

    torch.manual_seed(0)
    dev = "cpu" if args.dry_run else "cuda"
    dtype = torch.float32 if args.dry_run else torch.bfloat16
    n_pos = getattr(args, "n_pos", None) or (max(1024, args.tokens) if not args.dry_run else max(32, args.tokens))
    what = None
    if args.model in ("auto", "transformers"):
        try:
            model = _transformers_gpt2(args.layers, args.d, args.heads, args.vocab, n_pos)
            import transformers

            what = f"transformers {transformers.__version__} GPT2Model"
        except Exception as e:  # noqa: BLE001
            if args.model == "transformers":
                raise
            why = f"{type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}"
            what = f"hand-written GPT-2 in plain torch (transformers not importable: {why})"
    if what is None or what.startswith("hand-written"):
        model = _handwritten_gpt2(args.layers, args.d, args.heads, args.vocab, n_pos)
        what = what or "hand-written GPT-2 in plain torch"
    model = model.eval().to(device=dev, dtype=dtype)
    ids = torch.randint(0, args.vocab, (args.batch, args.tokens), device=dev)
    return model, (ids,), what


def rel_err(a, b) -> float:
    import torch

    a, b = a.detach().double(), b.detach().double()
    return float(torch.linalg.vector_norm(a - b) / max(float(torch.linalg.vector_norm(b)), 1e-30))


# ------------------------------------------------------------------ one measurement (child process)


def child(args) -> dict:
    import torch

    t_imp = time.perf_counter()
    if args.child.startswith("kitsune"):
        import kitsune  # noqa: F401 - the package import counts neither side: done before the clock
    imp_s = time.perf_counter() - t_imp
    model, inputs, what = build(args)
    rec = {"what": args.child, "model": what, "import_s": round(imp_s, 3)}
    dev = inputs[0].device
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    with torch.no_grad():
        ref = model(*inputs)  # eager first: CUDA context, cuBLAS handles, allocator warm for both sides
        sync()
        if args.child == "inductor":
            t0 = time.perf_counter()
            compiled = torch.compile(model)
            out = compiled(*inputs)
            sync()
            rec["total_s"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            compiled(*inputs)
            sync()
            rec["second_call_s"] = time.perf_counter() - t1
        else:
            import kitsune

            mode = args.child.split(":", 1)[1]
            t0 = time.perf_counter()
            cm = kitsune.compile(model, inputs, mode=mode, gpu=args.gpu, device=dev)
            t1 = time.perf_counter()
            out = cm(*inputs)
            sync()
            t2 = time.perf_counter()
            rec["compile_s"] = t1 - t0
            rec["first_call_s"] = t2 - t1
            rec["total_s"] = t2 - t0
            rec["phases"] = {k: round(v, 4) for k, v in cm.compile_times.items()}
            rec["phases"]["first call"] = round(t2 - t1, 4)
            rec["kernels"] = len(getattr(cm.program.module, "KERNELS", []))
            rec["distinct_kernels"] = len({id(k["fn"]) for k in getattr(cm.program.module, "KERNELS", [])})
            rec["precompiled"] = cm.program.precompiled
            rec["source_bytes"] = len(cm.source)
            rec["interpreter"] = cm.program.interpret
            t3 = time.perf_counter()
            cm(*inputs)
            sync()
            rec["second_call_s"] = time.perf_counter() - t3
        rec["rel_err"] = rel_err(out, ref)
        rec["correct"] = bool(rec["rel_err"] < TOL)
    return rec


# ------------------------------------------------------------------ the parent


def versions(dry_run: bool) -> dict:
    import platform

    import torch

    try:
        import triton

        tv = triton.__version__
    except Exception:  # noqa: BLE001
        tv = None
    try:
        import transformers

        hv = transformers.__version__
    except Exception:  # noqa: BLE001
        hv = None
    dev = torch.cuda.get_device_name() if (torch.cuda.is_available() and not dry_run) else \
        "cpu (Triton interpreter, dry run)"
    return {"device": dev, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "torch": torch.__version__, "triton": tv, "transformers": hv, "python": platform.python_version(),
            "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "host": platform.node()}


def cold_env(tmp: str, what: str, dry_run: bool) -> dict:
    env = dict(os.environ)
    for sub, var in (("kitsune", "KITSUNE_CACHE_DIR"), ("triton", "TRITON_CACHE_DIR"),
                     ("inductor", "TORCHINDUCTOR_CACHE_DIR")):
        os.makedirs(os.path.join(tmp, sub), exist_ok=True)
        env[var] = os.path.join(tmp, sub)
    env.update({"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
                "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "0", "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE": "0",
                "TORCHINDUCTOR_BUNDLED_AUTOTUNE_REMOTE_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE": "0",
                "PYTHONPATH": os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH", "")] if p])})
    if what.startswith("kitsune") and dry_run:
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    return env


def run_child(what: str, args, timeout: float) -> dict:
    tmp = tempfile.mkdtemp(prefix="kitsune_ctime_")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", what] + passthrough(args)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ROOT, env=cold_env(tmp, what, args.dry_run), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=max(1.0, timeout))
        rec = None
        for line in out.splitlines():
            if line.startswith(MARK):
                rec = json.loads(line[len(MARK):])
        if rec is None:
            tail = "\n".join(err.strip().splitlines()[-15:])
            rec = {"what": what, "error": f"exit status {p.returncode}:\n{tail}"}
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        rec = {"what": what, "error": f"timed out after {timeout:.0f} s (did not finish)", "timed_out": True}
    rec["wall_s"] = round(time.perf_counter() - t0, 2)
    shutil.rmtree(tmp, ignore_errors=True)
    return rec


def passthrough(args) -> list[str]:
    out = ["--layers", str(args.layers), "--d", str(args.d), "--heads", str(args.heads), "--tokens", str(args.tokens),
           "--batch", str(args.batch), "--vocab", str(args.vocab), "--gpu", args.gpu, "--model", args.model]
    return out + (["--dry-run"] if args.dry_run else [])


def fmt_s(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def table(recs: list[dict]) -> str:
    lines = [f"{'what':<18} {'total_s':>8} {'compile_s':>9} {'1st call':>8} {'kernels':>9} {'rel_err':>9}  ok"]
    for r in recs:
        if "error" in r:
            lines.append(f"{r['what']:<18} {'-':>8} {'-':>9} {'-':>8} {'-':>9} {'-':>9}  {r['error'].splitlines()[0]}")
            continue
        kern = f"{r['distinct_kernels']}/{r['kernels']}" if "kernels" in r else "-"
        lines.append(f"{r['what']:<18} {fmt_s(r.get('total_s')):>8} {fmt_s(r.get('compile_s')):>9} "
                     f"{fmt_s(r.get('first_call_s')):>8} {kern:>9} {r['rel_err']:>9.2e}  "
                     f"{'y' if r['correct'] else 'n (WRONG)'}")
    for r in recs:
        if r.get("phases"):
            lines.append(f"\n{r['what']} phases (s):")
            lines += [f"  {k:<34} {v:8.3f}" for k, v in r["phases"].items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=None, help="(12; dry run 2)")
    ap.add_argument("--d", type=int, default=None, help="model width (768; dry run 32)")
    ap.add_argument("--heads", type=int, default=None, help="(12; dry run 2)")
    ap.add_argument("--tokens", type=int, default=None, help="(256; dry run 8)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--vocab", type=int, default=None, help="(50257; dry run 64)")
    ap.add_argument("--gpu", default="h100", help="Kitsune's GPU preset")
    ap.add_argument("--model", default="auto", choices=["auto", "transformers", "handwritten"])
    ap.add_argument("--modes", default="bulk-sync,dataflow", help="Kitsune modes, in order")
    ap.add_argument("--peers", default="inductor", help="'inductor' or 'none'")
    ap.add_argument("--timeout", type=float, default=540.0, help="wall-clock budget of the whole run (s)")
    ap.add_argument("--json", help="write the result (records + environment) to this file")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    small = args.dry_run
    args.layers = args.layers or (2 if small else 12)
    args.d = args.d or (32 if small else 768)
    args.heads = args.heads or (2 if small else 12)
    args.tokens = args.tokens or (8 if small else 256)
    args.vocab = args.vocab or (64 if small else 50257)
    if args.child:
        import warnings

        warnings.filterwarnings("ignore")
        rec = child(args)
        print(MARK + json.dumps(rec), flush=True)
        return 0

    start = time.perf_counter()
    deadline = start + args.timeout
    env = versions(args.dry_run)
    print(f"compile time: GPT-2 {args.layers} layers d={args.d} {args.heads} heads, batch {args.batch} x "
          f"{args.tokens} tokens, {'fp32 CPU (dry run)' if small else 'bf16 ' + env['device']}; cold caches, one "
          f"process each; budget {args.timeout:.0f} s", flush=True)
    modes = [m for m in args.modes.split(",") if m]
    order = [f"kitsune:{modes[0]}"] if modes else []
    order += ["inductor"] if args.peers == "inductor" else []
    order += [f"kitsune:{m}" for m in modes[1:]]
    recs = []
    for what in order:
        left = deadline - time.perf_counter() - 5.0
        if left < 10:
            recs.append({"what": what, "error": "not run: the time budget was spent", "timed_out": True})
            continue
        print(f"  {what} ... (up to {left:.0f} s)", flush=True)
        rec = run_child(what, args, left)
        recs.append(rec)
        print(f"  {what}: " + (rec["error"].splitlines()[0] if "error" in rec else
                               f"{rec['total_s']:.2f} s, rel err {rec['rel_err']:.2e}") + f" [{rec['model']}]"
              if "model" in rec else f"  {what}: {rec.get('error', '').splitlines()[0]}", flush=True)
    models = {r["model"] for r in recs if "model" in r}
    print(f"model: {', '.join(sorted(models)) or '-'}")
    print(table(recs))
    ind = next((r for r in recs if r["what"] == "inductor" and "total_s" in r), None)
    summary = {}
    for r in recs:
        if r["what"].startswith("kitsune") and "total_s" in r and ind is not None:
            ratio = r["total_s"] / ind["total_s"]
            summary[r["what"]] = {"ratio_to_inductor": round(ratio, 3), "target_met": bool(ratio <= 2.0 and r["correct"])}
            print(f"{r['what']}: {ratio:.2f}x Inductor's compile time (target <= 2x: "
                  f"{'met' if summary[r['what']]['target_met'] else 'NOT met'})")
    result = {**env, "config": {"layers": args.layers, "d": args.d, "heads": args.heads, "tokens": args.tokens,
                                "batch": args.batch, "vocab": args.vocab, "gpu_preset": args.gpu,
                                "dtype": "fp32" if small else "bf16", "dry_run": bool(small), "model": sorted(models)},
              "records": recs, "summary": summary, "wall_s": round(time.perf_counter() - start, 2)}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)
        print(f"wrote {args.json}")
    # exit status 1 when a required measurement (the first mode, the peer) failed or is wrong; a later mode
    # (dataflow) may run out of time without failing the run
    required = set(order[:2] if args.peers == "inductor" else order[:1])
    ok = all("error" not in r and r["correct"] for r in recs if r["what"] in required)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
