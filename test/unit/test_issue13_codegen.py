"""The ops and fixes of issue 13 through the whole pipeline: lowered in both modes, Triton generated and run
under Triton's CPU interpreter, against torch (and the reference interpreter).

Also: NaN through max / pooling as in eager, out-of-range gather / scatter indices raise (in every build; under
the interpreter at the faulty call itself), integer inputs
of another width are converted only when they fit, 0-d buffers, and grouped indices with groups of size 1.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import kitsune  # noqa: E402
from graphgen import single_op_module, ttype  # noqa: E402
from kitsune.context import make_context, parse_module  # noqa: E402
from kitsune.interpreter import interpret  # noqa: E402
from kitsune.passes.pipeline import KitsunePipelinePass  # noqa: E402
from kitsune.runtime.program import InputError, Program  # noqa: E402
from test_ops import CASES  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")

NEW = ["sin", "cos", "fmod", "remainder", "cumsum", "avg_pool2d", "index", "pad", "scatter_reduce", "attention",
       "max_pool2d"]
PICK = [(n, c) for n in NEW for c in CASES[n] if not c.dyn and n not in ("fmod", "remainder") or c.id == "same"]


def _run_lowered(module_text: str, inputs, mode: str):
    m = parse_module(module_text)
    KitsunePipelinePass(mode=mode).apply(make_context(), m)
    prog = Program.from_module(m, {}, "cpu", debug=True)
    return [o.numpy() for o in prog(*[torch.from_numpy(np.ascontiguousarray(x)) for x in inputs])]


@pytest.mark.parametrize("mode", ["bulk-sync", "dataflow"])
@pytest.mark.parametrize("name, case", PICK, ids=[f"{n}-{c.id}" for n, c in PICK])
def test_new_op_generated_matches_torch(name, case, mode):
    from graphgen import elem_of

    types = [ttype(list(x.shape), elem_of(x.dtype)) for x in case.inputs]
    m = single_op_module(name, types, result_types=case.result_types, **case.attrs)
    text = str(m)
    want = case.ref(*[torch.from_numpy(np.ascontiguousarray(x)) for x in case.inputs])
    want = want.numpy() if isinstance(want, torch.Tensor) else want
    ref = interpret(parse_module(text), case.inputs)[0]
    np.testing.assert_allclose(ref.astype(np.float64), want.astype(np.float64), rtol=1e-4, atol=1e-5)
    got = _run_lowered(text, case.inputs, mode)[0]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-4, atol=1e-5)


class _Pool(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.max_pool2d(x, 2), x.amax(-1), torch.relu(x), torch.maximum(x, x * 0.5)


def test_nan_propagates_through_max_and_pooling():
    x = torch.randn(1, 2, 4, 4)
    x[0, 0, 1, 1] = float("nan")
    x[0, 1, 3, 0] = float("nan")
    cm = kitsune.compile(_Pool(), (x,), mode="bulk-sync")
    for got, want in zip(cm(x), _Pool()(x)):
        assert torch.equal(torch.isnan(got), torch.isnan(want))
        torch.testing.assert_close(got, want, equal_nan=True)


class _Emb(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.e = torch.nn.Embedding(10, 4)

    def forward(self, i):
        return self.e(i) * 2.0


def emb_case(at=(1, 2), bad_id=12):
    """An embedding of 10 rows (seed 0), ids in range, and a copy with ``bad_id`` at ``at``."""
    torch.manual_seed(0)
    m = _Emb().eval()
    i = torch.randint(0, 10, (3, 4))
    bad = i.clone()
    bad[at] = bad_id
    return m, i, bad


@pytest.mark.parametrize("debug", [False, True])
def test_out_of_range_index_raises(debug):
    """Index checks are on in every build: under the interpreter the faulty call itself raises (on a GPU
    without debug a later call or check_errors() would), naming the op, its source line and the dimension."""
    m, i, bad = emb_case()
    cm = kitsune.compile(m, (i,), mode="bulk-sync", debug=debug)
    assert "_index_check(" in cm.source.split("def _index_check", 1)[1]  # called, not only defined
    torch.testing.assert_close(cm(i), m(i))
    with pytest.raises(IndexError, match=r"test_issue13_codegen.py:\d+:\d+: index out of range: 'graph.embedding' "
                                         r"uses .* outside \[0, 10\) in dim 0") as e:
        cm(bad)
    assert type(e.value).__name__ == "KitsuneIndexError"
    assert int(cm.program.state["err"][0]) == 0  # the flag is reset ...
    torch.testing.assert_close(cm(i), m(i))  # ... and later calls run
    cm.check_errors()  # nothing pending
    neg = i.clone()
    neg[0, 0] = -1  # embedding takes no negative ids (eager raises too)
    with pytest.raises(IndexError, match="graph.embedding"):
        cm(neg)
    # another integer width is converted when the values fit, else rejected
    torch.testing.assert_close(cm(i.to(torch.int32)), m(i))


def test_lazy_error_check_raises_at_a_later_call():
    """The GPU path's logic (no sync in a call): the kernels write the flag into host memory (HostFlag, a plain
    tensor on the CPU), a faulty call returns, the next call finds the flag set and raises instead of running
    and resets it; check_errors() raises at once."""
    from kitsune.runtime.program import HostFlag

    m, i, bad = emb_case()
    cm = kitsune.compile(m, (i,), mode="bulk-sync", cache=False)
    p = cm.program
    p.watch_flag(HostFlag(torch.device("cpu")))
    cm(bad)  # returns: nothing reads the flag inside a call
    assert p._flag.value() != 0 and p.state["err"] is p._flag.tensor
    calls = p.calls
    with pytest.raises(IndexError, match=r"index out of range: 'graph.embedding' .* in dim 0") as e:
        cm(i)  # finds the flag set: raises instead of running
    assert type(e.value).__name__ == "KitsuneIndexError" and p.calls == calls
    assert p._flag.value() == 0
    torch.testing.assert_close(cm(i), m(i))  # the flag was reset
    torch.testing.assert_close(cm(i), m(i))  # a clean call raises nothing
    cm(bad)
    with pytest.raises(IndexError, match="graph.embedding"):
        cm.check_errors()  # raises now
    torch.testing.assert_close(cm(i), m(i))  # reported once: no second report
    cm.check_errors()


def test_index_checks_off_reads_zero_silently():
    m, i, bad = emb_case()
    on = kitsune.compile(m, (i,), mode="bulk-sync")
    off = kitsune.compile(m, (i,), mode="bulk-sync", index_checks=False)
    assert off is not on and off.source != on.source  # part of both cache keys
    assert kitsune.compile(m, (i,), mode="bulk-sync", index_checks=False) is off
    body_on, body_off = on.source.split("def _index_check", 1)[1], off.source.split("def _index_check", 1)[1]
    assert "_index_check(" in body_on and "_index_check(" not in body_off
    assert "INDEX_CHECKS = []" in off.source and "INDEX_CHECKS = []" not in on.source
    got = off(bad)  # no error: the out-of-range row reads 0
    want = m(bad.clamp(max=9))
    want[1, 2] = 0.0
    torch.testing.assert_close(got, want)
    off.check_errors()
    torch.testing.assert_close(off(i), m(i))


def test_narrowing_integer_input_is_rejected():
    src = ("func.func @main(%i: tensor<4xi32>, %w: tensor<10x3xf32>) -> tensor<4x3xf32> {\n"
           "  %y = graph.embedding %w, %i : tensor<10x3xf32>, tensor<4xi32> -> tensor<4x3xf32>\n"
           "  func.return %y : tensor<4x3xf32>\n}\n")
    m = parse_module(src)
    KitsunePipelinePass(mode="bulk-sync").apply(make_context(), m)
    prog = Program.from_module(m, {}, "cpu")
    w = torch.randn(10, 3)
    ok = torch.tensor([1, 2, 3, 9], dtype=torch.int64)
    torch.testing.assert_close(prog(ok, w)[0], w[ok])
    with pytest.raises(InputError, match="does not fit"):
        prog(torch.tensor([1, 2, 3, 2**40]), w)


class _BN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(4, 4, 3, padding=1, groups=4)  # depthwise, channel multiplier 1
        self.b = torch.nn.BatchNorm2d(4)

    def forward(self, x):
        return self.b(self.c(x))


def test_zero_d_buffers_and_unit_groups_compile():
    torch.manual_seed(0)
    m = _BN().eval()
    m.b.running_mean.normal_()
    x = torch.randn(1, 4, 6, 6)
    cm = kitsune.compile(m, (x,), mode="bulk-sync")
    torch.testing.assert_close(cm(x), m(x), rtol=1e-4, atol=1e-5)


def test_masked_attention_is_not_split_or_decomposed():
    from kitsune.passes.graph_decompose import GraphDecomposePass
    from kitsune.passes.split_reduction import SplitReductionPass
    from kitsune.passes.form_regions import FormRegionsPass

    src = ("func.func @main(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x64x8xf32>, %v: tensor<1x2x64x8xf32>, "
           "%m: tensor<4x64xf32>) -> tensor<1x2x4x8xf32> {\n"
           "  %y = graph.attention %q, %k, %v, %m {causal = true} : tensor<1x2x4x8xf32>, tensor<1x2x64x8xf32>, "
           "tensor<1x2x64x8xf32>, tensor<4x64xf32> -> tensor<1x2x4x8xf32>\n"
           "  func.return %y : tensor<1x2x4x8xf32>\n}\n")
    rng = np.random.default_rng(0)
    ins = [rng.standard_normal(s).astype(np.float32) for s in [(1, 2, 4, 8), (1, 2, 64, 8), (1, 2, 64, 8), (4, 64)]]
    want = interpret(parse_module(src), ins)[0]
    for passes in ([GraphDecomposePass()], [FormRegionsPass(), SplitReductionPass(force=4)]):
        m = parse_module(src)
        for p in passes:
            p.apply(make_context(), m)
        np.testing.assert_allclose(interpret(m, ins)[0], want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- bad input: diagnostics, not hangs or tracebacks


def _opt(tmp_path, text: bytes, *args):
    import subprocess
    import sys

    f = tmp_path / "in.mlir"
    f.write_bytes(text)
    return subprocess.run([sys.executable, "-m", "kitsune.tools.opt", str(f), *args], capture_output=True,
                          text=True, timeout=120)


def test_unterminated_string_is_located_not_a_hang(tmp_path):
    r = _opt(tmp_path, b'func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {\n'
                       b'  %y = graph.gelu %x {approximate = "tanh} : tensor<4x8xf32> -> tensor<4x8xf32>\n'
                       b'  func.return %y : tensor<4x8xf32>\n}\n')
    assert r.returncode == 1
    assert "in.mlir:2:37" in r.stderr and "closing string literal" in r.stderr and "Traceback" not in r.stderr


def test_random_bytes_and_empty_file(tmp_path):
    r = _opt(tmp_path, b"func.func\n  \xb7\xff garbage")
    assert r.returncode == 1 and "in.mlir:2:3: byte 0xb7 is not UTF-8" in r.stderr
    r = _opt(tmp_path, b"// only a comment\n")
    assert r.returncode == 0 and "builtin.module" in r.stdout


def test_zero_size_dimension_is_a_located_error(tmp_path):
    r = _opt(tmp_path, b"func.func @main(%x: tensor<0x8xf32>) -> tensor<0x8xf32> {\n"
                       b"  %y = graph.relu %x : tensor<0x8xf32> -> tensor<0x8xf32>\n"
                       b"  func.return %y : tensor<0x8xf32>\n}\n", "-p", "kitsune-pipeline")
    assert r.returncode == 1 and "in.mlir:2:3: 'graph.relu' operand 'x' has a zero-size dimension" in r.stderr


class _Branchy(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


class _Scaled(torch.nn.Module):
    def forward(self, x, s: float):
        return x * s + 1.0


class _Train(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.d = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.d(x) + 1.0


def test_data_dependent_control_flow_says_what_to_do(capfd):
    from kitsune.frontend.torch_export import ExportError

    with pytest.raises(ExportError) as e:
        kitsune.compile(_Branchy(), (torch.randn(3, 4),))
    msg = str(e.value)
    assert "test_issue13_codegen.py:" in msg and "data-dependent control flow" in msg and "torch.cond" in msg
    assert "if x.sum() > 0:" in msg
    assert "def forward" not in capfd.readouterr().err  # no FX graph dump


def test_python_scalar_argument_and_train_mode_hint():
    from kitsune.frontend.torch_export import UnsupportedOpsError

    x = torch.randn(3, 4)
    cm = kitsune.compile(_Scaled(), (x, 2.5), mode="bulk-sync")
    torch.testing.assert_close(cm(x, 2.5), x * 2.5 + 1.0)
    with pytest.raises(InputError, match="compile again"):
        cm(x, 3.0)
    with pytest.raises(UnsupportedOpsError, match=r"call model.eval\(\)"):
        kitsune.compile(_Train().train(), (x,))
    cm = kitsune.compile(_Train().eval(), (x,), mode="bulk-sync")
    torch.testing.assert_close(cm(x), x + 1.0)


class _NegIndex(torch.nn.Module):
    def forward(self, x, i):
        return x[i] * 2.0


def test_negative_tensor_indices_count_from_the_end():
    x = torch.randn(6, 3)
    i = torch.tensor([0, -1, 2, -6])
    cm = kitsune.compile(_NegIndex(), (x, i), mode="bulk-sync", debug=True)
    torch.testing.assert_close(cm(x, i), x[i] * 2.0)


class _Scatter(torch.nn.Module):
    def forward(self, x, i, s):
        return torch.index_add(x, 0, i, s) * 1.0


@pytest.mark.parametrize("debug", [False, True])
def test_out_of_range_scatter_index_raises(debug):
    x, s = torch.randn(5, 3), torch.randn(4, 3)
    i = torch.tensor([0, 4, 2, 4])
    cm = kitsune.compile(_Scatter(), (x, i, s), mode="bulk-sync", debug=debug)
    torch.testing.assert_close(cm(x, i, s), torch.index_add(x, 0, i, s))
    with pytest.raises(IndexError, match="index out of range: 'graph.index_add'"):
        cm(x, torch.tensor([0, 5, 2, 4]), s)
    torch.testing.assert_close(cm(x, i, s), torch.index_add(x, 0, i, s))  # the flag was reset


class _Clash(torch.nn.Module):
    """Inputs named like the generated code's own names: the tile index, the program id, the Triton module, a
    builtin, a kernel and a fresh temporary."""

    def forward(self, t, pid, tl, range, k0, v3):
        return (t * 2 + pid) * tl - range + k0 * v3


def test_argument_names_never_shadow_generated_names():
    """A model input named ``t`` used to overwrite the tile index silently, ``pid`` gave a SyntaxError: such
    arguments get another name in the generated module (the labels the user sees stay), and the result is right."""
    import ast

    from kitsune.codegen.plan import reserved_name

    m = _Clash().eval()
    xs = tuple(torch.randn(4, 40, generator=torch.Generator().manual_seed(i)) for i in range(6))
    for mode in ("bulk-sync", "dataflow"):
        cm = kitsune.compile(m, xs, mode=mode, cache=False)
        torch.testing.assert_close(cm(*xs), m(*xs))
        mod = cm.program.module
        assert [mod.LABELS[a] for a in mod.ARGS] == ["t", "pid", "tl", "range", "k0", "v3"]
        assert not any(reserved_name(a) for a in mod.ARGS)
        tree = ast.parse(cm.source)
        params = {a.arg for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for a in f.args.args}
        assert set(mod.ARGS) <= params  # the renamed tensors are what the kernels take
