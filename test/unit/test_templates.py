"""Schedule templates against the reference interpreter, under Triton's CPU interpreter.

Shapes are drawn by hypothesis (sizes that do not divide the tiles included), in fp32 and bf16; each draw
forces one config of the template (split reductions, grouped tile orders, tensor-core gemv, K tails), lowers
the graph through the rest of the pipeline in both schedules, runs the emitted Triton twice (the split
workspace and its counters must be reusable without a reset) and compares with ``kitsune.interpret``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kitsune.codegen.to_triton import generate_triton  # noqa: E402
from test_triton_codegen import load_generated  # noqa: E402  (the interpreter's module loader)
from kitsune.context import make_context, parse_module  # noqa: E402
from kitsune.dialects import dataflow as df  # noqa: E402
from kitsune.interpreter import interpret  # noqa: E402
from kitsune.passes.allocate_sms import AllocateSMsPass  # noqa: E402
from kitsune.passes.choose_schedules import ChooseSchedulesPass, config_attr, legalise_channels, set_tile  # noqa: E402
from kitsune.passes.convert_dataflow_to_gpu_queue import ConvertDataflowToGpuQueuePass  # noqa: E402
from kitsune.passes.form_regions import FormRegionsPass  # noqa: E402
from kitsune.schedule.configs import GemmConfig, GemvConfig  # noqa: E402
from kitsune.schedule.roles import roles_of  # noqa: E402
from kitsune.schedule.select import anchor_of, gemm_tile  # noqa: E402
from xdsl.dialects.builtin import StringAttr  # noqa: E402

SETTINGS = dict(max_examples=int(os.environ.get("KITSUNE_TEMPLATE_EXAMPLES", "25")), deadline=None,
                derandomize=True, suppress_health_check=[HealthCheck.too_slow],
                phases=[Phase.explicit, Phase.reuse, Phase.generate])  # no shrinking: each example compiles


def mlir_type(shape, dt):
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dt}>"


def linear_module(lead, n, k, dt, act):
    x, w, b = mlir_type(lead + [k], dt), mlir_type([n, k], dt), mlir_type([n], dt)
    y = mlir_type(lead + [n], dt)
    body = f"    %y = graph.linear %x, %w, %b : {x}, {w}, {b} -> {y}\n"
    ret = "%y"
    if act:
        body += f"    %z = graph.{act} %y : {y} -> {y}\n"
        ret = "%z"
    return (f"func.func @main(%x: {x}, %w: {w}, %b: {b}) -> {y} {{\n{body}    func.return {ret} : {y}\n}}\n")


def lower_forced(text, cfg, mode):
    """form-regions, the given config on the contraction task, then the rest of the pipeline."""
    module = parse_module(text)
    ctx = make_context()
    FormRegionsPass().apply(ctx, module)
    for g in [o for o in module.walk() if isinstance(o, df.GraphOp)]:
        for t in g.tasks():
            a, _ = anchor_of(t)
            r = roles_of(a) if a is not None else None
            if r is None or a.OPDEF.category != "contraction":
                continue
            tile = gemm_tile(r, cfg.template, cfg)
            assert tile is not None
            set_tile(t, tile)
            t.attributes["template"] = StringAttr(cfg.template)
            t.attributes["config"] = config_attr(cfg)
        legalise_channels(g)
    ChooseSchedulesPass().apply(ctx, module)  # the other tasks
    ConvertDataflowToGpuQueuePass(mode=mode).apply(ctx, module)
    AllocateSMsPass().apply(ctx, module)
    module.verify()
    return module


def run(text, cfg, mode, tmp_path, dt, seed):
    module = parse_module(text)
    rng = np.random.default_rng(seed)
    args = []
    for a in module.body.block.first_op.body.block.args:
        shape = tuple(a.type.get_shape())
        args.append((rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32))
    ref = interpret(module, args)[0]
    low = lower_forced(text, cfg, mode)
    src = generate_triton(low, capacity="all")
    mod = load_generated(src, tmp_path, f"tpl_{cfg.template}_{mode.replace('-', '_')}_{seed}")
    tdt = {"f32": torch.float32, "bf16": torch.bfloat16}[dt]
    tensors = {n: torch.from_numpy(v).to(tdt) for n, v in zip(mod.ARGS, args)}
    state = mod.allocate("cpu")
    for name, b in state["buffers"].items():
        if b.is_floating_point():  # poison (split slices too: each is written before it is read)
            b.fill_(float("nan"))
    tol = 2e-2 if dt == "bf16" else 1e-4
    for run_ in range(2):  # the second launch reuses the split workspace and counters (epochs)
        out = mod.launch(state, tensors, watchdog=1000)[0].float().numpy()
        mod.check(state)
        assert not np.isnan(out).any(), "an output element was never written"
        err = float(np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-30))
        assert err < tol, (run_, err, cfg)
    return src


@settings(**SETTINGS)
@given(m=st.integers(17, 70), n=st.integers(16, 80), k=st.integers(16, 200),
       bm=st.sampled_from([16, 32]), bn=st.sampled_from([16, 32]), split=st.sampled_from([1, 2, 3]),
       group=st.sampled_from([1, 2]), dt=st.sampled_from(["f32", "bf16"]),
       act=st.sampled_from(["", "gelu", "relu"]), mode=st.sampled_from(["bulk-sync", "dataflow"]),
       seed=st.integers(0, 1000))
def test_gemm_template(tmp_path_factory, m, n, k, bm, bn, split, group, dt, act, mode, seed):
    split = split if k >= 2 * split * 16 else 1
    cfg = GemmConfig(BM=bm, BN=bn, BK=16, GROUP_M=group, SPLIT=split, warps=4, stages=2)
    src = run(linear_module([m], n, k, dt, act), cfg, mode, tmp_path_factory.mktemp("gemm"), dt, seed)
    assert "tl.dot(" in src
    if split > 1:
        assert f"arrived % {split} == {split - 1}" in src and "ks * " in src


@settings(**SETTINGS)
@given(lead=st.sampled_from([[1], [3], [2, 1], [8, 1], [13]]), n=st.integers(5, 90), k=st.integers(8, 300),
       bn=st.sampled_from([16, 32]), bk=st.sampled_from([16, 64]), split=st.sampled_from([1, 2, 4]),
       dot=st.booleans(), dt=st.sampled_from(["f32", "bf16"]), act=st.sampled_from(["", "silu"]),
       mode=st.sampled_from(["bulk-sync", "dataflow"]), seed=st.integers(0, 1000))
def test_gemv_template(tmp_path_factory, lead, n, k, bn, bk, split, dot, dt, act, mode, seed):
    split = split if k >= split * bk else 1
    cfg = GemvConfig(BN=bn, BK=bk, SPLIT=split, DOT=dot and int(np.prod(lead)) > 1, warps=4)
    src = run(linear_module(list(lead), n, k, dt, act), cfg, mode, tmp_path_factory.mktemp("gemv"), dt, seed)
    if cfg.DOT:
        assert "tl.dot(" in src


def test_choose_schedules_picks_templates_by_roles():
    """gemm for many rows, gemv for few; the tile follows the config; no replicated split tasks."""
    text = linear_module([512], 256, 1024, "bf16", "gelu")
    module = parse_module(text)
    ctx = make_context()
    FormRegionsPass().apply(ctx, module)
    ChooseSchedulesPass(db=False).apply(ctx, module)
    (t,) = [o for o in module.walk() if isinstance(o, df.TaskOp)]
    assert t.attributes["template"] == StringAttr("gemm")
    cfg = {k: v.value.data for k, v in t.attributes["config"].data.items()}
    assert list(t.tile_sizes()) == [min(cfg["BM"], 512), min(cfg["BN"], 256)]
    text = linear_module([1], 4096, 4096, "bf16", "")
    module = parse_module(text)
    FormRegionsPass().apply(ctx, module)
    ChooseSchedulesPass(db=False).apply(ctx, module)
    (t,) = [o for o in module.walk() if isinstance(o, df.TaskOp)]
    assert t.attributes["template"] == StringAttr("gemv")
