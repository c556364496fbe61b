"""The chain template (issue 15): weight-GEMM chains as one task whose intermediates stay in registers.

* ``chain_form`` accepts chains of weight GEMMs (linear, matmul [k, n] weights, skip concats, a norm after a
  one-segment last layer) and rejects what the template cannot run;
* ``kitsune-form-regions`` forms one chain task only where it pays and is legal (rows, widths, single use),
  and keeps the meaning (reference interpreter before and after);
* the generated chain kernel, run by Triton's CPU interpreter, matches the reference interpreter for row
  counts that do not divide the tile, segment widths that do not divide the layers, every prefetch policy,
  both schedules, fp32 and bf16;
* the TMA form (Hopper, a Gluon kernel: activations in shared memory, weights through a TMA ring): the text
  the generator writes (descriptors, one wgmma per weight chunk, the ring's barriers, padded weights, a
  persistent grid), its fallback to the register form (Triton's interpreter, f32 weights, [k, n] weights) with
  the reason printed, the Triton -> Gluon text rules, and an sm_90 compile of a small chain;
* the AOT compile of NeRF's full-size chain kernel (sm_90, the TMA form) uses wgmma and TMA, does not spill
  and fits the shared memory and registers it claims (slow: marked);
* GPU (marked): the TMA form against eager, row counts that do not divide the tile.
"""

from __future__ import annotations

import re

import pytest

from kitsune.context import make_context, parse_module
from kitsune.dialects import dataflow as df
from kitsune.passes.allocate_sms import AllocateSMsPass
from kitsune.passes.choose_schedules import ChooseSchedulesPass, config_attr, set_tile
from kitsune.passes.convert_dataflow_to_gpu_queue import ConvertDataflowToGpuQueuePass
from kitsune.passes.form_regions import FormRegionsPass
from kitsune.gpu import get_gpu
from kitsune.schedule.chain import chain_form
from kitsune.schedule.configs import ChainConfig, Problem
from test_dataflow import _check_same  # noqa: E402
from test_templates import run  # noqa: E402  (generate, run under the interpreter, compare)

from kitsune.codegen.triton_gen import generate_triton
from kitsune.codegen.triton_gen.gluon_text import gluon_line, to_gluon
from kitsune.codegen.plan import CodegenError


def T(shape, dt):
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dt}>"


def mlp_module(rows, fin, widths, dt="f32", skip=None, act="relu", kn=False, norm=False, fout=None):
    """x [rows, fin] through linear layers of ``widths`` (+ act), the input concatenated back in before layer
    ``skip``, a last linear to ``fout`` (no act), optionally a layer_norm; ``kn``: weights as [k, n] matmuls."""
    args, body = [f"%x: {T([rows, fin], dt)}"], []
    h, hw, n = "%x", fin, 0
    layers = list(widths) + ([fout] if fout else [])
    for i, w in enumerate(layers):
        if i == skip:
            cat = f"%c{i}"
            body.append(f"{cat} = graph.concat {h}, %x {{dim = 1}} : {T([rows, hw], dt)}, {T([rows, fin], dt)} -> "
                        f"{T([rows, hw + fin], dt)}")
            h, hw = cat, hw + fin
        y = f"%y{i}"
        if kn:
            args.append(f"%w{i}: {T([hw, w], dt)}")
            body.append(f"{y} = graph.matmul {h}, %w{i} : {T([rows, hw], dt)}, {T([hw, w], dt)} -> {T([rows, w], dt)}")
        else:
            args += [f"%w{i}: {T([w, hw], dt)}", f"%b{i}: {T([w], dt)}"]
            body.append(f"{y} = graph.linear {h}, %w{i}, %b{i} : {T([rows, hw], dt)}, {T([w, hw], dt)}, {T([w], dt)} -> "
                        f"{T([rows, w], dt)}")
        h, hw = y, w
        if act and not (fout and i == len(layers) - 1):
            body.append(f"%a{i} = graph.{act} {h} : {T([rows, w], dt)} -> {T([rows, w], dt)}")
            h = f"%a{i}"
    if norm:
        args += [f"%g: {T([hw], dt)}", f"%be: {T([hw], dt)}"]
        body.append(f"%n = graph.layer_norm {h}, %g, %be {{normalized_rank = 1, eps = 1.0e-05}} : {T([rows, hw], dt)}, "
                    f"{T([hw], dt)}, {T([hw], dt)} -> {T([rows, hw], dt)}")
        h = "%n"
    lines = "\n    ".join(body)
    return (f"func.func @main({', '.join(args)}) -> {T([rows, hw], dt)} {{\n    {lines}\n"
            f"    func.return {h} : {T([rows, hw], dt)}\n}}\n")


def formed(text, **opts):
    m = parse_module(text)
    FormRegionsPass(**{"chain_min_rows": 1, "chain_min_layers": 2, **opts}).apply(make_context(), m)
    return m, [t for t in m.walk() if isinstance(t, df.TaskOp)]


# ---------------------------------------------------------------- chain form and region formation


def test_nerf_like_mlp_is_one_chain_task_and_keeps_its_meaning():
    text = mlp_module(40, 7, [24, 24, 24, 24], skip=2, fout=3)
    m, tasks = formed(text)
    assert len(tasks) == 1
    form = chain_form(tasks[0].body.blocks.first)
    assert form is not None and [l.N for l in form.layers] == [24, 24, 24, 24, 3]
    assert [l.K for l in form.layers] == [7, 24, 31, 24, 24]  # the skip layer reads [h, x]
    _check_same(text, [FormRegionsPass(chain_min_rows=1, chain_min_layers=2)])


def test_matmul_weights_k_by_n_chain():
    m, tasks = formed(mlp_module(33, 16, [32, 32], kn=True, act="gelu"))
    assert len(tasks) == 1
    form = chain_form(tasks[0].body.blocks.first)
    assert form is not None and not any(l.w_nk for l in form.layers)


@pytest.mark.parametrize("opts,why", [
    (dict(chain_min_rows=1000), "too few rows"),
    (dict(chains=False), "chains off"),
    (dict(chain_min_layers=4), "a chain of 3 < 4 layers"),
])
def test_no_chain_task(opts, why):
    text = mlp_module(40, 8, [16, 16, 16])
    _, tasks = formed(text, **opts)
    assert len(tasks) == 3, why
    _check_same(text, [FormRegionsPass(**{"chain_min_rows": 1, "chain_min_layers": 2, **opts})])


def test_wide_intermediate_is_not_chained():
    _, tasks = formed(mlp_module(40, 8, [300, 16]), small_k=0)  # 300 > 256 columns: not in registers
    assert len(tasks) == 2
    _, tasks = formed(mlp_module(40, 8, [300, 16]))  # (its 8 input features: a small-K prologue, not a chain)
    assert len(tasks) == 1 and chain_form(tasks[0].body.blocks.first) is None


def test_intermediate_read_twice_is_not_chained():
    dt = "f32"
    text = (f"func.func @main(%x: {T([40, 8], dt)}, %w0: {T([16, 8], dt)}, %w1: {T([16, 16], dt)}) -> "
            f"({T([40, 16], dt)}, {T([40, 16], dt)}) {{\n"
            f"    %h = graph.linear %x, %w0 : {T([40, 8], dt)}, {T([16, 8], dt)} -> {T([40, 16], dt)}\n"
            f"    %y = graph.linear %h, %w1 : {T([40, 16], dt)}, {T([16, 16], dt)} -> {T([40, 16], dt)}\n"
            f"    func.return %y, %h : {T([40, 16], dt)}, {T([40, 16], dt)}\n}}\n")
    _, tasks = formed(text)
    assert len(tasks) == 2


def test_computed_weight_is_not_a_chain_layer():
    dt = "f32"
    text = (f"func.func @main(%x: {T([40, 8], dt)}, %w0: {T([16, 8], dt)}, %w1: {T([16, 16], dt)}) -> "
            f"{T([40, 16], dt)} {{\n"
            f"    %h = graph.linear %x, %w0 : {T([40, 8], dt)}, {T([16, 8], dt)} -> {T([40, 16], dt)}\n"
            f"    %v = graph.relu %w1 : {T([16, 16], dt)} -> {T([16, 16], dt)}\n"
            f"    %y = graph.linear %h, %v : {T([40, 16], dt)}, {T([16, 16], dt)} -> {T([40, 16], dt)}\n"
            f"    func.return %y : {T([40, 16], dt)}\n}}\n")
    _, tasks = formed(text)
    assert all(chain_form(t.body.blocks.first) is None for t in tasks)


@pytest.mark.parametrize("dt,fin,width,chained", [
    ("bf16", 64, 128, True),  # memory-bound, 128 wide: the register form's one segment
    ("f32", 64, 128, False),  # fp32 dots on the CUDA cores: compute-bound
    ("bf16", 256, 256, False),  # compute-bound, and wider than a register-form segment
])
def test_two_layer_chain_where_memory_bound(dt, fin, width, chained):
    """chain_min_layers=-1: two weight GEMMs make a chain where the chain is memory-bound and at most 128 wide
    (MeshGraphNet's MLPs); otherwise three."""
    text = mlp_module(5000, fin, [width], dt, fout=width)
    _, tasks = formed(text, chain_min_rows=-1, chain_min_layers=-1)
    assert (len(tasks) == 1 and chain_form(tasks[0].body.blocks.first) is not None) == chained, len(tasks)
    _, tasks = formed(text, chain_min_rows=-1, chain_min_layers=3)
    assert len(tasks) == 2


# ---------------------------------------------------------------- the generated kernel (Triton's interpreter)


def lower_chain(text, cfg: ChainConfig | None, mode):
    module = parse_module(text)
    ctx = make_context()
    FormRegionsPass(chain_min_rows=1, chain_min_layers=2).apply(ctx, module)
    ChooseSchedulesPass(db=False).apply(ctx, module)
    chains = [t for t in module.walk() if isinstance(t, df.TaskOp) and t.attributes.get("template") is not None
              and t.attributes["template"].data == "chain"]
    assert len(chains) == 1, [t.attributes.get("template") for t in module.walk() if isinstance(t, df.TaskOp)]
    if cfg is not None:
        t = chains[0]
        shape = t.outs[0].type.get_shape()
        set_tile(t, [min(cfg.BM, shape[0]), shape[1]])
        t.attributes["config"] = config_attr(cfg)
    ConvertDataflowToGpuQueuePass(mode=mode).apply(ctx, module)
    AllocateSMsPass().apply(ctx, module)
    module.verify()
    return module


def run_chain(text, cfg, mode, tmp_path, dt, seed):
    """The chain task of ``text`` with ``cfg`` (None: the heuristic's) against the reference interpreter."""
    return run(text, cfg, mode, tmp_path, dt, seed, lower=lower_chain, name="chain")


@pytest.mark.parametrize("rows,fin,widths,skip,fout,cfg,dt,mode", [
    # NeRF's shape, small: 8-wide input, skip concat, 3 outputs; rows not a multiple of BM
    (50, 7, [32, 32, 32, 32], 2, 3, ChainConfig(BM=16, SEG=16, PREFETCH=2, warps=4), "f32", "bulk-sync"),
    (50, 7, [32, 32, 32, 32], 2, 3, ChainConfig(BM=32, SEG=32, PREFETCH=1, warps=4), "bf16", "dataflow"),
    # segments that do not divide the layers (40 = 32 + 8), a wide input cut into pieces
    (37, 70, [40, 24], None, 5, ChainConfig(BM=16, SEG=32, PREFETCH=0, warps=4), "f32", "dataflow"),
    (37, 70, [40, 24], None, 5, None, "bf16", "bulk-sync"),  # the heuristic config
])
def test_chain_template(tmp_path, rows, fin, widths, skip, fout, cfg, dt, mode):
    src = run_chain(mlp_module(rows, fin, widths, dt, skip=skip, fout=fout), cfg, mode, tmp_path, dt, 7)
    assert src.count("_dot_lp(" if dt == "bf16" else "tl.dot(") >= len(widths) + 1


@pytest.mark.parametrize("mode", ["bulk-sync", "dataflow"])
def test_chain_with_a_norm_after_one_segment(tmp_path, mode):
    """MeshGraphNet's MLPs: linear, relu, linear, layer_norm (over the last layer's one segment)."""
    text = mlp_module(45, 24, [16], fout=16, norm=True)
    run_chain(text, ChainConfig(BM=16, SEG=16, PREFETCH=2, warps=4), mode, tmp_path, "f32", 3)


@pytest.mark.parametrize("dt", ["f32", "bf16"])
def test_chain_norm_row_wider_than_a_segment(tmp_path, dt):
    """A LayerNorm after a last layer wider than SEG: that layer is one accumulator over the whole row, the
    earlier ones keep SEG-wide segments (the register form's pieces of the last layer's K), against the
    reference interpreter."""
    text = mlp_module(45, 24, [48], dt, fout=32, norm=True)
    src = run_chain(text, ChainConfig(BM=16, SEG=16, PREFETCH=1, warps=4), "bulk-sync", tmp_path, dt, 5)
    assert src.count("tl.zeros([16, 32], tl.float32)") == 1 and src.count("tl.zeros([16, 16], tl.float32)") == 3


def test_chain_matmul_kn(tmp_path):
    run_chain(mlp_module(33, 16, [32, 32], kn=True, act="gelu"), ChainConfig(BM=16, SEG=16, PREFETCH=1, warps=4),
              "bulk-sync", tmp_path, "f32", 5)


# ---------------------------------------------------------------- the TMA form (Gluon)


def tma_source(text, cfg=None, gluon=True):
    return generate_triton(lower_chain(text, cfg, "bulk-sync"), capacity="all", gluon=gluon)


def test_tma_form_text():
    """NeRF's shape at 300 rows (not a multiple of 128): the Gluon kernel streams every layer's [N, 64] weight
    chunks through the ring, one wgmma per chunk; the input is loaded once per tile for layer 0 and the skip."""
    text = mlp_module(300, 63, [64, 64, 64], "bf16", skip=2, fout=4)
    # (the TMA form forced: at widths of 64 the cost model calls this chain memory-bound, the register form's)
    src = tma_source(text, ChainConfig(BM=64, SEG=64, PREFETCH=0, warps=4, TMA=1))
    # the stage function, its dispatcher, and the module's Gluon helpers (twins of the index check and the fence)
    from kitsune.codegen.triton_gen.gluon_text import GLUON_HELPERS

    assert src.count("@gluon.jit") == 2 + GLUON_HELPERS.count("@gluon.jit")
    # the four weights' descriptors come from the host (kernel parameters; one made in the kernel cost 0.5-0.9 us
    # beyond the first on the H100), the 63-wide one at its padded copy's pitch
    assert "tma.make_tensor_descriptor(" not in src
    assert [ln.strip() for ln in src.splitlines() if re.fullmatch(r"\s*_w\d = k0_linear_0_w\d", ln)] == [
        f"_w{i} = k0_linear_0_w{i}" for i in range(4)]
    assert "('k0_linear_0_w0', 'arg1', [64, 63], [64, 1], [64, 64], 'bf16')" in src
    # chunks: layer 0 (63 -> 1), 1 (64 -> 1), 2 (64 + 63 -> 2), out (64 -> 1)
    assert src.count("= warpgroup_mma(") == 5
    assert src.count("mbarrier.init(") == 4  # RING
    assert src.count("_m0.index(0).store(") == 1 and "_m1" not in src  # x once per tile, shared by the skip
    # 63- and 127-wide weights are read from copies padded to a 16-byte row pitch
    assert "\"tma_pad\": {'arg1': 64, 'arg5': 128}" in src  # (w0, w2)
    assert "for it in range(0, 1):" in src  # 5 tiles of 64 rows (few tiles: BM 64), one per program
    assert "register form" not in src


@pytest.mark.parametrize("why,text,cfg,gluon", [
    ("interpreter", mlp_module(300, 63, [64, 64], "bf16", fout=4), None, False),
    ("f32 weights", mlp_module(300, 63, [64, 64], "f32", fout=4),
     ChainConfig(BM=128, SEG=64, PREFETCH=0, warps=8, TMA=1), True),
])
def test_tma_form_falls_back_to_registers(why, text, cfg, gluon):
    src = tma_source(text, cfg, gluon)
    assert "@gluon.jit" not in src and "_dot_lp(" in src or "tl.dot(" in src, why
    if gluon:  # the reason is printed in the module
        assert "register form of the chain (the TMA form does not apply:" in src and "bf16 or f16 only" in src


def test_gluon_text_rules():
    assert gluon_line("a = tl.arange(0, 64)") == "a = gl.arange(0, 64, layout=gl.AutoLayout())"
    assert (gluon_line("z = tl.full([16, tl.cdiv(n, 2)], 0.0, tl.float32) + tl.zeros([16, 8], tl.float32)")
            == "z = gl.full([16, tl.cdiv(n, 2)], 0.0, tl.float32, layout=gl.AutoLayout()) + "
               "gl.zeros([16, 8], tl.float32, layout=gl.AutoLayout())")
    assert gluon_line("_ring.index(s).store(v)") == "_ring.index(s).store(v)"  # a buffer, not a helper call
    assert gluon_line("_index_check(v, 10, err, 3)") == "_index_check_gl(v, 10, err, 3)"  # its Gluon twin
    with pytest.raises(CodegenError, match="_scatter_add"):
        gluon_line("_index_check(v, 10, err, 3); _scatter_add(p, o, v, m)")
    # each marked section defines the axes it uses, and only those
    axis = ["    a_raw = tl.arange(0, 64)", "    a = tl.minimum(a_raw, 62)", "    b_raw = tl.arange(0, 16)",
            "    b = b_raw"]
    out = to_gluon(["    x = 1", "    #M", "    y = a[:, None]", "    #M", "    z = b_raw + 1"], axis, "#M")
    assert out == ["    x = 1", "    a_raw = gl.arange(0, 64, layout=gl.AutoLayout())", "    a = tl.minimum(a_raw, 62)",
                   "    y = a[:, None]", "    b_raw = gl.arange(0, 16, layout=gl.AutoLayout())", "    z = b_raw + 1"]


@pytest.mark.aot
def test_tma_form_compiles_for_sm90():
    """A small chain's Gluon kernel through the sm_90 compile (in a process without Triton's interpreter):
    wgmma, no spills."""
    from kitsune.codegen.aot import compile_source_in_subprocess

    mod = compile_source_in_subprocess(tma_source(mlp_module(1000, 63, [128, 128, 128], "bf16", skip=1, fout=4)),
                                       timeout=600)
    assert mod["kernels"], mod.get("error")
    (rec, ) = mod["kernels"]
    assert rec["ok"], rec.get("error")
    assert rec["wgmma"] and not rec["spill_stores"] and not rec["spill_loads"], rec


@pytest.mark.gpu
@pytest.mark.parametrize("rows", [8191, 65499])
def test_tma_form_on_gpu(rows):
    """The Gluon kernel against eager (bf16): NeRF (skip concat, a 4-wide output) on row counts that do not
    divide the tile (a chain task needs 32 rows per SM: 4224 on the H100)."""
    import torch

    import kitsune
    from kitsune.models import get_workload

    model, (x, ) = get_workload("nerf_65k").build(scale=1.0, dtype=torch.bfloat16, device="cuda", seed=1)
    x = x[:rows].contiguous()
    fn = kitsune.compile(model, (x, ), mode="bulk-sync", cache=False)
    assert "@gluon.jit" in fn.source, "the TMA form was not taken"
    with torch.no_grad():
        ref = model(x).float()
        got = fn(x)[0].float() if isinstance(fn(x), (list, tuple)) else fn(x).float()
    assert ((got - ref).norm() / ref.norm()).item() < 2e-2


# ---------------------------------------------------------------- AOT at full size


@pytest.mark.aot
@pytest.mark.slow
def test_nerf_chain_kernel_aot():
    """NeRF at full size: one chain kernel; ptxas: wgmma, no spills, within the resources the config claims."""
    from kitsune.codegen.aot import compile_in_subprocess

    rec = compile_in_subprocess("nerf_65k", ["bulk-sync"], timeout=900)[0]
    assert rec["ok"], rec.get("error")
    assert len(rec["kernels"]) == 1 and rec["kernels"][0]["templates"] == ["chain"], rec["kernels"]
    k = rec["kernels"][0]
    assert k["wgmma"], k
    assert not k["spill_stores"] and not k["spill_loads"], k
    p = Problem("chain", M=65536, N=4, K=319, row=256, rows=9, out_elems=8 * 256 * 256)
    res = ChainConfig.default(p, get_gpu("h100")).resources(Problem("chain", row=256))
    assert k["shared"] <= res.smem_bytes and k["registers"] <= res.regs_per_thread, (k, res)


def test_gluon_compile_failure_falls_back_to_the_register_form():
    """A Gluon kernel that does not compile on the device: the program is regenerated without Gluon, with a
    warning, once per lowering (kitsune.compile._gluon_checked; the device compile is faked here)."""
    from types import SimpleNamespace

    from kitsune.compile import _gluon_checked

    text, cfg = mlp_module(300, 63, [64, 64], "bf16", fout=4), ChainConfig(BM=64, SEG=64, PREFETCH=0, warps=4, TMA=1)
    low = SimpleNamespace(source=tma_source(text, cfg), source_triton=None,
                          gluon_failed=None, module=lower_chain(text, cfg, "bulk-sync"),
                          capacity="all", profile=False, index_checks=True)
    assert "@gluon.jit" in low.source

    class Failing:
        interpret = False

        def precompile(self):
            raise RuntimeError("PassManager::run failed\nmore")

    made = []
    with pytest.warns(RuntimeWarning, match="register form"):
        _gluon_checked(low, Failing(), lambda src: made.append(src) or "program")
    assert low.gluon_failed == "RuntimeError: PassManager::run failed"
    assert made and "@gluon.jit" not in made[0] and made[0] == low.source_triton
    # a program that compiles is kept as it is
    ok = SimpleNamespace(interpret=False, precompile=lambda: 0)
    low2 = SimpleNamespace(**{**vars(low), "source_triton": None, "gluon_failed": None})
    assert _gluon_checked(low2, ok, lambda src: None) is ok


# ---------------------------------------------------------------- gathered epilogue operands, a fused scatter


def _edge_block(d: int, gather_hidden: bool = False):
    """MeshGraphNet's edge MLP: m = LN(fc2(relu(fc1(cat(x[src], x[dst], e))))), the messages summed into the
    nodes (index_add) and added to the edges. ``gather_hidden``: fc2 reads the hidden rows permuted by ``src``
    (a gather of a computed value: not a chain)."""
    import torch
    from torch import nn

    class EdgeBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2, self.norm = nn.Linear(3 * d, d), nn.Linear(d, d), nn.LayerNorm(d)

        def forward(self, x, e, src, dst):
            h = torch.relu(self.fc1(torch.cat([x[src], x[dst], e], -1)))
            if gather_hidden:
                h = h[src % h.shape[0]]
            m = self.norm(self.fc2(h))
            return torch.zeros_like(x).index_add(0, dst, m), e + m

    return EdgeBlock()


def _graph(n, edges, d, seed):
    import torch

    g = torch.Generator().manual_seed(seed)
    # (few nodes: every node is an endpoint of several edges, the scatter's targets repeat)
    return (torch.randn(n, d, generator=g), torch.randn(edges, d, generator=g),
            torch.randint(0, n, (edges,), generator=g), torch.randint(0, n, (edges,), generator=g))


@pytest.fixture
def chains_on_few_rows(monkeypatch):
    """kitsune-pipeline's form-regions with chains on any row count (the test graphs are small)."""
    import kitsune.passes.form_regions as fr

    orig = fr.FormRegionsPass

    class FewRows(orig):
        def __init__(self, **kw):
            super().__init__(**{"chain_min_rows": 1, **kw})

    monkeypatch.setattr(fr, "FormRegionsPass", FewRows)


@pytest.mark.parametrize("mode", ["bulk-sync", "dataflow"])
def test_edge_mlp_with_gathers_and_scatter_is_one_chain(chains_on_few_rows, mode):
    """After kitsune-project-gathers the edge MLP's first layer adds the projected endpoints, gathered by index,
    in its epilogue; the LayerNorm, the residual and the scatter of the messages into the nodes follow the last
    layer. Two 16-wide bf16 layers are memory-bound (ChainConfig.memory_bound), so two layers make a chain: one
    task on the chain template, its gathers and the scatter's atomics inside it, no re-masking of its rows; the
    program matches eager on graphs with repeated endpoints."""
    import torch

    import kitsune

    torch.manual_seed(0)
    model = _edge_block(16)
    cm = kitsune.compile(model, _graph(9, 70, 16, 0), mode=mode, device="cpu")
    low = str(cm.lowered)
    stages = [l for l in low.splitlines() if "gpu_queue.stage" in l]
    chain = [l for l in stages if 'template = "chain"' in l]
    assert len(chain) == 1, stages
    assert "TMA = 0" in chain[0] and "BM = 64" in chain[0]  # the memory-bound form: registers, 64 rows
    body = cm.source.split("# stage \"linear_1\"")[1].split("\ndef ")[0] if "# stage \"linear_1\"" in cm.source \
        else ""
    assert "_scatter_add(" in body and body.count("_dot_lp(") + body.count("tl.dot(") == 2, body[:2000]
    # rows stay apart: nothing is re-masked by the tile's row bound (the wheres left wrap negative indices, x[i])
    wheres = [l for l in body.splitlines() if "tl.where(" in l]
    assert len(wheres) == 2 and not any("[:, None]" in l for l in wheres), wheres
    # the node accumulator's zero start is set by the projection's kernel before the chain's, not a fill of its own
    assert cm.source.count("    _zero_fill(") == 1 and '"zero": [\'' not in cm.source
    for s in range(2):  # (two launches: the accumulator starts from zero each time)
        args = _graph(9, 70, 16, s + 1)
        with torch.no_grad():
            ref = model(*args)
        for got, want in zip(cm(*args), ref):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("gathered,chained", [("%x", True), ("%h", False)])
def test_gather_between_layers(gathered, chained):
    """The second layer's row operand adds rows gathered by an index: of a task input (loaded by index where the
    segment is computed: a chain), or of the first layer's result (a computed row read by index: not a chain)."""
    dt = "f32"
    text = (f"func.func @main(%x: {T([40, 16], dt)}, %i: {T([40], 'i64')}, %w0: {T([16, 16], dt)}, "
            f"%w1: {T([16, 16], dt)}) -> {T([40, 16], dt)} {{\n"
            f"    %h = graph.linear %x, %w0 : {T([40, 16], dt)}, {T([16, 16], dt)} -> {T([40, 16], dt)}\n"
            f"    %a = graph.relu %h : {T([40, 16], dt)} -> {T([40, 16], dt)}\n"
            f"    %g = graph.index_select {gathered}, %i {{dim = 0}} : {T([40, 16], dt)}, {T([40], 'i64')} -> "
            f"{T([40, 16], dt)}\n"
            f"    %s = graph.add %a, %g : {T([40, 16], dt)}, {T([40, 16], dt)} -> {T([40, 16], dt)}\n"
            f"    %y = graph.linear %s, %w1 : {T([40, 16], dt)}, {T([16, 16], dt)} -> {T([40, 16], dt)}\n"
            f"    func.return %y : {T([40, 16], dt)}\n}}\n")
    block = parse_module(text).body.block.first_op.body.blocks.first
    assert (chain_form(block) is not None) is chained


@pytest.mark.parametrize("widths,fin,dt,bound", [
    ([128], 128, "bf16", True),  # MeshGraphNet's edge MLP: 512 bytes a row against 65 kFLOP
    ([256] * 7, 64, "bf16", False),  # NeRF-like: 1 MFLOP a row
    ([128], 128, "f32", False),  # fp32 dots on the CUDA cores
])
def test_memory_bound_chain(widths, fin, dt, bound):
    """ChainConfig.memory_bound: the rows' bytes at DRAM bandwidth against the products at half the peak."""
    eb = 2 if dt == "bf16" else 4
    layers = [fin] + widths + [128]
    p = Problem("chain", M=60000, N=128, K=max(layers[:-1]), elem_bytes=eb, mem_cols=fin,
                out_elems=sum(k * n for k, n in zip(layers, layers[1:])))
    assert ChainConfig.memory_bound(p, get_gpu("h100")) is bound
    cfg = ChainConfig.default(p, get_gpu("h100"))
    assert (cfg.TMA == 0 and cfg.BM == 64) if bound else cfg.BM == 128


def _node_block_tma_source(agg_dtype):
    """MeshGraphNet's node MLP, LN(fc2(relu(fc1(cat(x, agg))))) + x, over 300 nodes in bf16 with ``agg`` in
    ``agg_dtype``, as the chain template's TMA form (64 rows on 4 warps) writes it."""
    import torch
    from torch import nn

    from kitsune.frontend.torch_export import import_module
    from kitsune.schedule import isolate
    from kitsune.tools.tune import scheduled_tasks

    class NodeBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2, self.norm = nn.Linear(256, 128), nn.Linear(128, 128), nn.LayerNorm(128)

        def forward(self, x, agg):
            return x + self.norm(self.fc2(torch.relu(self.fc1(torch.cat([x, agg.to(x.dtype)], -1)))))

    model = NodeBlock().to(torch.bfloat16)
    gm, _ = import_module(model, (torch.randn(300, 128, dtype=torch.bfloat16), torch.randn(300, 128, dtype=agg_dtype)),
                          None, with_weights=False)
    cfg = ChainConfig(BM=64, SEG=64, PREFETCH=0, warps=4, TMA=1)
    (task, ) = [t for t, c in scheduled_tasks(gm, "h100") if c.template == "chain"]
    m = isolate.lower(isolate.with_config(isolate.task_module(task), "chain", cfg, (64, 128)), "h100")
    return generate_triton(m, capacity="all", gluon=True)


@pytest.mark.parametrize("agg_dtype", ["bf16", "f32"])
def test_tma_form_wide_operands_from_memory(chains_on_few_rows, agg_dtype):
    """Two 128-wide row operands from memory (the node MLP's cat(x, agg)): a 16-bit one is loaded by TMA in two
    64-column boxes into a two-chunk buffer (one box into a one-chunk buffer ran past it: an illegal address on the
    H100); an fp32 one is widened in registers laid out 64 columns a warp, so that its two chunks split apart
    (at 128 columns a warp gl.split had nothing to split and the kernel did not compile)."""
    import torch

    src = _node_block_tma_source({"bf16": torch.bfloat16, "f32": torch.float32}[agg_dtype])
    assert "@gluon.jit" in src
    assert "_m0 = gl.allocate_shared_memory(tl.bfloat16, [2, 64, 64]" in src
    assert "mbarrier.expect(_mbar.index(0), 16384, pred=" in src  # two boxes of 64 x 64 bf16
    assert "_m0.index(1), pred=" in src
    if agg_dtype == "f32":
        assert "gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])" in src and "gl.split(" in src
    else:
        assert "_m1.index(1), pred=" in src and "gl.split(gl.permute(gl.reshape(v" not in src.split("acc")[0]


@pytest.mark.aot
def test_tma_form_wide_operands_compile_for_sm90(chains_on_few_rows):
    import torch

    from kitsune.codegen.aot import compile_source_in_subprocess

    for dt in (torch.bfloat16, torch.float32):
        mod = compile_source_in_subprocess(_node_block_tma_source(dt), timeout=600)
        assert mod["kernels"] and all(r["ok"] and r["wgmma"] for r in mod["kernels"]), mod


def test_wide_chain_with_a_norm_gets_the_chain_template():
    """A chain whose last layer is 256 wide followed by a LayerNorm: its task is chosen the chain template (it was
    checked against a 128-column segment and fell to the gemm template, whose first layer as a prologue needed
    458 KB of shared memory); in the register form the last layer is one 256-wide accumulator, the others keep
    their 64-column segments."""
    text = mlp_module(5000, 64, [256, 256], "bf16", fout=256, norm=True)
    m = parse_module(text)
    ctx = make_context()
    FormRegionsPass(chain_min_rows=1, chain_min_layers=2).apply(ctx, m)
    ChooseSchedulesPass(db=False).apply(ctx, m)
    (task, ) = [t for t in m.walk() if isinstance(t, df.TaskOp)]
    assert task.attributes["template"].data == "chain"
    src = generate_triton(lower_chain(text, ChainConfig(BM=64, SEG=64, PREFETCH=0, warps=8), "bulk-sync"),
                          capacity="all", gluon=False)
    assert src.count("tl.zeros([64, 256], tl.float32)") == 1 and src.count("tl.zeros([64, 64], tl.float32)") == 8
