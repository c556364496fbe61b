"""kitsune.compile end to end on the GPU: CUDA graph + debug watchdog, fresh inputs, vs torch eager (bf16).

    python3 bench/gpu_compile_check.py mlp_gpt3_T256 llama_decode_b1 ...
"""

from __future__ import annotations

import sys

import torch

import kitsune
from kitsune.models import get_workload

from gpu_smoke import rel  # noqa: E402  (bench/ is on sys.path when a script there runs)


def main(names) -> int:
    bad = 0
    for w in names:
        for mode in ("dataflow", "bulk-sync"):
            model, inputs = get_workload(w).build(1.0, torch.bfloat16, "cuda", seed=0)
            f = kitsune.compile(model, inputs, mode=mode, cuda_graph=True, debug=True)
            errs = []
            for seed in (1, 2):
                g = torch.Generator(device="cpu").manual_seed(seed)
                new = tuple(torch.randn(x.shape, generator=g).to(x.device, x.dtype) if x.is_floating_point() else x
                            for x in inputs)
                out = f(*new)
                with torch.no_grad():
                    ref = model(*new)
                outs = out if isinstance(out, (tuple, list)) else (out,)
                refs = ref if isinstance(ref, (tuple, list)) else (ref,)
                errs += [rel(o.float(), r.float()) for o, r in zip(outs, refs)]
            ok = max(errs) < 2e-2
            bad += not ok
            fb = getattr(f.program, "capacity_fallback", False)
            print(f"{w:18} {mode:9} kitsune.compile(cuda_graph=True, debug=True): rel err {max(errs):.2e} "
                  f"{'ok' if ok else 'WRONG'}{' (ring queues -> one slot per tile)' if fb else ''}", flush=True)
        print(f.report().splitlines()[0], flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
