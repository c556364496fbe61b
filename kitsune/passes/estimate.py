"""kitsune-estimate: annotate graph ops and functions with cost-model estimates.

``kitsune-opt -p 'kitsune-estimate{gpu=h100 report=false tf32=false}'``

Attributes written (discardable; the IR's meaning is unchanged):

* on every ``dataflow.task`` (its body estimated as one fused kernel with the
  task's tile count) and on every graph op outside tasks that is a kernel of its
  own (not reshape / constant):
  ``kitsune.flops`` (i64), ``kitsune.bytes`` (i64, fewest bytes read + written,
  from the op table), ``kitsune.est_us`` (f64, estimated time of the op as its
  own kernel, launch included, rounded to 0.001 us), ``kitsune.bound``
  ("compute" | "memory" | "launch");
* on every ``func.func``: ``kitsune.gpu`` (preset name), ``kitsune.flops``
  (total), ``kitsune.bytes`` (fewest bytes of the whole function),
  ``kitsune.floor_us`` (roofline floor), ``kitsune.est_us`` (sum of the per-op
  estimates: the one-kernel-per-op schedule).

``gpu`` is a preset of ``kitsune.gpu`` (h100, h200), optionally with field
overrides: ``gpu="h100,sm_count=66"``. ``report=true`` also prints
``kitsune.cost.report`` for each function to stderr. Re-running replaces the
attributes. See ``kitsune.cost`` for the formulas.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, StringAttr, f64, i64
from xdsl.passes import ModulePass

from kitsune import cost
from kitsune.gpu import parse_gpu_option

FLOPS = "kitsune.flops"
BYTES = "kitsune.bytes"
EST_US = "kitsune.est_us"
BOUND = "kitsune.bound"
FLOOR_US = "kitsune.floor_us"
GPU_ATTR = "kitsune.gpu"


def _us(seconds: float) -> FloatAttr:
    return FloatAttr(round(seconds * 1e6, 3), f64)


@dataclass(frozen=True)
class EstimatePass(ModulePass):
    """Annotate graph ops / functions with FLOPs, fewest bytes, estimated time and the roofline floor."""

    name = "kitsune-estimate"

    gpu: str = "h100"
    report: bool = False
    tf32: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        gpu = parse_gpu_option(self.gpu)
        for f in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            total = 0.0
            for _label, ops, e in cost.estimates(f, gpu, tf32=self.tf32):
                total += e.time_s
                if len(ops) == 1:
                    g = ops[0]
                    g.attributes[FLOPS] = IntegerAttr(e.flops, i64)
                    g.attributes[BYTES] = IntegerAttr(e.bytes, i64)
                    g.attributes[EST_US] = _us(e.time_s)
                    g.attributes[BOUND] = StringAttr(e.bound)
            fl = cost.roofline_floor(f, gpu, tf32=self.tf32)
            f.attributes[GPU_ATTR] = StringAttr(gpu.name)
            f.attributes[FLOPS] = IntegerAttr(fl.flops, i64)
            f.attributes[BYTES] = IntegerAttr(fl.bytes, i64)
            f.attributes[FLOOR_US] = _us(fl.time_s)
            f.attributes[EST_US] = _us(total)
            if self.report:
                sys.stderr.write(cost.report(f, gpu, tf32=self.tf32))
