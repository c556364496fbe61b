# session 23, ninth call: compute-sanitizer memcheck and racecheck on mgn_10k in dataflow mode (the chains, the
# bf16 scatter, the zero start set by the projection's kernel)
. bench/kernels/device_env.sh
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 compute-sanitizer --tool memcheck python3 -m kitsune.bench --sanitize mgn_10k --modes dataflow 2>&1 | tail -3 | tee $OUT/memcheck-mgn.txt
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 300 compute-sanitizer --tool racecheck python3 -m kitsune.bench --sanitize mgn_10k --modes dataflow 2>&1 | grep -v "^=========     \|^  " | tail -6 | tee $OUT/racecheck-mgn.txt
