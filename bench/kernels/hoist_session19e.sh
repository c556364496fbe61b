# session 19, fifth call: the decode projections re-tuned with the norm scale on their results, then the harness
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD:$PWD/bench/kernels || exit
export KITSUNE_CACHE_DIR=/tmp/kc7
timeout 300 python3 -m kitsune.tools.tune --workload llama_decode_b8 --workload llama_decode_b1 --max-candidates 12 --db $OUT/db.json --json $OUT/tune.jsonl 2>&1 | grep -E "best|rror"
mkdir -p /tmp/kc8 && cp $OUT/db.json /tmp/kc8/tuning.json
KITSUNE_CACHE_DIR=/tmp/kc8 timeout 280 python3 -m kitsune.bench --workloads llama_decode_b8,bench/models/llama_inplace.py:b8,llama_decode_b1 --peers inductor_graph --json $OUT/bench.json 2>&1 | grep -E "^llama|per kernel|rror"
