# session 31, call D: what makes the RS (A through registers) form wrong: wait 0 every k-step, synchronous wgmma,
# one warpgroup (bench/kernels/multicast_probe/mc_gemm.py --configs rsdiag) on the H100
source bench/kernels/device_env.sh
timeout 300 python3 bench/kernels/multicast_probe/mc_gemm.py --configs rsdiag --shapes odd,T256_fc1 --out $OUT/mc-gemm-d-session31-h100-2026-11-27.json 2>&1 | grep -v -i warn | tail -20
