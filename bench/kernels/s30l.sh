# session 30, call L: the kernel table's GEMM rows for the GPT-3 MLPs with the configs as shipped (T256's fc1 at
# 7 stages), cuBLAS beside each on the same shapes, operands rotated past the L2.
source bench/kernels/device_env.sh
timeout 300 python3 bench/kernels/run.py --workloads mlp_gpt3_T256,mlp_gpt3_T1024 --no-default --json $OUT/kernels-mlp-session30-h100-2026-11-27.json 2>&1 | grep -v -i warn | tail -12
