# session 36, call C: ResNet-50's convolutions tuned in isolation (kitsune-tune, conv tasks only): how far the
# heuristic default is from the best of each task's candidates, the stem's 7 x 7 over 3 channels first of all
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 540 python3 -m kitsune.tools.tune bench/models/resnet50.py --max-candidates ${NC:-8} --db /tmp/r50db.json \
  --json $OUT/tune-r50-session36-h100-2026-11-28.json 2>&1 | grep -v -i "warn\|return cls" | tail -60
