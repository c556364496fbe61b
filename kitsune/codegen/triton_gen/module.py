"""The module generator: a plan's kernels -> one self-contained Python module of ``@triton.jit`` kernels.

Per kernel, one function per stage (``StageGen``) and a dispatcher that hands out program ids in the order
CTAs start (a ticket counter) and calls the stage whose programs the id falls in; then the tables the host
code reads (tensors, queues, constants, kernels with their signatures) and the host code itself
(``runtime_text``). ``TritonGen`` also collects what stages add to the module: constants that are not splats,
and the debug index checks (each an error code and a message).
"""

from __future__ import annotations

import base64
import functools
import io
import math
import os
import re
from typing import IO

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from kitsune.codegen.plan import ELEM_BYTES, CodegenError, Kernel, Plan, Stage, Tensor, build_plan, ident
from kitsune.codegen.triton_gen.early_loads import DEFAULT_PDL, place_wait
from kitsune.codegen.triton_gen.runtime_text import HOST, INDEX_CODE, RUNTIME, WAIT_CODE
from kitsune.codegen.triton_gen.stage import StageGen
from kitsune.codegen.triton_gen.syntax import SIG, TORCH, code_part, pow2
from kitsune.dialects.graph import fmt_loc
from kitsune.semantics.comprehension import Access


GLUON_IMPORTS = (
    "from triton.experimental import gluon\n"
    "from triton.experimental.gluon import language as gl\n"
    "from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,\n"
    "                                                              warpgroup_mma_wait)\n")


def _env_on(name: str, default: str) -> bool:
    return os.environ.get(name, default) not in ("0", "off", "false", "no")


FILL_SHARE = 64 << 10
"""The most bytes of a later kernel's zero-started buffer one program of a host kernel zeroes (``_zero_fills``)."""

PEELED = ("gemv", "decode_attention")
"""Templates whose stages get their K loop's first iteration copied out before the PDL wait (``early_loads._peel``):
measured on the H100 (bench/kernels/NOTES.md section 28), llama_decode_b8 at PDL 1 79.0 -> 74.9 us; in GEMM
stages (dlrm's layers, an inception branch) it cost up to 4% at PDL 2."""

_NO_TICKET = ["    # no program of this kernel waits on another: the CTA's own id (a ticket would serialise one",
              "    # atomic per program on one counter: 4.6 us of mgn_10k's 938-program edge kernel on the H100)"]
"""The shell's comment where a kernel takes the CTA's own id instead of a ticket."""

_WAITS = re.compile(r"\bepoch\b|\b_(?:await_stages|pop_wait|push_wait|acquire)\(")
"""A stage body that spins on another program (every spin compares an epoch-based counter)."""


class TritonGen:
    def __init__(self, plan: Plan, tf32: bool = False, profile: bool = False, index_checks: bool = True,
                 tma: bool | None = None, gluon: bool | None = None):
        self.plan = plan
        # a lone chain stage with ChainConfig.TMA = 1 as a Gluon kernel (templates/chain_tma.py); not under Triton's
        # interpreter (it runs no Gluon) nor with KITSUNE_GLUON=0: there the chain's register form
        if gluon is None:
            from kitsune.codegen.aot import interpret_env_set

            gluon = _env_on("KITSUNE_GLUON", "1") and not interpret_env_set()
        self.gluon = gluon
        self.gluon_kernels: dict[str, dict] = {}  # kernel -> {"pads": {weight: row pitch}, "fallback": why}
        # tensor-core operands through TMA descriptors where they qualify (templates/tma.py): KITSUNE_TMA=1; off
        # by default (no gain measured over the pipelined pointer loads, nerf_65k 7% slower: NOTES section 10)
        self.tma = tma if tma is not None else _env_on("KITSUNE_TMA", "0")
        self.index_checks_on = index_checks  # False: no index checks emitted (to measure what they cost)
        self.tf32 = tf32
        self.profile = profile  # the dispatcher records (start, end, SM) of every work item
        self.constants: dict[str, tuple[np.ndarray, str]] = {}
        self.kernel_extra: dict[str, list[str]] = {}
        self.early: set[str] = set()  # kernels whose stages wait for the kernel before only where they must
        self.kernel_tma: dict[str, list[str]] = {}  # tensors a kernel reads through TMA descriptors
        # TMA descriptors the host makes for a kernel (its last parameters): (parameter, tensor, shape, strides,
        # block, dtype); a Gluon gemm's (templates/gemm_tma.py), which a kernel made on the device cost 1.4-1.8 us
        # a launch on the H100 (bench/kernels/NOTES.md section 34)
        self.kernel_descs: dict[str, list[tuple]] = {}
        # [n, k] weights a Gluon gemm alone reads, uploaded packed in its [BN, BK] blocks (templates/gemm_tma.py
        # ``packing``): name -> (BN, BK); KITSUNE_PACK=0 leaves every weight row-major
        self.pack_weights = _env_on("KITSUNE_PACK", "1")
        self.packs: dict[str, tuple[int, int]] = {}
        self.fills, self.filled = self._zero_fills()
        self.index_checks: list[tuple[str, str]] = []
        self.waits: list[tuple[str, str, list[str]]] = []  # (kernel, consumer stage, producer stages)
        self.wait_codes: dict[int, int] = {}  # err code - WAIT_CODE -> its entry of waits

    def wait_code(self, kernel: Kernel, stage: str, producers: list[str]) -> int:
        """The err code of a temporal stage's watchdog, less the kernel's ticket (``cbase`` in its stage
        functions): WAIT_CODE + the stage's number among the kernel's waiting stages, so that kernels of the
        same code have the same code; the kernel's counter region is at least that long (``plan``), so the
        codes of all kernels differ."""
        local = sum(1 for w in self.waits if w[0] == kernel.name)
        self.wait_codes[kernel.ticket + local] = len(self.waits)
        self.waits.append((kernel.name, stage, list(producers)))
        return WAIT_CODE + local

    def index_check(self, op, acc: Access, d: int, n: int) -> int:
        """The err code of a check that ``acc``'s index in dim ``d`` lies in [0, n)."""
        what = (f"'{op.name}' uses {acc} with an index outside [0, {n}) in dim {d} (torch raises IndexError "
                "here; Kitsune's read gave 0 / the write was dropped)")
        item = (fmt_loc(op), what)
        if item not in self.index_checks:
            self.index_checks.append(item)
        return INDEX_CODE + self.index_checks.index(item)

    def emit_index_check(self, b, op, acc: Access, d: int, n: int, tv, depth: int) -> None:
        """Emit (through ``b``, a stage's ``Blocks``, at ``depth``) the check that the loaded index ``tv`` of
        ``acc``'s dim ``d`` lies in [0, n): a failure sets the error flag (nothing without ``index_checks``)."""
        if self.index_checks_on:
            b.em.emit(f"_index_check({b.place(tv, tv.frame)}, {n}, err, {self.index_check(op, acc, d, n)})", depth)

    def add_constant(self, arr: np.ndarray, dt: str) -> str:
        for n, (a, d) in self.constants.items():
            if d == dt and a.shape == arr.shape and np.array_equal(a, arr):
                return n
        n = f"const{len(self.constants)}"
        self.constants[n] = (arr, dt)
        self.plan.tensors[n] = Tensor(n, tuple(arr.shape), dt, "constant", n, arr)
        return n

    def kernel_params(self, k: Kernel) -> list[str]:
        qs = [q.storage for q in k.queues]
        fills = [n for n in self.fills.get(k.name, []) if n not in k.tensors]
        descs = [d[0] for d in self.kernel_descs.get(k.name, [])]
        return list(k.tensors) + self.kernel_extra.get(k.name, []) + fills + qs + descs

    def _zero_fills(self) -> tuple[dict[str, list[str]], set[str]]:
        """Zero-started scatter results (``Kernel.zero``: added into with atomics) that an earlier kernel zeroes
        instead of a separate fill before their kernel: ({host kernel: [buffers]}, the buffers moved). The host is
        the latest earlier kernel the scatter's kernel shares a buffer with (it runs after it on any stream, so no
        ordering is added), a Triton kernel (not a Gluon one: its shell is its stage) that does not name the
        buffer, with programs enough that each zeroes at most FILL_SHARE bytes. mgn_10k on the H100: the node
        accumulator's fill, 1.7 us and a launch, goes into the endpoint projection's kernel before it."""
        fills: dict[str, list[str]] = {}
        moved: set[str] = set()
        ks = self.plan.kernels
        written = [{n for n in kk.tensors if self.plan.tensors[n].role not in ("parameter", "constant", "input")}
                   for kk in ks]  # (what orders kernels against each other, as the runtime's ``_hazards``)
        for j, k in enumerate(ks):
            host = next((ks[h] for h in reversed(range(j)) if written[h] & written[j]), None)
            for buf in k.zero:
                t = self.plan.tensors[buf]
                nbytes = math.prod(t.shape) * ELEM_BYTES[t.dtype]
                if host is None or buf in host.tensors or self._gluon_form(host) \
                        or nbytes > FILL_SHARE * host.grid or t.view is not None:
                    continue
                fills.setdefault(host.name, []).append(buf)
                moved.add(buf)
        return fills, moved

    @staticmethod
    def _gluon_form(k: Kernel) -> str | None:
        """The Gluon form kernel ``k``'s config asks for: "chain" (one chain stage with ``ChainConfig.TMA``), "gemm"
        (one gemm stage with ``GemmConfig.GLUON``), else None (``_gluon_stage`` may still fall back from it)."""
        if len(k.stages) != 1:
            return None
        st = k.stages[0]
        if st.template == "chain" and int(st.config.get("TMA", 0)):
            return "chain"
        if st.template == "gemm" and int(st.config.get("GLUON", 0)):
            return "gemm"
        return None

    @staticmethod
    def counter_args(k: Kernel, ctr: str = "ctr") -> str:
        """The counter arguments of a call of one of ``k``'s stage functions (after its tensors): the counter
        array, and with a counter region (``Kernel.counters``) the region itself (its stages' counter indices
        count from the kernel's ticket) and its start ``cbase`` (watchdog codes count from it)."""
        return f"{ctr} + ticket, err, epoch, ticket" if k.counters else f"{ctr}, err, epoch"

    @staticmethod
    def counter_params(k: Kernel) -> str:
        """The parameters ``counter_args`` binds in a stage function of ``k``."""
        return "ctr, err, epoch, cbase" if k.counters else "ctr, err, epoch"

    def generate(self) -> str:
        out: list[str] = []
        kern_texts = []
        self.nobump: set[str] = set()  # Gluon kernels that compute with the epoch (``_gluon_reads_epoch``)
        for k in self.plan.kernels:
            stage_fns = []
            extra: set[str] = set()
            tma: set[str] = set()
            gl_body = self._gluon_stage(k)
            gl_fns = []  # a Gluon stage's partition functions (name, parameters after pid, body)
            if gl_body is not None:
                g, body, names, gl_fns = gl_body
                extra |= g.extra_tensors
                tma |= set(names)
                stage_fns.append((k.stages[0], g.fn_name(), body))
            for st in (k.stages if gl_body is None else []):
                g = StageGen(self, k, st)
                body = g.generate()
                extra |= g.extra_tensors
                tma |= g.ev.tma.tensors
                stage_fns.append((st, g.fn_name(), body))
            self.kernel_extra[k.name] = sorted(extra)
            self.kernel_tma[k.name] = sorted(tma)
            # every stage takes the kernel's parameters, constants found in any stage included
            params = self.kernel_params(k)
            if gl_body is None and self._early_form(k, stage_fns):
                self.early.add(k.name)
                unsafe = {n for n in params if not self._launch_constant(n, k.name)} | {"ctr", "epoch", "cbase"}
                # memory-bound templates stream a weight or a KV cache through a short loop: its first chunk is
                # read before the wait too (a GEMM's loop stays whole: Triton pipelines it, and its operands
                # are mostly reused from L2)
                stage_fns = [(st, fn, place_wait(body, unsafe, peel=st.template in PEELED)) for st, fn, body in stage_fns]
            deco = "@gluon.jit" if gl_body is not None else "@triton.jit"
            texts = ["\n".join([deco, f"def {fn}(pid, {fn_params}):"] + body)
                     for fn, fn_params, body in gl_fns]
            pdl = ", PDL: tl.constexpr" if k.name in self.early else ""
            texts += ["\n".join([deco, f"def {fn}(pid, {', '.join(params)}, {self.counter_params(k)}, "
                                        f"WATCHDOG: tl.constexpr{pdl}):"] + body)
                      for st, fn, body in stage_fns]
            if gl_body is not None and self._gluon_reads_epoch(stage_fns + [(None, fn, b) for fn, _, b in gl_fns]):
                self.nobump.add(k.name)
            if gl_fns:  # the kernel's parameters, known only now
                from kitsune.codegen.triton_gen.templates.gemm_tma import PARAMS_MARK

                texts = [t.replace(PARAMS_MARK, ", ".join(params)) for t in texts]
                self.gluon_kernels[k.name]["functions"] = [fn for fn, _, _ in gl_fns]
            kern_texts.append((k, params, stage_fns, texts))
        self.same_code = self._same_code(kern_texts)
        out.append(self._header())
        out.append(RUNTIME)
        if self.has_gluon:
            from kitsune.codegen.triton_gen.gluon_text import GLUON_HELPERS

            out.append(GLUON_HELPERS)
        for k, params, stage_fns, texts in kern_texts:
            out.append(f"\n# {'=' * 70}\n# kernel \"{k.name}\": grid {k.grid}, {k.warps} warps, "
                       f"{len(k.stages)} stage(s), {len(k.queues)} queue(s)")
            for q in k.queues:
                out.append(f"#   queue \"{q.name}\" (id {q.qid}): \"{q.producer}\" -> \"{q.consumer}\", tile "
                           f"{list(q.tile)} x {q.ntiles}, {q.capacity} slots, relation {q.relation}, "
                           f"{q.readers} reader(s) per tile, counters at {q.counter_base}")
            why = self.gluon_kernels.get(k.name, {}).get("fallback")
            if why:
                form = ("register form of the chain (the TMA form" if k.stages[0].template == "chain"
                        else "Triton form of the gemm (the Gluon form")
                out.append(f"#   {form} does not apply: {why})")
            if k.name in self.same_code:
                out.append(f"#   the code of kernel \"{self.same_code[k.name]}\" up to names (compiled once): "
                           "its function runs with this kernel's tensors and ticket")
                continue
            out.append("")
            for t in texts:
                out.append("\n" + t + "\n")
            out.append(self._kernel_fn(k, params, stage_fns))
        out.append(self._tables(kern_texts))
        out.append(HOST)
        return "\n".join(out)

    def is_gluon(self, k: Kernel) -> bool:
        """Kernel ``k`` is emitted as a Gluon kernel (``_gluon_stage`` took it)."""
        return "pads" in self.gluon_kernels.get(k.name, {})

    @property
    def has_gluon(self) -> bool:
        return any(self.is_gluon(k) for k in self.plan.kernels)

    def _gluon_stage(self, k: Kernel):
        """(its StageGen, the Gluon body, tensors read by TMA) when kernel ``k`` is one chain stage in the TMA form
        (``ChainConfig.TMA``) and the Gluon form takes it; None otherwise. A stage the form cannot take falls
        back to the register form: the reason is kept (``gluon_kernels``) and printed in the module."""
        form = self._gluon_form(k)
        if not self.gluon or self.profile or k.queues or form is None:
            return None
        st = k.stages[0]
        chain = form == "chain"
        from kitsune.codegen.plan import CodegenError
        from kitsune.codegen.triton_gen.gluon_text import to_gluon
        from kitsune.codegen.triton_gen.templates.chain_tma import AXES_MARK, generate_chain_tma
        from kitsune.codegen.triton_gen.templates.gemm_tma import generate_gemm_tma

        g = StageGen(self, k, st)
        fns = []
        try:
            if chain:
                body, pads, names = generate_chain_tma(g)
            else:
                (body, fns, names), pads = generate_gemm_tma(g), {}
            body = to_gluon(body, g.b.axis_lines(), AXES_MARK)
            fns = [(fn, ps, to_gluon(lines, g.b.axis_lines(), AXES_MARK)) for fn, ps, lines in fns]
        except CodegenError as e:
            self.gluon_kernels[k.name] = {"fallback": str(e)}
            self.kernel_descs.pop(k.name, None)  # (the register form makes none)
            return None
        self.gluon_kernels[k.name] = {"pads": pads}
        self.packs.update(g.packs)
        return g, body, names, fns

    def _same_code(self, kern_texts) -> dict[str, str]:
        """Kernels whose code equals an earlier kernel's up to the names of its functions and parameters (the
        layers of a stack): kernel name -> that earlier kernel's. Such a kernel emits no code; its ``KERNELS``
        entry calls the earlier kernel's function with its own tensors (positionally: parameter i plays the
        same part in both) and its own ticket, so Triton compiles the code once. Compared: the stage functions
        and the dispatcher without comments, with the kernel's own identifiers numbered in order, the
        parameters' Triton types, warps and stages."""
        first: dict[tuple, str] = {}
        same: dict[str, str] = {}
        for k, params, stage_fns, texts in kern_texts:
            names = ([fn for _, fn, _ in stage_fns] + self.gluon_kernels.get(k.name, {}).get("functions", [])
                     + list(params))
            # the dispatcher's own name only where it is defined (a stage's loop variable may be called k44 too)
            disp = self._kernel_fn(k, params, stage_fns).replace(f"def {ident(k.name)}(", "def _kernel_(", 1)
            code = "\n".join(texts + [disp])
            key = (_canonical(code, names), tuple(self._param_sig(params).values()), k.warps, k.num_stages)
            if key in first:
                same[k.name] = first[key]
            else:
                first[key] = k.name
        return same

    def _param_sig(self, params: list[str]) -> dict[str, str]:
        p = self.plan
        descs = {d[0]: d for ds in self.kernel_descs.values() for d in ds}
        sig = {}
        for n in params:
            if n in descs:  # (a placeholder: the type names its layout, known at import: ``_desc_sig``)
                sig[n] = f"tensordesc<{descs[n][5]}{list(descs[n][4])}>"
            elif n in p.tensors:
                sig[n] = SIG[p.tensors[n].dtype]
            else:
                q = next(q for q in p.queues if q.storage == n)
                sig[n] = SIG[q.dtype]
        return sig

    def _header(self) -> str:
        p = self.plan
        return (f'"""Generated by Kitsune (kitsune-opt -t triton): {len(p.kernels)} kernel(s), {len(p.queues)} '
                f'queue(s).\n\nInterface: allocate(device) -> state; launch(state, {{name: tensor}}, watchdog=0) -> '
                f'outputs;\nerror(code) -> the exception an error flag value stands for; check(state) raises '
                f'KitsuneIndexError\nwhen an index check failed, QueueTimeout when a debug watchdog fired.\n"""\n'
                "import base64\nimport io\nimport os\n\nimport numpy as np\nimport torch\nimport triton\n"
                "import triton.language as tl\nfrom triton.language.extra.cuda import gdc_launch_dependents, gdc_wait\n"
                + (GLUON_IMPORTS if self.has_gluon else ""))

    def _kernel_fn(self, k: Kernel, params: list[str], stage_fns) -> str:
        prof = ", prof, PROF_ASM: tl.constexpr" if self.profile else ""
        gluon = self.is_gluon(k)
        early = k.name in self.early
        lines = [f'@{"gluon" if gluon else "triton"}.jit(do_not_specialize=["ticket"])',
                 f"def {ident(k.name)}({', '.join(params)}, ctr, err, epoch_ptr, ticket, WATCHDOG: tl.constexpr{prof}, "
                 "PDL: tl.constexpr = 0, BUMP: tl.constexpr = 0):"]
        trigger = ["    if PDL == 1:", "        gdc_launch_dependents()"]
        tail = []  # the epoch, its bump and the fills: behind the wait in a kernel of the early form
        if early:
            lines += ["    # programmatic dependent launch (sm_90), PDL 1 / 2: this grid may be launched before the previous",
                      "    # kernel has finished; each stage waits for it (hence for all before it) just before its first",
                      "    # access of a buffer the launch writes, after the reads of what it never writes (loads before",
                      "    # waits: parameters, constants, inputs); the next kernel may be launched once every program of",
                      "    # this one has started (1) or has done its work (2)"]
            lines += trigger + ["    pid = tl.program_id(0)"]
            tail += ["    if PDL:  # (a program whose stage waited on nothing)", "        gdc_wait()"]
            tail += _NO_TICKET + ["    epoch = tl.load(epoch_ptr)"] + self._bump_by_last_id(k)
        else:
            lines += ["    # programmatic dependent launch (sm_90), PDL 1 / 2: this grid may be launched before the previous",
                      "    # kernel has finished, and waits for it (hence for all before it) before it reads or writes",
                      "    # anything; the next kernel may be launched once every program of this one has started (1) or",
                      "    # has done its work (2)"]
            lines += trigger + ["    if PDL:", "        gdc_wait()"]
            lines += self._program_id(k, gluon, stage_fns, k.name in self.nobump)
        for buf in self.fills.get(k.name, []):
            t = self.plan.tensors[buf]
            n = math.prod(t.shape)
            block = min(32 * k.warps * max(1, 16 // ELEM_BYTES[t.dtype]), pow2(n))  # (16 bytes a thread a store)
            share = -(-n // (k.grid * block)) * block  # (ceil(ceil(n / grid) / block) blocks)
            (tail if early else lines).extend(
                [f"    # the zero start of a later kernel's scatter result: each program zeroes its share",
                 f"    _zero_fill({buf}, {n}, pid, {share}, {block})"])
        if self.profile:  # a work item = this program's stage call: its start, end and SM
            lines += ["    if PROF_ASM:",
                      "        t_start = tl.inline_asm_elementwise(\"mov.u64 $0, %globaltimer;\", \"=l\", [], "
                      "dtype=tl.int64, is_pure=False, pack=1)",
                      "        sm = tl.inline_asm_elementwise(\"mov.u32 $0, %smid;\", \"=r\", [], dtype=tl.int32, "
                      "is_pure=False, pack=1).to(tl.int64)",
                      "    else:  # Triton's interpreter runs no inline asm: a logical clock, the program id as SM",
                      "        t_start = tl.atomic_add(prof, 1).to(tl.int64)",
                      "        sm = pid.to(tl.int64)"]
        own = [(st, fn) for st, fn, _ in stage_fns if st.fold is None]
        for i, (st, fn) in enumerate(own):
            call = (f"{fn}(pid, {', '.join(params)}, {self.counter_args(k).replace('epoch', '0')}, WATCHDOG, PDL)"
                    if early else f"{fn}(pid, {', '.join(params)}, {self.counter_args(k)}, WATCHDOG)")
            if gluon:  # (every CTA is a program of its one stage; a guard here costs ptxas registers: 40 B of spill)
                lines.append(f"    {call}")
                continue
            lines.append(f"    {'if' if i == 0 else 'elif'} pid < {st.hi}:")
            lines.append(f"        {call}")
            for fst, ffn, _ in stage_fns:
                if fst.fold is not None and fst.fold[0] == st.name:
                    lines += self._fold_tail(k, st, fst, ffn, params)
        lines += tail
        lines += ["    if PDL == 2:", "        gdc_launch_dependents()"]
        if self.profile:
            base = sum(kk.grid for kk in self.plan.kernels[:self.plan.kernels.index(k)])
            lines += ["    if PROF_ASM:",
                      "        t_end = tl.inline_asm_elementwise(\"mov.u64 $0, %globaltimer;\", \"=l\", [], "
                      "dtype=tl.int64, is_pure=False, pack=1)",
                      "    else:",
                      "        t_end = tl.atomic_add(prof, 1).to(tl.int64)",
                      f"    row = prof + 1 + 4 * ({base} + pid)",
                      "    tl.store(row, t_start)",
                      "    tl.store(row + 1, t_end)",
                      "    tl.store(row + 2, sm)"]
        return "\n".join(lines) + "\n"

    def _early_form(self, k: Kernel, stage_fns) -> bool:
        """Kernel ``k``'s stages wait for the kernel before (PDL) only before their first access of something
        the launch writes (``early_loads``): a Triton kernel whose programs wait on no other program (no ticket,
        no queue, no temporal wait: those read counters and the epoch from the start) and has no folded combine
        (its tail runs in the shell). Counters a stage only moves after its work (a split-K tile's arrivals,
        counted modulo the split) are touched behind the wait like any buffer the launch writes; a stage that
        reads the epoch (passed as 0 in this form) is not of it."""
        return (not self._waits(stage_fns) and not k.queues
                and not any(st.fold is not None for st, _, _ in stage_fns)
                and not any(re.search(r"\bepoch\b", code_part(ln)) for _, _, body in stage_fns for ln in body))

    def _launch_constant(self, name: str, kernel: str | None = None) -> bool:
        """No kernel of the launch writes tensor ``name`` (the launch's first kernel waits for whatever ran before
        it): a parameter, a constant or an input, not a view of another buffer, and not mutated, or mutated in
        place by another kernel than ``kernel`` with its readers reading the update forwarded (``Plan.forwarded``:
        they never use a row the launch writes)."""
        t = self.plan.tensors.get(name)
        if t is None or t.role not in ("parameter", "constant", "input") or t.view is not None:
            return False
        if name in self.plan.forwarded:
            return kernel is not None and self.plan.forwarded[name] != kernel
        return name not in self._mutated

    @functools.cached_property
    def _mutated(self) -> frozenset[str]:
        """The buffers the launch updates in place (a KV cache)."""
        return frozenset(buf for _, buf in self.plan.mutates)

    @classmethod
    def _program_id(cls, k: Kernel, gluon: bool, stage_fns, nobump: bool = False) -> list[str]:
        """The shell's lines that read the epoch and give the program its id (and move the epoch on under
        ``BUMP``, unless ``nobump``: a Gluon kernel that computes with it), for a kernel not of the early form
        (which does this after its stages, ``_kernel_fn``)."""
        if gluon:
            bump = [] if nobump else cls._bump_by_last_id(k, "gl.program_id(0)")
            return ["    # one stage that waits on nothing: the CTA's own id, no ticket taken",
                    "    epoch = tl.load(epoch_ptr)",
                    f"    pid = gl.program_id(0) + {k.stages[0].lo}"] + bump
        if not cls._waits(stage_fns):
            return _NO_TICKET + ["    epoch = tl.load(epoch_ptr)", "    pid = tl.program_id(0)"] + cls._bump_by_last_id(k)
        return ["    # program ids are handed out in the order CTAs start (a ticket counter, epoch based), so a",
                "    # program waits only on programs that already run: no deadlock whatever the launch order",
                "    # (the ticket counter's index is an argument: kernels with the same code share one function)",
                "    epoch = tl.load(epoch_ptr)",
                f"    pid = tl.atomic_add(ctr + ticket, 1) - epoch * {k.grid}",
                "    if BUMP:  # the launch's last kernel (or each kernel, on an epoch of its own): the program",
                "        # with the last ticket moves the epoch on (every program of this kernel read it before",
                "        # taking its ticket; any other kernel reading it has finished): no separate kernel for it",
                f"        if pid == {k.grid - 1}:",
                "            tl.store(epoch_ptr, epoch + 1)"]

    @staticmethod
    def _bump_by_last_id(k: Kernel, cta: str = "pid") -> list[str]:
        """Under ``BUMP``, the program with the last CTA id (``cta``: its expression in the shell) moves the epoch
        on (a kernel that takes no tickets)."""
        return ["    if BUMP:  # the launch's last kernel (or each kernel, on an epoch of its own): one program",
                "        # moves the epoch on (no stage of this kernel reads it; any other kernel reading it has",
                "        # finished)",
                f"        if {cta} == {k.grid - 1}:",
                "            tl.store(epoch_ptr, epoch + 1)"]

    @staticmethod
    def _gluon_reads_epoch(stage_fns) -> bool:
        """Whether a Gluon kernel's stage functions compute with the epoch (not only pass it on: Gluon calls no
        Triton helper that could): such a kernel cannot move it on under ``BUMP`` (``"nobump"`` in its
        ``KERNELS`` entry; the host's increment then does). None of the Gluon templates does."""
        use = re.compile(r"\bepoch\s*[-+*/%<>=!]|[-+*/%<>=]\s*epoch\b")
        return any(use.search(code_part(ln)) for _, _, body in stage_fns for ln in body)

    @staticmethod
    def _waits(stage_fns) -> bool:
        """Whether a program of the kernel may wait on another of it (a queue, a temporal producer's counter: a
        spin on an epoch-based counter), so that its program ids must come from a ticket in start order. A
        folded combine's last arrival does not wait (``_last_of_group``)."""
        return any(_WAITS.search("\n".join(body)) for _, _, body in stage_fns)

    @classmethod
    def _fold_tail(cls, kernel: Kernel, st: Stage, fst: Stage, fn: str, params: list[str]) -> list[str]:
        """After a partial's tiles: per tile, count in on its group's counter; the last arrival of a group runs
        the folded combine's tiles of that group (``Stage.fold``)."""
        _, parts, k = fst.fold
        if st.split != 1:
            raise CodegenError(f"stage \"{fst.name}\" is folded into \"{st.name}\", which is split across "
                               f"programs (SPLIT={st.split}); a folded combine needs one program per partial tile")
        items = -(-st.ntiles // st.programs)
        out = [f"        # \"{fst.name}\" folded: the program storing the last of a group's {parts} tiles runs the "
               f"group's {k} tile(s)"]
        ind = "        "
        if items > 1:
            out.append(f"{ind}for it in range(0, {items}):")
            ind += "    "
            out.append(f"{ind}t = pid - {st.lo} + it * {st.programs}")
            if items * st.programs > st.ntiles:
                out.append(f"{ind}if t < {st.ntiles}:")
                ind += "    "
        else:
            out.append(f"{ind}t = pid - {st.lo}")
        out.append(f"{ind}if _last_of_group(ctr, {fst.fold_base} + t // {parts}, {parts}):")
        if k == 1:
            out.append(f"{ind}    {fn}(t // {parts}, {', '.join(params)}, {cls.counter_args(kernel)}, WATCHDOG)")
        else:
            out.append(f"{ind}    for j in range(0, {k}):")
            out.append(f"{ind}        {fn}(t // {parts} * {k} + j, {', '.join(params)}, "
                       f"{cls.counter_args(kernel)}, WATCHDOG)")
        return out

    def _tables(self, kern_texts) -> str:
        p = self.plan
        lines = ["", "DTYPES = {" + ", ".join(f'"{k}": {v}' for k, v in TORCH.items()) + "}"]
        lines.append("TENSORS = {")
        for n, t in p.tensors.items():
            lines.append(f"    {n!r}: ({tuple(t.shape)!r}, {t.dtype!r}, {t.role!r}),")
        lines.append("}")
        lines.append("LABELS = {" + ", ".join(f"{n!r}: {(t.label or n)!r}" for n, t in p.tensors.items()) + "}")
        lines.append("ORDERS = {" + ", ".join(f"{n!r}: {t.order!r}" for n, t in p.tensors.items() if t.order)
                     + "}  # storage orders (kitsune.codegen.layouts): dims outermost first")
        lines.append("PACKS = {" + ", ".join(f"{n!r}: {v!r}" for n, v in self.packs.items())
                     + "}  # parameters uploaded packed in (rows, cols) blocks (``packed``; templates/gemm_tma.py)")
        lines.append("VIEWS = {" + ", ".join(f"{n!r}: {t.view[:3]!r}" for n, t in p.tensors.items() if t.view)
                     + "}  # slices of another buffer (kitsune.codegen.concat_in_place, row_pitch): (buffer, dim, offset)")
        lines.append(f"ARGS = {p.args!r}")
        lines.append(f"OUTPUTS = {p.outputs!r}")
        lines.append(f"MUTATES = {p.mutates!r}  # (output, buffer argument): the buffer holds that output after a launch")
        lines.append("QUEUES = [" + ", ".join(f"({q.name!r}, {q.kernel!r}, {q.capacity}, {q.ntiles})"
                                             for q in p.queues) + "]")
        lines.append(f"INDEX_CODE = {INDEX_CODE}  # err codes from here on: an index check failed")
        lines.append("INDEX_CHECKS = [" + ", ".join(repr(c) for c in self.index_checks) + "]")
        lines.append(f"WAIT_CODE = {WAIT_CODE}  # err codes from here to INDEX_CODE: a temporal stage's watchdog")
        lines.append("WAITS = [" + ", ".join(repr(w) for w in self.waits) + "]")
        lines.append(f"WAIT_CODES = {self.wait_codes!r}  # err code - WAIT_CODE -> entry of WAITS")
        qcodes = {next(k.ticket for k in p.kernels if k.name == q.kernel) + q.counter_base: q.qid for q in p.queues}
        lines.append(f"QUEUE_CODES = {qcodes!r}  # err code - 1 (its first counter) -> entry of QUEUES")
        lines.append("QUEUE_STORAGE = {" + ", ".join(f"{q.storage!r}: ({q.storage_elems}, {q.dtype!r})"
                                                    for q in p.queues) + "}")
        lines.append(f"N_COUNTERS = {p.counters}  # fold groups, kernels' counter regions (ticket first), tickets")
        prof, base = [], 0
        for k in p.kernels:  # (kernel, first row of the profile buffer, [(stage, first pid, end pid)])
            prof.append((k.name, base, [(st.name, st.lo, st.hi) for st in k.stages]))
            base += k.grid
        lines.append(f"PROFILE = {prof!r}" if self.profile else "PROFILE = []")
        lines.append(f"PROFILE_ITEMS = {base if self.profile else 0}  # work items recorded per launch")
        lines.append("CONSTANTS = {")
        for n, (arr, dt) in self.constants.items():
            b = io.BytesIO()
            np.save(b, np.ascontiguousarray(arr))
            lines.append(f"    {n!r}: {base64.b64encode(b.getvalue()).decode()!r},")
        lines.append("}")
        lines.append("KERNELS = [")
        fn_params = {k.name: params for k, params, _, _ in kern_texts}
        for k, params, _, _ in kern_texts:
            fn = self.same_code.get(k.name, k.name)
            sig = self._param_sig(fn_params[fn])  # keyed by the function's parameters (the same types as ours)
            sig.update({"ctr": "*i32", "err": "*i32", "epoch_ptr": "*i32", "ticket": "i32", "WATCHDOG": "constexpr"})
            cx = {"WATCHDOG": 0}
            if self.profile:
                sig.update({"prof": "*i64", "PROF_ASM": "constexpr"})
                cx["PROF_ASM"] = True
            sig["PDL"] = "constexpr"
            cx["PDL"] = DEFAULT_PDL  # what an sm_90 GPU runs without a tuned setting (the AOT checks compile it)
            cxs = "{" + ", ".join(f'"{n}": {v!r}' for n, v in cx.items()) + "}"
            own = self.kernel_descs.get(k.name, [])
            # (named as the parameters of the function it runs, made of its own tensors)
            descs = [(f[0],) + d[1:] for f, d in zip(self.kernel_descs.get(fn, []), own)]
            tensors = [n for n in params if n not in {d[0] for d in own}]
            sig_text = f"_desc_sig({sig!r}, {descs!r})" if descs else repr(sig)
            lines.append(f"    {{\"name\": \"{k.name}\", \"fn\": {ident(fn)}, \"grid\": {k.grid}, "
                         f"\"ticket\": {k.ticket}, "
                         f"\"num_warps\": {k.warps}, \"num_stages\": {k.num_stages}, \"tensors\": {tensors!r}, "
                         f"\"zero\": {[n for n in k.zero if n not in self.filled]!r}, "
                         f"\"tma\": {self.kernel_tma.get(k.name, [])!r}, "
                         f"\"tma_pad\": {self.gluon_kernels.get(k.name, {}).get('pads', {})!r}, "
                         f"\"descs\": {descs!r}, "
                         f"\"signature\": {sig_text}, "
                         f"\"constexprs\": {cxs}" + (", \"profile\": True" if self.profile else "")
                         + (", \"gluon\": True" if self.is_gluon(k) else "")
                         + (", \"nobump\": True" if k.name in self.nobump else "") + "},")
        lines.append("]")
        return "\n".join(lines) + "\n"


def _canonical(code: str, names: list[str]) -> str:
    """``code`` without comments (whole lines, and a line's tail after a ``#`` outside string literals: a temporal
    stage's or a queue's line names its stage), ``names`` (identifiers) replaced by their position: equal for two
    kernels that differ only in the names of their functions and parameters."""
    import re

    pos = {n: f"_N{i}_" for i, n in enumerate(dict.fromkeys(names))}
    pat = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(pos, key=len, reverse=True)) + r")\b")
    lines = [code_part(ln) for ln in code.splitlines() if not ln.lstrip().startswith("#")]
    return pat.sub(lambda m: pos[m.group(1)], "\n".join(lines))


def generate_triton(module: ModuleOp, capacity: str = "ir", tf32: bool = False, profile: bool = False,
                    index_checks: bool = True, gluon: bool | None = None) -> str:
    """The Triton module for @main's gpu_queue.program (see the module docstring).

    ``gluon``: whether a chain stage in the TMA form may become a Gluon kernel (default: unless Triton's
    interpreter is on, or KITSUNE_GLUON=0).

    ``profile=True``: every kernel takes a ``prof`` buffer (allocated by ``allocate``) into which each work
    item records its start, end and SM; ``read_profile(state)`` returns them after a launch.
    ``index_checks=False``: no index checks (an out-of-range index still reads 0 / drops its write, silently);
    for measuring what the checks cost."""
    plan = build_plan(module, capacity, layouts=True)
    return TritonGen(plan, tf32, profile, index_checks, gluon=gluon).generate()


def emit_triton(module: ModuleOp, output: IO[str]) -> None:
    """kitsune-opt -t triton."""
    output.write(generate_triton(module))


__all__ = ["TritonGen", "generate_triton", "emit_triton"]
