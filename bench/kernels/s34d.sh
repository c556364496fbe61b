# session 34, calls D-H (TAG names the result file, MODELS the list): the unseen models after this session's fixes (the patch embedding's convolution a task of
# its own, the transposed LayerNorm computed once, index_add into a vector by the scatter template, a GCN's fused
# scatter in [rows, columns] blocks), then ConvNeXt-T and MobileNetV2 (never run)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for m in ${MODELS:-gcn vit mixer convnext mobilenet_v2}; do
  timeout 170 python3 -m kitsune.bench --workloads bench/models/$m.py --peers inductor_graph --timeout 160 \
    --json $OUT/h100-2026-11-27-session34-unseen-${TAG:-b}.json > /tmp/unseen-$m.log 2>&1
  grep -v -i "warn\|^  *warnings\|return cls" /tmp/unseen-$m.log | grep -E "^$m |per kernel|Error|error" | cut -c1-400 | head -6
  cp /tmp/unseen-$m.log $OUT/
done
