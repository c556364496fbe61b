# session 39, call D: the language-model head (log_softmax over 50 257 logits split into statistics + normalisation)
# with its normalisation tiled on the statistics' rows at its own tile size (this tree) against 2 rows x 128 columns
# (.whl/base.tar); then the transformer prefill models outside the suite on the H200, bulk-sync
source bench/kernels/device_env.sh
base_tree
bench_models session39-d bulk-sync,dataflow lm_head:100
in_tree /tmp/wb base timeout 60 python3 -m kitsune.bench --workloads bench/models/lm_head.py --peers "" --modes bulk-sync \
  --json $OUT/base-lm_head.json 2>&1 | grep -E "^lm_head |per kernel"
grep -h "per kernel" /tmp/new-lm_head.log
bench_models session39-d bulk-sync bert_layer:90 gpt2:130 llama_prefill:120
grep -h "per kernel" /tmp/new-bert_layer.log /tmp/new-gpt2.log /tmp/new-llama_prefill.log | cut -c1-600
