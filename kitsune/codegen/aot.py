"""Ahead-of-time compile checks: generated Triton modules -> sm_90 cubins, no GPU needed.

``compile_module_source(source)`` imports the source of a module made by
``kitsune.codegen.triton_gen.generate_triton`` (or any module of the same shape: a
``KERNELS`` list of dicts with ``name``, ``fn`` (a ``triton.jit`` function),
``num_warps``, ``signature`` (parameter -> Triton type string) and ``constexprs``)
and runs ``triton.compile`` on every kernel for a CUDA target (default sm_90,
which Triton compiles as sm_90a). It returns, per kernel, what the compile tells
without a device: registers per thread, shared memory, spills (from the ``ptxas
-v`` log), whether the PTX uses ``wgmma`` (Hopper warpgroup MMA) or ``mma.sync``,
the compile time, and an occupancy bound (CTAs per SM that fit by registers,
shared memory, threads) that a persistent dataflow program needs to hold all of
its programs resident at once.

It must run in a process *without* ``TRITON_INTERPRET``: with it set, ``triton.jit``
builds interpreter functions that cannot be compiled. ``compile_in_subprocess``
starts a clean process (the environment without ``TRITON_INTERPRET``) that runs
the command line (``kitsune.tools.aot``) and returns its JSON.

The command line (a table of the records) is ``kitsune.tools.aot``
(``python -m kitsune.tools.aot``; ``python -m kitsune.codegen.aot`` still runs it).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any, Sequence

MODES = ("dataflow", "bulk-sync")

# Hopper (sm_90) limits, for the occupancy bound.
SM90_REGS_PER_SM = 65536
SM90_SMEM_PER_SM = 233472  # 228 KiB
SM90_SMEM_PER_BLOCK = 232448  # 227 KiB, the opt-in maximum of one CTA
SM90_SMEM_RESERVED_PER_BLOCK = 1024
SM90_THREADS_PER_SM = 2048
SM90_BLOCKS_PER_SM = 32
SM90_SMS = 132


class AOTError(RuntimeError):
    """Ahead-of-time compilation cannot run (environment) or a kernel failed (``raise_on_error``)."""


def interpret_env_set(env: dict[str, str] | None = None) -> bool:
    v = (os.environ if env is None else env).get("TRITON_INTERPRET", "")
    return v.strip() not in ("", "0", "false", "False")


def clean_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment without ``TRITON_INTERPRET`` (for a compile subprocess)."""
    out = dict(os.environ if env is None else env)
    out.pop("TRITON_INTERPRET", None)
    return out


# ----------------------------------------------------------------------------------
# cubin / ptxas-log readers
# ----------------------------------------------------------------------------------

_EIATTR_REGCOUNT = 0x2F


def cubin_registers(cubin: bytes) -> int | None:
    """Registers per thread from a cubin's ``.nv.info`` (EIATTR_REGCOUNT); the maximum over its kernels."""
    try:
        if cubin[:4] != b"\x7fELF" or cubin[4] != 2:  # ELF64 only
            return None
        (shoff,) = struct.unpack_from("<Q", cubin, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
        secs = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
        stroff = secs[shstrndx][4]
        best = None
        for s in secs:
            name = cubin[stroff + s[0]: cubin.index(b"\0", stroff + s[0])]
            if name != b".nv.info":
                continue
            data = cubin[s[4]: s[4] + s[5]]
            i = 0
            while i + 2 <= len(data):
                fmt, attr = data[i], data[i + 1]
                if fmt == 0x04:  # EIFMT_SVAL: u16 size + payload
                    (size,) = struct.unpack_from("<H", data, i + 2)
                    if attr == _EIATTR_REGCOUNT and size >= 8:
                        _, regs = struct.unpack_from("<II", data, i + 4)
                        best = regs if best is None else max(best, regs)
                    i += 4 + size
                elif fmt == 0x03:  # EIFMT_HVAL: u16 value
                    i += 4
                elif fmt in (0x01, 0x02):  # EIFMT_NVAL / EIFMT_BVAL
                    i += 2 if fmt == 0x01 else 4
                else:
                    break
        return best
    except (struct.error, ValueError, IndexError):
        return None


def parse_ptxas_log(log: str) -> dict[str, int]:
    """Registers, spill bytes and stack frame from a ``ptxas -v`` log (the last function's)."""
    out: dict[str, int] = {}
    for pat, key in ((r"Used (\d+) registers", "registers"), (r"(\d+) bytes spill stores", "spill_stores"),
                     (r"(\d+) bytes spill loads", "spill_loads"), (r"(\d+) bytes stack frame", "stack_frame")):
        hits = re.findall(pat, log)
        if hits:
            out[key] = max(int(h) for h in hits)
    return out


def ctas_per_sm(registers: int | None, shared: int, num_warps: int) -> int | None:
    """How many CTAs of a kernel fit on one Hopper SM at once (registers, shared memory, threads, 32)."""
    if registers is None:
        return None
    threads = 32 * num_warps
    if shared > SM90_SMEM_PER_BLOCK or threads > 1024:
        return 0
    regs_per_warp = math.ceil(max(registers, 1) * 32 / 256) * 256
    by_regs = (SM90_REGS_PER_SM // regs_per_warp) // num_warps
    by_smem = SM90_SMEM_PER_SM // (shared + SM90_SMEM_RESERVED_PER_BLOCK)
    by_threads = SM90_THREADS_PER_SM // threads
    return max(0, min(by_regs, by_smem, by_threads, SM90_BLOCKS_PER_SM))


def _grid_size(grid: Any) -> int | None:
    if isinstance(grid, int):
        return grid
    if isinstance(grid, (tuple, list)) and all(isinstance(g, int) for g in grid):
        return math.prod(grid)
    return None


# ----------------------------------------------------------------------------------
# compile
# ----------------------------------------------------------------------------------

def load_module_source(source: str, directory: str, name: str = "kitsune_aot_generated"):
    """Write ``source`` to ``directory/name.py`` and import it (a fresh module, registered in sys.modules)."""
    path = os.path.join(directory, name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def compile_kernel(entry: dict, arch: int = 90, num_warps: int | None = None, keep_ptx: bool = False) -> dict:
    """``triton.compile`` one KERNELS entry; raises what Triton raises. ``keep_ptx``: the PTX too (``ptx``)."""
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = entry["fn"]
    if not isinstance(fn, triton.runtime.jit.JITFunction):
        raise AOTError(f"kernel {entry.get('name')!r}: fn is {type(fn).__name__}, not a triton JITFunction "
                       "(was the module imported with TRITON_INTERPRET set?)")
    nw = int(num_warps if num_warps is not None else entry.get("num_warps", 4))
    options: dict[str, Any] = {"num_warps": nw}
    for k in ("num_stages", "num_ctas", "maxnreg"):
        if entry.get(k) is not None:
            options[k] = entry[k]
    sig = dict(entry["signature"])
    # torch allocations are 256-byte aligned and Triton specialises such pointers at run time ("tt.divisibility"
    # 16): give the AOT compile the same facts, or it compiles a kernel the GPU never runs (no vectorised
    # loads, no cp.async pipelining)
    attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(sig.values()) if str(t).startswith("*")}
    if getattr(fn, "is_gluon", lambda: False)():
        from triton.experimental.gluon._runtime import GluonASTSource as ASTSource  # noqa: N814
    src = ASTSource(fn, sig, dict(entry.get("constexprs") or {}), attrs)
    buf = io.StringIO()
    old = knobs.nvidia.dump_ptxas_log
    knobs.nvidia.dump_ptxas_log = True
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(buf):
            ck = triton.compile(src, target=GPUTarget("cuda", arch, 32), options=options)
    finally:
        knobs.nvidia.dump_ptxas_log = old
    secs = time.perf_counter() - t0
    log = parse_ptxas_log(buf.getvalue())
    ptx = ck.asm.get("ptx", "")
    cubin = ck.asm.get("cubin", b"")
    regs = log.get("registers")
    if regs is None and isinstance(cubin, (bytes, bytearray)):
        regs = cubin_registers(bytes(cubin))  # a cache hit prints no ptxas log
    shared = int(getattr(ck.metadata, "shared", 0) or 0)
    return {
        "registers": regs,
        "shared": shared,
        "spill_stores": log.get("spill_stores"),
        "spill_loads": log.get("spill_loads"),
        "stack_frame": log.get("stack_frame"),
        "num_warps": nw,
        "wgmma": "wgmma.mma_async" in ptx,
        "mma": bool(re.search(r"\bmma\.sync\b", ptx)),
        "tma_load": "cp.async.bulk.tensor" in ptx and ".shared::cluster.global" in ptx,
        "tma_store": ".global.shared::cta" in ptx,
        "setmaxnreg": "setmaxnreg" in ptx,  # warp specialisation's register split
        "ptx_lines": ptx.count("\n"),
        "compile_s": round(secs, 3),
        "ctas_per_sm": ctas_per_sm(regs, shared, nw),
        **({"ptx": ptx} if keep_ptx else {}),
    }


def compile_module_source(
    source: str,
    arch: int = 90,
    num_warps_from_kernel: bool = True,
    *,
    default_num_warps: int = 4,
    cache_dir: str | None = None,
    raise_on_error: bool = False,
    sms: int = SM90_SMS,
) -> list[dict]:
    """AOT-compile every kernel of a generated module's source; one result dict per KERNELS entry.

    Keys: ``name``, ``ok``, ``error`` (first lines, when not ok), ``registers``,
    ``shared`` (bytes), ``spill_stores`` / ``spill_loads`` (bytes), ``stack_frame``,
    ``num_warps``, ``wgmma`` / ``mma`` (the PTX has them), ``ptx_lines``,
    ``compile_s`` (0 and ``same_code_as`` for a kernel that shares an earlier kernel's function: compiled
    once), ``grid`` (programs, when an int or int tuple), ``ctas_per_sm``
    (resident CTAs an SM holds), ``resident`` (``grid <= sms * ctas_per_sm``: every
    program can be resident at once) and ``ring_queues`` (the kernel's queues with
    fewer slots than tiles, from the module's ``QUEUES``: a kernel with one needs
    ``resident``, since a producer then waits on consumers that must be running).

    ``cache_dir``: Triton's cache for the compiles; default a fresh temporary one so
    every kernel is really compiled (honest times, a ptxas log). A failing kernel
    gives ``ok=False`` unless ``raise_on_error``.
    """
    if interpret_env_set():
        raise AOTError("TRITON_INTERPRET is set in this process: triton.jit then makes interpreter functions "
                       "that cannot be compiled; run the AOT compile in a process without it "
                       "(kitsune.codegen.aot.compile_in_subprocess, or `env -u TRITON_INTERPRET`)")
    from triton import knobs

    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="kitsune_aot_") as tmp:
        old_cache = knobs.cache.dir
        knobs.cache.dir = cache_dir or os.path.join(tmp, "triton_cache")
        try:
            mod = load_module_source(source, tmp, f"kitsune_aot_{os.getpid()}_{int(time.time() * 1e6)}")
            kernels = getattr(mod, "KERNELS", None)
            if not isinstance(kernels, list):
                raise AOTError("the generated module has no KERNELS list")
            ring: dict[str, int] = {}  # kernel -> queues with fewer slots than tiles
            for q in getattr(mod, "QUEUES", None) or []:
                try:
                    _, kname, cap, ntiles = q[:4]
                    if cap < ntiles:
                        ring[kname] = ring.get(kname, 0) + 1
                except (TypeError, ValueError):
                    pass
            done: dict[tuple, tuple[str, dict]] = {}  # kernels sharing one function (same code): compiled once
            for i, entry in enumerate(kernels):
                name = str(entry.get("name", f"kernel{i}"))
                grid = _grid_size(entry.get("grid"))
                same = (id(entry.get("fn")), repr(entry.get("signature")), entry.get("num_warps"),
                        entry.get("num_stages"), repr(entry.get("constexprs")))
                if same in done:
                    first, r = done[same]
                    resident = None if grid is None or r["ctas_per_sm"] is None else grid <= sms * r["ctas_per_sm"]
                    results.append({"name": name, "ok": True, "grid": grid, **r, "compile_s": 0.0,
                                    "same_code_as": first, "resident": resident, "ring_queues": ring.get(name, 0)})
                    continue
                try:
                    r = compile_kernel(entry, arch, None if num_warps_from_kernel else default_num_warps)
                    done[same] = (name, r)
                except Exception as e:  # noqa: BLE001 -- recorded per kernel
                    if raise_on_error:
                        raise
                    msg = f"{type(e).__name__}: {e}".strip()
                    results.append({"name": name, "ok": False, "grid": grid,
                                    "error": "\n".join(msg.splitlines()[:12])})
                    continue
                resident = None if grid is None or r["ctas_per_sm"] is None else grid <= sms * r["ctas_per_sm"]
                results.append({"name": name, "ok": True, "grid": grid, **r, "resident": resident,
                                "ring_queues": ring.get(name, 0)})
        finally:
            knobs.cache.dir = old_cache
            for k in [k for k in sys.modules if k.startswith(f"kitsune_aot_{os.getpid()}_")]:
                sys.modules.pop(k, None)
    return results


# ----------------------------------------------------------------------------------
# workloads
# ----------------------------------------------------------------------------------

def export_workload(name: str, scale: float = 1.0):
    """Full-size (meta device, bf16) import of a built-in workload: the graph-dialect module."""
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    import torch

    from kitsune.frontend.torch_export import import_module
    from kitsune.models import get_workload

    model, inputs = get_workload(name).build(scale=scale, dtype=torch.bfloat16, device="meta")
    module, _ = import_module(model, inputs, None, with_weights=False)
    return module


def lower(module, mode: str, gpu: str = "h100"):
    """A clone of a graph module lowered with ``kitsune-pipeline{mode}`` (gpu_queue)."""
    from kitsune.context import make_context
    from kitsune.passes.pipeline import KitsunePipelinePass

    m = module.clone()
    KitsunePipelinePass(mode=mode, gpu=gpu).apply(make_context(), m)
    return m


def generate(module, capacity: str = "ir") -> str:
    from kitsune.codegen.triton_gen import generate_triton

    return generate_triton(module, capacity=capacity)


def _stage_templates(module) -> dict[str, list[str]]:
    """Kernel name -> the schedule templates of its stages (kitsune-choose-schedules); a gemm stage of batched
    small matrices (``BB`` > 1: a 3-D tl.dot, mma rather than wgmma) as "gemm-batched"."""
    from kitsune.dialects import gpu_queue as gq

    def name(st) -> str:
        t = st.template()
        return "gemm-batched" if t == "gemm" and (st.config() or {}).get("BB", 1) > 1 else t

    return {k.kernel_name: [name(st) for st in k.stages()] for k in module.walk() if isinstance(k, gq.KernelOp)}


def compile_workload(name: str, modes: Sequence[str] = MODES, scale: float = 1.0, arch: int = 90,
                     gpu: str = "h100", capacity: str = "ir") -> list[dict]:
    """Import once, then per mode lower + generate + compile; one record per mode.

    Record: ``workload``, ``mode``, ``ok``, ``stage`` (where it failed: import /
    lower / generate / compile), ``error``, ``seconds``, ``kernels`` (the
    ``compile_module_source`` results).
    """
    out: list[dict] = []
    t0 = time.perf_counter()
    try:
        graph = export_workload(name, scale)
    except Exception as e:  # noqa: BLE001
        return [{"workload": name, "mode": m, "ok": False, "stage": "import", "error": _first_lines(e),
                 "kernels": [], "seconds": round(time.perf_counter() - t0, 2)} for m in modes]
    for mode in modes:
        t1 = time.perf_counter()
        rec: dict[str, Any] = {"workload": name, "mode": mode, "ok": False, "kernels": []}
        stage = "lower"
        try:
            low = lower(graph, mode, gpu)
            stage = "generate"
            src = generate(low, capacity)
            stage = "compile"
            ks = compile_module_source(src, arch)
            templates = _stage_templates(low)
            for k in ks:
                k["templates"] = templates.get(k.get("name"), [])
            rec["kernels"] = ks
            bad = [k for k in ks if not k["ok"]]
            rec["ok"] = bool(ks) and not bad
            if not ks:
                rec["error"] = "the generated module has no kernels"
            elif bad:
                rec["error"] = f"{len(bad)} of {len(ks)} kernels failed; first ({bad[0]['name']}): {bad[0]['error']}"
            stage = None
        except Exception as e:  # noqa: BLE001
            rec["error"] = _first_lines(e)
            if os.environ.get("KITSUNE_AOT_TRACEBACK"):
                traceback.print_exc()
        rec["stage"] = stage
        rec["seconds"] = round(time.perf_counter() - t1, 2)
        out.append(rec)
    return out


def _first_lines(e: BaseException, n: int = 8) -> str:
    return "\n".join(f"{type(e).__name__}: {e}".strip().splitlines()[:n])


def compile_in_subprocess(workload: str, modes: Sequence[str] = MODES, scale: float = 1.0, arch: int = 90,
                          timeout: float | None = None, python: str | None = None) -> list[dict]:
    """``compile_workload`` in a fresh interpreter whose environment has no ``TRITON_INTERPRET``.

    Returns its records; a crash or timeout gives failed records with the reason.
    """
    def failed(stage: str, error: str) -> list[dict]:
        return [{"workload": workload, "mode": m, "ok": False, "stage": stage, "error": error, "kernels": []}
                for m in modes]

    return _aot_tool(["--workload", workload, "--mode", ",".join(modes), "--scale", repr(scale), "--arch", str(arch)],
                     failed, timeout, python)


def compile_source_in_subprocess(source: str, arch: int = 90, timeout: float | None = None,
                                 python: str | None = None) -> dict:
    """``compile_module_source(source)`` in a fresh interpreter whose environment has no ``TRITON_INTERPRET``
    (a test process runs Triton's interpreter): the module's record, its kernels' records under ``kernels``."""
    with tempfile.TemporaryDirectory(prefix="kitsune_aot_src_") as tmp:
        path = os.path.join(tmp, "generated.py")
        with open(path, "w") as fh:
            fh.write(source)

        def failed(stage: str, error: str) -> list[dict]:
            return [{"workload": "generated.py", "mode": "-", "ok": False, "stage": stage, "error": error,
                     "kernels": []}]

        return _aot_tool(["--source", path, "--arch", str(arch)], failed, timeout, python)[0]


def _aot_tool(args: list[str], failed, timeout: float | None, python: str | None) -> list[dict]:
    """The records of ``python -m kitsune.tools.aot ARGS`` run in a clean environment; ``failed(stage, error)``
    makes them when it times out or writes none."""
    with tempfile.TemporaryDirectory(prefix="kitsune_aot_sub_") as tmp:
        jpath = os.path.join(tmp, "out.json")
        cmd = [python or sys.executable, "-m", "kitsune.tools.aot", *args, "--json", jpath, "--quiet"]
        try:
            p = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return failed("timeout", f"timed out after {timeout} s")
        if os.path.exists(jpath):
            with open(jpath) as fh:
                return json.load(fh)
        tail = (p.stderr or p.stdout or "").strip().splitlines()[-12:]
        return failed("subprocess", f"exit {p.returncode}: " + "\n".join(tail))


if __name__ == "__main__":  # the command line is kitsune.tools.aot; `python -m kitsune.codegen.aot` runs it too
    from kitsune.tools.aot import main

    sys.exit(main())
