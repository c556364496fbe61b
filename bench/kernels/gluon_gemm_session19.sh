python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD:$PWD/bench/kernels || exit
export KITSUNE_CACHE_DIR=/tmp/kc1
timeout 240 python3 -m kitsune.tools.tune --workload mlp_gpt3_T1024 --workload mlp_gpt3_T256 --only GLUON=1,2 --max-candidates 14 --db $OUT/db.json --json $OUT/tune.jsonl > $OUT/tune.log 2>&1
python3 - <<'PY'
import json,os
for l in open(os.environ["OUT"]+"/tune.jsonl"):
    r=json.loads(l); c=r["config"]
    print(r["task"], r["problem"].split(",")[1:4], f'{c["BM"]}x{c["BN"]} w{c["warps"]} s{c["stages"]} G{c.get("GLUON",0)} P{int(c.get("PER_ITEM",0))}', r.get("ms") and round(r["ms"]*1e3,1), r.get("error","")[:150])
PY
mkdir -p /tmp/kc2 && cp $OUT/db.json /tmp/kc2/tuning.json && KITSUNE_CACHE_DIR=/tmp/kc2 timeout 150 python3 -m kitsune.bench --workloads mlp_gpt3_T1024,mlp_gpt3_T256 --peers inductor_graph --json $OUT/bench.json 2>&1 | grep -E "mlp_gpt3|per kernel"
timeout 150 bash bench/kernels/t256_split_probe.sh $OUT '{"BM":256,"BN":128,"BK":64,"GROUP_M":8,"SPLIT":2,"warps":8,"stages":3}' '{"BM":256,"BN":128,"BK":64,"GROUP_M":8,"SPLIT":2,"warps":8,"stages":4}'
