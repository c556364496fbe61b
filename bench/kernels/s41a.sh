# session 41, call A: the gemm template's ping-pong form (GLUON=3: two one-warpgroup consumers taking tiles in turn)
# -- its GPU tests, then tuned inside the programs of the short-K models (the LM head's projection, K = 768; BERT's
# and GPT-2's) against the warp-specialised default (--only GLUON=3: the default and the incumbent timed too); the
# attention template at the head dims first timed here (80, 256).
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu test/unit/test_gemm_gluon.py -k "ping or (ws and many)" \
  > $OUT/gpu-tests.log 2>&1; tail -3 $OUT/gpu-tests.log
summ() { python3 bench/kernels/tune_summary.py "$1"; }
for m in lm_head:150 bert_layer:130; do
  n=${m%%:*}; t=${m##*:}
  timeout $t python3 -m kitsune.tools.tune bench/models/$n.py --in-program --templates gemm --modes bulk-sync \
    --only "GLUON=3" --max-candidates 6 --json $OUT/tune-$n.jsonl > $OUT/tune-$n.log 2>&1
  echo "== $n"; summ $OUT/tune-$n.jsonl; tail -1 $OUT/tune-$n.log | cut -c1-200
done
cp /tmp/kc/tuning.json $OUT/tuning-h200.json 2>/dev/null
timeout 90 python3 bench/kernels/attn_prefill_probe.py --forms none --shapes d80_512c,d256_1024c 2>&1 | tail -8
