# session 20, third call: + unclamped channel-axis stores, the concatenation written in place (HEAD in .whl/tree.tar)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc3 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 200 python3 -m kitsune.bench --workloads inception_b8 --peers inductor_graph --json $OUT/bench-inception.json 2>&1 | grep -E "^inception|per kernel|rror|Traceback" | tail -12
KITSUNE_BRANCHES=1 timeout 150 python3 -m kitsune.bench --workloads inception_b8 --modes bulk-sync --peers inductor_graph --json $OUT/bench-inception-one-stream.json 2>&1 | grep -E "^inception|rror|Traceback" | tail -4
timeout 300 python3 -m kitsune.bench --workloads bench/models/resnet18.py --modes bulk-sync --peers inductor_graph --timeout 290 --json $OUT/bench-resnet18.json 2>&1 | grep -E "^resnet|per kernel|rror|Traceback" | tail -6
