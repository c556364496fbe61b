"""Sibling K loops fused (``kitsune.codegen.triton_gen.fuse_loops``): the rewritten text, the refusals, and the
same stores when a body runs in Python (``test_early_loads``' fake ``tl``)."""

from __future__ import annotations

import pytest

pytest.importorskip("triton")

from test_early_loads import _body, _run, _stmts  # noqa: E402

from kitsune.codegen.triton_gen.early_loads import place_wait  # noqa: E402
from kitsune.codegen.triton_gen.fuse_loops import fuse_sibling_loops  # noqa: E402

# the gemv template's gate / up stage at batch 8, reduced: two K loops over one range, the second with its own axis
# range (r2, the same value as r1) and its accumulator's zeros after the first loop; a norm between them
GATE_UP = """
    r1_raw = tl.arange(0, 64)
    r1 = r1_raw
    r2_raw = tl.arange(0, 64)
    r2 = r2_raw
    t = pid
    acc = tl.zeros([16, 64], tl.float32)
    for k in range(0, 256, 64):
        a = tl.load(act + (k + t + r1))
        b = tl.load(w + (t * 256 + k + r1))
        acc = tl.dot(a, b, acc)
    s = tl.load(g + t)
    n = s * 3
    acc2 = tl.zeros([16, 64], tl.float32)
    for k2 in range(0, 256, 64):
        a2 = tl.load(act + (k2 + t + r2))
        b2 = tl.load(w + (t * 256 + k2 + r2 + 5000))
        acc2 = tl.dot(a2, b2, acc2)
    y = acc * n + acc2
    tl.store(out + t, y)
"""


def test_sibling_loops_become_one_with_the_shared_load_read_once():
    """The second loop's zeros move above the first loop; its body joins the first's with its counter renamed and
    its row-operand load (the same address once r2 is seen to be r1) replaced by the first's; the norm between
    the loops stays after them; the stores are the same."""
    body = _body(GATE_UP)
    out = fuse_sibling_loops(body)
    s = _stmts(out)
    assert s.count("for k in range(0, 256, 64):") == 1 and not any(x.startswith("for k2") for x in s)
    assert s.index("acc2 = tl.zeros([16, 64], tl.float32)") < s.index("for k in range(0, 256, 64):")
    assert "b2 = tl.load(w + (t * 256 + k + r1 + 5000))" in s and "acc2 = tl.dot(a, b2, acc2)" in s
    assert not any(x.startswith("a2 =") for x in s)
    assert s.index("acc2 = tl.dot(a, b2, acc2)") < s.index("s = tl.load(g + t)")
    for pid in range(3):
        assert _run_gate_up(out, pid) == _run_gate_up(body, pid)
    # and then loads before waits: both weight chunks of the first iteration before the wait
    w = place_wait(out, {"act", "out"}, peel=True)
    sw = _stmts(w)
    assert sw.index("b_p0 = tl.load(w + (t * 256 + k_p0 + r1))") < sw.index("if PDL:")
    assert sw.index("b2_p0 = tl.load(w + (t * 256 + k_p0 + r1 + 5000))") < sw.index("if PDL:")
    for pid in range(3):
        assert _run_gate_up(w, pid) == _run_gate_up(body, pid)


def _run_gate_up(lines, pid):
    # (``_run``'s fake tl has no arange: a range is its length here)
    return _run([ln.replace("tl.arange(0, 64)", "64") for ln in lines], pid)


@pytest.mark.parametrize("change, why", [
    ("    for k2 in range(0, 256, 64):", "range(0, 320, 64)"),  # another range
    ("        b2 = tl.load(w + (t * 256 + k2 + r2 + 5000))", "        b2 = tl.load(w + (t * 256 + k2 + r2 + n))"),
    ("    y = acc * n + acc2", "    y = acc * n + acc2 + k2"),  # the counter read after its loop
    ("        a = tl.load(act + (k + t + r1))", "        a = tl.load(act + (k + t + r1 + acc2))"),
])
def test_loops_stay_apart_where_fusing_would_change_meaning(change, why):
    """Another range; a second loop that needs a value computed between the loops (the norm); its counter read
    after it; a first loop that reads what the second defines: nothing is fused."""
    text = GATE_UP.replace(change, change.replace("range(0, 256, 64)", why) if why.startswith("range") else why)
    body = _body(text)
    assert fuse_sibling_loops(body) == body


def test_a_batch8_gate_up_projection_runs_its_two_weight_loops_as_one(monkeypatch, tmp_path):
    """Llama's MLP at batch 8 (gate and up merged by kitsune-merge-siblings, SiLU(gate) * up): with the gemv
    template's tensor-core form in chunks of 64 (a user database entry, as the H100's tuned ones are), the stage
    has one K loop with both products; the program, run by Triton's interpreter, matches eager in fp32 as closely
    as bf16 eager does."""
    import json

    import torch
    from torch import nn

    import kitsune
    from kitsune.frontend.torch_export import import_module, rel_err
    from kitsune.schedule import db
    from kitsune.tools.tune import scheduled_tasks

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = nn.Linear(256, 128, bias=False)
            self.up = nn.Linear(256, 128, bias=False)
            self.down = nn.Linear(128, 256, bias=False)

        def forward(self, x):
            return self.down(nn.functional.silu(self.gate(x)) * self.up(x))

    torch.manual_seed(0)
    m32 = MLP()
    m = MLP().to(torch.bfloat16)
    m.load_state_dict({k: v.to(torch.bfloat16) for k, v in m32.state_dict().items()})
    x = torch.randn(8, 1, 256, dtype=torch.bfloat16)
    monkeypatch.setenv("KITSUNE_CACHE_DIR", str(tmp_path))
    gm = import_module(m, (x,))[0]
    cfg = {"BN": 16, "BK": 64, "SPLIT": 1, "DOT": True, "stages": 2, "warps": 4}
    entries = {db.key(c.problem, "h100"): {"config": cfg, "ms": 1e-5}
               for _, c in scheduled_tasks(gm, "h100") if c.template == "gemv" and c.problem.K == 256}
    assert len(entries) == 1  # the merged gate / up projection
    (tmp_path / "tuning.json").write_text(json.dumps(entries))
    cm = kitsune.compile(m, (x,), mode="bulk-sync", device="cpu", cache=False)
    fns = cm.source.split("\ndef ")
    (gate_up,) = [f for f in fns if "_linear_" in f.split("(")[0] and "gate_weight__up_weight" in f.split("\n")[0]]
    loops = [ln for ln in gate_up.splitlines() if ln.strip().startswith("for k")]
    assert len(loops) == 1, gate_up
    after = gate_up.split(loops[0], 1)[1]
    assert after.count("_dot_lp(") >= 2
    with torch.no_grad():
        ref, eager = m32(x.float()), m(x)
    got = cm(x)
    assert rel_err(got.float().numpy(), ref.numpy()) < 2 * max(rel_err(eager.float().numpy(), ref.numpy()), 2e-3)
