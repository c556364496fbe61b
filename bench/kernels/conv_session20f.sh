# session 20, sixth call (H100): inception_b8 both modes, ResNet-18 bulk-sync, with every change of the session
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc6 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 200 python3 -m kitsune.bench --workloads inception_b8 --peers inductor_graph --json $OUT/bench-inception.json 2>&1 | grep -E "^inception|per kernel|rror|Traceback" | tail -8
timeout 330 python3 -m kitsune.bench --workloads bench/models/resnet18.py --modes bulk-sync --peers inductor_graph --timeout 320 --json $OUT/bench-resnet18.json 2>&1 | grep -E "^resnet|per kernel|rror|Traceback" | tail -6
