# session 21, fifth call: mgn_10k with the scatter fused into the edge MLP's epilogue (kitsune-fuse-scatters) and
# the node MLP's cat(x, agg) read as two K segments (fuse-copies takes casts): harness, timeline, 100 replays
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc5 PYTHONUNBUFFERED=1
timeout 200 python3 -m kitsune.bench --workloads mgn_10k --peers inductor_graph --json $OUT/bench-mgn.json 2>&1 | grep -E "^mgn|rror|Traceback" | tail -4
timeout 150 python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --json $OUT/pb-mgn.json 2>&1 | grep -v Warn | grep -v "^  "
timeout 100 python3 bench/kernels/replay_check.py mgn_10k --mode dataflow --n 100 2>&1 | tail -2
