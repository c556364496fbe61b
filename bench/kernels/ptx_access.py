"""Global loads and stores of each kernel of a generated Triton module by width, from its sm_90 PTX (no GPU):
whether an access pattern became 16-byte vectors before any GPU time is spent on it.

    python bench/kernels/ptx_access.py SOURCE.py [KERNEL...]      # a module written by generate_triton

Per kernel: registers, and the counts of ``ld.global`` / ``st.global`` (and ``atom`` / ``red`` adds) instructions
by vector width and element size (``v4.b32``: 16 bytes, ``b16``: one bf16); counts are static (instructions in the PTX), not executed.
"""

from __future__ import annotations

import collections
import os
import re
import sys
import tempfile


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or os.environ.get("TRITON_INTERPRET") == "1":
        print(__doc__)
        return 2
    from kitsune.codegen.aot import compile_kernel, load_module_source

    with open(argv[0]) as fh:
        source = fh.read()
    mod = load_module_source(source, tempfile.mkdtemp(prefix="ptx_access_"))
    pat = re.compile(r"\b(ld|st)\.global(?:\.[a-z]+)*?((?:\.v[248])?\.[bfsu]\d+)")
    atom = re.compile(r"\b(atom|red)\.global(?:\.[a-z]+)*?\.add(?:\.noftz)?((?:\.v[248])?\.(?:bf16x2|f16x2|[bfsu]\d+))")
    for k in mod.KERNELS:
        if len(argv) > 1 and k["name"] not in argv[1:]:
            continue
        r = compile_kernel(k, keep_ptx=True)
        counts = collections.Counter(f"{op}{w}" for op, w in pat.findall(r["ptx"]))
        counts.update(f"{op}{w}" for op, w in atom.findall(r["ptx"]))
        print(f"{k['name']}: regs {r['registers']} smem {r['shared']} wgmma {r['wgmma']}  "
              + "  ".join(f"{key} {n}" for key, n in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
