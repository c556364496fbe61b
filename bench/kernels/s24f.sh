# Session 24, call F: memcheck / racecheck on Kitsune's kernels only (k0 .. k113; the eager reference's cuDNN SDPA
# kernel reads out of bounds under memcheck on its own) of llama1b_decode_b1, dataflow, tuned launch (PDL 1).
source bench/kernels/device_env.sh
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 compute-sanitizer --tool memcheck --kernel-regex kns=^k[0-9]+$ python3 -m kitsune.bench --sanitize llama1b_decode_b1 --modes dataflow 2>&1 | grep -v -i warn | tail -3 | tee $OUT/memcheck-llama1b-kitsune-kernels.txt
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 compute-sanitizer --tool racecheck --kernel-regex kns=^k[0-9]+$ python3 -m kitsune.bench --sanitize llama1b_decode_b1 --modes dataflow 2>&1 | grep -v -i warn | tail -3 | tee $OUT/racecheck-llama1b-kitsune-kernels.txt
