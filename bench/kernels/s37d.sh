# session 37, call D: EfficientNet-B0 again (its bulk-sync run ran past call C's time limit) and the UNet's
# convolutions tuned alone (heuristic default against the best of its candidates: a NCHW input read through the
# GroupNorm's affine + SiLU, grids of 128 programs over K = 4608)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
MODELS=efficientnet_b0 TMO=200 TAG=d bash -c 'cd /tmp/w; for m in $MODELS; do timeout $TMO python3 -m kitsune.bench --workloads bench/models/$m.py --peers inductor_graph --timeout $((TMO - 5)) --modes bulk-sync --json $OUT/h100-2026-11-28-session37-$TAG.json > /tmp/new-$m.log 2>&1; grep -E "^$m |rror" /tmp/new-$m.log | cut -c1-300 | head -5; done'
timeout 330 python3 -m kitsune.tools.tune bench/models/unet.py --max-candidates 6 --db /tmp/unetdb.json \
  --json $OUT/tune-unet-session37-h100-2026-11-28.json 2>&1 | grep -v -i "warn\|return cls" | grep -i "best\|error" | cut -c1-220
