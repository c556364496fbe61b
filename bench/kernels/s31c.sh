# session 31, call C: A through registers (RS) for the 64 + 32 column tile, 192-column tiles (128 + 64), against the
# shipped 128 x 128 forms, T256 and T1024 (bench/kernels/multicast_probe/mc_gemm.py --configs rs) on the H100
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 560 python3 bench/kernels/multicast_probe/mc_gemm.py --configs rs --reps 2 --graph --shapes odd,T256_fc1,T256_fc2,T1024_fc1,T1024_fc2 --out $OUT/mc-gemm-c-session31-h100-2026-11-27.json 2>&1 | grep -v -i warn | tail -60
