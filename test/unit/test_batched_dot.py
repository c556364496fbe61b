"""Batched dots of small matrices (DLRM's interaction) and the launch's concurrent branches.

* ``batched_small`` problems get whole matrices of several batch entries per tile (``GemmConfig.BB``) and one
  batched ``tl.dot`` (a 3-D frame in ``DotTemplate``);
* a concat of several computed results joins none of its producers: the bmm reads it in place (a memory-only
  prologue), and a reshape that merges the bmm's columns is left to its consumer (``merges_columns``);
* ``_branches`` in the generated launch: independent kernels on separate streams, every dependence kept.
"""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest

from kitsune.context import make_context, parse_module
from kitsune.interpreter import interpret
from kitsune.passes.form_regions import FormRegionsPass
from kitsune.schedule.configs import GemmConfig, Problem, batched_small, default_config


def test_batched_small_problem_config_and_tile():
    p = Problem("gemm", M=9, N=12, K=40, batch=2100)
    assert batched_small(p)
    assert not batched_small(Problem("gemm", M=9, N=128, K=40, batch=2100))  # wide: the plain gemm tiles
    assert not batched_small(Problem("gemm", M=4, N=12, K=40, batch=2100))  # fewer than 8 rows
    assert not batched_small(Problem("gemm", M=9, N=12, K=40, batch=1))
    cfg = default_config(p, "h100")
    # 16 x 16 padded matrices, 2048 accumulator elements (8 entries) halved while the grid has < 2 per SM
    assert (cfg.BM, cfg.BN, cfg.BB, cfg.SPLIT) == (16, 16, 4, 1)
    assert cfg.tiles(p) == 525
    assert "BB" in cfg.as_dict() and "BB" not in GemmConfig().as_dict()  # unbatched configs print as before
    assert all(c.BB * c.BM * c.BN <= 8192 for c in GemmConfig.space(p))
    assert GemmConfig.from_dict(cfg.as_dict()) == cfg


STACKED_BMM = """
func.func @main(%a: tensor<40x16xf32>, %b: tensor<40x16xf32>, %w: tensor<16x16xf32>, %c: tensor<40x16xf32>,
                %i: tensor<6xi64>) -> tensor<40x6xf32> {
  %ra = graph.linear %a, %w : tensor<40x16xf32>, tensor<16x16xf32> -> tensor<40x16xf32>
  %rb = graph.linear %b, %w : tensor<40x16xf32>, tensor<16x16xf32> -> tensor<40x16xf32>
  %cat = graph.concat %ra, %rb, %c {dim = 1} : tensor<40x16xf32>, tensor<40x16xf32>, tensor<40x16xf32> -> tensor<40x48xf32>
  %z = graph.reshape %cat : tensor<40x48xf32> -> tensor<40x3x16xf32>
  %zz = graph.matmul %z, %z {transpose_b = true} : tensor<40x3x16xf32>, tensor<40x3x16xf32> -> tensor<40x3x3xf32>
  %f = graph.reshape %zz : tensor<40x3x3xf32> -> tensor<40x9xf32>
  %s = graph.index_select %f, %i {dim = 1} : tensor<40x9xf32>, tensor<6xi64> -> tensor<40x6xf32>
  func.return %s : tensor<40x6xf32>
}
"""


def test_concat_of_computed_results_is_read_in_place_by_the_bmm():
    """The stack of two linears and an input joins neither linear: it is the bmm's prologue; the bmm's result
    stays [40, 3, 3] (the reshape to [40, 9] merges its columns) and the index_select reads through it; the
    meaning is kept for random inputs and indices with repeats."""
    module = parse_module(STACKED_BMM)
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((40, 16)), rng.standard_normal((40, 16)), rng.standard_normal((16, 16)),
              rng.standard_normal((40, 16)), rng.integers(0, 9, 6)]
    ref = interpret(module, inputs, f64=True)
    out = module.clone()
    FormRegionsPass().apply(make_context(), out)
    out.verify()
    from kitsune.dialects import dataflow as df

    tasks = [o for o in out.walk() if isinstance(o, df.TaskOp)]
    ops = {t.task_name: [o.name for o in t.body.blocks.first.ops] for t in tasks}
    bmm = next(t for t in tasks if "graph.matmul" in ops[t.task_name])
    assert ops[bmm.task_name][:2] == ["graph.concat", "graph.reshape"], ops
    assert tuple(bmm.outs[0].type.get_shape()) == (40, 3, 3)
    assert all("graph.concat" not in v for k, v in ops.items() if "graph.linear" in v), ops
    reader = next(t for t in tasks if "graph.index_select" in ops[t.task_name])
    assert ops[reader.task_name][0] == "graph.reshape", ops
    got = interpret(parse_module(str(out)), inputs, f64=True)
    np.testing.assert_allclose(np.asarray(got[0] if isinstance(got, (list, tuple)) else got),
                               np.asarray(ref[0] if isinstance(ref, (list, tuple)) else ref), rtol=1e-12, atol=1e-12)


def _interaction_model():
    import torch
    from torch import nn

    class Interaction(nn.Module):
        """DLRM's interaction in small: nine computed 40-wide vectors stacked, Z @ Z^T, the strict upper triangle."""

        def __init__(self):
            super().__init__()
            self.fcs = nn.ModuleList(nn.Linear(24, 40) for _ in range(9))
            li, lj = torch.triu_indices(9, 9, 1)
            self.register_buffer("tri", li * 9 + lj)

        def forward(self, x):
            z = torch.cat([torch.relu(fc(x)) for fc in self.fcs], dim=1).reshape(x.shape[0], 9, 40)
            return torch.bmm(z, z.transpose(1, 2)).reshape(x.shape[0], 81).index_select(1, self.tri)

    return Interaction


@pytest.mark.parametrize("mode", ["bulk-sync", "dataflow"])
def test_interaction_as_one_batched_dot(mode):
    """300 samples on a GPU preset of 8 SMs (8 per tile; 300 is not a multiple): the bmm is a gemm stage of
    tile [8, 9, 9] whose K loop is one batched tl.dot ([8, 16, 64] x [8, 64, 16]) over the nine vectors read in
    place; the result matches eager under Triton's interpreter."""
    import torch

    import kitsune

    torch.manual_seed(0)
    m = _interaction_model()().to(torch.bfloat16)
    x = torch.randn(300, 24, dtype=torch.bfloat16)
    cm = kitsune.compile(m, (x,), mode=mode, device="cpu", gpu="h100,sm_count=8")
    stages = [ln for ln in cm.lowered.splitlines() if "gpu_queue.stage" in ln and "tile [8, 9, 9]" in ln]
    assert len(stages) == 1 and 'template = "gemm"' in stages[0] and "BB = 8" in stages[0], cm.lowered
    src = cm.source
    assert re.search(r"acc\d+ = tl\.zeros\(\[8, 16, 16\], tl\.float32\)", src), src
    assert re.search(r"_dot_lp\(.*tl\.permute\(\(v\d+\)\.to\(tl\.\w+\), \(0, 2, 1\)\)", src), src  # (narrowed first)
    with torch.no_grad():
        ref = m(x)
    got = cm(x)
    assert got.shape == ref.shape
    assert (got.float() - ref.float()).abs().max().item() <= 2e-2 * ref.float().abs().max().item()


def _generated_module(model, inputs, mode="bulk-sync"):
    import kitsune

    cm = kitsune.compile(model, inputs, mode=mode, device="cpu")
    spec = importlib.util.spec_from_loader("kitsune_generated_branches", loader=None)
    mod = importlib.util.module_from_spec(spec)
    exec(compile(cm.source, "<generated>", "exec"), mod.__dict__)
    return mod


def _check_plan(mod, plan):
    """Every pair of kernels that share a buffer is ordered: the same stream, or the later waits on the earlier
    (directly or through a kernel it waits on)."""
    haz = [mod._hazards(k) for k in mod.KERNELS]
    for j, after in enumerate(mod._ordered_after(plan)):
        for i in range(j):
            if haz[i] & haz[j]:
                assert i in after, (mod.KERNELS[i]["name"], mod.KERNELS[j]["name"], plan)


def _branchy_model():
    import torch
    from torch import nn

    class Branchy(nn.Module):
        """Two independent branches of different templates (a GEMM, an embedding bag) and their concat, scaled
        per column (a concat leaving the program as it is would be written in place by its two branches)."""

        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(24, 40)
            self.emb = nn.EmbeddingBag(50, 16, mode="sum")
            self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 56))

        def forward(self, x, idx):
            return torch.cat([torch.relu(self.fc(x)), self.emb(idx)], dim=1) * self.scale

    return Branchy


def test_launch_branches_keep_every_dependence():
    """The GEMM and the embedding bag are independent kernels: on two streams, and the concat waits on the
    other one; the interaction model's kernels keep every dependence; one stream gives one slot."""
    import torch

    torch.manual_seed(0)
    mod = _generated_module(_branchy_model()(), (torch.randn(64, 24), torch.randint(0, 50, (64, 5))))
    assert len(mod.KERNELS) == 3
    plan = mod._branches(4)
    _check_plan(mod, plan)
    assert [s for s, _ in plan[:2]] == [0, 1] and plan[2][1] in ([0], [1])
    assert all(s == 0 and not d for s, d in mod._branches(1))
    mod = _generated_module(_interaction_model()(), (torch.randn(64, 24),))
    _check_plan(mod, mod._branches(4))
    _check_plan(mod, mod._branches(2))


def test_branch_priorities_follow_the_longest_chain(monkeypatch):
    """DLRM's shape of plan: a three-kernel chain (slot 0) beside one long kernel (slot 1), joined by the next
    kernel. The chain's slot is dispatched first (a lower stream priority); equal chains, or
    KITSUNE_BRANCH_PRIORITY=0, give equal priorities."""
    import torch

    mod = _generated_module(_branchy_model()(), (torch.randn(64, 24), torch.randint(0, 50, (64, 5))))
    plan = [(0, []), (1, []), (0, []), (0, []), (0, [1]), (0, [])]
    assert mod._chain_lengths(plan) == [5, 3, 4, 3, 2, 1]
    assert mod._priorities(plan) == [-1, 0]
    three = [(0, []), (1, []), (2, []), (1, []), (0, [3, 2])]  # heads: 2, 3, 2
    assert mod._chain_lengths(three) == [2, 3, 2, 2, 1]
    assert mod._priorities(three) == [0, -1, 0]
    assert mod._priorities([(0, []), (1, []), (0, [1])]) == [0, 0]
    monkeypatch.setenv("KITSUNE_BRANCH_PRIORITY", "0")
    assert mod._priorities(plan) == [0, 0]


@pytest.mark.parametrize("mode", ["bulk-sync", "dataflow"])
def test_last_kernel_moves_the_epoch(mode):
    """No separate increment: the last kernel's last ticket holder stores epoch + 1, so the tickets (and a
    dataflow kernel's queue counters) of the next launch start where they should; three launches on fresh
    inputs each match eager, and the epoch reads 3 after them."""
    import torch

    import kitsune

    torch.manual_seed(0)
    m = _branchy_model()()
    x, idx = torch.randn(64, 24), torch.randint(0, 50, (64, 5))
    cm = kitsune.compile(m, (x, idx), mode=mode, device="cpu")
    assert "if BUMP:" in cm.source and "tl.store(epoch_ptr, epoch + 1)" in cm.source
    for s in range(3):
        g = torch.Generator().manual_seed(s)
        x, idx = torch.randn(64, 24, generator=g), torch.randint(0, 50, (64, 5), generator=g)
        with torch.no_grad():
            ref = m(x, idx)
        assert torch.allclose(cm(x, idx), ref, rtol=1e-4, atol=1e-4)
    assert int(cm.program.state["epoch"][0].item()) == 3


def test_last_after_all_plans():
    """The epoch moves in the last kernel only when that kernel is ordered after every other one."""
    from kitsune.codegen.triton_gen.runtime_text import HOST

    ns: dict = {}
    for fn in ("_follows", "_ordered_after", "_last_after_all"):
        exec(compile(_function_source(HOST, fn), "<runtime>", "exec"), ns)
    last_after_all = ns["_last_after_all"]
    assert last_after_all(None)
    assert last_after_all([(0, []), (1, []), (0, [1])])  # the join waits on the side branch
    assert not last_after_all([(0, []), (1, []), (0, [])])  # a side branch nothing waits on
    assert last_after_all([(0, []), (1, [0]), (1, [])])  # through the chain on slot 1


def test_own_epochs_where_the_last_kernel_cannot_move_one(monkeypatch):
    """Concurrent branches whose last kernel runs after only some of them: every kernel moves an epoch slot of
    its own (its view of ``state["epoch"]``), so that no increment kernel ends the launch; one shared epoch
    everywhere else (no branches, a joined last kernel, a Gluon kernel that computes with the epoch among them,
    KITSUNE_EPOCH_KERNEL=1)."""
    import torch

    from kitsune.codegen.triton_gen.runtime_text import HOST

    ns: dict = {"os": __import__("os")}
    for fn in ("_follows", "_ordered_after", "_last_after_all", "_own_epochs"):
        exec(compile(_function_source(HOST, fn), "<runtime>", "exec"), ns)
    own = ns["_own_epochs"]
    ns["KERNELS"] = [{"name": f"k{j}"} for j in range(3)]
    state = {"epoch": torch.zeros(3, dtype=torch.int32)}
    epochs = own(state, [(0, []), (1, []), (0, [])])  # k2 does not wait for k1
    assert [e.data_ptr() for e in epochs] == [state["epoch"][j:].data_ptr() for j in range(3)]
    assert own({"epoch": state["epoch"]}, [(0, []), (1, []), (0, [1])]) is None  # the last kernel joins k1
    assert own({"epoch": state["epoch"]}, None) is None
    ns["KERNELS"][1]["gluon"] = True  # a Gluon kernel moves its own under BUMP too
    assert own({"epoch": state["epoch"]}, [(0, []), (1, []), (0, [])]) is not None
    ns["KERNELS"][1]["nobump"] = True  # one that computes with the epoch could not
    assert own({"epoch": state["epoch"]}, [(0, []), (1, []), (0, [])]) is None
    del ns["KERNELS"][1]["gluon"], ns["KERNELS"][1]["nobump"]
    monkeypatch.setenv("KITSUNE_EPOCH_KERNEL", "1")
    assert own({"epoch": state["epoch"]}, [(0, []), (1, []), (0, [])]) is None


def _function_source(text: str, name: str) -> str:
    start = text.index(f"def {name}(")
    end = text.find("\ndef ", start + 1)
    return text[start:end if end >= 0 else len(text)]
