# Prelude of the device scripts (bench/README.md): the pure-Python wheels from .whl/, the staged tree from
# .whl/tree.tar (git archive of the tree to run), and the environment; source it, then run from /tmp/w.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc PYTHONUNBUFFERED=1
