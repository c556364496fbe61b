# session 22, sixteenth call: mgn_10k with the epilogue's row re-masking dropped where no op combines rows and
# masked loads not re-masked by their own mask (50 registers in the edge GEMM): re-tune, harness, breakdown
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc16 PYTHONUNBUFFERED=1
mkdir -p /tmp/kc16
timeout 150 python3 -m kitsune.tools.tune --workload mgn_10k --max-candidates 14 --db /tmp/kc16/tuning.json --json $OUT/tune-mgn.json 2>&1 | grep "best\|rror" | tail -6
cp /tmp/kc16/tuning.json $OUT/tune-db.json
timeout 150 python3 -m kitsune.bench --workloads mgn_10k --peers inductor_graph --json $OUT/bench-mgn.json 2>&1 | grep -E "^mgn|rror|Traceback" | tail -3
timeout 100 python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --json $OUT/pb-mgn.json 2>&1 | grep "replay"
