# session 37, call F: the UNet after its convolutions' inputs were stored channels-last (the GroupNorm's affine +
# SiLU and the nearest upsampling tasks of their own, tiled across the channels), and two models whose code the
# group-by-group reshape index changed (Llama prefill's RoPE, ConvNeXt's residual reads); bulk-sync only
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for mt in unet:110 llama_prefill:80 convnext:90; do
  m=${mt%%:*}; t=${mt##*:}
  timeout $t python3 -m kitsune.bench --workloads bench/models/$m.py --peers inductor_graph --timeout $((t - 5)) \
    --modes bulk-sync --json $OUT/h100-2026-11-28-session37-f-$m.json > /tmp/new-$m.log 2>&1
  grep -E "^$m |rror|timed out" /tmp/new-$m.log | cut -c1-300 | head -4; cp /tmp/new-$m.log $OUT/
done
