"""Loads before waits (``kitsune.codegen.triton_gen.early_loads``): a stage's reads of what the launch never writes go
before its ``griddepcontrol.wait``, everything else after it, and the reordered code means what it meant."""

from __future__ import annotations

import re
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from kitsune.codegen.triton_gen import early_loads  # noqa: E402
from kitsune.codegen.triton_gen.early_loads import place_wait  # noqa: E402

WAIT = "gdc_wait()"


def _body(text: str) -> list[str]:
    return [ln for ln in text.strip("\n").splitlines()]


def _stmts(lines: list[str]) -> list[str]:
    return [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


GEMV = """
    # stage "linear" (contraction)
    o1 = tl.arange(0, 4)
    r4 = tl.arange(0, 2048)
    v5 = tl.load(act + r4).to(tl.float32)
    v10 = tl.load(sq + r4).to(tl.float32)
    for it in range(0, 1):
        t = pid - 0 + it * 2048
        acc3 = tl.full([4], 0.0, tl.float32)
        v6 = tl.load(w + (8192 * t + 2048 * o1[:, None] + r4[None, :])).to(tl.float32)
        v7 = v5[None, :] * v6
        acc3 = acc3 + tl.sum(v7, axis=1)
        acc8 = tl.full([], 0.0, tl.float32)
        acc8 = acc8 + tl.sum(v10, axis=0)
        v20 = tl.load(w + (8192 * t + 2048 * o1[:, None] + r4[None, :] + 16777216)).to(tl.float32)
        v21 = acc3 * acc8 + tl.sum(v20, axis=1)
        tl.store(out + (4 * t + o1), v21)
"""


def test_gemv_weights_before_the_wait_activations_after():
    """The weight blocks of the work item (both halves) are read before the wait; the activation loads, hoisted
    above the single-iteration work-item loop by the generator, sink into it behind the wait; the store last."""
    out = place_wait(_body(GEMV), {"act", "sq", "out"})
    s = _stmts(out)
    w = s.index("if PDL:")
    assert s[w + 1] == WAIT
    assert s.index("for it in range(0, 1):") < w  # the wait is inside the loop, whose body runs once
    for weight in ("v6 = tl.load(w", "v20 = tl.load(w"):
        assert next(i for i, x in enumerate(s) if x.startswith(weight)) < w
    for late in ("v5 = tl.load(act", "v10 = tl.load(sq", "v7 = ", "tl.store(out"):
        assert next(i for i, x in enumerate(s) if x.startswith(late)) > w
    # the statements are the same ones, each once, the wait added
    assert sorted(s[:w] + s[w + 2:]) == sorted(_stmts(_body(GEMV)))
    # the sunk loads are indented as the loop's body
    line = next(ln for ln in out if "tl.load(act" in ln)
    assert line.startswith(" " * 8 + "v5")


def test_k_loop_without_products_gets_the_wait_inside_and_late_loads_after_it():
    """A K loop with literal bounds and no tensor-core product: the wait goes before the first late statement of
    its body (after the weight chunk's load); a residual load before the loop that the loop does not use waits
    after it."""
    body = _body("""
    t = pid
    v3 = tl.load(res + t).to(tl.float32)
    acc = tl.full([4, 512], 0.0, tl.float32)
    for k in range(0, 2048, 512):
        x = tl.load(act + (k + r)).to(tl.float32)
        wt = tl.load(w + (t * 2048 + k + r)).to(tl.float32)
        acc = acc + x[None, :] * wt
    v11 = v3 + tl.sum(acc, axis=1)
    tl.store(out + t, v11)
""")
    s = _stmts(place_wait(body, {"res", "act", "out"}))
    w = s.index("if PDL:")
    assert s.index("for k in range(0, 2048, 512):") < w < s.index("x = tl.load(act + (k + r)).to(tl.float32)")
    assert s.index("wt = tl.load(w + (t * 2048 + k + r)).to(tl.float32)") < w
    assert s.index("v3 = tl.load(res + t).to(tl.float32)") > s.index("acc = acc + x[None, :] * wt")


def test_pipelined_loop_and_branches_keep_the_wait_outside():
    """The wait never enters a multi-iteration loop with a tensor-core product (Triton's pipeliner), an ``if`` (it
    would not dominate what follows), or a loop that may not run; a wait before an ``if`` does not split it from
    its ``else``."""
    dot = _body("""
    acc = tl.zeros([128, 128], tl.float32)
    for k in range(0, 1024, 64):
        b = tl.load(w + k)
        a = tl.load(act + k)
        acc = tl.dot(a, b, acc)
    tl.store(out, acc)
""")
    s = _stmts(place_wait(dot, {"act", "out"}))
    assert s.index("if PDL:") < s.index("for k in range(0, 1024, 64):")
    branch = _body("""
    c = tl.load(w + pid)
    if pid < 4:
        a = tl.load(act + pid)
    else:
        a = c
    tl.store(out + pid, a)
""")
    out = place_wait(branch, {"act", "out"})
    s = _stmts(out)
    assert s.index("c = tl.load(w + pid)") < s.index("if PDL:") < s.index("if pid < 4:")
    assert s.index("else:") == s.index("a = tl.load(act + pid)") + 1
    empty = _body("""
    for k in range(0, 0):
        a = tl.load(act + k)
    tl.store(out, 1)
""")
    s = _stmts(place_wait(empty, {"act", "out"}))
    assert s.index("if PDL:") < s.index("for k in range(0, 0):")


DOT_LOOP = """
    t = pid
    v4 = tl.load(g + t)
    acc = tl.zeros([16, 64], tl.float32)
    for k in range(0, 256, 64):
        a = tl.load(act + (k + t))
        b = tl.load(w + (t * 256 + k))
        acc = tl.dot(a, b, acc)
    y = acc * v4
    tl.store(out + t, y)
"""


class _FakeTL:
    """Just enough of ``tl`` to run a stage body in Python on integers (a "pointer" is an int, a load reads a
    dict, a dot is a multiply-add): two bodies mean the same if they store the same values."""

    float32 = None

    def __init__(self, mem):
        self.mem, self.stored = mem, []

    def load(self, p):
        return self.mem.get(p, p % 7)

    def zeros(self, shape, dt):
        return 0

    def dot(self, a, b, acc):
        return acc + a * b

    def store(self, p, v):
        self.stored.append((p, v))


def _run(lines: list[str], pid: int) -> list:
    tl = _FakeTL({})
    src = "def f(pid, act, w, g, out, PDL):\n" + "\n".join(lines) + "\n"
    env = {"tl": tl, "gdc_wait": lambda: None}
    exec(textwrap.dedent(src) if not src.startswith("def") else src, env)
    env["f"](pid, 1000, 2000, 3000, 4000, 1)
    return tl.stored


def test_a_short_dot_loop_has_its_first_iteration_copied_out_before_the_wait():
    """With ``peel``: the wait cannot enter a K loop with a tensor-core product, so the loop's first iteration is
    copied out before it (loop variable and temporaries renamed, the carried accumulator not); the copy's weight
    load goes before the wait, its activation load after; the rest of the loop starts at the second chunk; the
    body stores the same values as before. Without ``peel``, or for a loop longer than ``PEEL_MAX``, nothing is
    copied."""
    out = place_wait(_body(DOT_LOOP), {"act", "out"}, peel=True)
    s = _stmts(out)
    w = s.index("if PDL:")
    assert s[s.index("k_p0 = 0  # the first iteration of the loop below, copied out (loads before waits)") + 1] \
        == "b_p0 = tl.load(w + (t * 256 + k_p0))"
    assert s.index("b_p0 = tl.load(w + (t * 256 + k_p0))") < w < s.index("a_p0 = tl.load(act + (k_p0 + t))")
    assert s.index("acc = tl.dot(a_p0, b_p0, acc)") < s.index("for k in range(64, 256, 64):")
    assert s.index("b = tl.load(w + (t * 256 + k))") > s.index("for k in range(64, 256, 64):")
    for pid in range(3):
        assert _run(out, pid) == _run(_body(DOT_LOOP), pid)
    assert not any("_p0" in ln for ln in place_wait(_body(DOT_LOOP), {"act", "out"}))
    long = DOT_LOOP.replace("range(0, 256, 64)", f"range(0, {64 * (early_loads.PEEL_MAX + 1)}, 64)")
    assert not any("_p0" in ln for ln in place_wait(_body(long), {"act", "out"}, peel=True))


def test_a_name_read_after_the_loop_keeps_its_name_in_the_copy():
    """A temporary of the loop's body that is read after the loop is not renamed in the copy (the loop may still
    assign it); the peeled body still stores the same values."""
    body = _body(DOT_LOOP.replace("    y = acc * v4", "    y = acc * v4 + b"))
    out = place_wait(body, {"act", "out"}, peel=True)
    assert any(ln.strip() == "b = tl.load(w + (t * 256 + k_p0))" for ln in out)
    for pid in range(3):
        assert _run(out, pid) == _run(body, pid)


def test_dependences_are_kept():
    """A launch-constant statement that reads or redefines a name a late statement defines or reads stays after
    it; an effect (an index check) stays where it was relative to every late statement."""
    body = _body("""
    a = tl.load(act + pid)
    b = tl.load(w + a)
    c = tl.load(w + pid)
    c2 = c * 2
    d = a + c2
    a = tl.load(w + 1)
    _index_check(a, 10, err, 7)
    e = tl.load(w + 2)
    tl.store(out + pid, d + a + e)
""")
    s = _stmts(place_wait(body, {"act", "out"}))
    w = s.index("if PDL:")
    assert s.index("c = tl.load(w + pid)") < w and s.index("c2 = c * 2") < w
    assert s.index("e = tl.load(w + 2)") < w  # commutes with the check and the store: it reads no written buffer
    assert s.index("b = tl.load(w + a)") > s.index("a = tl.load(act + pid)") > w  # reads a late value
    assert s.index("a = tl.load(w + 1)") > s.index("d = a + c2")  # would overwrite a before d reads it
    assert s.index("_index_check(a, 10, err, 7)") > s.index("a = tl.load(w + 1)")


def test_a_body_that_touches_nothing_written_is_only_reordered():
    body = _body("""
    a = tl.load(w + pid)
    b = a * 2
""")
    assert place_wait(body, {"act"}) == body


def _dominating_wait_before_first_touch(stage: str, unsafe: set[str]) -> bool:
    """In a stage function's text: a ``gdc_wait()`` comes before the first line naming a written buffer or
    storing, and every block around the wait is a ``for`` over a literal range that runs at least once."""
    lines = stage.splitlines()[1:]
    pat = re.compile(r"\b(" + "|".join(map(re.escape, sorted(unsafe))) + r")\b|tl\.store\(|tl\.atomic_")
    first = next((i for i, ln in enumerate(lines) if pat.search(ln.split("#", 1)[0])), None)
    wait = next((i for i, ln in enumerate(lines) if WAIT in ln), None)
    if first is None:
        return True
    if wait is None or wait > first:
        return False
    ind = len(lines[wait]) - len(lines[wait].lstrip()) - 4  # the `if PDL:` line's indentation
    for ln in reversed(lines[:wait]):
        lind = len(ln) - len(ln.lstrip())
        if ln.strip() and lind < ind:
            m = re.fullmatch(r"\s*for \w+ in range\(([-\d, ]+)\):", ln)
            if not m:
                return False
            args = [int(a) for a in m.group(1).split(",")]
            lo, hi, st = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
            if not (st > 0 and hi > lo):
                return False
            ind = lind
    return True


@pytest.mark.parametrize("workload", ["llama_decode_b1", "llama_decode_b8", "mgn_10k", "dlrm_b2048", "inception_b8"])
def test_every_early_stage_waits_before_it_touches_what_the_launch_writes(workload):
    """The suite's generated modules at full size: every stage of a kernel in the early form waits (dominating)
    before its first mention of a buffer the launch writes, a store or an atomic; its kernel reads the epoch after
    a wait too."""
    from kitsune.codegen.aot import export_workload, generate, lower

    module = lower(export_workload(workload), "bulk-sync")
    from kitsune.codegen.plan import build_plan
    from kitsune.codegen.triton_gen.module import TritonGen

    gen = TritonGen(build_plan(module, capacity="ir"))
    src = gen.generate()
    assert gen.early, "no kernel took the early form"
    for k in gen.plan.kernels:
        if k.name not in gen.early:
            continue
        params = gen.kernel_params(k)
        unsafe = {n for n in params if not gen._launch_constant(n)} | {"ctr"}
        assert re.search(rf"\ndef ({re.escape(k.name)}_\w+)\(pid, .*PDL: tl.constexpr\):\n", src), k.name
        for m in re.finditer(rf"\ndef ({re.escape(k.name)}_\w+)\(pid, [^\n]*\n(.*?)(?=\n@)", src, re.S):
            assert _dominating_wait_before_first_touch(m.group(0).lstrip("\n"), unsafe), (workload, m.group(1))
        shell = src.split(f"\ndef {k.name}(", 1)[1].split("\n\n", 1)[0]
        assert shell.index(WAIT) < shell.index("tl.load(epoch_ptr)")
    assert generate(module) is not None


class _SplitK(torch.nn.Module):
    """A skinny layer pair whose second projection (M 8, K 2048, N 64: 8 tiles) splits K over the grid and adds
    its tile's partial sums in the last arriving program (a counter)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 2048, bias=False)
        self.b = torch.nn.Linear(2048, 64, bias=False)

    def forward(self, x):
        return x + self.b(torch.relu(self.a(x)))


def _lowered(which: str):
    import test_triton_codegen as ttc

    if which != "split_k":
        model, inputs, _, _, lowered = ttc.lower(which, "bulk-sync")
        return model, inputs, lowered
    from kitsune.context import make_context
    from kitsune.frontend.torch_export import import_module
    from kitsune.passes.pipeline import KitsunePipelinePass

    torch.manual_seed(0)
    model, inputs = _SplitK(), (torch.randn(8, 64),)
    lowered, _ = import_module(model, inputs)
    KitsunePipelinePass(mode="bulk-sync").apply(make_context(), lowered)
    return model, inputs, lowered


@pytest.mark.parametrize("which", ["llama_decode_b1", "split_k"])
def test_reordering_keeps_the_meaning(tmp_path, monkeypatch, which):
    """A program (small, fp32) generated with and without the reordering, both run under Triton's interpreter:
    bit-identical outputs over two launches (the reordering moves pure statements only). ``split_k``: a stage that
    counts its tile's split-K arrivals is of the early form, and waits before its partial store and its count."""
    import test_triton_codegen as ttc

    from kitsune.codegen.triton_gen import generate_triton

    model, inputs, lowered = _lowered(which)
    src = generate_triton(lowered, capacity="all")
    assert "gdc_wait()" in src.split("RUNTIME", 1)[0] or WAIT in src
    if which == "split_k":
        fn = re.search(r"\ndef \w+\(pid, [^\n]*PDL: tl.constexpr\):\n(?:(?!\n@).)*?tl\.atomic_add\(ctr", src, re.S)
        assert fn is not None, "no split-K stage of the early form"
        text = fn.group(0)
        assert text.index(WAIT) < text.index("tl.store(") < text.index("tl.atomic_add(ctr")
    monkeypatch.setattr(early_loads, "_schedule", lambda block, unsafe, indent, whole: (early_loads.lines_of(block), False))
    plain = generate_triton(lowered, capacity="all")
    assert plain != src
    runs = []
    for name, text in (("reordered", src), ("plain", plain)):
        mod = ttc.load_generated(text, tmp_path, f"early_{name}")
        outs, state, tensors = ttc.run_generated(mod, model, inputs)
        outs2 = mod.launch(state, tensors, watchdog=1000)
        runs.append([o.clone() for o in outs] + [o.clone() for o in outs2])
    for a, b in zip(*runs):
        assert torch.equal(a, b)
    with torch.no_grad():
        ref = model(*inputs)
    ref = ref if isinstance(ref, (list, tuple)) else [ref]
    for r in ref:  # and the program computes what eager does
        assert any(o.shape == r.shape and torch.allclose(o, r, rtol=1e-4, atol=1e-4) for o in runs[0])


def test_first_kernel_of_a_launch_never_overlaps_what_ran_before(tmp_path):
    """With PDL on, every kernel but the launch's first is launched as a programmatic dependent (the first may read
    an input the previous launch's last kernel wrote before it waits); all get the PDL constexpr."""
    import test_triton_codegen as ttc

    from kitsune.codegen.triton_gen import generate_triton

    model, inputs, _, _, lowered = ttc.lower("llama_decode_b1", "bulk-sync")
    mod = ttc.load_generated(generate_triton(lowered, capacity="all"), tmp_path, "early_launch")
    calls = []

    class Recorder:
        def __getitem__(self, grid):
            return lambda *args, **kw: calls.append(kw)

    for k in mod.KERNELS:
        k["fn"] = Recorder()
    state = mod.allocate("cpu")
    state["pdl"] = 1
    tensors = {n: torch.zeros(mod.TENSORS[n][0]) for n in mod.ARGS}
    mod.launch(state, tensors)
    assert len(calls) == len(mod.KERNELS) > 1
    assert "launch_pdl" not in calls[0] and calls[0]["PDL"] == 1
    assert all(c.get("launch_pdl") is True and c["PDL"] == 1 for c in calls[1:])
