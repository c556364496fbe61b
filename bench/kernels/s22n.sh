# session 22, fourteenth call: llama_decode_b1 / b8 and dlrm_b2048 re-tuned with operand copies rotated past the L2,
# then the harness on them
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc14 PYTHONUNBUFFERED=1
mkdir -p /tmp/kc14
for w in llama_decode_b1 llama_decode_b8 dlrm_b2048; do
  timeout 150 python3 -m kitsune.tools.tune --workload $w --max-candidates 12 --db /tmp/kc14/tuning.json --json $OUT/tune-$w.json 2>&1 | grep "best\|rror" | tail -8
done
cp /tmp/kc14/tuning.json $OUT/tune-db.json
timeout 200 python3 -m kitsune.bench --workloads llama_decode_b1,llama_decode_b8,dlrm_b2048 --peers inductor_graph --json $OUT/bench.json 2>&1 | grep -E "^(llama|dlrm)|rror|Traceback" | tail -6
