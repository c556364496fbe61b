# session 22, eleventh call: re-tune mgn_10k and llama1b_decode_b1 now that kernels without waits take no ticket
# (one-program-per-item grids lost a serialised atomic per program), then the harness on both
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc11 PYTHONUNBUFFERED=1
mkdir -p /tmp/kc11
timeout 150 python3 -m kitsune.tools.tune --workload mgn_10k --max-candidates 14 --db /tmp/kc11/tuning.json --json $OUT/tune-mgn.json 2>&1 | grep "best\|rror" | tail -6
timeout 220 python3 -m kitsune.tools.tune --workload llama1b_decode_b1 --max-candidates 12 --db /tmp/kc11/tuning.json --json $OUT/tune-llama1b.json 2>&1 | grep "best\|rror" | tail -10
cp /tmp/kc11/tuning.json $OUT/tune-db.json
timeout 200 python3 -m kitsune.bench --workloads mgn_10k,llama1b_decode_b1 --peers inductor_graph --json $OUT/bench.json 2>&1 | grep -E "^(mgn|llama)|rror|Traceback" | tail -4
