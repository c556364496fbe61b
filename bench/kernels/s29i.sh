# Session 29, device call I: llama1b_decode_b1 with the forwarded in-place reads (its attention reads the row the
# update writes in the same launch and discards it): 1000 replays of its CUDA graph bit-identical, and
# compute-sanitizer memcheck on one call (dataflow mode, the checks).
source bench/kernels/device_env.sh
timeout 150 python bench/kernels/replay_check.py llama1b_decode_b1 --mode dataflow --n 1000 --tol 0 2>&1 | grep -v -i warn | tail -3 | tee $OUT/replay-llama1b.txt
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 180 compute-sanitizer --tool memcheck python3 -m kitsune.bench --sanitize \
  llama1b_decode_b1 --modes dataflow 2>&1 | grep -v -i warn | tail -3 | tee $OUT/memcheck-llama1b.txt
