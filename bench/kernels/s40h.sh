# session 40, call H: the LM head (bench/models/lm_head.py) with the paired timing (it was timed as a block, 0.96x)
source bench/kernels/device_env.sh
bench_models session40-h bulk-sync lm_head:150
grep -h "timed as" /tmp/new-*.log | cut -c1-250
