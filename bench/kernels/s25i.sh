# Session 25, call 10: convolutions tuned on their program's memory layout (isolate.task_module keeps a
# channels-last input and a packed weight), inception_b8's harness before (packaged database) and after, and
# its kernel table next to cuDNN (channels-last where Kitsune's input is).
source bench/kernels/device_env.sh
KITSUNE_CACHE_DIR=/tmp/kc_empty timeout 120 python -m kitsune.bench --workloads inception_b8 --peers inductor_graph --json $OUT/inception-before.json 2>&1 | grep -v -i "warn\|cls.__new" | grep "inception_b8 \|per kernel"
timeout 300 python -m kitsune.tools.tune --workload inception_b8 --max-candidates 16 --json $OUT/tune-inception.jsonl 2>&1 | grep -v -i "warn\|cls.__new" | grep best
cp /tmp/kc/tuning.json $OUT/tuning.json
timeout 120 python -m kitsune.bench --workloads inception_b8 --peers inductor_graph --json $OUT/inception-after.json 2>&1 | grep -v -i "warn\|cls.__new" | grep "inception_b8 \|per kernel"
timeout 120 python bench/kernels/run.py --workloads inception_b8 --json $OUT/kernels-inception.json 2> $OUT/kernels-inception-rows.txt | tail -6
