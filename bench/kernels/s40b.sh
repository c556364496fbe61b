# session 40, calls B..: the harness with its paired timing (Kitsune and Inductor + CUDA graph in turn, 4 rounds
# each, the order flipped every round; the block timings kept as block_*_ms). WL: the comma list of workloads; TAG:
# the records' tag; RUNS: how many times over (default 1).
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
for run in $(seq 1 ${RUNS:-1}); do
  timeout ${TMO:-560} python3 -m kitsune.bench --workloads "$WL" --peers inductor_graph --timeout 200 \
    --modes ${MODES:-bulk-sync,dataflow} --json "$OUT/$GPU-$(date -u +%F)-session40-$TAG-$run.json" > /tmp/suite.log 2>&1
  grep -v -i "warn\|^  *warnings\|return cls" /tmp/suite.log | grep -E "^(mlp|llama|dlrm|nerf|mgn|incep)|timed as|rror|timed out" | cut -c1-250
  cp /tmp/suite.log "$OUT/suite-$TAG-$run.log"
done
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
