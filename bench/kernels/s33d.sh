# session 33, call D: the MLP GEMMs re-tuned over the Gluon forms now that their weights are packed (the tuner's
# isolation uploads them packed as the program does), then the harness with the run's database (user cache) against
# the packaged one, twice each
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 420 python3 -m kitsune.tools.tune --workload mlp_gpt3_T256 --workload mlp_gpt3_T1024 --only "GLUON=1,2" \
  --max-candidates 12 --db /tmp/db-pack.json --json /tmp/tune-pack.jsonl > /tmp/tune-pack.log 2>&1
cp /tmp/tune-pack.jsonl $OUT/tune-mlp-pack-session33.jsonl; cp /tmp/db-pack.json $OUT/db-pack-session33.json
python3 bench/kernels/tune_summary.py /tmp/tune-pack.jsonl | cut -c1-150
grep -E "best" /tmp/tune-pack.log | cut -c1-220
tail -2 /tmp/tune-pack.log
mkdir -p /tmp/kc-tuned && cp /tmp/db-pack.json /tmp/kc-tuned/tuning.json
for r in 1 2; do
  for t in tuned packaged; do
    in_tree /tmp/w $t timeout 200 python3 -m kitsune.bench --workloads mlp_gpt3_T256,mlp_gpt3_T1024 --peers inductor_graph \
      --json $OUT/mlp-$t-$r-session33.json | grep -E "^mlp" | sed "s/^/$t$r: /"
  done
done
