# session 20, seventh call (H100): checks of the changed codegen on inception_b8 (1000 replays bit-identical, memcheck,
# racecheck), ResNet-18 in the default (dataflow) mode, inception_b8 with programmatic dependent launch
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc7 PYTHONUNBUFFERED=1
for m in dataflow bulk-sync; do timeout 100 python3 bench/kernels/replay_check.py inception_b8 --mode $m --n 1000 2>&1 | tail -1; done
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool memcheck python3 -m kitsune.bench --sanitize inception_b8 --modes dataflow 2>&1 | tail -3 | tee $OUT/memcheck-inception.txt
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool racecheck python3 -m kitsune.bench --sanitize inception_b8 --modes dataflow 2>&1 | grep -E "RACECHECK SUMMARY|hazard|sanitize|ERROR" | head -8 | tee $OUT/racecheck-inception.txt
KITSUNE_PDL=2 timeout 150 python3 -m kitsune.bench --workloads inception_b8 --peers inductor_graph --json $OUT/bench-inception-pdl2.json 2>&1 | grep -E "^inception|rror" | tail -3
timeout 330 python3 -m kitsune.bench --workloads bench/models/resnet18.py --modes dataflow --peers inductor_graph --timeout 320 --json $OUT/bench-resnet18-dataflow.json 2>&1 | grep -E "^resnet|rror|Traceback" | tail -3
