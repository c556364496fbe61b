"""Triton text made Gluon: the evaluator's code inside a Gluon stage function (``templates/chain_tma.py``).

Gluon runs Triton's operations on tensors that have a layout; what differs is that every tensor constructor
names one. The evaluator's constructors (``tl.arange``, ``tl.zeros``, ``tl.full``) get ``gl.AutoLayout()``,
which Gluon resolves from the tensors they meet (a wgmma accumulator) or, for a value that only reaches shared
memory, a coalesced layout. One value cannot take two layouts, so each section of the stage function (marked
by ``AXES_MARK``) defines the axis ranges afresh. Calls of the module's ``@triton.jit`` helpers (index checks,
scatter adds, queue waits) cannot run in a Gluon function: they raise ``CodegenError`` (the caller falls back
to Triton).
"""

from __future__ import annotations

import re

from kitsune.codegen.plan import CodegenError

_AUTO = "layout=gl.AutoLayout()"
_HELPER_CALL = re.compile(r"(?<![\w.])(_[a-z]\w*)\(")


def _close(text: str, start: int) -> int:
    """Index of the ``)`` closing the ``(`` at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([":
            depth += 1
        elif text[i] in ")]":
            depth -= 1
            if depth == 0:
                return i
    raise CodegenError(f"unbalanced parentheses in generated code: {text.strip()[:120]}")


def _with_layout(line: str, fn: str) -> str:
    """Every call ``tl.<fn>(...)`` in ``line`` as ``gl.<fn>(..., layout=gl.AutoLayout())``."""
    out, pos = [], 0
    pat = f"tl.{fn}("
    while True:
        i = line.find(pat, pos)
        if i < 0:
            out.append(line[pos:])
            return "".join(out)
        j = _close(line, i + len(pat) - 1)
        out.append(line[pos:i] + f"gl.{fn}(" + line[i + len(pat):j] + f", {_AUTO})")
        pos = j + 1


# helpers with a Gluon twin in the module (GLUON_HELPERS): their calls are renamed; and its Gluon-only ones
GLUON_TWINS = {"_index_check": "_index_check_gl", "_fence_gpu": "_fence_gpu_gl"}
GLUON_ONLY = ("_await_count_gl", )
GLUON_HELPERS = """
@gluon.jit
def _index_check_gl(v, n, err, code):
    bad = (v < 0) | (v >= n)
    tl.atomic_max(err + bad.to(tl.int32) * 0, code, mask=bad)


@gluon.jit
def _fence_gpu_gl():
    # fence.acq_rel.gpu in every thread, as _fence_gpu
    gl.inline_asm_elementwise("fence.acq_rel.gpu; mov.u32 $0, 0;", "=r", [], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def _await_count_gl(ptr, target):
    # spin (acquire, gpu scope) until the counter at ptr reaches target: only where the programs that move it
    # have counted themselves in elsewhere, so run, and owe nothing but a store and the increment (no watchdog)
    v = tl.atomic_add(ptr, 0, sem="acquire", scope="gpu")
    while v < target:
        v = tl.atomic_add(ptr, 0, sem="acquire", scope="gpu")
"""


def host_descriptor(g, name: str, tensor: str, shape, strides, block, dt: str) -> str:
    """The Gluon stage function's line that binds ``name`` to a TMA descriptor of ``tensor`` (``shape``,
    ``strides``, ``block`` blocks in the layout ``NVMMASharedLayout.get_default_for(block)``, as the kernel's
    buffers), which the host makes: a parameter of the kernel (``TritonGen.kernel_descs``, the runtime's
    ``_kernel_args``). One made in the kernel costs a global write and a proxy fence before the first load
    (1.4-1.8 us a GEMM launch on the H100, bench/kernels/NOTES.md section 34). ``g``: the stage's StageGen."""
    param = f"{g.fn_name()}{name}"
    g.gen.kernel_descs.setdefault(g.kernel.name, []).append(
        (param, tensor, list(shape), list(strides), list(block), dt))
    return f"{name} = {param}"


def gluon_line(line: str) -> str:
    for a, b in GLUON_TWINS.items():
        line = re.sub(rf"(?<![\w.]){a}\(", f"{b}(", line)
    for m in _HELPER_CALL.finditer(line):
        if m.group(1) not in GLUON_TWINS.values() and m.group(1) not in GLUON_ONLY:
            raise CodegenError(f"the Gluon form cannot call {m.group(1)} (a Triton helper): {line.strip()[:120]}")
    for fn in ("arange", "zeros", "full"):
        line = _with_layout(line, fn)
    return line


def _axis_defs(axis_lines: list[str]) -> list[tuple[str, str, str]]:
    """(axis, its ``_raw`` line, its clamped line) from ``Blocks.axis_lines``."""
    out = []
    for raw, clamped in zip(axis_lines[0::2], axis_lines[1::2]):
        out.append((raw.strip().split("_raw =")[0], gluon_line(raw.strip()), gluon_line(clamped.strip())))
    return out


def _used(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


def to_gluon(body: list[str], axis_lines: list[str], mark: str) -> list[str]:
    """The stage function ``body`` (lines, without the axis lines ``Blocks.axis_lines`` gives) in Gluon; each
    ``mark`` line becomes the definitions of the axes its section (up to the next mark) uses: an unused range
    would have no layout to take."""
    defs = _axis_defs(axis_lines)
    marks = [i for i, line in enumerate(body) if line.strip() == mark] + [len(body)]
    out = [gluon_line(line) for line in body[:marks[0]]]
    for m, end in zip(marks, marks[1:]):
        pad = body[m][: len(body[m]) - len(body[m].lstrip())]
        section = "\n".join(body[m + 1:end])
        for a, raw, clamped in defs:
            if _used(a, section):
                out += [pad + raw, pad + clamped]
            elif _used(a + "_raw", section):
                out.append(pad + raw)
        out += [gluon_line(line) for line in body[m + 1:end]]
    return out


__all__ = ["to_gluon", "gluon_line", "GLUON_HELPERS", "host_descriptor"]
