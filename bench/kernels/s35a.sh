# session 35, calls B and C: ConvNeXt-T and MobileNetV2 with the depthwise template (B), then with the transposed-read tiles (C;
# this tree) against the tree before them (.whl/base.tar: HEAD at the session start), Inductor + CUDA graph in the new tree runs
source bench/kernels/device_env.sh
[ -n "$NOBASE" ] || base_tree
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for m in ${MODELS:-convnext mobilenet_v2}; do
  in_tree /tmp/w new timeout 200 python3 -m kitsune.bench --workloads bench/models/$m.py --peers inductor_graph \
    --timeout 190 --json $OUT/h100-2026-11-27-session35-${TAG:-dw}.json > /tmp/new-$m.log 2>&1
  grep -E "^$m |per kernel|Error|error" /tmp/new-$m.log | cut -c1-600 | head -6
  [ -n "$NOBASE" ] && { cp /tmp/new-$m.log $OUT/; continue; }
  in_tree /tmp/wb base timeout 150 python3 -m kitsune.bench --workloads bench/models/$m.py --peers "" \
    --timeout 140 --json $OUT/h100-2026-11-27-session35-${TAG:-dw}-base.json > /tmp/base-$m.log 2>&1
  grep -E "^$m |per kernel|Error|error" /tmp/base-$m.log | cut -c1-600 | head -6
  cp /tmp/new-$m.log $OUT/; cp /tmp/base-$m.log $OUT/base-$m.log
done
