# Next device call (not yet run): the launch settings not measured in session 24 -- kitsune-tune --launch on the
# in-place decode layers and the models outside the suite (their entries go into kitsune/schedule/tuned.json), then
# the harness on them and on mlp_gpt3_T1024 (its tuned entries: bulk-sync 1, dataflow 0).
source bench/kernels/device_env.sh
timeout 400 python -m kitsune.tools.tune --launch bench/models/llama_inplace.py:b1 --json $OUT/tune-launch-inplace-b1.jsonl 2>&1 | grep -v -i warn
timeout 400 python -m kitsune.tools.tune --launch bench/models/llama_inplace.py:b8 --json $OUT/tune-launch-inplace-b8.jsonl 2>&1 | grep -v -i warn
cp /tmp/kc/tuning.json $OUT/tuning.json
timeout 500 python -m kitsune.bench --workloads mlp_gpt3_T1024,bench/models/llama_inplace.py:b1,bench/models/llama_inplace.py:b8 --peers inductor_graph --json $OUT/launch-rest.json 2>&1 | grep -v -i warn | tail -12
