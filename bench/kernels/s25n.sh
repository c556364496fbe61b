# Session 25, call 15: ResNet-18's convolutions tuned on their program's layout (input and result), the harness after.
source bench/kernels/device_env.sh
export KITSUNE_CACHE_DIR=/tmp/kc_new4
timeout 200 python -m kitsune.tools.tune bench/models/resnet18.py --max-candidates 6 --json $OUT/tune-resnet.jsonl 2>&1 | grep -v -i "warn\|cls.__new" | grep best | cut -c1-150
cp /tmp/kc_new4/tuning.json $OUT/tuning.json
timeout 80 python -m kitsune.bench --workloads bench/models/resnet18.py --modes bulk-sync --peers inductor_graph --json $OUT/resnet-after.json 2>&1 | grep -v -i "warn\|cls.__new" | grep "^resnet18 "
