"""CPU-side phases of compiling GPT-2 (bench/compile_time.py's model) with Kitsune, no GPU needed.

Times, on this machine, each phase that ``kitsune.compile`` runs before the first launch: torch.export, the
import (decompositions + graph dialect, with the weights), every pass of ``kitsune-pipeline`` and the module
verification after it, Triton code generation; with ``--aot`` also the Triton compile of every kernel of the
generated module for sm_90 (``kitsune.codegen.aot``, in a child process without TRITON_INTERPRET), distinct
functions once. It drives the same steps one by one (not ``kitsune.compile``), so it also runs on commits
that predate ``kitsune.timing``: for before / after comparisons (bench/kernels/NOTES.md, "Compile time")::

    python bench/kernels/compile_phases.py --mode bulk-sync --aot
    python bench/kernels/compile_phases.py --profile /tmp/gpt2.prof     # + cProfile of the Kitsune phases
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import sys
import tempfile
import time
import warnings


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", default="bulk-sync")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--model", default="auto", choices=["auto", "transformers", "handwritten"])
    ap.add_argument("--aot", action="store_true", help="also compile every kernel for sm_90 (Triton, no GPU)")
    ap.add_argument("--profile", help="write a cProfile of the Kitsune phases (import .. codegen) here")
    ap.add_argument("--source", help="write the generated Triton module here")
    ap.add_argument("--json", help="write the phase times here")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import torch

    import compile_time as ct  # bench/compile_time.py: the same model
    from kitsune.context import make_context
    from kitsune.frontend.torch_export import export, import_exported
    from kitsune.passes.pipeline import KitsunePipelinePass

    try:
        from kitsune.codegen.triton_gen import generate_triton
    except ImportError:  # older commits
        from kitsune.codegen.to_triton import generate_triton

    ns = argparse.Namespace(dry_run=True, model=args.model, layers=args.layers, d=768, heads=12, tokens=args.tokens,
                            batch=1, vocab=50257, n_pos=max(1024, args.tokens))
    model, inputs, what = ct.build(ns)  # CPU, fp32 ...
    model = model.to(torch.bfloat16)  # ... in the GPU run's dtype
    times: dict[str, float] = {}

    def timed(name, fn):
        t0 = time.perf_counter()
        out = fn()
        times[name] = times.get(name, 0.0) + time.perf_counter() - t0
        return out

    prof = cProfile.Profile() if args.profile else None
    with torch.no_grad():
        ep = timed("torch.export", lambda: export(model, inputs, strict=False))
        if prof:
            prof.enable()
        import inspect

        kw = {"torch_weights": True} if "torch_weights" in inspect.signature(import_exported).parameters else {}
        module, weights = timed("import", lambda: import_exported(ep, **kw))  # as kitsune.compile imports
        ctx = make_context()
        for p in KitsunePipelinePass(mode=args.mode, gpu="h100").passes():
            timed(p.name, lambda: p.apply(ctx, module))
            timed("verify", module.verify)
        src = timed("codegen", lambda: generate_triton(module, capacity="ir"))
        if prof:
            prof.disable()
            prof.dump_stats(args.profile)
    kitsune_s = sum(v for k, v in times.items() if k != "torch.export")
    rec = {"model": what, "mode": args.mode, "layers": args.layers, "tokens": args.tokens,
           "phases": {k: round(v, 3) for k, v in times.items()}, "kitsune_cpu_s": round(kitsune_s, 3),
           "source_bytes": len(src)}
    if args.source:
        with open(args.source, "w") as fh:
            fh.write(src)
    if args.aot:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "gpt2.py")
            with open(path, "w") as fh:
                fh.write(src)
            from kitsune.codegen import aot

            env = aot.clean_env()
            env["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
            import subprocess

            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-m", "kitsune.tools.aot", "--source", path, "--json",
                                os.path.join(tmp, "aot.json"), "--quiet"], env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            ks = json.load(open(os.path.join(tmp, "aot.json")))[0]["kernels"] if p.returncode in (0, 1) else []
            rec["aot"] = {"ok": p.returncode == 0, "kernels": len(ks),
                          "compiled": sum(1 for k in ks if k.get("compile_s")),
                          "compile_s": round(sum(k.get("compile_s") or 0.0 for k in ks), 2),
                          "max_kernel_s": round(max([k.get("compile_s") or 0.0 for k in ks] or [0.0]), 2),
                          "failed": [k["name"] for k in ks if not k["ok"]], "process_wall_s": round(wall, 2)}
    print(f"{what}, {args.layers} layers, {args.tokens} tokens, mode {args.mode}")
    for k, v in rec["phases"].items():
        print(f"  {k:34s} {v:8.3f}")
    print(f"  {'Kitsune (import .. codegen)':34s} {kitsune_s:8.3f}")
    if "aot" in rec:
        a = rec["aot"]
        print(f"  Triton sm_90: {a['compiled']} of {a['kernels']} kernels compiled in {a['compile_s']} s (slowest "
              f"{a['max_kernel_s']} s){', FAILED: ' + ', '.join(a['failed']) if a['failed'] else ''}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rec, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
