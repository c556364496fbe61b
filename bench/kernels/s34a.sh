# session 34, call A: (1) the merged 1x1 convolution as a Gluon TMA + wgmma kernel over NCHW images
# (conv1x1_gluon_probe.py, first GPU run) against cuDNN; (2) T256 fc1's 128 x 96 tiles with W packed and with W
# multicast over 2 x 1 clusters (mc_gemm.py set w96pack)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 150 python3 bench/kernels/conv1x1_gluon_probe.py --json $OUT/conv1x1-gluon-session34.json 2>&1 | grep -v -i warn | cut -c1-150
timeout 300 python3 bench/kernels/multicast_probe/mc_gemm.py --configs w96pack --shapes odd,T256_fc1 \
  --graph --reps 2 --out $OUT/mc-gemm-w96pack-session34.json 2>&1 | grep -v -i warn | cut -c1-170
