# session 39, call G: the LM head's projection tuned inside its program (its logits at the 16-byte row pitch, which
# the isolated task, whose result is a program output, does not get), then the harness with the winner
source bench/kernels/device_env.sh
timeout 300 python3 -m kitsune.tools.tune bench/models/lm_head.py --in-program --templates gemm --modes bulk-sync \
  --max-candidates ${NC:-10} --json $OUT/tune-lm_head-inprog.jsonl > $OUT/tune-lm_head-inprog.log 2>&1
python3 - $OUT/tune-lm_head-inprog.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    for k,v in sorted(r["candidates"].items(), key=lambda kv: kv[1]): print("   ", v, k[:160])
    print(r["task"], "win", r["config"], r["us"], "incumbent", r["incumbent"], r["incumbent_us"], "errors", r["errors"])
PY
tail -2 $OUT/tune-lm_head-inprog.log | cut -c1-300
cp /tmp/kc/tuning.json $OUT/tuning-inprog.json 2>/dev/null
bench_models session39-g bulk-sync lm_head:80
grep -h "per kernel" /tmp/new-lm_head.log
