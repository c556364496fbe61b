"""Tune the depthwise tasks of models (kitsune-tune's per-task isolation, nothing stored): how far is the heuristic
default from the best config of ``DepthwiseConfig.space``? Issue 11 asks for the defaults within 1.3x of tuned.

    python bench/kernels/dwtune.py bench/models/mobilenet_v2.py bench/models/convnext.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json

import torch

from kitsune.bench.harness import get_source
from kitsune.frontend.torch_export import import_module
from kitsune.schedule import db
from kitsune.tools.tune import scheduled_tasks, tune_task


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--json")
    ap.add_argument("--max-candidates", type=int, default=8)
    a = ap.parse_args()
    gpu = "h100"
    rows, seen = [], set()
    for path in a.models:
        model, inputs = get_source(path).build(1.0, torch.bfloat16, "cuda", 0)
        gm = import_module(model.eval(), inputs)[0]
        for task, c in scheduled_tasks(gm, gpu):
            if c.template != "depthwise" or db.key(c.problem, gpu) in seen:
                continue
            seen.add(db.key(c.problem, gpu))
            rec = tune_task(task, c, gpu, "cuda", a.max_candidates)
            if rec is None:
                print(f"{path} {task.task_name}: no candidate ran", flush=True)
                continue
            d = rec["default_ms"]
            row = dict(model=path, task=task.task_name, problem=c.problem.key(), default=c.config.as_dict(),
                       default_us=None if d is None else d * 1e3, best=rec["config"], best_us=rec["ms"] * 1e3,
                       candidates=rec["candidates"])
            rows.append(row)
            print(f"{path.split('/')[-1]:16s} {task.task_name:14s} M={c.problem.M} N={c.problem.N} K={c.problem.K} "
                  f"s={c.problem.stride or 1}: default {row['default_us']:.1f} us {row['default']} best "
                  f"{row['best_us']:.1f} us {row['best']} (x{row['default_us'] / row['best_us']:.2f})", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
