# session 31, call N: T256's fc1 at 128 x 96 (128 tiles) with host-made descriptors, from call M's database; the
# harness on T256 with the result
source bench/kernels/device_env.sh
cp $ROOT/.whl/s31m-db.json $OUT/db.json
timeout 150 python3 -m kitsune.tools.tune --workload mlp_gpt3_T256 --only "SPLIT=1;BN=96;GLUON=2" \
  --max-candidates 4 --db $OUT/db.json --json $OUT/tune-t256.jsonl > $OUT/tune-t256.log 2>&1
python3 - <<'PY'
import json,os
for l in open(os.environ["OUT"]+"/tune-t256.jsonl"):
    r=json.loads(l); c=r["config"]
    print(r["task"], r["problem"].split(",")[1:4], f'{c["BM"]}x{c["BN"]} w{c["warps"]} s{c["stages"]} G{c.get("GLUON",0)} S{c.get("SPLIT",1)}', r.get("ms") and round(r["ms"]*1e3,1), r.get("error","")[:200])
PY
mkdir -p /tmp/kc-new && cp $OUT/db.json /tmp/kc-new/tuning.json
in_tree /tmp/w new timeout 100 python3 -m kitsune.bench --workloads mlp_gpt3_T256 --peers inductor_graph --json $OUT/harness-t256.json | grep -E "^mlp_gpt3"
