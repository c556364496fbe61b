"""AOT (sm_90, no GPU) resource report of the chain template on a workload, per forced chain config.

    python bench/kernels/chain_aot.py [--workload nerf_65k] [--configs 128,128,1,8 128,128,2,8 ...]

A config is BM,SEG,PREFETCH,warps. Prints registers, shared memory and spills of the bulk-sync kernel; with
--emit DIR also writes each generated module (for the GPU probe: chain_gpu.py)."""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))


def forced_source(module, cfg: dict) -> str:
    from kitsune.codegen.aot import generate, lower
    from kitsune.schedule import configs

    orig = configs.ChainConfig.default
    configs.ChainConfig.default = classmethod(lambda cls, p, gpu: cls(**cfg))
    try:
        return generate(lower(module, "bulk-sync"))
    finally:
        configs.ChainConfig.default = orig


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="nerf_65k")
    ap.add_argument("--configs", nargs="*", default=["128,128,1,8", "128,128,2,8", "128,128,0,8", "128,64,2,8",
                                                      "64,64,0,4", "64,64,2,4"])
    ap.add_argument("--emit")
    a = ap.parse_args()
    os.environ["KITSUNE_TUNING_DB"] = "off"
    from kitsune.codegen.aot import compile_module_source, export_workload

    module = export_workload(a.workload)
    for c in a.configs:
        BM, SEG, PF, W = (int(x) for x in c.split(","))
        src = forced_source(module, dict(BM=BM, SEG=SEG, PREFETCH=PF, warps=W))
        if a.emit:
            os.makedirs(a.emit, exist_ok=True)
            open(os.path.join(a.emit, f"{a.workload}_{BM}_{SEG}_{PF}_{W}.py"), "w").write(src)
        for r in compile_module_source(src):
            print(c, r.get("name"), {k: r.get(k) for k in ("registers", "shared", "spill_stores", "spill_loads",
                                                            "wgmma", "error")}, flush=True)


if __name__ == "__main__":
    main()
