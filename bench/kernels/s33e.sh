# session 33, call E: as shipped (packed weights, the packaged database with call D's MLP entries, the attention
# default): the harness on the MLPs (twice) and the two transformers outside the suite; the kernel table's MLP GEMMs
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 200 python3 -m kitsune.bench --workloads mlp_gpt3_T256,mlp_gpt3_T1024 --peers inductor_graph \
  --json $OUT/h100-2026-11-27-session33-mlp.json 2>&1 | grep -E "^mlp"
timeout 200 python3 -m kitsune.bench --workloads mlp_gpt3_T256,mlp_gpt3_T1024 --peers inductor_graph \
  --json $OUT/h100-2026-11-27-session33-mlp-b.json 2>&1 | grep -E "^mlp"
timeout 220 python3 -m kitsune.bench --workloads bench/models/bert_layer.py,bench/models/gpt2.py --peers inductor_graph \
  --json $OUT/h100-2026-11-27-session33-models.json 2>&1 | grep -E "^(bert|gpt)"
timeout 200 python3 bench/kernels/run.py --workloads mlp_gpt3_T256,mlp_gpt3_T1024 --no-default \
  --json $OUT/kernels-mlp-session33.json 2>&1 | grep -v -i warn | tail -6
