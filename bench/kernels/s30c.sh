# session 30, call C: the multicast probe with the relaxed cluster barrier on every cluster shape, T256 and T1024 (bench/kernels/multicast_probe/mc_gemm.py) on the H100
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -c "import cuda.bindings; print('cuda-bindings', cuda.bindings.__version__)" 2>&1 | tail -1
timeout 540 python3 bench/kernels/multicast_probe/mc_gemm.py --configs relaxed --reps 2 --shapes odd,T256_fc1,T256_fc2,T1024_fc1,T1024_fc2 --out $OUT/mc-gemm-c-session30-h100-2026-11-27.json 2>&1 | grep -v -i warn | tail -60
