"""The -t cuda code generator: text structure, errors, and nvcc compilation of the small workloads."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import pytest

from kitsune.codegen.plan import CodegenError, build_plan
from kitsune.codegen.to_cuda import emit_cuda, generate_cuda
from kitsune.context import make_context, parse_module
from kitsune.passes.pipeline import KitsunePipelinePass

INPUTS = Path(__file__).resolve().parents[1] / "lit" / "passes" / "inputs"
WORKLOADS = sorted(p.stem for p in INPUTS.glob("*.mlir"))
MODES = ["dataflow", "bulk-sync"]


def _nvcc() -> str | None:
    return shutil.which("nvcc") or next((p for p in ["/usr/local/cuda/bin/nvcc"] if os.path.exists(p)), None)


@lru_cache(maxsize=None)
def _source(workload: str, dtype: str = "f32") -> str:
    text = (INPUTS / f"{workload}.mlir").read_text()
    if dtype != "f32":
        text = text.replace("f32>", f"{dtype}>")
    return text


@lru_cache(maxsize=None)
def _lowered_text(workload: str, mode: str, dtype: str = "f32") -> str:
    m = parse_module(_source(workload, dtype))
    mode, _, placement = mode.partition(":")  # "dataflow:spatial": a placement other than auto
    KitsunePipelinePass(mode=mode, placement=placement or "auto").apply(make_context(), m)
    m.verify()
    return str(m)


def _lowered(workload: str, mode: str, dtype: str = "f32"):
    return parse_module(_lowered_text(workload, mode, dtype))


@lru_cache(maxsize=None)
def _cuda(workload: str, mode: str, dtype: str = "f32") -> str:
    return generate_cuda(_lowered(workload, mode, dtype))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("workload", WORKLOADS)
def test_generates_structure(workload, mode):
    m = _lowered(workload, mode)
    plan = build_plan(m, splits=False)  # the scalar reference runs each tile whole
    cu = _cuda(workload, mode)
    order = re.search(r"^// KITSUNE_TENSORS: (.*)$", cu, re.M).group(1).split(",")
    # arguments first, then buffers / constants, then queue storages
    assert order[:len(plan.args)] == plan.args
    rest = [n for n in plan.tensors if n not in plan.args]
    assert order[len(plan.args):len(plan.args) + len(rest)] == rest
    assert order[len(plan.args) + len(rest):] == [q.storage for q in plan.queues]
    assert 'extern "C" int kitsune_launch(void** tensors, int* counters, int* epoch, int* err, ' \
           "long long watchdog, cudaStream_t stream)" in cu
    for k in plan.kernels:
        assert re.search(rf"__global__ void __launch_bounds__\({32 * k.warps}\) kitsune_{k.name}\(Params P\)", cu)
        assert f"<<<{k.grid}, {32 * k.warps}, 0, stream>>>" in cu
        for st in k.stages:
            assert f'stage "{st.name}" of kernel "{k.name}"' in cu
            assert f"if (pid >= {st.lo} && pid < {st.hi})" in cu
    for q in plan.queues:
        assert f'// KITSUNE_QUEUE {q.qid} {q.kernel}/{q.name}:' in cu
    assert f"// KITSUNE_COUNTERS: {plan.counters}" in cu


def test_dataflow_uses_release_acquire():
    cu = _cuda("mlp_gpt3_T256", "dataflow:spatial")
    plan = build_plan(_lowered("mlp_gpt3_T256", "dataflow:spatial"), splits=False)
    assert plan.queues
    assert "ld.acquire.gpu.global.s32" in cu
    assert "red.release.gpu.global.add.s32" in cu
    assert "__threadfence(); kt_red_release(" in cu
    assert "atomicMax(err, qid + 1)" in cu  # watchdog
    assert "const int e = *(const volatile int*)P.epoch;" in cu
    # every queue: waits on filled (pop) and freed (push), releases both
    ticket = {k.name: k.ticket for k in plan.kernels}  # a kernel's counters count from its ticket
    for q in plan.queues:
        assert f'pop "{q.name}" ({q.relation})' in cu
        assert f'push "{q.name}" tile t' in cu
        assert f"P.counters + {ticket[q.kernel] + q.counter_base} + (" in cu  # filled
        assert f"P.counters + {ticket[q.kernel] + q.counter_base + q.capacity} + (" in cu  # freed
    assert "__ldcg" in cu


def test_bulk_sync_single_stage_kernels_have_no_waits():
    plan = build_plan(_lowered("nerf_65k", "bulk-sync"))
    cu = _cuda("nerf_65k", "bulk-sync")
    if not plan.queues:
        assert "kt_wait_geq(P." not in cu


def test_emit_cuda_stream():
    m = _lowered("mlp_gpt3_T256", "dataflow")
    buf = io.StringIO()
    emit_cuda(m, buf)
    assert buf.getvalue() == _cuda("mlp_gpt3_T256", "dataflow")


def test_constants_embedded():
    cu = _cuda("llama_decode_b1", "dataflow")
    assert "1e-05f" in cu  # the splat epsilon of rms_norm, as a literal


def test_unlowered_module_is_codegen_error():
    m = parse_module(_source("mlp_gpt3_T256"))
    with pytest.raises(CodegenError, match="kitsune-pipeline"):
        generate_cuda(m)


def test_unsupported_op_in_stage_is_codegen_error():
    text = _lowered_text("mlp_gpt3_T256", "dataflow")
    # a stage body op with no CUDA lowering: func.call is no graph op
    m = parse_module(text)
    from kitsune.dialects.gpu_queue import StageOp
    from xdsl.dialects import test as xtest

    st = next(o for o in m.walk() if isinstance(o, StageOp))
    block = st.body.blocks.first
    bad = xtest.TestOp(operands=[block.args[0]], result_types=[block.args[0].type])
    block.insert_op_before(bad, block.first_op)
    with pytest.raises(CodegenError, match="no CUDA"):
        generate_cuda(m)


def _compile_all(jobs: list[tuple[str, str]], tmp: Path) -> list[str]:
    nvcc = _nvcc()
    assert nvcc

    def one(job):
        name, text = job
        src = tmp / f"{name}.cu"
        src.write_text(text)
        r = subprocess.run([nvcc, "-arch=sm_90", "-c", str(src), "-o", str(tmp / f"{name}.o")],
                           capture_output=True, text=True)
        return None if r.returncode == 0 else f"{name}:\n{r.stderr[-3000:]}"

    with ThreadPoolExecutor(max_workers=max(2, min(len(jobs), os.cpu_count() or 4))) as ex:
        return [f for f in ex.map(one, jobs) if f]


@pytest.mark.skipif(_nvcc() is None, reason="nvcc not found (PATH or /usr/local/cuda/bin)")
def test_nvcc_compiles_small_workloads(tmp_path):
    jobs = [(f"{w}_{m}", _cuda(w, m)) for w in WORKLOADS for m in MODES]
    # other element types: bf16 / f16 storage, computed in float
    jobs += [(f"{w}_dataflow_bf16", _cuda(w, "dataflow", "bf16")) for w in ("mlp_gpt3_T256", "mgn_10k")]
    jobs += [("mlp_gpt3_T256_bulk_f16", _cuda("mlp_gpt3_T256", "bulk-sync", "f16"))]
    failures = _compile_all(jobs, tmp_path)
    assert not failures, "\n\n".join(failures)


def test_relation_all_waits_on_every_tile():
    text = _lowered_text("mlp_gpt3_T256", "dataflow:spatial").replace('{relation = "rows"}', '{relation = "all"}')
    m = parse_module(text)
    plan = build_plan(m)
    qs = [q for q in plan.queues if q.relation == "all"]
    assert qs
    cu = generate_cuda(m)
    for q in qs:
        assert f'pop "{q.name}" (all)' in cu
        assert f"for (long long j = 0; j < {q.ntiles}LL; ++j) {{" in cu


def test_folded_combine():
    """A combine folded into its partial (kitsune.passes.last_arrival): the partial's programs run it, the last
    arrival of each group of 8 partial tiles (an atomic on its group's counter, reset by it) calling the combine's
    stage function once for the group's tile; no program range of its own. nvcc compiles it."""
    lit = (INPUTS.parent / "convert-dataflow-to-gpu-queue-fold.mlir").read_text()
    text = lit[lit.index("\nfunc.func @rows"):lit.index("// A combine tile that reads two groups")]
    m = parse_module(text.replace("@rows", "@main"))
    from kitsune.passes.allocate_sms import AllocateSMsPass
    from kitsune.passes.convert_dataflow_to_gpu_queue import ConvertDataflowToGpuQueuePass

    ConvertDataflowToGpuQueuePass(mode="dataflow", placement="separate", fold=True).apply(make_context(), m)
    AllocateSMsPass().apply(make_context(), m)
    m.verify()
    src = generate_cuda(m)
    assert "if (pid >= 0 && pid < 32) {" in src
    assert "stage_k0_c(P, pid, e)" not in src  # no programs of its own
    assert re.search(r"int\* c = P\.counters \+ 0 \+ t / 8LL;\n\s+kt_last = atomicAdd\(c, 1\) == 7;", src)
    assert "if (kt_last) for (int j = 0; j < 1; ++j) stage_k0_c(P, (int)(t / 8LL * 1 + j), e);" in src
    if _nvcc() is not None:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            failures = _compile_all([("folded", src)], Path(tmp))
        assert not failures, "\n\n".join(failures)
