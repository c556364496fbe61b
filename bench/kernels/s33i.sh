# session 33, call I: BERT's GEMMs at 192-column tiles (128 tiles of one wave where 128 x 128 makes 192 for N = 768,
# 384 of 3 waves where it makes 576 for N = 2304), then the harness with those winners against the defaults
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 300 python3 -m kitsune.tools.tune bench/models/bert_layer.py --only "BN=192" --max-candidates 8 \
  --db /tmp/db-bert.json --json /tmp/tune-bert.jsonl > /tmp/tune-bert.log 2>&1
python3 bench/kernels/tune_summary.py /tmp/tune-bert.jsonl | grep -v attention | cut -c1-150
cp /tmp/tune-bert.jsonl $OUT/tune-bert-192-session33.jsonl
mkdir -p /tmp/kc-t192 && cp /tmp/db-bert.json /tmp/kc-t192/tuning.json
for t in t192 plain; do
  in_tree /tmp/w $t timeout 150 python3 -m kitsune.bench --workloads bench/models/bert_layer.py --peers inductor_graph \
    --json $OUT/bert-$t-session33.json | grep -E "^bert" | sed "s/^/$t: /"
done
