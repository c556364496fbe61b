# session 22, sixth call: mgn_10k's generated kernels under source variants (gen_probe.py)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels PYTHONUNBUFFERED=1 KITSUNE_CACHE_DIR=/tmp/kc6
timeout 500 python3 bench/kernels/gen_probe.py --workload mgn_10k --json $OUT/gen-probe.json 2>&1 | grep -v Warn | grep -v "^  "
