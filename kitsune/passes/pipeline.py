"""kitsune-pipeline: graph -> gpu_queue in one pass.

Runs ``graph-canonicalize`` (optional), ``kitsune-project-gathers`` and ``kitsune-merge-siblings`` (``merge``),
``kitsune-hoist-row-scale``, ``kitsune-flatten-rows`` (row-local regions around a linear over ragged leading dims on
2-D rows), ``kitsune-split-long-norms`` (norms and softmaxes over rows too long for one tile: statistics + elementwise),
``kitsune-inplace-updates`` (buffer mutations written into the
buffer), ``kitsune-form-regions``,
``kitsune-materialize`` (results the task's tiles cannot cover and small
contractions off the anchor path become tasks of their own), ``kitsune-fuse-copies`` (tasks
that only move data are inlined into their consumers), ``kitsune-choose-schedules`` (template, config, tile per task),
``kitsune-split-reduction`` (filling the GPU's SMs with the tasks no template
splits in the kernel: attention, generic tasks), ``convert-dataflow-to-gpu-queue``
(``mode``) and ``kitsune-allocate-sms`` (``gpu``), verifying the module after each.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from kitsune.gpu import parse_gpu_option
from kitsune.passes.split_long_norms import LONG_ROW


@dataclass(frozen=True)
class KitsunePipelinePass(ModulePass):
    """The whole lowering, graph dialect -> gpu_queue."""

    name = "kitsune-pipeline"

    mode: str = "dataflow"
    """dataflow or bulk-sync."""
    placement: str = "auto"
    """dataflow mode: auto, spatial, temporal or separate (kitsune.passes.placement)."""
    gpu: str = "h100"
    """GPU preset (with optional FIELD=VALUE overrides)."""
    canonicalize: bool = True
    """Run graph-canonicalize first."""
    split: bool = True
    """Run kitsune-split-reduction."""
    merge: bool = True
    """Run kitsune-project-gathers (a linear over gathered rows projects them before the gather) and
    kitsune-merge-siblings (contractions of one input with parameter weights become one)."""
    templates: bool = True
    """Schedule templates (off: every task runs on the generic evaluator with form-regions' tiles)."""
    tuning_db: bool = True
    """Read configs from the tuning database (off: heuristic defaults)."""
    fold: bool = False
    """dataflow mode: fold split reductions' combines into their partials' kernels (convert-dataflow-to-gpu-queue)."""
    report: bool = False
    """Print the SM allocation to stderr."""
    long_row: int = LONG_ROW
    """Longest row a layer / RMS norm keeps whole (kitsune-split-long-norms's ``max_row``)."""

    def task_passes(self) -> list[ModulePass]:
        """The passes that form the tasks (graph -> dataflow), before any schedule is chosen: what
        ``kitsune-tune`` runs to find the tasks a compile would schedule."""
        from kitsune.passes.choose_schedules import ChooseSchedulesPass

        out = []
        for p in self.passes():
            if isinstance(p, ChooseSchedulesPass):
                return out
            out.append(p)
        return out

    def passes(self) -> list[ModulePass]:
        from kitsune.passes.allocate_sms import AllocateSMsPass
        from kitsune.passes.convert_dataflow_to_gpu_queue import ConvertDataflowToGpuQueuePass
        from kitsune.passes.choose_schedules import ChooseSchedulesPass
        from kitsune.passes.form_regions import FormRegionsPass
        from kitsune.passes.graph_canonicalize import GraphCanonicalizePass
        from kitsune.passes.split_reduction import SplitReductionPass
        from kitsune.passes.materialize import MaterializePass
        from kitsune.passes.fuse_copies import FuseCopiesPass
        from kitsune.passes.fuse_scatters import FuseScattersPass
        from kitsune.passes.inplace_updates import InplaceUpdatesPass
        from kitsune.passes.hoist_row_scale import HoistRowScalePass
        from kitsune.passes.flatten_rows import FlattenRowsPass
        from kitsune.passes.merge_siblings import MergeSiblingsPass
        from kitsune.passes.project_gathers import ProjectGathersPass
        from kitsune.passes.split_long_norms import SplitLongNormsPass

        gpu = parse_gpu_option(self.gpu)
        out: list[ModulePass] = []
        if self.canonicalize:
            out.append(GraphCanonicalizePass())
        if self.merge:
            out.append(ProjectGathersPass())
            out.append(MergeSiblingsPass())
        if self.canonicalize:
            out.append(HoistRowScalePass())
            out.append(FlattenRowsPass())
        out.append(SplitLongNormsPass(max_row=self.long_row))
        out.append(InplaceUpdatesPass())
        out.append(FormRegionsPass(gpu=self.gpu))
        out.append(MaterializePass())
        out.append(FuseCopiesPass())
        out.append(FuseScattersPass())
        out.append(ChooseSchedulesPass(gpu=self.gpu, db=self.tuning_db, templates=self.templates,
                                       queues=self.mode == "dataflow" and self.placement != "separate"))
        if self.split:
            out.append(SplitReductionPass(sms=gpu.sm_count, templates=self.templates))
        out.append(ConvertDataflowToGpuQueuePass(mode=self.mode, gpu=self.gpu, placement=self.placement,
                                                 fold=self.fold))
        out.append(AllocateSMsPass(gpu=self.gpu, report=self.report))
        return out

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from kitsune.timing import phase

        for p in self.passes():
            with phase(p.name):
                p.apply(ctx, op)
            with phase("verify"):
                op.verify()
