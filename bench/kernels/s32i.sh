# session 32, call I: (1) the heuristic default for a short K (<= 1024): warp-specialised 128 x 128 at 5 stages (new)
# against the pipelined 128 x 256 of call H (base), bert_layer and gpt2, A/B; (2) the attention config space on
# bert_layer's attention (call H's filter left it its default alone)
source bench/kernels/device_env.sh
base_tree
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for t in new base; do
  d=/tmp/w; [ $t = base ] && d=/tmp/wb
  in_tree $d $t timeout 200 python3 -m kitsune.bench --workloads bench/models/bert_layer.py,bench/models/gpt2.py \
    --peers inductor_graph --json $OUT/models-shortk-$t-session32.json | grep -E "^(bert|gpt)" | sed "s/^/$t: /"
done
timeout 200 python3 -m kitsune.tools.tune bench/models/bert_layer.py --only "BN=32,64,128;stages=1,2" \
  --max-candidates 22 --db /tmp/db-att.json --json $OUT/tune-bert-attention-session32.jsonl > $OUT/tune-att.log 2>&1
python3 bench/kernels/tune_summary.py $OUT/tune-bert-attention-session32.jsonl | grep attention
