# session 20, eighth call (H100): compile + first call of a 12-layer GPT-2 (d=768, 256 tokens, bf16) with Kitsune in
# both modes (the dataflow mode did not finish in 465 s before the helper's counter / row-band fixes) against Inductor
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels PYTHONUNBUFFERED=1
timeout 560 python3 bench/compile_time.py --timeout 250 --json $OUT/compile-time.json 2>&1 | tail -15
