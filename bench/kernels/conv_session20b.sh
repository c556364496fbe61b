# session 20, second call: channels-last convolutions + the conv heuristic, from a clean export of HEAD (.whl/tree.tar:
# the working tree holds a helper's unfinished edits): inception_b8 in both modes and ResNet-18 (batch 32) in bulk-sync
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc2 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 200 python3 -m kitsune.bench --workloads inception_b8 --peers inductor_graph --json $OUT/bench-inception.json 2>&1 | grep -E "^inception|per kernel|rror|Traceback" | tail -12
timeout 330 python3 -m kitsune.bench --workloads bench/models/resnet18.py --modes bulk-sync --peers inductor_graph --timeout 320 --json $OUT/bench-resnet18.json 2>&1 | grep -E "resnet|per kernel|rror|Traceback" | tail -12
