# session 38, call G: the UNet in the dataflow mode at the session's final code (call F measured bulk-sync)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 150 python3 -m kitsune.bench --workloads bench/models/unet.py --peers inductor_graph --timeout 145 \
  --modes dataflow --json $OUT/h100-2026-11-28-session38-g-unet.json > /tmp/new-unet.log 2>&1
grep -E "^unet |rror|timed out" /tmp/new-unet.log | cut -c1-300 | head -4; cp /tmp/new-unet.log $OUT/
