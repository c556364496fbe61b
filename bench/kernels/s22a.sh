# session 22, first call: mgn_10k with kitsune-project-gathers (the edge GEMM's endpoint parts projected on the
# nodes, gathered in its epilogue): harness, breakdown, kernel tuning of the new shapes, placement, harness again
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc1 PYTHONUNBUFFERED=1
mkdir -p /tmp/kc1
timeout 150 python3 -m kitsune.bench --workloads mgn_10k --peers inductor_graph --json $OUT/bench-mgn-untuned.json 2>&1 | grep -E "^mgn|rror|Traceback" | tail -4
timeout 120 python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --json $OUT/pb-mgn.json 2>&1 | grep -v Warn | grep -v "^  "
timeout 150 python3 -m kitsune.tools.tune --workload mgn_10k --max-candidates 12 --db /tmp/kc1/tuning.json --json $OUT/tune-mgn.json 2>&1 | grep -v Warn | tail -8
timeout 100 python3 -m kitsune.tools.tune --placement --workload mgn_10k --db /tmp/kc1/tuning.json --json $OUT/placement-mgn.json 2>&1 | grep -v Warn | tail -3
cp /tmp/kc1/tuning.json $OUT/tune-db.json
timeout 150 python3 -m kitsune.bench --workloads mgn_10k --peers inductor_graph --json $OUT/bench-mgn.json 2>&1 | grep -E "^mgn|rror|Traceback" | tail -4
