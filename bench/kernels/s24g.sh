# Session 24, call G: racecheck and memcheck on llama1b_decode_b1 (dataflow, tuned launch: PDL 1), the eager
# reference with the math attention (cuDNN's SDPA kernel reads out of bounds on its own, call E).
source bench/kernels/device_env.sh
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 250 compute-sanitizer --tool racecheck python3 -m kitsune.bench --sanitize llama1b_decode_b1 --modes dataflow > $OUT/racecheck-llama1b-full.txt 2>&1
grep "Race reported\|sanitize\|SUMMARY\|Internal" $OUT/racecheck-llama1b-full.txt | sort | uniq -c | head -20
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 compute-sanitizer --tool memcheck python3 -m kitsune.bench --sanitize llama1b_decode_b1 --modes dataflow 2>&1 | grep "sanitize\|SUMMARY" | tee $OUT/memcheck-llama1b.txt
