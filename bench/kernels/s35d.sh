# session 35, calls D and E: MobileNetV2 and ConvNeXt-T with the depthwise template at column stride 2 too (D), then with
# its one-warp defaults (E; DWTUNE= skips the tuning), against Inductor + CUDA graph; then each depthwise task's configs
# timed in isolation (dwtune.py: the heuristic default against the best of DepthwiseConfig.space)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for m in mobilenet_v2 convnext; do
  timeout 170 python3 -m kitsune.bench --workloads bench/models/$m.py --peers inductor_graph --timeout 160 \
    --json $OUT/h100-2026-11-27-session35-${TAG:-s2}.json > /tmp/new-$m.log 2>&1
  grep -v -i "warn\|^  *warnings\|return cls" /tmp/new-$m.log | grep -E "^$m |per kernel|Error|error" | cut -c1-300 | head -6
  cp /tmp/new-$m.log $OUT/
done
[ -n "${DWTUNE-1}" ] && timeout 300 python3 bench/kernels/dwtune.py bench/models/mobilenet_v2.py bench/models/convnext.py --max-candidates 6 \
  --json $OUT/dwtune-session35-h100-2026-11-27.json 2>&1 | grep -v -i "warn\|return cls"
