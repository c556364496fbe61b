# session 31, call M: T256's fc2 at 128 x 192 with host-made descriptors (call L's tuner did not reach it: the
# candidate count), starting from call L's database; then the harness on both MLPs and the kernel table with it
source bench/kernels/device_env.sh
cp $ROOT/.whl/s31l-db.json $OUT/db.json
timeout 150 python3 -m kitsune.tools.tune --workload mlp_gpt3_T256 --only "SPLIT=1;BN=192" \
  --max-candidates 5 --db $OUT/db.json --json $OUT/tune-t256.jsonl > $OUT/tune-t256.log 2>&1
python3 - <<'PY'
import json,os
for l in open(os.environ["OUT"]+"/tune-t256.jsonl"):
    r=json.loads(l); c=r["config"]
    print(r["task"], r["problem"].split(",")[1:4], f'{c["BM"]}x{c["BN"]} w{c["warps"]} s{c["stages"]} G{c.get("GLUON",0)} S{c.get("SPLIT",1)}', r.get("ms") and round(r["ms"]*1e3,1), r.get("error","")[:200])
PY
mkdir -p /tmp/kc-new && cp $OUT/db.json /tmp/kc-new/tuning.json
in_tree /tmp/w new timeout 200 python3 -m kitsune.bench --workloads mlp_gpt3_T256,mlp_gpt3_T1024 --peers inductor_graph --json $OUT/h100-2026-11-27-session31-mlp.json | grep -E "^mlp_gpt3"
in_tree /tmp/w new timeout 120 python3 bench/kernels/run.py --workloads mlp_gpt3_T256 --no-default --json $OUT/kernels-mlp-session31-h100-2026-11-27.json | tail -3
