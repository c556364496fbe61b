# Session 27, device call F: what do_bench's zeroing L2 flush costs the decode steps (flush_probe.py: Kitsune and
# Inductor + CUDA graph after a writing flush, a reading flush, none, and back to back in a graph of 20).
source bench/kernels/device_env.sh
timeout 400 python bench/kernels/flush_probe.py --workloads llama_decode_b1,llama_decode_b8 --out $OUT/flush.json 2>&1 \
  | grep -v -i warn | grep -E "llama|rror" | tail -12
