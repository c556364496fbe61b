# session 22, tenth call: issue 16's three workloads in one run with ncu (DRAM bytes), replays and memcheck on the
# final tree (tickets only where a program waits, gathered rows projected first)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc10 PYTHONUNBUFFERED=1
timeout 330 python3 -m kitsune.bench --workloads dlrm_b2048,mgn_10k,inception_b8 --peers inductor_graph --ncu --json $OUT/bench-irregular.json 2>&1 | grep -E "^(dlrm|mgn|inception)|rror|Traceback|DRAM" | tail -8
timeout 60 python3 bench/kernels/replay_check.py mgn_10k --mode dataflow --n 100 --tol 1e-3 2>&1 | tail -1 | tee $OUT/replays.txt
timeout 60 python3 bench/kernels/replay_check.py dlrm_b2048 --mode dataflow --n 200 2>&1 | tail -1 | tee -a $OUT/replays.txt
timeout 60 python3 bench/kernels/replay_check.py inception_b8 --mode bulk-sync --n 200 2>&1 | tail -1 | tee -a $OUT/replays.txt
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 100 compute-sanitizer --tool memcheck python3 -m kitsune.bench --sanitize mgn_10k --modes dataflow 2>&1 | tail -3 | tee $OUT/memcheck-mgn.txt
