# session 22, fifteenth call: heuristic defaults only (KITSUNE_TUNING_DB=0) on the workloads whose tasks changed this
# session, against the tuned figures of calls 10 and 13 (issue 11: within 1.3x)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc15 PYTHONUNBUFFERED=1 KITSUNE_TUNING_DB=0
timeout 330 python3 -m kitsune.bench --workloads mgn_10k,dlrm_b2048,inception_b8,llama1b_decode_b1 --peers inductor_graph --json $OUT/bench-no-db.json 2>&1 | grep -E "^(mgn|dlrm|inception|llama)|rror|Traceback" | tail -8
