# session 32, call J: bert_layer and gpt2 on the H100 with the short-K Gluon default (call I measured it on an H200,
# where no H100 could be started), for the README's table
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 250 python3 -m kitsune.bench --workloads bench/models/bert_layer.py,bench/models/gpt2.py --peers inductor_graph \
  --json $OUT/h100-2026-11-27-session32-models-shortk.json 2>&1 | grep -E "^(bert|gpt)"
