# Session 25, call 11: a model outside the suite with many convolutions (ResNet-18, batch 32): the harness before
# (packaged database) and after tuning its convolutions on their program's memory layout.
source bench/kernels/device_env.sh
KITSUNE_CACHE_DIR=/tmp/kc_empty timeout 150 python -m kitsune.bench --workloads bench/models/resnet18.py --modes bulk-sync --peers inductor_graph --json $OUT/resnet-before.json 2>&1 | grep -v -i "warn\|cls.__new" | grep "resnet\|kernels"
timeout 330 python -m kitsune.tools.tune bench/models/resnet18.py --max-candidates 8 --json $OUT/tune-resnet.jsonl 2>&1 | grep -v -i "warn\|cls.__new" | grep best
cp /tmp/kc/tuning.json $OUT/tuning.json
timeout 110 python -m kitsune.bench --workloads bench/models/resnet18.py --modes bulk-sync --peers inductor_graph --json $OUT/resnet-after.json 2>&1 | grep -v -i "warn\|cls.__new" | grep "resnet\|kernels"
