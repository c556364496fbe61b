# Session 25, call 12: the isolated timing rotates only the program's weights past the L2 (its activations, just
# written by the previous kernel in the program, stay in the L2); ResNet-18's and inception_b8's convolutions
# tuned so, the harness before (packaged database) and after.
source bench/kernels/device_env.sh
KITSUNE_CACHE_DIR=/tmp/kc_empty2 timeout 100 python -m kitsune.bench --workloads bench/models/resnet18.py --modes bulk-sync --peers inductor_graph --json $OUT/resnet-before.json 2>&1 | grep -v -i "warn\|cls.__new" | grep "^resnet18 "
export KITSUNE_CACHE_DIR=/tmp/kc_new
timeout 260 python -m kitsune.tools.tune bench/models/resnet18.py --max-candidates 8 --json $OUT/tune-resnet.jsonl 2>&1 | grep -v -i "warn\|cls.__new" | grep best
timeout 80 python -m kitsune.tools.tune --workload inception_b8 --max-candidates 16 --json $OUT/tune-inception.jsonl 2>&1 | grep -v -i "warn\|cls.__new" | grep best
cp /tmp/kc_new/tuning.json $OUT/tuning.json
timeout 150 python -m kitsune.bench --workloads bench/models/resnet18.py,inception_b8 --modes bulk-sync --peers inductor_graph --json $OUT/after.json 2>&1 | grep -v -i "warn\|cls.__new" | grep "^resnet18 \|^inception_b8 \|per kernel"
