# session 21, third call: inception_b8's dataflow placement re-measured (its tuned 'spatial' predates the merged
# 1x1 convolutions), then the harness on inception_b8 and ResNet-18 (per-kernel epochs under branches)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc3 PYTHONUNBUFFERED=1
mkdir -p /tmp/kc3
timeout 240 python3 -m kitsune.tools.tune --placement --workload inception_b8 --db /tmp/kc3/tuning.json --json $OUT/placement-inception.json 2>&1 | grep -v Warn | tail -3
cp /tmp/kc3/tuning.json $OUT/placement-db.json
timeout 200 python3 -m kitsune.bench --workloads inception_b8 --peers inductor_graph --json $OUT/bench-inception.json 2>&1 | grep -E "^inception|rror|Traceback" | tail -4
timeout 330 python3 -m kitsune.bench --workloads bench/models/resnet18.py --peers inductor_graph --timeout 320 --json $OUT/bench-resnet18.json 2>&1 | grep -E "^bench|rror|Traceback" | tail -3
