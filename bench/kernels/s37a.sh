# session 37, call A: the ResNet stem's forms (stem_probe.py) against cuDNN
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 500 python3 bench/kernels/stem_probe.py --json $OUT/stem-probe-session37-h100-2026-11-28.json 2>&1 | grep -v -i warn
