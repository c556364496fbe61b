# session 41, call I: the LM head's softmax statistics folding 4 sub-chunks a step into block accumulators a quarter
# as wide (online_softmax.FOLD: 16 KB in flight a CTA at 128 registers, 4 CTAs an SM, against 8 KB at 124; an
# exponential an element plus one a lane a step, against ~12 operations an element): the timeline against call D's
# (statistics 56.6 us) and the harness in both modes against call H's (0.2446 / 0.2442 ms).
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 130 python3 bench/kernels/flush_probe.py --workloads bench/models/lm_head.py --timeline \
  --out $OUT/flush-lm_head.json 2>&1 | grep -v -i warn | grep -v "return cls" | grep -v gaps | cut -c1-400
bench_models session41-i bulk-sync,dataflow lm_head:200
grep -h "timed as" /tmp/new-*.log | cut -c1-250
