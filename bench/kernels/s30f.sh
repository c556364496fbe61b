# session 30, call F: the gemm template's Gluon space gains 128 x 128 at 6 stages (the multicast probe's ws form:
# T256 fc1 82.9 us against 88.5 at 5 stages, call E). Tune the GPT-3 MLPs' GEMMs on it (the incumbent in the race),
# then the harness with the winners (user database) and with the packaged database alone, Inductor + graph beside.
source bench/kernels/device_env.sh
timeout 200 python3 -m kitsune.tools.tune --workload mlp_gpt3_T1024 --workload mlp_gpt3_T256 --only "GLUON=2;stages=6" \
  --max-candidates 4 --db $OUT/db.json --json $OUT/tune.jsonl > $OUT/tune.log 2>&1
python3 - <<'PY'
import json,os
for l in open(os.environ["OUT"]+"/tune.jsonl"):
    r=json.loads(l); c=r["config"]
    print(r["task"], r["problem"].split(",")[1:4], f'{c["BM"]}x{c["BN"]} w{c["warps"]} s{c["stages"]} G{c.get("GLUON",0)}', r.get("ms") and round(r["ms"]*1e3,1), "default", r.get("default_ms") and round(r["default_ms"]*1e3,1), r.get("error","")[:150])
PY
tail -3 $OUT/tune.log
mkdir -p /tmp/kc-new && cp $OUT/db.json /tmp/kc-new/tuning.json
for run in 1; do
  in_tree /tmp/w new timeout 150 python3 -m kitsune.bench --workloads mlp_gpt3_T1024,mlp_gpt3_T256 --peers inductor_graph --json $OUT/harness-new-$run.json | grep -E "^mlp_gpt3"
  in_tree /tmp/w base timeout 150 python3 -m kitsune.bench --workloads mlp_gpt3_T1024,mlp_gpt3_T256 --peers inductor_graph --json $OUT/harness-base-$run.json | grep -E "^mlp_gpt3"
done
