# session 19, fourth call: the decode workloads with the RMSNorm scale on the projections' results
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD:$PWD/bench/kernels || exit
export KITSUNE_CACHE_DIR=/tmp/kc6
timeout 560 python3 -m kitsune.bench --workloads llama_decode_b8,bench/models/llama_inplace.py:b8,llama_decode_b1,bench/models/llama_inplace.py:b1,llama1b_decode_b1 --peers inductor_graph --json $OUT/bench.json 2>&1 | grep -E "^llama|^bench|per kernel|rror"
