"""Training through ``torch.compile(model, backend="kitsune")``: aot_autograd's forward and backward graphs.

When Dynamo hands the backend a graph while grad mode is on and an input requires grad (a model whose
parameters are trained), ``kitsune.backend`` comes here instead of compiling an inference graph:

1. aot_autograd traces the joint forward + backward graph with Kitsune's decomposition table (core ATen
   minus the ops the graph dialect keeps whole, which includes the backward ops the op table declares:
   ``kitsune/semantics/grad_ops.py``) and splits it with the **min-cut rematerialisation partitioner**
   (``torch._functorch.partitioners.min_cut_rematerialization_partition``, the one Inductor uses);
2. the forward and the backward graph are each imported (the same importer as torch.export's), lowered and
   generated like an inference graph, with two differences: every tensor is a per-call input -- the
   parameters are graph inputs whose values change at every optimizer step, not weights uploaded once --
   and the outputs follow the importer's output plan (a saved input is passed through, a value known at
   compile time such as an ``arange`` of embedding-bag offsets is made once and seen as static by the
   backward);
3. both graphs are compiled when the step is compiled (``force_non_lazy_backward_lowering``), so a graph
   Kitsune cannot compile -- in the forward or in the backward -- sends the whole training graph to
   Inductor, with the reason logged (``kitsune.backend``), as for inference graphs.

Why min-cut: the partitioner decides what the forward saves and what the backward recomputes. The default
partitioner saves every intermediate the backward reads, which costs a DRAM write in the forward and a read
in the backward for each; min-cut finds the cut of the joint graph with the fewest bytes saved, recomputing
cheap pointwise ops (a ReLU's output, a GELU's input) from what is saved instead -- the memory-bound side of
training, which is where Kitsune's fusion pays. It never recomputes a matmul or a reduction (its ban list),
so the recomputation is cheap; it is also what Inductor uses, so the graphs Kitsune and Inductor compile
save the same tensors and their times compare like for like. In Kitsune every saved tensor is a program output
written to DRAM (a view such as a weight's transpose too), so the cut matters more than in eager. Measured
(fp32, scale 0.25, bytes of the forward's saved outputs that are not graph inputs; default -> min-cut):
nerf_65k 71.4 -> 41.9 MB (25 -> 18 tensors), mlp_gpt3_T256 19.7 -> 0.8 MB (the default saves both weights'
transposes), dlrm_b2048 3.15 -> 1.95 MB, mgn_10k 13.3 -> 11.0 MB, for 5-17 more (recomputed, pointwise or
layout) ops in the backward (``test_training.py::test_min_cut_saves_less_than_default`` checks the direction).

Training-mode BatchNorm works: aot_autograd functionalises the update of its running-statistics buffers
(the forward returns their new values, its runtime wrapper copies them into the buffers). Not supported
(the graph goes to Inductor, the reason logged at the user's line of the forward op): dropout in training
mode, grouped and transposed convolutions' gradients, and every backward op the op table does not have
(a grouped convolution's, ...). Backward nodes carry no source line: each gets its forward op's (same autograd
sequence number).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

__all__ = ["compile_training", "partitioner", "static_outputs", "known_placeholders", "forward_locations",
           "locate_backward"]


def partitioner():
    """The partitioner of Kitsune's training graphs (see the module docstring for why)."""
    from torch._functorch.partitioners import min_cut_rematerialization_partition

    return min_cut_rematerialization_partition


def _boxed(cg) -> Callable:
    from torch._functorch.aot_autograd import make_boxed_func

    return make_boxed_func(cg)


def static_outputs(fw_gm: torch.fx.GraphModule, plan_items) -> dict:
    """Output node name -> numpy value of the forward's outputs known at compile time (``("static", array)``
    items of its output plan). The backward sees them as static placeholders: the partitioner names the
    backward's saved-tensor placeholders after the forward's nodes."""
    outs = next(n for n in fw_gm.graph.nodes if n.op == "output").args[0]
    return {a.name: item[1] for a, item in zip(torch.utils._pytree.tree_leaves(outs), plan_items)
            if item[0] == "static" and isinstance(a, torch.fx.Node)}


def known_placeholders(bw_gm: torch.fx.GraphModule, bw_inputs, known: dict) -> dict:
    """The backward's placeholders among ``known`` (name -> value), their shapes checked."""
    out = {}
    for n, x in zip((n for n in bw_gm.graph.nodes if n.op == "placeholder"), bw_inputs):
        v = known.get(n.name)
        if v is not None and isinstance(x, torch.Tensor) and tuple(x.shape) == v.shape:
            out[n.name] = v
    return out


def forward_locations(fw_gm: torch.fx.GraphModule) -> dict:
    """Autograd sequence number -> the source line (``stack_trace``) of the forward op that has it."""
    return {n.meta["seq_nr"]: n.meta["stack_trace"] for n in fw_gm.graph.nodes
            if n.meta.get("seq_nr") is not None and n.meta.get("stack_trace")}


def locate_backward(bw_gm: torch.fx.GraphModule, where: dict) -> None:
    """Backward nodes carry no source line of their own: give each the line of the forward op it differentiates
    (same autograd sequence number), so that an unsupported backward op is reported where the user wrote it."""
    for n in bw_gm.graph.nodes:
        if not n.meta.get("stack_trace") and n.meta.get("seq_nr") in where:
            n.meta["stack_trace"] = where[n.meta["seq_nr"]]


def compile_training(gm: torch.fx.GraphModule, example_inputs, opts: dict, rec) -> Callable:
    """aot_autograd with Kitsune's forward and backward compilers (raises KitsuneFallback, or any error of
    aot_autograd: the caller falls back to Inductor)."""
    import torch._functorch.config as functorch_config
    from torch._dynamo.backends.common import aot_autograd

    from kitsune.backend import KitsuneFallback, _kitsune_fw
    from kitsune.frontend.torch_export import decomposition_table

    holder: dict[str, Any] = {"known": {}}

    def fw(fx_gm, fx_inputs):
        holder["where"] = forward_locations(fx_gm)
        cg = _kitsune_fw(fx_gm, fx_inputs, opts, training="forward")
        cg.record, cg.fx_gm, cg.opts = rec, fx_gm, opts
        holder["known"].update(static_outputs(fx_gm, [it[:1] + it[2:] if it[0] == "static" else it
                                                      for it in cg.plan]))
        holder["fw"] = cg
        return _boxed(cg)

    def bw(fx_gm, fx_inputs):
        locate_backward(fx_gm, holder.get("where", {}))
        cg = _kitsune_fw(fx_gm, fx_inputs, opts, training="backward",
                         known=known_placeholders(fx_gm, fx_inputs, holder["known"]))
        cg.record, cg.fx_gm, cg.opts = rec, fx_gm, opts
        holder["bw"] = cg
        return _boxed(cg)

    with functorch_config.patch(force_non_lazy_backward_lowering=True):
        fn = aot_autograd(fw_compiler=fw, bw_compiler=bw, partition_fn=partitioner(),
                          decompositions=decomposition_table())(gm, example_inputs)
    if "fw" not in holder:
        raise KitsuneFallback("aot_autograd produced no forward graph")
    if "bw" not in holder:  # aot_autograd found nothing to differentiate: an inference graph after all
        rec.status, rec.compiled = "kitsune", holder["fw"]
        return fn
    rec.status, rec.compiled, rec.backward = "kitsune", holder["fw"], holder["bw"]
    return fn
