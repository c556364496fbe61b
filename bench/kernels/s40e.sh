# session 40, call E: the attention template with its unmasked / masked split, base-2 exponentials and the new
# default (64-key blocks, 3 stages) -- the template alone against SDPA on six shapes (attn_prefill_probe.py --forms
# none), then the transformer models outside the suite in the harness (bulk-sync; paired timing)
source bench/kernels/device_env.sh
(cd /tmp/w/bench/kernels && timeout 150 python3 attn_prefill_probe.py --forms none \
  --shapes llama1024c,gpt2_256c,bert512,long2048c,d128_512,short128 \
  --out $OUT/$GPU-$(date -u +%F)-session40-e-attn.json 2>&1 | grep -v -i "warn\|cls.__new" | cut -c1-250)
bench_models session40-e bulk-sync bert_layer:100 gpt2:150 llama_prefill:130
grep -h "timed as" /tmp/new-*.log | cut -c1-250
