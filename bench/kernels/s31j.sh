# session 31, call J: the Gluon gemm with K in two parts (128 x 192: T256's fc1 as 128 work items) and the second
# column part in a buffer of its own: GPU tests, the tuner on T256 over the 96 / 192-column configs (split
# included; the incumbents in the race), the harness with the winners (user database) and the packaged one,
# the kernel table with the winners
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 200 python3 -m pytest -q -m gpu test/unit/test_gemm_gluon.py -p no:cacheprovider -k "192 or 96" 2>&1 | tail -3
timeout 240 python3 -m kitsune.tools.tune --workload mlp_gpt3_T256 --only "BN=96,192" \
  --max-candidates 14 --db $OUT/db.json --json $OUT/tune-t256.jsonl > $OUT/tune-t256.log 2>&1
tail -3 $OUT/tune-t256.log
python3 - <<'PY'
import json,os
for l in open(os.environ["OUT"]+"/tune-t256.jsonl"):
    r=json.loads(l); c=r["config"]
    print(r["task"], r["problem"].split(",")[1:4], f'{c["BM"]}x{c["BN"]} w{c["warps"]} s{c["stages"]} G{c.get("GLUON",0)} S{c.get("SPLIT",1)}', r.get("ms") and round(r["ms"]*1e3,1), r.get("error","")[:200])
PY
mkdir -p /tmp/kc-new && cp $OUT/db.json /tmp/kc-new/tuning.json
in_tree /tmp/w new timeout 100 python3 -m kitsune.bench --workloads mlp_gpt3_T256 --peers inductor_graph --json $OUT/harness-new.json | grep -E "^mlp_gpt3"
in_tree /tmp/w base timeout 100 python3 -m kitsune.bench --workloads mlp_gpt3_T256 --peers inductor_graph --json $OUT/harness-base.json | grep -E "^mlp_gpt3"
in_tree /tmp/w new timeout 150 python3 bench/kernels/run.py --workloads mlp_gpt3_T256 --no-default --json $OUT/kernels-t256-new.json | tail -3
