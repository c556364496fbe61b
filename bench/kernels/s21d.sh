# session 21, fourth call: where mgn_10k's time goes now (kernel timeline, bulk-sync, Inductor + graph beside)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc4 PYTHONUNBUFFERED=1
timeout 200 python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --peer --json $OUT/pb-mgn.json 2>&1 | grep -v Warn
