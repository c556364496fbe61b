"""One dataflow task as a program of its own: what ``kitsune-tune`` and ``bench/kernels`` time.

``task_module(task)`` clones a task into ``func @main(task inputs) -> task results`` holding a one-task
dataflow graph; ``with_config`` pins its template / config / tile; ``lower`` runs the rest of the pipeline
(bulk-sync: one kernel); ``measure`` loads the program on the GPU and times its launch replayed in a CUDA
graph (several launches per replay, so launch overhead does not dominate small kernels).
"""

from __future__ import annotations

import math

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Region

from kitsune.dialects import dataflow as df
from kitsune.schedule.configs import Config


def task_module(task: df.TaskOp) -> ModuleOp:
    """``func @main`` whose body is a dataflow graph with a clone of ``task`` (template attributes dropped)."""
    in_types = [o.type for o in task.ins]
    out_types = [r.type for r in task.outs]
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
    f = func.FuncOp("main", (in_types, out_types), Region(fblock))
    return ModuleOp([f])


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


def random_inputs(module: ModuleOp, device, seed: int = 0):
    """Random inputs for @main: floats ~ N(0, 1/last dim) (keeps sums O(1)), integers in [0, 2)."""
    import torch

    from kitsune.codegen.plan import dtype_key
    from kitsune.runtime.program import TORCH_DTYPES

    g = torch.Generator(device="cpu").manual_seed(seed)
    f = [o for o in module.walk() if isinstance(o, func.FuncOp)][0]
    out = []
    for a in f.body.blocks.first.args:
        shape = tuple(a.type.get_shape())
        dt = TORCH_DTYPES[dtype_key(a.type.get_element_type())]
        if dt.is_floating_point:
            x = torch.randn(shape, generator=g) / math.sqrt(max(1, shape[-1] if shape else 1))
        else:
            x = torch.randint(0, 2, shape, generator=g)
        out.append(x.to(dt).to(device))
    return out


def measure(program, inputs, reps: int = 10) -> float:
    """Median ms of one launch of a loaded Program: ``reps`` launches captured in one CUDA graph, replayed."""
    import torch
    from triton.testing import do_bench

    from kitsune.runtime.program import capture_graph

    m = program.module
    tensors = {**program._tensors, **dict(zip(program.input_names, inputs))}
    with torch.cuda.device(program.device):
        g, _ = capture_graph(lambda: [m.launch(program.state, tensors) for _ in range(reps)])
        return do_bench(g.replay, warmup=25, rep=200, return_mode="median") / reps


def rel_err(a, b) -> float:
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


__all__ = ["task_module", "with_config", "lower", "random_inputs", "measure", "rel_err", "only_task"]
