"""One dataflow task as a program of its own: what ``kitsune-tune`` and ``bench/kernels`` time.

``task_module(task)`` clones a task into ``func @main(task inputs) -> task results`` holding a one-task
dataflow graph; ``with_config`` pins its template / config / tile; ``lower`` runs the rest of the pipeline
(bulk-sync: one kernel); ``measure`` loads the program on the GPU and times its launch replayed in a CUDA
graph (several launches per replay, so launch overhead does not dominate small kernels).
"""

from __future__ import annotations

import math

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import Block, BlockArgument, Region

from kitsune.codegen.layouts import CHANNELS_LAST

from kitsune.dialects import dataflow as df
from kitsune.schedule.configs import Config
from kitsune.schedule.storage import operand_stored_channels_last, stored_channels_last


def _parameter_operand(task: df.TaskOp, i: int) -> bool:
    """Operand ``i`` of ``task`` is one of the program's parameters (a function argument of kind parameter)."""
    v = task.ins[i]
    g = task.parent_op()
    if not isinstance(v, BlockArgument) or not isinstance(g, df.GraphOp) or v.owner is not g.body.blocks.first:
        return False
    outer = g.operands[v.index]
    f = g.parent_op()
    if not isinstance(outer, BlockArgument) or not isinstance(f, func.FuncOp) or not f.arg_attrs:
        return False
    kind = f.arg_attrs.data[outer.index].data.get("kitsune.kind")
    return isinstance(kind, StringAttr) and kind.data == "parameter"


def task_module(task: df.TaskOp) -> ModuleOp:
    """``func @main`` whose body is a dataflow graph with a clone of ``task`` (template attributes dropped).

    Its arguments are inputs, except for a convolution whose input the program stores channels-last: that input is
    a parameter stored so (``kitsune.order``), and so are the convolution's parameters (whose weight may then be
    packed ``[kh, kw, c, f]`` as in the program); a result the program stores channels-last is stored so too
    (a result attribute). So the task is timed on the memory layout it runs on (an NCHW isolation of
    inception_b8's 3x3 took 24.9 us against 7.4 in the program; ResNet-18's first 3x3 of layer 1, whose result
    alone was stored NCHW, 120 us against 53, bench/kernels/NOTES.md 28). A gemm's parameters are parameters too,
    so that its weight is uploaded packed where the program's is (``templates/gemm_tma.py``: ``packing``)."""
    in_types = [o.type for o in task.ins]
    out_types = [r.type for r in task.outs]
    last = {i for i in range(len(in_types)) if operand_stored_channels_last(task, i)}
    tmpl = task.attributes.get("template")
    gemm = isinstance(tmpl, StringAttr) and tmpl.data == "gemm"
    order = StringAttr(",".join(map(str, CHANNELS_LAST)))
    attrs = []
    for i in range(len(in_types)):
        d = {"kitsune.name": StringAttr(f"arg{i}")}
        if i in last:
            d["kitsune.kind"] = StringAttr("parameter")
            d["kitsune.order"] = order
        elif (last or gemm) and _parameter_operand(task, i):
            d["kitsune.kind"] = StringAttr("parameter")
        attrs.append(DictionaryAttr(d))
    res_attrs = [DictionaryAttr({"kitsune.order": order} if stored_channels_last(r) else {}) for r in task.outs]
    fblock = Block(arg_types=in_types)
    gblock = Block(arg_types=in_types)
    t = task.clone()
    for a in ("template", "config", "schedule"):
        t.attributes.pop(a, None)
    t.operands = list(gblock.args)
    gblock.add_op(t)
    gblock.add_op(df.YieldOp(list(t.results)))
    g = df.GraphOp(list(fblock.args), out_types, Region(gblock))
    fblock.add_op(g)
    fblock.add_op(func.ReturnOp(*g.results))
    f = func.FuncOp("main", (in_types, out_types), Region(fblock), arg_attrs=ArrayAttr(attrs),
                    res_attrs=ArrayAttr(res_attrs))
    return ModuleOp([f])


def load(module: ModuleOp, args, device):
    """(the lowered one-task ``module`` loaded as a Program, the arguments it is called with): ``args`` holds a
    tensor per argument of @main; those of parameters are bound at load time (uploaded in their storage order)."""
    from kitsune.codegen.plan import arg_label
    from kitsune.runtime.program import Program

    f = [o for o in module.walk() if isinstance(o, func.FuncOp)][0]
    roles = [arg_label(f, i) for i in range(len(args))]
    weights = {label: a for (label, role), a in zip(roles, args) if role == "parameter"}
    ins = [a for (_, role), a in zip(roles, args) if role != "parameter"]
    return Program.from_module(module, weights or None, device), ins


def only_task(module: ModuleOp) -> df.TaskOp:
    (t,) = [o for o in module.walk() if isinstance(o, df.TaskOp)]
    return t


def with_config(module: ModuleOp, template: str, cfg: Config | None, tile) -> ModuleOp:
    """A clone of a one-task module with the task's schedule pinned (``cfg`` None: the generic evaluator)."""
    from kitsune.passes.choose_schedules import config_attr, set_tile

    m = module.clone()
    t = only_task(m)
    t.attributes["template"] = StringAttr(template)
    if cfg is not None:
        t.attributes["config"] = config_attr(cfg)
        set_tile(t, tile)
    return m


def lower(module: ModuleOp, gpu: str = "h100", mode: str = "bulk-sync") -> ModuleOp:
    from kitsune.context import make_context
    from kitsune.passes.allocate_sms import AllocateSMsPass
    from kitsune.passes.convert_dataflow_to_gpu_queue import ConvertDataflowToGpuQueuePass

    ctx = make_context()
    ConvertDataflowToGpuQueuePass(mode=mode, gpu=gpu).apply(ctx, module)
    AllocateSMsPass(gpu=gpu).apply(ctx, module)
    module.verify()
    return module


def index_extents(task: df.TaskOp) -> dict[int, int]:
    """Argument position -> the extent of the dim its values index, for each integer argument of ``task`` that
    an op of its body uses as an index (a gather's or scatter's rows; the smallest such dim when several)."""
    from kitsune.dialects.graph import GraphOp
    from kitsune.schedule.roles import op_program
    from kitsune.semantics.comprehension import Indirect

    args = list(task.body.blocks.first.args)
    pos = {id(a): i for i, a in enumerate(args)}
    out: dict[int, int] = {}
    for op in task.body.blocks.first.ops:
        if not isinstance(op, GraphOp):
            continue
        got = op_program(op)
        if got is None:
            continue
        inst, bound, prog = got
        names = {name: op.operands[i] for name, i in dict(inst.inputs).items() if i < len(op.operands)}
        for st in prog.stmts:
            for acc in st.all_accesses():
                for d, ix in enumerate(acc.indices):
                    if not isinstance(ix, Indirect) or ix.access.tensor not in names:
                        continue
                    shape = bound.shapes.get(acc.tensor)
                    if shape is None or d >= len(shape) or shape[d] <= 0:
                        continue
                    for i in _index_args(names[ix.access.tensor], pos):
                        out[i] = min(out.get(i, shape[d]), shape[d])
    return out


def _index_args(v, pos: dict[int, int], depth: int = 8) -> list[int]:
    """Positions of the task arguments an index value is computed from through elementwise ops (``x[i]``'s
    wrap of negative indices, ``where(i < 0, i + n, i)``)."""
    from xdsl.dialects.builtin import IntegerType

    from kitsune.dialects.graph import GraphOp

    if id(v) in pos:
        return [pos[id(v)]]
    o = v.owner
    if depth == 0 or not isinstance(o, GraphOp) or o.OPDEF.category != "elementwise":
        return []
    return [i for x in o.operands if isinstance(x.type.get_element_type(), IntegerType)
            for i in _index_args(x, pos, depth - 1)]


def random_inputs(module: ModuleOp, device, seed: int = 0, positive: bool = False):
    """Random inputs for @main: floats ~ N(0, 1/last dim) (keeps sums O(1); ``positive``: their magnitudes);
    integers uniform over the dim they index (``index_extents``: a gather or scatter then spreads over its rows
    as a real graph's indices do, not over two rows, which turns a scatter's atomics into contention and a gather
    into cache hits), else in [0, 2)."""
    import torch

    from kitsune.codegen.plan import dtype_key
    from kitsune.runtime.program import TORCH_DTYPES

    g = torch.Generator(device="cpu").manual_seed(seed)
    f = [o for o in module.walk() if isinstance(o, func.FuncOp)][0]
    tasks = [o for o in module.walk() if isinstance(o, df.TaskOp)]
    extents = index_extents(tasks[0]) if len(tasks) == 1 else {}
    out = []
    for i, a in enumerate(f.body.blocks.first.args):
        shape = tuple(a.type.get_shape())
        dt = TORCH_DTYPES[dtype_key(a.type.get_element_type())]
        if dt.is_floating_point:
            x = torch.randn(shape, generator=g) / math.sqrt(max(1, shape[-1] if shape else 1))
            x = x.abs() if positive else x
        else:
            x = torch.randint(0, extents.get(i, 2), shape, generator=g)
        out.append(x.to(dt).to(device))
    return out


def reference_inputs(module: ModuleOp, device, gpu: str = "h100"):
    """(inputs, the task's first result on them by the generic evaluator, fp32): random inputs whose result is
    finite. An isolated task's inputs stand for values its graph computed: a norm's rsqrt of a mean of squares
    drawn from N(0, s) may be of a negative number, so where the result is not finite the inputs' magnitudes are
    taken instead (the Llama MLP's gate / up projection with the RMS norm's statistics as its epilogue)."""
    low = lower(with_config(module, "generic", None, None), gpu)
    for positive in (False, True):
        ins = random_inputs(module, device, positive=positive)
        prog, call = load(low, ins, device)
        ref = prog(*call)[0].float()
        if bool(ref.isfinite().all()):
            break
    return ins, ref


def measure(program, inputs, reps: int = 10) -> float:
    """Median ms of one launch of a loaded Program: ``reps`` launches captured in one CUDA graph, replayed.

    The launches rotate over copies of the weights and inputs, as many as make the copies twice the L2 cache
    (``rotation_copies``): in a model each layer's weights come from DRAM, and a task whose operands fit the L2
    would otherwise read them from it in all but the first launch (Llama-1B's 33.5 MB down projection: 8.9 us
    alone against 13.6 in its launch plan, bench/kernels/NOTES.md section 25)."""
    import torch
    from triton.testing import do_bench

    from kitsune.runtime.program import capture_graph

    m = program.module
    sets = copies_past_l2({**program._tensors, **dict(zip(program.input_names, inputs))}, program.device, reps)
    with torch.cuda.device(program.device):
        g, _ = capture_graph(lambda: [m.launch(program.state, sets[i % len(sets)]) for i in range(reps)])
        return do_bench(g.replay, warmup=25, rep=200, return_mode="median") / reps


def copies_past_l2(tensors: dict, device, reps: int = 10) -> list[dict]:
    """``tensors`` and clones of them, as many as ``rotation_copies`` says for ``reps`` launches on ``device``'s L2
    (what ``measure`` rotates over, and ``bench/kernels/run.py``'s torch peer)."""
    import torch

    l2 = int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 50 << 20) or (50 << 20))
    copies = rotation_copies(sum(t.numel() * t.element_size() for t in tensors.values()), l2, reps)
    return [tensors] + [{n: t.clone() for n, t in tensors.items()} for _ in range(copies - 1)]


def rotation_copies(nbytes: int, l2_bytes: int, reps: int) -> int:
    """Copies of a launch's operands (``nbytes``) that ``measure`` rotates over: together at least twice the L2
    (``l2_bytes``), at most one per launch (``reps``)."""
    return max(1, min(reps, -(-2 * l2_bytes // max(1, nbytes))))


def rel_err(a, b) -> float:
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


__all__ = ["task_module", "with_config", "lower", "load", "reference_inputs", "random_inputs", "index_extents",
           "measure", "rotation_copies", "rel_err", "only_task"]
