"""The emitted Triton, run under Triton's CPU interpreter, against the reference interpreter and torch.

Every workload at small scale in fp32, both schedules: the generated module (queues with one slot per
tile, so the sequential interpreter never waits on a slot) must match the numpy reference interpreter
of the graph-level module and the torch model (rel. err < 1e-4).
"""

from __future__ import annotations

import importlib.util
import math
import os

import numpy as np
import pytest

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from kitsune.codegen.plan import CodegenError, build_plan, matching_tile  # noqa: E402
from kitsune.codegen.triton_gen import generate_triton  # noqa: E402
from kitsune.derived_weights import resolve  # noqa: E402
from kitsune.codegen.triton_gen.index_algebra import (  # noqa: E402
    Atom,
    lconst,
    latom,
    ladd,
    lfloordiv,
    lmod,
    lrange,
    lscale,
)
from kitsune.context import make_context, parse_module  # noqa: E402
from kitsune.models import WORKLOADS, get_workload  # noqa: E402

SCALE = 0.02


def load_generated(src: str, tmp_path, name: str):
    """Import generated source under the CPU interpreter (triton.jit decides at decoration time)."""
    os.environ["TRITON_INTERPRET"] = "1"
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def lower(workload: str, mode: str):
    from kitsune.frontend.torch_export import import_module
    from kitsune.passes.pipeline import KitsunePipelinePass

    model, inputs = get_workload(workload).build(SCALE, torch.float32, "cpu", seed=3)
    graph_mod, weights = import_module(model, inputs)
    text = str(graph_mod)
    mode, _, placement = mode.partition(":")  # "dataflow:spatial": a placement other than auto
    KitsunePipelinePass(mode=mode, placement=placement or "auto").apply(make_context(), graph_mod)
    return model, inputs, parse_module(text), weights, graph_mod


def run_generated(mod, model, inputs):
    params = dict(model.named_parameters())
    params.update(dict(model.named_buffers()))
    it = iter(inputs)
    tensors = {}
    for n in mod.ARGS:
        shape, dt, role = mod.TENSORS[n]
        # (a copy: a buffer the program updates in place must not be the model's, which eager then runs)
        # (a derived parameter, kitsune-merge-siblings' concatenated weights, from the ones it names)
        tensors[n] = next(it).contiguous() if role == "input" else resolve(mod.LABELS[n], params).detach().clone()
    state = mod.allocate("cpu")
    for b in state["buffers"].values():  # poison: every element read must have been written
        if b.is_floating_point():
            b.fill_(float("nan"))
    outs = mod.launch(state, tensors, watchdog=1000)
    mod.check(state)
    return [o.clone() for o in outs], state, tensors


def rel(a, b) -> float:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


# llama1b_decode_b1 repeats llama_decode_b1's layer (16 of them, ~25 s a mode): its forced placements add nothing
_CASES = [(w, m) for w in sorted(WORKLOADS) for m in ("dataflow", "dataflow:spatial", "dataflow:temporal", "bulk-sync")
          if not (w == "llama1b_decode_b1" and ":" in m)]


@pytest.mark.parametrize("workload, mode", _CASES)
def test_emitted_triton_matches_reference(workload, mode, tmp_path):
    from kitsune.frontend.torch_export import arguments
    from kitsune.interpreter import interpret

    model, inputs, graph_level, weights, lowered = lower(workload, mode)
    src = generate_triton(lowered, capacity="all")
    mod = load_generated(src, tmp_path, f"k_{workload}_{mode.replace('-', '_').replace(':', '_')}")
    outs, state, tensors = run_generated(mod, model, inputs)
    ref = interpret(graph_level, arguments(graph_level, weights, *[x.numpy() for x in inputs]))
    with torch.no_grad():
        eager = model(*inputs)
    eager = eager if isinstance(eager, (tuple, list)) else (eager,)
    mutated = dict(mod.MUTATES)  # a buffer's new value (llama1b's KV caches): the interpreter's, and eager's
    buffers = dict(model.named_buffers())
    for i, a in mutated.items():
        assert rel(outs[i].numpy(), ref[i]) < 1e-6
        assert rel(outs[i].numpy(), buffers[mod.LABELS[a]].numpy()) < 1e-6
        assert tensors[a] is not buffers[mod.LABELS[a]]
    outs = [o for i, o in enumerate(outs) if i not in mutated]
    ref = [r for i, r in enumerate(ref) if i not in mutated]
    assert len(outs) == len(ref) == len(eager)
    for o, r, e in zip(outs, ref, eager):
        assert not torch.isnan(o).any(), "an output element was never written"
        assert rel(o.numpy(), r) < 1e-4
        assert rel(o.numpy(), e.numpy()) < 1e-4
    # a second launch (epoch 1) reuses buffers and counters without a reset
    outs2 = [o for i, o in enumerate(mod.launch(state, tensors, watchdog=1000)) if i not in mutated]
    mod.check(state)
    for o, r in zip(outs2, ref):
        assert rel(o.numpy(), r) < 1e-4


def _lag_all_but_tickets(mod, state) -> None:
    """Every counter but the kernels' tickets (in their counter regions, or after them) at -1000: every queue slot
    and every stage's done counter looks far behind this run."""
    lag = torch.ones(mod.N_COUNTERS, dtype=torch.bool)
    lag[[k["ticket"] for k in mod.KERNELS]] = False
    state["counters"][lag] = -1000


def test_watchdog_names_the_queue(tmp_path):
    """A tile that never arrives is reported with its queue, not a hang."""
    model, inputs, _, _, lowered = lower("mlp_gpt3_T256", "dataflow:spatial")
    mod = load_generated(generate_triton(lowered, capacity="all"), tmp_path, "k_watchdog")
    assert mod.QUEUES, "the spatial schedule of the MLP has queues"
    params = dict(model.named_parameters())
    tensors = {n: (inputs[0] if mod.TENSORS[n][2] == "input" else resolve(mod.LABELS[n], params).detach())
               for n in mod.ARGS}
    state = mod.allocate("cpu")
    _lag_all_but_tickets(mod, state)  # slots look taken by an earlier, unfinished run
    mod.launch(state, tensors, watchdog=50)
    with pytest.raises(mod.QueueTimeout, match=r'queue "q\d+"'):
        mod.check(state)


def test_watchdog_names_the_temporal_wait(tmp_path):
    """A temporal consumer whose producer stage never finishes is reported with both stages, not a hang."""
    model, inputs, _, _, lowered = lower("mlp_gpt3_T256", "dataflow:temporal")
    mod = load_generated(generate_triton(lowered, capacity="all"), tmp_path, "k_watchdog_temporal")
    assert mod.WAITS and not mod.QUEUES
    kernel, consumer, producers = mod.WAITS[0]
    params = dict(model.named_parameters())
    tensors = {n: (inputs[0] if mod.TENSORS[n][2] == "input" else resolve(mod.LABELS[n], params).detach())
               for n in mod.ARGS}
    state = mod.allocate("cpu")
    _lag_all_but_tickets(mod, state)  # the producers' counters lag far behind this run
    mod.launch(state, tensors, watchdog=50)
    with pytest.raises(mod.QueueTimeout, match=rf'stage "{consumer}" gave up waiting on the programs of stage'):
        mod.check(state)


def test_generated_module_is_readable_and_self_contained():
    _, _, _, _, lowered = lower("mlp_gpt3_T256", "dataflow")
    src = generate_triton(lowered)
    assert "import kitsune" not in src and "from kitsune" not in src
    assert 'sem="release", scope="gpu"' in src and 'sem="acquire", scope="gpu"' in src
    assert "tl.debug_barrier()" in src
    assert src.count("@triton.jit") >= 2
    compile(src, "<generated>", "exec")


def test_index_simplification():
    ax = Atom("axis", "o1", 0, 127, frozenset(["o1"]), 0)
    c = Atom("sym", "c0", 0, 9, frozenset(), 1)
    x = ladd(lscale(latom(c), 128), latom(ax))  # c0*128 + o1, o1 < 128
    assert lfloordiv(x, 128) == latom(c)
    assert lmod(x, 128) == latom(ax)
    assert lrange(x) == (0, 9 * 128 + 127)
    y = ladd(x, lconst(64))  # not aligned: stays a division
    assert lfloordiv(y, 128).terms[0][0].kind == "div"
    assert lmod(lscale(latom(c), 6), 3) == lconst(0)


def _lin_value(x, env):
    """The integer value of an index expression (sym atoms from ``env``; floor division and Python's modulo)."""
    total = x.const
    for a, c in x.terms:
        if a.kind == "sym":
            v = env[a.key]
        elif a.kind == "div":
            v = _lin_value(a.arg, env) // a.c
        else:
            v = _lin_value(a.arg, env) % a.c
        total += c * v
    return total


def _factor_shape(draw, dims):
    """A shape of the same element count: each dim split into factors or neighbours merged, unit dims put in."""
    out = []
    for d in dims:
        fs = [f for f in range(2, d) if d % f == 0]
        if fs and draw(st.booleans()):
            f = draw(st.sampled_from(fs))
            out += [f, d // f]
        else:
            out.append(d)
        if draw(st.integers(0, 4)) == 0:
            out.append(1)
    i = 0
    while i + 1 < len(out):
        if draw(st.integers(0, 2)) == 0:
            out[i:i + 2] = [out[i] * out[i + 1]]
        i += 1
    return tuple(out)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.data())
def test_reshape_index_is_the_flat_digits_group_by_group(data):
    """``reshape_index`` (a reshape's source index, group by group) equals numpy's unravel of the flat offset for
    every in-range result index, on shapes split, merged and padded with unit dims; a nearest upsampling's
    [N, C, H, 2, W, 2] -> [N, C, 2H, 2W] reads each source dim from its own result dim only."""
    import numpy as np

    from kitsune.codegen.triton_gen.index_algebra import laxes, reshape_groups, reshape_index

    base = data.draw(st.lists(st.integers(1, 12), min_size=1, max_size=4))
    src = _factor_shape(data.draw, base)
    dst = _factor_shape(data.draw, base)
    syms = [latom(Atom("sym", f"i{d}", 0, n - 1, frozenset([f"i{d}"]), 0)) for d, n in enumerate(dst)]
    sidx = reshape_index(tuple(syms), src, dst)
    for g_src, g_dst in reshape_groups(src, dst):
        assert math.prod(src[d] for d in g_src) == math.prod(dst[d] for d in g_dst)
    for _ in range(20):
        at = [data.draw(st.integers(0, n - 1)) for n in dst]
        env = {f"i{d}": v for d, v in enumerate(at)}
        want = np.unravel_index(np.ravel_multi_index(at, dst), src) if src else ()
        assert tuple(_lin_value(x, env) for x in sidx) == tuple(int(w) for w in want), (src, dst, at)
    up = reshape_index(tuple(latom(Atom("sym", f"u{d}", 0, n - 1, frozenset([f"u{d}"]), 0))
                             for d, n in enumerate((2, 3, 8, 6))), (2, 3, 4, 2, 3, 2), (2, 3, 8, 6))
    assert [sorted(laxes(x)) for x in up] == [["u0"], ["u1"], ["u2"], ["u2"], ["u3"], ["u3"]]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.data())
def test_division_through_a_common_factor(data):
    """``x // c`` and ``x % c`` where ``x = g a + b`` with ``g`` dividing ``c``, ``a >= 0`` and ``0 <= b < g`` (a
    GroupNorm statistic read through its rows' reshape: ``(4096 (64 c + o) + w) // 49152`` with ``w < 4096``): the
    simplified index equals floor division and modulo at every point, and is a division of ``a`` alone."""
    g = data.draw(st.sampled_from([2, 4, 8, 16, 64, 4096]))
    m = data.draw(st.integers(2, 13))
    c = g * m
    ka, kb = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 3))
    A = latom(Atom("sym", "a", 0, data.draw(st.integers(1, 40)), frozenset(["a"]), 0))
    B = latom(Atom("sym", "b", 0, (g - 1) // kb, frozenset(["b"]), 0))
    x = ladd(lscale(A, g * ka), lscale(B, kb))
    q, r = lfloordiv(x, c), lmod(x, c)
    for _ in range(30):
        env = {"a": data.draw(st.integers(0, A.terms[0][0].hi)), "b": data.draw(st.integers(0, B.terms[0][0].hi))}
        v = _lin_value(x, env)
        assert _lin_value(q, env) == v // c and _lin_value(r, env) == v % c, (g, m, ka, kb, env)
    c_ = latom(Atom("sym", "c", 0, 5, frozenset(["c"]), 0))
    o = latom(Atom("axis", "o", 0, 63, frozenset(["o"]), 0))
    w = latom(Atom("axis", "w", 0, 4095, frozenset(["w"]), 0))
    stat = lfloordiv(ladd(lscale(c_, 262144), lscale(o, 4096), w), 49152)
    assert stat == lfloordiv(ladd(lscale(c_, 64), o), 12) and "w" not in stat.key(), stat.key()


def test_matching_tile():
    assert matching_tile((2048, 64), 2048) == (1, 64)
    assert matching_tile((2048, 64), 4096) == (1, 32)
    assert matching_tile((8, 6), 3) is None


def test_no_program_is_a_diagnostic():
    m = parse_module("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                     "  %y = graph.relu %x : tensor<4xf32> -> tensor<4xf32>\n"
                     "  func.return %y : tensor<4xf32>\n}\n")
    with pytest.raises(CodegenError, match="kitsune-pipeline"):
        build_plan(m)


ROWS = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = gpu_queue.program (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%gx: tensor<4x8xf32>):
    %k = gpu_queue.kernel "k0" grid 2 warps 4 smem 0 (%gx) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>):
      gpu_queue.queue "q0" tile [4, 4] capacity CAP : tensor<4x8xf32>
      %s0 = gpu_queue.stage "p" pids [0, 1) tile [4, 4] (%a) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
      ^bb0(%sa: tensor<4x8xf32>):
        %y = graph.relu %sa : tensor<4x8xf32> -> tensor<4x8xf32>
        gpu_queue.push %y into "q0" : tensor<4x8xf32>
        gpu_queue.yield %y : tensor<4x8xf32>
      }
      %s1 = gpu_queue.stage "c" pids [1, 2) tile [4, 8] () : () -> tensor<4x8xf32> {
        %t = gpu_queue.pop "q0" {relation = "rows"} : tensor<4x8xf32>
        %z = graph.neg %t : tensor<4x8xf32> -> tensor<4x8xf32>
        gpu_queue.yield %z : tensor<4x8xf32>
      }
      gpu_queue.yield %s1 : tensor<4x8xf32>
    }
    gpu_queue.launch_plan ["k0"] buffers []
    gpu_queue.yield %k : tensor<4x8xf32>
  }
  func.return %r : tensor<4x8xf32>
}
"""


def test_too_small_queue_is_a_diagnostic():
    """A consumer that holds a whole row band needs as many slots as the band has tiles."""
    with pytest.raises(CodegenError, match=r'queue "q0" has capacity 1 .* relation "rows".* at least 2 slots'):
        build_plan(parse_module(ROWS.replace("CAP", "1")))


def test_rows_queue_with_exact_capacity(tmp_path):
    """Two slots for a two-tile row band: the ring is reused across runs (epochs), no reset."""
    mod = load_generated(generate_triton(parse_module(ROWS.replace("CAP", "2"))), tmp_path, "k_rows")
    state = mod.allocate("cpu")
    for run in range(3):
        x = torch.randn(4, 8)
        (out,) = mod.launch(state, {mod.ARGS[0]: x}, watchdog=1000)
        mod.check(state)
        assert torch.equal(out, -torch.relu(x))


def test_folded_integer_constant_is_an_integer_literal(tmp_path):
    """Integer arithmetic on constants folds to a float constant in the evaluator; its cast to the integer result
    type must stay a literal (transformers' GPT-2 builds its mask positions this way: ``1.0.to(tl.int64)`` failed
    to compile). Both branches of the where are constants, so the chosen one shows the value is right."""
    import kitsune

    class M(torch.nn.Module):
        def forward(self, x):
            z = torch.zeros((1, 1), dtype=torch.long)
            return x + torch.where(z < 1, z + 3, z - 5)

    x = torch.arange(6, dtype=torch.long).reshape(2, 3)
    cm = kitsune.compile(M(), (x,), mode="bulk-sync", device="cpu", cache=False)
    assert ".0.to(tl." not in cm.source
    assert torch.equal(cm(x), M()(x))
    assert torch.equal(cm(x), x + 3)


def test_kernels_of_the_same_code_share_one_function(tmp_path):
    """A stack of identical layers: the kernels of layers 3.. are the code of layer 2's up to names, so their
    KERNELS entries call layer 2's function (one Triton compile) with their own tensors and tickets; a layer of
    another width does not share, nor does layer 1, which reads the program's input (a launch constant: all its
    loads go before its wait, ``early_loads``) where the others read a buffer the launch writes. The program still
    computes the stack."""
    import kitsune

    class Stack(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ls = torch.nn.ModuleList([torch.nn.Linear(16, 16) for _ in range(3)] + [torch.nn.Linear(16, 8)])

        def forward(self, x):
            for lin in self.ls:
                x = torch.tanh(lin(x)) * 2.0
            return x

    torch.manual_seed(0)
    m, x = Stack().eval(), torch.randn(4, 16)
    cm = kitsune.compile(m, (x,), mode="bulk-sync", device="cpu", cache=False)
    ks = cm.program.module.KERNELS
    assert len(ks) == 4
    fns = [k["fn"] for k in ks]
    assert fns[2] is fns[1] and fns[1] is not fns[0] and fns[3] is not fns[1]
    assert [k["ticket"] for k in ks] == sorted({k["ticket"] for k in ks})  # one ticket counter each
    assert len({tuple(k["tensors"]) for k in ks}) == 4  # each with its own weights and buffers
    assert cm.source.count('the code of kernel "k1"') == 1 and 'the code of kernel "k0"' not in cm.source
    assert torch.allclose(cm(x), m(x), rtol=1e-5, atol=1e-5)
    # launched twice (epochs): the shared function keeps each kernel's own ticket counter
    x2 = torch.randn(4, 16)
    assert torch.allclose(cm(x2), m(x2), rtol=1e-5, atol=1e-5)
