# session 36, call E: the causal attention loop bounded at the tile's last query (pipelinable): Llama prefill and
# GPT-2 in the harness, then the attention template's configs timed alone on three causal shapes (the default's
# one stage against two and three now that the loop pipelines)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for m in ${MODELS:-llama_prefill gpt2}; do
  timeout 170 python3 -m kitsune.bench --workloads bench/models/$m.py --peers inductor_graph --timeout 165 \
    --json $OUT/h100-2026-11-28-session36-${TAG:-e}.json > /tmp/new-$m.log 2>&1
  grep -v -i "warn\|^  *warnings\|return cls" /tmp/new-$m.log | grep -E "^$m |Error|error" | cut -c1-300 | head -6
  cp /tmp/new-$m.log $OUT/
done
for sb in llama1024c:128 gpt2_256c:128 long2048c:64; do
  s=${sb%%:*}
  timeout 100 python3 -m kitsune.tools.tune bench/models/attention_shapes.py:$s --max-candidates 10 --db /tmp/attdb.json \
    --only "BN=${sb##*:}" \
    --json $OUT/tune-attn-session36-h100-2026-11-28.json 2>&1 | grep -v -i "warn\|return cls" | grep "best"
done
