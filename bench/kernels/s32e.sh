# session 32, call E: llama_decode_b1's gemvs over the 8-warp row forms tuned in their program (call D passed --db,
# which --in-program refuses), the kernel table and the harness with the winners (b1 and llama1b_decode_b1, whose
# gemvs have b1's shapes)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
mkdir -p /tmp/kc-b1
KITSUNE_CACHE_DIR=/tmp/kc-b1 timeout 300 python3 -m kitsune.tools.tune --in-program --workload llama_decode_b1 \
  --modes bulk-sync --only "warps=8;PER_ITEM=1" --max-candidates 6 \
  --json $OUT/tune-b1-rows-session32.jsonl > $OUT/tune-b1-rows.log 2>&1
tail -4 $OUT/tune-b1-rows.log | cut -c1-200; python3 bench/kernels/tune_summary.py $OUT/tune-b1-rows-session32.jsonl
cp /tmp/kc-b1/tuning.json $OUT/db-b1-rows.json 2>/dev/null
in_tree /tmp/w b1 timeout 150 python3 bench/kernels/run.py --workloads llama_decode_b1 --no-default \
  --json $OUT/kernels-b1-rows-session32-h100-2026-11-27.json | grep -A6 "^workload"
in_tree /tmp/w b1 timeout 200 python3 -m kitsune.bench --workloads llama_decode_b1,llama1b_decode_b1 --peers inductor_graph \
  --json $OUT/b1-rows-session32.json | grep -E "^llama" | sed "s/^/rows: /"
