# Session 25, call 14: the isolated convolution now also stores its result as its program does (channels-last):
# ResNet-18's layer-1 3x3 alone against in its program again, then ResNet-18's convolutions tuned so and the
# harness after (before: packaged database, same call).
source bench/kernels/device_env.sh
timeout 100 python bench/kernels/conv_iso_probe.py 2>&1 | grep -v -i "warn\|cls.__new" | tail -2
KITSUNE_CACHE_DIR=/tmp/kc_empty3 timeout 100 python -m kitsune.bench --workloads bench/models/resnet18.py --modes bulk-sync --peers inductor_graph --json $OUT/resnet-before.json 2>&1 | grep -v -i "warn\|cls.__new" | grep "^resnet18 "
export KITSUNE_CACHE_DIR=/tmp/kc_new3
timeout 240 python -m kitsune.tools.tune bench/models/resnet18.py --max-candidates 8 --json $OUT/tune-resnet.jsonl 2>&1 | grep -v -i "warn\|cls.__new" | grep best | grep conv
timeout 100 python -m kitsune.bench --workloads bench/models/resnet18.py --modes bulk-sync --peers inductor_graph --json $OUT/resnet-after.json 2>&1 | grep -v -i "warn\|cls.__new" | grep "^resnet18 "
cp /tmp/kc_new3/tuning.json $OUT/tuning.json
