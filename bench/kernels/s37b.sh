# session 37, call B: few-channel strided convolutions after the [K, pixels] loads and the gathered-input default
# (BM 128, the least-padding BK, which the conv template now applies): the stems tuned alone against their
# heuristic default, the channels-last-rows form of stem_probe.py (fixed), ResNet-18 / -50 in the harness
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for s in resnet_stem effnet_stem patch4; do
  timeout 100 python3 -m kitsune.tools.tune bench/models/conv_shapes.py:$s --max-candidates 40 --db /tmp/stemdb.json \
    --json $OUT/tune-stems-session37-h100-2026-11-28.json 2>&1 | grep -v -i "warn\|return cls" | grep -i "best\|default\|error" | cut -c1-250
done
cp /tmp/stemdb.json $OUT/ 2>/dev/null
timeout 60 python3 bench/kernels/stem_probe.py --only cl 2>&1 | grep -v -i warn | head -12
for m in ${MODELS:-resnet18 resnet50}; do
  timeout 150 python3 -m kitsune.bench --workloads bench/models/$m.py --peers inductor_graph --timeout 145 \
    --json $OUT/h100-2026-11-28-session37-${TAG:-b}.json > /tmp/new-$m.log 2>&1
  grep -v -i "warn\|^  *warnings\|return cls" /tmp/new-$m.log | grep -E "^$m |Error|error" | cut -c1-300 | head -6
  cp /tmp/new-$m.log $OUT/
done
