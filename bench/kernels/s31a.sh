# session 31, call A: 96-column tiles (64 + 32 accumulators) for T256's GEMMs, 128 tiles on 128 SMs, with and without
# 1 x CN clusters sharing A by multicast (bench/kernels/multicast_probe/mc_gemm.py --configs w96) on the H100
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 560 python3 bench/kernels/multicast_probe/mc_gemm.py --configs w96 --reps 2 --graph --shapes odd,T256_fc1,T256_fc2 --out $OUT/mc-gemm-a-session31-h100-2026-11-27.json 2>&1 | grep -v -i warn | tail -60
