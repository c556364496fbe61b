# session 22, thirteenth call: llama1b_decode_b1 re-tuned with operand copies rotated past the L2 (isolate.measure),
# then the harness on the decode workloads
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc13 PYTHONUNBUFFERED=1
mkdir -p /tmp/kc13
timeout 260 python3 -m kitsune.tools.tune --workload llama1b_decode_b1 --max-candidates 14 --db /tmp/kc13/tuning.json --json $OUT/tune-llama1b.json 2>&1 | grep "best\|rror" | tail -10
cp /tmp/kc13/tuning.json $OUT/tune-db.json
timeout 250 python3 -m kitsune.bench --workloads llama1b_decode_b1,llama_decode_b1 --peers inductor_graph --json $OUT/bench.json 2>&1 | grep -E "^(llama)|rror|Traceback" | tail -4
