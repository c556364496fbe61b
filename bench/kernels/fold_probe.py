"""Probe: where a folded combine's time goes (kitsune.passes.last_arrival, fold=true), decode attention's kernel.

    python bench/kernels/fold_probe.py [llama_decode_b1]

Compiles the workload in dataflow mode with the fold forced on, then times the folded attention kernel alone
(module_probe's method: CUDA graph of 20 launches, counters reset) in variants of its generated text:
full (as generated), protocol (the group counter, no combine call), partial (no tail at all), no-fence (the
counter without its fences; racy, timing only), hoisted (the full fold, the combine's loads moved before its
reductions); and the bulk-sync program's kernels, its combine also with its loads hoisted.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile

import torch
from graphtime import kernels_alone_us

import kitsune
import kitsune.passes.convert_dataflow_to_gpu_queue as conv
from kitsune.bench.harness import get_source


def compiled(spec: str, mode: str, fold: bool):
    orig = conv.kernel_of_tasks
    conv.kernel_of_tasks = lambda *a, **k: orig(*a[:5], fold=fold)
    try:
        model, inputs = get_source(spec).build(1.0, torch.bfloat16, "cuda", 0)
        return kitsune.compile(model, inputs, mode=mode, device="cuda", cuda_graph=False, cache=False), inputs
    finally:
        conv.kernel_of_tasks = orig


def load(src: str, name: str):
    path = os.path.join(tempfile.mkdtemp(), f"{name}.py")
    with open(path, "w") as fh:
        fh.write(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def kernel_times(fn, inputs, mod, names):
    prog = fn.program
    env = {**prog._tensors, **prog._prepare(inputs)}
    prog.module.launch(prog.state, env)
    torch.cuda.synchronize()
    return kernels_alone_us(prog.state, env, [k for k in mod.KERNELS if k["name"] in names])


def main() -> None:
    spec = sys.argv[1] if len(sys.argv) > 1 else "llama_decode_b1"
    fn, inputs = compiled(spec, "dataflow", True)
    src = fn.program.source
    call = next(ln for ln in src.splitlines() if "if _last_of_group(ctr" in ln)
    ind = call[:len(call) - len(call.lstrip())]
    lines = src.splitlines()
    i = lines.index(call)
    j = i + 1
    while j < len(lines) and (lines[j].startswith(ind + " ") or not lines[j].strip()):
        j += 1
    fold_k = next(ln for ln in reversed(lines[:i]) if ln.startswith("def ")).split("(")[0][4:]  # its kernel
    variants = {
        "full": src,
        "protocol": "\n".join(lines[:i + 1] + [ind + "    pass"] + lines[j:]),
        "partial": "\n".join(lines[:i] + [ind + "pass"] + lines[j:]),
        "no-fence": src.replace("    _fence_gpu()\n    tl.debug_barrier()\n    arrived = tl.atomic_add(ctr + idx",
                                "    tl.debug_barrier()\n    arrived = tl.atomic_add(ctr + idx"),
    }
    hoisted = hoist_loads(src, fold_k)
    if hoisted is not None:
        variants["hoisted"] = hoisted  # the full fold, the combine's loads before its reductions
    for name, text in variants.items():
        mod = load(text, f"fold_{name.replace('-', '_')}")
        print(f"{spec} dataflow fold, kernel {fold_k}, {name:9s}: {kernel_times(fn, inputs, mod, {fold_k})[fold_k]:6.1f} us",
              flush=True)
    bs, _ = compiled(spec, "bulk-sync", False)
    times = kernel_times(bs, inputs, bs.program.module, {k["name"] for k in bs.program.module.KERNELS})
    combine = None
    for k in bs.program.module.KERNELS:
        stages = [ln.split("(")[0].replace("def ", "") for ln in bs.program.source.splitlines()
                  if ln.startswith(f"def {k['name']}_")]
        combine = k["name"] if any(x.endswith("_combine") for x in stages) else combine
        print(f"{spec} bulk-sync {k['name']:4s} {times[k['name']]:6.1f} us  {', '.join(stages)}")
    hoisted = hoist_loads(bs.program.source, combine)
    if hoisted is not None:
        mod = load(hoisted, "combine_hoisted")
        print(f"{spec} bulk-sync {combine:4s} {kernel_times(bs, inputs, mod, {combine})[combine]:6.1f} us  "
              f"(its loads issued before its reductions)")


def hoist_loads(src: str, kernel: str | None) -> str | None:
    """The combine stage's tile loads moved to the top of its work-item loop (each reads only the tile index and
    values defined before the loop), or None where one reads a value the loop computes."""
    import re

    if kernel is None:
        return None
    lines = src.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {kernel}_") and "_combine(" in ln)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(("def ", "@")))
    head = next(i for i in range(start, end) if re.match(r"\s+c\d+ = t$", lines[i]))
    body = lines[head + 1:end]
    defined: set[str] = set()
    loads, rest = [], []
    for ln in body:
        m = re.match(r"\s+(\w+) = (.*)$", ln)
        if m and m.group(2).startswith("tl.load("):
            if set(re.findall(r"\b(?:v|acc)\d+\b", m.group(2))) & defined:
                return None
            loads.append(ln)
            continue
        if m:
            defined.add(m.group(1))
        rest.append(ln)
    return "\n".join(lines[:head + 1] + loads + rest + lines[end:])


if __name__ == "__main__":
    main()
