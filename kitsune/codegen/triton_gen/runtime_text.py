"""The Triton helper source pasted into every generated module, as text.

``RUNTIME`` (after the imports, before the stage functions): the error types, the debug index check
(``_index_check``), the combine functions of ``tl.reduce``, the GPU fence, ``_scatter_add`` and ``_dot_lp``
(with their CPU-interpreter fallbacks) and the queue protocol (``_acquire``, ``_pop_wait``, ``_pop_free``,
``_push_wait``, ``_push_done``). ``HOST`` (at the end, after the tables ``TritonGen`` writes): ``allocate``,
``launch``, ``residency``, ``read_profile`` and ``check``, the module's interface to
``kitsune.runtime``.

``INDEX_CODE``: error codes below it name a queue whose watchdog fired, from it on a failed index check.
"""

from kitsune.codegen.plan import WAIT_CODE  # err codes from here to INDEX_CODE: a temporal wait's watchdog

INDEX_CODE = 1 << 20  # err codes below are queue / stage watchdogs, from here on failed index checks

RUNTIME = '''
class QueueTimeout(RuntimeError):
    """A spin-wait gave up (debug watchdog): the named queue never delivered."""


class KitsuneIndexError(IndexError):
    """An index tensor held a value outside the dimension it indexes (checked unless built with
    index_checks=False; the read gave 0, the write was dropped)."""


@triton.jit
def _index_check(v, n, err, code):
    bad = (v < 0) | (v >= n)
    tl.atomic_max(err + bad.to(tl.int32) * 0, code, mask=bad)


@triton.jit
def _mul_combine(a, b):
    return a * b


_INTERPRETED = tl.constexpr(os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"))


@triton.jit
def _fence_gpu():
    # fence.acq_rel.gpu in every thread (CUDA's __threadfence): a CTA barrier followed by one thread's
    # release does not wait for the other threads' outstanding stores and reductions to be performed
    if not _INTERPRETED:
        tl.inline_asm_elementwise("fence.acq_rel.gpu; mov.u32 $0, 0;", "=r", [], dtype=tl.int32, is_pure=False,
                                  pack=1)


@triton.jit
def _zero_fill(base, n, pid, SHARE: tl.constexpr, BLOCK: tl.constexpr):
    # base[0:n] = 0, program ``pid`` taking [pid * SHARE, (pid + 1) * SHARE), BLOCK at a time (the zero start of a
    # later kernel's scatter result, set by the kernel before it)
    offs = pid * SHARE + tl.arange(0, BLOCK)
    zero = tl.zeros([BLOCK], base.dtype.element_ty)
    for s in tl.static_range(0, SHARE, BLOCK):
        o = offs + s
        tl.store(base + o, zero, mask=o < n)


@triton.jit
def _scatter_add(base, off, val, mask):
    # val added at base + off where mask ([rows, cols] blocks), repeated targets accumulating. Triton's CPU
    # interpreter (3.6) has no bf16 / fp16 atomics: there the rows are added one after another (programs run one
    # at a time, so a read-modify-write per row is exact, and a row's targets are distinct columns)
    if _INTERPRETED:
        rows = tl.arange(0, off.shape[0])
        for jj in range(off.shape[0]):
            sel = (rows == jj)[:, None] & mask
            o = tl.sum(tl.where(sel, off, 0), axis=0)
            v = tl.sum(tl.where(sel, val.to(tl.float32), 0.0), axis=0)
            m = tl.max(sel.to(tl.int32), axis=0) > 0
            old = tl.load(base + o, mask=m, other=0.0).to(tl.float32)
            tl.store(base + o, (old + v).to(val.dtype), mask=m)
    else:
        tl.atomic_add(base + off, val, mask=mask, sem="relaxed")


@triton.jit
def _dot_lp(a, b, acc):
    # bf16 / fp16 operands, fp32 accumulation. Triton's CPU interpreter (3.6) gets low-precision dots wrong,
    # so there the operands are widened first (exact: a product of two bf16 values fits in fp32)
    if _INTERPRETED:
        return tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
    else:
        return tl.dot(a, b, acc)


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _min_combine(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _acquire(ptr, target, err, code, WATCHDOG: tl.constexpr):
    v = tl.atomic_add(ptr, 0, sem="acquire", scope="gpu")
    n = 0
    while v < target:
        n += 1
        if WATCHDOG > 0 and n > WATCHDOG:
            tl.atomic_max(err, code + 1)
            v = target
        else:
            v = tl.atomic_add(ptr, 0, sem="acquire", scope="gpu")


@triton.jit
def _backoff():
    # ~0.25 us of sleep between two polls of a spin-wait (nothing under the CPU interpreter)
    if not _INTERPRETED:
        tl.inline_asm_elementwise("nanosleep.u32 256; mov.u32 $0, 0;", "=r", [], dtype=tl.int32, is_pure=False,
                                  pack=1)


@triton.jit
def _await_stages(ptrs, need, live, err, code, WATCHDOG: tl.constexpr):
    # a temporal consumer: wait until every counter ptrs[i] (a producer stage's finished programs, lanes where
    # live) reaches need[i]. Counters and targets grow with the epoch and wrap around int32: compared by their
    # difference. Spins on L2 reads (ld.relaxed), then one fence makes it an acquire; then the whole CTA reads
    v = tl.load(ptrs, mask=live, other=0, volatile=True)
    late = tl.sum(((v - need) < 0).to(tl.int32) * live.to(tl.int32), 0)
    n = 0
    while late > 0:
        n += 1
        if WATCHDOG > 0 and n > WATCHDOG:
            tl.atomic_max(err, code)
            late = 0
        else:
            _backoff()  # thousands of waiting programs would otherwise keep the counter's L2 slice busy
            v = tl.load(ptrs, mask=live, other=0, volatile=True)
            late = tl.sum(((v - need) < 0).to(tl.int32) * live.to(tl.int32), 0)
    _fence_gpu()
    tl.debug_barrier()


@triton.jit
def _last_of_group(ctr, idx, n):
    # a folded combine: this program's partial tile of a group of n is stored (each thread's fence, barrier);
    # one acquire-release increment of the group's counter; the last of the n arrivals goes on to combine the
    # group (its fence: the other programs' stores are visible to every thread) and resets the counter for the
    # next launch (no one reads it before this kernel ends: the combine's loads need not wait for it)
    _fence_gpu()
    tl.debug_barrier()
    arrived = tl.atomic_add(ctr + idx, 1, sem="acq_rel", scope="gpu")
    last = arrived == n - 1
    if last:
        _fence_gpu()
        tl.store(ctr + idx, 0)
    return last


@triton.jit
def _stage_done(ctr, idx):
    # a temporal producer's program has done all its work items: its stores are performed (each thread's
    # fence, barrier), then one release increment of the stage's counter
    _fence_gpu()
    tl.debug_barrier()
    tl.atomic_add(ctr + idx, 1, sem="release", scope="gpu")


@triton.jit
def _pop_wait(ctr, base, j0, n: tl.constexpr, cap: tl.constexpr, nt: tl.constexpr, epoch, err, code,
              WATCHDOG: tl.constexpr):
    # wait until tiles j0 .. j0+n-1 are in their slots (acquire), then let the whole CTA read them
    for x in range(0, n):
        j = j0 + x
        s = j % cap
        uses = (nt - s + cap - 1) // cap
        _acquire(ctr + base + s, epoch * uses + j // cap + 1, err, code, WATCHDOG)
    tl.debug_barrier()


@triton.jit
def _pop_free(ctr, base, j0, n: tl.constexpr, cap: tl.constexpr):
    # every thread is done reading the tiles: give their slots back (release)
    tl.debug_barrier()
    for x in range(0, n):
        s = (j0 + x) % cap
        tl.atomic_add(ctr + base + cap + s, 1, sem="release", scope="gpu")


@triton.jit
def _push_wait(ctr, base, j, cap: tl.constexpr, nt: tl.constexpr, readers: tl.constexpr, epoch, err, code,
               WATCHDOG: tl.constexpr):
    # wait until every reader freed the slot's previous tile
    s = j % cap
    uses = (nt - s + cap - 1) // cap
    _acquire(ctr + base + cap + s, (epoch * uses + j // cap) * readers, err, code, WATCHDOG)
    tl.debug_barrier()


@triton.jit
def _push_done(ctr, base, j, cap: tl.constexpr):
    # all stores of the tile are done (each thread's fence, barrier), then publish it (release)
    _fence_gpu()
    tl.debug_barrier()
    tl.atomic_add(ctr + base + j % cap, 1, sem="release", scope="gpu")


_TL_DTYPE = {"bf16": "bf16", "f16": "fp16", "f32": "fp32"}


_TMA_LAYOUTS = {}  # (block, dtype) -> layout: made once, not at every launch of a kernel with host descriptors


def _tma_layout(block, dt):
    """The shared-memory layout of a TMA block (what the kernel's buffers for it use)."""
    key = (tuple(block), dt)
    if key not in _TMA_LAYOUTS:
        from triton.experimental.gluon import language as gl

        _TMA_LAYOUTS[key] = gl.NVMMASharedLayout.get_default_for(
            list(block), {"bf16": gl.bfloat16, "f16": gl.float16, "f32": gl.float32}[dt])
    return _TMA_LAYOUTS[key]


def _desc_sig(sig, descs):
    """A kernel's signature with the types of the TMA descriptors the host makes for it (``descs``: parameter,
    tensor, shape, strides, block, dtype): the type names the layout."""
    for name, _, _, _, block, dt in descs:
        sig[name] = f"tensordesc<{_TL_DTYPE[dt]}{list(block)},{_tma_layout(block, dt)!r}>"
    return sig
'''

HOST = '''

def _constant(spec):
    shape, dtype, data = spec
    arr = np.load(io.BytesIO(base64.b64decode(data)))
    return torch.from_numpy(arr).reshape(shape).to(dtype)


def stored(t, order):
    """``t`` (logical shape) laid out in storage order ``order`` (dims outermost first), as a view of its shape."""
    return t.permute(*order).contiguous().permute(*[order.index(d) for d in range(len(order))])


def packed(t, rows, cols):
    """Weight ``t`` [n, k] packed as a Gluon gemm reads it (PACKS): zero-padded to whole [rows, cols] blocks, block
    (i, j) (rows i * rows .., columns j * cols ..) stored as rows (i * KW + j) * rows .. of a [-1, cols] matrix,
    KW = ceil(k / cols): one contiguous run per block, the blocks of a row band one after another."""
    n, k = t.shape
    pn, pk = -(-n // rows) * rows, -(-k // cols) * cols
    if (pn, pk) != (n, k):
        t = torch.nn.functional.pad(t, (0, pk - k, 0, pn - n))
    return t.reshape(pn // rows, rows, pk // cols, cols).permute(0, 2, 1, 3).contiguous().view(-1, cols)


def _bind_views(env):
    """Each view buffer (VIEWS) as its slice of the buffer it lives in (that buffer may be one a call passes)."""
    for name, (base, dim, offset) in VIEWS.items():
        env[name] = env[base].narrow(dim, offset, TENSORS[name][0][dim])


def allocate(device):
    """Buffers, queue storage, counters, the epoch and the error flag: allocated once, reused by every launch."""
    device = torch.device(device)
    bufs = {}
    for name, (shape, dt, role) in TENSORS.items():
        if role == "buffer" and name in VIEWS:
            continue  # (a slice of another buffer: ``_bind_views``)
        if role == "buffer":
            bufs[name] = torch.empty(shape, dtype=DTYPES[dt], device=device)
            if name in ORDERS:
                bufs[name] = stored(bufs[name], ORDERS[name])
        elif role == "workspace":  # split-K partial sums: one slice per part, written before it is read
            bufs[name] = torch.zeros(shape, dtype=DTYPES[dt], device=device)
        elif role == "constant":
            bufs[name] = _constant((shape, DTYPES[dt], CONSTANTS[name])).to(device)
    for name, (elems, dt) in QUEUE_STORAGE.items():
        bufs[name] = torch.empty(max(elems, 1), dtype=DTYPES[dt], device=device)
    _bind_views(bufs)
    return {"buffers": bufs, "counters": torch.zeros(max(N_COUNTERS, 1), dtype=torch.int32, device=device),
            "epoch": torch.zeros(max(len(KERNELS), 1), dtype=torch.int32, device=device),  # (``_own_epochs``)
            "err": torch.zeros(1, dtype=torch.int32, device=device), "device": device, "pdl": _pdl(device),
            "pdl_capable": _pdl_capable(device),
            **({"prof": torch.zeros(1 + 4 * PROFILE_ITEMS, dtype=torch.int64, device=device)} if PROFILE else {})}


def _pdl_capable(device):
    """The device has programmatic dependent launch (CUDA sm_90+: griddepcontrol)."""
    return device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 9


def _pdl(device):
    """Programmatic dependent launch on this device: KITSUNE_PDL where set, else 0 (off) until the caller sets the
    program's own (kitsune.compile: the measured setting, ``kitsune-tune --launch``). 2: the next kernel may launch
    once every program of this one has done its work; 1: once each has started. Either way a kernel's loads of
    what the launch never writes go before its wait (bench/kernels/NOTES.md sections 8 and 27)."""
    if not _pdl_capable(device):
        return 0
    return int(os.environ.get("KITSUNE_PDL", "0") or 0)


def _pdl_args(state):
    """The launch keywords of programmatic dependent launch for ``state`` (none when it is off)."""
    return {"PDL": int(state["pdl"]), "launch_pdl": True} if state.get("pdl") else {}


def _tma_scratch(size, alignment, stream):
    """Triton's global scratch of a kernel that makes tensor descriptors on the device (128 bytes a program)."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


def _tma_prepare(env, names, pads=None):
    """Before a kernel that reads ``names`` through TMA descriptors: Triton needs an allocator for the
    descriptors' scratch (ours, unless the caller set one), and a descriptor's base must be 16-byte aligned
    (a tensor that is not, such as a view into a larger one, is read from an aligned copy). ``pads``: tensors
    whose rows the kernel reads at a wider, 16-byte aligned pitch (name -> pitch): a zero-padded copy."""
    from triton.runtime import _allocation

    if isinstance(_allocation._allocator.get(), _allocation.NullAllocator):
        triton.set_allocator(_tma_scratch)
    for n in names:
        if pads and n in pads:
            t = env[n]
            env[n] = torch.nn.functional.pad(t, (0, pads[n] - t.shape[-1])).contiguous()
        elif env[n].data_ptr() % 16:
            env[n] = env[n].clone()


def _kernel_args(env, k):
    """Kernel ``k``'s positional arguments before the counters: its tensors from ``env``, then the TMA descriptors
    the host makes for it (``descs``; made at each call, so a CUDA graph bakes those of its capture)."""
    args = [env[n] for n in k["tensors"]]
    if k.get("descs"):
        from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

        args += [TensorDescriptor(env[t], list(shape), list(strides), list(block), _tma_layout(block, dt))
                 for _, t, shape, strides, block, dt in k["descs"]]
    return args


def _prof(state, k):
    """The profile buffer and PROF_ASM (keywords) (globaltimer / smid on a GPU, a logical clock in the interpreter)."""
    if not k.get("profile"):
        return {}
    return {"prof": state["prof"], "PROF_ASM": state["device"].type == "cuda"}


def read_profile(state):
    """The last launch's work items: [(kernel, stage, pid, start, end, sm)] (start / end in ns from
    %globaltimer on a GPU, ticks of a logical clock under the interpreter)."""
    rows = state["prof"][1:].view(-1, 4).cpu().tolist()
    out = []
    for kname, base, stages in PROFILE:
        for stage, lo, hi in stages:
            for pid in range(lo, hi):
                t0, t1, sm, _ = rows[base + pid]
                out.append((kname, stage, pid, t0, t1, sm))
    return out


def _hazards(k):
    """The tensors that order kernel ``k`` against the others: all it names but the parameters, constants and
    graph inputs, which no kernel writes (an input mutated in place counts)."""
    mutated = {a for _, a in MUTATES}
    # (views of one buffer are disjoint slices of a result no kernel reads: kitsune.codegen.concat_in_place)
    return {n for n in k["tensors"]
            if n in mutated or TENSORS.get(n, (None, None, "buffer"))[2] not in ("parameter", "constant", "input")}


def _branches(limit):
    """Independent kernels as branches (at most ``limit`` streams): per kernel, (its stream slot, the earlier
    kernels on other slots it waits for). A kernel depends on every earlier one it shares a buffer with; it
    continues the slot whose last kernel is its latest dependence, else opens a slot (the least recently used
    one past ``limit``). Slot 0 is the caller's stream. DLRM's bottom MLP runs beside its embedding bags,
    Inception's branches beside each other."""
    haz = [_hazards(k) for k in KERNELS]
    slot_of, last, out = [], [], []
    for j in range(len(KERNELS)):
        deps = [i for i in range(j) if haz[i] & haz[j]]
        slot = next((slot_of[i] for i in reversed(deps) if last[slot_of[i]] == i), None)
        if slot is None:
            if len(last) < limit:
                slot = len(last)
                last.append(-1)
            else:
                slot = min(range(len(last)), key=lambda s: last[s])
        slot_of.append(slot)
        last[slot] = j
        out.append((slot, [i for i in deps if slot_of[i] != slot]))
    return out


def _follows(plan, j, i):
    """Kernel ``j`` of a branch plan runs right after kernel ``i`` (an earlier one): on the same stream, or
    waiting on it."""
    return plan[j][0] == plan[i][0] or i in plan[j][1]


def _chain_lengths(plan):
    """Per kernel of a branch plan, the most kernels on a path of dependences from it to the end, itself
    included (the kernels that ``_follows`` it are its successors)."""
    n = len(plan)
    length = [1] * n
    for j in reversed(range(n)):
        for i in range(j + 1, n):
            if _follows(plan, i, j):
                length[j] = max(length[j], 1 + length[i])
    return length


def _priorities(plan):
    """Per stream slot, its stream priority (0: the caller's; lower: dispatched sooner when both have CTAs
    waiting): slots ranked by the chain that starts at their first kernel, the longest first. The critical
    path goes first: DLRM's three-kernel bottom MLP takes SMs from the embedding bags' grid as it frees them
    instead of waiting until all 1024 bag CTAs have been dispatched (KITSUNE_BRANCH_PRIORITY=0: all equal)."""
    length = _chain_lengths(plan)
    head = {}
    for j, (slot, _) in enumerate(plan):
        head.setdefault(slot, length[j])
    if os.environ.get("KITSUNE_BRANCH_PRIORITY", "1") in ("", "0"):
        return [0] * len(head)
    levels = sorted(set(head.values()))
    return [-levels.index(head[s]) for s in range(len(head))]


def _streams(state):
    """The streams of ``state`` per slot for concurrent branches (CUDA, KITSUNE_BRANCHES slots in all, default
    4; 1 or programmatic dependent launch: one stream), made once. A slot of priority 0 runs on the caller's
    stream when it is slot 0, any other on a stream of its own made with its priority (``_priorities``)."""
    if "branches" not in state:
        n = int(os.environ.get("KITSUNE_BRANCHES", "4"))
        plan = _branches(n) if state["device"].type == "cuda" and not state.get("pdl") and n > 1 else None
        if plan is not None and max(s for s, _ in plan) == 0:
            plan = None
        state["branches"] = plan
        if plan is not None:
            state["streams"] = [None if s == 0 and p == 0 else torch.cuda.Stream(state["device"], priority=p)
                                for s, p in enumerate(_priorities(plan))]
    return state["branches"], state.get("streams")


def _ordered_after(plan):
    """Per kernel of a branch plan, the earlier kernels it runs after: those on its own stream, those it waits
    for, and everything they run after."""
    after = []
    for j in range(len(plan)):
        a = set()
        for i in range(j):
            if _follows(plan, j, i):
                a |= {i} | after[i]
        after.append(a)
    return after


def _last_after_all(plan):
    """The last kernel runs after every other one (one stream, or its waits reach every branch): it may move
    the epoch on itself (``BUMP``)."""
    return plan is None or len(_ordered_after(plan)[-1]) == len(plan) - 1


def _bump_in_kernel(state, plan):
    """Whether the launch's last kernel bumps the epoch (a kernel that runs after all the others, not a Gluon
    kernel that computes with the epoch; KITSUNE_EPOCH_KERNEL=1: a separate increment instead), else the host's
    ``ep.add_(1)`` (a kernel of its own: ~2-3 us of a CUDA graph's replay on the H100)."""
    if "bump" not in state:
        state["bump"] = bool(KERNELS) and not KERNELS[-1].get("nobump") and _last_after_all(plan) \
            and os.environ.get("KITSUNE_EPOCH_KERNEL", "0") in ("", "0")
    return state["bump"]


def _own_epochs(state, plan):
    """Per kernel its own epoch slot (``state["epoch"][j]``), moved on by its own last ticket, when the launch's
    last kernel cannot move a shared one (concurrent branches whose last kernel does not run after all the
    others: Inception's 3x3 and 5x5 branches) and every kernel takes tickets: then no separate increment
    (a kernel, ~2.7 us at the end of inception_b8's launch on the H100) and no join is needed. Every epoch a
    kernel reads (its tickets, its queues' and waits' counters) is its own. None: one shared epoch."""
    if "epochs" not in state:
        own = plan is not None and not _last_after_all(plan) and bool(KERNELS) \
            and not any(k.get("nobump") for k in KERNELS) and os.environ.get("KITSUNE_EPOCH_KERNEL", "0") in ("", "0")
        state["epochs"] = [state["epoch"][j:j + 1] for j in range(len(KERNELS))] if own else None
    return state["epochs"]


def launch(state, tensors, watchdog=0):
    """Launch every kernel in order (independent ones on side streams, ``_branches``, joined before the
    return); returns the outputs (internal buffers)."""
    env = dict(state["buffers"])
    env.update(tensors)
    _bind_views(env)
    ctr, err, ep = state["counters"], state["err"], state["epoch"]
    pdl = _pdl_args(state)
    # (the launch's first kernel starts after whatever ran before it: a kernel reads a launch's inputs before its
    # wait, and the previous launch's last kernel may have written them)
    pdl_first = {n: v for n, v in pdl.items() if n != "launch_pdl"}
    plan, own = _streams(state)
    bump = _bump_in_kernel(state, plan)
    epochs = _own_epochs(state, plan)
    if plan is not None:
        main = torch.cuda.current_stream(state["device"])
        streams = [main if s is None else s for s in own]
        side = [s for s in own if s is not None]
        start = main.record_event()
        for s in side:
            s.wait_event(start)
        done = [None] * len(KERNELS)
    for j, k in enumerate(KERNELS):
        pk = _prof(state, k)
        if plan is not None:
            slot, deps = plan[j]
            ctx = torch.cuda.stream(streams[slot])
            ctx.__enter__()
            for i in deps:
                streams[slot].wait_event(done[i])
        for n in k["zero"]:  # scatter results: the kernel adds into them
            env[n].zero_()
        if k["tma"]:
            _tma_prepare(env, k["tma"], k.get("tma_pad"))
        last = {"BUMP": 1} if epochs or bump and j == len(KERNELS) - 1 else {}
        k["fn"][(k["grid"],)](*_kernel_args(env, k), ctr, err, epochs[j] if epochs else ep, k["ticket"],
                              WATCHDOG=int(watchdog),
                              num_warps=k["num_warps"], num_stages=k["num_stages"], **pk,
                              **(pdl if j else pdl_first), **last)
        if plan is not None:
            done[j] = streams[slot].record_event()
            ctx.__exit__(None, None, None)
    if plan is not None:
        for s in side:  # join every branch back into the caller's stream
            main.wait_stream(s)
    for i, a in MUTATES:  # a buffer mutation computed out of place: the buffer takes the new value
        if OUTPUTS[i] != a:
            env[a].copy_(env[OUTPUTS[i]])
    if not bump and not epochs:
        ep.add_(1)
    return [env[o] for o in OUTPUTS]


def residency(state, tensors):
    """Per kernel: (name, grid, CTAs that fit on the device at once, registers, shared bytes, spills).

    Compiles (without launching) each kernel for the current device. A kernel with ring queues (fewer
    slots than tiles) needs its whole grid resident; otherwise generate with capacity="all".
    """
    env = dict(state["buffers"])
    env.update(tensors)
    _bind_views(env)
    props = torch.cuda.get_device_properties(state["device"])
    out = []
    for k in KERNELS:
        pk = _prof(state, k)
        if k["tma"]:
            _tma_prepare(env, k["tma"], k.get("tma_pad"))
        args = _kernel_args(env, k) + [state["counters"], state["err"], state["epoch"], k["ticket"]]
        ck = k["fn"].warmup(*args, WATCHDOG=0, num_warps=k["num_warps"], num_stages=k["num_stages"],
                            grid=(k["grid"],), **pk, **_pdl_args(state))
        ck._init_handles()
        threads = 32 * k["num_warps"]
        regs = max(1, ck.n_regs) * threads
        smem = ck.metadata.shared
        smem_sm = getattr(props, "shared_memory_per_multiprocessor", 233472)
        by_regs = getattr(props, "regs_per_multiprocessor", 65536) // regs
        by_smem = smem_sm // (smem + 1024) if smem else 32
        by_threads = getattr(props, "max_threads_per_multi_processor", 2048) // threads
        per_sm = max(0, min(by_regs, by_smem, by_threads, 32))
        out.append((k["name"], k["grid"], per_sm * props.multi_processor_count, ck.n_regs, smem, ck.n_spills))
    return out


def error(code):
    """The exception an error flag value stands for (None for 0): KitsuneIndexError (an index check) or
    QueueTimeout (a debug watchdog). Reads nothing: the runtime copies the flag to the host asynchronously."""
    code = int(code)
    if code >= INDEX_CODE:
        where, what = INDEX_CHECKS[code - INDEX_CODE]
        return KitsuneIndexError(f"{where}index out of range: {what}")
    if code >= WAIT_CODE:
        kernel, stage, producers = WAITS[WAIT_CODES[code - WAIT_CODE]]
        return QueueTimeout(f"kernel \\"{kernel}\\": a program of stage \\"{stage}\\" gave up waiting on the "
                            f"programs of stage(s) {', '.join(producers)} (a temporal dependence); they never all "
                            f"finished (a deadlock, or a program that faulted)")
    if code:
        name, kernel, cap, ntiles = QUEUES[QUEUE_CODES[code - 1]]
        return QueueTimeout(f"kernel \\"{kernel}\\": a program gave up waiting on queue \\"{name}\\" "
                            f"({cap} slots, {ntiles} tiles per run); its producer never delivered (deadlock, "
                            f"or the grid is larger than the CTAs that can be resident at once)")
    return None


def check(state):
    """Raise KitsuneIndexError if an index check failed (the flag is reset: later launches run), QueueTimeout
    if a spin-wait's watchdog fired (synchronises: reads the flag)."""
    e = error(state["err"].item())
    if isinstance(e, KitsuneIndexError):
        state["err"].zero_()
    if e is not None:
        raise e
'''


__all__ = ["RUNTIME", "HOST", "INDEX_CODE", "WAIT_CODE"]
