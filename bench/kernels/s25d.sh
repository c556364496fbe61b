# Session 25, call 4: llama_decode_b8's M = 8 projections re-tuned (the tuner's reference is now the generic
# evaluator on inputs it gives a finite result for: the gate / up projection with the RMS norm's statistics in
# its epilogue was NaN on N(0, s) inputs), then its launch setting and the harness; the kernel table's b8 rows.
source bench/kernels/device_env.sh
timeout 330 python -m kitsune.tools.tune --workload llama_decode_b8 --max-candidates 16 --json $OUT/tune-b8.jsonl 2>&1 | grep -v -i "warn\|cls.__new" | grep -v "^\s*$" | tail -8
timeout 150 python -m kitsune.tools.tune --launch --workload llama_decode_b8 --json $OUT/tune-launch-b8.jsonl 2>&1 | grep -v -i "warn\|cls.__new" | tail -3
cp /tmp/kc/tuning.json $OUT/tuning.json
timeout 150 python -m kitsune.bench --workloads llama_decode_b8 --peers inductor_graph --json $OUT/decode-b8.json 2>&1 | grep -v -i "warn\|cls.__new" | tail -5
timeout 120 python bench/kernels/run.py --workloads llama_decode_b8 --json $OUT/kernels-b8.json 2> $OUT/kernels-b8-rows.txt | tail -6
