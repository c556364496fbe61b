"""Tensor-comprehension notation: parser, errors, shape rules, evaluator, counts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kitsune.semantics.comprehension import (
    DYN,
    Access,
    Affine,
    BinOp,
    Call,
    Indirect,
    Neg,
    Num,
    TCError,
    count,
    evaluate,
    infer_shapes,
    parse,
)


def _err(text, params=None) -> TCError:
    with pytest.raises(TCError) as ei:
        parse(text, params)
    return ei.value


# ----------------------------------------------------------------- parser


def test_parse_matmul_structure():
    p = parse("C[m,n] += A[m,k] * B[k,n]")
    (s,) = p.stmts
    assert s.op == "+="
    assert s.lhs == Access("C", (Affine((("m", 1),), 0), Affine((("n", 1),), 0)))
    assert isinstance(s.rhs, BinOp) and s.rhs.op == "*"
    assert s.lhs_vars == ("m", "n")
    assert s.reduction_vars == ("k",)
    assert p.used() == ["A", "B"]
    assert p.defined() == ["C"]


@pytest.mark.parametrize("op", ["=", "+=", "*=", "max=", "min="])
def test_parse_every_assignment(op):
    rhs = "X[i, j]" if op == "=" else "X[i, j]"
    lhs = "Y[i, j]" if op == "=" else "Y[i]"
    (s,) = parse(f"{lhs} {op} {rhs}").stmts
    assert s.op == op


def test_parse_expression_constructs():
    text = ("Y[i] = -X[i] + 2.5 * X[i] / 3 - X[i] ** 2.0 + exp(X[i]) + select(X[i] > 0.0, X[i], inf) "
            "+ (X[i] <= 1e-3) + (X[i] == .5) + (X[i] != 1.) + (X[i] >= 2) + (X[i] < 2E+2) + $a")
    (s,) = parse(text, {"a": 7}).stmts

    def walk(e):
        yield e
        match e:
            case Call(args=args):
                for c in args:
                    yield from walk(c)
            case BinOp(lhs=l, rhs=r):
                yield from walk(l)
                yield from walk(r)
            case Neg(arg=a):
                yield from walk(a)

    nodes = list(walk(s.rhs))
    ops = {n.op for n in nodes if isinstance(n, BinOp)}
    assert {"+", "-", "*", "/", "**", ">", "<=", "==", "!=", ">=", "<"} <= ops
    nums = {n.value for n in nodes if isinstance(n, Num)}
    assert {2.5, 3.0, 2.0, math.inf, 1e-3, 0.5, 1.0, 200.0, 7.0} <= nums
    assert any(isinstance(n, Neg) for n in nodes)
    assert {n.fn for n in nodes if isinstance(n, Call)} == {"exp", "select"}


def test_parse_precedence():
    (s,) = parse("Y[i] = X[i] + X[i] * X[i] ** 2.0").stmts
    assert s.rhs.op == "+" and s.rhs.rhs.op == "*" and s.rhs.rhs.rhs.op == "**"
    (s,) = parse("Y[i] = -X[i] ** 2.0").stmts
    assert isinstance(s.rhs, Neg) and s.rhs.arg.op == "**"


def test_parse_affine_indices_with_params_accumulating():
    (s,) = parse("Y[i] += X[2*i + $s - 1, -(j) + 3, $k * j, i - i]", {"s": 4, "k": 3}).stmts
    a = s.rhs
    assert a.indices[0] == Affine((("i", 2),), 3)
    assert a.indices[1] == Affine((("j", -1),), 3)
    assert a.indices[2] == Affine((("j", 3),), 0)
    assert a.indices[3] == Affine((), 0)  # i - i cancels
    assert str(a.indices[0]) == "2*i + 3"


def test_parse_indirect_gather_and_scatter():
    (s,) = parse("Y[b, e] += W[I[b, l], e]").stmts
    ix = s.rhs.indices[0]
    assert isinstance(ix, Indirect) and ix.access.tensor == "I"
    assert s.reduction_vars == ("l",)
    p = parse("Y[i] = X[i]; Y[I[j]] += S[j]")
    assert sorted(p.used()) == ["I", "S", "X"]
    assert isinstance(p.stmts[1].lhs.indices[0], Indirect)


def test_parse_multi_statement_comments_and_empty_index():
    p = parse("""
        # softmax over j
        M[r] max= X[r, j];   # max
        E[r, j] = exp(X[r, j] - M[r]);
        S[r] += E[r, j]
        ; Y[r, j] = E[r, j] / S[r];
        T[] += Y[r, j]
    """)
    assert [s.lhs.tensor for s in p.stmts] == ["M", "E", "S", "Y", "T"]
    assert p.stmts[-1].lhs.indices == ()
    assert p.used() == ["X"]


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "text, line, col, msg",
    [
        ("C[m,n] += A[m,k] * B[k,n", 1, None, "unexpected end of text"),
        ("Y[i] = X[i] +", 1, None, "unexpected end of text"),
        ("Y[i] = X[i]\n; Z[i] = X[i] @ 2", 2, 15, "unexpected character '@'"),
        ("Y[i] = X[i]\nZ[i] = X[i]", 2, 1, "unexpected 'Z'"),
        ("Y[i] = foo(X[i])", 1, 8, "unknown function 'foo'; known: abs, cos, erf, exp"),
        ("Y[i] = X[i]\n;Y2[i] = exp(X[i], X[i])", 2, 10, "function 'exp' takes 1 argument(s), got 2"),
        ("Y[i] = select(X[i], X[i])", 1, 8, "function 'select' takes 3 argument(s), got 2"),
        ("Y[m] += X[m*n]", 1, 11, "index is not affine"),
        ("Y[m] = X[m, k]", 1, 1, "index variable(s) k only on the right: use an accumulating"),
        ("Y[i] = X[i];\n  C[m, m] = A[m]", 2, 3, "index variable repeated on the left of 'C[m, m]'"),
        ("Y[i] = X[i + $p]", 1, 14, "unknown parameter $p"),
        ("Y[i] = X[I[i] + 1]", 1, None, "indirect index cannot be combined with arithmetic"),
    ],
)
def test_parse_errors_have_line_col(text, line, col, msg):
    e = _err(text)
    assert msg in e.message
    assert e.line == line
    if col is not None:
        assert e.column == col
    assert str(e).startswith(f"{e.line}:{e.column}: ")


def test_non_integer_index_param():
    e = _err("Y[i] = X[i + $p]", {"p": 0.5})
    assert "is not an integer" in e.message and e.line == 1


def test_expected_tokens_are_readable():
    e = _err("Y[i] = ")
    assert "expected one of" in e.message and "a name" in e.message


# ---------------------------------------------------------- shape inference


def test_extents_from_plain_indices():
    b = infer_shapes(parse("C[m,n] += A[m,k] * B[k,n]"), {"A": (3, 4), "B": (4, 5)})
    assert b.shapes["C"] == (3, 5)
    assert b.extents[0] == {"m": 3, "n": 5, "k": 4}


def test_window_rule_conv_and_pool():
    conv = parse("O[n, f, oh, ow] += X[n, c, oh*$s + kh - $p, ow*$s + kw - $p] * W[f, c, kh, kw]", {"s": 2, "p": 1})
    b = infer_shapes(conv, {"X": (1, 3, 9, 8), "W": (4, 3, 3, 3)})
    # (H + 2p - K) // s + 1
    assert b.shapes["O"] == (1, 4, (9 + 2 - 3) // 2 + 1, (8 + 2 - 3) // 2 + 1)
    pool = parse("Y[n, c, oh, ow] max= X[n, c, oh*2 + kh, ow*2 + kw]")
    b = infer_shapes(pool, {"X": (2, 3, 8, 7)}, {"kh": 2, "kw": 2})
    assert b.shapes["Y"] == (2, 3, 4, 3)
    # dilation
    b = infer_shapes(parse("Y[o] += X[o + 2*k]"), {"X": (10,)}, {"k": 3})
    assert b.shapes["Y"] == (10 - 2 * 2,)


def test_window_rule_no_valid_position():
    with pytest.raises(TCError, match="has no valid position: X dim 0 has size 2"):
        infer_shapes(parse("Y[o] += X[o + k]"), {"X": (2,)}, {"k": 5})


def test_explicit_extents_and_leading_part():
    b = infer_shapes(parse("Y[j] = X[j]"), {"X": (8,)}, {"j": 3})
    assert b.shapes["Y"] == (3,)
    b = infer_shapes(parse("Y[i, j] = X[i]"), {"X": (4,)}, {"j": 2})
    assert b.shapes["Y"] == (4, 2)


def test_missing_extent():
    with pytest.raises(TCError, match="cannot tell the extent of index variable"):
        infer_shapes(parse("Y[i, j] = X[i]"), {"X": (4,)})


def test_declared_shapes_concat():
    p = parse("Y[i, j] = A[i, j]; Y[i, j + 3] = B[i, j]")
    b = infer_shapes(p, {"A": (2, 3), "B": (2, 4)}, declared={"Y": (2, 7)})
    assert b.shapes["Y"] == (2, 7)
    out = evaluate(p, {"A": np.ones((2, 3)), "B": 2 * np.ones((2, 4))}, declared={"Y": (2, 7)})
    np.testing.assert_array_equal(out["Y"], np.concatenate([np.ones((2, 3)), 2 * np.ones((2, 4))], 1))


def test_size_mismatch_names_tensor_dim_and_var():
    with pytest.raises(TCError) as ei:
        infer_shapes(parse("C[m,n] += A[m,k] * B[k,n]"), {"A": (2, 3), "B": (4, 5)})
    assert ei.value.message == "size mismatch for index 'k': B dim 0 has size 4 but A dim 1 has size 3"


def test_rank_mismatch_and_undefined():
    with pytest.raises(TCError, match=r"'A\[m, k\]' uses 2 indices but 'A' has rank 3 \(shape \[1, 2, 3\]\)"):
        infer_shapes(parse("C[m] += A[m, k]"), {"A": (1, 2, 3)})
    with pytest.raises(TCError, match="tensor 'Z' is read before it is defined"):
        infer_shapes(parse("C[m] = Z[m]"), {})


def test_out_of_bounds_write():
    with pytest.raises(TCError) as ei:
        infer_shapes(parse("Y[i + 3] = X[i]"), {"X": (4,)}, declared={"Y": (5,)})
    assert ei.value.message == "'Y[i + 3]' writes positions 3..6 of Y dim 0, which has size 5"


def test_dynamic_sizes_propagate():
    b = infer_shapes(parse("C[m,n] += A[m,k] * B[k,n]"), {"A": (DYN, 4), "B": (4, 5)})
    assert b.shapes["C"] == (DYN, 5)
    b = infer_shapes(parse("Y[o] max= X[2*o + k]"), {"X": (DYN,)}, {"k": 2})
    assert b.shapes["Y"] == (DYN,)


def test_scatter_needs_existing_tensor():
    with pytest.raises(TCError, match="scatter into 'Y' needs the tensor to exist first"):
        infer_shapes(parse("Y[I[j]] += S[j]"), {"I": (3,), "S": (3,)})


# --------------------------------------------------------------- evaluator


def test_evaluate_matmul(rng):
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)
    out = evaluate(parse("C[m,n] += A[m,k] * B[k,n]"), {"A": a, "B": b})
    np.testing.assert_allclose(out["C"], a @ b, rtol=1e-5, atol=1e-6)
    assert out["C"].dtype == np.float32


@pytest.mark.parametrize(
    "text, spec",
    [
        ("Y[b, i, j] += A[b, i, k] * B[b, k, j]", "bik,bkj->bij"),
        ("Y[i, j] += A[k, i] * B[j, k] * 2.0", "ki,jk->ij"),  # scale
        ("Y[i] += A[i, k] * B[k, i]", "ik,ki->i"),  # diagonal-ish
        ("Y[j, i] += A[i, k] * B[k, j]", "ik,kj->ji"),  # transposed output
        ("Y[i] += A[i, k] * B[k, j]", "ik,kj->i"),  # two reduction vars
    ],
)
def test_evaluate_einsum_like(rng, text, spec):
    shapes = {"bik,bkj->bij": [(2, 3, 4), (2, 4, 5)], "ki,jk->ij": [(4, 3), (5, 4)], "ik,ki->i": [(3, 4), (4, 3)],
              "ik,kj->ji": [(3, 4), (4, 5)], "ik,kj->i": [(3, 4), (4, 5)]}[spec]
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    want = np.einsum(spec, a, b) * (2.0 if "2.0" in text else 1.0)
    out = evaluate(parse(text), {"A": a, "B": b})
    np.testing.assert_allclose(out["Y"], want, rtol=1e-5, atol=1e-5)


def test_evaluate_nonproduct_reduction(rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    out = evaluate(parse("M[r] max= X[r, j]; N[r] min= X[r, j]; P[r] *= X[r, j]; S[r] += exp(X[r, j])"), {"X": x})
    np.testing.assert_allclose(out["M"], x.max(1))
    np.testing.assert_allclose(out["N"], x.min(1))
    np.testing.assert_allclose(out["P"], x.prod(1), rtol=1e-5)
    np.testing.assert_allclose(out["S"], np.exp(x).sum(1), rtol=1e-5)


def test_evaluate_softmax_program(rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    out = evaluate(parse("M[r] max= X[r, j]; E[r, j] = exp(X[r, j] - M[r]); S[r] += E[r, j]; "
                         "Y[r, j] = E[r, j] / S[r]"), {"X": x})
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out["Y"], e / e.sum(1, keepdims=True), rtol=1e-6)
    assert set(out) == {"M", "E", "S", "Y"}


def test_evaluate_functions_and_compare(rng):
    x = rng.standard_normal((6,)).astype(np.float32)
    out = evaluate(parse("Y[i] = select(X[i] > 0.0, sqrt(abs(X[i])), tanh(X[i])) + max(X[i], 0.5) "
                         "- min(X[i], -0.5) + sigmoid(X[i]) + erf(X[i]) + rsqrt(abs(X[i]) + 1.0) "
                         "+ log(abs(X[i]) + 1.0) + X[i] ** 2.0"), {"X": x})
    import torch

    want = (np.where(x > 0, np.sqrt(np.abs(x)), np.tanh(x)) + np.maximum(x, 0.5) - np.minimum(x, -0.5)
            + 1 / (1 + np.exp(-x)) + torch.erf(torch.from_numpy(x)).numpy() + 1 / np.sqrt(np.abs(x) + 1)
            + np.log(np.abs(x) + 1) + x**2)
    np.testing.assert_allclose(out["Y"], want, rtol=1e-5, atol=1e-6)


def test_evaluate_does_not_modify_inputs():
    x = np.zeros(3, np.float32)
    evaluate(parse("X[i] += 1.0"), {"X": x})
    assert not x.any()


def test_scatter_index_add_repeated_indices_accumulate(rng):
    x = rng.standard_normal((5, 3)).astype(np.float32)
    idx = np.array([0, 2, 0, 4, 0])
    src = rng.standard_normal((5, 3)).astype(np.float32)
    out = evaluate(parse("Y[i, j] = X[i, j]; Y[I[k], j] += S[k, j]"), {"X": x, "I": idx, "S": src})
    want = x.copy()
    np.add.at(want, idx, src)
    np.testing.assert_allclose(out["Y"], want, rtol=1e-6)
    assert not np.allclose(out["Y"][0], x[0] + src[4])  # not last-write-wins


def test_scatter_out_of_range_raises():
    with pytest.raises(TCError, match="write outside 'Y'"):
        evaluate(parse("Y[i] = X[i]; Y[I[k]] += S[k]"),
                 {"X": np.zeros(3, np.float32), "I": np.array([0, 3]), "S": np.ones(2, np.float32)})


def test_gather(rng):
    w = rng.standard_normal((6, 4)).astype(np.float32)
    idx = np.array([[5, 0, 5], [1, 2, 3]])
    out = evaluate(parse("Y[i, j, e] = W[I[i, j], e]"), {"W": w, "I": idx})
    np.testing.assert_array_equal(out["Y"], w[idx])
    out = evaluate(parse("Y[b, e] += W[I[b, l], e]"), {"W": w, "I": idx})
    np.testing.assert_allclose(out["Y"], w[idx].sum(1), rtol=1e-6)


def test_padding_semantics():
    x = np.array([1.0, -2.0, 3.0, -4.0], np.float32)
    # max= reads padding as -inf: all-negative neighbours never see a 0 pad
    out = evaluate(parse("Y[i] max= X[i + k - 1]"), {"X": -np.abs(x)}, {"k": 3})
    np.testing.assert_array_equal(out["Y"], [-1.0, -1.0, -2.0, -3.0])
    # += reads padding as 0
    out = evaluate(parse("Y[i] += X[i + k - 1]"), {"X": x}, {"k": 3})
    np.testing.assert_array_equal(out["Y"], [-1.0, 2.0, -3.0, -1.0])
    # min= reads padding as +inf
    out = evaluate(parse("Y[i] min= X[i + k - 1]"), {"X": np.abs(x)}, {"k": 3})
    np.testing.assert_array_equal(out["Y"], [1.0, 1.0, 2.0, 3.0])


def test_keepdim_constant_index():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    p = parse("Y[i, 0] += X[i, j]")
    b = infer_shapes(p, {"X": (2, 3)})
    assert b.shapes["Y"] == (2, 1)
    out = evaluate(p, {"X": x})
    np.testing.assert_array_equal(out["Y"], x.sum(1, keepdims=True))
    out = evaluate(parse("Y[0, 0] max= X[i, j]"), {"X": x})
    np.testing.assert_array_equal(out["Y"], [[5.0]])


def test_strided_write_and_read():
    x = np.arange(8, dtype=np.float32)
    out = evaluate(parse("Y[j] = X[2*j + 1]"), {"X": x}, {"j": 4})
    np.testing.assert_array_equal(out["Y"], x[1::2])
    p = parse("Y[i] = X[i]; Y[2*j + 1] = S[j]")
    out = evaluate(p, {"X": x, "S": -np.ones(4, np.float32)})
    want = x.copy()
    want[1::2] = -1
    np.testing.assert_array_equal(out["Y"], want)


def test_evaluate_dtypes():
    out = evaluate(parse("Y[i] = X[i] > 0.0"), {"X": np.array([-1.0, 1.0], np.float32)}, dtypes={"Y": np.bool_})
    assert out["Y"].dtype == np.bool_ and out["Y"].tolist() == [False, True]
    out = evaluate(parse("Y[i] = X[i]"), {"X": np.array([1.0], np.float64)}, dtypes={"Y": np.float64})
    assert out["Y"].dtype == np.float64


# ----------------------------------------------------------------- counts


def test_count_matmul():
    m, n, k = 3, 5, 7
    c = count(infer_shapes(parse("C[m,n] += A[m,k] * B[k,n]"), {"A": (m, k), "B": (k, n)}))
    assert c.flops == 2 * m * n * k
    assert c.read_elems == {"A": m * k, "B": k * n}
    assert c.write_elems == {"C": m * n}


def test_count_softmax():
    r, j = 4, 6
    c = count(infer_shapes(parse("M[r] max= X[r, j]; E[r, j] = exp(X[r, j] - M[r]); S[r] += E[r, j]; "
                                 "Y[r, j] = E[r, j] / S[r]"), {"X": (r, j)}))
    # max: 1, exp(x - m): 2, sum: 1, div: 1 per element
    assert c.flops == 5 * r * j
    assert c.read_elems == {"X": r * j}
    assert c.write_elems == {"M": r, "E": r * j, "S": r, "Y": r * j}


def test_count_embedding_bag_reads_only_gathered_rows():
    rows, dim, bags, per = 100000, 8, 2, 3
    c = count(infer_shapes(parse("Y[b, e] += W[I[b, l], e]"), {"W": (rows, dim), "I": (bags, per)}))
    assert c.read_elems == {"W": bags * per * dim, "I": bags * per}
    assert c.flops == bags * per * dim
    assert c.write_elems == {"Y": bags * dim}


def test_count_dynamic_counts_as_one():
    c = count(infer_shapes(parse("Y[i] = exp(X[i])"), {"X": (DYN,)}))
    assert c.flops == 1 and c.read_elems == {"X": 1}
