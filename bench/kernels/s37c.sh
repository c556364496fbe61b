# session 37, call C: models after the stem change (EfficientNet-B0 / MobileNetV2: a 3 x 3 stride-2 stem over 3
# channels) and the ones never timed (the UNet; the BERT layer since its output projection's form changed)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for m in ${MODELS:-unet bert_layer efficientnet_b0 mobilenet_v2}; do
  timeout ${TMO:-140} python3 -m kitsune.bench --workloads bench/models/$m.py --peers inductor_graph --timeout $((${TMO:-140} - 5)) \
    --json $OUT/h100-2026-11-28-session37-${TAG:-c}.json > /tmp/new-$m.log 2>&1
  grep -v -i "warn\|^  *warnings\|return cls" /tmp/new-$m.log | grep -E "^$m |Error|error" | cut -c1-300 | head -6
  cp /tmp/new-$m.log $OUT/
done
