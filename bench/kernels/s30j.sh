# session 30, call J: the Gluon gemm at 7 stages (the result through the ring's first slots where every program has
# one tile; the probe's 78.6 us for T256's fc1, call I): tune T256's GEMMs on it (the incumbent in the race), then
# the harness with the winner (user database) and with the packaged database alone. (Its first run, with
# --max-candidates 2, timed only the default and the incumbent: that count includes them. Harness then 0.89x in all
# four runs, `../results/experiments/h100-2026-11-27-session30-s7-first-*.json`.)
source bench/kernels/device_env.sh
timeout 150 python3 -m kitsune.tools.tune --workload mlp_gpt3_T256 --only "GLUON=2;stages=7" \
  --max-candidates 4 --db $OUT/db.json --json $OUT/tune.jsonl > $OUT/tune.log 2>&1
python3 - <<'PY'
import json,os
for l in open(os.environ["OUT"]+"/tune.jsonl"):
    r=json.loads(l); c=r["config"]
    print(r["task"], r["problem"].split(",")[1:4], f'{c["BM"]}x{c["BN"]} w{c["warps"]} s{c["stages"]} G{c.get("GLUON",0)}', r.get("ms") and round(r["ms"]*1e3,1), r.get("error","")[:200])
PY
tail -3 $OUT/tune.log
mkdir -p /tmp/kc-new && cp $OUT/db.json /tmp/kc-new/tuning.json
for run in 1; do
  in_tree /tmp/w new timeout 100 python3 -m kitsune.bench --workloads mlp_gpt3_T256 --peers inductor_graph --json $OUT/harness-new-$run.json | grep -E "^mlp_gpt3|k[0-9]"
  in_tree /tmp/w base timeout 100 python3 -m kitsune.bench --workloads mlp_gpt3_T256 --peers inductor_graph --json $OUT/harness-base-$run.json | grep -E "^mlp_gpt3|k[0-9]"
done
