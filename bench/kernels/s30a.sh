# session 30, call A: the multicast GEMM probe (bench/kernels/multicast_probe/mc_gemm.py) on the H100. As it ran,
# the probe had no MC / SYNC / WS options: every cluster config multicast and synchronised by
# barrier.cluster.arrive.release (today's SYNC 1), 8 warps, 128 x 128 at 5 / 6 stages and 128 x 256 at 4, clusters
# 1x1 / 2x1 / 1x2 / 2x2; its records are mc-gemm-a-session30-*.json.
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python3 -c "import cuda.bindings; print('cuda-bindings', cuda.bindings.__version__)" 2>&1 | tail -1
timeout 540 python3 bench/kernels/multicast_probe/mc_gemm.py --out $OUT/mc-gemm-session30-h100-2026-11-27.json 2>&1 | grep -v -i warn | tail -60
