# session 22, fifth call: mgn_10k's two edge kernels as hand-written variants (mgn_probe.py)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels PYTHONUNBUFFERED=1
timeout 400 python3 bench/kernels/mgn_probe.py --json $OUT/mgn-probe.json 2>&1 | grep -v Warn
