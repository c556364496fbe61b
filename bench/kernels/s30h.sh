# session 30, call H: deeper rings for T256 fc1 (ws 128 x 128 at 6 and 7 stages, the result stored from registers where the ring takes the shared memory) (bench/kernels/multicast_probe/mc_gemm.py) on the H100
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -c "import cuda.bindings; print('cuda-bindings', cuda.bindings.__version__)" 2>&1 | tail -1
timeout 540 python3 bench/kernels/multicast_probe/mc_gemm.py --configs deep --reps 3 --shapes odd,T256_fc1,T256_fc2,T1024_fc1 --out $OUT/mc-gemm-h-session30-h100-2026-11-27.json 2>&1 | grep -v -i warn | tail -60
