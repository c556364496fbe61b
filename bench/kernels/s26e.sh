# Session 26, device call E: llama1b_decode_b1 with heuristic defaults (KITSUNE_TUNING_DB=0) against the tuned
# database; the models outside the suite (no tuned placement: placement=auto decides) in both modes with the new
# rule, and Inductor + CUDA graph beside them.
ROOT=$PWD
source bench/kernels/device_env.sh
for DB in 0 1; do
  KITSUNE_TUNING_DB=$DB KITSUNE_CACHE_DIR=/tmp/kc-e$DB timeout 150 python -m kitsune.bench --workloads llama1b_decode_b1 --peers '' \
    --json $OUT/db$DB-llama1b.json 2>&1 | grep -v -i warn | grep -v "return cls" | grep -E "^llama1b|dataflow:|bulk-sync:" | tail -4
done
KITSUNE_CACHE_DIR=/tmp/kc-e1 timeout 330 python -m kitsune.bench --workloads bench/models/gpt2.py,bench/models/bert_layer.py,bench/models/resnet18.py \
  --peers inductor_graph --json $OUT/models-auto.json 2>&1 | grep -v -i warn | grep -v "return cls" | tail -14
