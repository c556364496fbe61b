"""kitsune-opt and kitsune-run: outputs, diagnostics (file:line:col, no traceback), files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kitsune.tools import opt, run

OK = """\
func.func @main(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %y = graph.linear %x, %w : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %s = graph.softmax %y {dim = 1} : tensor<4x16xf32> -> tensor<4x16xf32>
  func.return %s : tensor<4x16xf32>
}
"""

NAMED = """\
func.func @main(%x: tensor<2x3xf32> {kitsune.name = "x"}, %i: tensor<2xi64> {kitsune.name = "idx"}) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %y = graph.exp %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %z = graph.index_select %x, %i {dim = 0} : tensor<2x3xf32>, tensor<2xi64> -> tensor<2x3xf32>
  func.return %y, %z : tensor<2x3xf32>, tensor<2x3xf32>
}
"""

# (name, text, line, col, op name, message)
BAD = [
    ("syntax", """\
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.softmax %x {dim = } : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
""", 2, None, "graph.softmax", "Expected integer literal"),
    ("unknown_op", """\
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.softmaxx %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
""", 2, None, "graph.softmaxx", "is not registered"),
    ("operand_count", """\
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.add %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
""", 2, None, "graph.add", "expects 2 operand(s) (a, b), got 1"),
    ("unknown_attr", """\
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.softmax %x {axis = 1} : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
""", 2, None, "graph.softmax", "has no attribute 'axis'; it has: dim"),
    ("shape_mismatch", """\
func.func @main(%x: tensor<4x8xf32>, %w: tensor<7x16xf32>) -> tensor<4x16xf32> {

  %y = graph.matmul %x, %w : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
""", 3, 3, "graph.matmul", "size mismatch for index 'k': b dim 0 has size 7 but a dim 1 has size 8"),
    ("result_type", """\
func.func @main(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %y = graph.sum %x {dims = [1], keepdim = true} : tensor<4x8xf32> -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
""", 2, 3, "graph.sum", "result #0 has type tensor<4xf32>, but the operands give shape [4, 1]"),
]


@pytest.fixture
def files(tmp_path):
    def write(name, text):
        p = tmp_path / name
        p.write_text(text)
        return p

    return write


def test_opt_success_stdout(files, capsys):
    f = files("ok.mlir", OK)
    assert opt.main([str(f), "-p", "graph-decompose"]) == 0
    out, err = capsys.readouterr()
    assert "graph.matmul" in out and "graph.amax" in out and "graph.softmax" not in out
    assert err == ""


def test_opt_output_file_and_pass_options(files, tmp_path, capsys):
    f = files("ok.mlir", OK)
    o = tmp_path / "out.mlir"
    assert opt.main([str(f), "-p", "graph-decompose{ops=softmax},graph-canonicalize", "-o", str(o)]) == 0
    text = o.read_text()
    assert "graph.linear" in text and "graph.softmax" not in text
    assert capsys.readouterr().out == ""
    # the output parses again
    from kitsune.context import parse_module

    parse_module(text)


def test_opt_roundtrip_without_passes(files, capsys):
    f = files("ok.mlir", OK)
    assert opt.main([str(f)]) == 0
    out = capsys.readouterr().out
    assert "graph.softmax %y {dim = 1}" in out


@pytest.mark.parametrize("name, text, line, col, opname, msg", BAD, ids=[b[0] for b in BAD])
@pytest.mark.parametrize("tool", ["opt", "run"])
def test_malformed_input(files, tmp_path, capsys, name, text, line, col, opname, msg, tool):
    f = files(f"{name}.mlir", text)
    o = tmp_path / "out.mlir"
    if tool == "opt":
        rc = opt.main([str(f), "-p", "graph-canonicalize", "-o", str(o)])
    else:
        rc = run.main([str(f), "--save", str(tmp_path / "o.npz")])
    out, err = capsys.readouterr()
    assert rc == 1
    assert f"{f}:{line}:" in err or f"{f.name}:{line}:" in err, err
    if col is not None:
        assert f":{line}:{col}:" in err, err
    assert opname in err and msg in err, err
    assert "Traceback" not in err and "Traceback" not in out
    assert f"kitsune-{tool}: error:" in err
    assert not o.exists() and not (tmp_path / "o.npz").exists()


def test_opt_unknown_pass(files, capsys):
    f = files("ok.mlir", OK)
    assert opt.main([str(f), "-p", "graph-nonsense"]) != 0
    _, err = capsys.readouterr()
    assert "Traceback" not in err


def test_opt_bad_pass_option(files, tmp_path, capsys):
    f = files("ok.mlir", OK)
    o = tmp_path / "out.mlir"
    assert opt.main([str(f), "-p", "graph-decompose{ops=relu}", "-o", str(o)]) == 1
    _, err = capsys.readouterr()
    assert "unknown op(s) relu" in err and "Traceback" not in err
    assert not o.exists()


def test_opt_missing_file(tmp_path, capsys):
    assert opt.main([str(tmp_path / "nope.mlir")]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_opt_help_lists_kitsune_passes(capsys):
    assert opt.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "Kitsune passes" in out
    from kitsune.passes import ALL_PASSES

    for name in ALL_PASSES:
        assert name in out
    assert "Decompose composite graph ops" in out


def test_run_prints_outputs(files, capsys):
    f = files("ok.mlir", OK)
    assert run.main([str(f)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("output #0: shape [4, 16] dtype float32 sum 4 abs-sum 4")  # softmax rows sum to 1


def test_run_inputs_npz_and_save(files, tmp_path, capsys):
    f = files("named.mlir", NAMED)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    idx = np.array([1, 1])
    np.savez(tmp_path / "in.npz", x=x, arg1=idx)  # by name, and by position
    save = tmp_path / "out.npz"
    assert run.main([str(f), "--inputs", str(tmp_path / "in.npz"), "--save", str(save)]) == 0
    out = capsys.readouterr().out
    assert out.count("output #") == 2
    got = np.load(save)
    np.testing.assert_allclose(got["out0"], np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(got["out1"], x[[1, 1]])


def test_run_random_inputs_are_seeded(files, tmp_path, capsys):
    f = files("named.mlir", NAMED)
    outs = []
    for seed in (0, 0, 1):
        assert run.main([str(f), "--seed", str(seed), "--index-high", "2"]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] != outs[2]


def test_run_with_passes_gives_same_output(files, capsys):
    f = files("ok.mlir", OK)
    assert run.main([str(f)]) == 0
    plain = capsys.readouterr().out
    assert run.main([str(f), "-p", "graph-decompose,graph-canonicalize"]) == 0
    assert capsys.readouterr().out == plain


def test_run_bad_inputs(files, tmp_path, capsys):
    f = files("named.mlir", NAMED)
    np.savez(tmp_path / "in.npz", x=np.zeros((3, 3), np.float32))
    assert run.main([str(f), "--inputs", str(tmp_path / "in.npz")]) == 1
    err = capsys.readouterr().err
    assert "input #0 of @main has shape [3, 3], expected tensor<2x3xf32>" in err and "Traceback" not in err
    assert run.main([str(f), "--fn", "nope"]) == 1
    assert "no function @nope in the module (functions: @main)" in capsys.readouterr().err


def _env():
    env = dict(os.environ)
    env.pop("KITSUNE_TRACEBACK", None)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_subprocess_exit_codes(files, tmp_path):
    bad = files("bad.mlir", BAD[4][1])
    good = files("ok.mlir", OK)
    o = tmp_path / "o.mlir"
    p = subprocess.run([sys.executable, "-m", "kitsune.tools.opt", str(bad), "-o", str(o)], capture_output=True,
                       text=True, env=_env(), timeout=120)
    assert p.returncode == 1
    assert f"{bad}:3:3: 'graph.matmul' size mismatch" in p.stderr
    assert "Traceback" not in p.stderr and not o.exists()
    p = subprocess.run([sys.executable, "-m", "kitsune.tools.run", str(good)], capture_output=True, text=True,
                       env=_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    assert "output #0: shape [4, 16]" in p.stdout and "Traceback" not in p.stderr


def test_package_level_api():
    """kitsune.parse / kitsune.interpret, as the README shows them."""
    import numpy as np

    import kitsune

    m = kitsune.parse(
        "func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
        "  %y = graph.softmax %x {dim = 1} : tensor<2x3xf32> -> tensor<2x3xf32>\n"
        "  func.return %y : tensor<2x3xf32>\n}\n"
    )
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = kitsune.interpret(m, [x])
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-6)
