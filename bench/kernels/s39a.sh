# session 39, calls A / B: the first whole-suite run on an H200 (the device now lends H200s only), both schedules
# against Inductor + CUDA graph in the same process; the tuning database's H100 entries serve the H200
# (GPU.tuning_twins). WL: the comma list of workloads; TAG: the records' tag.
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,memory.total --format=csv,noheader
timeout ${TMO:-560} python3 -m kitsune.bench --workloads "$WL" --peers inductor_graph --timeout 200 \
  --modes bulk-sync,dataflow --json "$OUT/$GPU-$(date -u +%F)-session39-$TAG.json" > /tmp/suite.log 2>&1
grep -v -i "warn\|^  *warnings\|return cls" /tmp/suite.log | grep -E "^(mlp|llama|dlrm|nerf|mgn|incep)|rror|timed out" | cut -c1-250
cp /tmp/suite.log "$OUT/suite-$TAG.log"
