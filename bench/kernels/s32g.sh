# session 32, call G: the two transformers outside the suite (bench/models/bert_layer.py: batch 8 x 512 tokens,
# 0.85x in session 21's run; gpt2.py: 12 layers, 0.97-0.99x in session 26's) with every change since, per-kernel
# times in the JSON
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 500 python3 -m kitsune.bench --workloads bench/models/bert_layer.py,bench/models/gpt2.py --peers inductor_graph \
  --json $OUT/h100-2026-11-27-session32-models.json 2>&1 | grep -E "^(bench|bert|gpt)"
