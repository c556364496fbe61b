"""Kitsune passes. ``ALL_PASSES`` maps each pass name to its class (for kitsune-opt)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _graph_canonicalize():
    from kitsune.passes.graph_canonicalize import GraphCanonicalizePass

    return GraphCanonicalizePass


def _graph_decompose():
    from kitsune.passes.graph_decompose import GraphDecomposePass

    return GraphDecomposePass


def _kitsune_estimate():
    from kitsune.passes.estimate import EstimatePass

    return EstimatePass


def _kitsune_form_regions():
    from kitsune.passes.form_regions import FormRegionsPass

    return FormRegionsPass


def _convert_graph_to_dataflow():
    from kitsune.passes.form_regions import ConvertGraphToDataflowPass

    return ConvertGraphToDataflowPass


def _kitsune_flatten_rows():
    from kitsune.passes.flatten_rows import FlattenRowsPass

    return FlattenRowsPass


def _kitsune_hoist_row_scale():
    from kitsune.passes.hoist_row_scale import HoistRowScalePass

    return HoistRowScalePass


def _kitsune_split_long_norms():
    from kitsune.passes.split_long_norms import SplitLongNormsPass

    return SplitLongNormsPass


def _kitsune_project_gathers():
    from kitsune.passes.project_gathers import ProjectGathersPass

    return ProjectGathersPass


def _kitsune_merge_siblings():
    from kitsune.passes.merge_siblings import MergeSiblingsPass

    return MergeSiblingsPass


def _kitsune_fuse_scatters():
    from kitsune.passes.fuse_scatters import FuseScattersPass

    return FuseScattersPass


def _kitsune_fuse_copies():
    from kitsune.passes.fuse_copies import FuseCopiesPass

    return FuseCopiesPass


def _kitsune_inplace_updates():
    from kitsune.passes.inplace_updates import InplaceUpdatesPass

    return InplaceUpdatesPass


def _kitsune_materialize():
    from kitsune.passes.materialize import MaterializePass

    return MaterializePass


def _kitsune_choose_schedules():
    from kitsune.passes.choose_schedules import ChooseSchedulesPass

    return ChooseSchedulesPass


def _kitsune_split_reduction():
    from kitsune.passes.split_reduction import SplitReductionPass

    return SplitReductionPass


def _convert_dataflow_to_gpu_queue():
    from kitsune.passes.convert_dataflow_to_gpu_queue import ConvertDataflowToGpuQueuePass

    return ConvertDataflowToGpuQueuePass


def _kitsune_allocate_sms():
    from kitsune.passes.allocate_sms import AllocateSMsPass

    return AllocateSMsPass


def _kitsune_pipeline():
    from kitsune.passes.pipeline import KitsunePipelinePass

    return KitsunePipelinePass


ALL_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "graph-canonicalize": _graph_canonicalize,
    "graph-decompose": _graph_decompose,
    "kitsune-estimate": _kitsune_estimate,
    "kitsune-form-regions": _kitsune_form_regions,
    "kitsune-inplace-updates": _kitsune_inplace_updates,
    "kitsune-materialize": _kitsune_materialize,
    "kitsune-fuse-copies": _kitsune_fuse_copies,
    "kitsune-fuse-scatters": _kitsune_fuse_scatters,
    "kitsune-hoist-row-scale": _kitsune_hoist_row_scale,
    "kitsune-flatten-rows": _kitsune_flatten_rows,
    "kitsune-split-long-norms": _kitsune_split_long_norms,
    "kitsune-project-gathers": _kitsune_project_gathers,
    "kitsune-merge-siblings": _kitsune_merge_siblings,
    "kitsune-choose-schedules": _kitsune_choose_schedules,
    "kitsune-split-reduction": _kitsune_split_reduction,
    "convert-graph-to-dataflow": _convert_graph_to_dataflow,
    "convert-dataflow-to-gpu-queue": _convert_dataflow_to_gpu_queue,
    "kitsune-allocate-sms": _kitsune_allocate_sms,
    "kitsune-pipeline": _kitsune_pipeline,
}


def register(name: str, factory: Callable[[], type[ModulePass]]) -> None:
    ALL_PASSES[name] = factory
