# Session 28, device call B: llama_decode_b1's gemvs tuned in their program over the narrow programs of the tuning
# space (GemvConfig.narrow_space: 1-2 columns a program over chunks of 2048-8192; the pure read of 8-34 MB is fastest
# as thousands of such programs, read_floor.py), then the harness on the decode workloads with that database and
# this tree (b8: its gate / up loops fused).
source bench/kernels/device_env.sh
timeout 330 python -m kitsune.tools.tune --in-program --workload llama_decode_b1 --only "BN=1,2;PER_ITEM=1" \
  --max-candidates 12 --json $OUT/tune-b1-narrow.jsonl 2>&1 | grep -v -i warn | grep -v "^\s*$" | tail -8
cp /tmp/kc/tuning.json $OUT/tuning-b1.json 2>/dev/null
timeout 240 python -m kitsune.bench --workloads llama_decode_b1,llama_decode_b8,llama1b_decode_b1 --peers inductor_graph \
  --json $OUT/harness-decode.json 2>&1 | grep -v -i warn | grep -E "^llama|per kernel" | tail -8
