# session 40, call C: T256's fc1 (96 tiles of 128 x 128 on 132 SMs) against the forms that fill the GPU -- 128 x 96
# (128 tiles) and 128 x 192 with K in two parts (128 work items) -- tuned inside its program on the H200
# (--only BN=96,192; the incumbent and the default timed too), then the harness with the winner (paired timing).
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 330 python3 -m kitsune.tools.tune --workload mlp_gpt3_T256 --in-program --templates gemm --modes bulk-sync \
  --only "${ONLY:-BN=96,192}" --max-candidates ${NC:-8} --json $OUT/tune-T256.jsonl > $OUT/tune-T256.log 2>&1
python3 - $OUT/tune-T256.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); c=r["config"]; i=r["incumbent"]
    f=lambda c: f'{c["BM"]}x{c["BN"]} w{c["warps"]} s{c["stages"]} G{c.get("GLUON",0)} S{c.get("SPLIT",1)}'
    print(r["task"], r["problem"].split(",")[1:4], "win", f(c), r["us"], "inc", f(i), r["incumbent_us"], "err", len(r["errors"]))
    for k,v in sorted(r["candidates"].items(), key=lambda kv: kv[1])[:8]: print("   ", v, k[:150])
PY
tail -2 $OUT/tune-T256.log | cut -c1-200
cp /tmp/kc/tuning.json $OUT/tuning-h200.json 2>/dev/null
timeout 200 python3 -m kitsune.bench --workloads mlp_gpt3_T256 --peers inductor_graph --modes bulk-sync,dataflow \
  --json $OUT/$GPU-$(date -u +%F)-session40-c-T256.json 2>&1 | grep -E "^mlp_gpt3|timed as"
