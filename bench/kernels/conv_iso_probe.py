"""Why an isolated convolution times differently from the same convolution in its program (ResNet-18's layer-1
3x3 over the max pool's output: 119 us alone with its default config, 54 in the harness's per-kernel figures).

    python bench/kernels/conv_iso_probe.py [--task conv2d_2]

Times, on the GPU: the program's kernels alone (``graphtime.kernels_alone_us``, each kernel replayed on the
buffers one full launch left), and the task isolated as kitsune-tune isolates it (``isolate.measure``, operands
rotated past the L2, and once more with one copy), with the default config. Prints the three.
"""

from __future__ import annotations

import argparse

import torch
from graphtime import kernels_alone_us

import kitsune
from kitsune.bench.harness import get_source
from kitsune.frontend.torch_export import import_module
from kitsune.schedule import isolate
from kitsune.schedule.roles import roles_of
from kitsune.schedule.select import conv_tile
from kitsune.tools.tune import scheduled_tasks


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="bench/models/resnet18.py")
    ap.add_argument("--task", default="conv2d_2")
    a = ap.parse_args()
    model, inputs = get_source(a.model).build(1.0, torch.bfloat16, "cuda", 0)
    fn = kitsune.compile(model.eval(), inputs, mode="bulk-sync", device="cuda", cuda_graph=False)
    prog = fn.program
    env = {**prog._tensors, **prog._prepare(inputs)}
    prog.module.launch(prog.state, env)
    torch.cuda.synchronize()
    alone = kernels_alone_us(prog.state, env, prog.module.KERNELS[:4])
    print("program kernels alone (us):", {k: round(v, 1) for k, v in alone.items()}, flush=True)
    meta, minputs = get_source(a.model).build(1.0, torch.bfloat16, "meta", 0)
    gm, _ = import_module(meta, minputs, None, with_weights=False)
    for t, c in scheduled_tasks(gm, "h100"):
        if t.task_name != a.task:
            continue
        base = isolate.task_module(t)
        ins, _ = isolate.reference_inputs(base, "cuda")
        m = isolate.lower(isolate.with_config(base, "conv", c.config, conv_tile(roles_of(c.anchor), c.config)), "h100")
        p, call = isolate.load(m, ins, "cuda")
        rot = isolate.measure(p, call) * 1e3
        one = isolate.measure(p, call, reps=1) * 1e3
        print(f"isolated {a.task} {c.config}: rotated {rot:.1f} us, one launch per replay {one:.1f} us", flush=True)


if __name__ == "__main__":
    main()
