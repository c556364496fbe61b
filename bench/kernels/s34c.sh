# session 34, call C: models outside the suite, never timed before (bench/models/: vit, mixer, mobilenet_v2,
# convnext, gcn; plain torch), bulk-sync and dataflow against Inductor + CUDA graph, tuning database as packaged
# (their shapes are not in it: heuristic defaults)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for m in ${MODELS:-vit mixer gcn}; do
  timeout 190 python3 -m kitsune.bench --workloads bench/models/$m.py --peers inductor_graph --timeout 180 \
    --json $OUT/h100-2026-11-27-session34-unseen.json > /tmp/unseen-$m.log 2>&1
  grep -v -i "warn\|^  *warnings\|return cls" /tmp/unseen-$m.log | tail -10 | cut -c1-200
  cp /tmp/unseen-$m.log $OUT/
done
