"""``kitsune.compile``: a PyTorch model -> a callable running the generated Triton program.

    cm = kitsune.compile(model, example_inputs, mode="dataflow", gpu="h100")
    y = cm(x)                 # same inputs and output structure as model(x)
    print(cm.report())        # kernels, stages (SMs, tiles, estimates), queues, totals
    cm.source                 # the generated Triton module
    cm.lowered                # the gpu_queue module text

Steps: ``torch.export`` + import (the importer's errors -- unsupported ops, all listed with their
source lines -- propagate unchanged), the ``kitsune-pipeline{mode, gpu}`` lowering, Triton code
generation (``capacity="all"`` under Triton's CPU interpreter, as lowered on a GPU), loading
(``kitsune.runtime``) and the upload of the weights.

Caching, in-process:

* the lowering, the generated source and the loaded module are shared by every compile of the same
  graph (key: sha256 of the imported graph module's text -- shapes and dtypes included -- mode, gpu,
  device type, queue capacity, profile and index checks); a new compile of such a graph only uploads its
  own weights;
* compiling the *same model object* again with the same input signature and options returns the same
  compiled object without exporting again, as long as its parameters and buffers are the same tensors,
  unmodified (``data_ptr`` and the in-place version counter; a changed ``training`` flag also misses).
  Changes to non-tensor attributes that alter ``forward`` are not seen: pass ``cache=False`` then.
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
import torch.utils._pytree as pytree

from kitsune.runtime.program import InputError, KitsuneRuntimeError, Program, resolve_device, uses_interpreter
from kitsune.timing import phase, recording

MODES = ("dataflow", "bulk-sync")


@dataclass
class _Lowered:
    """What every compile of one graph (with one mode / gpu / device type) shares."""

    key: tuple
    graph_text: str
    module: Any  # the gpu_queue-lowered ModuleOp
    lowered: str
    source: str
    capacity: str
    floor: Any  # kitsune.cost.Estimate of the graph function (roofline floor)
    gpu: Any  # kitsune.gpu.GPU
    source_all: str | None = None  # generated with one slot per tile (when ring queues cannot be resident)
    profile: bool = False  # the generated kernels record every work item's start, end and SM
    placement: str = "auto"  # the dataflow placement lowered with (a tuned one where the database has it)
    index_checks: bool = True  # the generated kernels check the indices they load (see generate_triton)
    gluon_failed: str | None = None  # why a Gluon kernel of ``source`` did not compile on the device: use ...
    source_triton: str | None = None  # ... this, generated without Gluon kernels


_lowered: dict[tuple, _Lowered] = {}
_by_model: "weakref.WeakKeyDictionary[torch.nn.Module, dict[tuple, tuple[tuple, CompiledModel]]]" = \
    weakref.WeakKeyDictionary()
_lock = threading.RLock()


def _text(module) -> str:
    from kitsune.frontend.torch_export import module_to_text

    return module_to_text(module, debuginfo=False)


def _main(module):
    from xdsl.dialects import func

    fs = [o for o in module.ops if isinstance(o, func.FuncOp)]
    return next((f for f in fs if f.sym_name.data == "main"), fs[0] if fs else None)


def _lower(graph_module, mode: str, gpu: str, device: torch.device, profile: bool = False,
           index_checks: bool = True, placement: str = "auto") -> _Lowered:
    from kitsune import cost
    from kitsune.context import make_context
    from kitsune.gpu import parse_gpu_option
    from kitsune.passes.pipeline import KitsunePipelinePass

    with phase("print graph"):
        gtext = _text(graph_module)
    capacity = "all" if uses_interpreter(device) else "ir"
    from kitsune.schedule import db

    key = (hashlib.sha256(gtext.encode()).hexdigest(), mode, gpu, device.type, capacity, bool(profile),
           bool(index_checks), placement, db.fingerprint())
    with _lock:
        hit = _lowered.get(key)
        if hit is not None:
            return hit
    g = parse_gpu_option(gpu)
    with phase("roofline floor"):
        floor = cost.roofline_floor(_main(graph_module), g)
    if mode == "dataflow" and placement == "auto":  # a measured placement (kitsune-tune --placement) first
        from kitsune.schedule import db

        placement = db.lookup_placement(key[0], g) or "auto"
    KitsunePipelinePass(mode=mode, gpu=gpu, placement=placement).apply(make_context(), graph_module)
    from kitsune.codegen.triton_gen import generate_triton

    with phase("codegen"):
        source = generate_triton(graph_module, capacity=capacity, profile=profile, index_checks=index_checks)
    with phase("print lowered"):
        lowered = _text(graph_module)
    low = _Lowered(key, gtext, graph_module, lowered, source, capacity, floor, g, profile=bool(profile),
                   index_checks=bool(index_checks), placement=placement)
    with _lock:
        return _lowered.setdefault(key, low)


def _program_for(low: _Lowered, weights, dev: torch.device, precompile: bool = False, **kw) -> Program:
    """Load ``low``'s program with ``weights`` (also used by the torch.compile backend); ``precompile``: compile
    its kernels for the device now (see ``Program.precompile``) rather than at the first call."""
    program = _gluon_checked(low, Program(low.source_triton or low.source, weights, dev, lowered=low.lowered, **kw),
                             lambda src: Program(src, weights, dev, lowered=low.lowered, **kw))
    if precompile and not program.interpret and not program.precompiled:
        program.precompile()
    if low.capacity == "ir" and not program.all_resident():
        # ring queues need every program of their kernel resident at once, and the compiled kernels
        # (registers / shared memory) do not allow it: one slot per tile instead (no back-pressure)
        from kitsune.codegen.triton_gen import generate_triton

        if low.source_all is None:
            low.source_all = generate_triton(low.module, capacity="all", profile=low.profile,
                                             index_checks=low.index_checks,
                                             gluon=False if low.gluon_failed else None)
        program = Program(low.source_all, weights, dev, lowered=low.lowered, **kw)
        if precompile and not program.interpret:
            program.precompile()
        program.capacity_fallback = True
    _set_launch(low, program)
    return program


def _set_launch(low: _Lowered, program: Program) -> None:
    """The program's kernel-launch setting on a device that has programmatic dependent launch: ``KITSUNE_PDL``
    where set, else the measured one (the tuning database, per graph and mode), else ``DEFAULT_PDL``."""
    import os

    st = getattr(program, "state", None)
    if not isinstance(st, dict) or not st.get("pdl_capable") or os.environ.get("KITSUNE_PDL") not in (None, ""):
        return
    from kitsune.codegen.triton_gen.early_loads import DEFAULT_PDL
    from kitsune.schedule import db

    tuned = db.lookup_launch(low.key[0], low.key[1], low.gpu)
    st["pdl"] = DEFAULT_PDL if tuned is None else tuned


def _gluon_checked(low: _Lowered, program: Program, make: Callable[[str], Program]) -> Program:
    """A program whose source has Gluon kernels (the chain template's TMA form) compiles them now; where one
    fails to compile on this device, the program is regenerated without Gluon (the register form) and a
    warning says why, once per lowering."""
    if low.source_triton is not None or program.interpret or "@gluon.jit" not in low.source:
        return program
    try:
        program.precompile()
        return program
    except Exception as e:  # noqa: BLE001 -- any compile failure of the Gluon form: fall back
        import warnings

        from kitsune.codegen.triton_gen import generate_triton

        why = f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:300]}"
        low.gluon_failed = why
        low.source_triton = generate_triton(low.module, capacity=low.capacity, profile=low.profile,
                                            index_checks=low.index_checks, gluon=False)
        warnings.warn(f"kitsune: a chain kernel's Gluon (TMA) form did not compile on this device ({why}); "
                      "using its register form", RuntimeWarning, stacklevel=3)
        return make(low.source_triton)


def _flat_inputs(args: Sequence[Any]):
    leaves, spec = pytree.tree_flatten(tuple(args))
    return leaves, spec


def _signature(leaves) -> tuple:
    out = []
    for x in leaves:
        if isinstance(x, torch.Tensor):
            out.append(("T", tuple(x.shape), x.dtype))
        else:
            out.append(("V", repr(x)))
    return tuple(out)


def _weights_guard(model: torch.nn.Module) -> tuple:
    out = []
    for n, t in list(model.named_parameters()) + list(model.named_buffers()):
        out.append((n, t.data_ptr() if t.device.type != "meta" else 0, t._version, tuple(t.shape), t.dtype,
                    str(t.device)))
    out.append(("training", model.training))
    return tuple(out)


class CompiledModel:
    """A compiled model: call it like the model; ``report()``, ``source``, ``lowered``, ``program``."""

    compile_times: dict[str, float] = {}  # seconds per phase of the compile that made it (kitsune.timing)

    def __init__(self, low: _Lowered, program: Program, in_spec, example_leaves, out_spec, mode: str, gpu: str):
        self._low = low
        self.program = program
        self.mode = mode
        self.gpu = gpu
        self._in_spec = in_spec
        self._tensor_pos = [i for i, x in enumerate(example_leaves) if isinstance(x, torch.Tensor)]
        self._consts = {i: x for i, x in enumerate(example_leaves) if not isinstance(x, torch.Tensor)}
        self._out_spec = out_spec

    # the artefacts
    @property
    def placement(self) -> str:
        """The dataflow placement the program was lowered with (a measured one where the tuning database has it)."""
        return self._low.placement

    @property
    def graph_hash(self) -> str:
        """The imported graph's text hash: the key of its tuned placement."""
        return self._low.key[0]

    @property
    def source(self) -> str:
        """The generated Triton module's source."""
        return self._low.source

    @property
    def lowered(self) -> str:
        """The gpu_queue-lowered module's text."""
        return self._low.lowered

    @property
    def graph(self) -> str:
        """The imported graph-dialect module's text (before lowering)."""
        return self._low.graph_text

    @property
    def device(self) -> torch.device:
        return self.program.device

    def __call__(self, *args: Any, copy_outputs: bool | None = None):
        leaves, spec = _flat_inputs(args)
        if spec != self._in_spec:
            if len(args) != self._in_spec.num_children:
                raise InputError(f"expected {self._in_spec.num_children} argument(s) like the example inputs, "
                                 f"got {len(args)}")
            raise InputError(f"the arguments are not structured like the example inputs: expected {self._in_spec}, "
                             f"got {spec}")
        for i, v in self._consts.items():
            if not (leaves[i] is v or leaves[i] == v):
                raise InputError(f"argument leaf #{i} was {v!r} when compiled and is {leaves[i]!r} now: the compiled "
                                 f"program is specialized to the example's non-tensor values; compile again")
        outs = self.program(*[leaves[i] for i in self._tensor_pos], copy_outputs=copy_outputs)
        if self._out_spec is None:
            return outs[0] if len(outs) == 1 else tuple(outs)
        return pytree.tree_unflatten(outs, self._out_spec)

    def report(self, path: str | os.PathLike | None = None) -> str:
        """Kernels, stages and queues of the program with the cost model's estimates, and totals.

        With ``path`` (a directory, created) it also writes ``report.txt``, ``graph.png`` (the dataflow
        graph: tasks with their template and SMs, channels with their relation, queues) and, when compiled
        with ``profile=True`` and called at least once, ``timeline.png`` (one row per SM, work items
        coloured by stage, waits shown) with ``timeline.json``."""
        text = report(self._low.module, self._low.gpu, mode=self.mode, gpu_name=self.gpu, floor=self._low.floor,
                      program=self.program)
        if path is not None:
            report_files(path, text, self._low, self.program)
        return text

    def check_errors(self) -> None:
        """Wait for the last call and raise what it flagged: ``KitsuneIndexError`` (an ``IndexError``
        naming the op, its source line and the dimension) if an index was out of range. On a GPU a call
        never synchronises to look: the error surfaces at a later call or here (see ``Program.check``);
        under the interpreter the faulty call itself raises."""
        self.program.check()

    def timeline(self) -> list[dict]:
        """The last call's work items (``profile=True`` only); see ``kitsune.report.timeline``."""
        from kitsune.report import timeline

        return timeline(self.program)

    def __repr__(self) -> str:
        return f"<kitsune.CompiledModel mode={self.mode} gpu={self.gpu} {self.program!r}>"


def compile(model: torch.nn.Module, example_inputs: Any, mode: str = "dataflow", gpu: str = "h100", *,
            device: Any = None, cuda_graph: bool = False, debug: bool | None = None, copy_outputs: bool = True,
            cache: bool = True, profile: bool = False, index_checks: bool = True,
            precompile: bool = True, placement: str = "auto") -> CompiledModel:
    """Compile ``model`` for ``example_inputs``' shapes and dtypes; see the module docstring.

    ``device``: None -> 'cuda' when a GPU is present, else 'cpu' (Triton's interpreter, slow).
    ``debug``: watchdog on and a check after every call (None -> ``$KITSUNE_DEBUG``).
    ``index_checks`` (default True): every index loaded from a tensor (embedding, gather, index, index_add,
    scatter_reduce...) is checked against its dimension; one outside raises ``KitsuneIndexError`` naming the
    op and its source line, as eager's ``IndexError`` would (the read gives 0 / the write is dropped, never out
    of bounds). On a GPU the flag is read without synchronising: the error surfaces at a later call (that call
    raises instead of running) or at ``check_errors()``, as CUDA's asynchronous errors do; under the
    interpreter and with ``debug`` at the faulty call. ``False`` leaves the checks out (for measuring them).
    ``cuda_graph``: capture one launch in a CUDA graph and replay it (CUDA only).
    ``copy_outputs=False``: calls return the program's internal output buffers (overwritten by the next call).
    ``profile``: every work item (one stage call of one program) records its start and end time and its SM
    (``%globaltimer`` / ``%smid``; a logical clock under the interpreter); ``timeline()`` returns the last
    call's, ``report(path)`` draws it. Results are unchanged; the overhead is a few stores per work item.
    ``precompile`` (default True): on a GPU, compile every kernel now, kernels of the same code once
    (``Program.precompile``), rather than at the first call (whose time is then the launch's).
    ``placement`` (dataflow mode): how tasks share persistent kernels -- 'auto' (the cost model decides per
    level, or the placement ``kitsune-tune --placement`` measured fastest where the tuning database has one),
    'spatial' (disjoint SM ranges, tiles streamed through queues), 'temporal' (tasks one after another on all
    SMs, waiting on counters) or 'separate' (bulk-sync's kernels); see ``kitsune.passes.placement``.
    ``compile_times`` of the result: seconds per phase of this compile (``kitsune.timing``).
    """
    from kitsune.passes.placement import PLACEMENTS

    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
    if debug is None:
        debug = os.environ.get("KITSUNE_DEBUG", "") not in ("", "0", "false", "False")
    dev = resolve_device(device)
    if isinstance(example_inputs, (torch.Tensor,)) or not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    leaves, in_spec = _flat_inputs(example_inputs)
    key = (_signature(leaves), mode, gpu, str(dev), bool(cuda_graph), bool(debug), bool(copy_outputs), bool(profile),
           bool(index_checks), placement)
    if cache and isinstance(model, torch.nn.Module):
        with _lock:
            hit = _by_model.get(model, {}).get(key)
        if hit is not None and hit[0] == _weights_guard(model):
            return hit[1]

    from kitsune.frontend.torch_export import import_exported

    guard = _weights_guard(model) if isinstance(model, torch.nn.Module) else None
    from kitsune.frontend.torch_export import export

    with recording() as times:
        with phase("torch.export"):
            ep = export(model, example_inputs, strict=False)
        with phase("import"):
            graph_module, weights = import_exported(ep, torch_weights=True)
        out_spec = getattr(getattr(ep, "call_spec", None), "out_spec", None)
        low = _lower(graph_module, mode, gpu, dev, profile=profile, index_checks=index_checks, placement=placement)
        program = _program_for(low, weights, dev, precompile=precompile, debug=debug, cuda_graph=cuda_graph,
                               copy_outputs=copy_outputs)
    if out_spec is not None and out_spec.num_leaves != len(program.output_names):
        raise KitsuneRuntimeError(f"the model returns {out_spec.num_leaves} value(s) but the program has "
                                  f"{len(program.output_names)} output(s)")
    cm = CompiledModel(low, program, in_spec, leaves, out_spec, mode, gpu)
    cm.compile_times = times
    if cache and guard is not None:
        with _lock:
            _by_model.setdefault(model, {})[key] = (guard, cm)
    return cm


def clear_cache() -> None:
    """Forget every compiled graph and model (loaded Triton modules stay imported)."""
    with _lock:
        _lowered.clear()
        _by_model.clear()


# ------------------------------------------------------------------ report


def report_files(path, text: str, low: _Lowered, program: Program | None) -> dict[str, str]:
    """Write the report's text and pictures under directory ``path``; returns {what: file}."""
    from kitsune.report import write_report

    return write_report(path, text, low.module, gpu=low.gpu, program=program)


def _attr(op, name, default=None):
    a = op.attributes.get(name)
    if a is None:
        return default
    v = getattr(a, "value", a)
    return getattr(v, "data", getattr(a, "data", default))


def _fmt_us(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def _x(xs: Sequence[int]) -> str:
    return "x".join(str(int(d)) for d in xs) if len(xs) else "scalar"


def report(module, gpu, *, mode: str, gpu_name: str, floor=None, program: Program | None = None) -> str:
    """The report of a gpu_queue-lowered module (see CompiledModel.report)."""
    from kitsune.dialects import gpu_queue as gq

    progs = [o for o in module.walk() if isinstance(o, gq.ProgramOp)]
    kernels = [k for p in progs for k in p.kernels()]
    runtime_caps: dict[tuple[str, str], int] = {}
    if program is not None:
        for q in getattr(program.module, "QUEUES", []):
            runtime_caps[(q[1], q[0])] = int(q[2])
    lines = [f"kitsune.compile  mode={mode}  gpu={gpu_name} ({gpu.describe()})"]
    if program is not None:
        lines.append(f"device {program.device}" + (" (Triton CPU interpreter; every queue holds all its tiles)"
                                                    if program.interpret else ""))
    n_stages = n_queues = 0
    total_us = 0.0
    for k in kernels:
        kus = _attr(k, "est_us")
        total_us += kus or 0.0
        lines.append("")
        lines.append(f"kernel {k.kernel_name}: grid {k.grid_size()}, {k.num_warps()} warps, smem {k.smem_bytes()} B, "
                     f"{_attr(k, 'ctas_per_sm', '?')} CTA/SM, est {_fmt_us(kus)} us")
        hdr = f"  {'stage':<24} {'pids':>12} {'SMs':>5} {'tile':>12} {'tiles':>7} {'est_us':>9}  bound"
        lines += [hdr]
        for st in sorted(k.stages(), key=lambda s: s.pid_range()):
            n_stages += 1
            lo, hi = st.pid_range()
            lines.append(f"  {st.stage_name:<24} {f'[{lo}, {hi})':>12} {str(_attr(st, 'sms', '?')):>5} "
                         f"{_x(st.tile_sizes()):>12} {st.num_tiles():>7} {_fmt_us(_attr(st, 'est_us')):>9}  "
                         f"{_attr(st, 'bound', '?')}")
        pushed, popped = {}, {}
        for st in k.stages():
            for p in st.pushes():
                pushed[p.queue_name] = st.stage_name
            for p in st.pops():
                popped[p.queue_name] = (st.stage_name, p.rel)
        qs = k.queues()
        if qs:
            lines.append(f"  {'queue':<12} {'tile':>12} {'tiles':>7} {'capacity':>9} {'relation':>9}  producer -> consumer")
        for qn, q in qs.items():
            n_queues += 1
            cons, rel = popped.get(qn, ("(none)", "-"))
            cap = str(q.cap())
            rc = runtime_caps.get((k.kernel_name, qn))
            if rc is not None and rc != q.cap():
                cap += f" ({rc})"
            lines.append(f"  {qn:<12} {_x(q.tile_sizes()):>12} {q.num_tiles():>7} {cap:>9} {rel:>9}  "
                         f"{pushed.get(qn, '(none)')} -> {cons}")
    lines.append("")
    launch_us = gpu.launch_overhead_s * 1e6
    est = total_us + launch_us * len(kernels)
    lines.append(f"total: {len(kernels)} kernel(s), {n_stages} stage(s), {n_queues} queue(s); mode {mode}, gpu "
                 f"{gpu_name}")
    lines.append(f"estimated time {est:.3f} us = kernels {total_us:.3f} us + {len(kernels)} launch(es) x "
                 f"{launch_us:.1f} us")
    if floor is not None:
        lines.append(f"work: {floor.flops / 1e9:.6g} GFLOP, {floor.bytes / 1e6:.6g} MB (fewest bytes); roofline "
                     f"floor {floor.us:.3f} us ({floor.bound}-bound)")
    return "\n".join(lines) + "\n"


__all__ = ["compile", "CompiledModel", "clear_cache", "report", "MODES"]


# ``import kitsune.compile`` binds the package attribute ``kitsune.compile`` to this module, shadowing the
# function of the same name in ``kitsune/__init__.py``: make the module callable, so that
# ``kitsune.compile(model, inputs)`` works either way.
import sys as _sys  # noqa: E402
import types as _types  # noqa: E402


class _CallableModule(_types.ModuleType):
    def __call__(self, *args, **kwargs):
        return compile(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallableModule
