# Session 28, device call F: the kernel table on b8 with this session's shipped entries (QKV / down weight-first,
# gate / up 32 columns with its loops fused), peers from DRAM.
source bench/kernels/device_env.sh
timeout 150 python bench/kernels/run.py --workloads llama_decode_b8 --no-default --json $OUT/kernels-b8.json 2>/dev/null | tail -7
