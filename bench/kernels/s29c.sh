# Session 29, device call C: what costs the generated merged 1x1 convolution its 2 us over the plain Triton GEMM of
# call B: its row tiles (2 rows of 28 pixels in 64 lanes) or its three-output epilogue (conv1x1_probe.py factors),
# next to the kernel table's row for it in the same process run.
source bench/kernels/device_env.sh
timeout 200 python bench/kernels/conv1x1_probe.py --factors-only --json $OUT/conv1x1-factors.json 2>&1 | grep -v -i warn
timeout 150 python bench/kernels/run.py --workloads inception_b8 --no-default 2>&1 | grep -v -i warn | tail -6
