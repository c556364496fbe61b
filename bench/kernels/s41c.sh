# session 41, call C: where the LM head's time goes now (flush_probe --timeline: each kernel of ours and of
# Inductor's after do_bench's flush), and the harness on the models whose code the grouped order changed (GPT-2,
# the MLP-Mixer; the LM head and BERT's layer in call B).
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 150 python3 bench/kernels/flush_probe.py --workloads bench/models/lm_head.py --timeline \
  --out $OUT/flush-lm_head.json 2>&1 | grep -v -i warn | cut -c1-900
bench_models session41-c bulk-sync gpt2:200 mixer:150
grep -h "timed as" /tmp/new-*.log | cut -c1-250
