# Session 27, device call A: the M = 8 skinny-product forms (x as A / W as A / FMA) against cuBLAS on b8's four
# projection shapes, weights rotated past L2.
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader
timeout 500 python bench/kernels/skinny_probe.py --m 8 --out $OUT/skinny-m8.json 2>&1 | grep -v -i warn
