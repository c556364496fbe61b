# session 41, call F: the attention template's configs at head dims 256 (Gemma's) and 80 (Phi-2's, padded to 128
# lanes) tuned inside their programs (bench/models/attention_shapes.py; the default is the incumbent), against
# SDPA's 29.0 / 31.6 us in call E.
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
for f in d256_1024c d80_512c; do
  timeout 200 python3 -m kitsune.tools.tune bench/models/attention_shapes.py:$f --in-program --templates attention \
    --modes bulk-sync --max-candidates 8 --json $OUT/tune-$f.jsonl > $OUT/tune-$f.log 2>&1
  python3 bench/kernels/tune_summary.py $OUT/tune-$f.jsonl --top 8
  tail -1 $OUT/tune-$f.log | cut -c1-200
done
