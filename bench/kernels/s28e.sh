# Session 28, device call E: b8's split gemvs (QKV, O, down) re-tuned in their program over tensor-core configs of
# 2 or 4 parts (call D tried one part), then the harness on b8 and the in-place b8 layer with that database.
source bench/kernels/device_env.sh
timeout 300 python -m kitsune.tools.tune --in-program --workload llama_decode_b8 --only "DOT=1;SPLIT=2,4" \
  --max-candidates 5 --json $OUT/tune-b8-split.jsonl 2>&1 | grep -v -i warn | grep -E "^llama" | tail -6
cp /tmp/kc/tuning.json $OUT/tuning-b8-split.json 2>/dev/null
timeout 200 python -m kitsune.bench --workloads llama_decode_b8,bench/models/llama_inplace.py:b8 --peers inductor_graph \
  --json $OUT/harness-b8.json 2>&1 | grep -v -i warn | grep -E "^llama|^bench" | tail -6
