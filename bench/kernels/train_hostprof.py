"""Where a training step's host time goes: cProfile over many steps of one variant (see train_overhead.py).

    python bench/kernels/train_hostprof.py nerf_65k [--variant kitsune_graph] [--steps 50] [--top 30]
"""

from __future__ import annotations

import cProfile
import pstats
import sys

import torch
import torch._dynamo

import kitsune.backend  # noqa: F401
from kitsune.bench.train import make_step

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from train_overhead import compiled  # noqa: E402
from train_profile import training_case  # noqa: E402


def main() -> None:
    argv = sys.argv[1:]
    opt = {"--variant": "kitsune_graph", "--steps": "50", "--top": "30", "--mode": "bulk-sync"}
    for k in list(opt):
        if k in argv:
            i = argv.index(k)
            opt[k] = argv[i + 1]
            del argv[i:i + 2]
    for name in argv:
        model, inputs, targets = training_case(name)
        torch._dynamo.reset()
        step = make_step(compiled(model, opt["--variant"], opt["--mode"]), model, inputs, targets)
        for _ in range(5):
            step()
        torch.cuda.synchronize()
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(int(opt["--steps"])):
            step()
        torch.cuda.synchronize()
        pr.disable()
        print(f"=== {name} {opt['--variant']}: per step, by own time")
        st = pstats.Stats(pr)
        st.sort_stats("tottime").print_stats(int(opt["--top"]))
        st.sort_stats("cumulative").print_stats(int(opt["--top"]))


if __name__ == "__main__":
    main()
