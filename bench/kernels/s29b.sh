# Session 29, device call B: inception_b8's merged 1x1 convolution as a per-image GEMM with flat pixel tiles in plain
# Triton against cuDNN (conv1x1_probe.py), and the generated kernel alone as the kernel table times it.
source bench/kernels/device_env.sh
timeout 420 python bench/kernels/conv1x1_probe.py --json $OUT/conv1x1-probe.json 2>&1 | grep -v -i warn | grep -v "^skip"
timeout 150 python bench/kernels/run.py --workloads inception_b8 --no-default --json $OUT/kernels-inception.json 2>&1 | grep -v -i warn | tail -8
