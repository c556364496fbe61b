# session 41, call H: the attention template alone against SDPA at head dims 256 (its new 8-warp default) and 80, and
# the LM head in both modes (its dataflow row was the fortieth session's).
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 120 python3 bench/kernels/attn_prefill_probe.py --forms none --shapes d256_1024c,d80_512c \
  --out $OUT/attn.json 2>&1 | grep -v -i warn | grep -v "return cls" | tail -4
bench_models session41-h bulk-sync,dataflow lm_head:200
grep -h "timed as" /tmp/new-*.log | cut -c1-250
