# Session 26, device call H: the gemv template's tensor-core form at BN 16 (new in its space: 4x the programs of BN
# 64, more CTAs an SM) tried inside llama_decode_b8's program against the shipped configs (kitsune-tune --in-program
# --only BN=16), then the harness on b8 with whatever won, Inductor + CUDA graph beside it.
ROOT=$PWD
source bench/kernels/device_env.sh
KITSUNE_CACHE_DIR=/tmp/kc-h timeout 200 python -m kitsune.tools.tune --in-program --workload llama_decode_b8 \
  --modes bulk-sync --only "BN=16;DOT=1" --max-candidates 4 --json $OUT/tune-in-program-b8-bn16.jsonl 2>&1 \
  | grep -v -i warn | grep "in program" | tail -4
cp /tmp/kc-h/tuning.json $OUT/tuning-bn16.json 2>/dev/null
KITSUNE_CACHE_DIR=/tmp/kc-h timeout 100 python -m kitsune.bench --workloads llama_decode_b8 --peers inductor_graph \
  --json $OUT/b8-bn16.json 2>&1 | grep -v -i warn | grep -E "^llama_decode_b8 |per kernel" | tail -4
