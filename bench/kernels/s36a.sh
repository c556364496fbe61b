# session 36: models outside the suite in the harness against Inductor + CUDA graph (MODELS, TAG), the tree in
# .whl/tree.tar; per-kernel lines kept in $OUT/<model>.log
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for m in ${MODELS:-efficientnet_b0}; do
  timeout ${TMO:-200} python3 -m kitsune.bench --workloads bench/models/$m.py --peers inductor_graph --timeout ${TMO:-200} \
    --json $OUT/h100-2026-11-28-session36-${TAG:-a}.json > /tmp/new-$m.log 2>&1
  grep -v -i "warn\|^  *warnings\|return cls" /tmp/new-$m.log | grep -E "^$m |Error|error" | cut -c1-300 | head -6
  cp /tmp/new-$m.log $OUT/
done
