# Session 25, call 7: llama_decode_b8's M = 8 projections re-tuned with the tensor-core gemv on 8 warps and 4-deep
# rings in the space, then its launch setting and the harness.
source bench/kernels/device_env.sh
timeout 420 python -m kitsune.tools.tune --workload llama_decode_b8 --only DOT=1 --max-candidates 24 --json $OUT/tune-b8-warps.jsonl 2>&1 | grep -v -i "warn\|cls.__new" | grep "best"
timeout 100 python -m kitsune.tools.tune --launch --workload llama_decode_b8 --json $OUT/tune-launch-b8.jsonl 2>&1 | grep -v -i "warn\|cls.__new" | grep pdl
cp /tmp/kc/tuning.json $OUT/tuning.json
timeout 100 python -m kitsune.bench --workloads llama_decode_b8 --peers inductor_graph --json $OUT/decode-b8.json 2>&1 | grep -v -i "warn\|cls.__new" | tail -4
