"""``python -m kitsune.bench``: Kitsune against its peers on the suite's workloads or any model file.

Per workload, in one child process (``--timeout`` seconds; a crash, a CUDA error or a hang costs that
workload's remaining modes only: a fresh child runs the modes left, reusing the baselines), on the same
inputs:

* peers: torch eager, eager captured in a CUDA graph, Inductor (``torch.compile``), Inductor in a CUDA
  graph (``--peers`` chooses);
* Kitsune, per ``--modes`` (dataflow, bulk-sync), as a CUDA graph of its launch plan; optionally
  (``--backend``) ``torch.compile(model, backend="kitsune", options={"mode": M})``;
* correctness first: every Kitsune output against eager on fresh inputs (the workload's own input factory,
  new seeds; bf16; ``||out - ref|| / ||ref|| < 2e-2``, NaN fails), again after the timing loop; a wrong
  result gets no time. A deep model whose bf16 rounding alone drifts past 2e-2 (llama1b's 16 layers) is
  judged against the model in fp32: Kitsune within 1.5x bf16 eager's own error there passes, and its
  tolerance against bf16 eager becomes 2.5x that error (``fp32_ref``, ``tolerance`` in the record);
* time = median of ``triton.testing.do_bench``; when one input set is smaller than ``--rotate-bytes``
  (default 16 MB, i.e. it would stay in the 50 MB L2) the timed call rotates over ``--rotate`` input
  sets (one CUDA graph per set), so no peer reads its inputs from a warm L2;
* per Kitsune kernel: the cost model's estimate next to the measured time (torch.profiler, CUDA
  activity); the roofline floor (``floor_ms``, ``floor_bytes``) and the fraction of it reached
  (``fraction_of_floor`` = floor / Kitsune time; ``inductor_fraction_of_floor`` for Inductor + graph) and the
  achieved fraction of HBM bandwidth (``hbm_fraction`` = floor_bytes / time / 3.0 TB/s; ``inductor_hbm_fraction``);
* ``--ncu``: DRAM bytes of one call (Kitsune and Inductor + graph), from
  ``ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum`` summed over the call's
  kernels (``dram_bytes``, ``inductor_dram_bytes``).

``--train``: a training step instead (forward, an MSE loss against a fixed target, backward; no optimizer)
through ``torch.compile(model, backend="kitsune")`` next to eager, Inductor and Inductor + CUDA graph, after
every parameter's gradient is checked against eager (``kitsune/bench/train.py``); records carry
``train: true``.

Workloads: names of ``kitsune.models`` (``all``), or ``path/model.py[:factory]`` whose factory
(default ``make_model``) returns ``(module, example_inputs)``; if it takes ``seed``, fresh inputs come
from ``factory(seed=k)``, else floats are redrawn (index tensors kept). Model files are built on the
bench device in bf16 (``--dtype``).

Output: a table on stdout, records appended to ``--json FILE`` (a JSON list; several calls build one
result set), and ``--plot FILE.png`` (ratios of the peers' time to Kitsune's). ``python -m
kitsune.bench.table`` turns the JSON into the README's table. ``--dry-run`` runs the CPU path: Kitsune
under Triton's interpreter at ``--scale`` (default 0.05 there), fp32, correctness only, no timing.

    python -m kitsune.bench --workloads mlp_gpt3_T256,nerf_65k --json $OUT/bench.json --plot $OUT/bench.png
    python -m kitsune.bench --workloads path/to/model.py:make --modes dataflow --peers eager,inductor_graph
    python -m kitsune.bench --dry-run --workloads nerf_65k
    python -m kitsune.bench --train --workloads nerf_65k,mlp_gpt3_T256,dlrm_b2048,mgn_10k --modes bulk-sync
"""

from kitsune.bench.harness import main, run_workload  # noqa: F401

__all__ = ["main", "run_workload"]
