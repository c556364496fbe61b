# session 39, call F: the LM head with its softmax statistics in one pass (templates/online_softmax.py) on top of
# call E's row pitch, both modes against Inductor + CUDA graph; then its projection (1024 x 50 257 x 768) tuned
# alone over the gemm space (the harness's heuristic config against the candidates)
source bench/kernels/device_env.sh
bench_models session39-f bulk-sync,dataflow lm_head:100
grep -h "per kernel" /tmp/new-lm_head.log
timeout 200 python3 -m kitsune.tools.tune bench/models/lm_head.py --max-candidates 14 --db $OUT/tune-lm_head-db.json \
  --json $OUT/tune-lm_head.jsonl > $OUT/tune-lm_head.log 2>&1
python3 - $OUT/tune-lm_head.jsonl <<'PY'
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    for k,v in sorted(r.get("candidates",{}).items(), key=lambda kv: (kv[1] if isinstance(kv[1], (int,float)) else 1e9))[:8]: print("   ", v, k[:160])
    print(r.get("task"), "best", r.get("config"), r.get("ms"), "default", r.get("default_ms"))
PY
tail -3 $OUT/tune-lm_head.log | cut -c1-300
