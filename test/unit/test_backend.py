"""torch.compile(model, backend="kitsune") on the CPU (generated Triton under TRITON_INTERPRET)."""

from __future__ import annotations

import logging

import pytest
import torch

import kitsune
import kitsune.backend as kb
import kitsune.compile as kc
from kitsune.models import get_workload
from test_issue13_codegen import emb_case  # the embedding and its out-of-range ids


def rel(a, b) -> float:
    return float((a.double() - b.double()).norm() / b.double().norm().clamp_min(1e-30))


@pytest.fixture(autouse=True)
def _reset():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_entry_point_and_registry():
    from importlib.metadata import entry_points

    from torch._dynamo.backends.registry import lookup_backend

    assert lookup_backend("kitsune") is kb.kitsune_backend
    eps = entry_points(group="torch_dynamo_backends")
    if "kitsune" in eps.names:  # an installed checkout
        assert eps["kitsune"].value == "kitsune.backend:kitsune_backend"


@pytest.mark.parametrize("mode", ["dataflow", "bulk-sync"])
def test_suite_model(mode):
    model, inputs = get_workload("nerf_65k").build(scale=0.05, seed=0)
    n0 = len(kb.records())
    c = torch.compile(model, backend="kitsune", options={"mode": mode, "gpu": "h200"})
    with torch.no_grad():
        y = c(*inputs)
        ref = model(*inputs)
    assert rel(y, ref) < 1e-4
    recs = kb.records()[n0:]
    assert [r.status for r in recs] == ["kitsune"]
    cg = recs[0].compiled
    assert cg.mode == mode and cg.gpu == "h200"
    assert "gpu=h200" in cg.report()
    # the weights went in once, as parameters, not as per-call inputs
    assert len(cg.program.input_names) == 1


class _Break(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 32)
        self.b = torch.nn.Linear(32, 8)

    def forward(self, x):
        h = torch.relu(self.a(x))
        torch._dynamo.graph_break()
        return torch.nn.functional.gelu(self.b(h))


def test_graph_break():
    torch.manual_seed(0)
    m = _Break().eval()
    x = torch.randn(4, 16)
    ex = kitsune.explain(m, x)
    assert len(ex.graphs) == 2 and len(ex.compiled) == 2, str(ex)
    assert len(ex.graph_breaks) >= 1
    c = torch.compile(m, backend="kitsune")
    with torch.no_grad():
        assert rel(c(x), m(x)) < 1e-5


class _Unsupported(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 8)

    def forward(self, x):
        return torch.sort(self.a(x), dim=-1).values  # UNSUPPORTED-LINE


def test_unsupported_op_falls_back(caplog):
    torch.manual_seed(0)
    m = _Unsupported().eval()
    x = torch.randn(4, 16)
    c = torch.compile(m, backend="kitsune")
    with caplog.at_level(logging.WARNING, logger="kitsune.backend"), torch.no_grad():
        y = c(x)
        assert rel(y, m(x)) < 1e-5
    msgs = "\n".join(r.getMessage() for r in caplog.records)
    assert "falls back to Inductor" in msgs
    assert "aten.sort" in msgs
    assert "test_backend.py" in msgs and "UNSUPPORTED-LINE" in msgs
    ex = kitsune.explain(m, x)
    assert len(ex.fell_back) == 1 and "aten.sort.default" in ex.fell_back[0].unsupported
    assert "inductor" in str(ex)


def test_no_fallback_option_raises():
    m = _Unsupported().eval()
    c = torch.compile(m, backend="kitsune", options={"fallback": False})
    with pytest.raises(Exception, match="sort"), torch.no_grad():
        c(torch.randn(4, 16))


def test_unknown_option():
    c = torch.compile(_Unsupported().eval(), backend="kitsune", options={"bogus": 1})
    with pytest.raises(Exception, match="bogus"), torch.no_grad():
        c(torch.randn(4, 16))


class _MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 32)
        self.b = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.b(torch.nn.functional.gelu(self.a(x)))


def test_new_shapes_hit_the_compile_cache():
    torch.manual_seed(0)
    m = _MLP().eval()
    c = torch.compile(m, backend="kitsune")
    kc.clear_cache()
    seen = []
    with torch.no_grad():
        for n in (4, 6, 8, 4, 6):
            x = torch.randn(n, 16)
            assert rel(c(x), m(x)) < 1e-5
            seen.append(len(kc._lowered))
    # 4, 6 and 8 rows: three lowered programs; the second 4 and 6 reuse theirs
    assert seen == [1, 2, 3, 3, 3]


def test_training_graph_compiles_forward_and_backward():
    """Grad mode on, parameters require grad: aot_autograd's forward and backward both through Kitsune
    (kitsune.training; test_training.py has the gradient tests)."""
    torch.manual_seed(0)
    m = _MLP()
    c = torch.compile(m, backend="kitsune")
    x = torch.randn(4, 16)
    c(x).sum().backward()
    got = m.a.weight.grad.clone()
    m.zero_grad()
    m(x).sum().backward()
    assert rel(got, m.a.weight.grad) < 1e-5
    rec = kb.records()[-1]
    assert rec.status == "kitsune" and rec.backward is not None and rec.backward.role == "backward"


# ------------------------------------------------------------------ GPU (pytest -m gpu)


@pytest.mark.gpu
@pytest.mark.parametrize("workload", ["mlp_gpt3_T256", "llama_decode_b1", "nerf_65k", "inception_b8"])
@pytest.mark.parametrize("mode", ["dataflow", "bulk-sync"])
def test_gpu_backend(workload, mode):
    model, inputs = get_workload(workload).build(scale=1.0, dtype=torch.bfloat16, device="cuda", seed=0)
    n0 = len(kb.records())
    c = torch.compile(model, backend="kitsune", options={"mode": mode, "cuda_graph": True})
    from kitsune.bench.harness import get_source

    src = get_source(workload)
    with torch.no_grad():
        for seed in (1, 2):
            x = src.fresh(inputs, 1.0, torch.bfloat16, "cuda", seed)
            out, ref = c(*x), model(*x)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            refs = ref if isinstance(ref, (tuple, list)) else (ref,)
            for o, r in zip(outs, refs):
                assert rel(o.float(), r.float()) < 2e-2
    statuses = [r.status for r in kb.records()[n0:]]
    print(workload, mode, statuses)
    assert "kitsune" in statuses


def test_first_call_failure_falls_back(monkeypatch, caplog):
    import kitsune.compile as kcomp

    def boom(*a, **k):
        raise RuntimeError("triton compile failed (simulated)")

    monkeypatch.setattr(kcomp, "_program_for", boom)
    torch.manual_seed(0)
    m = _MLP().eval()
    x = torch.randn(3, 16)
    c = torch.compile(m, backend="kitsune")
    with caplog.at_level(logging.WARNING, logger="kitsune.backend"), torch.no_grad():
        assert rel(c(x), m(x)) < 1e-5
        assert rel(c(x), m(x)) < 1e-5
    assert "simulated" in caplog.text
    assert "fallback" in kb.records()[-1].status


def test_out_of_range_index_raises_and_stays_on_kitsune():
    """A bad index on the first call is the input's fault, not the program's: KitsuneIndexError, no fallback."""
    m, i, bad = emb_case(at=(0, 1), bad_id=10)
    c = torch.compile(m, backend="kitsune", options={"mode": "bulk-sync"})
    with torch.no_grad():
        with pytest.raises(IndexError, match="graph.embedding") as e:
            c(bad)
        assert type(e.value).__name__ == "KitsuneIndexError"
        torch.testing.assert_close(c(i), m(i))
    assert kb.records()[-1].status == "kitsune"
