"""Ahead-of-time compile checks (kitsune.codegen.aot, kitsune.tools.aot): Triton -> sm_90 cubin, no GPU needed.

The ``aot`` tests generate every workload at full size in both modes and compile
every kernel for sm_90 in subprocesses whose environment has no
``TRITON_INTERPRET`` (the workloads run in parallel, one subprocess each, as many
at a time as there are cores; ``KITSUNE_AOT_JOBS`` overrides). They are slow and
run in the default ``make test``; deselect them with ``-m 'not aot'``.
"""

from __future__ import annotations

import concurrent.futures as cf
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

from kitsune.codegen import aot
from kitsune.models import WORKLOADS
from kitsune.tools.aot import format_table

HAND_WRITTEN = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x, y, o, N: tl.constexpr, BLOCK: tl.constexpr, WATCHDOG: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < N
        tl.store(o + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

    @triton.jit
    def mm_kernel(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, WATCHDOG: tl.constexpr):
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc += tl.dot(tl.load(a + rm[:, None] * K + (k + rk)[None, :]),
                          tl.load(b + (k + rk)[:, None] * BN + rn[None, :]))
        tl.store(c + rm[:, None] * BN + rn[None, :], acc.to(tl.bfloat16))

    @triton.jit
    def broken_kernel(x, BLOCK: tl.constexpr):
        tl.store(x + tl.arange(0, BLOCK), undefined_name)

    KERNELS = [
        dict(name="add", fn=add_kernel, grid=(4,), num_warps=4, tensors=["x", "y", "o"],
             signature={"x": "*fp32", "y": "*fp32", "o": "*fp32", "N": "constexpr", "BLOCK": "constexpr",
                        "WATCHDOG": "constexpr"},
             constexprs={"N": 1000, "BLOCK": 256, "WATCHDOG": 0}),
        dict(name="mm", fn=mm_kernel, grid=(1,), num_warps=4, tensors=["a", "b", "c"],
             signature={"a": "*bf16", "b": "*bf16", "c": "*bf16", "K": "i32", "BM": "constexpr",
                        "BN": "constexpr", "BK": "constexpr", "WATCHDOG": "constexpr"},
             constexprs={"BM": 64, "BN": 64, "BK": 32, "WATCHDOG": 0}),
    ]
    ''')

BROKEN = HAND_WRITTEN + textwrap.dedent('''
    KERNELS.append(dict(name="broken", fn=broken_kernel, grid=(1,), num_warps=4, tensors=["x"],
                        signature={"x": "*fp32", "BLOCK": "constexpr"}, constexprs={"BLOCK": 64}))
    ''')


def _run_source(tmp_path, source: str):
    path = tmp_path / "gen.py"
    path.write_text(source)
    out = tmp_path / "out.json"
    p = subprocess.run([sys.executable, "-m", "kitsune.tools.aot", "--source", str(path), "--json", str(out)],
                       env=aot.clean_env(), capture_output=True, text=True, timeout=600)
    assert out.exists(), p.stderr[-3000:]
    return p, json.loads(out.read_text())


# ----------------------------------------------------------------------------------------------
# fast tests: the helpers and a hand-written module
# ----------------------------------------------------------------------------------------------

def test_parse_ptxas_log():
    log = ("ptxas info    : Function properties for k\n"
           "    296 bytes stack frame, 296 bytes spill stores, 292 bytes spill loads\n"
           "ptxas info    : Used 255 registers, used 1 barriers, 296 bytes cumulative stack size\n")
    assert aot.parse_ptxas_log(log) == {"registers": 255, "spill_stores": 296, "spill_loads": 292,
                                        "stack_frame": 296}
    assert aot.parse_ptxas_log("") == {}


def test_ctas_per_sm():
    assert aot.ctas_per_sm(16, 0, 4) == 16  # 2048 threads / 128
    assert aot.ctas_per_sm(255, 32768, 4) == 2  # 8192 regs a warp -> 8 warps
    assert aot.ctas_per_sm(128, 100 * 1024, 8) == 2  # smem: 228 KiB / (100 KiB + 1 KiB)
    assert aot.ctas_per_sm(64, 300 * 1024, 4) == 0  # over the per-CTA maximum
    assert aot.ctas_per_sm(None, 0, 4) is None


def test_refuses_interpret_mode(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    with pytest.raises(aot.AOTError, match="TRITON_INTERPRET"):
        aot.compile_module_source(HAND_WRITTEN)
    assert "TRITON_INTERPRET" not in aot.clean_env()


def test_hand_written_module(tmp_path):
    p, recs = _run_source(tmp_path, HAND_WRITTEN)
    assert p.returncode == 0, p.stdout + p.stderr
    ks = {k["name"]: k for k in recs[0]["kernels"]}
    assert set(ks) == {"add", "mm"}
    assert all(k["ok"] for k in ks.values())
    assert ks["add"]["registers"] and ks["add"]["shared"] == 0 and not ks["add"]["wgmma"]
    assert ks["mm"]["wgmma"], "a bf16 tl.dot on sm_90 should use wgmma"
    assert ks["mm"]["shared"] > 0
    assert ks["add"]["resident"] is True and ks["add"]["ring_queues"] == 0
    assert "add" in p.stdout and "wgmma" in p.stdout  # the table


def test_failing_kernel_is_reported(tmp_path):
    p, recs = _run_source(tmp_path, BROKEN)
    assert p.returncode == 1
    ks = {k["name"]: k for k in recs[0]["kernels"]}
    assert ks["add"]["ok"] and ks["mm"]["ok"]
    assert not ks["broken"]["ok"] and "undefined_name" in ks["broken"]["error"]


# ----------------------------------------------------------------------------------------------
# every workload, full size, both modes (slow)
# ----------------------------------------------------------------------------------------------

HAVE_CODEGEN = importlib.util.find_spec("kitsune.codegen.triton_gen") is not None
TIMEOUT = float(os.environ.get("KITSUNE_AOT_TIMEOUT", "2400"))


@pytest.fixture(scope="module")
def aot_futures(request):
    """Start one subprocess per selected workload (both modes each), all at once, bounded by cores."""
    wanted = sorted({it.callspec.params["workload"] for it in request.session.items
                     if getattr(it, "module", None) is request.module and hasattr(it, "callspec")
                     and "workload" in it.callspec.params})
    jobs = int(os.environ.get("KITSUNE_AOT_JOBS", "0")) or max(1, os.cpu_count() or 1)
    pool = cf.ThreadPoolExecutor(max_workers=jobs)
    futs = {w: pool.submit(aot.compile_in_subprocess, w, aot.MODES, 1.0, 90, TIMEOUT) for w in wanted}
    yield futs
    pool.shutdown(wait=True, cancel_futures=True)


def _record(aot_futures, workload, mode) -> dict:
    return {r["mode"]: r for r in aot_futures[workload].result()}[mode]


aot_case = [
    pytest.mark.aot,
    pytest.mark.slow,
    pytest.mark.skipif(not HAVE_CODEGEN, reason="kitsune.codegen.triton_gen is not there yet"),
    pytest.mark.parametrize("mode", aot.MODES),
    pytest.mark.parametrize("workload", list(WORKLOADS)),
]


def _aot_case(fn):
    for m in reversed(aot_case):
        fn = m(fn)
    return fn


@_aot_case
def test_workload_kernels_compile_for_sm90(aot_futures, workload, mode):
    rec = _record(aot_futures, workload, mode)
    table = format_table([rec])
    assert rec["ok"], f"{workload} {mode} failed at {rec.get('stage')}: {rec.get('error')}\n{table}"
    assert rec["kernels"], f"{workload} {mode}: no kernels"
    for k in rec["kernels"]:
        assert k["ok"], f"{workload} {mode} kernel {k['name']}: {k.get('error')}"
        assert k["shared"] <= aot.SM90_SMEM_PER_BLOCK, f"{k['name']}: {k['shared']} B of shared memory\n{table}"
        assert k["ctas_per_sm"] != 0, f"{k['name']}: no CTA fits on an SM\n{table}"
        if k.get("templates") == ["gemm"]:  # the gemm template: tensor cores through wgmma, no spills
            assert k["wgmma"], f"{k['name']}: a gemm template without wgmma\n{table}"
            assert not k.get("spill_stores"), f"{k['name']}: {k['spill_stores']} bytes of spills\n{table}"
        if k.get("templates") == ["gemm-batched"]:  # a batched dot of small matrices: mma (no wgmma), no spills
            assert k["mma"], f"{k['name']}: a batched gemm without tensor cores\n{table}"
            assert not k.get("spill_stores"), f"{k['name']}: {k['spill_stores']} bytes of spills\n{table}"
        if k.get("templates") and set(k["templates"]) == {"conv"}:  # implicit GEMM: tensor cores, no spills
            assert k["wgmma"] or k["mma"], f"{k['name']}: a conv template without tensor cores\n{table}"
            assert not k.get("spill_stores"), f"{k['name']}: {k['spill_stores']} bytes of spills\n{table}"


