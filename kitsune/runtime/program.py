"""Run generated Triton programs: load the module, allocate state, upload weights, launch.

A :class:`Program` wraps one generated module (the text that
``kitsune.codegen.triton_gen.generate_triton`` returns). The module's interface::

    TENSORS  name -> (shape, dtype key, role)      role: input | parameter | buffer | constant
    LABELS   name -> user label (the kitsune.name: the key of the weights dict)
    ARGS     the function's arguments in order (global tensor names)
    OUTPUTS  the function's results (global tensor names)
    MUTATES  (output position, argument) of every buffer mutation: the argument holds that output after a launch
    QUEUES   [(queue, kernel, capacity, tiles)]
    KERNELS  [dict(name, fn, grid, num_warps, tensors, signature, constexprs)]
    allocate(device) -> state
    launch(state, tensors, watchdog=0) -> [output tensors]   (no sync; bumps the device-side epoch)
    check(state)               (syncs; raises KitsuneIndexError and resets the flag, or QueueTimeout)
    error(code)                (optional: the exception for a flag value, None for 0; reads nothing)
    INDEX_CHECKS               (optional: the index checks compiled in; empty -> no flag to watch)

Errors (out-of-range indices): every generated kernel checks the indices it loads from tensors
(gathers, scatters) and sets ``state["err"]`` when one lies outside its dimension (the access itself
is masked: a read gives 0, a write is dropped). A :class:`Program` turns the flag into the module's
``KitsuneIndexError`` (naming the op, its source location and the dimension) without adding a
device->host synchronisation to a call, like CUDA's asynchronous errors:

* on a GPU the flag lives in mapped, pinned host memory (:class:`HostFlag`): a failing check in a kernel
  writes it there directly, so a call adds nothing on the GPU (no copy, no event) and nothing that waits;
  every call starts by reading the host word (no synchronisation): if an earlier call set it, that call
  raises instead of running, after waiting for the calls in flight, and the flag is reset (later calls run
  normally). So an error surfaces at a later call -- the next one if the faulty kernel has run by then --
  or at :meth:`Program.check`, which waits for the last call and raises at once;
* under Triton's interpreter (``device='cpu'``) everything is synchronous: the flag is read at the
  end of every call, and the faulty call itself raises;
* ``debug=True`` reads the flag (synchronising) after every call, on any device.

Loading: the source is written to ``$KITSUNE_CACHE_DIR`` (default
``~/.cache/kitsune``) as ``kitsune_<sha256>.py`` -- ``@triton.jit`` needs the
function source in a real file -- and imported with importlib. Without a CUDA
device the module is imported with ``TRITON_INTERPRET=1`` (triton.jit decides
at decoration time) and every tensor lives on the CPU: Triton's interpreter
runs the kernels, slowly; a warning says so once per process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from kitsune.derived_weights import available, resolve
from kitsune.timing import phase
from kitsune.runtime.graph_slots import GraphSlots

# dtype keys of the generated code -> torch dtypes
TORCH_DTYPES: dict[str, torch.dtype] = {
    "f32": torch.float32,
    "bf16": torch.bfloat16,
    "f16": torch.float16,
    "f64": torch.float64,
    "i64": torch.int64,
    "i32": torch.int32,
    "i16": torch.int16,
    "i8": torch.int8,
    "i1": torch.bool,
}

ARG_ROLES = ("input", "parameter")
DEFAULT_WATCHDOG = 1 << 20
"""The watchdog ``debug=True`` passes to ``launch`` (the generated module's unit: spin iterations per wait)."""


class KitsuneRuntimeError(RuntimeError):
    """A program cannot be loaded or called (wrong inputs, missing weights, no device)."""


class InputError(KitsuneRuntimeError, ValueError):
    """An input does not match the compiled program (count, shape or dtype)."""


# ------------------------------------------------------------------ devices


def capture_graph(fn, warmup: int = 1):
    """Run ``fn`` ``warmup`` times on a side stream (compiles and allocates whatever it needs), then
    capture one more call in a CUDA graph. Returns ``(graph, the captured call's result)``."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()
    return g, out


def resolve_device(device: Any = None) -> torch.device:
    """``None`` -> ``cuda`` when a CUDA GPU is present, else ``cpu``."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    d = torch.device(device)
    if d.type == "cuda" and not torch.cuda.is_available():
        raise KitsuneRuntimeError(f"device {d} requested but torch sees no CUDA GPU "
                                  f"(use device='cpu' to run under Triton's CPU interpreter)")
    if d.type not in ("cuda", "cpu"):
        raise KitsuneRuntimeError(f"device {d}: Kitsune runs on 'cuda' or, through Triton's interpreter, 'cpu'")
    return d


def uses_interpreter(device: torch.device) -> bool:
    return device.type != "cuda"


_warned_interpreter = False


def _warn_interpreter() -> None:
    global _warned_interpreter
    if not _warned_interpreter:
        _warned_interpreter = True
        warnings.warn("kitsune: no CUDA GPU in use -- the generated Triton kernels run under Triton's CPU "
                      "interpreter (TRITON_INTERPRET=1), slowly; timings mean nothing there",
                      RuntimeWarning, stacklevel=3)


# ------------------------------------------------------------------ loading generated modules


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """``path``, else ``$KITSUNE_CACHE_DIR``, else ``~/.cache/kitsune`` (created)."""
    p = Path(path or os.environ.get("KITSUNE_CACHE_DIR") or Path.home() / ".cache" / "kitsune")
    p.mkdir(parents=True, exist_ok=True)
    return p


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


_modules: dict[tuple[str, bool], ModuleType] = {}
_load_lock = threading.Lock()
_mode: str | None = None  # "interpreter" or "gpu": what this process's Triton was set up for


def _triton_interpreting() -> bool:
    """Whether ``triton.language`` (already imported) was built for the interpreter."""
    std = sys.modules.get("triton.language.standard")
    if std is None:
        return False
    from triton.runtime.interpreter import InterpretedFunction

    return isinstance(getattr(std, "sum", None), InterpretedFunction)


def _use_mode(interpret: bool) -> None:
    """Set this process's Triton up for the interpreter or for the GPU, once.

    Triton decides at decoration time whether a ``@triton.jit`` function is compiled or interpreted, and
    that includes its own library (``tl.sum``, ``tl.max``... are jit functions of
    ``triton.language.standard``): the interpreter works only if ``TRITON_INTERPRET=1`` was set before
    *triton* was imported. So the first interpreted program sets it for the rest of the process, and if
    Triton was already imported in compiled mode (by the user, or by torch), its Python modules are
    imported again (its C extension is kept). Triton cannot serve both in one process afterwards: mixing
    CPU-interpreted and CUDA programs is refused.
    """
    global _mode
    want = "interpreter" if interpret else "gpu"
    if _mode == want:
        return
    if _mode is not None:
        have = "under Triton's CPU interpreter" if _mode == "interpreter" else "on a CUDA GPU"
        other = "interpret on the CPU" if interpret else "compile for the GPU"
        raise KitsuneRuntimeError(
            f"this process already runs Kitsune programs {have}; Triton cannot also {other} in the same process "
            f"(it decides once per process whether @triton.jit functions are compiled or interpreted): use one "
            f"device kind per process")
    if interpret:
        os.environ["TRITON_INTERPRET"] = "1"
        if "triton.language" in sys.modules and not _triton_interpreting():
            for name in [n for n in sys.modules if (n == "triton" or n.startswith("triton."))
                         and not n.startswith("triton._C")]:
                del sys.modules[name]
            importlib.import_module("triton.language")
            if not _triton_interpreting():  # pragma: no cover - depends on Triton internals
                raise KitsuneRuntimeError("Triton was imported before Kitsune could switch it to its CPU "
                                          "interpreter; run with TRITON_INTERPRET=1 set in the environment")
    else:
        if os.environ.get("TRITON_INTERPRET", "") not in ("", "0") or _triton_interpreting():
            raise KitsuneRuntimeError("TRITON_INTERPRET is set (or Triton was imported under its interpreter): "
                                      "CUDA programs cannot be compiled in this process; unset it or use "
                                      "device='cpu'")
    _mode = want


def load_source(source: str, *, interpret: bool, directory: str | os.PathLike | None = None) -> ModuleType:
    """Write ``source`` to the cache directory (``kitsune_<sha256>.py``) and import it.

    ``interpret=True`` sets Triton up for its CPU interpreter first (``TRITON_INTERPRET=1``, for the rest
    of the process, see :func:`_use_mode`), so that every ``@triton.jit`` function becomes one the
    interpreter runs. A source is imported once per process.
    """
    h = source_hash(source)
    key = (h, interpret)
    with _load_lock:
        if key in _modules:
            return _modules[key]
        _use_mode(interpret)
        d = cache_dir(directory)
        path = d / f"kitsune_{h}.py"
        if not path.exists() or path.read_text() != source:
            fd, tmp = tempfile.mkstemp(dir=d, prefix=".kitsune_", suffix=".py")
            with os.fdopen(fd, "w") as f:
                f.write(source)
            os.replace(tmp, path)
        modname = f"kitsune_generated_{h[:24]}" + ("_interp" if interpret else "")
        spec = importlib.util.spec_from_file_location(modname, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[modname] = mod  # inspect.getsource (triton.jit) looks the module up here
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            sys.modules.pop(modname, None)
            raise
        missing = [a for a in ("TENSORS", "ARGS", "OUTPUTS", "allocate", "launch", "check") if not hasattr(mod, a)]
        if missing:
            raise KitsuneRuntimeError(f"generated module {path} lacks {', '.join(missing)}")
        _modules[key] = mod
        return mod


# ------------------------------------------------------------------ programs


class HostFlag:
    """A program's error flag in mapped, pinned host memory (on a GPU): the kernels' failing index checks
    write it directly (pinned memory is device-addressable under unified addressing), so watching it costs a
    call nothing on the GPU. ``value`` reads the host word without waiting; ``settle`` waits for the work in
    flight (which may still write it; the module's ``check`` then reads and clears it). On a CPU device (tests)
    it is a plain tensor and nothing waits."""

    def __init__(self, device: torch.device):
        self.device = device
        if device.type == "cuda":
            with torch.cuda.device(device):
                self.tensor = torch.zeros(1, dtype=torch.int32, pin_memory=True)
        else:
            self.tensor = torch.zeros(1, dtype=torch.int32)
        self._word = self.tensor.numpy()  # reads the pinned word directly: no torch dispatch per call

    def value(self) -> int:
        return int(self._word[0])

    def settle(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


def _fmt_shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join("?" if d < 0 else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _kind(dt: torch.dtype) -> str:
    if dt == torch.bool:
        return "bool"
    if dt.is_floating_point:
        return "float"
    if dt.is_complex:
        return "complex"
    return "int"


class Program:
    """One generated Triton program, loaded, with its state allocated and its weights uploaded.

    ``Program(source, weights, device)`` or ``Program.from_module(lowered_module, weights, device)``.
    Calling it with the user inputs (positionally, in the order of ``input_names``) returns the list of
    outputs. Options: ``copy_outputs`` (default True: clones; False: the program's internal buffers,
    overwritten by the next call), ``debug`` (watchdog on, ``check`` after every call: a stuck queue
    raises the module's ``QueueTimeout`` naming the queue and kernel), ``cuda_graph`` (CUDA only: a call
    replays a captured launch; it reads in place the inputs whose address has not moved since the previous
    call and copies the others into static buffers; up to three captures write into output tensors of their
    own, handed to the caller without a copy while no earlier output of that capture is still held
    (``graph_slots``), else the outputs are cloned).

    Out-of-range indices raise the module's ``KitsuneIndexError`` (an ``IndexError``): on a GPU at a
    later call (the first that finds the faulty call finished; it raises instead of running) or at
    :meth:`check`, never by synchronising inside a call; under the interpreter and with ``debug`` at
    the faulty call itself. See the module docstring; :meth:`poll` is the non-blocking check.
    """

    def __init__(self, source: str, weights: Mapping[str, Any] | None = None, device: Any = None, *,
                 debug: bool = False, cuda_graph: bool = False, copy_outputs: bool = True,
                 watchdog: int | None = None, directory: str | os.PathLike | None = None,
                 lowered: str | None = None):
        self.device = resolve_device(device)
        if self.device.type == "cuda" and self.device.index is None:  # 'cuda' -> 'cuda:N' (compared per call)
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.interpret = uses_interpreter(self.device)
        if self.interpret:
            _warn_interpreter()
        if cuda_graph and self.interpret:
            raise KitsuneRuntimeError("cuda_graph=True needs a CUDA device (this program runs on "
                                      f"{self.device} under Triton's interpreter)")
        self.source = source
        self.lowered = lowered
        self.debug = bool(debug)
        self.cuda_graph = bool(cuda_graph)
        self.copy_outputs = bool(copy_outputs)
        self.watchdog = int(watchdog) if watchdog is not None else (DEFAULT_WATCHDOG if debug else 0)
        with phase("load module"):
            self.module = load_source(source, interpret=self.interpret, directory=directory)
        m = self.module
        self.tensor_info: dict[str, tuple[tuple[int, ...], str, str]] = {
            n: (tuple(int(d) for d in s), dt, role) for n, (s, dt, role) in m.TENSORS.items()}
        self.labels: dict[str, str] = dict(getattr(m, "LABELS", {}))
        self.arg_names: list[str] = list(m.ARGS)
        mutated = dict(getattr(m, "MUTATES", []))
        self._user_outputs = [i for i in range(len(m.OUTPUTS)) if i not in mutated]
        self.output_names: list[str] = [m.OUTPUTS[i] for i in self._user_outputs]  # the user's outputs
        self.mutated_buffers: list[str] = list(dict.fromkeys(mutated.values()))
        """Buffers a call updates (a KV cache): the program's own copies, kept from call to call (``buffers``)."""
        self.input_names: list[str] = [a for a in self.arg_names if self.tensor_info[a][2] == "input"]
        self.parameter_names: list[str] = [a for a in self.arg_names if self.tensor_info[a][2] != "input"]
        with phase("allocate"):
            if self.interpret:
                self.state = m.allocate(self.device)
            else:
                with torch.cuda.device(self.device):
                    self.state = m.allocate(self.device)
        self._tensors: dict[str, torch.Tensor] = {}
        with phase("upload weights"):
            self._upload(weights or {})
        # per input (name, torch.Size, dtype) for _prepare's fast path; a dynamic dimension never matches
        self._fast_signature = [(n, torch.Size(self.tensor_info[n][0]), TORCH_DTYPES[self.tensor_info[n][1]])
                                for n in self.input_names]
        self._slots = GraphSlots(self._capture_slot, self._fresh_outputs,  # cuda_graph: the captured launches
                                 output_names=self.output_names)
        self.calls = 0
        # the lazy error check (GPU, not debug, a module with index checks): see HostFlag and poll
        self.index_checks = bool(getattr(m, "INDEX_CHECKS", None))
        self._flag: HostFlag | None = None
        if self.index_checks and not self.interpret and not self.debug:
            self.watch_flag(HostFlag(self.device))

    @classmethod
    def from_module(cls, module, weights: Mapping[str, Any] | None = None, device: Any = None, *,
                    capacity: str | None = None, index_checks: bool = True, **kw) -> "Program":
        """Generate Triton for a gpu_queue-lowered module (``capacity`` 'all' under the interpreter, else
        'ir'; ``index_checks``: see ``generate_triton``) and load it."""
        from kitsune.codegen.triton_gen import generate_triton

        dev = resolve_device(device)
        cap = capacity or ("all" if uses_interpreter(dev) else "ir")
        text = None
        try:
            from kitsune.frontend.torch_export import module_to_text

            text = module_to_text(module, debuginfo=False)
        except Exception:  # pragma: no cover - printing is best effort
            pass
        prog = cls(generate_triton(module, capacity=cap, index_checks=index_checks), weights, dev, lowered=text, **kw)
        if capacity is None and cap == "ir" and not prog.all_resident():
            # A ring queue (fewer slots than tiles) makes a producer wait for its consumers: every
            # program of that kernel must be resident at once. The compiled kernels use more registers
            # or shared memory than allocate-sms assumed, so give every queue a slot per tile instead
            # (no back-pressure: ticket-ordered programs then always make progress).
            prog = cls(generate_triton(module, capacity="all", index_checks=index_checks), weights, dev, lowered=text,
                       **kw)
            prog.capacity_fallback = True
        return prog

    capacity_fallback = False

    def precompile(self) -> int:
        """Compile every kernel for this device now, without launching: the first call then only launches.

        Kernels that share one function (the same code, e.g. the layers of a stack: see ``generate_triton``)
        are compiled once. The arguments are those a call passes (buffers, parameters, inputs of the example's
        shapes, ``watchdog``), so the call finds every kernel in Triton's cache. Returns the number of distinct
        kernels compiled; a no-op under the interpreter. (One after another: Triton 3.6 holds the GIL while it
        compiles, so threads gain nothing -- bench/kernels/NOTES.md, "Compile time".)"""
        if self.interpret:
            return 0
        m = self.module
        env = {**self.state["buffers"], **self._tensors}
        for n in self.input_names:
            shape, dt, _ = self.tensor_info[n]
            env[n] = torch.empty([max(d, 1) for d in shape], dtype=TORCH_DTYPES[dt], device=self.device)
        seen = set()
        with phase("triton compile"), torch.cuda.device(self.device):
            for k in getattr(m, "KERNELS", []):
                key = (id(k["fn"]), k.get("num_warps"), k.get("num_stages"), bool(k.get("profile")))
                if key in seen:
                    continue
                seen.add(key)
                if k.get("tma") and hasattr(m, "_tma_prepare"):
                    m._tma_prepare(env, k["tma"], k.get("tma_pad"))
                args = (m._kernel_args(env, k) if hasattr(m, "_kernel_args") else [env[n] for n in k["tensors"]]) \
                    + [self.state["counters"], self.state["err"], self.state["epoch"]]
                if "ticket" in k:
                    args.append(k["ticket"])
                extra = m._prof(self.state, k) if hasattr(m, "_prof") else {}
                k["fn"].warmup(*args, WATCHDOG=self.watchdog, num_warps=k["num_warps"], num_stages=k["num_stages"],
                               grid=(k["grid"],), **extra)
        self.precompiled = len(seen)
        return len(seen)

    precompiled = 0

    def all_resident(self) -> bool:
        """Whether every kernel with a ring queue fits on the device at once (compiles, no launch)."""
        m = self.module
        ring = {k for (_, k, cap, nt) in getattr(m, "QUEUES", []) if cap < nt}
        if not ring or not hasattr(m, "residency"):
            return True
        with torch.cuda.device(self.device):
            res = m.residency(self.state, {**self._tensors, **{n: torch.empty(self.tensor_info[n][0],
                                           dtype=m.DTYPES[self.tensor_info[n][1]], device=self.device)
                                           for n in self.input_names}})
        self.residency = res
        return all(grid <= fit for name, grid, fit, *_ in res if name in ring)

    # ---------------------------------------------------------------- weights

    def label(self, name: str) -> str:
        return self.labels.get(name, name)

    def _upload(self, weights: Mapping[str, Any]) -> None:
        missing = [self.label(n) for n in self.parameter_names
                   if not available(self.label(n), weights) and n not in weights]
        if missing:
            raise KitsuneRuntimeError(
                f"no value for parameter(s) {', '.join(repr(x) for x in missing)} (the weights dict has "
                f"{len(weights)} entries" + (f", e.g. {next(iter(weights))!r}" if weights else "") +
                "; a model exported on the meta device has no weights)")
        for n in self.parameter_names:
            lab = self.label(n)
            # (a derived parameter, kitsune-merge-siblings' concatenated weights, from the weights it names)
            w = resolve(lab, weights) if available(lab, weights) else weights[n]
            shape, dt, _ = self.tensor_info[n]
            t = w.detach() if isinstance(w, torch.Tensor) else torch.from_numpy(np.array(w, order="C"))  # keeps 0-d arrays 0-d
            if tuple(t.shape) != shape:
                raise KitsuneRuntimeError(f"parameter {lab!r}: expected shape {_fmt_shape(shape)}, "
                                          f"got {_fmt_shape(tuple(t.shape))}")
            # a copy always (copy=True): the program keeps its weights when the model's tensors change later
            t = t.to(device=self.device, dtype=TORCH_DTYPES[dt], copy=True).contiguous()
            order = getattr(self.module, "ORDERS", {}).get(n)
            self._tensors[n] = t if order is None else self.module.stored(t, order)  # (kitsune.codegen.layouts)
            pack = getattr(self.module, "PACKS", {}).get(n)
            if pack is not None:  # a weight a Gluon gemm reads in packed blocks (templates/gemm_tma.py)
                self._tensors[n] = self.module.packed(self._tensors[n], *pack)

    def parameters(self) -> dict[str, torch.Tensor]:
        """The uploaded parameters, by label, as stored (a weight a Gluon gemm reads packed: its blocks, ``PACKS``)."""
        return {self.label(n): self._tensors[n] for n in self.parameter_names}

    def buffers(self) -> dict[str, torch.Tensor]:
        """The buffers the program updates (``mutated_buffers``: a KV cache), by label: its own copies, uploaded
        from the model's at load time and updated by every call (the model's tensors are not touched). Write
        into them (``copy_``) to reset or change the state; a captured CUDA graph reads them in place."""
        return {self.label(n): self._tensors[n] for n in self.mutated_buffers}

    # ---------------------------------------------------------------- inputs

    def input_signature(self) -> list[tuple[str, tuple[int, ...], torch.dtype]]:
        return [(self.label(n), self.tensor_info[n][0], TORCH_DTYPES[self.tensor_info[n][1]])
                for n in self.input_names]

    def _prepare(self, inputs: Sequence[Any]) -> dict[str, torch.Tensor]:
        """The inputs by name, checked and on the device in the program's dtypes (a copy only where needed).

        The common case -- contiguous tensors of the right shape, dtype and device -- is checked in one pass
        and taken as is (a detached alias where they require grad): a training step calls two programs with
        dozens of inputs each, and this is per-call host time."""
        fast = self._fast_signature
        if len(inputs) == len(fast):
            out: dict[str, torch.Tensor] = {}
            dev = self.device
            for (n, size, dt), x in zip(fast, inputs):
                if not (isinstance(x, torch.Tensor) and x.dtype is dt and x.shape == size and x.device == dev
                        and x.is_contiguous()):
                    break
                out[n] = x.detach() if x.requires_grad else x
            else:
                return out
        return self._prepare_checked(inputs)

    def _prepare_checked(self, inputs: Sequence[Any]) -> dict[str, torch.Tensor]:
        sig = self.input_signature()
        if len(inputs) != len(sig):
            names = ", ".join(f"{lab} {_fmt_shape(s)} {str(d).replace('torch.', '')}" for lab, s, d in sig)
            raise InputError(f"expected {len(sig)} input(s) ({names}), got {len(inputs)}")
        out: dict[str, torch.Tensor] = {}
        for i, (n, x, (lab, shape, dt)) in enumerate(zip(self.input_names, inputs, sig)):
            what = f"input #{i} {lab!r}"
            if not isinstance(x, torch.Tensor):
                if isinstance(x, (np.ndarray, np.generic, int, float, bool, list)):
                    x = torch.as_tensor(np.asarray(x))
                else:
                    raise InputError(f"{what}: expected a tensor, got {type(x).__name__}")
            got = tuple(x.shape)
            if len(got) != len(shape) or any(e >= 0 and e != g for e, g in zip(shape, got)):
                raise InputError(f"{what}: expected shape {_fmt_shape(shape)}, got {_fmt_shape(got)}")
            if _kind(x.dtype) != _kind(dt):
                raise InputError(f"{what}: expected dtype {str(dt).replace('torch.', '')}, got "
                                 f"{str(x.dtype).replace('torch.', '')} (a {_kind(x.dtype)} tensor where the "
                                 f"program takes a {_kind(dt)} one)")
            if x.dtype != dt and _kind(dt) == "int" and dt != torch.bool and x.numel():
                info = torch.iinfo(dt)  # another integer type is converted when its values fit
                lo, hi = int(x.min()), int(x.max())
                if lo < info.min or hi > info.max:
                    raise InputError(f"{what}: the program takes {str(dt).replace('torch.', '')}, and this "
                                     f"{str(x.dtype).replace('torch.', '')} tensor holds {lo if lo < info.min else hi}, "
                                     "which does not fit")
            out[n] = x.detach().to(device=self.device, dtype=dt).contiguous()
        return out

    # ---------------------------------------------------------------- running

    def __call__(self, *inputs: Any, copy_outputs: bool | None = None) -> list[torch.Tensor]:
        self.poll()  # an error an earlier call left (when the GPU has finished it) raises here
        ins = self._prepare(inputs)
        copy = self.copy_outputs if copy_outputs is None else copy_outputs
        if self.cuda_graph:
            out = self._replay(ins, copy)  # (copies only what the caller could otherwise see overwritten)
        else:
            out = self._launch(ins, copy)
        self.calls += 1
        if self._flag is None and (self.debug or self.interpret):  # debug syncs; the interpreter is synchronous
            self.check()
        return out

    def _launch(self, ins: dict[str, torch.Tensor], copy: bool) -> list[torch.Tensor]:
        """One launch; with ``copy`` the outputs are written straight into new tensors (no copy after it)."""
        fresh = self._fresh_outputs() if copy else {}
        tensors = {**self._tensors, **ins, **fresh}
        if self.interpret or torch.cuda.current_device() == self.device.index:
            outs = self.launch(tensors)
        else:
            with torch.cuda.device(self.device):
                outs = self.launch(tensors)
        if not copy:
            return outs
        own = {id(t) for t in fresh.values()}
        out: list[torch.Tensor] = []
        for o in outs:  # an input passed through or an output listed twice: a copy
            out.append(o if id(o) in own else o.clone())
            own.discard(id(o))
        return out

    def launch(self, tensors: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        """One launch of the module with ``tensors`` (name -> tensor: the program's own, prepared inputs, output
        buffers) on the current stream, nothing checked or copied; its user outputs (buffer mutations stay in
        the program's buffers). What a benchmark captures."""
        outs = self.module.launch(self.state, tensors, watchdog=self.watchdog)
        return [outs[i] for i in self._user_outputs]

    def _fresh_outputs(self) -> dict[str, torch.Tensor]:
        """New tensors for the output buffers of this call (the kernels write the outputs there instead of into
        the state's buffers, which the next call overwrites): returning them needs no copy."""
        bufs = self.state.get("buffers", {}) if isinstance(self.state, dict) else {}
        return {n: torch.empty_like(bufs[n]) for n in dict.fromkeys(self.output_names)
                if n in bufs and self.tensor_info.get(n, ((), "", ""))[2] == "buffer"}

    def watch_flag(self, flag: HostFlag) -> None:
        """Use ``flag`` as the kernels' error flag, read lazily by :meth:`poll` (set up on a GPU without
        debug; before the first call, since a CUDA graph captures the flag's address)."""
        self._flag = flag
        self.state["err"] = flag.tensor

    def poll(self) -> None:
        """Raise the error an earlier call flagged, without waiting when there is none (the host word is
        read, nothing synchronises): the module's ``KitsuneIndexError`` (after the calls in flight finish;
        the flag is reset, later calls run) or ``QueueTimeout``. Every call starts with it; a no-op under
        the interpreter and in debug, whose calls check synchronously."""
        if self._flag is None or not self._flag.value():
            return
        self._flag.settle()  # the faulty call and any after it have finished: the flag holds its final value
        self.module.check(self.state)  # raises (and for an index error clears the flag)

    def check(self) -> None:
        """Wait for the last call and raise what it flagged (synchronises): the module's
        ``KitsuneIndexError`` if an index was out of range (the flag is reset: later calls run), its
        ``QueueTimeout`` if a debug watchdog fired. On a GPU without debug, calls raise such an error
        only at a later call (see :meth:`poll`); call this to have it now, e.g. before using results."""
        if self._flag is not None:
            self._flag.settle()
        self.module.check(self.state)

    def _replay(self, ins: dict[str, torch.Tensor], copy: bool) -> list[torch.Tensor]:
        """A CUDA-graph call (``graph_slots``): outputs the caller may keep without a copy where a graph's
        earlier outputs are no longer held, else the copy slot's outputs cloned (``copy``) or as they are."""
        if torch.cuda.current_device() == self.device.index:  # (entering torch.cuda.device costs host time)
            return self._slots.run(ins, copy)
        with torch.cuda.device(self.device):
            return self._slots.run(ins, copy)

    def _capture_slot(self, static: dict[str, torch.Tensor], outputs: dict[str, torch.Tensor]):
        """Warm up and capture one launch reading ``static`` and writing its results into ``outputs`` (the
        program's buffers where empty)."""
        tensors = {**self._tensors, **static, **outputs}
        g, outs = capture_graph(lambda: self.launch(tensors))
        if self.debug:  # the warm-up's watchdog flag (the capture itself runs nothing)
            self.check()
        return g, outs

    # ---------------------------------------------------------------- description

    def __repr__(self) -> str:
        ins = ", ".join(f"{lab}{_fmt_shape(s)}" for lab, s, _ in self.input_signature())
        return (f"<kitsune.Program {len(getattr(self.module, 'KERNELS', []))} kernel(s), inputs ({ins}), "
                f"{len(self.output_names)} output(s) on {self.device}"
                + (" [Triton interpreter]" if self.interpret else "") + ">")


__all__ = ["Program", "HostFlag", "KitsuneRuntimeError", "InputError", "load_source", "cache_dir", "resolve_device",
           "uses_interpreter", "TORCH_DTYPES", "DEFAULT_WATCHDOG"]
