# session 31, call E: RS with two sets of A registers, 96- and 192-column tiles, T256 and T1024
# (bench/kernels/multicast_probe/mc_gemm.py --configs rs2) on the H100
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 560 python3 bench/kernels/multicast_probe/mc_gemm.py --configs rs2 --reps 2 --graph --shapes odd,T256_fc1,T256_fc2,T1024_fc1,T1024_fc2 --out $OUT/mc-gemm-e-session31-h100-2026-11-27.json 2>&1 | grep -v -i warn | grep -v skipped | tail -60
