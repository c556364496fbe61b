# session 21, sixth call: mgn_10k's gemm configs re-tuned now that the edge MLP's second GEMM also scatters its rows
# (kitsune-tune), then the harness with the new entries and 100 replays within 1e-3 of the first
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc6 PYTHONUNBUFFERED=1
mkdir -p /tmp/kc6
timeout 330 python3 -m kitsune.tools.tune --workload mgn_10k --max-candidates 12 --db /tmp/kc6/tuning.json --json $OUT/tune-mgn.json 2>&1 | grep -v Warn | tail -12
cp /tmp/kc6/tuning.json $OUT/tune-db.json
timeout 200 python3 -m kitsune.bench --workloads mgn_10k --peers inductor_graph --json $OUT/bench-mgn.json 2>&1 | grep -E "^mgn|rror|Traceback" | tail -4
timeout 100 python3 bench/kernels/replay_check.py mgn_10k --mode dataflow --n 100 --tol 1e-3 2>&1 | tail -1
