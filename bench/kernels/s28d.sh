# Session 28, device call D: llama_decode_b8's gemvs re-tuned in their program now that the gate / up's two K loops
# are one (twice the weight chunks in flight a step: its best chunk and form may move), tensor-core configs of one
# part (kitsune-tune --in-program --only "DOT=1;SPLIT=1", the in-program tuner's graphs now holding their programs);
# then the harness on b8 with that database.
source bench/kernels/device_env.sh
timeout 360 python -m kitsune.tools.tune --in-program --workload llama_decode_b8 --only "DOT=1;SPLIT=1" \
  --max-candidates 5 --json $OUT/tune-b8-inprog.jsonl 2>&1 | grep -v -i warn | grep -v "^\s*$" | grep -v "^\[" | tail -8
cp /tmp/kc/tuning.json $OUT/tuning-b8.json 2>/dev/null
timeout 120 python -m kitsune.bench --workloads llama_decode_b8 --peers inductor_graph \
  --json $OUT/harness-b8.json 2>&1 | grep -v -i warn | grep -E "^llama|per kernel" | tail -4
