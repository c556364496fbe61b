# session 21, seventh call: issue 16's three workloads in one run with DRAM bytes per call (ncu) for Kitsune and
# Inductor + CUDA graph; compute-sanitizer memcheck / racecheck on mgn_10k (dataflow) with the fused scatter
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc7 PYTHONUNBUFFERED=1
timeout 420 python3 -m kitsune.bench --workloads dlrm_b2048,mgn_10k,inception_b8 --peers inductor_graph --ncu --json $OUT/bench-irregular.json 2>&1 | grep -E "^(dlrm|mgn|inception)|rror|Traceback|DRAM" | tail -8
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool memcheck python3 -m kitsune.bench --sanitize mgn_10k --modes dataflow 2>&1 | tail -3 | tee $OUT/memcheck-mgn.txt
