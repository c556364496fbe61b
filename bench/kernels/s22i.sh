# session 22, ninth call: the decode workloads in both modes next to Inductor + CUDA graph
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc9 PYTHONUNBUFFERED=1
timeout 560 python3 -m kitsune.bench --workloads llama_decode_b1,llama_decode_b8,llama1b_decode_b1 --peers inductor_graph --json $OUT/bench-b.json 2>&1 | grep -E "^(llama)|rror|Traceback" | tail -8
