# Prelude of the device scripts (bench/README.md): the pure-Python wheels from .whl/, the staged tree from
# .whl/tree.tar (git archive of the tree to run), and the environment; source it, then run from /tmp/w.
ROOT=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc PYTHONUNBUFFERED=1
# the GPU's preset name (h100, h200): the prefix of the records' file names
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200 && echo h200 || echo h100)

# An A/B of two trees: base_tree unpacks .whl/base.tar (git archive of the baseline) into /tmp/wb; in_tree DIR TAG
# CMD... runs CMD in tree DIR (/tmp/w or /tmp/wb) on that tree's import path and a tuning cache of its own
# (/tmp/kc-TAG), warnings dropped from its output.
base_tree() { mkdir -p /tmp/wb && tar -xf "$ROOT/.whl/base.tar" -C /tmp/wb; }
in_tree() {
  local d=$1 tag=$2
  shift 2
  (cd "$d" && PYTHONPATH=/tmp/site:$d:$d/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc-$tag "$@" 2>&1 | grep -v -i warn)
}

# bench_models TAG MODES MODEL:SECONDS...: each bench/models/MODEL.py in the harness against Inductor + CUDA graph in
# MODES (bulk-sync, dataflow or both, comma-separated), within SECONDS; records to $OUT/$GPU-DATE-TAG-MODEL.json, the
# log beside them, the table's row (or the error) printed. The GPU's name, clock and power first.
bench_models() {
  local tag=$1 modes=$2 mt m t
  shift 2
  nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
  for mt in "$@"; do
    m=${mt%%:*}; t=${mt##*:}
    timeout "$t" python3 -m kitsune.bench --workloads "bench/models/$m.py" --peers inductor_graph --timeout $((t - 5)) \
      --modes "$modes" --json "$OUT/$GPU-$(date -u +%F)-$tag-$m.json" > "/tmp/new-$m.log" 2>&1
    grep -E "^$m |rror|timed out" "/tmp/new-$m.log" | cut -c1-300 | head -4; cp "/tmp/new-$m.log" "$OUT/"
  done
}
