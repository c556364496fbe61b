# Session 24, call E: what memcheck reports on llama1b_decode_b1 (dataflow), with the tuned launch and with PDL off.
source bench/kernels/device_env.sh
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 compute-sanitizer --tool memcheck --print-limit 8 python3 -m kitsune.bench --sanitize llama1b_decode_b1 --modes dataflow > $OUT/memcheck-llama1b-full.txt 2>&1
grep -v "^=========     \(Host\|in \)\|^  \|Warn" $OUT/memcheck-llama1b-full.txt | grep "=====\|sanitize" | head -40
KITSUNE_PDL=0 PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 compute-sanitizer --tool memcheck --print-limit 8 python3 -m kitsune.bench --sanitize llama1b_decode_b1 --modes dataflow > $OUT/memcheck-llama1b-pdl0.txt 2>&1
grep "SUMMARY\|sanitize" $OUT/memcheck-llama1b-pdl0.txt
