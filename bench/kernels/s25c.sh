# Session 25, call 3: issue 11's kernel table again (every templated task of the suite alone, next to its torch op),
# the checks for llama_decode_b8's split-K kernels of the early form (1000 replays, memcheck), and the decode
# attention's parts measured in the launch.
source bench/kernels/device_env.sh
timeout 100 python bench/kernels/replay_check.py llama_decode_b8 --mode dataflow --n 1000 2>&1 | grep -v -i "warn\|cls.__new" | tail -2
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool memcheck python3 -m kitsune.bench --sanitize llama_decode_b8 --modes dataflow 2>&1 | grep "sanitize\|SUMMARY" | tee $OUT/memcheck-b8.txt
timeout 120 python bench/kernels/attn_parts_ab.py --workloads llama_decode_b1 --parts 0,5,41 --rounds 3 --out $OUT/attn-parts-b1.json 2>&1 | grep -v -i "warn\|cls.__new"
timeout 100 python bench/kernels/attn_parts_ab.py --workloads llama_decode_b8 --parts 0,25,1 --rounds 3 --out $OUT/attn-parts-b8.json 2>&1 | grep -v -i "warn\|cls.__new"
timeout 300 python bench/kernels/run.py --workloads all --no-default --json $OUT/kernels.json 2> $OUT/kernels-rows.txt | tail -40
