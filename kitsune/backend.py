"""``torch.compile(model, backend="kitsune")``: Kitsune as a TorchDynamo backend.

    import torch
    cm = torch.compile(model, backend="kitsune", options={"mode": "dataflow", "gpu": "h100"})
    y = cm(x)
    print(kitsune.explain(model, x))          # per graph: compiled by Kitsune, or fell back (and why)

The backend is registered through the ``torch_dynamo_backends`` entry point (pyproject.toml) and, for
an uninstalled checkout, when this module is imported.

What happens to each graph Dynamo hands over:

1. aot_autograd traces it to a functional ATen FX graph with Kitsune's decomposition table (core ATen
   minus the ops the graph dialect keeps whole: the torch.export importer's ``decomposition_table``);
2. ``kitsune.frontend.torch_export.import_graph`` -- the torch.export importer's op mapping, the same
   code -- turns it into graph-dialect IR, shapes and dtypes from the nodes' fake tensors; the
   parameters (aot_autograd's static inputs) become weights, uploaded once on the first call (inference
   graphs: a graph whose inputs require grad, with grad mode on, is a training graph, compiled forward and
   backward by ``kitsune.training`` with the parameters as per-call inputs);
3. ``kitsune.compile``'s lowering (``kitsune-pipeline``, Triton codegen) and its in-process cache
   (keyed by the imported graph's text: shapes, dtypes, mode, gpu) make the program.

Fallback: a graph Kitsune cannot compile (an unsupported op, a lowering or codegen error, in its forward
or its backward) is compiled by Inductor instead -- that graph only -- with a logged warning (logger
``kitsune.backend``) naming the reason and, for unsupported ops, the op and its source line.
A program that compiles but fails on its first call (loading, the Triton compile for the device, the first
launch) runs that graph's ATen ops eagerly from then on, with a warning: Inductor cannot compile the graph
from inside aot_autograd's runtime wrapper.
Graphs with symbolic shapes (Dynamo's automatic dynamic shapes after a recompile) are specialised:
each concrete input signature is compiled on its first call (and served by the compile cache after).

Options (``options={...}`` of ``torch.compile``): ``mode`` ('dataflow' | 'bulk-sync'), ``gpu``
(preset, default 'h100'), ``tune`` (accepted; the tuning database is not in this build: a warning
says so), ``cuda_graph`` (replay each Kitsune graph in a CUDA graph; inputs whose address
stays put from call to call, such as parameters and saved activations, are read in place, the others copied
into static buffers: ``kitsune.runtime.graph_slots``), ``debug`` (watchdog), ``profile`` (the SM timeline of ``kitsune.compile(..., profile=True)``),
``index_checks`` (default True; see ``kitsune.compile``), ``fallback`` (default True; False raises instead
of falling back).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

log = logging.getLogger("kitsune.backend")

OPTIONS = ("mode", "gpu", "tune", "cuda_graph", "debug", "profile", "index_checks", "fallback")


class KitsuneFallback(Exception):
    """Kitsune cannot compile this graph (the message says why); the backend hands it to Inductor."""

    def __init__(self, reason: str, ops: list[str] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.ops = ops or []


@dataclass
class GraphRecord:
    """What the backend did with one graph (``kitsune.explain`` lists these)."""

    index: int
    ops: int  # call_function nodes of the Dynamo graph
    inputs: list[str]  # shapes of the example inputs
    status: str  # 'kitsune' | 'inductor (fallback)' | 'specialised per shape'
    reason: str = ""
    unsupported: list[str] = field(default_factory=list)
    compile_s: float = 0.0
    compiled: Any = None  # the CompiledGraph (kitsune) or None
    backward: Any = None  # a training graph's backward CompiledGraph (kitsune.training), else None

    def __str__(self) -> str:
        s = f"graph {self.index}: {self.ops} op(s), inputs {', '.join(self.inputs) or '-'}: {self.status}"
        if self.status == "kitsune":
            s += (" (training: forward and backward" if self.backward is not None else " (") + \
                 f"{', ' if self.backward is not None else ''}{self.compile_s:.1f} s)"
        if self.reason:
            s += "\n    " + self.reason.replace("\n", "\n    ")
        return s


_records: list[GraphRecord] = []
_records_lock = threading.Lock()


def records() -> list[GraphRecord]:
    """Every graph this process compiled with the backend, in order."""
    with _records_lock:
        return list(_records)


def _record(rec: GraphRecord) -> GraphRecord:
    with _records_lock:
        rec.index = len(_records)
        _records.append(rec)
    return rec


def _shape_s(x) -> str:
    if isinstance(x, torch.Tensor):
        return f"{str(x.dtype).replace('torch.', '')}[{', '.join(str(d) for d in x.shape)}]"
    return type(x).__name__ + (f"={x}" if isinstance(x, (int, float, torch.SymInt)) else "")


# ------------------------------------------------------------------ one Kitsune graph


class CompiledGraph:
    """One aot_autograd graph (inference, or a training graph's forward or backward) compiled by Kitsune: call
    it with the graph's flat arguments.

    ``plan`` (training graphs): where each output of the FX graph comes from -- a result of the program, one
    of the call's own arguments (a parameter the forward saves for the backward), a tensor known at compile
    time (``static``: torch tensors by output position) or None (the gradient of an input that needs none)."""

    def __init__(self, low, static: list[int], n_args: int, *, mode: str, gpu: str, cuda_graph: bool,
                 debug: bool, names: list[str], plan: list[tuple] | None = None, role: str = "inference"):
        self._low = low
        self.static = static
        self.n_args = n_args
        self.mode = mode
        self.gpu = gpu
        self.cuda_graph = cuda_graph
        self.debug = debug
        self.names = names  # placeholder name per argument
        self.program = None
        self.fallback = None  # Inductor's compile of the ATen graph, when the first call failed
        self.record: GraphRecord | None = None
        self.fx_gm = None
        self.opts: dict = {}
        self.plan = plan
        self.role = role  # inference | forward | backward
        self.calls = 0
        self._lock = threading.Lock()

    def _make_program(self, args) -> None:
        from kitsune.compile import _program_for
        from kitsune.runtime.program import resolve_device

        dev = next((a.device for a in args if isinstance(a, torch.Tensor)), None)
        dev = resolve_device("cuda" if dev is not None and dev.type == "cuda" else "cpu")
        weights = {self.names[i]: args[i] for i in self.static}
        self.program = _program_for(self._low, weights, dev, debug=self.debug, cuda_graph=self.cuda_graph,
                                    copy_outputs=True)

    def _run(self, args):
        take = self._takes
        if take is None:  # the argument positions the program takes (fixed per graph)
            drop = set(self.static) | set(self.skip_args)
            take = self._takes = [i for i in range(len(args)) if i not in drop]
        outs = self.program(*[args[i] for i in take if isinstance(args[i], torch.Tensor)])
        self.calls += 1
        if self.plan is None:
            return tuple(outs)
        got = []
        for item in self.plan:
            kind = item[0]
            got.append(outs[item[1]] if kind == "result" else args[item[1]] if kind == "input"
                       else item[1] if kind == "static" else None)
        return tuple(got)

    skip_args: tuple = ()  # argument positions the program does not take (placeholders known at compile time)
    _takes: list[int] | None = None

    def __call__(self, *args):
        if self.fallback is not None:
            return self.fallback(*args)
        if self.program is not None:
            return self._run(args)
        with self._lock:
            if self.program is None and self.fallback is None:
                try:  # loading, compiling the kernels for the device and the first launch
                    self._make_program(args)
                    return self._run(args)
                except Exception as e:  # noqa: BLE001
                    if isinstance(e, IndexError) and self.program is not None:
                        raise  # the program runs: its index check caught a bad input (KitsuneIndexError)
                    if not self.opts.get("fallback", True) or self.fx_gm is None:
                        raise
                    self.program = None
                    reason = (f"the program failed on its first call: {type(e).__name__}: "
                              f"{str(e).splitlines()[0] if str(e) else ''}")
                    idx = self.record.index if self.record is not None else "?"
                    # Inductor cannot compile the ATen graph from inside aot_autograd's runtime wrapper:
                    # this graph's ATen ops run eagerly instead (compile-time failures go to Inductor)
                    log.warning("kitsune: graph %s falls back to its ATen graph run eagerly: %s", idx, reason)
                    if self.record is not None:
                        self.record.status, self.record.reason = "eager ATen (fallback at first call)", reason
                    self.fallback = self.fx_gm
        if self.fallback is not None:
            return self.fallback(*args)
        return self._run(args)

    @property
    def source(self) -> str:
        return self._low.source

    @property
    def lowered(self) -> str:
        return self._low.lowered

    def report(self, path=None) -> str:
        from kitsune.compile import report_files, report

        text = report(self._low.module, self._low.gpu, mode=self.mode, gpu_name=self.gpu, floor=self._low.floor,
                      program=self.program)
        if path is not None:
            report_files(path, text, self._low, self.program)
        return text


def _has_symbols(gm: torch.fx.GraphModule, example_inputs) -> bool:
    if any(isinstance(x, torch.SymInt) for x in example_inputs):
        return True
    for x in example_inputs:
        if isinstance(x, torch.Tensor) and any(isinstance(d, torch.SymInt) for d in x.shape):
            return True
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            v = n.meta.get("example_value", n.meta.get("val"))
            if isinstance(v, torch.SymInt) or (isinstance(v, torch.Tensor) and
                                               any(isinstance(d, torch.SymInt) for d in v.shape)):
                return True
    return False


def _static_inputs(example_inputs) -> list[int]:
    """Dynamo-level inputs that are parameters or buffers (aot_autograd keeps the argument order)."""
    return [i for i, x in enumerate(example_inputs) if isinstance(x, torch.Tensor) and
            (isinstance(x, torch.nn.Parameter) or getattr(x, "_dynamo_static_input_type", None) is not None)]


def _kitsune_fw(fx_gm: torch.fx.GraphModule, fx_inputs, opts: dict, static_hint: list[int] = (), *,
                training: str | None = None, known: dict | None = None) -> CompiledGraph:
    """aot_autograd's forward compiler: import, lower, generate (raises KitsuneFallback).

    ``training`` ('forward' | 'backward'): a training graph (``kitsune.training``): every tensor is a per-call
    input (parameters change between steps), outputs follow an :class:`OutputPlan`; ``known``: placeholder
    name -> numpy value of the placeholders known at compile time (the forward's static outputs)."""
    from kitsune.compile import _lower
    from kitsune.frontend.torch_export import ArgSpec, KitsuneImportError, UnsupportedOpsError, import_graph
    from kitsune.runtime.program import resolve_device

    placeholders = [n for n in fx_gm.graph.nodes if n.op == "placeholder"]
    tc = torch._guards.TracingContext.try_get()
    static = getattr(getattr(tc, "fw_metadata", None), "static_input_indices", None)
    static = list(static_hint if static is None else static)
    static = [i for i in static if i < len(placeholders) and isinstance(fx_inputs[i], torch.Tensor)]
    if training is not None:
        static = []  # trained parameters are inputs: their values change at every optimizer step
    known = dict(known or {})
    # names independent of the placeholders' (which shift with a specialised SymInt argument), so the same
    # graph with the same shapes gives the same text and hits kitsune.compile's cache
    names, nw, nx = [], 0, 0
    for i, n in enumerate(placeholders):
        if i in static:
            names.append(f"w{nw}")
            nw += 1
        elif isinstance(n.meta.get("val"), torch.Tensor):
            names.append(f"x{nx}")
            nx += 1
        else:
            names.append(n.name)
    specs = {n.name: ArgSpec("parameter" if i in static else "input", names[i]) for i, n in enumerate(placeholders)}
    skip = []
    for i, n in enumerate(placeholders):
        if n.name in known:
            specs[n.name] = ArgSpec("static", n.name, known[n.name])
            skip.append(i)
    for n in placeholders:
        if n.name in known:
            continue
        v = n.meta.get("val")
        if isinstance(v, (int, float, bool)):  # a specialised size: its value is known
            specs[n.name] = ArgSpec("value", n.name, v)
        elif v is not None and not isinstance(v, torch.Tensor):
            raise KitsuneFallback(f"non-tensor graph input {n.name} ({type(v).__name__}): symbolic values are "
                                  "not supported")
    try:
        if training is None:
            module, _ = import_graph(fx_gm.graph, specs, with_weights=False)
        else:
            module, _, out_plan = import_graph(fx_gm.graph, specs, with_weights=False, plan=True)
    except UnsupportedOpsError as e:
        raise KitsuneFallback(str(e), [it.op for it in e.items]) from e
    except KitsuneImportError as e:
        raise KitsuneFallback(f"import: {e}") from e
    dev = next((x.device for x in fx_inputs if isinstance(x, torch.Tensor)), torch.device("cpu"))
    dev = resolve_device("cuda" if dev.type == "cuda" and torch.cuda.is_available() else "cpu")
    mode, gpu = opts.get("mode", "dataflow"), opts.get("gpu", "h100")
    try:
        low = _lower(module, mode, gpu, dev, profile=bool(opts.get("profile", False)),
                     index_checks=bool(opts.get("index_checks", True)))
    except Exception as e:  # noqa: BLE001 - any lowering / codegen error is a fallback reason
        loc = ""
        op = getattr(e, "op", None)
        if op is not None and getattr(op, "location", None) is not None:
            loc = f" at {op.location}"
        raise KitsuneFallback(f"lowering / code generation failed{loc}: {type(e).__name__}: "
                              f"{str(e).splitlines()[0] if str(e) else ''}") from e
    plan = None
    if training is not None:
        out_node = next(n for n in fx_gm.graph.nodes if n.op == "output")
        out_vals = [a.meta.get("val") if isinstance(a, torch.fx.Node) else None
                    for a in torch.utils._pytree.tree_leaves(out_node.args[0])]
        plan = []
        for item, val in zip(out_plan.items, out_vals):
            if item[0] == "static":  # a tensor known at compile time: made once, on the graph's device
                with torch._subclasses.fake_tensor.unset_fake_temporarily():
                    t = torch.as_tensor(item[1]).to(device=val.device, dtype=val.dtype)
                plan.append(("static", t, item[1]))
            else:
                plan.append(item)
    cg = CompiledGraph(low, static, len(placeholders), mode=mode, gpu=gpu,
                       cuda_graph=bool(opts.get("cuda_graph", False)), debug=bool(opts.get("debug", False)),
                       names=names, plan=plan, role=training or "inference")
    cg.skip_args = tuple(skip)
    return cg


def _inductor(gm, example_inputs):
    from torch._inductor.compile_fx import compile_fx

    return compile_fx(gm, example_inputs)


def _compile_static(gm: torch.fx.GraphModule, example_inputs, opts: dict, rec: GraphRecord) -> Callable:
    from torch._dynamo.backends.common import aot_autograd

    from kitsune.frontend.torch_export import decomposition_table

    t0 = time.perf_counter()
    holder: dict[str, Any] = {}
    static_hint = _static_inputs(example_inputs)
    try:
        if torch.is_grad_enabled() and any(isinstance(x, torch.Tensor) and x.requires_grad for x in example_inputs):
            from kitsune.training import compile_training

            fn = compile_training(gm, example_inputs, opts, rec)
            rec.compile_s = time.perf_counter() - t0
            return fn

        def fw(fx_gm, fx_inputs):
            cg = _kitsune_fw(fx_gm, fx_inputs, opts, static_hint)
            cg.record, cg.fx_gm, cg.opts = rec, fx_gm, opts
            holder["cg"] = cg
            return cg

        fn = aot_autograd(fw_compiler=fw, decompositions=decomposition_table())(gm, example_inputs)
        if "cg" not in holder:  # aot_autograd took another path (e.g. a backward graph was needed)
            raise KitsuneFallback("aot_autograd produced no inference graph")
        rec.status, rec.compiled = "kitsune", holder["cg"]
        rec.compile_s = time.perf_counter() - t0
        return fn
    except Exception as e:  # noqa: BLE001
        fb = e if isinstance(e, KitsuneFallback) else next(
            (c for c in _causes(e) if isinstance(c, KitsuneFallback)), None)
        if fb is None:
            fb = KitsuneFallback(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        if not opts.get("fallback", True):
            raise
        rec.status, rec.reason, rec.unsupported = "inductor (fallback)", fb.reason, fb.ops
        log.warning("kitsune: graph %d falls back to Inductor: %s", rec.index, fb.reason)
        return _inductor(gm, example_inputs)


def _causes(e: BaseException):
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


class _Specialising:
    """A graph with symbolic shapes: each concrete input signature compiled on its first call."""

    def __init__(self, gm, opts, rec: GraphRecord):
        self.gm, self.opts, self.rec = gm, opts, rec
        self.cache: dict[tuple, Callable] = {}
        self._lock = threading.Lock()

    def __call__(self, *args):
        key = tuple((tuple(a.shape), a.dtype, a.device.type) if isinstance(a, torch.Tensor) else ("v", a)
                    for a in args)
        fn = self.cache.get(key)
        if fn is None:
            with self._lock:
                fn = self.cache.get(key)
                if fn is None:
                    sub = _record(GraphRecord(0, self.rec.ops, [_shape_s(a) for a in args], "?",
                                              reason=f"specialisation of graph {self.rec.index}"))
                    fn = _compile_static(self.gm, list(args), self.opts, sub)
                    self.cache[key] = fn
        return fn(*args)


def kitsune_backend(gm: torch.fx.GraphModule, example_inputs, options: dict | None = None, **kw) -> Callable:
    """The TorchDynamo backend (``torch.compile(model, backend="kitsune", options={...})``)."""
    opts = dict(options or {})
    opts.update(kw)
    unknown = sorted(set(opts) - set(OPTIONS))
    if unknown:
        raise ValueError(f"kitsune backend: unknown option(s) {unknown}; valid: {', '.join(OPTIONS)}")
    if opts.get("mode", "dataflow") not in ("dataflow", "bulk-sync"):
        raise ValueError(f"kitsune backend: mode must be 'dataflow' or 'bulk-sync', got {opts['mode']!r}")
    if opts.get("tune"):
        log.warning("kitsune: tune=True: no tuning database in this build; the heuristic configs are used")
    n_ops = sum(1 for n in gm.graph.nodes if n.op == "call_function" or n.op == "call_method"
                or n.op == "call_module")
    rec = _record(GraphRecord(0, n_ops, [_shape_s(x) for x in example_inputs], "?"))
    if _has_symbols(gm, example_inputs):
        rec.status = "specialised per shape"
        rec.reason = "symbolic shapes: each concrete input signature is compiled on its first call"
        return _Specialising(gm, opts, rec)
    return _compile_static(gm, list(example_inputs), opts, rec)


# ------------------------------------------------------------------ explain


@dataclass
class Explanation:
    """``kitsune.explain``: the graphs of one ``torch.compile(model, backend="kitsune")`` call."""

    graphs: list[GraphRecord]
    graph_breaks: list[str]

    @property
    def compiled(self) -> list[GraphRecord]:
        return [g for g in self.graphs if g.status == "kitsune"]

    @property
    def fell_back(self) -> list[GraphRecord]:
        return [g for g in self.graphs if "fallback" in g.status]

    def __str__(self) -> str:
        lines = [f"{len(self.graphs)} graph(s): {len(self.compiled)} compiled by Kitsune, "
                 f"{len(self.fell_back)} fell back; {len(self.graph_breaks)} graph break(s)"]
        lines += [str(g) for g in self.graphs]
        lines += [f"graph break: {b}" for b in self.graph_breaks]
        return "\n".join(lines)

    __repr__ = __str__


def explain(model, *inputs, options: dict | None = None, **kw) -> Explanation:
    """Compile ``model`` with ``torch.compile(backend="kitsune")``, run it once on ``inputs`` (under
    ``torch.no_grad``) and list per graph what Kitsune compiled and what fell back to Inductor (and why),
    with Dynamo's graph-break reasons."""
    import torch._dynamo

    register()
    torch._dynamo.reset()
    with _records_lock:
        start = len(_records)
    opts = dict(options or {})
    opts.update(kw)
    with torch.no_grad():
        torch.compile(model, backend="kitsune", options=opts or None)(*inputs)
    with _records_lock:
        graphs = _records[start:]
    breaks: list[str] = []
    try:
        torch._dynamo.reset()
        ex = torch._dynamo.explain(model)(*inputs)
        for b in getattr(ex, "break_reasons", []):
            where = ""
            stack = getattr(b, "user_stack", None)
            if stack:
                fr = stack[-1]
                where = f" ({fr.filename}:{fr.lineno})"
            breaks.append(f"{getattr(b, 'reason', b)}".splitlines()[0] + where)
    except Exception as e:  # noqa: BLE001
        breaks.append(f"(torch._dynamo.explain failed: {type(e).__name__})")
    finally:
        torch._dynamo.reset()
    return Explanation(list(graphs), breaks)


# ------------------------------------------------------------------ registration


def register() -> None:
    """Register ``"kitsune"`` with TorchDynamo (the entry point does it for an installed Kitsune)."""
    from torch._dynamo.backends import registry

    if "kitsune" in registry._COMPILER_FNS or registry._BACKENDS.get("kitsune") is not None:
        return  # registered, or the entry point will load this module's kitsune_backend
    registry.register_backend(kitsune_backend, name="kitsune")

register()

__all__ = ["kitsune_backend", "explain", "Explanation", "GraphRecord", "records", "register", "KitsuneFallback",
           "CompiledGraph"]
