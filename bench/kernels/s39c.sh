# session 39, call C: the GPT-3 MLPs' GEMMs tuned inside their programs on the H200 (the H100's winners are the
# incumbents, GPU.tuning_twins), winners to the user database ($OUT/tuning-h200.json), then the harness twice with
# them; the SM clock and power sampled every 100 ms during the harness (power_T*.csv)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,power.limit --format=csv,noheader
for w in mlp_gpt3_T1024 mlp_gpt3_T256; do
  timeout ${TUNE_S:-200} python3 -m kitsune.tools.tune --workload $w --in-program --templates gemm --modes bulk-sync \
    --max-candidates ${NC:-8} --json $OUT/tune-$w.jsonl > $OUT/tune-$w.log 2>&1
  python3 - $OUT/tune-$w.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); c=r["config"]; i=r["incumbent"]
    f=lambda c: f'{c["BM"]}x{c["BN"]} w{c["warps"]} s{c["stages"]} G{c.get("GLUON",0)} S{c.get("SPLIT",1)}'
    print(r["task"], r["problem"].split(",")[1:4], "win", f(c), r["us"], "inc", f(i), r["incumbent_us"], "err", len(r["errors"]))
    for k,v in sorted(r["candidates"].items(), key=lambda kv: kv[1])[:5]: print("   ", v, k[:150])
PY
  tail -2 $OUT/tune-$w.log | cut -c1-200
done
cp /tmp/kc/tuning.json $OUT/tuning-h200.json
for run in 1 2; do
  nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader -lms 100 > $OUT/power_run$run.csv &
  P=$!
  timeout 200 python3 -m kitsune.bench --workloads mlp_gpt3_T1024,mlp_gpt3_T256 --peers inductor_graph \
    --modes bulk-sync,dataflow --json $OUT/$GPU-$(date -u +%F)-session39-mlp-$run.json 2>&1 | grep -E "^mlp_gpt3|per kernel"
  kill $P
done
