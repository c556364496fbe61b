# Session 29, device call A: the harness's floor for issue 14's decode steps (one kernel reading 124 / 138 MB, timed
# as kitsune.bench times a workload), b1's chain of plain gemvs timed the same way, and the harness on b1 / b8 with
# Inductor + CUDA graph in the same process.
source bench/kernels/device_env.sh
python bench/kernels/read_floor.py --harness --json $OUT/read-floor-harness.json 2>&1 | grep -v -i warn
python bench/kernels/l2_prefetch_probe.py --json $OUT/l2-prefetch-probe3.json 2>&1 | grep -E "harness|none"
timeout 400 python -m kitsune.bench --workloads llama_decode_b1,llama_decode_b8 --peers inductor_graph \
  --json $OUT/harness-decode.json 2>&1 | grep -v -i warn | tail -8
