"""kitsune.runtime / kitsune.compile: loading generated modules, inputs, outputs, caching, report.

A hand-written module of the generated interface (``FAKE``) exercises the runtime alone; real models
go through ``kitsune.compile`` once ``kitsune.codegen.triton_gen`` exists. Everything runs under Triton's
CPU interpreter when no GPU is present: shapes stay tiny.
"""

from __future__ import annotations

import os
import re
import time
import warnings

import numpy as np
import pytest

import torch

from kitsune.runtime import InputError, KitsuneRuntimeError, Program, load_source
from kitsune.runtime import program as rt

warnings.filterwarnings("ignore", message=".*Triton's CPU interpreter.*")

# One device kind per process (Triton decides once whether jit functions are compiled or interpreted):
# on a GPU machine the fake-module tests run on the GPU, elsewhere under Triton's CPU interpreter.
DEV = "cuda" if torch.cuda.is_available() else "cpu"
INTERP = DEV == "cpu"
only_interp = pytest.mark.skipif(not INTERP, reason="CPU interpreter only (a CUDA GPU is present)")

FAKE = '''
"""A fake generated module: y = x * w + b + idx[:, None] (one kernel, one program per row), z = y + max(w)."""
import os
import torch
import triton
import triton.language as tl

IMPORTED_WITH_INTERPRET = os.environ.get("TRITON_INTERPRET")
NONCE = {nonce!r}


class QueueTimeout(RuntimeError):
    pass


TENSORS = {{
    "lin_weight": ((8,), "f32", "parameter"),
    "lin_bias": ((8,), "f32", "parameter"),
    "x": ((4, 8), "f32", "input"),
    "idx": ((4,), "i64", "input"),
    "k0_out0": ((4, 8), "f32", "buffer"),
    "k0_out1": ((4, 8), "f32", "buffer"),
}}
LABELS = {{"lin_weight": "lin.weight", "lin_bias": "lin.bias", "x": "x", "idx": "idx",
          "k0_out0": "k0 result #0", "k0_out1": "k0 result #1"}}
ARGS = ["lin_weight", "lin_bias", "x", "idx"]
OUTPUTS = ["k0_out0", "k0_out1"]
QUEUES = [("q0", "k0", 4, 4)]


@triton.jit
def k0(w_ptr, b_ptr, x_ptr, idx_ptr, y_ptr, z_ptr, epoch_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + pid * N + cols)
    w = tl.load(w_ptr + cols)
    b = tl.load(b_ptr + cols)
    s = tl.load(idx_ptr + pid).to(tl.float32)
    y = x * w + b + s
    tl.store(y_ptr + pid * N + cols, y)
    tl.store(z_ptr + pid * N + cols, y + tl.max(w, axis=0))  # tl.max: a jit function of Triton's library


KERNELS = [dict(name="k0", fn=k0, grid=4, num_warps=4, tensors=["lin_weight", "lin_bias", "x", "idx", "k0_out0",
                "k0_out1"], signature={{}}, constexprs={{"N": 8}})]


def allocate(device):
    return {{"k0_out0": torch.empty(4, 8, device=device), "k0_out1": torch.empty(4, 8, device=device),
            "epoch": torch.zeros(1, dtype=torch.int32, device=device),
            "err": torch.zeros(2, dtype=torch.int32, device=device), "watchdogs": []}}


def launch(state, tensors, watchdog=0):
    for n in ARGS:
        t = tensors[n]
        assert t.is_contiguous() and t.dtype == {{"f32": torch.float32, "i64": torch.int64}}[TENSORS[n][1]], n
    k0[(4,)](tensors["lin_weight"], tensors["lin_bias"], tensors["x"], tensors["idx"], state["k0_out0"],
             state["k0_out1"], state["epoch"], N=8)
    state["epoch"] += 1
    state["watchdogs"].append(watchdog)
    return [state["k0_out0"], state["k0_out1"]]


def check(state):
    if state["epoch"].is_cuda:
        torch.cuda.synchronize()
    if int(state["err"][0]) != 0:
        raise QueueTimeout(f"queue q0 of kernel k0 timed out (program {{int(state['err'][1])}})")
'''


def fake_source(nonce: str = "") -> str:
    return FAKE.format(nonce=nonce)


WEIGHTS = {"lin.weight": np.arange(8, dtype=np.float32) / 8, "lin.bias": np.full(8, 0.5, np.float32)}


def fake_ref(x, idx):
    w = torch.from_numpy(WEIGHTS["lin.weight"])
    b = torch.from_numpy(WEIGHTS["lin.bias"])
    y = x.float() * w + b + idx.float()[:, None]
    return y, y + w.max()


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("KITSUNE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "kitsune-cache"))


def _inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(4, 8, generator=g), torch.tensor([0, 1, 2, 3])


# ------------------------------------------------------------------ the runtime with the fake module


def test_fake_program_matches_reference():
    p = Program(fake_source(), WEIGHTS, DEV)
    assert p.interpret == INTERP and p.input_names == ["x", "idx"] and p.parameter_names == ["lin_weight", "lin_bias"]
    x, idx = _inputs()
    y, z = p(x, idx)
    ry, rz = fake_ref(x, idx)
    torch.testing.assert_close(y.cpu(), ry)
    torch.testing.assert_close(z.cpu(), rz)
    assert int(p.state["epoch"][0]) == 1
    p(x, idx)
    assert int(p.state["epoch"][0]) == 2  # the module's epoch, bumped once per launch
    assert p.state["watchdogs"] == [0, 0]
    assert "lin.weight" in p.parameters()


def test_loader_writes_cache_file_and_sets_interpret(tmp_path):
    src = fake_source("loader")
    m = load_source(src, interpret=INTERP, directory=tmp_path)
    assert m.IMPORTED_WITH_INTERPRET == ("1" if INTERP else None)
    files = list(tmp_path.glob("kitsune_*.py"))
    assert len(files) == 1 and files[0].read_text() == src
    assert files[0].name == f"kitsune_{rt.source_hash(src)}.py"
    assert load_source(src, interpret=INTERP, directory=tmp_path) is m  # imported once


@only_interp
def test_interpreter_warning_once(monkeypatch):
    monkeypatch.setattr(rt, "_warned_interpreter", False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        Program(fake_source(), WEIGHTS, DEV)
        Program(fake_source(), WEIGHTS, DEV)
    msgs = [str(x.message) for x in w if "interpreter" in str(x.message)]
    assert len(msgs) == 1 and "slowly" in msgs[0]


def test_input_validation_errors():
    p = Program(fake_source(), WEIGHTS, DEV)
    x, idx = _inputs()
    with pytest.raises(InputError, match=r"expected 2 input\(s\) \(x \(4, 8\) float32, idx \(4,\) int64\), got 1"):
        p(x)
    with pytest.raises(InputError, match=r"input #0 'x': expected shape \(4, 8\), got \(4, 9\)"):
        p(torch.zeros(4, 9), idx)
    with pytest.raises(InputError, match=r"input #0 'x': expected shape \(4, 8\), got \(8,\)"):
        p(torch.zeros(8), idx)
    with pytest.raises(InputError, match=r"input #1 'idx': expected dtype int64, got float32"):
        p(x, idx.float())
    with pytest.raises(InputError, match=r"input #0 'x': expected a tensor, got str"):
        p("x", idx)
    assert isinstance(InputError("m"), ValueError)


def test_inputs_cast_and_made_contiguous():
    p = Program(fake_source(), WEIGHTS, DEV)
    x, idx = _inputs()
    xt = x.t().contiguous().t()  # non-contiguous view with the same values
    assert not xt.is_contiguous()
    y, _ = p(xt.double(), idx.int())  # f64 -> f32, i32 -> i64
    torch.testing.assert_close(y.cpu(), fake_ref(x, idx)[0])
    y2, _ = p(x.numpy(), idx.numpy())  # numpy arrays are accepted
    torch.testing.assert_close(y2, y)


def test_well_formed_inputs_are_taken_as_they_are(monkeypatch):
    """The per-call fast path: contiguous tensors of the program's shape, dtype and device are used without a copy
    (one requiring grad through a detached alias); anything else goes through the checked path."""
    p = Program(fake_source(), WEIGHTS, DEV)
    x, idx = _inputs()
    x, idx = x.to(DEV), idx.to(DEV)
    checked = []
    real = p._prepare_checked
    monkeypatch.setattr(p, "_prepare_checked", lambda ins: checked.append(1) or real(ins))
    xg = x.clone().requires_grad_(True)
    ins = p._prepare([xg, idx])
    assert not checked and ins["idx"] is idx and ins["x"].data_ptr() == xg.data_ptr() and not ins["x"].requires_grad
    y, _ = p(xg, idx)
    torch.testing.assert_close(y.cpu(), fake_ref(x.cpu(), idx.cpu())[0])
    assert not y.requires_grad and not checked
    p(x.t().contiguous().t(), idx)  # not contiguous: checked (and copied)
    p(x, idx.int())  # another dtype: checked (and converted)
    assert len(checked) == 2


def test_missing_and_misshapen_weights():
    with pytest.raises(KitsuneRuntimeError, match=r"no value for parameter\(s\) 'lin.bias'"):
        Program(fake_source(), {"lin.weight": WEIGHTS["lin.weight"]}, DEV)
    with pytest.raises(KitsuneRuntimeError, match=r"parameter 'lin.weight': expected shape \(8,\), got \(9,\)"):
        Program(fake_source(), {**WEIGHTS, "lin.weight": np.zeros(9, np.float32)}, DEV)


def test_copy_outputs_semantics():
    x, idx = _inputs(0)
    x2, _ = _inputs(1)
    p = Program(fake_source(), WEIGHTS, DEV)
    a, _ = p(x, idx)
    b, _ = p(x2, idx)
    torch.testing.assert_close(a.cpu(), fake_ref(x, idx)[0])  # a clone: not overwritten by the next call
    assert a.data_ptr() != p.state["k0_out0"].data_ptr()
    q = Program(fake_source(), WEIGHTS, DEV, copy_outputs=False)
    c, _ = q(x, idx)
    assert c.data_ptr() == q.state["k0_out0"].data_ptr()
    q(x2, idx)
    torch.testing.assert_close(c.cpu(), fake_ref(x2, idx)[0])  # the internal buffer, overwritten
    d, _ = p(x, idx, copy_outputs=False)  # per-call override
    assert d.data_ptr() == p.state["k0_out0"].data_ptr()


def test_debug_mode_watchdog_and_check():
    p = Program(fake_source(), WEIGHTS, DEV, debug=True)
    x, idx = _inputs()
    p(x, idx)
    assert p.state["watchdogs"] == [rt.DEFAULT_WATCHDOG]
    p.state["err"][0] = 1  # as if a watchdog had fired
    with pytest.raises(RuntimeError, match="queue q0 of kernel k0 timed out") as e:
        p(x, idx)
    assert type(e.value).__name__ == "QueueTimeout"


def test_cuda_graph_needs_cuda():
    with pytest.raises(KitsuneRuntimeError, match="cuda_graph=True needs a CUDA device"):
        Program(fake_source(), WEIGHTS, "cpu", cuda_graph=True)


def test_one_device_kind_per_process(monkeypatch):
    other = "gpu" if INTERP else "interpreter"
    monkeypatch.setattr(rt, "_mode", other)
    with pytest.raises(KitsuneRuntimeError, match="use one device kind per process"):
        rt._use_mode(INTERP)


@only_interp
def test_interpreter_after_triton_was_imported(tmp_path):
    """Triton imported (compiled mode) before Kitsune needs its interpreter: Kitsune imports it again."""
    import subprocess
    import sys

    code = f"""
import sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {os.path.dirname(__file__)!r})
import triton.language as tl
from triton.runtime.jit import JITFunction
assert isinstance(tl.standard.sum, JITFunction)
import torch
from test_runtime import Program, fake_source, fake_ref, WEIGHTS, _inputs
p = Program(fake_source("reimport"), WEIGHTS, "cpu")
x, idx = _inputs()
y, z = p(x, idx)
torch.testing.assert_close(z, fake_ref(x, idx)[1])
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-3000:]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_fake_program_on_gpu_with_cuda_graph():
    x, idx = _inputs()
    p = Program(fake_source("gpu"), WEIGHTS, "cuda", cuda_graph=True)
    assert not p.interpret and p.module.IMPORTED_WITH_INTERPRET is None
    for seed in range(3):
        x, idx = _inputs(seed)
        y, z = p(x, idx + seed)
        ry, rz = fake_ref(x, idx + seed)
        torch.testing.assert_close(y.cpu(), ry)
        torch.testing.assert_close(z.cpu(), rz)
    assert int(p.state["epoch"][0]) == 4  # warm-up + 3 replays (capture does not run)


# ------------------------------------------------------------------ kitsune.compile on real models

def _needs_codegen():
    try:
        import kitsune.codegen.triton_gen  # noqa: F401
    except ImportError:
        pytest.skip("kitsune.codegen.triton_gen not available yet")


class MLP(torch.nn.Module):
    def __init__(self, d_in=16, d_hidden=32, d_out=8):
        super().__init__()
        self.fc1 = torch.nn.Linear(d_in, d_hidden)
        self.fc2 = torch.nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class TwoOut(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 8)

    def forward(self, x):
        h = self.fc(x)
        return h, torch.relu(h)


def _rel(got, want) -> float:
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    return float((got - want).norm() / max(want.norm(), 1e-30))


@pytest.mark.parametrize("mode", ["dataflow", "bulk-sync"])
def test_compile_mlp_matches_torch(mode):
    _needs_codegen()
    import kitsune

    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(4, 16)
    cm = kitsune.compile(model, (x,), mode=mode)
    for seed in range(2):
        xi = torch.randn(4, 16, generator=torch.Generator().manual_seed(seed))
        y = cm(xi)
        assert isinstance(y, torch.Tensor) and y.shape == (4, 8)
        assert _rel(y, model(xi)) < 1e-4
    assert "gpu_queue.program" in cm.lowered and "triton" in cm.source


@pytest.mark.parametrize("mode", ["dataflow", "bulk-sync"])
def test_outputs_are_written_into_new_tensors(mode):
    """A call keeps its outputs: the kernels write them into tensors allocated for the call, not into the
    program's buffers (which a clone would then copy: a full read and write of every output), so an earlier
    call's outputs survive a later call, and two outputs of one value are two tensors."""
    _needs_codegen()
    import kitsune

    torch.manual_seed(0)
    model = TwoOut().eval()
    x = torch.randn(4, 16)
    cm = kitsune.compile(model, (x,), mode=mode)
    bufs = cm.program.state["buffers"]
    outs = [n for n in cm.program.output_names if n in bufs]
    assert outs
    for n in outs:
        bufs[n].fill_(float("nan"))  # the program's own output buffers: untouched by a copying call
    h1, r1 = cm(x)
    h2, r2 = cm(x + 1)
    want1, want2 = model(x), model(x + 1)
    assert _rel(h1, want1[0]) < 1e-4 and _rel(r1, want1[1]) < 1e-4  # not overwritten by the second call
    assert _rel(h2, want2[0]) < 1e-4 and _rel(r2, want2[1]) < 1e-4
    assert all(torch.isnan(bufs[n]).all() for n in outs)
    assert h1.data_ptr() != h2.data_ptr() and h1.data_ptr() != r1.data_ptr()
    y = cm(x, copy_outputs=False)[0]  # the buffers themselves, on request
    assert any(y.data_ptr() == bufs[n].data_ptr() for n in outs)


def test_compile_times_and_own_weights():
    """compile_times names every phase that ran; the program's weights come straight from the model's tensors
    (no numpy round trip) but are copies: changing the model afterwards does not change the program."""
    _needs_codegen()
    import kitsune

    from kitsune.compile import clear_cache

    clear_cache()  # an MLP lowered by an earlier test would come from the cache: no pass would run
    torch.manual_seed(2)
    model = MLP().eval()
    x = torch.randn(4, 16)
    cm = kitsune.compile(model, (x,), mode="bulk-sync", cache=False)
    ph = cm.compile_times
    for k in ("torch.export", "import", "graph-canonicalize", "kitsune-form-regions", "kitsune-allocate-sms",
              "verify", "codegen", "load module", "upload weights"):
        assert k in ph and ph[k] >= 0, k
    assert "triton compile" not in ph  # the interpreter compiles nothing
    want = model(x)
    params = cm.program.parameters()
    assert params and all(p.data_ptr() != q.data_ptr() for p in params.values() for q in model.parameters())
    with torch.no_grad():
        for q in model.parameters():
            q.mul_(2.0)
    assert _rel(cm(x), want) < 1e-4


def test_compile_tuple_output_and_report():
    _needs_codegen()
    import kitsune

    torch.manual_seed(1)
    model = TwoOut().eval()
    x = torch.randn(4, 16)
    cm = kitsune.compile(model, (x,))
    out = cm(x)
    assert isinstance(out, tuple) and len(out) == 2
    for got, want in zip(out, model(x)):
        assert _rel(got, want) < 1e-4
    r = cm.report()
    assert "mode=dataflow" in r and "gpu=h100" in r
    assert "kernel k0: grid" in r and "stage" in r and "pids" in r and "bound" in r
    assert "estimated time" in r and "GFLOP" in r and "MB" in r


def test_compile_report_lists_the_temporal_kernel():
    """The MLP on 4 rows cannot pipeline: placement=auto runs both layers in one temporal kernel (no queue)."""
    _needs_codegen()
    import kitsune

    model = MLP().eval()
    cm = kitsune.compile(model, (torch.randn(4, 16),), mode="dataflow")
    r = cm.report()
    assert "kernel k0: grid" in r and "linear_0" in r and "linear_1" in r
    assert "1 kernel(s), 2 stage(s), 0 queue(s)" in r


def test_compile_cache_same_object_and_fast():
    _needs_codegen()
    import kitsune
    from kitsune import compile as kc  # noqa: F401  (the module is callable too)

    model = MLP().eval()
    x = torch.randn(4, 16)
    cm = kitsune.compile(model, (x,))
    t = time.perf_counter()
    cm2 = kitsune.compile(model, (torch.randn(4, 16),))
    assert cm2 is cm and time.perf_counter() - t < 0.05
    # another instance of the same architecture: the lowering and source are shared, the weights are its own
    other = MLP().eval()
    cm3 = kitsune.compile(other, (x,))
    assert cm3 is not cm and cm3.source is cm.source
    assert _rel(cm3(x), other(x)) < 1e-4 and _rel(cm(x), model(x)) < 1e-4
    # in-place weight change -> recompiled with the new weights
    with torch.no_grad():
        model.fc1.weight.mul_(2)
    cm4 = kitsune.compile(model, (x,))
    assert cm4 is not cm and _rel(cm4(x), model(x)) < 1e-4
    # different shapes -> a different program
    cm5 = kitsune.compile(model, (torch.randn(2, 16),))
    assert cm5 is not cm4 and cm5(torch.randn(2, 16)).shape == (2, 8)


def test_compile_input_errors():
    _needs_codegen()
    import kitsune

    model = MLP().eval()
    cm = kitsune.compile(model, (torch.randn(4, 16),))
    with pytest.raises(InputError, match=r"input #0 'x': expected shape \(4, 16\), got \(3, 16\)"):
        cm(torch.randn(3, 16))
    with pytest.raises(InputError, match=r"expected 1 argument"):
        cm(torch.randn(4, 16), torch.randn(4, 16))


def test_compile_unsupported_model_raises_importer_error():
    from kitsune.frontend.torch_export import UnsupportedOpsError

    import kitsune

    class Bad(torch.nn.Module):
        def forward(self, x):
            return torch.fft.fft(x).real

    with pytest.raises(UnsupportedOpsError):
        kitsune.compile(Bad(), (torch.randn(4, 8),))


def test_compile_rejects_bad_mode():
    import kitsune

    with pytest.raises(ValueError, match="mode must be one of"):
        kitsune.compile(MLP(), (torch.randn(4, 16),), mode="fast")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("mode", ["dataflow", "bulk-sync"])
@pytest.mark.parametrize("cuda_graph", [False, True])
def test_compile_mlp_on_gpu(mode, cuda_graph):
    _needs_codegen()
    import kitsune

    torch.manual_seed(2)
    model = MLP(128, 512, 64).eval()
    x = torch.randn(256, 128)
    cm = kitsune.compile(model, (x,), mode=mode, device="cuda", cuda_graph=cuda_graph, debug=True)
    assert not cm.program.interpret
    for seed in range(3):
        xi = torch.randn(256, 128, generator=torch.Generator().manual_seed(seed))
        y = cm(xi)
        assert y.is_cuda and _rel(y, model(xi)) < 1e-4, (seed, _rel(y, model(xi)))
    y1 = cm(x, copy_outputs=False)
    y2 = cm(x + 1, copy_outputs=False)
    assert y1.data_ptr() == y2.data_ptr()
    assert "device cuda" in cm.report()


def test_programmatic_dependent_launch_in_every_kernel(monkeypatch):
    """Every kernel waits on its predecessor (griddepcontrol.wait) before it touches what the launch writes, and lets
    the next kernel launch after its work (PDL 2) or at its start (1). A kernel none of whose programs waits on
    another (every bulk-sync kernel) waits inside its stages, after its loads of parameters and inputs (loads before
    waits), and reads the epoch and moves it on only after a wait of its own. The runtime asks for PDL only on sm_90+
    CUDA devices (the interpreter passes nothing: its kernels run the PDL-free path), and never for the launch's
    first kernel (it may read an input the previous launch's last kernel wrote)."""
    _needs_codegen()
    import kitsune

    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(4, 16)
    cm = kitsune.compile(model, (x,), mode="bulk-sync", cache=False)
    src = cm.source
    for k in cm.program.module.KERNELS:
        body = src.split(f"def {k['name']}(", 1)[1].split("\n\n", 1)[0]
        call = re.search(rf"\n\s+{k['name']}_\w+\(pid, .*\)\n", body)
        assert call.group(0).rstrip().endswith(", PDL)")  # the stage waits itself
        call = call.start()
        wait = body.index("gdc_wait()", call)  # a program that ran no stage waits here
        assert body.index("tl.load(epoch_ptr)") > wait
        assert body.rindex("gdc_launch_dependents()") > body.rindex(f"{k['name']}_")  # PDL 2: after the stage calls
        assert k["constexprs"]["PDL"] == 2 and k["signature"]["PDL"] == "constexpr"  # (what sm_90 runs untuned)
        stage = src.split(f"def {k['name']}_", 1)[1].split("\n@triton.jit", 1)[0]
        written = [n for n in k["tensors"] if cm.program.module.TENSORS[n][2] not in ("parameter", "input", "constant")]
        touch = [m.start() for m in re.finditer(r"tl\.store\(|tl\.load\((\w+)", stage)
                 if m.group(1) is None or m.group(1) in written]
        assert touch and stage.index("gdc_wait()") < min(touch)
        loads = [m.start() for m in re.finditer(r"tl\.load\((\w+)", stage) if m.group(1) not in written]
        assert loads and min(loads) < stage.index("gdc_wait()")  # the weights' loads go first
    assert cm.program.state["pdl"] == 0  # on the CPU
    monkeypatch.setenv("KITSUNE_PDL", "1")
    mod = cm.program.module
    assert mod._pdl(torch.device("cpu")) == 0
    assert _rel(cm(x), model(x)) < 1e-4


def test_tickets_only_where_a_program_waits():
    """A kernel none of whose programs waits on another (every bulk-sync kernel) takes the CTA's own id, no ticket
    (one atomic per program on one counter); a dataflow kernel whose stages spin on counters takes its program
    ids from the ticket, in start order. Both compute the model, launch after launch (the epoch moves on)."""
    _needs_codegen()
    import kitsune
    from kitsune.bench.harness import flatten, get_source

    model, inputs = get_source("mlp_gpt3_T256").build(0.02, torch.float32, "cpu", 0)
    model.eval()
    want = model(*inputs)
    for mode, placement in (("bulk-sync", "auto"), ("dataflow", "temporal")):
        cm = kitsune.compile(model, inputs, mode=mode, placement=placement, device="cpu")
        src = cm.source
        for k in cm.program.module.KERNELS:
            body = src.split(f"def {k['name']}(", 1)[1].split("\n\n", 1)[0]
            stages = "".join(s.split("@triton.jit")[0] for s in src.split(f"def {k['name']}_")[1:])
            waits = any(w in stages for w in ("_pop_wait(", "_await_stages(", "_push_wait(", "_acquire("))
            assert ("pid = tl.atomic_add(ctr + ticket, 1)" in body) == waits, (mode, k["name"])
            assert ("pid = tl.program_id(0)" in body) != waits, (mode, k["name"])
        if mode == "dataflow":
            assert "pid = tl.atomic_add(ctr + ticket, 1)" in src  # (the temporal kernel waits)
        for _ in range(2):
            torch.testing.assert_close(flatten(cm(*inputs))[0], want, rtol=1e-4, atol=1e-4)


def test_compile_placement_option():
    """kitsune.compile(placement=...): each placement is its own compile (cache key) and computes the same; an
    unknown one is refused with the choices."""
    import kitsune
    from kitsune.bench.harness import flatten, get_source

    model, inputs = get_source("mlp_gpt3_T256").build(0.02, torch.float32, "cpu", 0)
    model.eval()
    want = model(*inputs)
    got = {}
    for placement in ("auto", "spatial", "temporal"):
        cm = kitsune.compile(model, inputs, mode="dataflow", placement=placement, device="cpu")
        got[placement] = cm
        torch.testing.assert_close(flatten(cm(*inputs))[0], want, rtol=1e-4, atol=1e-4)
    assert got["spatial"] is not got["temporal"] and got["spatial"].lowered != got["temporal"].lowered
    with pytest.raises(ValueError, match="placement must be one of auto, spatial, temporal, separate, got 'diagonal'"):
        kitsune.compile(model, inputs, mode="dataflow", placement="diagonal", device="cpu")


def test_separate_placement_and_a_tuned_placement_from_the_database(tmp_path, monkeypatch):
    """placement='separate' lowers a dataflow program into bulk-sync's kernels (no queue, no temporal stage) and
    computes the same; placement='auto' takes a program's measured placement from the tuning database
    (``kitsune-tune --placement``), keyed by the imported graph's hash, and the cost model's choice without one."""
    import kitsune
    from kitsune.bench.harness import flatten, get_source
    from kitsune.compile import clear_cache
    from kitsune.schedule import db

    monkeypatch.setenv("KITSUNE_CACHE_DIR", str(tmp_path))
    model, inputs = get_source("nerf_65k").build(0.002, torch.float32, "cpu", 0)
    model.eval()
    want = model(*inputs)
    sep = kitsune.compile(model, inputs, mode="dataflow", placement="separate", device="cpu")
    bulk = kitsune.compile(model, inputs, mode="bulk-sync", device="cpu")
    torch.testing.assert_close(flatten(sep(*inputs))[0], want, rtol=1e-4, atol=1e-4)
    import re

    def ops(text):
        return sorted(set(re.findall(r"gpu_queue\.[a-z_]+", text)))

    assert ops(sep.lowered) == ops(bulk.lowered) and "temporal" not in sep.lowered  # no queue / counter ops
    assert sep.lowered.count("gpu_queue.kernel") == bulk.lowered.count("gpu_queue.kernel") > 1
    assert sep.source == bulk.source  # bulk-sync's program exactly (tiles not aligned for queues either)
    auto = kitsune.compile(model, inputs, mode="dataflow", device="cpu")
    assert auto.placement == "auto" and auto.lowered.count("gpu_queue.kernel") < sep.lowered.count("gpu_queue.kernel")
    db.store_placement(auto.graph_hash, "h100", "separate", {"separate": 0.1, "temporal": 0.2})
    clear_cache()
    tuned = kitsune.compile(model, inputs, mode="dataflow", device="cpu", cache=False)
    assert tuned.placement == "separate" and tuned.lowered == sep.lowered
    torch.testing.assert_close(flatten(tuned(*inputs))[0], want, rtol=1e-4, atol=1e-4)


def test_database_lookup_across_split_ok(tmp_path, monkeypatch):
    """A tuned winner measured where a split was allowed serves a problem where it is not (a contraction that took
    a small one as its prologue: DLRM's bottom layers) when it does not split; a split winner does not."""
    from dataclasses import replace

    from kitsune.schedule import db
    from kitsune.schedule.configs import GemmConfig, Problem

    monkeypatch.setenv("KITSUNE_CACHE_DIR", str(tmp_path))
    p = Problem("gemm", M=2000, N=200, K=500, elem_bytes=2, split_ok=True)
    q = Problem("gemm", M=2000, N=200, K=600, elem_bytes=2, split_ok=True)
    db.store(p, "h100", GemmConfig(BM=64, BN=64, BK=64, SPLIT=1, stages=4, warps=4), 0.005, 0.006)
    db.store(q, "h100", GemmConfig(BM=64, BN=64, BK=64, SPLIT=4, stages=4, warps=4), 0.005, 0.006)
    got = db.lookup(replace(p, split_ok=False), "h100")
    assert got is not None and (got.BM, got.BN, got.SPLIT) == (64, 64, 1)
    assert db.lookup(replace(q, split_ok=False), "h100") is None
    assert db.lookup(q, "h100").SPLIT == 4


def test_launch_setting_from_the_database(tmp_path, monkeypatch):
    """A program's programmatic-dependent-launch setting on a device that has it: KITSUNE_PDL where set, else the
    measured one (``kitsune-tune --launch``, per graph and mode), else ``DEFAULT_PDL``; a device without it (the
    CPU interpreter) keeps 0 whatever the database says."""
    import kitsune
    from kitsune.bench.harness import get_source
    from kitsune.codegen.triton_gen.early_loads import DEFAULT_PDL
    from kitsune.compile import _set_launch
    from kitsune.schedule import db

    monkeypatch.setenv("KITSUNE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("KITSUNE_PDL", raising=False)
    model, inputs = get_source("nerf_65k").build(0.002, torch.float32, "cpu", 0)
    cm = kitsune.compile(model.eval(), inputs, mode="bulk-sync", device="cpu", cache=False)
    low, prog = cm._low, cm.program
    assert prog.state["pdl"] == 0 and not prog.state["pdl_capable"]
    db.store_launch(cm.graph_hash, "bulk-sync", "h100", 1, {0: 50.0, 1: 45.0, 2: 49.0})
    db.store_launch(cm.graph_hash, "dataflow", "h100", 0, {0: 40.0, 1: 49.0, 2: 45.0})
    assert db.lookup_launch(cm.graph_hash, "bulk-sync", "h100") == 1
    assert db.lookup_launch(cm.graph_hash, "dataflow", "h100") == 0
    _set_launch(low, prog)
    assert prog.state["pdl"] == 0  # not capable: untouched
    prog.state["pdl_capable"] = True
    _set_launch(low, prog)
    assert prog.state["pdl"] == 1  # this graph's bulk-sync entry
    monkeypatch.setenv("KITSUNE_PDL", "0")
    prog.state["pdl"] = 0
    _set_launch(low, prog)
    assert prog.state["pdl"] == 0  # the environment wins
    monkeypatch.delenv("KITSUNE_PDL")
    monkeypatch.setenv("KITSUNE_TUNING_DB", "0")
    _set_launch(low, prog)
    assert prog.state["pdl"] == DEFAULT_PDL == 2
