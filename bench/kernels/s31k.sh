# session 31, call K: the probe's Gluon gemm with its TMA descriptors made in the kernel (the gemm template's way)
# against the host's (mc_gemm.py --configs devdesc), T256's GEMMs, per launch and CUDA-graph replays
source bench/kernels/device_env.sh
timeout 300 python3 bench/kernels/multicast_probe/mc_gemm.py --configs devdesc --reps 2 --graph --shapes odd,T256_fc2,T256_fc1 --out $OUT/mc-gemm-k-session31-h100-2026-11-27.json 2>&1 | grep -v -i warn | grep -v skipped | tail -14
