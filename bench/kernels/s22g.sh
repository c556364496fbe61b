# session 22, seventh call: mgn_10k's generated edge kernels timed alone on the program's buffers, against the
# same stage without its ticket and the hand-written edge1 (gen_probe.py --kernel)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels PYTHONUNBUFFERED=1 KITSUNE_CACHE_DIR=/tmp/kc7
timeout 200 python3 bench/kernels/gen_probe.py --workload mgn_10k --kernel k1 --json $OUT/gen-k1.json 2>&1 | grep -v Warn | grep -v "^  " | tail -8
timeout 200 python3 bench/kernels/gen_probe.py --workload mgn_10k --kernel k2 --json $OUT/gen-k2.json 2>&1 | grep -v Warn | grep -v "^  " | tail -8
