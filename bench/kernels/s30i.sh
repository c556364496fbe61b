# session 30, call I: T256 fc1 with a 7-stage ring, the result through the ring's first slots (one tile per CTA) (bench/kernels/multicast_probe/mc_gemm.py) on the H100
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -c "import cuda.bindings; print('cuda-bindings', cuda.bindings.__version__)" 2>&1 | tail -1
timeout 540 python3 bench/kernels/multicast_probe/mc_gemm.py --configs alias --reps 3 --shapes odd,T256_fc1 --out $OUT/mc-gemm-i-session30-h100-2026-11-27.json 2>&1 | grep -v -i warn | tail -60
