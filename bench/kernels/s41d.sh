# session 41, call D: the LM head's statistics and normalisation with fewer registers (the online softmax's chunk
# halved for its two block accumulators: 238 -> 124 registers, 2 -> 4 CTAs an SM; a widened generic tile at most
# 8192 elements: the normalisation [2, 8192] -> [2, 4096], 254 -> 80 registers): its timeline against call C's
# (statistics 62.8 us, normalisation 82.9), the harness, and the projection at 128 x 256 now that its neighbour
# no longer spills (tuned in its program, --only BN=256).
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 130 python3 bench/kernels/flush_probe.py --workloads bench/models/lm_head.py --timeline \
  --out $OUT/flush-lm_head.json 2>&1 | grep -v -i warn | grep -v "return cls" | cut -c1-600
bench_models session41-d bulk-sync lm_head:150
grep -h "timed as" /tmp/new-*.log | cut -c1-250
timeout 150 python3 -m kitsune.tools.tune bench/models/lm_head.py --in-program --templates gemm --modes bulk-sync \
  --only "BN=256" --max-candidates 3 --json $OUT/tune-lm_head.jsonl > $OUT/tune-lm_head.log 2>&1
python3 bench/kernels/tune_summary.py $OUT/tune-lm_head.jsonl
