# session 41, call B: the grouped tile order across a linear's leading row dims (tiling.row_dims: the LM head's
# [8, 128, 50 257] logits walked 8 row blocks at a time down each W column block, where row-major read its 77 MB W
# from DRAM once a batch entry) -- the LM head's projection tuned in its program against 256-column tiles
# (--only BN=256: the new-order default is the incumbent), then the harness on the LM head and BERT's layer
# (whose [8, 512, *] linears now group across batch entries too).
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 150 python3 -m kitsune.tools.tune bench/models/lm_head.py --in-program --templates gemm --modes bulk-sync \
  --only "BN=256" --max-candidates 5 --json $OUT/tune-lm_head.jsonl > $OUT/tune-lm_head.log 2>&1
python3 bench/kernels/tune_summary.py $OUT/tune-lm_head.jsonl
tail -1 $OUT/tune-lm_head.log | cut -c1-200
cp /tmp/kc/tuning.json $OUT/tuning-h200.json 2>/dev/null
rm -f /tmp/kc/tuning.json  # the harness below runs the heuristic default (or the packaged database)
bench_models session41-b bulk-sync lm_head:150 bert_layer:150
grep -h "timed as" /tmp/new-*.log | cut -c1-250
