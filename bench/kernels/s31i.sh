# session 31, call I: the cost of making TMA descriptors on the device, and PDL hiding it (tma_desc_probe.py)
source bench/kernels/device_env.sh
timeout 200 python3 bench/kernels/tma_desc_probe.py --out $OUT/tma-desc-session31-h100-2026-11-27.json 2>&1 | grep -v -i warn | tail -12
