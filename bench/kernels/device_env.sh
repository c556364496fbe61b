# Prelude of the device scripts (bench/README.md): the pure-Python wheels from .whl/, the staged tree from
# .whl/tree.tar (git archive of the tree to run), and the environment; source it, then run from /tmp/w.
ROOT=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc PYTHONUNBUFFERED=1

# An A/B of two trees: base_tree unpacks .whl/base.tar (git archive of the baseline) into /tmp/wb; in_tree DIR TAG
# CMD... runs CMD in tree DIR (/tmp/w or /tmp/wb) on that tree's import path and a tuning cache of its own
# (/tmp/kc-TAG), warnings dropped from its output.
base_tree() { mkdir -p /tmp/wb && tar -xf "$ROOT/.whl/base.tar" -C /tmp/wb; }
in_tree() {
  local d=$1 tag=$2
  shift 2
  (cd "$d" && PYTHONPATH=/tmp/site:$d:$d/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc-$tag "$@" 2>&1 | grep -v -i warn)
}
